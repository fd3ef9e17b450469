"""Alquerque (R. C. Bell's rules) on 25-bit bitboards, as ``shared/rules/alquerque.md`` says.

Points are numbered ``row * 5 + column`` (a1 = 0, e1 = 4, a2 = 5, ..., e5 = 24), row 0 on
White's side. A board is two Python ints, one bit per point for White and for Black.

Actions are the path of landing points written as base-26 digits, most significant first, each
digit being ``point + 1``: the simple move ``b2-c3`` (6 -> 12) is ``7 * 26 + 13`` and the capture
``a1xc3xe3`` (0 -> 12 -> 14) is ``(1 * 26 + 13) * 26 + 15``. The integer depends only on the
move, not on the position, so it is stable, and a longer capture has a larger code.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, ClassVar, TypeAlias

from engines.core import (
    TERMINAL,
    Action,
    Game,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    Seat,
    State,
)

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
NEIGHBOURS: tuple[frozenset[Point], ...] = tuple(
    frozenset(p + s for mask, s in (*_STEP_DIRS[0], *_STEP_DIRS[1]) if mask >> p & 1)
    for p in range(POINTS)
)
# Simple moves by code: the (from | to) bits to flip, and whether the move is sideways.
_SIMPLE: dict[Action, tuple[Bitboard, bool]] = {
    (p + 1) * BASE + q + 1: ((1 << p) | (1 << q), abs(p - q) == 1)
    for p in range(POINTS)
    for q in NEIGHBOURS[p]
}
_ROW_BITS = tuple(sum(1 << (r * SIZE + c) for c in range(SIZE)) for r in range(SIZE))
_DIAGONAL_POINTS: Bitboard = sum(1 << p for p in range(POINTS) if _has_diagonals(p))
_START_WHITE: Bitboard = _ROW_BITS[0] | _ROW_BITS[1] | (1 << 13) | (1 << 14)
_START_BLACK: Bitboard = _ROW_BITS[3] | _ROW_BITS[4] | (1 << 10) | (1 << 11)


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
    """Append every complete capture sequence continuing from ``p`` (path so far: ``code``)."""
    extended = False
    for over, land, q in JUMPS[p]:
        if enemy & over and empty & land:
            extended = True
            # The mover leaves p, the jumped piece goes at once, the landing point fills.
            _chains(q, code * BASE + q + 1, enemy ^ over, empty ^ over ^ land ^ (1 << p), out)
    if not extended:
        out.append(code)


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
# the row ahead: filled on first use, keyed by (row * 5) << 15 | pieces | window << 5.
_ROW_TABLES: tuple[dict[int, tuple[Action, ...]], dict[int, tuple[Action, ...]]] = ({}, {})
_ROW_SHIFTS = tuple(range(0, POINTS, SIZE))
_M_E, _M_W, _M_N, _M_S, _M_NE, _M_NW, _M_SE, _M_SW = (mask for mask, _ in _JUMP_DIRS)


def capture_origins(own: Bitboard, enemy: Bitboard) -> Bitboard:
    """Pieces of ``own`` that can capture some piece of ``enemy`` right now."""
    # Unrolled over the eight directions: this runs after every move.
    e = enemy << 6
    f = (FULL ^ own ^ enemy) << 12
    return own & (
        (_M_E & (e >> 7) & (f >> 14))
        | (_M_W & (e >> 5) & (f >> 10))
        | (_M_N & (e >> 11) & (f >> 22))
        | (_M_S & (e >> 1) & (f >> 2))
        | (_M_NE & (e >> 12) & (f >> 24))
        | (_M_NW & (e >> 10) & (f >> 20))
        | (_M_SE & (e >> 2) & (f >> 4))
        | (_M_SW & e & f)
    )


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


def can_capture(own: Bitboard, enemy: Bitboard) -> bool:
    """True when ``own`` has a capture: an enemy piece with ``own`` and an empty point on
    either side along a line."""
    # Seen from the jumped piece, one pair of shifts serves both senses of a line.
    e = FULL ^ own ^ enemy
    return bool(
        enemy
        & (
            _V_EW & ((own << 1 & e >> 1) | (own >> 1 & e << 1))
            | _V_NS & ((own << 5 & e >> 5) | (own >> 5 & e << 5))
            | _V_NE & ((own << 6 & e >> 6) | (own >> 6 & e << 6))
            | _V_NW & ((own << 4 & e >> 4) | (own >> 4 & e << 4))
        )
    )


def generate(own: Bitboard, enemy: Bitboard, colour: int) -> tuple[list[Action], bool]:
    """Legal actions (sorted) for ``own`` to move against ``enemy``; True if they capture."""
    empty = FULL ^ own ^ enemy
    out: list[Action] = []
    # can_capture(), inlined: this runs after nearly every move of every playout.
    e = empty
    if enemy & (
        _V_EW & ((own << 1 & e >> 1) | (own >> 1 & e << 1))
        | _V_NS & ((own << 5 & e >> 5) | (own >> 5 & e << 5))
        | _V_NE & ((own << 6 & e >> 6) | (own >> 6 & e << 6))
        | _V_NW & ((own << 4 & e >> 4) | (own >> 4 & e << 4))
    ):
        origins = capture_origins(own, enemy)
        while origins:
            low = origins & -origins
            origins ^= low
            p = low.bit_length() - 1
            _chains(p, p + 1, enemy, empty, out)
        out.sort()
        return out, True
    table = _ROW_TABLES[colour]
    # Black's row ahead is the one below: shift it up so both colours read a 10-bit window.
    source = empty if colour == WHITE else empty << SIZE
    for shift in _ROW_SHIFTS:
        pieces = own >> shift & 31
        if pieces:
            key = shift << 15 | pieces | (source >> shift & 1023) << 5
            moves = table.get(key)
            if moves is None:
                moves = table[key] = _row_moves(colour, shift // SIZE, pieces, key >> 5 & 1023)
            out += moves  # rows come in order and each row's codes are sorted
    return out, False


def _count_steps(own: Bitboard, empty: Bitboard, colour: int) -> int:
    """Number of simple moves ``own`` would have (captures ignored)."""
    total = 0
    for mask, s in _STEP_DIRS[colour]:
        total += (own & mask & ((empty >> s) if s > 0 else (empty << -s))).bit_count()
    return total


def longest_chain(own: Bitboard, enemy: Bitboard) -> int:
    """Most pieces one capture by ``own`` would take now (0 when it has none)."""
    origins = capture_origins(own, enemy)
    if not origins:
        return 0
    empty = FULL ^ own ^ enemy
    out: list[Action] = []
    while origins:
        low = origins & -origins
        origins ^= low
        p = low.bit_length() - 1
        _chains(p, p + 1, enemy, empty, out)
    return len(decode_path(max(out))) - 1


# --------------------------------------------------------------------------- state

# Legal moves by position (key of ``AlquerqueState._settle``). Positions recur often in
# playouts from the start and in search trees; the lists are never mutated once stored, so
# states share them. Cleared wholesale when full, which bounds memory (a few MB).
_MOVES_SEEN: dict[int, tuple[list[Action], bool]] = {}
_MOVES_SEEN_LIMIT = 1 << 15


class AlquerqueState(State):
    """One Alquerque position with what the draw rules need (plies since a capture, history).

    The legal actions of the side to move are generated once, right after each move, because the
    end-of-game check needs them anyway.
    """

    __slots__ = (
        "_captures",
        "_history",
        "_legal",
        "_winner",
        "black",
        "captures",
        "ended",
        "game",
        "limit",
        "longest",
        "no_capture",
        "plies",
        "to_move",
        "white",
    )
    game: AlquerqueGame

    def __init__(self, game: AlquerqueGame) -> None:
        self.game = game
        self.limit = game.no_capture_limit
        self.white: Bitboard = _START_WHITE
        self.black: Bitboard = _START_BLACK
        self.to_move: Seat = WHITE
        self.no_capture = 0
        self.plies = 0
        self.captures = [0, 0]
        self.longest = [0, 0]
        self.ended = ""
        self._winner: Seat = TERMINAL
        self._history: tuple[int, ...] = ()
        self._legal: list[Action] = []
        self._captures = False
        self._settle()

    @classmethod
    def from_board(
        cls,
        white: Iterable[str],
        black: Iterable[str],
        to_move: Seat = WHITE,
        game: AlquerqueGame | None = None,
    ) -> AlquerqueState:
        """A position with pieces on the named points (``["a1", "c3"]``), for tests and studies.

        The position counts as the first occurrence for the repetition rule, and the plies
        without capture start at 0. It may already be over (the side to move has no move).
        """
        state = cls.__new__(cls)
        state.game = game if game is not None else AlquerqueGame(2, {"no_capture_limit": 50})
        state.limit = state.game.no_capture_limit
        bits = [0, 0]
        for colour, names in enumerate((white, black)):
            for name in names:
                p = point_of(name.strip().lower())
                if p is None:
                    raise ValueError(f"{name!r} is not a point a1..e5")
                if (bits[0] | bits[1]) >> p & 1:
                    raise ValueError(f"{name} is given twice")
                bits[colour] |= 1 << p
        state.white, state.black = bits
        state.to_move = to_move
        state.no_capture = 0
        state.plies = 0
        state.captures = [0, 0]
        state.longest = [0, 0]
        state.ended = ""
        state._winner = TERMINAL
        state._history = ()
        state._settle()
        return state

    # -- turn bookkeeping ------------------------------------------------------------
    def _settle(self, reversible: bool = False) -> None:
        """After a move: generate the next moves, then run the end checks in the rules' order."""
        white, black, to_move = self.white, self.black, self.to_move
        key = white | black << POINTS | to_move << (2 * POINTS)
        found = _MOVES_SEEN.get(key)
        if found is None:
            found = (
                generate(white, black, WHITE) if to_move == WHITE else generate(black, white, BLACK)
            )
            if len(_MOVES_SEEN) >= _MOVES_SEEN_LIMIT:
                _MOVES_SEEN.clear()
            _MOVES_SEEN[key] = found
        legal, self._captures = found
        # Only sideways moves can be undone: after any other move no earlier position recurs.
        history = (*self._history, key) if reversible else (key,)
        self._history = history
        if not legal:
            self.ended, self._winner = "normal", 1 - to_move
        elif self.no_capture >= self.limit:
            self.ended = "no_capture"
        elif reversible and history.count(key) >= 3:
            self.ended = "repetition"
        else:
            self._legal = legal
            return
        self._legal = []

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        return TERMINAL if self.ended else self.to_move

    def legal_actions(self) -> list[Action]:
        return list(self._legal)

    def apply(self, action: Action) -> None:
        mover = self.to_move
        simple = _SIMPLE.get(action)
        if simple is not None:
            bits, sideways = simple
            if mover == WHITE:
                self.white ^= bits
            else:
                self.black ^= bits
            self.no_capture += 1
        else:
            # Walk the landing points from the last one back, removing each jumped piece.
            code, digit = divmod(action, BASE)
            last = previous = digit - 1
            taken = jumps = 0
            while code:
                code, digit = divmod(code, BASE)
                taken |= 1 << ((digit - 1 + previous) >> 1)
                previous = digit - 1
                jumps += 1
            moved = (1 << previous) ^ (1 << last)
            if mover == WHITE:
                self.white ^= moved
                self.black &= ~taken
            else:
                self.black ^= moved
                self.white &= ~taken
            self.captures[mover] += jumps
            if jumps > self.longest[mover]:
                self.longest[mover] = jumps
            self.no_capture = 0
            sideways = False
        self.to_move = 1 - mover
        self.plies += 1
        self._settle(sideways)

    def is_terminal(self) -> bool:
        return bool(self.ended)

    def returns(self) -> list[float]:
        if self._winner == WHITE:
            return [1.0, 0.0]
        if self._winner == BLACK:
            return [0.0, 1.0]
        return [0.5, 0.5]

    def scores(self) -> list[float]:
        """Pieces left on the board, per seat."""
        return [float(self.white.bit_count()), float(self.black.bit_count())]

    def action_to_string(self, action: Action) -> str:
        try:
            path = decode_path(action)
        except ValueError as exc:
            raise IllegalActionError("alquerque", str(action), str(self), str(exc)) from exc
        sep = "-" if len(path) == 2 and path[1] in NEIGHBOURS[path[0]] else "x"
        return sep.join(point_name(p) for p in path)

    def string_to_action(self, text: str) -> Action:
        clean = text.strip().lower()
        sep = "-" if "-" in clean else "x"
        parts = clean.split(sep)
        points = [point_of(part.strip()) for part in parts]
        if len(parts) < 2 or (sep == "-" and len(parts) != 2) or None in points:
            raise NotationError(
                "alquerque", text, "a simple move like b2-c3 or a capture like a1xc3xe3"
            )
        path = [p for p in points if p is not None]
        action = encode_path(path)
        is_step = len(path) == 2 and path[1] in NEIGHBOURS[path[0]]
        if (sep == "-") != is_step or action not in self._legal:
            raise IllegalActionError("alquerque", text, str(self))
        return action

    def clone(self) -> AlquerqueState:
        other = AlquerqueState.__new__(AlquerqueState)
        other.game = self.game
        other.limit = self.limit
        other.white = self.white
        other.black = self.black
        other.to_move = self.to_move
        other.no_capture = self.no_capture
        other.plies = self.plies
        other.captures = self.captures[:]
        other.longest = self.longest[:]
        other.ended = self.ended
        other._winner = self._winner
        other._history = self._history  # a tuple: shared safely
        other._legal = self._legal  # replaced, never mutated, by apply
        other._captures = self._captures
        return other

    def stats(self) -> dict[str, Any]:
        """Per seat: pieces left, pieces captured, longest capture chain; plies played."""
        return {
            "plies": self.plies,
            "per_seat": [
                {
                    "pieces": bits.bit_count(),
                    "captures": self.captures[seat],
                    "longest_chain": self.longest[seat],
                }
                for seat, bits in enumerate((self.white, self.black))
            ],
        }

    def ended_by(self) -> str:
        return self.ended or "normal"

    # -- hooks for the generic agents ------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        """Material, then pieces open to capture, then mobility; in [-1, 1] (±1 = game over)."""
        if self.ended:
            return 0.0 if self._winner == TERMINAL else (1.0 if self._winner == seat else -1.0)
        return evaluate_position(self, seat)

    def rollout_action(self, rng: random.Random) -> Action:
        """Random, except that a capture takes as many pieces as it can."""
        legal = self._legal
        if self._captures and len(legal) > 1:
            top = legal[-1]
            floor = BASE ** (len(decode_path(top)) - 1)
            legal = [a for a in legal if a >= floor]
        return legal[0] if len(legal) == 1 else rng.choice(legal)

    def ordered_actions(self) -> list[Action]:
        """Longest captures first (a longer path has a larger code), then simple moves."""
        return self._legal[::-1]

    def key(self) -> tuple[int, int, int]:
        return (self.white, self.black, self.to_move)

    @property
    def has_capture(self) -> bool:
        """True when the side to move must capture."""
        return self._captures

    def __str__(self) -> str:
        rows = []
        for r in range(SIZE - 1, -1, -1):
            cells = []
            for c in range(SIZE):
                bit = 1 << (r * SIZE + c)
                cells.append("w" if self.white & bit else "b" if self.black & bit else ".")
            rows.append(f"{r + 1}  " + " ".join(cells))
        rows.append("   a b c d e")
        if self.ended:
            outcome = "draw" if self._winner == TERMINAL else f"{COLOURS[self._winner]} wins"
            rows.append(f"game over after {self.plies} plies: {outcome} ({self.ended_by()})")
        else:
            rows.append(
                f"{COLOURS[self.to_move]} (seat {self.to_move}) to move; ply {self.plies}, "
                f"{self.no_capture} without capture"
            )
        return "\n".join(rows)


