"""The Abalone kernel's position layout, its tables and the encoder of a rules position.

The kernel packs the 61 cells into bits 0..62 of an ``int64``, row by row (A1 = 0 … I9 = 62),
with one spare bit after the first row and one before the last: a step NE or NW then moves a
cell by one of three distances instead of four (``PAD_AFTER_ROWS``), so a diagonal step is
three masked shifts. The tables here translate the rules' padded numbering
(``(row + 1) * 10 + number``) and hold the geometry of the packed board. Plain Python and
NumPy, no compiled code: :mod:`engines.abalone.kernel` imports every name it uses from here,
so its compiled cache key covers them.

A position holds the boards, the game's options, counters, the outcome, the Zobrist key of
the marbles and the side to move, and the repetition history (the keys since the last marble
left the board, as the rules keep them): ``HISTORY + move_limit + 1`` ints.
"""

from __future__ import annotations

import functools

import numpy as np

from engines.abalone import heuristics
from engines.abalone.board import (
    AXES,
    CELLS,
    CENTRE_GAIN,
    FREE_PLACEMENT,
    LAYOUTS,
    MARBLES,
    MOVE_XOR,
    NUM_ACTIONS,
    OFF_AXIS,
    OFFSETS,
    RINGS,
    ROW_OF,
    ROWS,
    STRIDE,
    THREE_PLAYER_START,
    Bitboard,
)
from engines.abalone.rules import AbaloneState
from engines.core import TERMINAL

# -- layout of a position: offsets in the state array -------------------------------------
BOARDS = 0
"""Three bitboards (seat 2's stays 0 with two players)."""
PLAYERS = 3
TO_MOVE = 4
PLIES = 5
"""Plies of play (placements not counted)."""
PLACED = 6
PLACEMENTS = 7
"""Marbles placed before play: every marble with free placement, else 0."""
GOAL = 8
"""``marbles_to_win``."""
LIMIT = 9
"""``move_limit``."""
REPEAT = 10
"""``repetition_draw`` (1 or 0)."""
ENDED = 11
"""0 = playing, else the index of the rules' ``ended`` in ``ENDINGS``."""
WINNER = 12
"""Winning seat, -1 for a draw or an unfinished game."""
PUSHED = 13
"""Marbles each seat pushed off (three slots)."""
LOST = 16
"""Marbles each seat lost (three slots)."""
KEY = 19
"""Zobrist key of the marbles and the side to move."""
HISTORY_LEN = 20
SEEN = 21
"""A 4,096-bit filter over the keys in the history (bit ``key & 4095``): a key whose bit is
clear occurs for the first time, and the history is not searched."""
SEEN_WORDS = 64
HISTORY = SEEN + SEEN_WORDS
ENDED_NORMAL, ENDED_REPETITION, ENDED_MOVE_LIMIT, ENDED_NO_MOVE = 1, 2, 3, 4
ENDINGS = ("", "normal", "repetition", "move_limit", "no_move")

MAX_ACTIONS = 600
"""Each of the 42 kinds of move has at most one action per own marble (14): 588 at most."""
ROLLOUT_SAMPLES = heuristics.ROLLOUT_SAMPLES
WEIGHT_NAMES = ("marbles", "centre", "cohesion", "danger")
"""``hard``'s weight parameters, in the order the kernel's ``evaluate_weighted`` reads them."""
DEFAULT_WEIGHTS = np.array(
    [getattr(heuristics.DEFAULT_WEIGHTS, name) for name in WEIGHT_NAMES], dtype=np.float64
)

