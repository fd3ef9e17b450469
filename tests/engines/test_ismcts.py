"""The generic information-set search, ``ismcts`` (engines/agents/ismcts.py).

Most tests use ``guess`` (tests/hidden_guess.py): seat 0 guesses seat 1's hidden card, so the
best move is the hidden card and seat 1's actions depend on it. Expected values come from that
game's rules and from the definition of availability in Cowling, Powley and Whitehouse (2012),
applied to the trees the search leaves after each iteration; never from the search's code.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import site_packages
from hidden_guess import CARDS, PASS, GuessGame, GuessState
from scipy.stats import binomtest

from engines.agents.ismcts import IsMctsAgent, IsNode
from engines.agents.mcts import MctsAgent
from engines.core import OptionError, match_seed, play_match
from engines.registry import game_agent_types, load_game, make_agent

Tree = dict[tuple[int, ...], tuple[int, int]]
"""A search tree flattened: each node's actions from the root → (visits, availability)."""


def _flatten(node: IsNode, path: tuple[int, ...] = ()) -> Tree:
    out: Tree = {path: (node.visits, node.avail)}
    for action, child in node.children.items():
        out.update(_flatten(child, (*path, action)))
    return out


def _search(iterations: int, seed: int) -> tuple[Tree, list[int]]:
    game = GuessGame(2, {})
    agent = IsMctsAgent(game, random.Random(seed), iterations=iterations)
    root = agent.search(game.new_initial_state(0))
    return _flatten(root), game.redraws


def _legal_for_seat_zero_view(node: tuple[int, ...], card: int) -> list[int] | None:
    """The actions at ``node`` when seat 1 holds ``card`` (None: the game is over there)."""
    if not node:
        return list(range(CARDS))
    if len(node) == 1 and node[0] != card:
        return [card, PASS]
    return None


def test_availability_counts_the_iterations_a_child_was_legal_at_its_parent() -> None:
    # The search is seeded, so a search of k iterations is the first k iterations of a longer
    # one: the trees after each iteration show which nodes each iteration passed through.
    last = 60
    trees: list[Tree] = [{}]
    for k in range(1, last + 1):
        tree, redraws = _search(k, seed=11)
        assert len(redraws) == k
        trees.append(tree)
    _, cards = _search(last, seed=11)

    expected: dict[tuple[int, ...], int] = {}
    for k in range(1, last + 1):
        before, after = trees[k - 1], trees[k]
        passed = {n for n in after if after[n][0] > before.get(n, (0, 0))[0]}
        for parent in passed:
            if not any(n[:-1] == parent and len(n) == len(parent) + 1 for n in passed):
                continue  # the iteration stopped there: no choice, no availability
            legal = _legal_for_seat_zero_view(parent, cards[k - 1])
            assert legal is not None
            for action in legal:
                child = (*parent, action)
                if child in after:
                    expected[child] = expected.get(child, 0) + 1

    final = trees[last]
    assert final[()][0] == last
    assert {n: final[n][1] for n in final if n} == expected
    assert all(avail >= visits for node, (visits, avail) in final.items() if node)
    # Seat 1's card is legal only in the determinisations dealing it: its availability is
    # below the visits of the node it hangs from, which a count of parent visits would miss.
    below = [n for n in final if len(n) == 2 and n[1] != PASS and final[n][1] < final[n[:1]][0]]
    assert below


def test_the_choice_depends_on_what_the_seat_knows_alone() -> None:
    game = GuessGame(2, {})
    chosen = {
        card: IsMctsAgent(game, random.Random(5), iterations=300).step(GuessState(game, card))
        for card in range(CARDS)
    }
    assert len(set(chosen.values())) == 1, chosen
    # The hidden card does change the best move: a search reading the whole state finds it.
    seeing = {
        card: MctsAgent(game, random.Random(5), iterations=300).step(GuessState(game, card))
        for card in range(CARDS)
    }
    assert seeing == {0: 0, 1: 1, 2: 2}


def test_alhambra_positions_equal_for_the_seat_get_the_same_move() -> None:
    game = load_game("alhambra", 3)
    state = game.new_initial_state(21)
    rng = random.Random(3)
    for _ in range(12):
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player()
    other = state.resample_from_infostate(seat, random.Random(99))
    assert str(other) == str(state)  # what every seat sees
    assert state.key() != other.key()  # the bag's or the deck's order differs
    spec = {"name": "ismcts", "iterations": 30, "max_rollout_plies": 4}
    first = make_agent(game, spec, random.Random(8)).step(state)
    second = make_agent(game, spec, random.Random(8)).step(other)
    assert first == second


def test_a_match_replays_from_its_seed() -> None:
    game = load_game("alhambra", 2)
    spec = {"name": "ismcts", "iterations": 10, "max_rollout_plies": 4}
    results = []
    for _ in range(2):
        agents = [make_agent(game, spec, random.Random(4)), make_agent(game, "random")]
        results.append(play_match(game, agents, seed=match_seed(3, 0)))
    assert results[0].moves == results[1].moves
    assert results[0].returns == results[1].returns


def test_it_beats_random_on_alhambra() -> None:
    game = load_game("alhambra", 2)
    spec = {"name": "ismcts", "iterations": 20, "max_rollout_plies": 4}
    matches, wins = 10, 0
    for index in range(matches):
        seat = index % 2
        agents = [make_agent(game, "random", random.Random(index))] * 2
        agents[seat] = make_agent(game, spec, random.Random(1000 + index))
        result = play_match(game, agents, seed=match_seed(29, index))
        wins += result.returns[seat] == 1.0
    # Against a uniformly random player, an even game would give half the wins.
    assert binomtest(wins, matches, 0.5, alternative="greater").pvalue < 0.05, wins


def test_a_clocked_search_stops_when_the_moves_time_is_spent() -> None:
    game = GuessGame(2, {})
    agent = IsMctsAgent(game, random.Random(1), iterations=500)
    agent.set_move_time(0.0)
    assert agent.search(GuessState(game, 0)).visits == 1
    agent.set_move_time(None)
    assert agent.search(GuessState(game, 0)).visits == 500


def test_root_values_read_the_guesses_even_chances() -> None:
    game = GuessGame(2, {})
    agent = IsMctsAgent(game, random.Random(2), iterations=900)
    values = dict(agent.root_values(GuessState(game, 1)))
    assert sorted(values) == [0, 1, 2]
    # Each guess wins a third of the time: a share of 1/3 reads (1/3 - 1/2) * 2 = -1/3.
    assert all(abs(v + 1 / 3) < 0.2 for v in values.values()), values


@pytest.fixture
def guess_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with site_packages(tmp_path, monkeypatch) as site:
        site.install("hidden-guess", "0.1", {"guess": "hidden_guess"})
        yield


@pytest.mark.usefixtures("guess_installed")
def test_it_is_offered_to_games_with_hidden_information_only() -> None:
    assert "ismcts" in [a.name for a in game_agent_types("guess")]
    assert "ismcts" in [a.name for a in game_agent_types("alhambra")]
    assert "ismcts" not in [a.name for a in game_agent_types("alquerque")]
    agent = make_agent(load_game("guess"), {"name": "ismcts", "iterations": 50})
    assert isinstance(agent, IsMctsAgent) and agent.iterations == 50
    with pytest.raises(OptionError) as refused:
        make_agent(load_game("alquerque"), {"name": "ismcts"})
    assert refused.value.field == "agent.name"
    assert "cannot play" in str(refused.value)
