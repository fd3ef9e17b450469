"""OpenSpiel's native code runs in child processes: parameters that crash OpenSpiel, exhaust
memory or build huge games are refused as ``OptionError`` naming the field, and a match that
crashes its process fails alone, while this process (standing in for the API and the worker)
carries on. Without the child processes the crashing cases take this test process down."""

from __future__ import annotations

from typing import Any

import pytest

from engines.core import Ending, OptionError
from storage.models import BatchPlan
from storage.settings import Settings
from workers import native_games
from workers.batches import plan_batch
from workers.isolation import Limits
from workers.native_games import iter_isolated
from workers.play import play_chunk, stored_seed

pytestmark = pytest.mark.slow
pytest.importorskip("pyspiel")


def plan(game: str, options: dict[str, Any], **change: Any) -> BatchPlan:
    request: dict[str, Any] = {
        "game": game,
        "players": None,
        "options": options,
        "agents": ["random"],
        "matches": 2,
        "seed": 5,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
        **change,
    }
    return plan_batch(**request, settings=Settings(database_url="sqlite://"))


@pytest.mark.parametrize(
    ("game", "options", "field", "words"),
    [
        # Each of these crashed a server that loaded the game in its own process.
        ("openspiel:connect_four", {"rows": 0}, "options.rows", "SIGSEGV"),
        ("openspiel:universal_poker", {"numPlayers": 3}, "options.numPlayers", "SIGSEGV"),
        # std::bad_alloc after seconds of allocation, in the request.
        ("openspiel:nim", {"pile_sizes": "999999999"}, "options.pile_sizes", "memory"),
        # Twenty million actions: refused by size before a match would build them.
        ("openspiel:nim", {"pile_sizes": "1;10000000"}, "options.pile_sizes", "too large"),
        # Taken by OpenSpiel, but its length comes out negative: no ply cap can be drawn.
        ("openspiel:banqi", {"max_no_progress": -1000}, "options.max_no_progress", "at least one"),
        # A board of a million boxes.
        ("openspiel:dots_and_boxes", {"num_rows": 1000, "num_cols": 1000}, "options", "too large"),
    ],
)
def test_parameters_that_break_openspiel_are_refused_naming_the_field(
    game: str, options: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(OptionError) as refused:
        plan(game, options)
    assert refused.value.field == field
    assert words in str(refused.value)


def test_a_long_match_on_a_large_board_is_refused_naming_max_plies() -> None:
    # 40 x 40 boxes: 3,280 plies at most, each position some 13,000 characters of text.
    with pytest.raises(OptionError) as refused:
        plan("openspiel:dots_and_boxes", {"num_rows": 40, "num_cols": 40}, max_plies=3280)
    assert refused.value.field == "max_plies"
    assert plan("openspiel:dots_and_boxes", {"num_rows": 40, "num_cols": 40}, max_plies=100)


def test_a_checked_request_is_remembered_and_starts_no_second_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native_games.forget_checks()
    calls: list[str] = []
    real = native_games.call_isolated

    def counted(*args: Any) -> Any:
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(native_games, "call_isolated", counted)
    first = plan("openspiel:hex", {"board_size": 4})
    second = plan("openspiel:hex", {"board_size": 4}, seed=6)
    with pytest.raises(OptionError):
        plan("openspiel:connect_four", {"rows": 0})
    with pytest.raises(OptionError):
        plan("openspiel:connect_four", {"rows": 0})
    assert len(calls) == 2
    # The remembered plan is a plan of its own: its seed and id are the request's.
    assert (first.seed, second.seed) == (5, 6) and first.id != second.id
    assert first.options == second.options and first.options["board_size"] == 4


def crashing_batch() -> BatchPlan:
    """A stored batch whose game segfaults OpenSpiel (as one accepted before the checks)."""
    good = plan("openspiel:connect_four", {})
    return good.model_copy(update={"options": {**good.options, "rows": 0}})


def test_a_game_that_crashes_fails_its_matches_not_the_worker() -> None:
    batch = crashing_batch()
    records = play_chunk(batch, 0, 3)
    assert [r.match_index for r in records] == [0, 1, 2]
    assert all(not r.ok and r.ended_by == Ending.ERROR for r in records)
    assert all("SIGSEGV" in str(r.error) for r in records)


def test_a_match_past_its_cpu_limit_fails_alone_and_the_next_one_is_played() -> None:
    good = plan("openspiel:tic_tac_toe", {}, agents=["random"], matches=3)
    # The first match's search goes on for minutes; the others are quick random games.
    slow = {"name": "openspiel_mcts", "iterations": 100_000}
    batch = good.model_copy(
        update={"agents": [slow, {"name": "random"}], "labels": ["slow", "random"]}
    )
    batch = batch.model_copy(update={"seat_policy": "fixed"})
    limits = Limits(memory_bytes=2048 * 2**20, cpu_seconds=1.0, wall_seconds=600.0)
    records = list(iter_isolated(batch, 0, 2, limits))
    assert [r.match_index for r in records] == [0, 1]
    assert all(not r.ok and "CPU" in str(r.error) for r in records)
    # Each failure carries its own match's seed, announced by the child before it played.
    assert [r.seed for r in records] == [stored_seed(batch, i) for i in range(2)]
    quick = good.model_copy(update={"agents": [{"name": "random"}] * 2})
    played = list(iter_isolated(quick, 0, 3, limits))
    assert [r.ok for r in played] == [True, True, True]
