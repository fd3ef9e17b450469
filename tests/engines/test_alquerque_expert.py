"""Alquerque's ``expert`` (``engines/compiled/levels_alquerque.py``): the compiled alpha-beta with
forced replies extended and compulsory captures in the quiescence step.

The search's values are checked against a plain full-width minimax written here over the Python
rules (every move, no table, no ordering, no cut-off) with the same rules: a move that is the
only legal one spends no depth; where depth runs out, a side that must capture searches its
captures (it may not stand on the evaluation) for so many plies more, and a side that need not
capture is evaluated, with the Python rules' default evaluation (``AlquerqueState.evaluate``).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from alquerque_wins import WINNING_POSITIONS

from engines.alquerque import kernel
from engines.alquerque.endgame import MAX_PIECES, search_table, table_size
from engines.alquerque.evaluation import TUNED_WEIGHTS
from engines.alquerque.rules import AlquerqueState
from engines.compiled import search_negamax
from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent
from engines.compiled.kernels import kernel_id
from engines.compiled.levels_alquerque import EXPERT_NODES, MASTER_NODES
from engines.core import Agent, OptionError, State, agent_rng, play_match
from engines.registry import game_agent_types, load_game, make_agent, normalise_agent_spec

WIN = 1000.0
MAX_DEPTH = 64
ALQUERQUE = load_game("alquerque")
NO_WEIGHTS = np.zeros(0, dtype=np.float64)
NO_ENDGAME = np.zeros(0, dtype=np.int8)


def minimax(
    state: AlquerqueState, depth: int, quiet: int, seat: int, ply: int, extend: bool = True
) -> float:
    """Value of ``state`` for ``seat`` (the seat to move, or the mover into a finished game);
    ``extend``: a forced reply spends no depth."""
    if state.is_terminal():
        share = state.returns()[seat]
        return WIN - ply if share > 0.5 else ply - WIN if share < 0.5 else 0.0
    mover = state.current_player()
    actions = state.legal_actions()
    if depth == 0 and (quiet == 0 or not state.has_capture):
        return state.evaluate(mover)
    best = -math.inf
    for action in actions:
        child = state.clone()
        child.apply(action)
        if depth > 0:
            single = extend and len(actions) == 1 and ply + depth < MAX_DEPTH
            deeper = (depth if single else depth - 1, quiet)
        else:
            deeper = (0, quiet - 1)
        if child.is_terminal() or child.current_player() == mover:
            value = minimax(child, *deeper, mover, ply + 1, extend)
        else:
            value = -minimax(child, *deeper, child.current_player(), ply + 1, extend)
        best = max(best, value)
    return best


def minimax_root(
    state: AlquerqueState, depth: int, quiet: int, extend: bool = True
) -> dict[int, float]:
    mover = state.current_player()
    values = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        if child.is_terminal() or child.current_player() == mover:
            values[action] = minimax(child, depth - 1, quiet, mover, 1, extend)
        else:
            values[action] = -minimax(child, depth - 1, quiet, child.current_player(), 1, extend)
    return values


def positions(count: int, seed: int, max_plies: int) -> list[AlquerqueState]:
    rng = random.Random(seed)
    found: list[AlquerqueState] = []
    while len(found) < count:
        state = ALQUERQUE.new_initial_state(rng.randrange(1 << 30))
        for _ in range(rng.randrange(max_plies)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            assert isinstance(state, AlquerqueState)
            found.append(state)
    return found


@pytest.mark.parametrize(("depth", "quiet"), [(1, 0), (2, 0), (1, 3), (2, 3), (3, 2)])
@pytest.mark.parametrize("extend", [True, False])
def test_values_are_the_plain_minimax_with_forced_replies_and_compulsory_captures(
    depth: int, quiet: int, extend: bool
) -> None:
    differs = 0  # positions where extending forced replies changes a value
    for index, state in enumerate(positions(10, seed=depth * 10 + quiet, max_plies=40)):
        want = minimax_root(state, depth, quiet, extend)
        moves, values, completed, _ = search_negamax.search(
            kernel_id("alquerque"), kernel.encode(state), depth, 0, quiet, NO_WEIGHTS, 0.0, index,
            math.inf, 14, 0.0, extend, True, NO_ENDGAME,
        )  # fmt: skip
        assert completed == depth
        assert dict(zip(moves.tolist(), values.tolist(), strict=True)) == pytest.approx(
            want, abs=1e-12
        )
        differs += want != pytest.approx(minimax_root(state, depth, quiet, not extend))
    # At depth 1 the root's children are at the horizon, where nothing is extended.
    assert (differs > 0) == (depth > 1)


@pytest.mark.parametrize(("white", "black", "winning"), WINNING_POSITIONS)
def test_the_expert_finds_the_win(white: list[str], black: list[str], winning: str) -> None:
    state = AlquerqueState.from_board(white, black, game=ALQUERQUE)
    for seed in range(3):
        agent = make_agent(ALQUERQUE, "expert", random.Random(seed))
        assert state.action_to_string(agent.step(state)) == winning


def test_the_expert_is_listed_for_alquerque_alone_with_its_budget() -> None:
    assert "expert" in [a.name for a in game_agent_types("alquerque")]
    agent = make_agent(ALQUERQUE, "expert", random.Random(0))
    assert isinstance(agent, CompiledAlphaBetaAgent)
    assert agent.nodes == EXPERT_NODES
    assert agent.extend_single and agent.compulsory
    assert agent.weights.tolist() == list(TUNED_WEIGHTS)
    # The solved endings, for the rules' no-capture limit only, loaded at the first search:
    # building the agent loads nothing.
    assert agent.endgame_loader is search_table and agent.endgame is None
    agent.step(ALQUERQUE.new_initial_state())
    assert agent.endgame is not None and agent.endgame.shape == (table_size(MAX_PIECES),)
    shorter = load_game("alquerque", no_capture_limit=30)
    assert make_agent(shorter, "expert", random.Random(0)).endgame_loader is None
    # Les Alvéoles' expert is another agent (a Monte Carlo search).
    assert not isinstance(make_agent(load_game("alveoles"), "expert"), CompiledAlphaBetaAgent)


def test_master_is_the_expert_search_with_four_times_the_nodes() -> None:
    # Its golden replay would be the expert's: at the budgets where the seeds still break ties
    # in 30 plies the two play the same game, so what makes it another level is held here.
    assert MASTER_NODES == 4 * EXPERT_NODES
    assert "master" in [a.name for a in game_agent_types("alquerque")]
    expert, master = (
        make_agent(ALQUERQUE, name, random.Random(0)) for name in ("expert", "master")
    )
    assert isinstance(master, CompiledAlphaBetaAgent)
    assert master.nodes == MASTER_NODES
    same = ("depth", "quiescence", "extend_single", "compulsory", "contempt", "endgame_loader")
    assert [getattr(master, name) for name in same] == [getattr(expert, name) for name in same]
    assert master.weights.tolist() == expert.weights.tolist() == list(TUNED_WEIGHTS)
    budget = {"name": "master", "nodes": 2_000}
    assert (
        play_match(
            ALQUERQUE, [make_agent(ALQUERQUE, budget, agent_rng(5, s)) for s in range(2)], seed=5
        ).moves
        == play_match(
            ALQUERQUE,
            [
                make_agent(ALQUERQUE, {**budget, "name": "expert"}, agent_rng(5, s))
                for s in range(2)
            ],
            seed=5,
        ).moves
    )


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"name": "master", "nodes": 5}, "agents[0].nodes"),
        ({"name": "expert", "nodes": 5}, "agents[0].nodes"),
        ({"name": "expert", "depth": 0}, "agents[0].depth"),
        ({"name": "expert", "depth": "deep"}, "agents[0].depth"),
        ({"name": "expert", "iterations": 100}, "agents[0]"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(spec: dict[str, object], field: str) -> None:
    with pytest.raises(OptionError) as caught:
        normalise_agent_spec(ALQUERQUE, spec, field="agents[0]")
    assert caught.value.field.startswith(field)


def test_a_match_replays_from_its_seeds_and_depends_on_them() -> None:
    spec = {"name": "expert", "nodes": 2_000}

    def play(agent_seed: int) -> list[str]:
        agents: list[Agent] = [
            make_agent(ALQUERQUE, spec, agent_rng(agent_seed, s)) for s in range(2)
        ]
        return list(play_match(ALQUERQUE, agents, seed=11).moves)

    first = play(11)
    state: State = ALQUERQUE.new_initial_state(11)
    for move in first:  # each move legal where it was played
        state.apply_string(move)
    assert state.is_terminal()
    assert play(11) == first
    assert play(12) != first
