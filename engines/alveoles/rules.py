"""Les Alvéoles (R.T., 1910): dots and boxes on a valued 8 × 8 board (or smaller), for 2–4
players.

Rules as on ``docs/rules/alveoles.md``. Geometry and action numbering: see
:mod:`engines.alveoles.notation`. The position is kept incrementally so that ``apply`` is a
handful of int operations:

* ``_code[sq]`` is the square's code (:mod:`engines.alveoles.notation`): the number of plates
  around it (low 3 bits) and the sum of the groove numbers already filled (the rest), so a 3-sided
  square's missing groove is ``GROOVE_SUM[sq] - (code >> 3)`` without looking at its neighbours;
* ``_forced`` maps each unclaimed 3-sided square to its missing groove (the forced moves);
* ``_empty`` is the sorted list of empty grooves; ``_unsafe`` the mask of grooves that would give
  some square its third plate.

Agents and heuristics read them through the state's read API (``square_codes``, ``forced``,
``empty_grooves``, ``filled_mask``, ``unsafe_mask`` and the query methods), never directly.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from engines.alveoles import heuristics
from engines.alveoles.layouts import (
    CELLS,
    FILES,
    LAYOUT_SPACE,
    MAX_VALUE,
    SIZE,
    layout_name,
    layout_record,
    layout_shape,
    normalise_layout,
    square_values,
    value_tiers,
)
from engines.alveoles.notation import (
    GROOVE_NAMES,
    GROOVE_SQUARES,
    GROOVE_SUM,
    NOTATION_HELP,
    NUM_GROOVES,
    PLATE_CODE,
    SQUARE_GROOVE_MASK,
    Groove,
    Square,
    board_grooves,
    groove_name,
    parse_groove,
)
from engines.alveoles.scoring import (
    OVERLAPPING,
    SQUARE_BONUS_MODES,
    SeatScore,
    seat_score,
)
from engines.core import (
    TERMINAL,
    Action,
    Game,
    GameError,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    Seat,
    State,
    VariationDefaults,
)

ROLLOUT_SAMPLES = 6
"""Random picks a playout move tries before it lists the safe grooves."""

LAYOUT_OPTION = Option(
    name="layout",
    kind=list,
    default="classic",
    doc=(
        "Square values, and with them the board's size: 'classic' (docs/rules/alveoles.md), "
        "'classic-RxC' for its values on R rows of C squares (2–8 each, decision V5), or rows "
        f"of whole numbers from 1 to {MAX_VALUE:,}, top row first, columns a, b, … left to right "
        "(a flat list of 64 reads as 8 × 8)."
    ),
    check=normalise_layout,
    record=layout_record,
    space=LAYOUT_SPACE,
)
# docs/rules/alveoles.md V4: every owned 3 × 3 window counts unless 'disjoint' is chosen.
SQUARE_BONUS_OPTION = Option(
    name="square_bonus",
    kind=str,
    default=OVERLAPPING,
    doc=(
        "How 3 × 3 blocks score: 'overlapping' (every owned window of the 36, default) or "
        "'disjoint' (the largest number of non-overlapping owned windows), or 'none' (no "
        "bonus at all: square points only, decision V6)."
    ),
    choices=SQUARE_BONUS_MODES,
)


class Alveoles(Game):
    """Les Alvéoles with a fixed player count, layout and bonus rule."""

    game_type = GameType(
        short_name="alveoles",
        long_name="Les Alvéoles",
        min_players=2,
        max_players=4,
        chance=False,
        perfect_information=True,
        num_distinct_actions=NUM_GROOVES,
        max_game_length=NUM_GROOVES,
        options=(LAYOUT_OPTION, SQUARE_BONUS_OPTION),
        points=True,
        # 144 grooves: four random plies already give billions of openings, and early grooves
        # are nearly equal in value.
        variation=VariationDefaults(
            opening_plies=4, noise_plies=10, noise_margin=0.02, max_plies=40
        ),
        description=(
            "Dots and boxes on an 8 × 8 board of valued squares (or a smaller one, by its "
            "layout): closing a numbered square "
            "earns a replay, 3-sided squares must be closed, rows, columns and 3 × 3 blocks "
            "earn 100-point bonuses."
        ),
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        opts = dict(options)
        opts.setdefault("layout", "classic")
        opts.setdefault("square_bonus", OVERLAPPING)
        opts["layout"] = normalise_layout(opts["layout"])
        super().__init__(players, opts)
        self.values: tuple[int, ...] = square_values(opts["layout"])
        """Square values in square order (a1, b1, …, h8); 0 off a smaller board."""
        self.rows, self.cols = layout_shape(opts["layout"])
        self.grooves: tuple[int, ...] = board_grooves(self.rows, self.cols)
        """The board's grooves, ascending (all 144 on the classic 8 × 8 board)."""
        self.groove_mask = sum(1 << g for g in self.grooves)
        self.square_bonus: str = opts["square_bonus"]
        self.next_seat: tuple[int, ...] = tuple((s + 1) % players for s in range(players))
        self.layout_name = layout_name(opts["layout"])

    def new_initial_state(self, seed: int = 0) -> AlveolesState:
        """The empty board, seat 0 to move (the game has no chance: ``seed`` is unused)."""
        return AlveolesState(self)


