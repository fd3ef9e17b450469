"""Alhambra's compiled information-set search: its re-draw of the hidden order matches the
rules' one, it never reads the true order, and the agents built on it play legal games."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from alhambra_views import midgame, other_hidden_order, scoring_cards_moved
from scipy import stats

from engines.alhambra import kernel as kal
from engines.alhambra import kernel_layout as lay
from engines.alhambra.ismcts import IsMctsAgent
from engines.alhambra.money import SCORING_1, SCORING_2
from engines.alhambra.rules import AlhambraState
from engines.compiled import dispatch, search_ismcts, search_uct
from engines.compiled.agent_ismcts import CompiledIsMctsAgent
from engines.compiled.agent_mcts import CompiledMctsAgent
from engines.core import play_match
from engines.kernel_rng import seed_rng
from engines.registry import load_game, make_agent

DRAWS = 3000
"""Re-draws per side in the chi-square tests."""


def _root(state: AlhambraState) -> tuple[np.ndarray, np.ndarray]:
    moves = state.legal_actions()[:6]
    return np.array(moves, dtype=np.int64), np.linspace(1.0, 0.0, len(moves))


def _search(state: AlhambraState, seed: int) -> tuple[list[int], list[float]]:
    moves, bias = _root(state)
    players = state.game.num_players
    _, visits, totals = search_ismcts.root_moves(
        dispatch.ALHAMBRA,
        kal.encode(state),
        players,
        300,
        0.7,
        10,
        6,
        moves,
        bias,
        1.0,
        1,
        seed,
        0.0,
    )
    return visits.tolist(), totals.tolist()


@pytest.mark.parametrize("players", [2, 4])
def test_the_search_gives_the_same_answer_whatever_the_true_order(players: int) -> None:
    """The search is handed the true order: two positions of one information set, differing
    only in it, get the same visits and totals from the same seed. As a control, the
    perfect-information UCT search, which plays the true order, tells them apart: a search
    that read it would fail here."""
    for seed in range(2):
        state = midgame(players, seed, 30 + 11 * seed)
        other = other_hidden_order(state, 50 + seed)
        assert other.bag != state.bag and scoring_cards_moved(state, other)
        assert other.legal_actions() == state.legal_actions()
        assert _search(state, seed) == _search(other, seed)
        peeking = [
            search_uct.root_moves(
                dispatch.ALHAMBRA, kal.encode(s), players, 300, 1.4, 1, 60, seed, 0.0
            )
            for s in (state, other)
        ]
        assert peeking[0][2].tolist() != peeking[1][2].tolist()


def test_mcts_and_expert_choose_alike_on_two_true_orders() -> None:
    game = load_game("alhambra", players=3)
    state = midgame(3, 4, 45)
    other = other_hidden_order(state, 9)
    for spec in ({"name": "mcts", "iterations": 200}, {"name": "expert", "iterations": 200}):
        first = make_agent(game, spec, random.Random(1))
        second = make_agent(game, spec, random.Random(1))
        assert isinstance(first, CompiledIsMctsAgent)
        assert first.step(state) == second.step(other)


def _kernel_positions(state: AlhambraState, draws: int) -> tuple[list[int], list[int], list[int]]:
    """After each compiled re-draw: the place of scoring cards 1 and 2 within their piles
    (counted from the pile's start), and the tile on top of the bag."""
    base = kal.encode(state)
    rng = np.zeros(1, dtype=np.uint64)
    seed_rng(rng, 77)
    first, second, top = [], [], []
    for _ in range(draws):
        view = base.copy()
        kal.redraw(view, rng)
        deck = view[lay.DECK : lay.DECK + view[lay.DECK_N]].tolist()
        first.append(deck.index(SCORING_1) - state.ranges[SCORING_1][0])
        second.append(deck.index(SCORING_2) - state.ranges[SCORING_2][0])
        top.append(int(view[lay.BAG + view[lay.BAG_N] - 1]))
        assert sorted(deck) == sorted(state.deck)
        assert sorted(view[lay.BAG : lay.BAG + view[lay.BAG_N]].tolist()) == sorted(state.bag)
    return first, second, top


def _rules_positions(state: AlhambraState, draws: int) -> tuple[list[int], list[int], list[int]]:
    rng = random.Random(78)
    first, second, top = [], [], []
    for _ in range(draws):
        view = state.resample_from_infostate(state.current_player(), rng)
        first.append(view.deck.index(SCORING_1) - state.ranges[SCORING_1][0])
        second.append(view.deck.index(SCORING_2) - state.ranges[SCORING_2][0])
        top.append(view.bag[-1])
    return first, second, top


def _same_distribution(a: list[int], b: list[int]) -> float:
    keys = sorted(set(a) | set(b))
    ca, cb = Counter(a), Counter(b)
    table = np.array([[ca[k] for k in keys], [cb[k] for k in keys]])
    return float(stats.chi2_contingency(table).pvalue)


def test_the_compiled_redraw_matches_the_rules_one() -> None:
    """Scoring cards anywhere in what is left of their piles, with the rules' frequencies
    (a chi-square test of homogeneity), and the bag's top tile likewise."""
    state = midgame(3, 2, 6)
    assert set(state.ranges) == {SCORING_1, SCORING_2}
    kernel = _kernel_positions(state, DRAWS)
    rules = _rules_positions(state, DRAWS)
    for ours, theirs in zip(kernel, rules, strict=True):
        assert set(ours) == set(theirs)
        assert _same_distribution(ours, theirs) > 1e-3
    lo, hi = state.ranges[SCORING_1]
    assert set(kernel[0]) == set(range(min(hi, len(state.deck)) - lo))


def test_backends_and_levels() -> None:
    game = load_game("alhambra", players=3)
    assert isinstance(make_agent(game, "mcts"), CompiledIsMctsAgent)
    assert isinstance(
        make_agent(game, {"name": "mcts", "backend": "compiled"}), CompiledIsMctsAgent
    )
    assert isinstance(make_agent(game, {"name": "mcts", "backend": "python"}), IsMctsAgent)
    assert isinstance(make_agent(game, "expert"), CompiledIsMctsAgent)
    with pytest.raises(ValueError, match="hides information"):
        CompiledMctsAgent(game, random.Random(0))


def test_expert_plays_a_whole_game_and_replays_from_its_seed() -> None:
    game = load_game("alhambra", players=2, missed_scoring="before_final")
    spec = {"name": "expert", "iterations": 40}

    def match() -> tuple[str, ...]:
        agents = [make_agent(game, spec, random.Random(1)), make_agent(game, "greedy")]
        return play_match(game, agents, seed=5).moves  # play_match checks every move

    first = match()
    assert len(first) > 50
    assert match() == first
