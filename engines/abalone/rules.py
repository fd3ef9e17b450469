"""Abalone as ``shared/rules/abalone.md`` says: two or three players, four starts, Blitz.

Geometry, action numbering and move generation live in :mod:`engines.abalone.board`; the
evaluation, move ordering and playout policy in :mod:`engines.abalone.heuristics`. This module
keeps the position, the end-of-game rules, notation and the read API.

Read API (for agents, reports and board renderers): ``board(seat)`` is the bitboard of that
seat's marbles (bit ``(row + 1) * 10 + number``, row 0 = ``A``); ``cells()`` maps every cell
name (``"A1"`` … ``"I9"``) to the seat whose marble is on it, or -1; ``pushed_off`` and ``lost``
count marbles per seat; ``placing`` is true during a free-placement start.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from typing import Any, ClassVar

from engines.abalone import heuristics
from engines.abalone.board import (
    BY_NAME,
    CELLS,
    DIRECTIONS,
    FREE_PLACEMENT,
    KIND_BROAD2,
    KIND_PLACE,
    LAYOUT_NAMES,
    LAYOUTS,
    MARBLES,
    MOVE_XOR,
    NAMES,
    NUM_ACTIONS,
    OFFSETS,
    ROW_OF,
    ROWS,
    STRIDE,
    THREE_PLAYER_START,
    VALID,
    Bitboard,
    action_name,
    has_step,
    legal_moves,
    line_action,
)
from engines.core import (
    TERMINAL,
    Action,
    Ending,
    Game,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    OptionError,
    Seat,
    State,
    VariationDefaults,
)

COLOURS = ("black", "white", "red")
SYMBOLS = ("x", "o", "r")
MAX_MOVE_LIMIT = 2000
"""Largest ``move_limit`` accepted; the game's default ply cap leaves room for placements."""

# Per-seat move counters, by index in ``State.counts[seat]``.
INLINE, BROADSIDE, PUSHES, EJECTIONS = 0, 1, 2, 3
COUNTER_NAMES = ("inline", "broadside", "pushes", "ejections")

_MOVE = re.compile(r"^([a-i][1-9])([a-i][1-9])?(ne|nw|se|sw|e|w)$")
_PLACE = re.compile(r"^\+([a-i][1-9])$")
NOTATION_HELP = "a move like A1NE or C3C5NE (end cells, then E W NE NW SE SW) or +E5 to place"