class AlveolesState(State):
    """One position of Les Alvéoles."""

    __slots__ = (
        "_code",
        "_empty",
        "_filled",
        "_forced",
        "_next",
        "_owned",
        "_owner",
        "_player",
        "_points",
        "_replays",
        "_unsafe",
        "_values",
        "game",
    )

    game: Alveoles

    def __init__(self, game: Alveoles) -> None:
        self.game = game
        self._code = [0] * CELLS
        self._empty = list(game.grooves)
        self._filled = 0
        self._unsafe = 0
        self._forced: dict[int, int] = {}
        self._owner = [-1] * CELLS
        self._owned = [0] * game.num_players
        self._points = [0] * game.num_players
        self._replays = [0] * game.num_players
        self._player = 0
        self._values = game.values
        self._next = game.next_seat

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        return self._player

    def is_terminal(self) -> bool:
        return self._player < 0

    def legal_actions(self) -> list[Action]:
        forced = self._forced
        if forced:
            if len(forced) == 1:
                return list(forced.values())
            return sorted(set(forced.values()))
        return self._empty[:]

    def apply(self, action: Action) -> None:
        # The hot path of every playout: locals only, and the common case (a square's first or
        # second plate) touches nothing but its code.
        self._filled |= 1 << action
        empty = self._empty
        empty.remove(action)
        code = self._code
        inc = PLATE_CODE[action]
        replay = False
        for sq in GROOVE_SQUARES[action]:
            c = code[sq] + inc
            code[sq] = c
            sides = c & 7
            if sides == 1:
                continue
            if sides == 2:
                self._unsafe |= SQUARE_GROOVE_MASK[sq]
            elif sides == 3:
                self._forced[sq] = GROOVE_SUM[sq] - (c >> 3)
            else:
                del self._forced[sq]
                player = self._player
                self._owner[sq] = player
                self._owned[player] |= 1 << sq
                value = self._values[sq]
                self._points[player] += value
                # docs/rules/alveoles.md V3: a numbered square earns another plate; white
                # squares alone pass the turn.
                if value > 1:
                    replay = True
        if replay:
            self._replays[self._player] += 1
            if not empty:
                self._player = TERMINAL
        elif empty:
            self._player = self._next[self._player]
        else:
            self._player = TERMINAL

    def clone(self) -> AlveolesState:
        new = AlveolesState.__new__(AlveolesState)
        new.game = self.game
        new._code = self._code[:]
        new._empty = self._empty[:]
        new._filled = self._filled
        new._unsafe = self._unsafe
        new._forced = self._forced.copy()
        new._owner = self._owner[:]
        new._owned = self._owned[:]
        new._points = self._points[:]
        new._replays = self._replays[:]
        new._player = self._player
        new._values = self._values
        new._next = self._next
        return new

    def seat_scores(self) -> list[SeatScore]:
        """Each seat's square points and bonuses, from the squares owned so far."""
        game = self.game
        return [
            seat_score(mask, game.values, game.square_bonus, (game.rows, game.cols))
            for mask in self._owned
        ]

    def scores(self) -> list[float]:
        """Total points (squares + bonuses) of each seat; bonuses only count complete lines."""
        return [float(s.total) for s in self.seat_scores()]

    def returns(self) -> list[float]:
        """Winners (top total, ties shared) split 1.0; an unfinished game is even."""
        n = self.game.num_players
        if not self.is_terminal():
            return [1.0 / n] * n
        totals = self.scores()
        top = max(totals)
        winners = [s for s in range(n) if totals[s] == top]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]

    def action_to_string(self, action: Action) -> str:
        try:
            return groove_name(action)
        except ValueError as exc:
            raise GameError(f"alveoles: {exc}") from None

    def string_to_action(self, text: str) -> Action:
        groove = parse_groove(text) if isinstance(text, str) else None
        if groove is None:
            raise NotationError("alveoles", str(text), NOTATION_HELP)
        if self.is_terminal():
            raise IllegalActionError("alveoles", text, str(self), "the game is over")
        if not self.game.groove_mask >> groove & 1:
            reason = (
                f"{GROOVE_NAMES[groove]} is not on the {self.game.rows} × {self.game.cols} board"
            )
            raise IllegalActionError("alveoles", text, str(self), reason)
        if self._filled >> groove & 1:
            reason = f"{GROOVE_NAMES[groove]} already has a plate"
            raise IllegalActionError("alveoles", text, str(self), reason)
        if self._forced and groove not in self._forced.values():
            must = ", ".join(GROOVE_NAMES[g] for g in self.legal_actions())
            reason = f"a 3-sided square must be closed first: {must}"
            raise IllegalActionError("alveoles", text, str(self), reason)
        return groove

    def stats(self) -> dict[str, Any]:
        """Per-seat points, squares by value, bonuses and replays; owners of the 64 squares."""
        values = self.game.values
        tiers = value_tiers(values)
        per_seat = []
        for seat, score in enumerate(self.seat_scores()):
            by_value = {str(t): 0 for t in tiers}
            for sq in range(CELLS):
                if self._owner[sq] == seat:
                    by_value[str(values[sq])] += 1
            per_seat.append(
                {
                    "points": score.total,
                    "square_points": score.square_points,
                    "squares": sum(by_value.values()),
                    "squares_by_value": by_value,
                    "row_bonuses": score.rows,
                    "column_bonuses": score.columns,
                    "block_bonuses": score.blocks,
                    "bonus_points": score.bonus_points,
                    "replays": self._replays[seat],
                }
            )
        stats: dict[str, Any] = {
            "per_seat": per_seat,
            "owners": self.owners_string(),
            "value_tiers": tiers,
            "layout": self.game.layout_name or "custom",
            "square_bonus": self.game.square_bonus,
            "placements": self.placements,
        }
        # Named only off the classic 8 x 8, so every match stored before boards had sizes
        # replays to the same stats.
        if (self.game.rows, self.game.cols) != (SIZE, SIZE):
            stats["board"] = f"{self.game.rows}x{self.game.cols}"
        return stats

    # -- read API: live views for agents and heuristics ------------------------------
    # These hand out the state's own containers, not copies: the searches read them at every
    # node. They are typed read-only (Sequence, Mapping) and change as the state is played; copy
    # one to keep it or to change it.

    @property
    def square_codes(self) -> Sequence[int]:
        """Each square's code, a1 … h8: its plates in the low 3 bits (``code & 7``) and the sum
        of their groove numbers above (see :mod:`engines.alveoles.notation`)."""
        return self._code

    @property
    def forced(self) -> Mapping[Square, Groove]:
        """{unclaimed 3-sided square: its missing groove}; when not empty, the forced-closing
        rule allows only these grooves."""
        return self._forced

    @property
    def empty_grooves(self) -> Sequence[Groove]:
        """The grooves without a plate, ascending."""
        return self._empty

    @property
    def filled_mask(self) -> int:
        """The grooves with a plate, as a bitmask (bit ``g`` set = plated)."""
        return self._filled

    @property
    def unsafe_mask(self) -> int:
        """The grooves of every square with two or more plates, as a bitmask: when nothing is
        forced, a plate in an empty one gives some square its third plate."""
        return self._unsafe

    # -- queries used by agents and tests (values and copies) ------------------------
    def owners_string(self) -> str:
        """Owner seat of each square, a1 … h1 then a2 … h8; ``.`` for an unclaimed square."""
        return "".join("." if o < 0 else str(o) for o in self._owner)

    def owner(self, sq: int) -> Seat:
        """Seat owning square ``sq`` (a1 = 0 … h8 = 63), or -1."""
        return self._owner[sq]

    def sides(self, sq: int) -> int:
        """How many plates surround square ``sq``."""
        return self._code[sq] & 7

    def has_plate(self, groove: Action) -> bool:
        """Whether ``groove`` has a plate."""
        return bool(self._filled >> groove & 1)

    @property
    def placements(self) -> int:
        """Plates placed so far (the game ends when the board's grooves are full: 144 on 8 × 8)."""
        return len(self.game.grooves) - len(self._empty)

    def forced_moves(self) -> dict[int, int]:
        """A copy of {3-sided square: its missing groove} (``forced`` is the live view)."""
        return dict(self._forced)

    def owned_masks(self) -> list[int]:
        """A copy of each seat's owned squares as bitmasks (bit ``sq`` set = owned)."""
        return self._owned[:]

    def square_points(self) -> list[int]:
        """Square points (no bonuses) of each seat so far."""
        return self._points[:]

    def safe_mask(self) -> int:
        """Empty grooves that give no square its third plate (as a bitmask)."""
        return ~self._filled & ~self._unsafe & self.game.groove_mask

    def play(self, names: Sequence[str]) -> AlveolesState:
        """Play grooves given by name, each one checked; returns ``self`` for chaining."""
        for text in names:
            self.apply_string(text)
        return self

    # -- hooks for generic agents ----------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        if self._player == TERMINAL:
            return super().evaluate(seat)
        return heuristics.evaluate(self, seat)

    def rollout_action(self, rng: random.Random) -> Action:
        """Greedy playout move: close (numbered first), else a random safe groove, else any.

        It runs on every ply of every MCTS playout, so unlike the other hooks it lives here and
        reads the fields directly: through the read API's properties playouts ran 11 %
        slower.
        """
        forced = self._forced
        if forced:
            if len(forced) == 1:
                for g in forced.values():
                    return g
            values = self._values
            numbered = [g for sq, g in forced.items() if values[sq] > 1]
            if numbered:
                return numbered[0] if len(numbered) == 1 else rng.choice(numbered)
            grooves = list(forced.values())
            return grooves[0] if len(grooves) == 1 else rng.choice(grooves)
        empty = self._empty
        unsafe = self._unsafe
        if self.game.groove_mask & ~(unsafe | self._filled):
            # Some safe groove exists: sample a few, then fall back to listing them.
            n = len(empty)
            for _ in range(ROLLOUT_SAMPLES):
                g = empty[int(rng.random() * n)]
                if not unsafe >> g & 1:
                    return g
            return rng.choice(heuristics.safe_grooves(self))
        return empty[int(rng.random() * len(empty))]

    def ordered_actions(self) -> list[Action]:
        return heuristics.ordered_actions(self)

    def key(self) -> Hashable:
        return (self._filled, tuple(self._owned), self._player)

    def __str__(self) -> str:
        return render(self)


