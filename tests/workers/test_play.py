"""Seat policy, playing chunks, and batch validation (no database)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import workers.play
from engines.core import OptionError, match_seed
from engines.seating import seat_agents
from storage.settings import Settings
from workers.batches import plan_batch, plan_here, unique_labels
from workers.play import play_chunk


@given(n=st.integers(1, 6), first=st.integers(0, 10_000))
def test_rotate_seats_every_agent_in_every_seat_equally(n: int, first: int) -> None:
    seen = [seat_agents(n, "rotate", i) for i in range(first, first + n)]
    for order in seen:
        assert sorted(order) == list(range(n))
    for seat in range(n):
        assert sorted(order[seat] for order in seen) == list(range(n))


def test_rotate_pairs_and_fixed() -> None:
    assert seat_agents(2, "rotate", 0) == [0, 1]
    assert seat_agents(2, "rotate", 1) == [1, 0]
    assert seat_agents(3, "fixed", 5) == [0, 1, 2]
    with pytest.raises(ValueError, match="seat policy"):
        seat_agents(2, "shuffle", 0)


def plan(**overrides: object):  # type: ignore[no-untyped-def]
    args: dict = {
        "game": "alquerque",
        "players": None,
        "options": {},
        "agents": ["mcts:iterations=20", "random"],
        "matches": 6,
        "seed": 11,
        "seat_policy": None,
        "chunk_size": 3,
        "max_plies": None,
        "settings": Settings(),
    }
    args.update(overrides)
    return plan_batch(**args)


def test_plan_fills_labels_policy_and_defaults() -> None:
    p = plan()
    assert p.players == 2
    assert p.labels == ["mcts(iterations=20)", "random"]
    assert p.seat_policy == "balanced"
    assert p.agents[0]["name"] == "mcts" and p.agents[0]["iterations"] == 20
    # Stored options are the game's declared defaults (Alquerque: 50 plies without a capture)
    # overlaid with what was given.
    assert p.options == {"no_capture_limit": 50}
    assert plan(options={"no_capture_limit": 30}).options == {"no_capture_limit": 30}
    same = plan(agents=["random"], chunk_size=None)
    assert same.labels == ["random", "random#2"]
    assert same.seat_policy == "fixed"
    assert same.chunk_size == 0  # sized later by the runner, never by playing here
    assert plan(seed=None).seed != plan(seed=None).seed
    assert unique_labels(["a", "b", "a", "a"]) == ["a", "b", "a#2", "a#3"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"game": "chess"}, "game"),
        ({"players": 3}, "players"),
        ({"options": {"colour": "red"}}, "options.colour"),
        ({"agents": ["random", "mcts:iterations=-5"]}, "agents[1].iterations"),
        ({"agents": ["random", "nobody"]}, "agents[1].name"),
        ({"agents": ["random", "random", "random"]}, "players"),
        ({"agents": []}, "agents"),
        ({"matches": 0}, "matches"),
        ({"seed": -1}, "seed"),
        ({"seat_policy": "shuffle"}, "seat_policy"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"max_plies": 0}, "max_plies"),
        ({"stop_rule": ["not", "an", "object"]}, "stop_rule"),
    ],
)
def test_bad_requests_name_the_field(overrides: dict, field: str) -> None:
    with pytest.raises(OptionError) as info:
        plan(**overrides)
    assert info.value.field == field


def test_a_mistyped_or_missing_request_key_is_a_type_error() -> None:
    # As a wrong keyword would be: a request is never planned with a key silently at None.
    with pytest.raises(TypeError, match="no key seat_polcy"):
        plan(seat_polcy="fixed")
    with pytest.raises(TypeError, match=r"lacks .*\bmatches\b"):
        plan_here({"game": "alquerque", "agents": ["random"]}, Settings())


def test_chunks_replay_identically_whatever_the_chunking() -> None:
    p = plan()
    whole = play_chunk(p, 0, 6)
    tail = play_chunk(p, 3, 6)
    assert [r.moves for r in whole[3:]] == [r.moves for r in tail]
    assert [r.match_index for r in whole] == list(range(6))
    assert all(r.ok and r.plies == len(r.moves) for r in whole)
    assert [r.seed for r in whole] == [match_seed(11, i) for i in range(6)]
    # Rotation: the mcts agent (index 0) sits in seat 0 in even matches, seat 1 in odd ones.
    for r in whole:
        by_seat = {s.seat: s.agent_index for s in r.seats}
        assert by_seat == ({0: 0, 1: 1} if r.match_index % 2 == 0 else {0: 1, 1: 0})
        assert {s.agent_label for s in r.seats} == {"mcts(iterations=20)", "random"}
        assert sum(s.win_share for s in r.seats) == pytest.approx(1.0)
        assert sorted(s.rank for s in r.seats) in ([1, 1], [1, 2])


def test_a_match_that_raises_is_recorded_and_the_rest_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = plan()
    real = workers.play.play_match

    def flaky(game, agents, seed, *args, **kwargs):  # type: ignore[no-untyped-def]
        if seed == match_seed(p.seed, 4):
            raise RuntimeError("engine exploded")
        return real(game, agents, seed, *args, **kwargs)

    monkeypatch.setattr(workers.play, "play_match", flaky)
    records = play_chunk(p, 3, 6)
    assert [r.ok for r in records] == [True, False, True]
    failed = records[1]
    assert failed.error == "RuntimeError: engine exploded"
    assert failed.seats == [] and failed.moves == () and failed.ended_by == "error"


def test_the_soft_time_limit_keeps_finished_matches_and_fails_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a worker's soft time limit does: SoftTimeLimitExceeded raised inside match 4."""
    from billiard.exceptions import SoftTimeLimitExceeded

    p = plan(matches=8)
    real = workers.play.play_match

    def interrupted(game, agents, seed, *args, **kwargs):  # type: ignore[no-untyped-def]
        if seed == match_seed(p.seed, 4):
            raise SoftTimeLimitExceeded()
        return real(game, agents, seed, *args, **kwargs)

    monkeypatch.setattr(workers.play, "play_match", interrupted)
    records = play_chunk(p, 2, 8)
    assert [r.match_index for r in records] == [2, 3, 4, 5, 6, 7]
    assert [r.ok for r in records] == [True, True, False, False, False, False]
    for r in records[2:]:
        assert r.ended_by == "time_limit" and r.seats == [] and r.moves == ()
        assert r.error is not None and r.error.startswith("time limit:")
        assert r.seed == match_seed(p.seed, r.match_index)
    assert "during this match" in str(records[2].error)
    assert "not played" in str(records[3].error)


