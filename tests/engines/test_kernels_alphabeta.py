"""The compiled alpha-beta (``engines.compiled.search_negamax``) and the ``alphabeta`` agent on it.

Its values are checked against a plain full-width minimax written here over the Python rules
(every move, no table, no ordering, no cut-off), with the kernel's evaluation at the horizon and
the same quiescence: where depth runs out, the side to move takes the better of the evaluation
and the forcing moves (here: a move that takes pieces), for so many plies more.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable

import numpy as np
import pytest
from alquerque_wins import WINNING_POSITIONS

from engines.abalone import kernel as abalone_kernel
from engines.abalone.agents import evaluator
from engines.abalone.heuristics import DEFAULT_WEIGHTS, Weights, threatened
from engines.abalone.rules import AbaloneState
from engines.alquerque import kernel as alquerque_kernel
from engines.alquerque.rules import AlquerqueGame, AlquerqueState
from engines.alveoles import kernel as alveoles_kernel
from engines.alveoles.layouts import CELLS
from engines.alveoles.rules import AlveolesState
from engines.compiled import search_negamax
from engines.compiled.agent_alphabeta import QUIESCENCE, CompiledAlphaBetaAgent
from engines.compiled.choose_alphabeta import make_alphabeta
from engines.compiled.kernels import kernel_id
from engines.core import Action, Agent, Game, OptionError, Seat, State, agent_rng, play_match
from engines.registry import load_game, make_agent, normalise_agent_spec

WIN = 1000.0
ALQUERQUE = load_game("alquerque")
NO_WEIGHTS = np.zeros(0, dtype=np.float64)
NO_ENDGAME = np.zeros(0, dtype=np.int8)

Evaluate = Callable[[State, Seat], float]
Forcing = Callable[[State, State], bool]


def minimax(
    state: State, depth: int, quiet: int, seat: Seat, ply: int, evaluate: Evaluate, forcing: Forcing
) -> float:
    """Value of ``state`` for ``seat`` (the seat to move, or the mover into a finished game)."""
    if state.is_terminal():
        share = state.returns()[seat]
        return WIN - ply if share > 0.5 else ply - WIN if share < 0.5 else 0.0
    mover = state.current_player()
    if depth == 0:
        best = evaluate(state, mover)
        if quiet == 0:
            return best
    else:
        best = -math.inf
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        if depth == 0 and not forcing(state, child):
            continue
        nxt = child.current_player()
        deeper = (depth - 1, quiet) if depth > 0 else (0, quiet - 1)
        if child.is_terminal() or nxt == mover:
            value = minimax(child, *deeper, mover, ply + 1, evaluate, forcing)
        else:
            value = -minimax(child, *deeper, nxt, ply + 1, evaluate, forcing)
        best = max(best, value)
    return best


def minimax_root(
    state: State, depth: int, quiet: int, evaluate: Evaluate, forcing: Forcing
) -> dict[Action, float]:
    mover = state.current_player()
    values = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        nxt = child.current_player()
        if child.is_terminal() or nxt == mover:
            values[action] = minimax(child, depth - 1, quiet, mover, 1, evaluate, forcing)
        else:
            values[action] = -minimax(child, depth - 1, quiet, nxt, 1, evaluate, forcing)
    return values


def alquerque_evaluate(state: State, seat: Seat) -> float:
    assert isinstance(state, AlquerqueState)
    return float(alquerque_kernel.evaluate(alquerque_kernel.encode(state), seat))


def alquerque_takes(before: State, after: State) -> bool:
    assert isinstance(before, AlquerqueState) and isinstance(after, AlquerqueState)
    return (after.white | after.black).bit_count() < (before.white | before.black).bit_count()


def random_positions(game: Game, count: int, seed: int, max_plies: int) -> list[State]:
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < count:
        state = game.new_initial_state(rng.randrange(1 << 30))
        for _ in range(rng.randrange(max_plies)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            found.append(state)
    return found


def compiled(
    game_name: str, encoded: np.ndarray, depth: int, quiet: int, spread: float, seed: int = 0
) -> tuple[list[int], list[float], int, int]:
    moves, values, completed, nodes = search_negamax.search(
        kernel_id(game_name), encoded, depth, 0, quiet, NO_WEIGHTS, 0.0, seed, spread, 14, 0.0,
        False, False, NO_ENDGAME,
    )  # fmt: skip
    return moves.tolist(), values.tolist(), completed, nodes


@pytest.mark.parametrize(("depth", "quiet"), [(1, 0), (2, 0), (3, 0), (4, 0), (2, 2), (3, 3)])
def test_alquerque_values_are_the_plain_minimax_at_fixed_depth(depth: int, quiet: int) -> None:
    for index, state in enumerate(
        random_positions(ALQUERQUE, 12, seed=depth * 10 + quiet, max_plies=40)
    ):
        want = minimax_root(state, depth, quiet, alquerque_evaluate, alquerque_takes)
        encoded = alquerque_kernel.encode(state)
        moves, values, completed, _ = compiled("alquerque", encoded, depth, quiet, math.inf, index)
        assert completed == depth
        assert sorted(moves) == sorted(want)
        for move, value in zip(moves, values, strict=True):
            assert value == pytest.approx(want[move], abs=1e-12)
        # Proving one move best gives the same best value.
        best_moves, best_values, _, _ = compiled(
            "alquerque", encoded, depth, quiet, search_negamax.BEST_ONLY
        )
        assert best_values[0] == pytest.approx(max(want.values()), abs=1e-12)
        assert want[best_moves[0]] == pytest.approx(max(want.values()), abs=1e-12)


def alveoles_evaluate(state: State, seat: Seat) -> float:
    return float(alveoles_kernel.evaluate(alveoles_kernel.encode(state), seat))


def alveoles_closes(before: State, after: State) -> bool:
    assert isinstance(before, AlveolesState) and isinstance(after, AlveolesState)
    owned = [sum(s.owner(sq) >= 0 for sq in range(CELLS)) for s in (before, after)]
    return owned[1] > owned[0]


def test_alveoles_values_are_the_plain_minimax_where_a_seat_moves_again() -> None:
    """Late positions of Les Alvéoles, where closing a square gives the same seat the next
    move: the sign of a child follows who moves there, not the ply's parity."""
    game = load_game("alveoles")
    positions = random_positions(game, 40, seed=3, max_plies=140)
    late = [s for s in positions if len(s.legal_actions()) <= 9][:5]
    assert late
    for state in late:
        want = minimax_root(state, 3, 2, alveoles_evaluate, alveoles_closes)
        moves, values, _, _ = compiled("alveoles", alveoles_kernel.encode(state), 3, 2, math.inf)
        assert dict(zip(moves, values, strict=True)) == pytest.approx(want, abs=1e-12)


