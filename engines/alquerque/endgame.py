"""Alquerque's small endings solved by retrograde analysis, for the compiled search.

Strong play between the compiled levels ends mostly in a handful of pieces: of 200 games of the
``expert`` candidate against ``hard``, 97 were drawn by the no-capture rule or by repetition,
most with two or three pieces a side, where the search, seeing 10 to 20 plies ahead, cannot
tell a won ending from a dead one. Here every position of at most ``max_pieces`` pieces (both
sides together, each at least one) is solved exactly.

**What a value means.** The draw rules (docs/rules/alquerque.md, A2 and A4) make a position's
value depend on the plies still allowed before the no-capture draw, its *budget*
(``limit - no_capture``): the side to move with no legal move loses, even at budget 0; otherwise
at budget 0 the game is drawn; a capture (compulsory, any chain) gives the opponent the whole
``limit`` again, a slide gives it ``budget - 1``. More budget never hurts the side that can
force a result, so a position's value is one small number, its *code*:

- ``c > 0``: the side to move wins when its budget is at least ``c``, else it is a draw;
- ``c < 0``: the side to move loses when its budget is at least ``-c - 1``, else a draw;
- ``c = 0``: a draw at every budget.

The repetition rule (A3) is left out: it needs the history, which a table cannot hold. It can
only turn a table's win into a draw when the loser can force the same position three times,
which the search still sees in its own tree, since the kernel keeps the history.

**How it is solved.** Classes of (White's pieces, Black's) in order of their total: a capture
leads into a smaller class, solved before; within a class, a position where the side to move
must capture or cannot move has its code at once, and the others (slides only) are settled by
budget, 1 to ``limit``: a position wins at budget ``r`` when a slide reaches one that its
opponent loses at ``r - 1``, and loses when every slide reaches one that the opponent wins at
``r - 1``. The first budget that settles a position is its code; a sweep past the second that
settles nothing ends the class, since the next one would see the same.

**Layout.** One ``int8`` array: the classes by total, then White's count, each the two sides'
piece sets in colexicographic rank (a set's rank among sets of its size, in increasing order of
their bits) and the side to move: ``OFFSETS[white, black] + (rank(white) * C(25, black) +
rank(black)) * 2 + to_move``. Entries with both sides on one point are never read. The
offsets do not depend on ``max_pieces``, so a table of fewer pieces is a prefix of a larger
one.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
from numba import njit

from engines.alquerque import board, kernel
from engines.alquerque.board import POINTS
from engines.alquerque.kernel import (
    BLACK_BITS,
    LIMIT,
    MAX_ACTIONS,
    NO_CAPTURE,
    TO_MOVE,
    WHITE_BITS,
    _can_capture,
    _captures,
    _has_move,
    _moves,
    _popcount,
    capture_result,
)
from engines.core import Game
from engines.kernel_cache import track

MAX_PIECES = 5
"""The search's table: every ending of up to five pieces, 4.5 million positions."""
DEFAULT_LIMIT = 50
"""The rules' default no-capture limit, the only one the search's table is built for."""
LARGEST = 6
"""Most pieces any table may hold (the offsets are laid out that far)."""

WIN, DRAW, LOSS = 1, 0, -1


def _binomials() -> np.ndarray:
    table = np.zeros((POINTS + 1, LARGEST + 1), dtype=np.int64)
    for n in range(POINTS + 1):
        table[n, 0] = 1
        for k in range(1, min(n, LARGEST) + 1):
            table[n, k] = table[n - 1, k - 1] + (table[n - 1, k] if k <= n - 1 else 0)
    return table


BINOMIAL = _binomials()


def _offsets() -> tuple[np.ndarray, int]:
    offsets = np.full((LARGEST, LARGEST), -1, dtype=np.int64)
    at = 0
    for total in range(2, LARGEST + 1):
        for white in range(1, total):
            black = total - white
            offsets[white, black] = at
            at += int(BINOMIAL[POINTS, white] * BINOMIAL[POINTS, black]) * 2
    return offsets, at


OFFSETS, _END = _offsets()


def table_size(max_pieces: int) -> int:
    """Entries of a table of every ending of up to ``max_pieces`` pieces: where the classes of
    one piece more would begin."""
    return _END if max_pieces == LARGEST else int(OFFSETS[1, max_pieces])


@njit(cache=True)
def _rank(bits: int) -> int:
    """The set's rank among the sets of its size, in increasing order of their bits."""
    rank = 0
    i = 0
    for p in range(POINTS):
        if bits >> p & 1:
            i += 1
            rank += BINOMIAL[p, i]
    return rank


@njit(cache=True)
def index_of(white: int, black: int, to_move: int) -> int:
    """The entry of a position (both sides with a piece, ``LARGEST`` pieces at most)."""
    nb = _popcount(black)
    base = OFFSETS[_popcount(white), nb]
    return base + (_rank(white) * BINOMIAL[POINTS, nb] + _rank(black)) * 2 + to_move


