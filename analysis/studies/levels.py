"""A study page's levels: how strong each level it plays is, and what a game of it costs.

Self-play cannot say how strong a level is, so the page quotes the game's strength ladder
(:mod:`analysis.ladder`, played by ``python -m bench.ladder``): every level's Elo against the
ladder's reference with its 95 % interval, and the CPU seconds its own moves take in a game
(``time.process_time`` in the process that played them). The strongest level the study plays
is named with both figures, and any level measured stronger that it does not play: in a study
of strength levels, that is its "strongest affordable" level beside what its budget left out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.ladder.fit import LadderTable, LevelRow
from analysis.ladder.show import level_lines
from analysis.studies.definition import Study


@dataclass(frozen=True)
class LevelsInput:
    """The game's ladder as fitted from its committed file, and that file as the page names it."""

    table: LadderTable
    source: str


def played_levels(study: Study) -> list[str]:
    """The agent specs the study's batches seat, in order of first appearance."""
    found: list[str] = []
    for batch in study.batches:
        for spec in str(batch.keys.get("agents", "")).split(","):
            spec = spec.strip()
            if spec and spec not in found:
                found.append(spec)
    return found


def _elo(row: LevelRow, reference: str) -> str:
    if row.level == reference:
        return "the ladder's reference (Elo 0)"
    if math.isnan(row.elo):
        return "no Elo"
    text = f"Elo {row.elo:+.0f}"
    if not math.isnan(row.ci_low):
        text += f" [{row.ci_low:+.0f}, {row.ci_high:+.0f}]"
    return f"{text} against `{reference}`"


def _cpu(row: LevelRow) -> str:
    return f"{row.cpu_per_game:.3g} CPU s a game for its own moves"


def _row_data(row: LevelRow) -> dict[str, Any]:
    return {
        "level": row.level,
        "games": row.games,
        "cpu_per_game": row.cpu_per_game,
        "elo": row.elo,
        "ci_low": row.ci_low,
        "ci_high": row.ci_high,
        "note": row.note,
    }


def strongest(rows: Sequence[LevelRow]) -> LevelRow | None:
    """The row of highest Elo among ``rows`` that were measured."""
    measured = [r for r in rows if r.games and not math.isnan(r.elo)]
    return max(measured, key=lambda r: r.elo, default=None)


def _options(options: Sequence[tuple[str, Any]]) -> str:
    """The ladder's game options as the page says them; a study of other options reads the
    ladder's Elo all the same, so the page names them."""
    if not options:
        return ""
    return " with " + ", ".join(f"{k}={json.dumps(v)}" for k, v in options)


def _openings(plies: int | None) -> str:
    """The ladder's own openings, where they are not the game's default variation: a study of
    the game's default openings reads the ladder's Elo all the same, so the page names them."""
    if plies is None:
        return ""
    return f" from random openings of {plies} plies, each played from both seats"


def levels_section(study: Study, levels: LevelsInput) -> tuple[list[str], dict[str, Any]]:
    """The page's "Levels" section and its part of the twin."""
    table = levels.table
    ladder = table.ladder
    played = played_levels(study)
    by_level = {r.level: r for r in table.levels}
    rows = [by_level[name] for name in played if name in by_level]
    unmeasured = [name for name in played if name not in by_level or not by_level[name].games]
    best = strongest(rows)
    out = ["## Levels", ""]
    out.append(
        "How strong the levels are and what a game of each costs, from the strength ladder of "
        f"`{ladder.game}` (`{levels.source}`, played by `python -m bench.ladder`): "
        f"{ladder.players} players{_options(ladder.options)}, each level against the next one "
        "up and against "
        f"`{ladder.reference}`{_openings(ladder.opening_plies)}, "
        f"{table.games:,} games, one Bradley–Terry Elo scale with 95 % intervals over "
        f"{table.units:,} units of sampling. CPU time is measured in the process that played "
        "the moves, over the ladder's games. The levels this study plays are in bold."
    )
    out.append("")
    if best is not None:
        text = (
            f"The strongest level this study plays is **`{best.level}`**: "
            f"{_elo(best, ladder.reference)}, {_cpu(best)}."
        )
        above = [
            r.level for r in table.levels if r.games and r.level not in played and r.elo > best.elo
        ]
        if above:
            text += " Measured stronger, and not played here: " + ", ".join(
                f"`{name}`" for name in above
            )
            text += "."
        if study.budget_cpu_hours is not None:
            text += f" The study's budget is {study.budget_cpu_hours:g} CPU-hours."
        out += [text, ""]
    if unmeasured:
        out += [
            "Not on the ladder: " + ", ".join(f"`{name}`" for name in unmeasured) + ".",
            "",
        ]
    out += level_lines(table, markdown=True, bold=played)
    out.append("")
    data = {
        "ladder": {
            "game": ladder.game,
            "players": ladder.players,
            "reference": ladder.reference,
            "games": table.games,
            "units": table.units,
            "source": levels.source,
        },
        "played": played,
        "strongest": best.level if best is not None else None,
        "rows": [_row_data(r) for r in table.levels],
    }
    return out, data
