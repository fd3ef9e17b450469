"""How the matches of a batch are made to differ: forced openings, player noise, or nothing.

Deterministic players replay the same lines, so the matches of a batch are only as independent
as something makes them. A batch declares one of three kinds (``Batch.variation``):

``openings``, for comparing agents
    Every match of one round of the seating design (``engines.seating.opening_round``: the
    seat-swapped pair with two players) starts with the same forced opening of ``plies`` plies:
    each ply drawn uniformly among the legal moves (``source`` ``random``), or a line of a book
    of openings (``source`` ``book``), seeded per round. In a game with chance the round also
    shares the game's seed, so its seatings play the same deal. The opening is thus played once
    with every seating, and the round's matches differ by who sits where, not by how they began.
``noise``, for balance questions
    A forced random opening would change the game being measured, so instead, for the first
    ``plies`` plies, every agent that offers root values (``engines.core.SearchAgent``) plays a
    move drawn among its own near-best moves: uniformly among those valued within ``margin`` of
    the best, or with weight exp((value − best) / ``temperature``). The draw comes from a
    generator of its own, seeded per match and seat. Agents without root values play as always.
``none``
    The matches are what the agents and the game's chance make them.

Match ``i`` is still fully determined by the batch and ``i`` (``match_variation``), so a stored
batch replays and resumes exactly. Batches stored before variations existed (``None``) are
played exactly as before and never come here.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engines.core import (
    Action,
    Agent,
    Game,
    IllegalActionError,
    LoadingAgent,
    OptionError,
    SearchAgent,
    State,
    TimedAgent,
    derive_seed,
    match_seed,
    shown,
)

OPENINGS = "openings"
NOISE = "noise"
NONE = "none"
KINDS = (OPENINGS, NOISE, NONE)
RANDOM_SOURCE = "random"
BOOK_SOURCE = "book"
ROUND_UNITS = "round"
LINE_UNITS = "line"
MAX_BOOK_LINES = 10_000
DERIVED_KEYS = frozenset({"default", "noised", "book_digest"})
"""Keys of a stored record that are worked out, not asked for: a request may repeat them (a
stored record sent back as it is) and they are recomputed."""
_KEYS = {
    OPENINGS: frozenset({"kind", "plies", "source", "book", "units"}),
    NOISE: frozenset({"kind", "plies", "margin", "temperature"}),
    NONE: frozenset({"kind"}),
}


@dataclass(frozen=True)
class Variation:
    """A validated variation, as a batch stores it (``record``) and replays it
    (``from_record``). ``book`` holds the book's lines in canonical notation, cut to ``plies``;
    ``noised`` the labels of the agents that offer root values (the ones noise moves)."""

    kind: str
    plies: int = 0
    source: str | None = None
    book: tuple[tuple[str, ...], ...] = ()
    margin: float | None = None
    temperature: float | None = None
    noised: tuple[str, ...] = ()
    default: bool = False
    units: str = ROUND_UNITS
    """``line``: the book's lines stand for openings beyond it, so the analysis counts the
    matches of one line as one unit of sampling (``analysis.units``); ``round`` (the default)
    counts each round, what the batch draws."""

    def record(self) -> dict[str, Any]:
        """The JSON object a batch stores; every key of its kind is present."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == OPENINGS:
            out.update(plies=self.plies, source=self.source)
            if self.source == BOOK_SOURCE:
                out.update(book=[list(line) for line in self.book], book_digest=self.digest())
                if self.units == LINE_UNITS:
                    out["units"] = LINE_UNITS
        elif self.kind == NOISE:
            out.update(
                plies=self.plies,
                margin=self.margin,
                temperature=self.temperature,
                noised=list(self.noised),
            )
        out["default"] = self.default
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Variation:
        """The variation of a stored record (trusted: it was validated when stored)."""
        return cls(
            kind=record["kind"],
            plies=int(record.get("plies", 0)),
            source=record.get("source"),
            book=tuple(tuple(line) for line in record.get("book", ())),
            margin=record.get("margin"),
            temperature=record.get("temperature"),
            noised=tuple(record.get("noised", ())),
            default=bool(record.get("default", False)),
            units=str(record.get("units", ROUND_UNITS)),
        )

    def digest(self) -> str:
        """A digest of the book's lines (empty without a book): equal books, equal digests."""
        if not self.book:
            return ""
        text = "\n".join(",".join(line) for line in self.book).encode()
        return hashlib.blake2b(text, digest_size=16).hexdigest()

    def describe(self) -> str:
        """One line for people: what the batch's matches vary by."""
        if self.kind == OPENINGS:
            if self.source == BOOK_SOURCE:
                sample = ", a sample of openings" if self.units == LINE_UNITS else ""
                return (
                    f"book openings ({len(self.book)} lines, {self.plies} plies{sample}), per round"
                )
            return f"random openings of {self.plies} plies, one per round"
        if self.kind == NOISE:
            how = (
                f"temperature {self.temperature:g}"
                if self.temperature is not None
                else f"within {self.margin:g} of the best"
            )
            who = ", ".join(self.noised) or "no agent offers root values"
            return f"player noise for {self.plies} plies, {how} ({who})"
        return "no variation"


