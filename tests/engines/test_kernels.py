"""The compiled kernels against the Python rules, ply by ply, and the facts of docs/rules/.

Random games are played through the Python rules (the reference) and the kernel side by side;
before every placement and at the end both must agree on the legal set, the seat to move, the
terminal flag, the returns and the points. The first kernel call compiles (or loads numba's
cache), which is most of this module's time in a fresh clone.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from repo_paths import DATA

from engines.alquerque import kernel as alq
from engines.alveoles import kernel as alv
from engines.alveoles.layouts import CELLS
from engines.alveoles.scoring import DISJOINT, OVERLAPPING, score_owners
from engines.registry import load_game

GAMES = 2000
"""Random games per game and player count."""
GOLDEN = DATA / "alveoles_golden.json"


def _random_layout(rng: random.Random) -> list[int]:
    return [rng.choice((1, 1, 1, 2, 5, 10, 20, 50, 999_999)) for _ in range(CELLS)]


def _sorted_legal(kernel_legal: np.ndarray, n: int) -> list[int]:
    return sorted(kernel_legal[:n].tolist())


@pytest.mark.parametrize("players", [2, 3, 4])
def test_alveoles_kernel_equals_rules_on_every_ply(players: int) -> None:
    rng = random.Random(1000 + players)
    buf = np.empty(alv.MAX_ACTIONS, dtype=np.int64)
    returns = np.zeros(4)
    totals = np.zeros(4, dtype=np.int64)
    for index in range(GAMES):
        # Every other game on a random layout; bonus rules alternate.
        layout = "classic" if index % 2 == 0 else _random_layout(rng)
        bonus = OVERLAPPING if index % 4 < 2 else DISJOINT
        game = load_game("alveoles", players=players, layout=layout, square_bonus=bonus)
        state = game.new_initial_state()
        ks = alv.new_state(game.values, players, bonus)
        while True:
            assert alv.current_player(ks) == state.current_player()
            n = alv.legal_actions(ks, buf)
            legal = state.legal_actions()
            assert _sorted_legal(buf, n) == legal
            if not legal:
                break
            if len(state.forced) > 1 and index % 10 == 0:
                seat = state.current_player()
                assert alv.evaluate(ks, seat) == pytest.approx(state.evaluate(seat))
            action = rng.choice(legal)
            state.apply(action)
            alv.apply(ks, action)
        assert state.is_terminal()
        alv.returns(ks, returns)
        alv.scores(ks, totals)
        assert returns[:players].tolist() == state.returns()
        assert totals[:players].tolist() == [int(s) for s in state.scores()]
        owners = "".join("." if o < 0 else str(o) for o in ks[alv.OWNER : alv.OWNER + CELLS])
        assert owners == state.owners_string()


def test_alveoles_kernel_encodes_a_position_in_play() -> None:
    game = load_game("alveoles", players=3)
    state = game.new_initial_state()
    rng = random.Random(5)
    buf = np.empty(alv.MAX_ACTIONS, dtype=np.int64)
    for _ in range(100):
        state.apply(rng.choice(state.legal_actions()))
    ks = alv.encode(state)
    assert alv.current_player(ks) == state.current_player()
    assert _sorted_legal(buf, alv.legal_actions(ks, buf)) == state.legal_actions()
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        state.apply(action)
        alv.apply(ks, action)
        assert alv.current_player(ks) == state.current_player()


@pytest.mark.parametrize("mode", [OVERLAPPING, DISJOINT])
def test_alveoles_kernel_bonuses_match_the_scoring_module(mode: str) -> None:
    # Boards painted in rectangles, so rows, columns and 3 × 3 blocks are often owned whole.
    rng = random.Random(7)
    values = tuple(_random_layout(rng))
    totals = np.zeros(4, dtype=np.int64)
    for _ in range(300):
        owners = [rng.randrange(3)] * CELLS
        for _ in range(rng.randrange(6)):
            r0, c0 = rng.randrange(8), rng.randrange(8)
            r1, c1 = rng.randrange(r0, 8), rng.randrange(c0, 8)
            seat = rng.randrange(3)
            for r in range(r0, r1 + 1):
                for c in range(c0, c1 + 1):
                    owners[8 * r + c] = seat
        ks = alv.new_state(values, 3, mode)
        ks[alv.OWNER : alv.OWNER + CELLS] = owners
        for sq, seat in enumerate(owners):
            ks[alv.POINTS + seat] += values[sq]
        alv.scores(ks, totals)
        expected = [s.total for s in score_owners(owners, values, 3, mode)]
        assert totals[:3].tolist() == expected


@pytest.mark.parametrize("index", [0, 1])
def test_golden_games_replayed_in_the_kernel(index: int) -> None:
    golden = json.loads(GOLDEN.read_text())["games"][index]
    game = load_game(
        "alveoles",
        players=golden["players"],
        layout=golden["layout"],
        square_bonus=golden["square_bonus"],
    )
    reference = game.new_initial_state()
    ks = alv.new_state(game.values, game.num_players, game.square_bonus)
    buf = np.empty(alv.MAX_ACTIONS, dtype=np.int64)
    movers = []
    for text in golden["moves"]:
        groove = reference.string_to_action(text)
        reference.apply(groove)
        movers.append(alv.current_player(ks))
        assert groove in buf[: alv.legal_actions(ks, buf)]
        alv.apply(ks, groove)
    assert movers == golden["mover_of_each_move"]
    owners = "".join(str(o) for o in ks[alv.OWNER : alv.OWNER + CELLS])
    assert owners == golden["owner_of_squares_a1_h1_then_a2_h2_and_so_on"]
    totals = np.zeros(4, dtype=np.int64)
    alv.scores(ks, totals)
    assert totals[: game.num_players].tolist() == golden["final_scores"]
    assert alv.current_player(ks) == -1


def test_alquerque_kernel_equals_rules_on_every_ply() -> None:
    rng = random.Random(2024)
    buf = np.empty(alq.MAX_ACTIONS, dtype=np.int64)
    returns = np.zeros(2)
    pieces = np.zeros(2, dtype=np.int64)
    endings = set()
    for index in range(GAMES):
        limit = 50 if index % 2 == 0 else rng.randrange(4, 60)
        game = load_game("alquerque", no_capture_limit=limit)
        state = game.new_initial_state()
        ks = alq.new_state(limit)
        while True:
            assert alq.current_player(ks) == state.current_player()
            n = alq.legal_actions(ks, buf)
            legal = state.legal_actions()
            assert _sorted_legal(buf, n) == legal
            if not legal:
                break
            action = rng.choice(legal)
            state.apply(action)
            alq.apply(ks, action)
        alq.returns(ks, returns)
        alq.scores(ks, pieces)
        assert returns.tolist() == state.returns()
        assert pieces.tolist() == [int(s) for s in state.scores()]
        assert alq.ENDINGS[ks[alq.ENDED]] == state.ended_by()
        endings.add(state.ended_by())
    assert endings == {"normal", "no_capture", "repetition"}


def test_alquerque_kernel_perft_matches_docs_rules() -> None:
    # docs/rules/alquerque.md: depth 1–8 = 4, 5, 6, 12, 27, 97, 426, 1924.
    counts = [0] * 9

    def walk(ks: np.ndarray, depth: int) -> None:
        buf = np.empty(alq.MAX_ACTIONS, dtype=np.int64)
        n = alq.legal_actions(ks, buf)
        for action in buf[:n]:
            counts[depth + 1] += 1
            if depth + 1 < 8:
                child = ks.copy()
                alq.apply(child, action)
                walk(child, depth + 1)

    walk(alq.new_state(50), 0)
    assert counts[1:] == [4, 5, 6, 12, 27, 97, 426, 1924]


def test_alquerque_kernel_encodes_positions_with_their_repetition_history() -> None:
    rng = random.Random(9)
    buf = np.empty(alq.MAX_ACTIONS, dtype=np.int64)
    game = load_game("alquerque", no_capture_limit=30)
    for _ in range(200):
        state = game.new_initial_state()
        for _ in range(rng.randrange(40)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        ks = alq.encode(state)
        while True:  # the encoded copy ends the game exactly as the rules do
            assert alq.current_player(ks) == state.current_player()
            legal = state.legal_actions()
            assert _sorted_legal(buf, alq.legal_actions(ks, buf)) == legal
            if not legal:
                break
            action = rng.choice(legal)
            state.apply(action)
            alq.apply(ks, action)
        assert alq.ENDINGS[ks[alq.ENDED]] == state.ended_by()
