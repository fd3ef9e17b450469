"""The Alhambra kernel against the Python rules ply by ply, and docs/rules/alhambra.md's facts.

Random games are played through the rules (the reference) and the kernel side by side from the
same deal and hidden order; on every ply both must agree on the legal set, the seat to move
and the terminal flag, and the kernel must hold all 54 tiles and 108 money cards; at the end
on the returns, the points of each round and the longest walls. The one draw made during play
(the spent cards reshuffled into a new deck) comes from each side's own generator, so when
the rules reshuffle, their new deck and display are copied into the kernel.

``GAMES`` per player count keeps this module within the suite's budget; set
``PLAYTESTER_DIFFERENTIAL_GAMES`` to run the long check (≥ 2,000 per player count).
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from engines.alhambra import kernel as kal
from engines.alhambra import kernel_layout as lay
from engines.alhambra.building import cell_of
from engines.alhambra.rules import AlhambraState
from engines.registry import load_game

GAMES = int(os.environ.get("PLAYTESTER_DIFFERENTIAL_GAMES", "20"))
"""Random games per player count."""


def _play_both(
    state: AlhambraState, chooser: random.Random, evaluate_every: int = 0
) -> tuple[np.ndarray, int]:
    """Play ``state`` to its end with random legal moves, the kernel alongside; return the
    kernel's final position and the plies played."""
    players = state.game.num_players
    ks = kal.encode(state)
    buf = np.empty(kal.MAX_ACTIONS, dtype=np.int64)
    plies = 0
    while True:
        assert kal.current_player(ks) == state.current_player()
        n = kal.legal_actions(ks, buf)
        if state.is_terminal():
            assert n == 0
            break
        legal = state.legal_actions()
        got = sorted(buf[:n].tolist())
        texts = [state.action_to_string(a) for a in got]
        assert texts == [state.action_to_string(a) for a in legal]
        if evaluate_every and plies % evaluate_every == 0:
            for seat in range(players):
                assert kal.evaluate(ks, seat) == pytest.approx(state.evaluate(seat))
        action = chooser.choice(legal)
        deck = state.deck
        state.apply(action)
        kal.apply(ks, action)
        if state.deck is not deck:  # the rules reshuffled the spent cards
            kal.load_money(ks, state)
        plies += 1
        assert kal.tiles_in_play(ks) == 54 == state.tiles_in_play()
        assert kal.money_in_play(ks) == 108
    return ks, plies


def _check_end(ks: np.ndarray, state: AlhambraState) -> None:
    players = state.game.num_players
    returns = np.zeros(kal.MAX_PLAYERS)
    totals = np.zeros(kal.MAX_PLAYERS, dtype=np.int64)
    kal.returns(ks, returns)
    kal.scores(ks, totals)
    assert returns[:players].tolist() == state.returns()
    assert totals[:players].tolist() == [int(s) for s in state.scores()]
    for seat in range(players):
        base = lay.seat_base(seat)
        rounds = ks[base + lay.POINTS : base + lay.POINTS + 6].tolist()
        assert rounds == [p for pair in state.round_points[seat] for p in pair]
        assert kal.longest_wall(ks, seat) == state.longest_wall(seat)
        assert ks[base + lay.EXACT] == state.exact[seat]
    collector = ks[lay.COLLECTOR_POINTS : lay.COLLECTOR_POINTS + 3].tolist()
    assert collector == state.collector_points
    assert ks[lay.SCORINGS] == state.scorings
    assert ks[lay.SCORINGS] + state.stats()["missed_scorings"] * (1 - ks[lay.MISSED]) == 3
    assert ks[lay.TURNS] == state.turns


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_alhambra_kernel_equals_rules_on_every_ply(players: int) -> None:
    games = [
        load_game("alhambra", players=players, missed_scoring=mode)
        for mode in ("skip", "before_final")
    ]
    chooser = random.Random(7000 + players)
    for index in range(GAMES):
        state = games[index % 2].new_initial_state(100 * players + index)
        ks, plies = _play_both(state, chooser, evaluate_every=37 if index % 4 == 0 else 0)
        assert plies > 0
        _check_end(ks, state)


def test_alhambra_kernel_encodes_a_position_in_play() -> None:
    game = load_game("alhambra", players=4)
    state = game.new_initial_state(11)
    chooser = random.Random(3)
    for _ in range(150):
        state.apply(chooser.choice(state.legal_actions()))
    ks, _ = _play_both(state, chooser)
    _check_end(ks, state)


def test_scoring_tables_and_ties_of_docs_rules() -> None:
    """Round 3, towers (21 / 13 / 6): two tied first share 21 + 13 = 34 → 17 each, the next
    takes third place's 6; round 1, pavilions (1): two tied first share 1 → 0 each."""
    counts = np.zeros((7, lay.NUM_TYPES), dtype=np.int64)
    counts[0, 5] = 4
    counts[1, 5] = 4
    counts[2, 5] = 2
    counts[3, 5] = 1
    out = np.zeros(7, dtype=np.int64)
    from engines.alhambra.kernel_rules import majority_points

    majority_points(counts, 4, 2, out)
    assert out[:4].tolist() == [17, 17, 6, 0]
    counts[:] = 0
    counts[0, 0] = 1
    counts[1, 0] = 1
    majority_points(counts, 2, 0, out)
    assert out[:2].tolist() == [0, 0]


def _with_alhambra(tiles: dict[tuple[int, int], int]) -> np.ndarray:
    game = load_game("alhambra", players=3)
    state = game.new_initial_state(0)
    ks = kal.encode(state)
    grid = kal.kernel_layout_grid(0)
    base = lay.seat_base(0)
    for (x, y), tile in tiles.items():
        ks[grid + cell_of(x, y)] = tile
        ks[base + lay.WHERE + tile] = cell_of(x, y)
    return ks


def test_longest_wall_follows_the_outer_walls() -> None:
    # Around the fountain (0, 0): tile 3 (walls E, S) at (1, 0), tile 9 (N, E) at (1, 1),
    # tile 4 (N, W) at (0, 1); inner sides match open to open. The outer walls run from
    # corner (0, 1) up, along the top, down the east side and back along the bottom to (1, 0):
    # 4's W and N, 9's N and E, 3's E and S, six segments end to end.
    ks = _with_alhambra({(0, 0): 0, (1, 0): 3, (1, 1): 9, (0, 1): 4})
    assert kal.longest_wall(ks, 0) == 6
