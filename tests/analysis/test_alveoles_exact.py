"""The players against the exact values (analysis/games/alveoles_exact.py): the optimal-move
share counted against a minimax written here, the perfect player's share, and the coverage of
the share's interval over games."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats as sps

from analysis.games.alveoles_exact import count_moves, exact_start_value, ratio_share
from engines.alveoles.rules import Alveoles, AlveolesState
from engines.core import play_match
from engines.registry import load_game, make_agent

PERFECT_BOARDS = ("2x2", "2x3", "3x2", "2x4", "4x2", "3x3")


def _game(board: str) -> Alveoles:
    game = load_game("alveoles", players=2, layout=f"classic-{board}", square_bonus="none")
    assert isinstance(game, Alveoles)
    return game


@pytest.mark.parametrize("board", PERFECT_BOARDS)
def test_perfect_plays_only_optimal_moves_and_reaches_the_start_value(board: str) -> None:
    game = _game(board)
    start = exact_start_value(game)
    for i in range(3):
        agents = [make_agent(game, "perfect", random.Random(10 * i + s)) for s in range(2)]
        result = play_match(game, agents, seed=i)
        moves, optimal, decisive, decisive_optimal = count_moves(game, list(result.moves), 2)
        assert moves.sum() == len(result.moves)
        assert (optimal == moves).all() and (decisive_optimal == decisive).all()
        # Two perfect players end exactly on the forced margin (seat 0 moves first).
        assert result.scores[0] - result.scores[1] == start


def _minimax_margin(game: Alveoles) -> Callable[[AlveolesState], float]:
    """Seat 0's final points minus seat 1's under best play from a rules state: seat 0
    maximises, seat 1 minimises, whoever the rules say moves next (written apart from the
    solver: over whole scores through the rules' own moves, not its mover-relative
    recurrence over groove sets)."""
    memo: dict[tuple[int, int, tuple[float, ...]], float] = {}

    def value(state: AlveolesState) -> float:
        if state.is_terminal():
            s = state.scores()
            return s[0] - s[1]
        key = (state.filled_mask, state.current_player(), tuple(state.scores()))
        if key not in memo:
            children = []
            for a in state.legal_actions():
                child = state.clone()
                child.apply_action(a)
                assert isinstance(child, AlveolesState)
                children.append(value(child))
            memo[key] = max(children) if state.current_player() == 0 else min(children)
        return memo[key]

    return value


def test_the_optimal_share_on_2x2_matches_a_brute_force_minimax() -> None:
    # A board whose values differ, so that which square one takes matters, not only how many.
    game = load_game("alveoles", players=2, layout=[[5, 1], [1, 20]], square_bonus="none")
    assert isinstance(game, Alveoles)
    value = _minimax_margin(game)
    total_moves = total_optimal = 0
    for i in range(12):
        agents = [make_agent(game, name, random.Random(i)) for name in ("random", "greedy")]
        played = list(play_match(game, agents, seed=i).moves)
        expected = np.zeros((2, 2))
        for ply in range(len(played)):
            state = game.new_initial_state(seed=0)
            for text in played[:ply]:
                state.apply_action(state.string_to_action(text))
            assert isinstance(state, AlveolesState)
            seat = state.current_player()
            sign = 1 if seat == 0 else -1
            options = {}
            for a in state.legal_actions():
                child = state.clone()
                child.apply_action(a)
                assert isinstance(child, AlveolesState)
                options[a] = sign * value(child)
            chosen = options[state.string_to_action(played[ply])]
            expected[0, seat] += 1
            expected[1, seat] += chosen == max(options.values())
        moves, optimal, _, _ = count_moves(game, played, 2)
        assert moves.tolist() == expected[0].tolist()
        assert optimal.tolist() == expected[1].tolist()
        total_moves += int(moves.sum())
        total_optimal += int(optimal.sum())
    # The check has teeth: random and greedy play go wrong somewhere in these games.
    assert 0 < total_optimal < total_moves
    start = game.new_initial_state(seed=0)
    assert isinstance(start, AlveolesState)
    assert exact_start_value(game) == value(start)


def _clustered_games(rng: np.random.Generator, games: int, share: float) -> tuple[np.ndarray, ...]:
    """Games of 8 to 30 moves whose own chance of an optimal move varies around ``share``
    (Beta with a concentration of 6), so moves of one game are correlated."""
    moves = rng.integers(8, 31, size=games).astype(float)
    p_game = rng.beta(6 * share, 6 * (1 - share), size=games)
    hits = rng.binomial(moves.astype(int), p_game).astype(float)
    return hits, moves


def test_the_share_interval_over_games_covers_a_known_share() -> None:
    rng = np.random.default_rng(20261206)
    share, reps, games = 0.8, 600, 40
    covered = covered_by_moves = 0
    for _ in range(reps):
        hits, moves = _clustered_games(rng, games, share)
        u = ratio_share(hits, moves, np.arange(games))
        covered += u.ci_low <= share <= u.ci_high
        # The same data with every move its own unit: what ignoring the games would claim.
        lo, hi = sps.binomtest(int(hits.sum()), int(moves.sum())).proportion_ci(method="exact")
        covered_by_moves += lo <= share <= hi
    coverage = covered / reps
    # 600 repetitions: a 95 % interval's coverage is within about ±2 points of 0.95.
    assert 0.925 <= coverage <= 0.975, coverage
    assert covered_by_moves / reps < 0.80


def test_a_perfect_shares_interval_still_has_width() -> None:
    moves = np.full(40, 17.0)
    u = ratio_share(moves, moves, np.arange(40))
    assert u.estimate == 1.0 and u.ci_high == 1.0
    # Forty games all optimal bound the share from below by what forty draws can: the exact
    # one-sided bound of 40 successes in 40 at 97.5 % (0.025 ** (1 / 40) = 0.912), made a
    # little wider by the t adjustment for 40 units.
    assert 0.85 < u.ci_low < 0.025 ** (1 / 40)