def evaluate_position(state: AlquerqueState, seat: Seat) -> float:
    """The default heuristic: material 0.7, pieces en prise 0.2, mobility 0.1, for ``seat``."""
    own, enemy = (state.white, state.black) if seat == WHITE else (state.black, state.white)
    empty = FULL ^ own ^ enemy
    material = (own.bit_count() - enemy.bit_count()) / 12.0
    # Whoever is to move strikes first, so the opponent's hanging pieces weigh more.
    own_hanging = _hanging(enemy, own, empty)
    enemy_hanging = _hanging(own, enemy, empty)
    if state.to_move == seat:
        danger = (enemy_hanging - 0.5 * own_hanging) / 12.0
    else:
        danger = (0.5 * enemy_hanging - own_hanging) / 12.0
    mobility = (_count_steps(own, empty, seat) - _count_steps(enemy, empty, 1 - seat)) / 40.0
    value = 0.7 * material + 0.2 * danger + 0.1 * mobility
    return max(-1.0, min(1.0, value))


def _hanging(attacker: Bitboard, victim: Bitboard, empty: Bitboard) -> int:
    """How many ``victim`` pieces ``attacker`` could jump right now (first jumps only)."""
    hit = 0
    for mask, s in _JUMP_DIRS:
        if s > 0:
            hit |= ((attacker & mask & (victim >> s) & (empty >> (2 * s))) << s) & victim
        else:
            hit |= ((attacker & mask & (victim << -s) & (empty << (-2 * s))) >> -s) & victim
    return hit.bit_count()


