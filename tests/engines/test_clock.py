"""Blitz clocks in the engines: reading a time control, charging each seat's clock with a
clock the test controls, losing on time, and the searches keeping to their move time.

Expected values are worked out by hand from the rules of a Fischer clock (the time of each
step taken off, the increment added after each move played), never read from the code."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from engines.clock import FIELD, MAX_BASE, MAX_INCREMENT, TimeControl, moves_to_go
from engines.core import Action, Ending, OptionError, State, TimedAgent, agent_rng, play_match
from engines.registry import load_game, make_agent


@pytest.mark.parametrize(
    ("text", "base", "increment", "canonical"),
    [
        ("60+1", 60.0, 1.0, "60+1"),
        (" 60 ", 60.0, 0.0, "60+0"),
        ("0.5+0.05", 0.5, 0.05, "0.5+0.05"),
        ("180+2.000", 180.0, 2.0, "180+2"),
        ("3600+60", 3600.0, 60.0, "3600+60"),
        ("0.001+0", 0.001, 0.0, "0.001+0"),
        (60, 60.0, 0.0, "60+0"),
        (2.5, 2.5, 0.0, "2.5+0"),
    ],
)
def test_a_time_control_reads_seconds_and_an_increment(
    text: str | float, base: float, increment: float, canonical: str
) -> None:
    control = TimeControl.parse(text)
    assert (control.base, control.increment) == (base, increment)
    assert control.text == canonical
    assert TimeControl.parse(control.text) == control


HOSTILE = [
    "0+0",
    "0",
    "0.0004+1",
    "-60+1",
    "60+-1",
    "60-1",
    "sixty",
    "nan",
    "inf",
    "60+inf",
    "1e3+0",
    "60+1+1",
    "60+1\x00",
    "\x00",
    "",
    "3601+0",
    "60+61",
    "9" * 40,
    "99999999+0",
    "60.0001+0",
    "\u0660\u0666+\u0661",  # Arabic-Indic digits: "06+1" to Python's int
    "\uff16\uff10+\uff11",  # full-width "60+1"
    "60+\u0661",
    "\u0967\u0966",  # Devanagari "10"
    0,
    -5,
    1e-05,
    10**40,
    1e300,
    float("nan"),
    float("inf"),
    True,
    ["60", "1"],
    {"base": 60},
]


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_hostile_time_controls_are_refused_naming_the_field(value: object) -> None:
    with pytest.raises(OptionError) as caught:
        TimeControl.parse(value)
    assert caught.value.field == FIELD == "options.time_control"
    assert "\x00" not in str(caught.value)


def test_the_bounds_are_named_in_the_refusal() -> None:
    with pytest.raises(OptionError, match=f"at most {MAX_BASE:g} seconds a player"):
        TimeControl.parse("3600.001+0")
    with pytest.raises(OptionError, match=f"at most {MAX_INCREMENT:g} seconds a move"):
        TimeControl.parse("60+60.5")


def test_a_move_gets_its_share_of_the_clock_plus_most_of_the_increment() -> None:
    control = TimeControl.parse("60+1")
    # 60 s over 30 moves is 2 s, plus 0.8 of the 1 s increment.
    assert control.move_time(60.0, 30) == pytest.approx(2.8)
    # 10 s over 5 moves is 2 s + 0.8 = 2.8, under half of the 10 s.
    assert control.move_time(10.0, 5) == pytest.approx(2.8)
    # 2 s left over 1 move would be 2.8 s: never more than half of what is left.
    assert control.move_time(2.0, 1) == pytest.approx(1.0)
    assert control.move_time(0.0, 10) == 0.0
    # At most 30 moves planned for; near the ply cap a seat's share of what is left.
    assert moves_to_go(1000, 2) == 30
    assert moves_to_go(20, 2) == 10
    assert moves_to_go(5, 2) == 3
    assert moves_to_go(0, 2) == 1
    # The longest a match can run on its clocks: both bases and an increment a ply.
    assert control.match_bound(2, 200) == pytest.approx(2 * 60 + 200 * 1)


class FakeClock:
    """A clock that moves only when a player says how long its move took."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Timed:
    """Plays the first legal move, charging ``costs[k]`` seconds for its k-th move on the fake
    clock, and records the move times it was told."""

    def __init__(self, clock: FakeClock, costs: Callable[[int], float]) -> None:
        self.clock = clock
        self.costs = costs
        self.moves = 0
        self.told: list[float | None] = []

    def set_move_time(self, seconds: float | None) -> None:
        self.told.append(seconds)

    def step(self, state: State) -> Action:
        self.clock.now += self.costs(self.moves)
        self.moves += 1
        return state.legal_actions()[0]


