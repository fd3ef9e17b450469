"""How much independent information a batch holds: the ``independence`` block of every report.

Deterministic players replay their lines, so forty matches may be one game played forty times.
The block counts what the figures really rest on — distinct games, distinct openings, units of
sampling (``analysis.units``) and the effective sample size of the headline figure — says which
variation the batch declared, and warns in plain words when the matches replay few games (the
words, like the units, follow the number of distinct games), when the play is (nearly) one line
or, where a batch links openings, when its units are far fewer than its matches.
"""

from __future__ import annotations

import math
from typing import Any

from analysis import stats
from analysis.seats import seat_share
from analysis.tidy import Wide, by_turn
from analysis.units import GAME, ONE_LINE, OPENING, ROUND, Units
from engines.seating import opening_round

FEW_UNITS = 0.5
"""Warn when the units are fewer than this fraction of the rounds the seating design alone would
make (a round of seat-swapped matches is one unit by design, so that alone never warns)."""


def few_units(units: int, matches: int, round_size: int) -> bool:
    """True when ``units`` are far fewer than the rounds ``matches`` make (``FEW_UNITS``)."""
    return matches >= 2 and units < FEW_UNITS * math.ceil(matches / max(round_size, 1))


def headline(sums: stats.UnitSums, players: int, seat_policy: str) -> dict[str, Any] | None:
    """The dashboard's first-player headline from the starting player's sums over the report's
    units (rounds from one grouped query over a page of batches; matches joined by
    ``units.sampling_units`` where replayed games or shared openings link them): its win share
    − 1/n with the report's interval rule (``stats.share_from_sums``), the units it rests on
    and a short ``warning`` when they are far fewer than the matches. None before any match."""
    if sums.matches == 0:
        return None
    share = stats.share_from_sums(sums)
    expected = 1.0 / players
    warning = None
    if few_units(sums.units, sums.matches, opening_round(players, seat_policy)):
        warning = f"{sums.units:,} unit{'s' if sums.units != 1 else ''} in {sums.matches:,} matches"
    return {
        "estimate": share.estimate - expected,
        "ci_low": share.ci_low - expected,
        "ci_high": share.ci_high - expected,
        "interval": share.interval,
        "units": share.units,
        "effective_n": share.effective_n,
        "warning": warning,
    }


def remedy(variation: dict[str, Any] | None) -> str:
    """What would make a batch's matches more independent, given the variation it declared."""
    kind = (variation or {}).get("kind", "none")
    if kind == "noise":
        return (
            "Its player noise leaves few different openings: more noise plies or a wider "
            "margin, or random openings where a forced opening does not change the question, "
            "would learn more from each match."
        )
    if kind == "openings":
        return "Longer openings (more plies) would learn more from each match."
    return (
        "Declare variation for the batch (random openings, or player noise) to learn more "
        "from each match."
    )


DRAWN_KINDS = ("openings", "noise")
"""Variations that draw each round's opening (``engines.variation``); ``none`` draws nothing,
so its openings are whatever the players repeat."""
NEARLY_ONE_LINE = 0.1
"""Warn that the play is (nearly) one line when its distinct games are fewer than this share of
its matches."""