class AbaloneState(State):
    """One position: each seat's marbles, the side to move, counters and the repetition log.

    Legal moves are generated on first request and kept until the next move. ``_seen`` counts
    each position (marbles and side to move) since the last marble left the board, which is
    the only way back to an earlier position being impossible; it is copied by ``clone``.
    """

    __slots__ = (
        "_legal",
        "_seen",
        "_winner",
        "boards",
        "counts",
        "ended",
        "game",
        "lost",
        "placed",
        "plies",
        "pushed_off",
        "to_move",
    )
    game: AbaloneGame

    def __init__(self, game: AbaloneGame) -> None:
        n = game.num_players
        self.game = game
        self.to_move: Seat = 0
        self.plies = 0
        self.placed = 0
        self.pushed_off = [0] * n
        self.lost = [0] * n
        self.counts = [[0, 0, 0, 0] for _ in range(n)]
        self.ended = ""
        self._winner: Seat = TERMINAL
        self._legal: list[Action] | None = None
        self._seen: dict[Hashable, int] = {}
        if game.layout == FREE_PLACEMENT:
            self.boards = [0] * n
        else:
            self.boards = list(THREE_PLAYER_START if n == 3 else LAYOUTS[game.layout])
            self._start_play()

    @classmethod
    def from_cells(
        cls, game: AbaloneGame, marbles: list[list[str]], to_move: Seat = 0
    ) -> AbaloneState:
        """A position in play with marbles on the named cells, one list per seat (tests and
        studies). It counts as the first occurrence of itself; counters start at zero."""
        if len(marbles) != game.num_players:
            raise ValueError(f"give one list of cells per seat ({game.num_players})")
        state = cls.__new__(cls)
        state.game = game
        n = game.num_players
        state.boards = [0] * n
        taken = 0
        for seat, names in enumerate(marbles):
            for name in names:
                cell = BY_NAME.get(name.strip().upper())
                if cell is None:
                    raise ValueError(f"{name!r} is not a cell A1..I9")
                if taken >> cell & 1:
                    raise ValueError(f"{name} is given twice")
                taken |= 1 << cell
                state.boards[seat] |= 1 << cell
        state.to_move = to_move
        state.plies = 0
        state.placed = game.placements
        state.pushed_off = [0] * n
        state.lost = [0] * n
        state.counts = [[0, 0, 0, 0] for _ in range(n)]
        state.ended = ""
        state._winner = TERMINAL
        state._legal = None
        state._seen = {}
        state._start_play()
        return state

    def _start_play(self) -> None:
        """The position play starts from: its first occurrence, and the no-move check."""
        self._seen = {self._position(): 1}
        if not self._can_move():
            self._no_move()

    # -- read API ----------------------------------------------------------------------
    def board(self, seat: Seat) -> Bitboard:
        """The bitboard of ``seat``'s marbles (bit ``(row + 1) * 10 + number``)."""
        return self.boards[seat]

    def cells(self) -> dict[str, Seat]:
        """Every cell name, A1..I9, with the seat whose marble is on it (-1: empty)."""
        out = {}
        for cell in CELLS:
            owner = next((s for s, b in enumerate(self.boards) if b >> cell & 1), -1)
            out[NAMES[cell]] = owner
        return out

    @property
    def placing(self) -> bool:
        """True while marbles are being placed (free-placement start)."""
        return self.placed < self.game.placements

    def opponents(self, seat: Seat) -> Bitboard:
        """Every marble not ``seat``'s."""
        boards = self.boards
        return boards[1 - seat] if len(boards) == 2 else sum(boards) - boards[seat]

    # -- the contract ------------------------------------------------------------------
    def current_player(self) -> Seat:
        return TERMINAL if self.ended else self.to_move

    def legal_actions(self) -> list[Action]:
        if self.ended:
            return []
        legal = self._legal
        if legal is None:
            legal = self._legal = self._generate()
        return legal[:]  # a copy: callers may shuffle it

    def _generate(self) -> list[Action]:
        boards, mover = self.boards, self.to_move
        if self.placed < self.game.placements:
            empty = VALID ^ sum(boards)
            base = KIND_PLACE * STRIDE
            return [base + c for c in CELLS if empty >> c & 1]
        opp = boards[1 - mover] if len(boards) == 2 else sum(boards) - boards[mover]
        return legal_moves(boards[mover], opp)

    def _can_move(self) -> bool:
        boards, mover = self.boards, self.to_move
        opp = boards[1 - mover] if len(boards) == 2 else sum(boards) - boards[mover]
        if has_step(boards[mover], opp):
            return True
        self._legal = legal_moves(boards[mover], opp)
        return bool(self._legal)

    def _position(self) -> Hashable:
        return (*self.boards, self.to_move)

    def apply(self, action: Action) -> None:
        # The hot path of playouts and search: one mask for the mover's marbles, the pushed
        # marbles walked from the far end, then the end checks in the rules page's order.
        kind, head = action >> 7, action & 127
        boards = self.boards
        mover = self.to_move
        n = len(boards)
        self._legal = None
        if kind == KIND_PLACE:
            boards[mover] |= 1 << head
            self.placed += 1
            self.to_move = (mover + 1) % n
            if self.placed == self.game.placements:
                self._start_play()
            return
        counts = self.counts[mover]
        ejected = False
        if kind < KIND_BROAD2:
            counts[INLINE] += 1
            if kind >= 6:
                offset = OFFSETS[kind % 6]
                target = head + offset
                if (sum(boards) ^ boards[mover]) >> target & 1:
                    ejected = self._push(target, offset)
        else:
            counts[BROADSIDE] += 1
        boards[mover] ^= MOVE_XOR[action]
        self.plies += 1
        nxt = mover + 1 if mover + 1 < n else 0
        self.to_move = nxt
        if ejected:
            if self.pushed_off[mover] >= self.game.marbles_to_win:
                self.ended, self._winner = Ending.NORMAL, mover
                return
            self._seen = {}  # nothing before a marble left the board can recur
        if not self._can_move():
            self._no_move()
            return
        if self.game.repetition_draw:
            key = (*boards, nxt)
            seen = self._seen
            times = seen.get(key, 0) + 1
            seen[key] = times
            if times >= 3:
                self.ended = Ending.REPETITION
                return
        if self.plies >= self.game.move_limit:
            self.ended = Ending.MOVE_LIMIT

    def _push(self, target: int, offset: int) -> bool:
        """Move the opponents' marbles from ``target`` on by one step; True if one fell off."""
        boards = self.boards
        mover = self.to_move
        chain = [target]
        while True:
            nxt = chain[-1] + offset
            if not any(b >> nxt & 1 for b in boards):
                break
            chain.append(nxt)
        counts = self.counts[mover]
        counts[PUSHES] += 1
        ejected = False
        end = chain[-1] + offset
        for cell in reversed(chain):
            seat = next(s for s, b in enumerate(boards) if s != mover and b >> cell & 1)
            boards[seat] ^= 1 << cell
            if end in ROW_OF:
                boards[seat] |= 1 << end
            else:
                ejected = True
                self.pushed_off[mover] += 1
                self.lost[seat] += 1
                counts[EJECTIONS] += 1
            end = cell
        return ejected

    def _no_move(self) -> None:
        """The player to move has no legal move: with two players they lose, with three it is
        a draw among all (the rules page's decisions)."""
        self._legal = []
        if len(self.boards) == 2:
            self.ended, self._winner = Ending.NORMAL, 1 - self.to_move
        else:
            self.ended = Ending.NO_MOVE

    def is_terminal(self) -> bool:
        return self.ended != ""

    def returns(self) -> list[float]:
        n = len(self.boards)
        if self._winner == TERMINAL:
            return [1.0 / n] * n
        return [1.0 if s == self._winner else 0.0 for s in range(n)]

    def scores(self) -> list[float]:
        """Marbles each seat has pushed off the board."""
        return [float(p) for p in self.pushed_off]

    def winner(self) -> Seat:
        """The winning seat, or -1 (game on, or drawn)."""
        return self._winner

    def positions_seen(self) -> list[tuple[tuple[Bitboard, ...], Seat, int]]:
        """The repetition log: each position since the last marble left the board (the
        seats' bitboards and the side to move) with how many times it occurred."""
        n = len(self.boards)
        return [(key[:n], key[n], times) for key, times in self._seen.items()]  # type: ignore[index]

    def action_to_string(self, action: Action) -> str:
        try:
            return action_name(action)
        except (KeyError, ValueError, IndexError) as exc:
            raise IllegalActionError(
                "abalone", str(action), str(self), "not an action code"
            ) from exc

    def string_to_action(self, text: str) -> Action:
        clean = text.strip().lower().replace(" ", "")
        placed = _PLACE.match(clean)
        if placed:
            action = KIND_PLACE * STRIDE + BY_NAME[placed.group(1).upper()]
        else:
            found = _MOVE.match(clean)
            if not found:
                raise NotationError("abalone", text, NOTATION_HELP)
            first = BY_NAME.get(found.group(1).upper())
            last = BY_NAME.get(found.group(2).upper()) if found.group(2) else None
            if first is None or (found.group(2) and last is None):
                raise NotationError("abalone", text, NOTATION_HELP + " on the 61 cells")
            line = line_action(first, last, DIRECTIONS.index(found.group(3).upper()))
            if line is None:
                raise IllegalActionError(
                    "abalone", text, str(self), "the two cells are not the ends of a line of 2 or 3"
                )
            action = line
        if action not in self.legal_actions():
            raise IllegalActionError("abalone", text, str(self))
        return action

    def clone(self) -> AbaloneState:
        other = AbaloneState.__new__(AbaloneState)
        other.game = self.game
        other.boards = self.boards[:]
        other.to_move = self.to_move
        other.plies = self.plies
        other.placed = self.placed
        other.pushed_off = self.pushed_off[:]
        other.lost = self.lost[:]
        other.counts = [c[:] for c in self.counts]
        other.ended = self.ended
        other._winner = self._winner
        other._legal = self._legal  # replaced, never mutated
        other._seen = self._seen.copy()
        return other

    def stats(self) -> dict[str, Any]:
        """Per seat: marbles pushed off and lost, moves by kind; plies of play, how it ended."""
        return {
            "plies": self.plies,
            "placements": self.placed,
            "layout": self.game.layout,
            "ended_by": self.ended_by() if self.ended else None,
            "winner": self._winner,
            "per_seat": [
                {
                    "pushed_off": self.pushed_off[s],
                    "lost": self.lost[s],
                    **{name: self.counts[s][i] for i, name in enumerate(COUNTER_NAMES)},
                }
                for s in range(len(self.boards))
            ],
        }

    def ended_by(self) -> Ending:
        return Ending(self.ended) if self.ended else Ending.NORMAL

    # -- hooks for the generic agents --------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        """The rules page's evaluation with its default weights, in [-1, 1] (±1 = game over)."""
        if self.ended:
            return super().evaluate(seat)
        return heuristics.evaluate(self, seat, heuristics.DEFAULT_WEIGHTS)

    def rollout_action(self, rng: random.Random) -> Action:
        return heuristics.rollout_action(self, rng)

    def ordered_actions(self) -> list[Action]:
        return heuristics.ordered_actions(self)

    def key(self) -> Hashable:
        if len(self.boards) == 2:
            return (*self.boards, self.to_move, self.placed)
        return (*self.boards, self.to_move, self.placed, *self.pushed_off)

    def __str__(self) -> str:
        return render(self)


