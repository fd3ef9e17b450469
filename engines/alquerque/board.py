"""The Alquerque board: 25-bit bitboards, precomputed lines, move generation, action codes.

Points are numbered ``row * 5 + column`` (a1 = 0, e1 = 4, a2 = 5, ..., e5 = 24), row 0 on
White's side. A board is two Python ints, one bit per point for White and for Black.

Actions are the path of landing points written as base-26 digits, most significant first, each
digit being ``point + 1``: the simple move ``b2-c3`` (6 -> 12) is ``7 * 26 + 13`` and the capture
``a1xc3xe3`` (0 -> 12 -> 14) is ``(1 * 26 + 13) * 26 + 15``. The integer depends only on the
move, not on the position, so it is stable, and a longer capture has a larger code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

from engines.core import Action

Point: TypeAlias = int
"""0..24, ``row * 5 + column``."""
Bitboard: TypeAlias = int
"""A set of points, bit ``p`` for point ``p``."""

SIZE = 5
POINTS = SIZE * SIZE
FULL: Bitboard = (1 << POINTS) - 1
WHITE, BLACK = 0, 1
COLOURS = ("white", "black")
BASE = 26  # one digit per landing point, point + 1, so no digit is 0
MAX_PATH = 13  # a capture takes at most 12 pieces: 13 landing points


def point_name(p: Point) -> str:
    """``a1``..``e5``."""
    return "abcde"[p % SIZE] + str(p // SIZE + 1)


def point_of(name: str) -> Point | None:
    """The point named ``name`` (lower case), or None."""
    if len(name) != 2 or name[0] not in "abcde" or name[1] not in "12345":
        return None
    return (int(name[1]) - 1) * SIZE + "abcde".index(name[0])


def _has_diagonals(p: Point) -> bool:
    return (p % SIZE + p // SIZE) % 2 == 0


def _on_board(col: int, row: int) -> bool:
    return 0 <= col < SIZE and 0 <= row < SIZE


_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))


def _line_mask(dc: int, dr: int, reach: int) -> Bitboard:
    """Points from which a line runs ``reach`` steps in direction (dc, dr)."""
    mask = 0
    for p in range(POINTS):
        col, row = p % SIZE, p // SIZE
        if dc and dr and not _has_diagonals(p):
            continue
        if _on_board(col + reach * dc, row + reach * dr):
            mask |= 1 << p
    return mask


# (mask of origins, shift) per direction; positive shifts move bits up.
_JUMP_DIRS = tuple((_line_mask(dc, dr, 2), dr * SIZE + dc) for dc, dr in _DIRECTIONS)
# Simple moves: forward (towards the opponent) or sideways, per colour.
_STEP_DIRS = tuple(
    tuple((_line_mask(dc, dr, 1), dr * SIZE + dc) for dc, dr in _DIRECTIONS if dr * forward >= 0)
    for forward in (1, -1)
)
# JUMPS[p]: (bit jumped over, bit landed on, landing point) for every jump line from p.
JUMPS: tuple[tuple[tuple[Bitboard, Bitboard, Point], ...], ...] = tuple(
    tuple((1 << (p + s), 1 << (p + 2 * s), p + 2 * s) for mask, s in _JUMP_DIRS if mask >> p & 1)
    for p in range(POINTS)
)
# Points next to p along a line that continues beyond them: the only pieces p could jump.
_JUMPABLE: tuple[Bitboard, ...] = tuple(sum(over for over, _, _ in jumps) for jumps in JUMPS)
NEIGHBOURS: tuple[frozenset[Point], ...] = tuple(
    frozenset(p + s for mask, s in (*_STEP_DIRS[0], *_STEP_DIRS[1]) if mask >> p & 1)
    for p in range(POINTS)
)
# Moves with two landing points (codes below 26 * 26: simple moves and single jumps), by code:
# (from | to bits, bit of the jumped piece or 0, True for a sideways move); None elsewhere.
TWO_POINT_MOVES: list[tuple[Bitboard, Bitboard, bool] | None] = [None] * (BASE * BASE)
for _p in range(POINTS):
    for _q in NEIGHBOURS[_p]:
        TWO_POINT_MOVES[(_p + 1) * BASE + _q + 1] = ((1 << _p) | (1 << _q), 0, abs(_p - _q) == 1)
    for _over, _land, _q in JUMPS[_p]:
        TWO_POINT_MOVES[(_p + 1) * BASE + _q + 1] = ((1 << _p) | _land, _over, False)
del _p, _q, _over, _land
_ROW_BITS = tuple(sum(1 << (r * SIZE + c) for c in range(SIZE)) for r in range(SIZE))
START_WHITE: Bitboard = _ROW_BITS[0] | _ROW_BITS[1] | (1 << 13) | (1 << 14)
START_BLACK: Bitboard = _ROW_BITS[3] | _ROW_BITS[4] | (1 << 10) | (1 << 11)


def is_capture(action: Action) -> bool:
    """True for a capture, False for a simple move (the action must be a path on the board)."""
    if action >= BASE * BASE:
        return True
    move = TWO_POINT_MOVES[action]
    return move is not None and move[1] != 0


def encode_path(path: Iterable[Point]) -> Action:
    """The action of a path of landing points (two or more)."""
    code = 0
    for p in path:
        code = code * BASE + p + 1
    return code


def decode_path(action: Action) -> list[Point]:
    """The landing points of an action; ``ValueError`` when it is no path on this board."""
    if not isinstance(action, int) or action < BASE:
        raise ValueError(f"{action!r} is not an Alquerque action")
    path: list[Point] = []
    while action:
        action, digit = divmod(action, BASE)
        if digit == 0:
            raise ValueError("digit 0 in an Alquerque action")
        path.append(digit - 1)
    if len(path) > MAX_PATH:
        raise ValueError("path too long for an Alquerque action")
    path.reverse()
    return path


def _chains(p: Point, code: Action, enemy: Bitboard, empty: Bitboard, out: list[Action]) -> None:
    """Append every complete capture sequence continuing from ``p`` (path so far: ``code``):
    each one, not only the longest (decision A1, docs/rules/alquerque.md)."""
    if not enemy & _JUMPABLE[p]:  # the usual case: nothing left to jump from here
        out.append(code)
        return
    extended = False
    for over, land, q in JUMPS[p]:
        if enemy & over and empty & land:
            extended = True
            # The mover leaves p, the jumped piece goes at once, the landing point fills
            # (docs/rules/alquerque.md A1).
            _chains(q, code * BASE + q + 1, enemy ^ over, empty ^ over ^ land ^ (1 << p), out)
    if not extended:
        out.append(code)


def _first_jumps(
    starts: Bitboard, step: int, enemy: Bitboard, empty: Bitboard, out: list[Action]
) -> None:
    """Append the capture sequences of the pieces ``starts`` that begin with a jump by ``step``."""
    while starts:
        low = starts & -starts
        starts ^= low
        p = low.bit_length() - 1
        over = 1 << (p + step)
        q = p + 2 * step
        if enemy & _JUMPABLE[q] & ~over:  # maybe more to take: follow the chain
            # docs/rules/alquerque.md A6: the starting point ``low`` is empty from here on.
            _chains(q, (p + 1) * BASE + q + 1, enemy ^ over, empty ^ over ^ low ^ (1 << q), out)
        else:
            out.append((p + 1) * BASE + q + 1)


def _row_moves(colour: int, row: int, own: int, window: int) -> tuple[Action, ...]:
    """Sorted simple-move codes of the pieces ``own`` (5 bits) on ``row``.

    ``window`` holds 10 bits of empty points: the row behind in its low half and the row ahead
    in its high half, seen from White; for Black the row ahead (row - 1) is the low half.
    """
    low_row = row if colour == WHITE else row - 1
    codes = []
    for col in range(SIZE):
        if own >> col & 1:
            p = row * SIZE + col
            for mask, s in _STEP_DIRS[colour]:
                q = p + s
                if mask >> p & 1 and window >> (q - low_row * SIZE) & 1:
                    codes.append((p + 1) * BASE + q + 1)
    return tuple(sorted(codes))


# Simple moves of one row depend only on that row's pieces and the empty points of the row and
# the row ahead: filled on first use, keyed by row << 15 | pieces | window << 5.
# A list (indexing is cheaper than a dict look-up in this hot loop) of 5 * 2**15 slots per colour,
# about 1.3 MB each.
_ROW_TABLES: tuple[list[tuple[Action, ...] | None], ...] = tuple(
    [None] * (SIZE << 15) for _ in range(2)
)


def _fill_row(colour: int, key: int) -> tuple[Action, ...]:
    """Compute and store the table entry ``key`` (row << 15 | pieces | window << 5)."""
    moves = _row_moves(colour, key >> 15, key & 31, key >> 5 & 1023)
    _ROW_TABLES[colour][key] = moves
    return moves


def _middle_mask(dc: int, dr: int) -> Bitboard:
    """Points that can be jumped over along direction (dc, dr), in either sense."""
    mask = 0
    for p in range(POINTS):
        col, row = p % SIZE, p // SIZE
        if dc and dr and not _has_diagonals(p):
            continue
        if _on_board(col - dc, row - dr) and _on_board(col + dc, row + dr):
            mask |= 1 << p
    return mask


_V_EW, _V_NS, _V_NE, _V_NW = (_middle_mask(dc, dr) for dc, dr in ((1, 0), (0, 1), (1, 1), (-1, 1)))


def generate(own: Bitboard, enemy: Bitboard, colour: int) -> list[Action]:
    """Legal actions (sorted) for ``own`` to move against ``enemy``: its captures if it has
    any (see ``is_capture``), else its simple moves."""
    e = FULL ^ own ^ enemy
    out: list[Action] = []
    # Captures, seen from the jumped piece v: a friend on one side of v along a line and an
    # empty point on the other. Shifts stay small, which keeps these ints one machine word.
    east = own << 1 & e >> 1  # own at v-1, empty at v+1
    west = own >> 1 & e << 1
    north = own << 5 & e >> 5
    south = own >> 5 & e << 5
    north_east = own << 6 & e >> 6
    south_west = own >> 6 & e << 6
    north_west = own << 4 & e >> 4
    south_east = own >> 4 & e << 4
    if enemy & (
        _V_EW & (east | west)
        | _V_NS & (north | south)
        | _V_NE & (north_east | south_west)
        | _V_NW & (north_west | south_east)
    ):
        row, column = enemy & _V_EW, enemy & _V_NS
        rising, falling = enemy & _V_NE, enemy & _V_NW
        # The first jump of each capture is known from its direction; _chains follows on.
        if starts := (east & row) >> 1:
            _first_jumps(starts, 1, enemy, e, out)
        if starts := (west & row) << 1:
            _first_jumps(starts, -1, enemy, e, out)
        if starts := (north & column) >> 5:
            _first_jumps(starts, 5, enemy, e, out)
        if starts := (south & column) << 5:
            _first_jumps(starts, -5, enemy, e, out)
        if starts := (north_east & rising) >> 6:
            _first_jumps(starts, 6, enemy, e, out)
        if starts := (south_west & rising) << 6:
            _first_jumps(starts, -6, enemy, e, out)
        if starts := (north_west & falling) >> 4:
            _first_jumps(starts, 4, enemy, e, out)
        if starts := (south_east & falling) << 4:
            _first_jumps(starts, -4, enemy, e, out)
        out.sort()
        return out
    table = _ROW_TABLES[colour]
    # Black's row ahead is the one below: shift it up so both colours read a 10-bit window.
    source = e if colour == WHITE else e << SIZE
    # One table look-up per occupied row, unrolled (the loop costs a fifth of the time here).
    # Rows come in order and each row's codes are sorted, so the list is sorted.
    if pieces := own & 31:
        moves = table[key := pieces | (source & 1023) << 5]
        out += moves if moves is not None else _fill_row(colour, key)
    if pieces := own >> 5 & 31:
        moves = table[key := 1 << 15 | pieces | (source >> 5 & 1023) << 5]
        out += moves if moves is not None else _fill_row(colour, key)
    if pieces := own >> 10 & 31:
        moves = table[key := 2 << 15 | pieces | (source >> 10 & 1023) << 5]
        out += moves if moves is not None else _fill_row(colour, key)
    if pieces := own >> 15 & 31:
        moves = table[key := 3 << 15 | pieces | (source >> 15 & 1023) << 5]
        out += moves if moves is not None else _fill_row(colour, key)
    if pieces := own >> 20:
        moves = table[key := 4 << 15 | pieces | (source >> 20 & 1023) << 5]
        out += moves if moves is not None else _fill_row(colour, key)
    return out


def count_steps(own: Bitboard, empty: Bitboard, colour: int) -> int:
    """Number of simple moves ``own`` would have (captures ignored)."""
    total = 0
    for mask, s in _STEP_DIRS[colour]:
        total += (own & mask & ((empty >> s) if s > 0 else (empty << -s))).bit_count()
    return total


def longest_chain(own: Bitboard, enemy: Bitboard) -> int:
    """Most pieces one capture by ``own`` would take now (0 when it has none)."""
    moves = generate(own, enemy, WHITE)  # the colour only matters for simple moves
    return len(decode_path(moves[-1])) - 1 if moves and is_capture(moves[-1]) else 0


def hanging(attacker: Bitboard, victim: Bitboard, empty: Bitboard) -> int:
    """How many ``victim`` pieces ``attacker`` could jump right now (first jumps only)."""
    hit = 0
    for mask, s in _JUMP_DIRS:
        if s > 0:
            hit |= ((attacker & mask & (victim >> s) & (empty >> (2 * s))) << s) & victim
        else:
            hit |= ((attacker & mask & (victim << -s) & (empty << (-2 * s))) >> -s) & victim
    return hit.bit_count()


def supported(own: Bitboard, colour: int) -> int:
    """Pieces with a friend right behind them (on the same column), so not jumpable head-on."""
    return (own & (own << SIZE) if colour == WHITE else own & (own >> SIZE)).bit_count()