ABALONE = load_game("abalone")
ABALONE_EVALUATE = evaluator(DEFAULT_WEIGHTS)


def ejects(before: State, after: State) -> bool:
    assert isinstance(before, AbaloneState) and isinstance(after, AbaloneState)
    return sum(after.pushed_off) > sum(before.pushed_off)


def abalone_positions(count: int, seed: int) -> list[State]:
    """Middle games where the side to move can push a marble off: the rules' playout policy
    (ejections, pushes, toward the centre) from the standard layout until one can."""
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < count:
        state = ABALONE.new_initial_state(rng.randrange(1 << 30))
        for _ in range(300):
            if state.is_terminal():
                break
            if rng.random() < 0.2 and any(ejects(state, child) for child in _children(state)):
                found.append(state)
                break
            state.apply(state.rollout_action(rng))
    return found


def _children(state: State) -> list[State]:
    out = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        out.append(child)
    return out


@pytest.mark.parametrize(("depth", "quiet", "count"), [(1, 3, 3), (2, 1, 1)])
def test_abalone_values_are_the_plain_minimax_at_fixed_depth(
    depth: int, quiet: int, count: int
) -> None:
    """The evaluation of docs/rules/abalone.md (the Python one, with the default weights) at
    the horizon, ejections followed past it."""
    for index, state in enumerate(abalone_positions(count, seed=depth)):
        want = minimax_root(state, depth, quiet, ABALONE_EVALUATE, ejects)
        encoded = abalone_kernel.encode(state)
        moves, values, _, _ = search_negamax.search(
            kernel_id("abalone"), encoded, depth, 0, quiet, abalone_kernel.DEFAULT_WEIGHTS,
            0.0, index, math.inf, 14, 0.0, False, False, NO_ENDGAME,
        )  # fmt: skip
        assert dict(zip(moves.tolist(), values.tolist(), strict=True)) == pytest.approx(
            want, abs=1e-9
        )


def test_abalone_weights_reach_the_evaluation() -> None:
    """The agent's weights are the evaluation's (marbles and cohesion alone here)."""
    state = abalone_positions(1, seed=7)[0]
    spec = {"name": "alphabeta", "depth": 1, "centre": 0, "cohesion": 0.5, "danger": 0}
    agent = make_agent(ABALONE, spec, random.Random(0))
    assert isinstance(agent, CompiledAlphaBetaAgent)
    values = dict(agent.root_values(state))
    want = minimax_root(state, 1, QUIESCENCE, evaluator(Weights(1, 0, 0.5, 0)), ejects)
    assert values == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("name", ["alphabeta", "expert"])
