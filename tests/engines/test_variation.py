"""Variation in the engines: random and book openings per round, and player noise drawn from
the agents' own root values, checked against independent searches and SciPy."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from scipy import special, stats

from engines.abalone.agents import evaluator
from engines.abalone.heuristics import DEFAULT_WEIGHTS
from engines.core import Action, Game, OptionError, Seat, State, derive_seed, match_seed
from engines.registry import load_game, make_agent
from engines.seating import opening_round
from engines.variation import (
    BOOK_SOURCE,
    NOISE,
    OPENINGS,
    RANDOM_SOURCE,
    Variation,
    match_variation,
    near_best,
    parse_variation,
    vary_agents,
)

AB_WIN = 1000.0  # the generic alpha-beta's value of a won game at the root
ABALONE_WIN = 100.0  # Abalone's own search's


def played(game: Game, plies: int, seed: int) -> State:
    """A position after ``plies`` uniformly random moves."""
    rng = random.Random(seed)
    state = game.new_initial_state(0)
    for _ in range(plies):
        state.apply(rng.choice(state.legal_actions()))
    return state


# --------------------------------------------------------------------------- references


def minimax_values(state: State, depth: int) -> dict[Action, float]:
    """Root values of the generic alpha-beta as its docstring defines them, by plain minimax
    with no pruning and no table: the root seat maximises, the other minimises; a single legal
    move does not use up depth (within 3 × depth plies); ``evaluate`` at the horizon, a won
    game ``1000 - ply``."""
    seat = state.current_player()

    def value(node: State, left: int, ply: int) -> float:
        if node.is_terminal():
            outcome = node.evaluate(seat)
            return AB_WIN - ply if outcome > 0 else ply - AB_WIN if outcome < 0 else 0.0
        actions = node.legal_actions()
        forced = len(actions) == 1 and ply < 3 * depth
        if left <= 0 and not forced:
            return node.evaluate(seat)
        below = left if forced else left - 1
        found = [value(child(node, a), below, ply + 1) for a in actions]
        return max(found) if node.current_player() == seat else min(found)

    return {a: value(child(state, a), depth - 1, 1) for a in state.legal_actions()}


def negamax_values(
    state: State, depth: int, judge: Callable[[State, Seat], float]
) -> dict[Action, float]:
    """Root values of Abalone's own search by plain negamax: ``judge`` at the horizon, a won
    game ``100 - ply``."""

    def value(node: State, seat: Seat, left: int, ply: int) -> float:
        if node.is_terminal():
            share = node.returns()[seat]
            return ABALONE_WIN - ply if share > 0.5 else ply - ABALONE_WIN if share < 0.5 else 0
        if left <= 0:
            return judge(node, seat)
        moves = node.legal_actions()
        return max(-value(child(node, a), 1 - seat, left - 1, ply + 1) for a in moves)

    seat = state.current_player()
    return {a: -value(child(state, a), 1 - seat, depth - 1, 1) for a in state.legal_actions()}


def child(state: State, action: Action) -> State:
    after = state.clone()
    after.apply(action)
    return after


# --------------------------------------------------------------------------- root values


def check_root_values(
    agent: object, state: State, reference: dict[Action, float], margin: float
) -> None:
    exact = dict(agent.root_values(state))  # type: ignore[attr-defined]
    assert exact.keys() == reference.keys()
    for action, value in reference.items():
        assert exact[action] == pytest.approx(value, abs=1e-9)
    best = max(reference.values())
    bounded = dict(agent.root_values(state, margin))  # type: ignore[attr-defined]
    assert bounded.keys() == reference.keys()
    for action, value in reference.items():
        if value >= best - margin:
            assert bounded[action] == pytest.approx(value, abs=1e-9)
        else:  # an upper bound, itself out of the margin
            assert value - 1e-9 <= bounded[action] < best - margin


@pytest.mark.parametrize("plies", [0, 5, 12])
def test_alphabeta_root_values_are_a_full_width_minimax(plies: int) -> None:
    game = load_game("abalone")
    state = played(game, plies, seed=plies)
    spec = {"name": "alphabeta", "depth": 2, "backend": "python"}  # the compiled one: its tests
    agent = make_agent(game, spec, random.Random(1))
    check_root_values(agent, state, minimax_values(state, 2), margin=0.01)


@pytest.mark.parametrize("plies", [0, 3, 8])
def test_alphabeta_root_values_follow_forced_moves_as_the_search_does(plies: int) -> None:
    game = load_game("alquerque")
    state = played(game, plies, seed=10 + plies)
    agent = make_agent(game, {"name": "medium", "depth": 2}, random.Random(1))
    check_root_values(agent, state, minimax_values(state, 2), margin=0.05)


@pytest.mark.parametrize("plies", [0, 7])
def test_abalone_search_root_values_are_a_full_width_negamax(plies: int) -> None:
    game = load_game("abalone")
    state = played(game, plies, seed=20 + plies)
    agent = make_agent(game, {"name": "hard", "nodes": 1_000_000}, random.Random(1))
    reference = negamax_values(state, 2, evaluator(DEFAULT_WEIGHTS))
    check_root_values(agent, state, reference, margin=0.01)


def test_mcts_root_values_are_mean_results_of_the_well_searched_moves() -> None:
    game = load_game("alquerque")
    state = played(game, 6, seed=3)
    spec = {"name": "mcts", "iterations": 300, "backend": "python"}
    values = dict(make_agent(game, spec, random.Random(4)).root_values(state))
    # The same search, seeded alike, read node by node.
    root = make_agent(game, spec, random.Random(4)).search(state)
    most = max(c.visits for c in root.children)
    kept = {c.action: 2 * c.total / c.visits - 1 for c in root.children if c.visits >= most / 10}
    assert values.keys() == kept.keys() and set(values) <= set(state.legal_actions())
    for action, value in kept.items():
        assert values[action] == pytest.approx(value)
    assert sum(c.visits for c in root.children) == 300  # every iteration passes one root move


def test_the_compiled_search_lists_its_root_moves_and_picks_the_most_visited() -> None:
    from engines.compiled import dispatch, search_parts, search_uct
    from engines.compiled.kernels import kernel_id

    game = load_game("alquerque")
    state = played(game, 6, seed=3)
    game_id = kernel_id("alquerque")
    encode = dispatch.KERNEL_MODULES[game_id].encode
    args = (game_id, encode(state), 2, 500, 1.4, search_parts.GAME_ROLLOUT, 400, 77, 0.0)
    moves, visits, totals = search_uct.root_moves(*args)
    assert sorted(moves.tolist()) == sorted(state.legal_actions())
    assert int(visits.sum()) == 500
    order = np.lexsort((-totals, -visits))  # most visited, then the higher total
    assert search_uct.search(*args) == moves[order[0]]
    agent = make_agent(game, "mcts", random.Random(5))
    assert all(a in state.legal_actions() and -1 <= v <= 1 for a, v in agent.root_values(state))


def test_alhambra_mcts_values_its_root_candidates() -> None:
    game = load_game("alhambra", players=3)
    state = game.new_initial_state(8)
    agent = make_agent(game, {"name": "mcts", "iterations": 60}, random.Random(2))
    values = agent.root_values(state)
    assert values and all(a in state.legal_actions() and -1 <= v <= 1 for a, v in values)


# --------------------------------------------------------------------------- noise


def test_noise_plays_only_moves_within_the_margin_and_all_of_them() -> None:
    game = load_game("abalone")
    state = played(game, 4, seed=9)
    reference = minimax_values(state, 2)
    best = max(reference.values())
    margin = 0.01
    near = {a for a, v in reference.items() if v >= best - margin}
    assert 1 < len(near) < len(reference)  # the position tests something
    noise = Variation(NOISE, plies=10, margin=margin)
    varied = match_variation(noise, game, 5, 1, 0)
    chosen = Counter()
    for seed in range(300):
        agent = make_agent(game, {"name": "alphabeta", "depth": 2}, random.Random(seed))
        player = vary_agents([agent, agent], varied, seed)[0]
        chosen[player.step(state)] += 1
    assert set(chosen) == near
    # Uniform among them: a chi-square test against equal counts.
    assert stats.chisquare(list(chosen.values())).pvalue > 1e-3


def test_a_temperature_draws_with_softmax_weights() -> None:
    values = [(10, 0.3), (11, 0.25), (12, 0.1), (13, -0.2)]
    rng = random.Random(6)
    draws = Counter(near_best(values, rng, temperature=0.1) for _ in range(20_000))
    expected = special.softmax(np.array([v for _, v in values]) / 0.1) * 20_000
    observed = [draws[a] for a, _ in values]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_noise_leaves_players_without_root_values_and_later_plies_alone() -> None:
    game = load_game("alquerque")
    easy = [make_agent(game, "easy", random.Random(1)) for _ in range(2)]
    plain = [make_agent(game, "easy", random.Random(1)) for _ in range(2)]
    varied = match_variation(Variation(NOISE, plies=10, margin=0.05), game, 5, 1, 0)
    wrapped = vary_agents(easy, varied, 0)
    state = game.new_initial_state(0)
    while not state.is_terminal():
        seat = state.current_player()
        move = wrapped[seat].step(state)
        assert move == plain[seat].step(state)
        state.apply(move)


# --------------------------------------------------------------------------- openings


@pytest.mark.parametrize("name", ["abalone", "alveoles"])
def test_random_openings_are_uniform_over_the_legal_first_moves(name: str) -> None:
    game = load_game(name)
    legal = game.new_initial_state(0).legal_actions()
    rounds = 30 * len(legal)
    openings = Variation(OPENINGS, plies=2, source=RANDOM_SOURCE)
    counts = Counter(match_variation(openings, game, 41, 2, 2 * r).script[0] for r in range(rounds))
    assert set(counts) <= set(legal)
    result = stats.chisquare([counts[a] for a in legal])
    assert result.pvalue > 1e-3


def test_every_match_of_a_round_shares_its_opening_and_rounds_differ() -> None:
    game = load_game("alveoles", players=3)
    size = opening_round(3, "balanced")
    assert size == 6
    openings = Variation(OPENINGS, plies=4, source=RANDOM_SOURCE)
    rounds = []
    for r in range(40):
        varied = [match_variation(openings, game, 8, size, r * size + k) for k in range(size)]
        assert len({v.script for v in varied}) == 1 and len(varied[0].script) == 4
        # No chance in the game: each match keeps its own seed, which only its agents use.
        assert [v.game_seed for v in varied] == [match_seed(8, r * size + k) for k in range(6)]
        rounds.append(varied[0].script)
    assert len(set(rounds)) == 40


def test_a_round_of_a_game_with_chance_shares_its_deal() -> None:
    game = load_game("alhambra", players=2)
    openings = Variation(OPENINGS, plies=2, source=RANDOM_SOURCE)
    first, second, third = (match_variation(openings, game, 3, 2, i) for i in (0, 1, 2))
    assert first.game_seed == second.game_seed != third.game_seed
    assert first.script == second.script
    assert first.game_seed == derive_seed("deal", 3, 0) != match_seed(3, 0)
    key = first.key_moves(["take a", "take b", "c"], 10)
    assert key == (f"#deal {first.game_seed}", "take a", "take b")


def test_a_book_is_checked_move_by_move_and_played_line_after_line() -> None:
    game = load_game("alquerque")
    book = [["c2-c3", "c4xc2"], ["B2-C3", "d4xb2"], ["d2-c3", "b4xd2"]]
    variation = parse_variation({"kind": "openings", "book": book}, game)
    assert variation.source == BOOK_SOURCE and variation.plies == 2
    assert variation.book[1] == ("b2-c3", "d4xb2")  # canonical notation
    assert len(variation.record()["book_digest"]) == 32
    lines = [match_variation(variation, game, 12, 2, 2 * r).script for r in range(6)]
    texts = [tuple(replay_texts(game, line)) for line in lines]
    # Every line once in the first three rounds, then again in the next three.
    assert set(texts[:3]) == set(variation.book) == set(texts[3:])


def replay_texts(game: Game, actions: tuple[Action, ...]) -> list[str]:
    state = game.new_initial_state(0)
    out = []
    for action in actions:
        out.append(state.action_to_string(action))
        state.apply_action(action)
    return out


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("openings", "variation"),
        ({"kind": "shuffle"}, "variation.kind"),
        ({"kind": "openings", "plies": 21}, "variation.plies"),
        ({"kind": "openings", "plies": -1}, "variation.plies"),
        ({"kind": "openings", "plies": "4"}, "variation.plies"),
        ({"kind": "openings", "plies": True}, "variation.plies"),
        ({"kind": "openings", "source": "engine"}, "variation.source"),
        ({"kind": "openings", "margin": 0.1}, "variation.margin"),
        ({"kind": "noise", "margin": float("nan")}, "variation.margin"),
        ({"kind": "noise", "margin": float("inf")}, "variation.margin"),
        ({"kind": "noise", "margin": -0.1}, "variation.margin"),
        ({"kind": "noise", "temperature": 0}, "variation.temperature"),
        ({"kind": "noise", "margin": 0.1, "temperature": 0.1}, "variation.temperature"),
        ({"kind": "none", "plies": 3}, "variation.plies"),
        ({"kind": "openings", "book": []}, "variation.book"),
        ({"kind": "openings", "book": [["c2-c3"], ["a1-a2"]]}, "variation.book[1]"),
        (
            {"kind": "openings", "book": [["c2-c3", "c4xc2"], ["c2-c3"]], "plies": 2},
            "variation.book[1]",
        ),
        ({"kind": "openings", "book": [[1, 2]]}, "variation.book[0]"),
        ({"kind": "openings", "book": [["c2-c3"], []]}, "variation.book[1]"),
        ({"kind": "openings", "book": [["c2-c3", "zz9"]]}, "variation.book[0]"),
    ],
)
def test_bad_variations_are_refused_naming_the_field(raw: object, field: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse_variation(raw, load_game("alquerque"))
    assert caught.value.field == field


def test_a_book_is_refused_for_a_game_with_chance() -> None:
    with pytest.raises(OptionError) as caught:
        parse_variation({"kind": "openings", "book": [["take denar:3"]]}, load_game("alhambra"))
    assert caught.value.field == "variation.book" and "chance" in str(caught.value)