def test_each_seat_is_charged_its_own_steps_and_given_the_increment() -> None:
    game = load_game("alquerque")
    clock = FakeClock()
    # Binary fractions, so the sums below are exact.
    fast = Timed(clock, lambda k: 0.25)
    slow = Timed(clock, lambda k: 1.5)
    assert isinstance(fast, TimedAgent)
    result = play_match(
        game, [fast, slow], seed=1, max_plies=6, time_control=TimeControl(4.0, 0.5), clock=clock
    )
    assert (result.plies, result.ended_by) == (6, Ending.MAX_PLIES)
    assert result.move_times == ((0.25, 0.25, 0.25), (1.5, 1.5, 1.5))
    # Seat 1's clock: 4 → 3 (−1.5 +0.5) → 2 → 1 before its third move. Each move is told
    # min(left / moves to go + 0.8 × 0.5, left / 2); 6 plies of 2 players: 3, 2, 1 to go.
    assert slow.told == pytest.approx([min(4 / 3 + 0.4, 2.0), min(3 / 2 + 0.4, 1.5), 1.0])
    # Seat 0: 4 → 4.25 → 4.5 before its third move; half of what is left caps the last two.
    assert fast.told == pytest.approx([4 / 3 + 0.4, 4.25 / 2, 4.5 / 2])


def test_a_seat_whose_step_outlasts_its_clock_loses_on_time() -> None:
    game = load_game("alquerque")
    clock = FakeClock()
    steady = Timed(clock, lambda k: 0.5)
    # 2 s + 1 s a move: 2 → 2.5 → 3 → 3.5 left; the fourth move's 4 s is too long.
    spender = Timed(clock, lambda k: 0.5 if k < 3 else 4.0)
    result = play_match(
        game, [steady, spender], seed=1, time_control=TimeControl(2.0, 1.0), clock=clock
    )
    assert result.ended_by == Ending.TIME == "time"
    assert result.returns == (1.0, 0.0)
    # Seat 1's flagged move was not played: seat 0 moved four times, seat 1 three.
    assert result.plies == 7
    assert result.move_times == ((0.5,) * 4, (0.5, 0.5, 0.5, 4.0))
    assert result.ranks() == [1, 2]


def test_with_three_players_the_others_share_the_win_on_time() -> None:
    game = load_game("alveoles", players=3)
    clock = FakeClock()
    players = [Timed(clock, lambda k: 0.125) for _ in range(2)]
    players.insert(1, Timed(clock, lambda k: 2.0))
    result = play_match(game, players, seed=4, time_control=TimeControl(1.0), clock=clock)
    assert result.ended_by == Ending.TIME
    assert result.returns == (0.5, 0.0, 0.5)
    assert result.plies == 1