def render(state: AlveolesState) -> str:
    """The board as text: plates as ``---``/``|``, each square its value and owner (``:seat``)."""
    game = state.game
    values, rows, cols = game.values, game.rows, game.cols
    width = max(len(str(values[sq])) for sq in range(CELLS) if values[sq] > 0) + 2
    lines = []
    header = "   " + "".join(f" {f:^{width}}" for f in FILES[:cols])
    lines.append(header)
    for r in range(rows, -1, -1):
        # Horizontal line r (top border first when r == rows).
        row = "   +"
        for c in range(cols):
            plate = state.has_plate(SIZE * r + c)
            row += ("-" * width if plate else " " * width) + "+"
        lines.append(row)
        if r == 0:
            break
        cells = f"{r:>2} "
        sq_row = r - 1
        for c in range(cols + 1):
            g = SIZE * (SIZE + 1) + (SIZE + 1) * sq_row + c
            cells += "|" if state.has_plate(g) else " "
            if c < cols:
                sq = SIZE * sq_row + c
                owner = state.owner(sq)
                text = f"{values[sq]}" + (f":{owner}" if owner >= 0 else "")
                cells += f"{text:^{width}}"
        lines.append(cells)
    mover = state.current_player()
    status = "game over" if mover == TERMINAL else f"seat {mover} to move"
    points = ", ".join(str(p) for p in state.square_points())
    total = len(game.grooves)
    lines.append(f"{status}; plates {state.placements}/{total}; square points [{points}]")
    return "\n".join(lines)
