"""Alquerque (R. C. Bell's rules) as ``docs/rules/alquerque.md`` says: state and game.

The board, its tables and move generation live in ``engines.alquerque.board``; this module
keeps the turn, the draw rules, notation and the hooks the generic agents use.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, ClassVar

from engines.alquerque.board import (
    BASE,
    BLACK,
    COLOURS,
    FULL,
    MAX_PATH,
    NEIGHBOURS,
    POINTS,
    SIZE,
    START_BLACK,
    START_WHITE,
    TWO_POINT_MOVES,
    WHITE,
    Bitboard,
    count_steps,
    decode_path,
    encode_path,
    generate,
    hanging,
    is_capture,
    point_name,
    point_of,
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
    Seat,
    State,
    VariationDefaults,
)

# --------------------------------------------------------------------------- state


_TWO_POINTS = BASE * BASE  # codes below this have two landing points
_SIDE_SHIFT = 2 * POINTS  # position keys: white | black << 25 | side to move << 50


class AlquerqueState(State):
    """One Alquerque position with what the draw rules need (plies since a capture, history).

    The legal actions of the side to move are generated once, right after each move, because the
    end-of-game check needs them anyway. For the repetition rule (decision A3,
    docs/rules/alquerque.md) it keeps the keys of the positions since the last move that cannot
    be undone (anything but a sideways move); empty means "only the current position", the
    first occurrence of itself, whose key is computed when a sideways move needs it.
    """

    __slots__ = (
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
        self.white: Bitboard = START_WHITE
        self.black: Bitboard = START_BLACK
        self.to_move: Seat = WHITE
        self.no_capture = 0
        self.plies = 0
        self.captures = [0, 0]
        self.longest = [0, 0]
        self.ended = ""
        self._winner: Seat = TERMINAL
        self._history: tuple[int, ...] = ()
        self._legal: list[Action] = []
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
    def _settle(self) -> None:
        """Start a position: generate its moves; with no move, the side to move has lost.

        (The draw rules cannot apply yet: no ply has been played from here.) ``apply`` does the
        same work, with the draw checks, inline.
        """
        white, black, to_move = self.white, self.black, self.to_move
        legal = generate(white, black, WHITE) if to_move == WHITE else generate(black, white, BLACK)
        self._history = ()
        self._legal = legal
        if not legal:
            self.ended, self._winner = Ending.NORMAL, 1 - to_move

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        return TERMINAL if self.ended else self.to_move

    def legal_actions(self) -> list[Action]:
        return self._legal[:]  # a copy: callers may sort or shuffle it

    def apply(self, action: Action) -> None:
        # The hot path of every playout and search: locals, one write per attribute, and
        # _settle's work inlined (keep the two in step).
        white, black, mover = self.white, self.black, self.to_move
        short = TWO_POINT_MOVES[action] if action < _TWO_POINTS else None
        if short is not None:
            bits, taken, reversible = short  # only sideways moves can be undone
            if reversible:
                history = self._history or (white | black << POINTS | mover << _SIDE_SHIFT,)
            if mover == WHITE:
                white ^= bits
                black ^= taken
            else:
                black ^= bits
                white ^= taken
            if taken:
                self.captures[mover] += 1
                if not self.longest[mover]:
                    self.longest[mover] = 1
                no_capture = 0
            else:
                no_capture = self.no_capture + 1
        else:
            # A capture of two pieces or more: walk the landing points from the last one back,
            # removing each jumped piece.
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
                white ^= moved
                black &= ~taken
            else:
                black ^= moved
                white &= ~taken
            self.captures[mover] += jumps
            if jumps > self.longest[mover]:
                self.longest[mover] = jumps
            no_capture = 0
            reversible = False
        to_move = 1 - mover
        self.white, self.black, self.to_move = white, black, to_move
        self.no_capture = no_capture
        self.plies += 1
        legal = generate(white, black, WHITE) if to_move == WHITE else generate(black, white, BLACK)
        if reversible:
            key = white | black << POINTS | to_move << _SIDE_SHIFT
            history += (key,)
            self._history = history
        else:
            self._history = ()  # nothing before an irreversible move can recur
        # docs/rules/alquerque.md A4: no move loses first, then the draws of A2 and A3.
        if not legal:
            self.ended, self._winner = Ending.NORMAL, mover
        elif no_capture >= self.limit:
            self.ended = Ending.NO_CAPTURE
        elif reversible and history.count(key) >= 3:
            self.ended = Ending.REPETITION
        else:
            self._legal = legal
            return
        self._legal = []

    def is_terminal(self) -> bool:
        return self.ended != ""

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

    def ended_by(self) -> Ending:
        return Ending(self.ended) if self.ended else Ending.NORMAL

    # -- hooks for the generic agents ------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        """Material, then pieces open to capture, then mobility; in [-1, 1] (±1 = game over)."""
        if self.ended:
            return 0.0 if self._winner == TERMINAL else (1.0 if self._winner == seat else -1.0)
        return evaluate_position(self, seat)

    def rollout_action(self, rng: random.Random) -> Action:
        """Random, except that a capture takes as many pieces as it can."""
        legal = self._legal
        if len(legal) > 1 and is_capture(legal[0]):
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
    def repetition_history(self) -> tuple[int, ...]:
        """Keys (``white | black << 25 | side << 50``) of the positions since the last move
        that cannot be undone, oldest first; empty when that move was the last one played."""
        return self._history

    @property
    def has_capture(self) -> bool:
        """True when the side to move must capture."""
        legal = self._legal
        return bool(legal) and is_capture(legal[0])

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
    own_hanging = hanging(enemy, own, empty)
    enemy_hanging = hanging(own, enemy, empty)
    if state.to_move == seat:
        danger = (enemy_hanging - 0.5 * own_hanging) / 12.0
    else:
        danger = (0.5 * enemy_hanging - own_hanging) / 12.0
    mobility = (count_steps(own, empty, seat) - count_steps(enemy, empty, 1 - seat)) / 40.0
    value = 0.7 * material + 0.2 * danger + 0.1 * mobility
    return max(-1.0, min(1.0, value))


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
        # docs/rules/alquerque.md A5, a default cap and not a rule: the draw rules end every
        # game, but only after up to (captures + 1) * no_capture_limit plies; 400 plies is far
        # beyond real games.
        max_game_length=400,
        options=(
            Option(  # docs/rules/alquerque.md A2
                "no_capture_limit",
                int,
                50,
                "consecutive plies without a capture that end the game as a draw",
                minimum=1,
                maximum=1000,
            ),
        ),
        points=False,
        # The first plies hold few choices (12 lines of 4 plies, 1,924 of 8), so openings
        # are longer; 0.05 is under two-thirds of a piece in the evaluation.
        variation=VariationDefaults(
            opening_plies=8, noise_plies=10, noise_margin=0.05, max_plies=20
        ),
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
