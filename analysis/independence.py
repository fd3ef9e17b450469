"""How much independent information a batch holds: the ``independence`` block of every report.

Deterministic players replay their lines, so forty matches may be one game played forty times.
The block counts what the figures really rest on — distinct games, distinct openings, units of
sampling (``analysis.units``) and the effective sample size of the headline figure — says which
variation the batch declared, and warns in plain words when the units are far fewer than the
matches.
"""

from __future__ import annotations

import math
from typing import Any

from analysis import stats
from analysis.seats import seat_share
from analysis.tidy import Wide, by_turn
from engines.seating import opening_round

FEW_UNITS = 0.5
"""Warn when the units are fewer than this fraction of the rounds the seating design alone would
make (a round of seat-swapped matches is one unit by design, so that alone never warns)."""


def few_units(units: int, matches: int, round_size: int) -> bool:
    """True when ``units`` are far fewer than the rounds ``matches`` make (``FEW_UNITS``)."""
    return matches >= 2 and units < FEW_UNITS * math.ceil(matches / max(round_size, 1))


def headline(sums: stats.UnitSums, players: int, seat_policy: str) -> dict[str, Any] | None:
    """The dashboard's first-player headline from sums grouped by opening (one grouped query
    over a page of batches): the starting player's win share − 1/n with the report's interval
    rule (``stats.share_from_sums``), the units it rests on and a short ``warning`` when they
    are far fewer than the matches. Rounds are not linked here, only openings; the report,
    which links both, is the reference. None before any match."""
    if sums.matches == 0:
        return None
    share = stats.share_from_sums(sums)
    expected = 1.0 / players
    warning = None
    if few_units(sums.units, sums.matches, opening_round(players, seat_policy)):
        warning = (
            f"{sums.units:,} distinct opening{'s' if sums.units != 1 else ''} in "
            f"{sums.matches:,} matches"
        )
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


def independence(
    w: Wide, variation: dict[str, Any] | None, distinct_games: int, round_size: int
) -> dict[str, Any]:
    """The ``independence`` block (keys documented in ``analysis.report``)."""
    m = w.matches
    units = w.units
    count = units.count if units is not None else m
    openings = units.distinct_openings if units is not None else None
    known = units.openings_known if units is not None else False
    first = seat_share(by_turn(w), 0) if m else None
    warning = None
    if few_units(count, m, round_size):
        what = (
            f"{openings:,} distinct opening{'s' if openings != 1 else ''} and "
            if known and openings is not None
            else ""
        )
        warning = (
            f"{m:,} matches hold only {what}{count:,} independent unit"
            f"{'s' if count != 1 else ''} of sampling ({distinct_games:,} distinct games): the "
            "players repeat their lines, so every figure rests on the units, not the matches, "
            "and its interval is widened to match"
            + (" (one unit bounds nothing)" if count == 1 else "")
            + ". "
            + remedy(variation)
        )
    return {
        "matches": m,
        "distinct_games": distinct_games,
        "distinct_openings": openings if known else None,
        "openings_known": known,
        "round_size": round_size,
        "units": count,
        "design_effect": first.design_effect if first else math.nan,
        "effective_n": first.effective_n if first else math.nan,
        "variation": variation,
        "warning": warning,
        "note": (
            "a unit of sampling is a set of matches linked by a shared opening (the first plies) "
            f"or a shared round of the seating design ({round_size} match"
            f"{'es' if round_size != 1 else ''}); design_effect and effective_n are the "
            "starting player's win share's"
            + (
                ""
                if known
                else "; some openings were not recorded (rows stored before they were kept), "
                "so those matches link by round only"
            )
        ),
    }