class Blocking:
    """Waits for an event nobody sets, far longer than its clock holds."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.never = threading.Event()

    def step(self, state: State) -> Action:
        self.never.wait(self.wait)
        return state.legal_actions()[0]


def test_on_the_wall_clock_a_player_far_slower_than_its_clock_loses_on_time() -> None:
    game = load_game("alquerque")
    seed = 9
    quick = make_agent(game, "random", agent_rng(seed, 0))
    # A 50 ms clock against a step that waits a whole second: no machine makes that close.
    result = play_match(game, [quick, Blocking(1.0)], seed, time_control=TimeControl(0.05))
    assert result.ended_by == Ending.TIME
    assert result.returns == (1.0, 0.0)
    assert result.plies == 1
    assert result.move_times is not None and result.move_times[1][0] >= 1.0


def test_without_a_clock_nothing_is_timed_and_no_move_time_is_told() -> None:
    game = load_game("alquerque")
    clock = FakeClock()
    players = [Timed(clock, lambda k: 1000.0) for _ in range(2)]
    result = play_match(game, players, seed=1, max_plies=10)
    assert result.move_times is None
    assert result.ended_by == Ending.MAX_PLIES
    assert players[0].told == players[1].told == []


def test_a_python_mcts_out_of_time_runs_a_single_iteration() -> None:
    game = load_game("alquerque")
    agent = make_agent(game, {"name": "mcts", "backend": "python"}, random.Random(0))
    assert isinstance(agent, TimedAgent)
    state = game.new_initial_state(0)
    agent.set_move_time(0.0)
    root = agent.search(state)  # type: ignore[attr-defined]
    assert sum(c.visits for c in root.children) == 1
    agent.set_move_time(None)
    root = agent.search(state)  # type: ignore[attr-defined]
    assert sum(c.visits for c in root.children) == 400


@pytest.mark.parametrize(
    ("game_name", "spec", "depth"),
    [
        ("alquerque", {"name": "alphabeta", "depth": 3, "backend": "python"}, 3),
        ("abalone", {"name": "hard"}, 2),
    ],
)
def test_an_alpha_beta_out_of_time_plays_its_first_depth(
    game_name: str, spec: dict[str, object], depth: int
) -> None:
    game = load_game(game_name)
    agent = make_agent(game, spec, random.Random(0))
    assert isinstance(agent, TimedAgent)
    state = game.new_initial_state(0)
    agent.set_move_time(0.0)
    assert agent.step(state) in state.legal_actions()
    assert agent.completed_depth == 1  # type: ignore[attr-defined]
    agent.set_move_time(None)
    agent.step(state)
    assert agent.completed_depth == depth  # type: ignore[attr-defined]


def test_the_compiled_alpha_beta_out_of_time_stops_at_its_first_clock_check() -> None:
    from engines.compiled.search_negamax import CHECK_EVERY

    game = load_game("abalone")
    agent = make_agent(game, {"name": "alphabeta", "depth": 4}, random.Random(0))
    assert isinstance(agent, TimedAgent)
    state = game.new_initial_state(0)
    agent.set_move_time(0.0)
    assert agent.step(state) in state.legal_actions()
    assert agent.nodes_spent == CHECK_EVERY  # type: ignore[attr-defined]
    assert 1 <= agent.completed_depth < 4  # type: ignore[attr-defined]
    agent.set_move_time(None)
    agent.step(state)
    assert agent.completed_depth == 4  # type: ignore[attr-defined]


def test_the_compiled_alhambra_search_out_of_time_stops_at_its_first_clock_check() -> None:
    from engines.compiled.search_parts import CHECK_EVERY

    game = load_game("alhambra", players=2)
    agent = make_agent(game, {"name": "mcts", "iterations": 500}, random.Random(0))
    assert isinstance(agent, TimedAgent)
    state = game.new_initial_state(0)
    legal = state.legal_actions()
    agent.set_move_time(0.0)
    visits = agent._search(state, legal)[2]  # type: ignore[attr-defined]
    assert int(visits.sum()) <= CHECK_EVERY
    agent.set_move_time(None)
    visits = agent._search(state, legal)[2]  # type: ignore[attr-defined]
    assert int(visits.sum()) > CHECK_EVERY


def test_an_alhambra_mcts_out_of_time_searches_once() -> None:
    game = load_game("alhambra", players=2)
    spec = {"name": "mcts", "iterations": 50, "backend": "python"}
    agent = make_agent(game, spec, random.Random(0))
    assert isinstance(agent, TimedAgent)
    state = game.new_initial_state(0)
    agent.set_move_time(0.0)
    bias = agent._root_bias(state, state.legal_actions())  # type: ignore[attr-defined]
    root = agent.search(state, bias)  # type: ignore[attr-defined]
    assert sum(c.visits for c in root.children.values()) == 1


def test_the_compiled_search_out_of_time_stops_at_its_first_clock_check() -> None:
    from engines.compiled import dispatch, search_parts, search_uct
    from engines.compiled.kernels import kernel_id

    game = load_game("alquerque")
    game_id = kernel_id("alquerque")
    position = dispatch.KERNEL_MODULES[game_id].encode(game.new_initial_state(0))
    args = (game_id, position, 2, 5000, 1.4, search_parts.GAME_ROLLOUT, 400, 7)
    # A deadline long past: the iterations before the first check run, then it stops.
    _moves, visits, _totals = search_uct.root_moves(*args, 1.0)
    assert int(visits.sum()) == search_parts.CHECK_EVERY
    moves, visits, totals = search_uct.root_moves(*args, 0.0)
    assert int(visits.sum()) == 5000
    # A deadline that never comes: the same search, its tree grown step by step past
    # TIMED_NODES instead of made room for at once.
    assert search_parts.TIMED_NODES < 5000
    timed = search_uct.root_moves(*args, time.perf_counter() + 1e6)
    assert [x.tolist() for x in timed] == [moves.tolist(), visits.tolist(), totals.tolist()]
    agent = make_agent(game, "mcts", random.Random(0))
    assert isinstance(agent, TimedAgent)
    agent.set_move_time(0.0)
    assert agent.step(game.new_initial_state(0)) in game.new_initial_state(0).legal_actions()


def test_the_information_set_search_grows_its_tree_under_a_deadline() -> None:
    """Like UCT, a search with a deadline makes room for ``TIMED_NODES`` nodes and grows: with
    a deadline that never comes it gives what the same search without one gives."""
    from engines.alhambra import kernel as alhambra
    from engines.compiled import dispatch, search_ismcts, search_parts

    state = load_game("alhambra", players=2).new_initial_state(3)
    moves = np.array(state.legal_actions()[:6], dtype=np.int64)
    iterations = search_parts.TIMED_NODES + 300
    args = (dispatch.ALHAMBRA, alhambra.encode(state), 2, iterations, 0.7, 4, 6, moves)
    rest = (np.zeros(len(moves)), 1.0, search_parts.GAME_ROLLOUT, 11)
    untimed = search_ismcts.root_moves(*args, *rest, 0.0)
    timed = search_ismcts.root_moves(*args, *rest, time.perf_counter() + 1e6)
    assert int(untimed[1].sum()) == iterations
    assert [x.tolist() for x in timed] == [x.tolist() for x in untimed]
