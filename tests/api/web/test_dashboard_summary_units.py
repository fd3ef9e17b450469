"""Issue 44 item 9 follow-up: the dashboard's first-player headline rests on the report's units
of sampling, so the list and the report give one interval for one stored batch.

Matches that replay one game are one observation where the batch drew nothing to make them two
(``analysis.units``); the headline used to group by round or opening in SQL only and claimed
certainty for a batch replaying a few games. Expected values: ``analysis.report`` on the same
stored batch (the figure the headline must equal), the unit counts by hand from the design, and
the whole range for a single unit (one observation bounds nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from analysis_data import store_batch

from analysis.formatting import span
from analysis.report import build_report
from api.web.summaries import batch_rows
from storage import crud
from storage.models import BATCH

WIN = ((1.0, 0.0), (1.0, 0.0))
LOSS = ((0.0, 1.0), (0.0, 1.0))
DRAW = ((0.5, 0.5), (1.0, 1.0))
RESULTS = [WIN, LOSS, WIN, DRAW, WIN, LOSS, WIN, WIN, DRAW, LOSS]
"""What the starting seat (seat 0, the alquerque opener) took in distinct game ``g``."""
MATCHES = 40
NO_VARIATION = {"kind": "none"}


def stored(
    url: str,
    games: int | None,
    *,
    variation: dict[str, Any] | None,
    seat_policy: str = "fixed",
    outcomes: list[Any] | None = None,
    openings: Callable[[int], int | None] = lambda i: None,
) -> tuple[Any, str]:
    """A batch of ``MATCHES`` alquerque matches replaying ``games`` distinct move lists in turn
    (None: every match its own game), each game with its one result, stored with
    ``variation``."""
    if games is None:
        moves = lambda i: (f"m{i}", "x")  # noqa: E731
        results = outcomes or [RESULTS[i % len(RESULTS)] for i in range(MATCHES)]
    else:
        moves = lambda i: (f"g{i % games}", "x")  # noqa: E731
        results = [RESULTS[i % games] for i in range(MATCHES)]
    engine, batch_id = store_batch(
        url, game="alquerque", players=2, labels=["a", "b"], outcomes=results,
        seat_policy=seat_policy, moves=moves, openings=openings,
    )  # fmt: skip
    with engine.begin() as conn:
        conn.execute(BATCH.update().where(BATCH.c.id == batch_id).values(variation=variation))
    return engine, batch_id


def headline_and_report(engine: Any, batch_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None
    row = batch_rows(engine, [batch])[0]
    report = build_report(engine, batch_id)
    assert row["first_player"] is not None
    # The headline's text is written from the same figure.
    fpa = row["first_player"]
    assert span(fpa["ci_low"], fpa["ci_high"]) in row["headline"]
    return fpa, report


def assert_same(fpa: dict[str, Any], report: dict[str, Any]) -> None:
    expected = report["first_player_advantage"]
    for key in ("estimate", "ci_low", "ci_high", "effective_n"):
        assert fpa[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-12), key
    assert fpa["units"] == expected["units"] == report["independence"]["units"]
    assert fpa["interval"] == expected["interval"]


@pytest.mark.parametrize("games", [1, 2, 3, 10])
@pytest.mark.parametrize("variation", [NO_VARIATION, None], ids=["none", "undeclared"])
def test_replayed_games_give_the_report_s_units_and_interval(
    db_url: str, games: int, variation: dict[str, Any] | None
) -> None:
    engine, batch_id = stored(db_url, games, variation=variation)
    fpa, report = headline_and_report(engine, batch_id)
    # Fixed seats (rounds of one match): each distinct game is one unit.
    assert fpa["units"] == games
    assert_same(fpa, report)
    if games == 1:
        # One observation bounds nothing: the whole range around the fair share.
        assert (fpa["ci_low"], fpa["ci_high"]) == (-0.5, 0.5)
        assert fpa["estimate"] == 0.5  # the one game was won by the starting seat
        assert "1 unit in 40 matches" in row_headline(engine, batch_id)


def row_headline(engine: Any, batch_id: str) -> str:
    batch = crud.get_batch(engine, batch_id)
    assert batch is not None
    return str(batch_rows(engine, [batch])[0]["headline"])


def test_replays_join_with_their_rounds(db_url: str) -> None:
    # Pairs (rotate): pair i holds games 2i mod 10 and 2i + 1 mod 10, so the ten games join
    # in five pairs of games: five units.
    engine, batch_id = stored(db_url, 10, variation=NO_VARIATION, seat_policy="rotate")
    fpa, report = headline_and_report(engine, batch_id)
    assert fpa["units"] == 5
    assert_same(fpa, report)


@pytest.mark.parametrize("seat_policy, units", [("fixed", MATCHES), ("rotate", MATCHES // 2)])
def test_a_batch_of_distinct_games_keeps_its_rounds(
    db_url: str, seat_policy: str, units: int
) -> None:
    rng = np.random.default_rng(9)
    outcomes = [RESULTS[int(k)] for k in rng.integers(0, len(RESULTS), MATCHES)]
    engine, batch_id = stored(
        db_url, None, variation=NO_VARIATION, seat_policy=seat_policy, outcomes=outcomes
    )
    fpa, report = headline_and_report(engine, batch_id)
    assert fpa["units"] == units
    assert_same(fpa, report)


def test_replays_under_noise_that_moves_a_player_stay_apart(db_url: str) -> None:
    # The batch drew noise on agent 0: an equal game is a second draw, not a replay, so the
    # units stay the rounds although only two games were played.
    noise = {"kind": "noise", "plies": 4, "margin": 0.1, "noised": [0]}
    engine, batch_id = stored(db_url, 2, variation=noise)
    fpa, report = headline_and_report(engine, batch_id)
    assert fpa["units"] == MATCHES
    assert_same(fpa, report)


def test_a_page_of_batches_mixes_grouped_and_joined_units(db_url: str) -> None:
    # One page: a replaying batch (units joined from its matches' keys) beside a batch of
    # distinct games (units grouped in SQL); each row keeps its own report's figure.
    engine, replays = stored(db_url, 3, variation=NO_VARIATION)
    _, distinct = stored(db_url, None, variation=NO_VARIATION, seat_policy="rotate")
    batches = [crud.get_batch(engine, b) for b in (replays, distinct)]
    rows = batch_rows(engine, [b for b in batches if b is not None])
    assert [r["first_player"]["units"] for r in rows] == [3, MATCHES // 2]
    for row, batch_id in zip(rows, (replays, distinct), strict=True):
        assert_same(row["first_player"], build_report(engine, batch_id))


def test_a_batch_stored_before_variations_joins_rounds_that_share_an_opening(
    db_url: str,
) -> None:
    # Undeclared variation: a shared opening links matches too. Pairs (rotate) whose openings
    # run 0, 0, 0, 0, 1, 1, 1, 1, …: two pairs to an opening, so twenty pairs make ten units
    # (grouping by opening alone, with each pair's second match opening apart, would not).
    rng = np.random.default_rng(44)
    outcomes = [RESULTS[int(k)] for k in rng.integers(0, len(RESULTS), MATCHES)]
    engine, batch_id = stored(
        db_url, None, variation=None, seat_policy="rotate", outcomes=outcomes,
        openings=lambda i: 100 + i // 4 if i % 2 == 0 else None,
    )  # fmt: skip
    fpa, report = headline_and_report(engine, batch_id)
    assert fpa["units"] == 10
    assert_same(fpa, report)