# --------------------------------------------------------------------------- validation


def _whole(value: Any, field: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"{field} must be a whole number, not {shown(value)}", field=field)
    if not 0 <= value <= high:
        raise OptionError(f"{field} must be between 0 and {high}, not {shown(value)}", field=field)
    return value


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(f"{field} must be a number, not {shown(value)}", field=field)
    try:
        number = float(value)
    except OverflowError:
        raise OptionError(f"{field} is too large: {shown(value)}", field=field) from None
    if not math.isfinite(number):
        raise OptionError(f"{field} must be a finite number, not {number}", field=field)
    if number < 0:
        raise OptionError(f"{field} must be at least 0, not {number:g}", field=field)
    return number


def parse_variation(raw: Any, game: Game) -> Variation:
    """Check a requested variation against ``game``; every error names its field
    (``variation.kind``, ``variation.plies``, ``variation.book[2]``...).

    ``plies`` defaults to the game's (``GameType.variation``); a book's to its shortest line.
    ``noised`` is left empty: which agents noise moves is the planner's to say.
    """
    if not isinstance(raw, Mapping):
        raise OptionError(
            f"variation must be an object with a 'kind', not {shown(raw)}", field="variation"
        )
    kind = raw.get("kind")
    if kind not in KINDS:
        raise OptionError(
            f"variation.kind must be one of {', '.join(KINDS)}, not {shown(kind)}",
            field="variation.kind",
        )
    unknown = sorted(set(raw) - _KEYS[kind] - DERIVED_KEYS)
    if unknown:
        known = ", ".join(sorted(_KEYS[kind]))
        raise OptionError(
            f"unknown key {shown(unknown[0])} for a variation of kind {kind}; known: {known}",
            field=f"variation.{unknown[0]}",
        )
    defaults = game.game_type.variation
    top = defaults.max_plies
    if kind == OPENINGS:
        return _openings(raw, game, top)
    if kind == NOISE:
        plies = _whole(raw.get("plies", defaults.noise_plies), "variation.plies", top)
        margin = raw.get("margin")
        temperature = raw.get("temperature")
        if margin is not None and temperature is not None:
            raise OptionError(
                "give variation.margin or variation.temperature, not both",
                field="variation.temperature",
            )
        if temperature is not None:
            heat = _number(temperature, "variation.temperature")
            if heat == 0:
                raise OptionError(
                    "variation.temperature must be above 0 (margin 0 keeps only the best moves)",
                    field="variation.temperature",
                )
            return Variation(NOISE, plies, temperature=heat)
        width = defaults.noise_margin if margin is None else _number(margin, "variation.margin")
        return Variation(NOISE, plies, margin=width)
    return Variation(NONE)


def _openings(raw: Mapping[str, Any], game: Game, top: int) -> Variation:
    source = raw.get("source", BOOK_SOURCE if "book" in raw else RANDOM_SOURCE)
    if source not in (RANDOM_SOURCE, BOOK_SOURCE):
        raise OptionError(
            f"variation.source must be 'random' or 'book', not {shown(source)}",
            field="variation.source",
        )
    units = raw.get("units", ROUND_UNITS)
    if units not in (ROUND_UNITS, LINE_UNITS) or (units == LINE_UNITS and source != BOOK_SOURCE):
        raise OptionError(
            f"variation.units must be 'round', or 'line' with a book, not {shown(units)}",
            field="variation.units",
        )
    if source == RANDOM_SOURCE:
        if "book" in raw:
            raise OptionError("variation.book is only for source 'book'", field="variation.book")
        plies = raw.get("plies", game.game_type.variation.opening_plies)
        return Variation(OPENINGS, _whole(plies, "variation.plies", top), source=RANDOM_SOURCE)
    lines = _book_lines(raw.get("book"), game)
    plies = _whole(raw.get("plies", min(len(line) for line in lines)), "variation.plies", top)
    for i, line in enumerate(lines):
        if len(line) < plies:
            raise OptionError(
                f"variation.book[{i}] has {len(line)} moves, fewer than the {plies} plies asked",
                field=f"variation.book[{i}]",
            )
    book = tuple(tuple(line[:plies]) for line in lines)
    return Variation(OPENINGS, plies, source=BOOK_SOURCE, book=book, units=units)


