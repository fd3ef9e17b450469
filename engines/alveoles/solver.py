"""Exact values of two-player Les Alvéoles on small boards, by retrograde analysis (decision
V7, docs/rules/alveoles.md).

With two players and no bonuses (``square_bonus = "none"``, decision V6 of
``docs/rules/alveoles.md``) what the player to move can still gain over the other depends only
on the grooves already plated: the points scored so far add to both sides of every line of
play alike, who owns a closed square changes nothing to come, and which seat moves changes
nothing either, since the value is counted from the mover's side. So a position is its set of
plated grooves, and the table holds, for every such set, the **best margin the player to move
can force**: ``value(S) = max over legal g of gained(g) ± value(S + g)``, ``+`` when the plate
closes a numbered square (the same player plays again, decision V3), ``-`` otherwise.

Every set is visited once, from the full board down to the empty one: a set's successors have
a larger number as bitmask, so descending order meets them first. The sets no game reaches
(several three-sided squares left open, say) are valued too; they cost time, not correctness.
A board of ``n`` grooves needs a table of ``2**n`` margins: 2 × 2 has 12, 3 × 3 has 24, 3 × 4
has 31 (2**31 margins, 4 GiB as ``int16``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from engines.alveoles.notation import SQUARE_GROOVES, board_grooves, board_squares
from engines.kernel_bits import popcount, trailing_zeros
from engines.kernel_cache import track

MAX_SOLVER_GROOVES = 31
"""The largest board the solver takes: 2**31 margins (3 × 4 squares), 4 GiB as ``int16``."""


@dataclass(frozen=True)
class SolverBoard:
    """An ``rows`` × ``cols`` board as the solver numbers it.

    ``grooves`` lists the board's grooves by their action number (the 8 × 8 numbering of
    :mod:`engines.alveoles.notation`, the board being its lower-left corner), ascending; bit
    ``i`` of a solver set is ``grooves[i]``. ``square_masks[q]`` holds the four bits of square
    ``q`` (board squares row by row from the bottom), ``values[q]`` its value.
    """

    rows: int
    cols: int
    grooves: tuple[int, ...]
    square_masks: tuple[int, ...]
    values: tuple[int, ...]

    @property
    def size(self) -> int:
        """How many grooves (bits) the board has."""
        return len(self.grooves)

    def bit_of(self, groove: int) -> int:
        """The solver bit of a groove given by its action number."""
        return self.grooves.index(groove)

    def set_of(self, filled_mask: int) -> int:
        """The solver set of a rules position's ``filled_mask`` (bit = action number)."""
        out = 0
        for i, g in enumerate(self.grooves):
            if filled_mask >> g & 1:
                out |= 1 << i
        return out


def solver_board(rows: int, cols: int, values: tuple[int, ...]) -> SolverBoard:
    """The solver's numbering of a ``rows`` × ``cols`` board with ``values`` in square order
    (the board's own squares, bottom row first, left to right)."""
    if len(values) != rows * cols:
        raise ValueError(f"a {rows} × {cols} board needs {rows * cols} values, not {len(values)}")
    squares = board_squares(rows, cols)
    grooves = board_grooves(rows, cols)
    if len(grooves) > MAX_SOLVER_GROOVES:
        raise ValueError(
            f"a {rows} × {cols} board has {len(grooves)} grooves; the solver takes at most "
            f"{MAX_SOLVER_GROOVES} (3 × 4 squares)"
        )
    index = {g: i for i, g in enumerate(grooves)}
    masks = tuple(sum(1 << index[g] for g in SQUARE_GROOVES[sq]) for sq in squares)
    return SolverBoard(rows, cols, grooves, masks, tuple(values))


def table_dtype(board: SolverBoard) -> type[np.signedinteger]:
    """``int16`` when every margin fits (board total at most 32,767), else ``int32``."""
    return np.int16 if sum(board.values) <= np.iinfo(np.int16).max else np.int32


def _arrays(board: SolverBoard) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    masks = np.array(board.square_masks, dtype=np.int64)
    values = np.array(board.values, dtype=np.int64)
    touching = np.full((board.size, 2), -1, dtype=np.int64)
    for q, m in enumerate(board.square_masks):
        for bit in range(board.size):
            if m >> bit & 1:
                k = 0 if touching[bit, 0] < 0 else 1
                touching[bit, k] = q
    return masks, values, touching


def solve(board: SolverBoard) -> np.ndarray:
    """The value of every set of plated grooves: index = the set as a bitmask."""
    table = np.zeros(1 << board.size, dtype=table_dtype(board))
    masks, values, touching = _arrays(board)
    _fill(table, board.size, masks, values, touching)
    return table


@njit(cache=True)
def _gain(after: int, bit: int, masks: np.ndarray, values: np.ndarray, touching: np.ndarray):  # type: ignore[no-untyped-def]
    """Points a plate in ``bit`` closes (``after`` includes it), and whether one closed
    square is numbered."""
    gained = 0
    replay = False
    for k in range(2):
        q = touching[bit, k]
        if q >= 0 and after & masks[q] == masks[q]:
            gained += values[q]
            if values[q] > 1:
                replay = True
    return gained, replay


@njit(cache=True)
def forced_set(s: int, masks: np.ndarray) -> int:
    """The missing grooves of the three-sided squares of set ``s`` (the forced closings)."""
    forced = 0
    for q in range(masks.shape[0]):
        if popcount(s & masks[q]) == 3:
            forced |= masks[q] & ~s
    return forced


@njit(cache=True)
def move_value(
    table: np.ndarray, s: int, bit: int, masks: np.ndarray, values: np.ndarray, touching: np.ndarray
) -> int:
    """The mover's margin from set ``s`` when it plates ``bit`` and both sides then play best."""
    after = s | (1 << bit)
    gained, replay = _gain(after, bit, masks, values, touching)
    rest = np.int64(table[after])
    return gained + rest if replay else gained - rest


@njit(cache=True)
def _fill(
    table: np.ndarray, n: int, masks: np.ndarray, values: np.ndarray, touching: np.ndarray
) -> None:
    full = (1 << n) - 1
    table[full] = 0
    for s in range(full - 1, -1, -1):
        moves = forced_set(s, masks)
        if moves == 0:
            moves = full & ~s
        best = -(1 << 40)
        while moves:
            bit = trailing_zeros(moves)
            moves &= moves - 1
            v = move_value(table, s, bit, masks, values, touching)
            if v > best:
                best = v
        table[s] = best


def legal_bits(board: SolverBoard, s: int) -> list[int]:
    """The solver bits the rules allow from set ``s`` (forced closings first, as in the rules)."""
    masks = np.array(board.square_masks, dtype=np.int64)
    moves = int(forced_set(s, masks)) or ((1 << board.size) - 1) & ~s
    return [b for b in range(board.size) if moves >> b & 1]


def move_values(board: SolverBoard, table: np.ndarray, s: int) -> dict[int, int]:
    """{legal groove (action number): the mover's exact margin after it}, from set ``s``."""
    masks, values, touching = _arrays(board)
    return {
        board.grooves[b]: int(move_value(table, s, b, masks, values, touching))
        for b in legal_bits(board, s)
    }


track(globals())