@njit(cache=True)
def _entry_after(own: int, enemy: int, side: int) -> int:
    """The entry of the position once ``side``, now holding ``own``, has moved: the other
    side to move."""
    if side == 0:
        return index_of(own, enemy, 1)
    return index_of(enemy, own, 0)


@njit(cache=True)
def status(code: int, budget: int) -> int:
    """``WIN``, ``DRAW`` or ``LOSS`` for the side to move, from its code and budget."""
    if code > 0 and budget >= code:
        return WIN
    if code < 0 and budget >= -code - 1:
        return LOSS
    return DRAW


@njit(cache=True)
def _after_capture_status(codes: np.ndarray, own: int, enemy: int, colour: int, limit: int) -> int:
    """The side to move's result over its captures (it has one): each leaves the opponent to
    move with the whole ``limit``, in a smaller class, or with no piece."""
    actions = np.empty(MAX_ACTIONS, dtype=np.int64)
    n = _captures(own, enemy, actions, 0)
    best = LOSS
    for i in range(n):
        after_own, after_enemy = capture_result(own, enemy, actions[i])
        if after_enemy == 0:
            return WIN
        value = -status(codes[_entry_after(after_own, after_enemy, colour)], limit)
        if value == WIN:
            return WIN
        best = max(best, value)
    return best