NCELLS = len(CELLS)
PAD_AFTER_ROWS = (0, len(ROWS) - 2)
"""Rows followed by a spare bit. Row lengths 5, 6, 7, 8, 9, 8, 7, 6, 5 make a step NE cross
6, 7, 8, 9, 9, 8, 7, 6 bits from row to row; a spare bit after the rows of 5 and 6 cells at
the ends turns the two 6s into 7s, leaving three distances (NW likewise, one less)."""
_INDEX = {
    cell: k + sum(1 for row in PAD_AFTER_ROWS if ROW_OF[cell] > row) for k, cell in enumerate(CELLS)
}
"""The rules' cell -> its kernel cell (bit)."""
BITS = max(_INDEX.values()) + 1
assert BITS < 64  # bit 63 stays clear: no shift meets the sign bit
ALL = sum(1 << k for k in _INDEX.values())
"""Every cell."""
RULES_CELL = np.full(BITS, -1, dtype=np.int64)
"""Kernel cell -> the rules' cell number (-1 for a spare bit)."""
KERNEL_CELL = np.full(STRIDE, -1, dtype=np.int64)
"""The rules' cell number -> kernel cell (-1 off the board)."""
for _cell, _k in _INDEX.items():
    RULES_CELL[_k] = _cell
    KERNEL_CELL[_cell] = _k
NEXT = np.full((BITS, 6), -1, dtype=np.int64)
"""The neighbour of each cell in each direction (-1 off the board)."""
for _cell, _k in _INDEX.items():
    for _d, _offset in enumerate(OFFSETS):
        NEXT[_k, _d] = _INDEX.get(_cell + _offset, -1)
STEP_GROUPS = 3
STEP_LEFT = np.zeros((6, STEP_GROUPS), dtype=np.int64)
STEP_RIGHT = np.zeros((6, STEP_GROUPS), dtype=np.int64)
STEP_MASK = np.zeros((6, STEP_GROUPS), dtype=np.int64)
"""Per direction, up to three (mask, shift) pairs: the cells whose neighbour that way lies the
same number of bits away, and that distance as a left or a right shift."""
EDGE_OUT = np.zeros(6, dtype=np.int64)
"""Per direction, the cells whose neighbour that way is off the board."""
for _d in range(6):
    _by_delta: dict[int, int] = {}
    for _k in _INDEX.values():
        if NEXT[_k, _d] < 0:
            EDGE_OUT[_d] |= 1 << _k
        else:
            _delta = int(NEXT[_k, _d]) - _k
            _by_delta[_delta] = _by_delta.get(_delta, 0) | 1 << _k
    assert len(_by_delta) <= STEP_GROUPS
    for _g, (_delta, _cells) in enumerate(sorted(_by_delta.items())):
        STEP_MASK[_d, _g] = _cells
        STEP_LEFT[_d, _g] = max(_delta, 0)
        STEP_RIGHT[_d, _g] = max(-_delta, 0)
RING_BITS = np.array(
    [sum(1 << _INDEX[c] for c in CELLS if ring >> c & 1) for ring in RINGS], dtype=np.int64
)
OFF_AXIS_DIRS = np.array(OFF_AXIS, dtype=np.int64)
AXIS_DIRS = np.array([OFFSETS.index(a) for a in AXES], dtype=np.int64)
MOVE_BITS = np.zeros(NUM_ACTIONS, dtype=np.int64)
"""Action -> the mover's bitboard change in kernel cells (0 for a shape off the board)."""
for _action, _xor in MOVE_XOR.items():
    MOVE_BITS[_action] = sum(1 << _INDEX[c] for c in CELLS if _xor >> c & 1)
GAINS = np.zeros(NUM_ACTIONS, dtype=np.int64)
for _action, _gain in CENTRE_GAIN.items():
    GAINS[_action] = _gain
_KEYS = np.random.default_rng(0xABA1).integers(-(2**63), 2**63 - 1, size=(4, NCELLS))
ZOBRIST = np.zeros((4, BITS), dtype=np.int64)
"""One random key per (seat, kernel cell), drawn per cell in board order; row 3's first three
entries stand for the side to move."""
for _n, _k in enumerate(_INDEX.values()):
    ZOBRIST[:, _k] = _KEYS[:, _n]