# --------------------------------------------------------------------------- game


class AlquerqueGame(Game):
    """Two-player Alquerque; option ``no_capture_limit`` sets the draw rule's ply count."""

    game_type: ClassVar[GameType] = GameType(
        short_name="alquerque",
        long_name="Alquerque",
        min_players=2,
        max_players=2,
        chance=False,
        perfect_information=True,
        # Codes are paths of up to 13 landing points in base 26.
        num_distinct_actions=BASE**MAX_PATH,
        # A default cap, not a rule: the draw rules end every game, but only after up to
        # (captures + 1) * no_capture_limit plies; 400 plies is far beyond real games.
        max_game_length=400,
        options=(
            Option(
                "no_capture_limit",
                int,
                50,
                "consecutive plies without a capture that end the game as a draw",
                minimum=1,
                maximum=1000,
            ),
        ),
        points=False,
        description=(
            "The 5 × 5 ancestor of draughts: compulsory captures, multi-captures that may "
            "change direction, no backward simple moves, no promotion."
        ),
    )

    def __init__(self, players: int, options: dict[str, Any]) -> None:
        super().__init__(players, options)
        self.no_capture_limit: int = int(options.get("no_capture_limit", 50))

    def new_initial_state(self, seed: int = 0) -> AlquerqueState:
        """The start position (the game has no chance, so ``seed`` changes nothing)."""
        return AlquerqueState(self)
