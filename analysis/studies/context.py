"""What stands beside a study figure on its page and in its twin: the diversity of the games
it rests on, its decided games apart from the draws (by how they ended), and the compensation
in points that would make it fair. Each is read from the batch's report, never computed.

A figure resting on fewer than ``DIVERSITY_THRESHOLD`` distinct openings is flagged: its
interval counts what the games share, but so few starts say little about the game as a
whole (``docs/statistics.md``, "How diverse a figure's games must be").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.studies.estimates import Estimate, first_player
from analysis.studies.page_text import bounds, p_clause, pct

DIVERSITY_THRESHOLD = 100
"""The fewest distinct openings a published figure may rest on without a warning."""

TRUNCATIONS = ("move_limit", "max_plies")
"""Endings that cut a game nobody finished: a move limit, the batch's ply cap."""

ENDING_WORDS = {
    "repetition": "repetition",
    "move_limit": "the move limit",
    "max_plies": "the batch's ply cap",
    "no_capture": "the no-capture rule",
    "no_move": "no legal move",
    "normal": "an equal score",
    "time": "time",
}
"""How a draw's ending (``engines.core.Ending``) reads on a page; ``normal`` draws are the
rules' own: an equal score."""


def diversity(report: Mapping[str, Any]) -> dict[str, Any]:
    """The distinct openings and games a batch's figures rest on, with a warning below the
    threshold (None otherwise)."""
    ind = report["independence"]
    openings = ind.get("distinct_openings")
    warning = None
    if ind.get("openings_known") and openings is not None and openings < DIVERSITY_THRESHOLD:
        warning = (
            f"only {openings:,} distinct openings in {ind['matches']:,} games, fewer than "
            f"the {DIVERSITY_THRESHOLD} a published figure needs"
        )
    return {
        "matches": ind["matches"],
        "distinct_openings": openings,
        "distinct_games": ind.get("distinct_games"),
        "warning": warning,
    }


def diversity_line(name: str, d: Mapping[str, Any]) -> str:
    openings = d["distinct_openings"]
    shown = "–" if openings is None else f"{openings:,}"
    games = "–" if d["distinct_games"] is None else f"{d['distinct_games']:,}"
    text = (
        f"Diversity of **{name}**: {d['matches']:,} games, {shown} distinct openings, "
        f"{games} distinct games."
    )
    if d["warning"]:
        text += f" **Warning: {d['warning']}.**"
    return text


def decided_data(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The decided games and the draws by ending, where the batch has draws; None without."""
    decided = report.get("decided")
    if not decided or decided["decided"] == decided["matches"]:
        return None
    draws = decided["matches"] - decided["decided"]
    truncated = sum(decided["draws_by_ending"].get(k, 0) for k in TRUNCATIONS)
    return {
        "matches": decided["matches"],
        "decided": decided["decided"],
        "draws": draws,
        "draws_by_ending": decided["draws_by_ending"],
        "truncated": truncated,
        "mostly_truncated": truncated * 2 > draws,
        # Only when cut games are most of the batch do they carry most of its figure.
        "largely_truncated": truncated * 2 > decided["matches"],
        "first_player": decided["first_player"],
    }


def decided_line(name: str, d: Mapping[str, Any]) -> str:
    """The decided share, the draws by ending and the first player's edge among decided games."""
    m, won = d["matches"], d["decided"]
    endings = ", ".join(f"{ENDING_WORDS.get(k, k)} {v:,}" for k, v in d["draws_by_ending"].items())
    text = (
        f"Decided games in **{name}**: {won:,} of {m:,} ({pct(won / m)}); "
        f"the {d['draws']:,} others by ending: {endings}."
    )
    if d["mostly_truncated"]:
        text += (
            f" {'All' if d['truncated'] == d['draws'] else 'Most'} draws "
            f"({d['truncated']:,} of {d['draws']:,}) are games cut unfinished at a move limit"
        )
        text += (
            ", so the figure above is largely about games nobody won."
            if d["largely_truncated"]
            else f": {pct(d['truncated'] / m)} of all games."
        )
    first = Estimate.of(d["first_player"])
    if won and first.value is not None:
        text += (
            f" Among decided games the first player wins {d['first_player']['wins']:,.0f} "
            f"({pct(d['first_player']['wins'] / won)}): **{pct(first.value, True)}** "
            f"{bounds(first.interval, True)} against the fair share, {p_clause(first.p_value)}."
        )
    return text


def compensation_data(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fair compensation (komi) where the first player's advantage is not zero (its
    interval leaves 0 out); None where it is consistent with zero. A game that scores no
    points has no compensation in points: ``offsets`` is then empty."""
    f = first_player(report)
    if f.interval.holds(0.0) or not f.interval.known:
        return None
    komi = report.get("fair_compensation")
    if not komi:
        return {"offsets": [], "win_share_after": None, "method": None}
    return {
        "offsets": komi["offsets"],
        "win_share_after": komi["win_share_after"],
        "method": komi["method"],
    }


def compensation_line(name: str, c: Mapping[str, Any]) -> str:
    if not c["offsets"]:
        return (
            f"The advantage in **{name}** is not zero, but the game scores no points: no "
            "compensation in points (komi) can offset it."
        )
    parts = []
    for row in c["offsets"]:
        lo, hi = row.get("ci_low"), row.get("ci_high")
        iv = "" if lo is None or hi is None else f" [{lo:+.1f}, {hi:+.1f}]"
        parts.append(f"turn position {row['seat']} **{row['points']:+.1f}** points{iv}")
    after = " / ".join(pct(v) for v in c["win_share_after"] or [])
    return (
        f"Fair compensation (komi) in **{name}**: " + ", ".join(parts) + " (95 %), "
        f"after which the turn positions' win shares are {after}."
    )


def shows_compensation(batches: Sequence[str], first_player_figure: bool) -> bool:
    """Whether a question's compensation stands beside its figure: a first-player figure that
    reads one batch."""
    return first_player_figure and len(batches) == 1


def beside(
    batches: list[str], reports: Mapping[str, Any], first_player_figure: bool
) -> tuple[list[str], dict[str, Any]]:
    """The lines that stand beside a question's figure on its page, and the same as the
    twin's data: each batch's diversity; for a first-player figure each batch's decided games
    (where it has draws) and, for one batch, its compensation."""
    lines: list[str] = []
    data: dict[str, Any] = {"diversity": {}}
    if first_player_figure:
        for name in batches:
            d = decided_data(reports[name])
            if d is not None:
                data.setdefault("decided", {})[name] = d
                lines += ["", decided_line(name, d)]
        if shows_compensation(batches, first_player_figure):
            c = compensation_data(reports[batches[0]])
            if c is not None:
                data["compensation"] = c
                lines += ["", compensation_line(batches[0], c)]
    for name in batches:
        d = diversity(reports[name])
        data["diversity"][name] = d
        lines += ["", diversity_line(name, d)]
    return lines, data