def diversity_warning(
    units: Units | None, matches: int, distinct_games: int, variation: dict[str, Any] | None
) -> str | None:
    """Plain words when the batch's matches replay few games (they join units, so the units
    and the words follow the number of distinct games), when its play is nearly one line
    (distinct games fewer than ``NEARLY_ONE_LINE`` of its matches), when a batch that draws no
    opening begins with few distinct ones, or when its declared units are far fewer than its
    matches; None otherwise."""
    if matches < 2:
        return None
    replayed = units is not None and units.linked_by in (GAME, ONE_LINE)
    if (
        units is not None
        and replayed
        and (units.count == 1 or units.count < FEW_UNITS * units.rounds)
    ):
        return _replay_warning(units, matches, distinct_games, variation)
    if distinct_games < NEARLY_ONE_LINE * matches:
        if units is not None and replayed:
            return _replay_warning(units, matches, distinct_games, variation)
        return (
            f"the play is nearly one line: {distinct_games:,} distinct games in {matches:,} "
            "matches, so the figures speak of these few lines more than of the game. "
            + remedy(variation)
        )
    if (
        units is not None
        and units.openings_known
        and (variation or {}).get("kind") not in DRAWN_KINDS
        and units.distinct_openings < NEARLY_ONE_LINE * matches
    ):
        return (
            f"{matches:,} matches begin with {units.distinct_openings:,} distinct opening"
            f"{'s' if units.distinct_openings != 1 else ''} and the batch draws none: the "
            "figures speak of these openings, not of the game. " + remedy(variation)
        )
    if units is not None and units.linked_by == OPENING and few_units(units.count, matches, 1):
        known = units.openings_known
        openings = f" ({units.distinct_openings:,} distinct openings)" if known else ""
        return (
            f"{matches:,} matches make {units.count:,} units of sampling{openings}: matches that "
            "share an opening count as one, so every interval rests on the openings, not the "
            "matches. " + remedy(variation)
        )
    return None


def _replay_warning(
    units: Units, matches: int, distinct_games: int, variation: dict[str, Any] | None
) -> str:
    """The warning of a batch whose units are few because its matches replay few games."""
    games = f"{distinct_games:,} distinct game{'s' if distinct_games != 1 else ''}"
    if units.count == 1:
        return (
            f"{matches:,} matches make one unit of sampling ({games}): the play is one line, "
            "so the figures are what that line gives and no interval speaks of the game. "
            + remedy(variation)
        )
    return (
        f"{matches:,} matches replay {games} and make {units.count:,} units of sampling: a "
        "game played again is the same observation, so every interval rests on these few "
        "games and is as wide as they leave it. " + remedy(variation)
    )


def independence(
    w: Wide, variation: dict[str, Any] | None, distinct_games: int, round_size: int
) -> dict[str, Any]:
    """The ``independence`` block (keys documented in ``analysis.report``)."""
    m = w.matches
    units = w.units
    count = units.count if units is not None else m
    openings = units.distinct_openings if units is not None else None
    known = units.openings_known if units is not None else False
    linked_by = units.linked_by if units is not None else ROUND
    first = seat_share(by_turn(w), 0) if m else None
    how = {
        ROUND: f"a unit of sampling is a round of the seating design ({round_size} match"
        f"{'es' if round_size != 1 else ''}), what the batch draws independently; matches "
        "that begin alike by chance stay apart",
        OPENING: "a unit of sampling is a set of matches linked by a shared opening (the first "
        f"plies) or a shared round of the seating design ({round_size} match"
        f"{'es' if round_size != 1 else ''}): the batch's book stands for openings beyond it, "
        "or the batch was stored before its variation was declared",
        GAME: "a unit of sampling is a set of matches linked by a shared game (the same "
        f"moves from first to last) or a shared round of the seating design ({round_size} "
        f"match{'es' if round_size != 1 else ''}): a game played again is the same "
        "observation, so the units follow the distinct games",
        ONE_LINE: "every match is in one unit: the batch's matches replay one line (linked "
        "by shared games, rounds or declared openings), which bounds nothing about the game",
    }[linked_by]
    return {
        "matches": m,
        "distinct_games": distinct_games,
        "distinct_openings": openings if known else None,
        "openings_known": known,
        "round_size": round_size,
        "units": count,
        "linked_by": linked_by,
        "design_effect": first.design_effect if first else math.nan,
        "effective_n": first.effective_n if first else math.nan,
        "variation": variation,
        "warning": diversity_warning(units, m, distinct_games, variation),
        "note": how
        + "; design_effect and effective_n are the starting player's win share's"
        + (
            "" if known else "; some openings were not recorded (rows stored before they were kept)"
        ),
    }