def _book_lines(book: Any, game: Game) -> list[list[str]]:
    """The book's lines in canonical notation, each checked move by move from the start."""
    field = "variation.book"
    if game.game_type.chance:
        raise OptionError(
            f"{game.name} has chance: which moves are legal depends on the deal, so a book of "
            "openings cannot be checked; use random openings",
            field=field,
        )
    if not isinstance(book, list) or not book:
        raise OptionError(f"{field} must be a non-empty list of lines of moves", field=field)
    if len(book) > MAX_BOOK_LINES:
        raise OptionError(f"{field} holds {len(book)} lines; at most {MAX_BOOK_LINES}", field=field)
    lines = []
    for i, line in enumerate(book):
        where = f"{field}[{i}]"
        if not isinstance(line, list) or not line or not all(isinstance(m, str) for m in line):
            raise OptionError(f"{where} must be a non-empty list of moves (text)", field=where)
        state = game.new_initial_state(0)
        canonical = []
        for j, text in enumerate(line):
            if state.is_terminal():
                raise OptionError(f"{where}: the game is over before move {j + 1}", field=where)
            try:
                action = state.string_to_action(text)
                canonical.append(state.action_to_string(action))
                state.apply_action(action)
            except IllegalActionError as exc:
                after = " ".join(canonical[:j]) or "the start"
                raise OptionError(
                    f"{where}: move {j + 1} {shown(text)} is not legal after {after}", field=where
                ) from exc
            except (ValueError, LookupError) as exc:  # NotationError, or text no parser expects
                raise OptionError(
                    f"{where}: move {j + 1} {shown(text)} is not a move in {game.name}'s notation",
                    field=where,
                ) from exc
        lines.append(canonical)
    return lines


# --------------------------------------------------------------------------- matches


@dataclass(frozen=True)
class MatchVariation:
    """What the variation makes of one match: the game's seed, the forced opening, the noise,
    and which of its moves make its opening's key."""

    game_seed: int
    script: tuple[Action, ...]
    noise: Variation | None
    key_plies: int | None
    """Plies in the opening's key; None: the caller's default."""
    deal: bool
    """The game has chance: the game's seed is part of the opening's key."""

    def key_moves(self, moves: Sequence[str], default_plies: int) -> tuple[str, ...]:
        """What identifies the match's opening: its first plies, after the deal's seed in a
        game with chance (two deals are two openings whatever their first moves)."""
        plies = default_plies if self.key_plies is None else self.key_plies
        deal = (f"#deal {self.game_seed}",) if self.deal else ()
        return (*deal, *moves[:plies])


def deal_seed(batch_seed: int, round_index: int) -> int:
    """The game's seed shared by the matches of one round under ``openings``."""
    return derive_seed("deal", batch_seed, round_index)