def render(state: AbaloneState) -> str:
    """The hexagon as text, row I on top; ``x`` black, ``o`` white, ``r`` red, ``.`` empty.

    Each row starts with its letter; the numbers label the diagonals running up and to the
    left, 1–5 below row A and 6–9 at the right ends of rows A–D, as on a printed board.
    """
    lines = []
    for r in range(8, -1, -1):
        marks = []
        for c in range(1, 10):
            cell = (r + 1) * 10 + c
            if cell in ROW_OF:
                seat = next((s for s, b in enumerate(state.boards) if b >> cell & 1), -1)
                marks.append(SYMBOLS[seat] if seat >= 0 else ".")
        label = f" {r + 6}" if r < 4 else ""
        lines.append(f"{ROWS[r]} {' ' * abs(r - 4)}{' '.join(marks)}{label}")
    lines.append(" " * 7 + " ".join(str(c) for c in range(1, 6)))
    off = ", ".join(f"{COLOURS[s]} {p}" for s, p in enumerate(state.pushed_off))
    if state.ended:
        winner = state.winner()
        outcome = "draw" if winner == TERMINAL else f"{COLOURS[winner]} (seat {winner}) wins"
        lines.append(f"game over after {state.plies} plies: {outcome} ({state.ended_by()})")
    elif state.placing:
        lines.append(
            f"{COLOURS[state.to_move]} (seat {state.to_move}) to place; "
            f"{state.placed} of {state.game.placements} placed"
        )
    else:
        lines.append(f"{COLOURS[state.to_move]} (seat {state.to_move}) to move; ply {state.plies}")
    lines.append(f"pushed off: {off}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- game


class AbaloneGame(Game):
    """Abalone for 2 or 3 players; options ``layout``, ``marbles_to_win``, ``move_limit``,
    ``repetition_draw``."""

    game_type: ClassVar[GameType] = GameType(
        short_name="abalone",
        long_name="Abalone",
        min_players=2,
        max_players=3,
        chance=False,
        perfect_information=True,
        num_distinct_actions=NUM_ACTIONS,
        # The largest move limit accepted plus the longest placement phase (3 × 11).
        max_game_length=MAX_MOVE_LIMIT + 33,
        options=(
            Option(
                "layout",
                str,
                "standard",
                "start: standard, belgian_daisy, german_daisy (two players) or free_placement "
                "(the board starts empty and the players place their marbles in turn)",
                choices=LAYOUT_NAMES,
            ),
            Option(
                "marbles_to_win",
                int,
                6,
                "marbles a player must push off to win (6; 4 is the Blitz variant)",
                minimum=1,
                maximum=14,
            ),
            Option(
                "move_limit",
                int,
                400,
                "plies of play (placements not counted) after which the game is a draw",
                minimum=1,
                maximum=MAX_MOVE_LIMIT,
            ),
            Option(
                "repetition_draw",
                bool,
                True,
                "the third occurrence of a position with the same player to move is a draw",
            ),
        ),
        points=False,
        # Quiet openings: root values differ by about 0.004 a move, so a margin of 0.01 keeps a
        # handful of moves; four random plies leave the formations nearly whole.
        variation=VariationDefaults(
            opening_plies=4, noise_plies=10, noise_margin=0.01, max_plies=20
        ),
        description=(
            "Push six of the opponent's marbles off a hexagonal board of 61 cells; lines of up "
            "to three marbles move together and push smaller lines (sumito)."
        ),
    )

    def __init__(self, players: int, options: dict[str, Any]) -> None:
        super().__init__(players, options)
        self.layout: str = str(options.get("layout", "standard"))
        self.marbles_to_win: int = int(options.get("marbles_to_win", 6))
        self.move_limit: int = int(options.get("move_limit", 400))
        self.repetition_draw: bool = bool(options.get("repetition_draw", True))
        if players == 3 and self.layout not in ("standard", FREE_PLACEMENT):
            raise OptionError(
                f"layout {self.layout!r} is a two-player start; three players use 'standard' "
                "(the rules page's three-player start) or 'free_placement'",
                field="options.layout",
            )
        self.placements: int = MARBLES[players] * players if self.layout == FREE_PLACEMENT else 0
        """Marbles placed before play (free placement: every marble; else none)."""

    def new_initial_state(self, seed: int = 0) -> AbaloneState:
        """The start position (the game has no chance, so ``seed`` changes nothing)."""
        return AbaloneState(self)


__all__ = ["COLOURS", "AbaloneGame", "AbaloneState", "render"]