def test_the_ejection_that_wins_is_found(name: str) -> None:
    game = load_game("abalone", marbles_to_win=1)
    # E5-E6-E7 push E8 and E9 east: 3 against 2, E9 leaves the board.
    state = AbaloneState.from_cells(game, [["E5", "E6", "E7", "E1"], ["E8", "E9", "I5"]])
    agent = make_agent(game, name, random.Random(0))
    assert state.action_to_string(agent.step(state)) == "E5E7E"


def test_expert_leaves_no_marble_where_it_is_pushed_off_at_once() -> None:
    state = AbaloneState.from_cells(ABALONE, [["E5", "E6", "D5"], ["A3", "A4", "I9"]])
    move = make_agent(ABALONE, "expert", random.Random(0)).step(state)
    child = state.clone()
    child.apply(move)
    assert threatened(child.board(0), child.board(1)) == 0


def winning_capture_position() -> AlquerqueState:
    # a1xc3 takes one piece; e1xc1xa3 takes both and wins on the spot.
    return AlquerqueState.from_board(["a1", "e1"], ["b2", "d1"], game=ALQUERQUE)


@pytest.mark.parametrize(("white", "black", "winning"), WINNING_POSITIONS)
def test_the_agent_finds_the_win(white: list[str], black: list[str], winning: str) -> None:
    """A win on the spot, and forced wins in three plies (the positions of the Python
    search's tests, each with one winning first move)."""
    state = AlquerqueState.from_board(white, black, game=ALQUERQUE)
    for seed in range(3):
        agent = make_agent(ALQUERQUE, {"name": "alphabeta", "depth": 3}, random.Random(seed))
        assert isinstance(agent, CompiledAlphaBetaAgent)
        assert state.action_to_string(agent.step(state)) == winning
        assert agent.completed_depth <= 3
    assert not state.is_terminal()  # the agent searched a copy


def test_a_node_budget_makes_the_move_a_function_of_position_and_seed() -> None:
    state = random_positions(ALQUERQUE, 1, seed=8, max_plies=12)[0]
    runs = []
    for _ in range(2):
        agent = CompiledAlphaBetaAgent(ALQUERQUE, random.Random(5), depth=40, nodes=3_000)
        runs.append((agent.step(state), agent.completed_depth, agent.nodes_spent))
    assert runs[0] == runs[1]
    _, completed, spent = runs[0]
    assert 1 < completed < 40  # the budget, not the depth, ended the search
    assert spent == 3_001  # the node that overran it stopped the deepening at once


def test_a_deadline_stops_the_search_at_the_next_reading_of_the_clock() -> None:
    """A move time already over when the search starts: depth 1 always completes, then the
    clock, read every ``CHECK_EVERY`` nodes, stops the search at node ``CHECK_EVERY`` exactly
    as a budget of ``CHECK_EVERY - 1`` nodes would (same move, same completed depth)."""
    game = load_game("alveoles")
    state = game.new_initial_state(0)
    timed = CompiledAlphaBetaAgent(game, random.Random(0), depth=30)
    timed.set_move_time(1e-9)
    move = timed.step(state)
    budget = CompiledAlphaBetaAgent(
        game, random.Random(0), depth=30, nodes=search_negamax.CHECK_EVERY - 1
    )
    assert (move, timed.completed_depth) == (budget.step(state), budget.completed_depth)
    assert timed.nodes_spent == budget.nodes_spent == search_negamax.CHECK_EVERY
    assert 1 <= timed.completed_depth < 30
    timed.set_move_time(None)  # back to the budgets alone
    timed.depth = 2
    timed.step(state)
    assert timed.completed_depth == 2


@pytest.mark.parametrize("seconds", [-1.0, math.inf, math.nan])
def test_a_move_time_must_be_finite_and_not_negative(seconds: float) -> None:
    # No time at all (0.0) is a move time: the search completes its first depth only.
    agent = CompiledAlphaBetaAgent(ALQUERQUE, random.Random(0))
    with pytest.raises(ValueError, match="move time"):
        agent.set_move_time(seconds)


def test_root_values_are_exact_or_bounded_as_the_contract_says() -> None:
    state = random_positions(ALQUERQUE, 1, seed=21, max_plies=10)[0]
    want = minimax_root(state, 3, 0, alquerque_evaluate, alquerque_takes)
    agent = CompiledAlphaBetaAgent(ALQUERQUE, random.Random(2), depth=3, quiescence=0)
    assert dict(agent.root_values(state)) == pytest.approx(want, abs=1e-12)
    best = max(want.values())
    margin = 0.02
    bounded = dict(agent.root_values(state, margin))
    assert bounded.keys() == want.keys()
    for action, value in want.items():
        if value >= best - margin:
            assert bounded[action] == pytest.approx(value, abs=1e-12)
        else:
            assert value - 1e-12 <= bounded[action] < best - margin