def game_seed(variation: Variation, chance: bool, batch_seed: int, size: int, index: int) -> int:
    """The game's seed of match ``index``: its own, or its round's deal under ``openings`` in a
    game with ``chance``."""
    if variation.kind == OPENINGS and chance:
        return deal_seed(batch_seed, index // size)
    return match_seed(batch_seed, index)


def match_variation(
    variation: Variation, game: Game, batch_seed: int, size: int, index: int
) -> MatchVariation:
    """The variation of match ``index`` of a batch whose rounds hold ``size`` matches."""
    chance = game.game_type.chance
    seed = game_seed(variation, chance, batch_seed, size, index)
    if variation.kind == OPENINGS:
        round_index = index // size
        if variation.source == BOOK_SOURCE:
            line = variation.book[
                _book_order(batch_seed, len(variation.book))[round_index % len(variation.book)]
            ]
            script = tuple(_actions(game, seed, line))
        else:
            rng = random.Random(derive_seed("opening", batch_seed, round_index))
            script = tuple(random_opening(game, seed, variation.plies, rng))
        return MatchVariation(seed, script, None, variation.plies, chance)
    if variation.kind == NOISE:
        return MatchVariation(seed, (), variation, variation.plies, chance)
    return MatchVariation(seed, (), None, None, chance)


@lru_cache(maxsize=64)
def _book_order(batch_seed: int, lines: int) -> tuple[int, ...]:
    """Round r plays line ``order[r % lines]``: every line once before any repeats."""
    order = list(range(lines))
    random.Random(derive_seed("book", batch_seed)).shuffle(order)
    return tuple(order)


def _actions(game: Game, seed: int, line: Sequence[str]) -> list[Action]:
    state = game.new_initial_state(seed)
    return [state.apply_string(text) for text in line]


def random_opening(game: Game, seed: int, plies: int, rng: random.Random) -> list[Action]:
    """``plies`` moves from the start (game seed ``seed``), each uniform among the legal ones;
    fewer if the game ends first."""
    state = game.new_initial_state(seed)
    actions: list[Action] = []
    while len(actions) < plies and not state.is_terminal():
        action = rng.choice(state.legal_actions())
        state.apply(action)
        actions.append(action)
    return actions


# --------------------------------------------------------------------------- players


def offers_root_values(agent: Agent) -> bool:
    """Whether player noise can move ``agent``: it offers ``root_values``."""
    return isinstance(agent, SearchAgent)


def near_best(
    values: Sequence[tuple[Action, float]],
    rng: random.Random,
    *,
    margin: float | None = None,
    temperature: float | None = None,
) -> Action:
    """A move drawn among near-best ones: uniformly among those within ``margin`` of the best
    value, or with weight exp((value − best) / ``temperature``)."""
    best = max(v for _, v in values)
    if temperature is not None:
        weights = [math.exp((v - best) / temperature) for _, v in values]
        return rng.choices([a for a, _ in values], weights)[0]
    width = 0.0 if margin is None else margin
    return rng.choice([a for a, v in values if v >= best - width])


class _Clock:
    """The ply a match is at, shared by its seats' players (each ``step`` is one ply)."""

    __slots__ = ("ply",)

    def __init__(self) -> None:
        self.ply = 0


class VariedAgent:
    """One seat's player in a match with variation: the round's forced opening first, then
    during the noise plies a move among its near-best ones (if it offers root values), then
    its own moves."""

    def __init__(
        self,
        inner: Agent,
        clock: _Clock,
        script: Sequence[Action],
        noise: Variation | None,
        rng: random.Random,
    ) -> None:
        self.inner = inner
        self.clock = clock
        self.script = script
        self.noise = noise if noise is not None and isinstance(inner, SearchAgent) else None
        self.rng = rng

    def step(self, state: State) -> Action:
        ply = self.clock.ply
        self.clock.ply += 1
        if ply < len(self.script):
            return self.script[ply]
        noise = self.noise
        if noise is not None and ply < noise.plies and len(state.legal_actions()) > 1:
            assert isinstance(self.inner, SearchAgent)
            within = noise.margin if noise.temperature is None else None
            values = self.inner.root_values(state, within)
            if values:
                return near_best(
                    values, self.rng, margin=noise.margin, temperature=noise.temperature
                )
        return self.inner.step(state)

    def set_move_time(self, seconds: float | None) -> None:
        """A clocked match's allowance for the next move, passed to the player when it takes
        one (``TimedAgent``); forced opening plies take no time anyway."""
        if isinstance(self.inner, TimedAgent):
            self.inner.set_move_time(seconds)

    def preload(self) -> None:
        """The player's own loading, when it has any (``LoadingAgent``)."""
        if isinstance(self.inner, LoadingAgent):
            self.inner.preload()


def vary_agents(agents: Sequence[Agent], varied: MatchVariation, seed: int) -> list[Agent]:
    """The match's players wrapped in its variation; ``seed`` (the match's) seeds each seat's
    noise generator, apart from the generator the player itself draws from."""
    clock = _Clock()
    return [
        VariedAgent(
            agent,
            clock,
            varied.script,
            varied.noise,
            random.Random(derive_seed("noise", seed, seat)),
        )
        for seat, agent in enumerate(agents)
    ]