del _k, _n, _cell, _d, _offset, _by_delta, _delta, _g, _cells, _action, _xor, _gain, _KEYS


def kernel_bits(board: Bitboard) -> int:
    """A rules bitboard (``(row + 1) * 10 + number``) as kernel cells."""
    return sum(1 << k for cell, k in _INDEX.items() if board >> cell & 1)


def new_state(
    players: int = 2,
    layout: str = "standard",
    marbles_to_win: int = 6,
    move_limit: int = 400,
    repetition_draw: bool = True,
) -> np.ndarray:
    """The start position with these options (three players start as docs/rules/abalone.md says)."""
    state = np.zeros(HISTORY + move_limit + 1, dtype=np.int64)
    state[PLAYERS] = players
    state[GOAL] = marbles_to_win
    state[LIMIT] = move_limit
    state[REPEAT] = int(repetition_draw)
    state[WINNER] = TERMINAL
    if layout == FREE_PLACEMENT:
        state[PLACEMENTS] = MARBLES[players] * players
        state[KEY] = ZOBRIST[3, 0]
        return state
    boards = THREE_PLAYER_START if players == 3 else LAYOUTS[layout]
    for seat, board in enumerate(boards):
        state[BOARDS + seat] = kernel_bits(board)
    state[KEY] = position_key(state)
    log_position(state, int(state[KEY]))  # play starts: its first occurrence (every layout
    return state  # has moves at the start)


def log_position(state: np.ndarray, key: int, times: int = 1) -> None:
    """Add ``times`` occurrences of ``key`` to the repetition history and its filter."""
    at = HISTORY + int(state[HISTORY_LEN])
    state[at : at + times] = key
    state[HISTORY_LEN] += times
    bit = key & 63
    state[SEEN + ((key >> 6) & 63)] |= np.int64(-(1 << 63)) if bit == 63 else np.int64(1 << bit)


def encode(state: AbaloneState) -> np.ndarray:
    """The kernel position of a rules position, repetition history included."""
    game = state.game
    n = game.num_players
    out = np.zeros(HISTORY + game.move_limit + 1, dtype=np.int64)
    out[PLAYERS] = n
    out[GOAL] = game.marbles_to_win
    out[LIMIT] = game.move_limit
    out[REPEAT] = int(game.repetition_draw)
    out[PLACEMENTS] = game.placements
    for seat in range(n):
        out[BOARDS + seat] = kernel_bits(state.board(seat))
        out[PUSHED + seat] = state.pushed_off[seat]
        out[LOST + seat] = state.lost[seat]
    out[TO_MOVE] = state.to_move
    out[PLIES] = state.plies
    out[PLACED] = state.placed
    out[ENDED] = ENDINGS.index(state.ended)
    out[WINNER] = state.winner()
    out[KEY] = position_key(out)
    for boards, to_move, times in state.positions_seen():
        key = int(ZOBRIST[3, to_move])
        for seat, board in enumerate(boards):
            key ^= _rules_board_key(board, seat)
        log_position(out, key, times)
    return out


@functools.lru_cache(maxsize=1 << 14)
def _rules_board_key(board: Bitboard, seat: int) -> int:
    # Every move re-encodes the whole repetition log, whose boards are nearly all the previous
    # move's: uncached, this took a tenth of a 400-ply expert game's time.
    return _board_key(kernel_bits(board), seat)


def _board_key(board: int, seat: int) -> int:
    key = 0
    for k in range(BITS):
        if board >> k & 1:
            key ^= int(ZOBRIST[seat, k])
    return key


def position_key(state: np.ndarray) -> int:
    """The Zobrist key of a kernel position, computed afresh (``apply`` keeps it in step)."""
    key = int(ZOBRIST[3, state[TO_MOVE]])
    for seat in range(state[PLAYERS]):
        key ^= _board_key(int(state[BOARDS + seat]), seat)
    return key