def test_ties_are_broken_by_the_agents_generator() -> None:
    # Symmetric about the c column: each move has an equally good mirror image.
    state = AlquerqueState.from_board(["c1"], ["c5"], game=ALQUERQUE)
    picks = {
        state.action_to_string(
            CompiledAlphaBetaAgent(ALQUERQUE, random.Random(s), depth=2).step(state)
        )
        for s in range(20)
    }
    assert len(picks) == 2, picks


@pytest.mark.parametrize(
    ("name", "options"),
    [("alquerque", {}), ("alveoles", {}), ("abalone", {"move_limit": 80})],
)
def test_the_agent_plays_whole_matches_through_the_contract(
    name: str, options: dict[str, object]
) -> None:
    game = load_game(name, **options)
    spec = {"name": "alphabeta", "depth": 3, "nodes": 2_000}
    agents: list[Agent] = [make_agent(game, spec, agent_rng(7, s)) for s in range(2)]
    assert all(isinstance(a, CompiledAlphaBetaAgent) for a in agents)
    result = play_match(game, agents, seed=7)
    state = game.new_initial_state(7)
    for move in result.moves:  # each move is legal where it was played
        state.apply_string(move)
    assert state.is_terminal()
    assert result.returns == tuple(state.returns())
    again = [make_agent(game, spec, agent_rng(7, s)) for s in range(2)]
    assert play_match(game, again, seed=7).moves == result.moves


class _NoKernel(AlquerqueGame):
    game_type = dataclasses.replace(AlquerqueGame.game_type, short_name="no_kernel")


def test_backends_are_chosen_and_a_compiled_one_refused_without_a_kernel() -> None:
    assert isinstance(make_agent(ALQUERQUE, "alphabeta"), CompiledAlphaBetaAgent)
    python = make_agent(ALQUERQUE, {"name": "alphabeta", "backend": "python"})
    assert type(python).__name__ == "AlphaBetaAgent"
    game = _NoKernel(2, {"no_capture_limit": 50})
    assert type(make_alphabeta(game, random.Random(0))).__name__ == "AlphaBetaAgent"
    with pytest.raises(OptionError) as caught:
        make_alphabeta(game, random.Random(0), backend="compiled")
    assert caught.value.field == "backend"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"name": "alphabeta", "backend": "gpu"}, "agents[1].backend"),
        ({"name": "alphabeta", "depth": 0}, "agents[1].depth"),
        ({"name": "alphabeta", "depth": 65}, "agents[1].depth"),
        ({"name": "alphabeta", "nodes": -5}, "agents[1].nodes"),
        ({"name": "alphabeta", "nodes": "many"}, "agents[1].nodes"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(spec: dict[str, object], field: str) -> None:
    with pytest.raises(OptionError) as caught:
        normalise_agent_spec(ALQUERQUE, spec, field="agents[1]")
    assert caught.value.field == field


def test_abalone_expert_plays_three_players_on_the_compiled_mcts() -> None:
    game = load_game("abalone", players=3, move_limit=12)
    agents: list[Agent] = [
        make_agent(game, {"name": "expert", "iterations": 200}, agent_rng(3, s)) for s in range(3)
    ]
    assert all(type(a).__name__ == "CompiledMctsAgent" for a in agents)
    result = play_match(game, agents, seed=3)
    state = game.new_initial_state(3)
    for move in result.moves:
        state.apply_string(move)
    assert state.is_terminal() and result.plies == len(result.moves)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"name": "expert", "nodes": 5}, "agents[0].nodes"),
        ({"name": "expert", "iterations": 0}, "agents[0].iterations"),
        ({"name": "expert", "centre": -1}, "agents[0].centre"),
        ({"name": "alphabeta", "danger": "high"}, "agents[0].danger"),
        ({"name": "alphabeta", "backend": "fast"}, "agents[0].backend"),
    ],
)
def test_bad_abalone_parameters_are_refused_naming_the_field(
    spec: dict[str, object], field: str
) -> None:
    with pytest.raises(OptionError) as caught:
        normalise_agent_spec(ABALONE, spec, field="agents[0]")
    assert caught.value.field == field


def test_contempt_makes_a_draw_cost_the_searching_side() -> None:
    """Alquerque with a no-capture limit of 1: every quiet move draws at once."""
    game = load_game("alquerque", no_capture_limit=1)
    state = AlquerqueState.from_board(["c1"], ["c5"], game=game)
    assert state.legal_actions()
    for contempt, value in ((0.0, 0.0), (0.1, -0.1)):
        agent = CompiledAlphaBetaAgent(game, random.Random(0), depth=2, contempt=contempt)
        values = dict(agent.root_values(state))
        assert values.keys() == set(state.legal_actions())
        assert set(values.values()) == {value}