BUDGET_BOUNDS = {"iterations": 100_000, "nodes": 1_000_000, "depth": 16}
"""The documented defaults of MAX_AGENT_ITERATIONS, MAX_AGENT_NODES, MAX_AGENT_DEPTH."""
NOT_BUDGETS = {"max_rollout_plies"}
"""Whole-number agent parameters that cap work rather than add to it."""


def _budget_params() -> list[tuple[str, str, str, int]]:
    from engines.registry import agent_types, load_game

    found = []
    for game_name, players in (("alquerque", 2), ("alveoles", 2)):
        game = load_game(game_name, players=players)
        for agent in agent_types(game):
            for param in agent.params:
                if param.kind is int and param.name not in NOT_BUDGETS:
                    found.append((game_name, agent.name, param.name, int(param.maximum or 0)))
    return found


def test_every_whole_number_agent_parameter_is_a_bounded_budget() -> None:
    params = _budget_params()
    assert {name for _g, _a, name, _m in params} <= set(BUDGET_BOUNDS)
    assert {(a, name) for _g, a, name, _m in params} >= {
        ("mcts", "iterations"),
        ("alphabeta", "depth"),
        ("alphabeta", "nodes"),
        ("hard", "depth"),
        ("hard", "nodes"),
        ("medium", "depth"),
    }


@pytest.mark.parametrize(
    ("game", "agent", "name", "maximum"),
    # Parameters the agent itself caps at or below the bound (medium's depth ≤ 8) need none.
    [p for p in _budget_params() if not p[3] or p[3] > BUDGET_BOUNDS[p[2]]],
)
def test_agent_budgets_over_the_bound_are_refused(
    game: str, agent: str, name: str, maximum: int
) -> None:
    bound = BUDGET_BOUNDS[name]
    spec = {"name": agent, name: bound + 1}
    with pytest.raises(OptionError) as info:
        plan(game=game, agents=[spec, "random"])
    assert info.value.field == f"agents[0].{name}"
    assert f"at most {bound}" in str(info.value)
    assert plan(game=game, agents=[{"name": agent, name: bound}, "random"]).agents[0][name] == bound


def test_agent_budget_bounds_follow_the_settings() -> None:
    settings = Settings(max_agent_iterations=50)
    with pytest.raises(OptionError) as info:
        plan(agents=["mcts:iterations=51", "random"], settings=settings)
    assert info.value.field == "agents[0].iterations"
    assert (
        plan(agents=["mcts:iterations=50", "random"], settings=settings).agents[0]["iterations"]
        == 50
    )
