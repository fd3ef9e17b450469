"""Alhambra's greedy-weighted playout move (the kernel's ``greedy_rollout_action``, ``expert``'s
``playout`` ``greedy``): always legal by the rules, a function of the generator's state alone,
and drawn with weight ``exp(quick_score / τ)`` where the scores are the Python rules' own
``policy.quick_score``."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from engines.alhambra import kernel as kal
from engines.alhambra import policy
from engines.alhambra.rules import AlhambraState
from engines.alhambra.table import ACTION
from engines.compiled import dispatch, search_ismcts
from engines.compiled.agent_ismcts import CompiledIsMctsAgent
from engines.core import play_match
from engines.errors import OptionError
from engines.kernel_rng import seed_rng
from engines.registry import load_game, make_agent

DRAWS = 20_000
"""Draws at one position in the frequency test."""


def _played(players: int, seed: int, plies: int) -> AlhambraState:
    """The position after up to ``plies`` plies of the rules' playout moves from deal ``seed``
    (fewer if the game ends first)."""
    state = load_game("alhambra", players=players).new_initial_state(seed)
    rng = random.Random(seed)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply(state.rollout_action(rng))
    return state


def _generator(seed: int) -> np.ndarray:
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, seed)
    return rng


@settings(max_examples=25, deadline=None)
@given(
    players=st.integers(2, 6),
    deal=st.integers(0, 10_000),
    plies=st.integers(0, 160),
    seed=st.integers(0, 2**62),
)
def test_the_greedy_playout_move_is_legal_by_the_rules(
    players: int, deal: int, plies: int, seed: int
) -> None:
    state = _played(players, deal, plies)
    if state.is_terminal():
        return
    legal = set(state.legal_actions())
    position = kal.encode(state)
    before = position.copy()
    rng = _generator(seed)
    for _ in range(30):
        assert kal.greedy_rollout_action(position, rng) in legal
    assert position.tolist() == before.tolist()  # the move is chosen, not played


def test_the_greedy_playout_move_depends_on_the_generator_state_alone() -> None:
    state = _played(3, 11, 40)
    position = kal.encode(state)
    first, second = _generator(5), _generator(5)
    picks = [kal.greedy_rollout_action(position, first) for _ in range(200)]
    assert picks == [kal.greedy_rollout_action(position, second) for _ in range(200)]
    assert first.tolist() == second.tolist()
    other = _generator(6)
    assert picks != [kal.greedy_rollout_action(position, other) for _ in range(200)]
    assert len(set(picks)) > 1  # a draw, not the single best move every time


def test_the_search_reaches_the_kernel_move_through_its_dispatch() -> None:
    position = kal.encode(_played(4, 8, 70))
    ours, theirs = _generator(3), _generator(3)
    for _ in range(50):
        assert dispatch.greedy_rollout_action(
            dispatch.ALHAMBRA, position, ours
        ) == kal.greedy_rollout_action(position, theirs)


def _position(placing: bool) -> AlhambraState:
    """A position of real play whose moves spread over at least three quick-score values:
    a seat placing a bought tile, or one that may buy and take."""
    for plies in range(20, 200):
        state = _played(3, 3, plies)
        if state.is_terminal() or (state.phase != ACTION) != placing:
            continue
        legal = state.legal_actions()
        scores = {policy.quick_score(state, a) for a in legal}
        kinds = {state.action_to_string(a).split()[0] for a in legal}
        if len(scores) >= 3 and (placing or {"buy", "take"} <= kinds):
            return state
    raise AssertionError("no such position in this game")


@pytest.mark.parametrize("placing", [False, True])
def test_moves_are_drawn_in_proportion_to_exp_of_the_rules_quick_score(placing: bool) -> None:
    """Expected frequencies from the Python rules' scores and the softmax with the kernel's
    temperature: a chi-square goodness-of-fit over the score classes, and a better class
    drawn more often per move than a worse one."""
    state = _position(placing)
    legal = state.legal_actions()
    score = {a: policy.quick_score(state, a) for a in legal}
    weight = {a: math.exp(score[a] / kal.GREEDY_TEMPERATURE) for a in legal}
    total = sum(weight.values())
    position = kal.encode(state)
    rng = _generator(2024)
    drawn = Counter(kal.greedy_rollout_action(position, rng) for _ in range(DRAWS))
    assert set(drawn) <= set(legal)
    classes = sorted(set(score.values()), reverse=True)
    members = {s: [a for a in legal if score[a] == s] for s in classes}
    expected = [DRAWS * sum(weight[a] for a in members[s]) / total for s in classes]
    observed = [sum(drawn[a] for a in members[s]) for s in classes]
    # Classes too rare for the chi-square approximation are pooled into one cell.
    big = [i for i, e in enumerate(expected) if e >= 5]
    cells_expected = [expected[i] for i in big]
    cells_observed = [observed[i] for i in big]
    if len(big) < len(classes):
        cells_expected.append(DRAWS - sum(cells_expected))
        cells_observed.append(DRAWS - sum(cells_observed))
    assert len(cells_expected) >= 2
    assert stats.chisquare(cells_observed, cells_expected).pvalue > 1e-3
    per_move = [observed[i] / len(members[classes[i]]) for i in big if expected[i] >= 200]
    assert len(per_move) >= 2
    assert per_move == sorted(per_move, reverse=True)


def test_expert_takes_the_playout_option() -> None:
    game = load_game("alhambra", players=3)
    rules = make_agent(game, "expert")
    greedy = make_agent(game, {"name": "expert", "playout": "greedy"})
    assert isinstance(rules, CompiledIsMctsAgent) and isinstance(greedy, CompiledIsMctsAgent)
    assert rules.rollout != greedy.rollout == search_ismcts.GREEDY_ROLLOUT
    with pytest.raises(OptionError) as refused:
        make_agent(game, {"name": "expert", "playout": "random"})
    assert refused.value.field == "agent.playout"


def test_an_expert_with_greedy_playouts_plays_a_legal_game_and_replays() -> None:
    game = load_game("alhambra", players=3)
    spec = {"name": "expert", "iterations": 30, "playout": "greedy"}

    def match() -> tuple[str, ...]:
        agents = [
            make_agent(game, spec, random.Random(1)),
            make_agent(game, "greedy", random.Random(2)),
            make_agent(game, "greedy", random.Random(3)),
        ]
        return play_match(game, agents, seed=7).moves  # play_match checks every move

    first = match()
    assert len(first) > 50
    assert match() == first