@njit(cache=True)
def _next_set(bits: int) -> int:
    """The next larger set of as many bits (Gosper's hack)."""
    low = bits & -bits
    ripple = bits + low
    return (((ripple ^ bits) >> 2) // low) | ripple


@njit(cache=True)
def _solve_class(codes: np.ndarray, nw: int, nb: int, limit: int) -> None:
    """Codes of every position of ``nw`` White and ``nb`` Black pieces (smaller classes
    solved)."""
    size = BINOMIAL[POINTS, nw] * BINOMIAL[POINTS, nb] * 2
    pending_white = np.empty(size, dtype=np.int64)
    pending_black = np.empty(size, dtype=np.int64)
    pending_side = np.empty(size, dtype=np.int64)
    pending = 0
    end = 1 << POINTS
    white = (1 << nw) - 1
    while white < end:
        black = (1 << nb) - 1
        while black < end:
            if not white & black:
                for side in range(2):
                    own, enemy = (white, black) if side == 0 else (black, white)
                    at = index_of(white, black, side)
                    if not _has_move(own, enemy, side):
                        codes[at] = -1  # lost even at budget 0
                    elif _can_capture(own, enemy):
                        result = _after_capture_status(codes, own, enemy, side, limit)
                        codes[at] = 1 if result == WIN else (-2 if result == LOSS else 0)
                    else:
                        pending_white[pending] = white
                        pending_black[pending] = black
                        pending_side[pending] = side
                        pending += 1
            black = _next_set(black)
        white = _next_set(white)
    first, replies = _slides(
        pending_white[:pending], pending_black[:pending], pending_side[:pending]
    )
    entry = np.empty(pending, dtype=np.int64)
    for j in range(pending):
        entry[j] = index_of(pending_white[j], pending_black[j], pending_side[j])
    for budget in range(1, limit + 1):
        settled = 0
        for j in range(pending):
            if codes[entry[j]] != 0:
                continue
            any_loss = False
            all_win = True
            for i in range(first[j], first[j + 1]):
                reply = status(codes[replies[i]], budget - 1)
                if reply == LOSS:
                    any_loss = True
                    break
                if reply != WIN:
                    all_win = False
            if any_loss:
                codes[entry[j]] = budget
                settled += 1
            elif all_win:
                codes[entry[j]] = -(budget + 1)
                settled += 1
        if settled == 0 and budget > 1:
            # Nothing new at ``budget``: the next one reads the same codes. Not after the first
            # sweep, which reads budget 0, where a capture's codes (1 and -2) do not yet count.
            break


@njit(cache=True)
def _slide_replies(
    white: int, black: int, side: int, moves: np.ndarray, out: np.ndarray, at: int
) -> int:
    """Write the entries the side to move's slides lead to into ``out`` from ``at`` (an empty
    ``out``: count them only); return how many. It has no capture, so its moves are slides;
    ``moves`` is room for them."""
    own, enemy = (white, black) if side == 0 else (black, white)
    count = _moves(own, enemy, side, moves)
    if out.shape[0] > 0:
        for i in range(count):
            moved, _ = capture_result(own, enemy, moves[i])
            out[at + i] = _entry_after(moved, enemy, side)
    return count


@njit(cache=True)
def _slides(
    whites: np.ndarray, blacks: np.ndarray, sides: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The entries each position's slides lead to, found once for every sweep: position
    ``j``'s are ``replies[first[j]:first[j + 1]]``."""
    n = whites.shape[0]
    first = np.zeros(n + 1, dtype=np.int64)
    moves = np.empty(MAX_ACTIONS, dtype=np.int64)
    none = np.empty(0, dtype=np.int32)
    for j in range(n):
        first[j + 1] = first[j] + _slide_replies(whites[j], blacks[j], sides[j], moves, none, 0)
    replies = np.empty(first[n], dtype=np.int32)
    for j in range(n):
        _slide_replies(whites[j], blacks[j], sides[j], moves, replies, first[j])
    return first, replies


def build_table(limit: int = DEFAULT_LIMIT, max_pieces: int = MAX_PIECES) -> np.ndarray:
    """The codes of every ending of up to ``max_pieces`` pieces, for a no-capture ``limit``."""
    if not 2 <= max_pieces <= LARGEST:
        raise ValueError(f"max_pieces must be 2 to {LARGEST}, not {max_pieces}")
    if not 1 <= limit <= 127:
        raise ValueError(f"limit must be 1 to 127, not {limit}")
    codes = np.zeros(table_size(max_pieces), dtype=np.int8)
    for total in range(2, max_pieces + 1):
        for white in range(1, total):
            _solve_class(codes, white, total - white, limit)
    return codes


def _cache_files() -> list[Path]:
    """Where the search's table is kept between processes, as numba keeps its code: under
    ``NUMBA_CACHE_DIR`` when it is set, else beside this module or, where that cannot be
    written (an installed package), in the user's cache; under a name that changes with the
    code that builds it (this module, the kernel, the board)."""
    digest = hashlib.sha256()
    for module in (sys.modules[__name__], kernel, board):
        digest.update(inspect.getsource(module).encode())
    name = f"alquerque_endgame_{MAX_PIECES}_{DEFAULT_LIMIT}_{digest.hexdigest()[:16]}.npy"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"]) / name]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "playtester"
    return [Path(__file__).parent / "__pycache__" / name, user / name]


def _load(path: Path) -> np.ndarray | None:
    try:
        table = np.load(path)
    except (OSError, ValueError):
        return None  # absent, unreadable or cut short
    if table.dtype != np.int8 or table.shape != (table_size(MAX_PIECES),):
        return None
    return table


def _store(table: np.ndarray, path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npy", delete=False) as out:
            np.save(out, table)
        os.chmod(out.name, 0o644)  # the temporary file's 0600 would keep other users out
        os.replace(out.name, path)  # whole or not at all, for processes reading it meanwhile
    except OSError:
        return False
    return True


@cache
def search_table() -> np.ndarray:
    """The table the compiled search probes: up to ``MAX_PIECES`` pieces, the default limit.
    Built once (2.4 CPU s) and kept on disk; a process that can write nowhere builds its own."""
    places = _cache_files()
    for path in places:
        table = _load(path)
        if table is not None:
            return table
    table = build_table(DEFAULT_LIMIT, MAX_PIECES)
    for path in places:
        if _store(table, path):
            break
    return table


def table_loader(game: Game) -> Callable[[], np.ndarray] | None:
    """What gives the search its table for ``game``: Alquerque's solved endings when its
    no-capture limit is the one they were solved for, else None. A loader, not the table, so
    that building an agent builds and loads nothing (a worker builds agents to learn what a
    batch needs before anything is compiled); the agent calls it at its first search."""
    if game.name != "alquerque" or getattr(game, "no_capture_limit", None) != DEFAULT_LIMIT:
        return None
    return search_table


def outcome(table: np.ndarray, white: int, black: int, to_move: int, budget: int) -> int:
    """``WIN``, ``DRAW`` or ``LOSS`` for the side to move of a position the table holds."""
    if not white or not black or white & black:
        raise ValueError("each side needs a piece, and no point holds two")
    if index_of(white, black, 0) >= table.shape[0]:
        raise ValueError("the table holds no ending of that many pieces")
    return int(status(int(table[index_of(white, black, to_move)]), budget))


@njit(cache=True)
def probe(table: np.ndarray, state: np.ndarray) -> int:
    """The code of a kernel position that the table (built for the position's limit) holds
    and decides at the position's budget, a win or a loss for the side to move; 0 for a draw
    or a position it does not hold.

    A draw is left to the search: against a player who errs, a drawn ending can still be won,
    and the evaluation plays for that where the table would see no difference."""
    white = state[WHITE_BITS]
    black = state[BLACK_BITS]
    if white == 0 or black == 0 or _popcount(white) + _popcount(black) > LARGEST:
        return 0
    at = index_of(white, black, state[TO_MOVE])
    if at >= table.shape[0]:
        return 0
    code = table[at]
    return code if status(code, state[LIMIT] - state[NO_CAPTURE]) != DRAW else 0


track(globals())
