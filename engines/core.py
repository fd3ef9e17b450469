"""The contract every game and every computer player follows.

Names follow OpenSpiel: a ``Game`` is a ruleset with its options fixed, a ``State`` is one
position of it, an ``Agent`` picks actions. Everything random in a match flows from one seed,
so ``(batch seed, match index)`` replays a match move for move.
"""

from __future__ import annotations

import hashlib
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol, TypeAlias, runtime_checkable

from engines.clock import TimeControl as TimeControl
from engines.clock import moves_to_go
from engines.errors import GameError as GameError
from engines.errors import IllegalActionError as IllegalActionError
from engines.errors import NotationError as NotationError
from engines.errors import OptionError as OptionError
from engines.errors import UnknownAgentError as UnknownAgentError
from engines.errors import UnknownGameError as UnknownGameError
from engines.errors import shown as shown
from engines.options import Option as Option
from engines.options import validate_options as validate_options

Action: TypeAlias = int
"""One move, as the game's own integer code (its notation, ``action_to_string``, writes it)."""
Seat: TypeAlias = int
"""A seat at the table, numbered from 0; ``returns()`` and ``scores()`` list one value a seat
in this order."""

TERMINAL: Seat = -1
"""What ``State.current_player()`` answers once the game is over."""


class Ending(StrEnum):
    """How a match ended: the value stored in ``match.ended_by``, named here and nowhere else.

    A game's rules end a game with one of the first five; ``play_match`` cuts a match at the
    batch's ply cap with ``MAX_PLIES`` and ends a clocked one with ``TIME``; a match that did
    not finish is stored failed with one of ``ERROR``, ``TIME_LIMIT`` or ``ABANDONED``.
    ``FAILED`` is never stored: it is how reports and filters name every failed match
    together.
    """

    NORMAL = "normal"
    """The rules decided the game (a win, or a result the rules score)."""
    REPETITION = "repetition"
    """Drawn by a repeated position (Abalone, Alquerque)."""
    NO_CAPTURE = "no_capture"
    """Drawn by Alquerque's no-capture rule."""
    NO_MOVE = "no_move"
    """Drawn because the player to move has no legal move (three-player Abalone)."""
    MOVE_LIMIT = "move_limit"
    """Drawn by a game's own move-limit rule (Abalone's ``move_limit`` option). Rows stored
    before ``MAX_PLIES`` existed also say ``move_limit`` for a match cut by the batch's cap."""
    MAX_PLIES = "max_plies"
    """Cut by the batch's own ply cap (its ``max_plies``) before the game ended: a draw."""
    TIME = "time"
    """A clocked match (``time_control``) lost on time: the seat whose clock ran out loses and
    the others share the win."""
    ERROR = "error"
    """Failed: playing the match raised."""
    TIME_LIMIT = "time_limit"
    """Failed: stopped, or never started, because its chunk ran out of time."""
    ABANDONED = "abandoned"
    """Failed: its chunk was given up after too many deliveries without a result."""
    FAILED = "failed"
    """Any failed match, as reports and filters group them (never stored)."""


# --------------------------------------------------------------------------- games


@dataclass(frozen=True)
class VariationDefaults:
    """How a game's batches make their matches differ unless they say (``engines.variation``):
    random openings of ``opening_plies`` plies when the agents differ (0: none, a round still
    shares its deal), else ``noise_plies`` plies of player noise within ``noise_margin`` (on
    ``State.evaluate``'s scale) of the best move; ``max_plies``: the most a batch may ask."""

    opening_plies: int = 4
    noise_plies: int = 10
    noise_margin: float = 0.05
    max_plies: int = 20


@dataclass(frozen=True)
class GameType:
    """What a game is, declared once (OpenSpiel's ``GameType`` + ``GameInfo``)."""

    short_name: str
    """The name every command and the API take: lower-case letters, digits and underscores; a
    package's entry point has this name."""
    long_name: str
    """The game's name for people (``Les Alvéoles``)."""
    min_players: int
    """The fewest players it is played by."""
    max_players: int
    """The most players it is played by."""
    chance: bool
    """Whether chance takes part (a deal, dice); every chance outcome comes from the seed."""
    perfect_information: bool
    """False when a seat cannot see part of the position (a hidden deck); such a game writes
    ``State.resample_from_infostate``."""
    num_distinct_actions: int
    """How many action codes the game uses: every action lies from 0 to this number minus
    one (OpenSpiel's bridge asks it)."""
    max_game_length: int
    """Longest game in plies, or the default ply cap where the rules allow endless play."""
    options: tuple[Option, ...] = ()
    """Its options; playtester validates a batch's values before building the game, whose
    ``options`` then hold them by name."""
    points: bool = False
    """True when ``scores()`` are game points worth reporting (Alvéoles, Alhambra)."""
    description: str = ""
    """A sentence or two saying what the game is, for ``playtester games`` and the dashboard."""
    variation: VariationDefaults = VariationDefaults()
    """The game's default openings and player noise (see ``VariationDefaults``)."""


class Game(ABC):
    """A ruleset with its player count and options fixed. Immutable and cheap to share."""

    game_type: ClassVar[GameType]
    """What the game is; every ``Game`` subclass sets it."""

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        self.num_players = players
        self.options: dict[str, Any] = dict(options)

    @property
    def name(self) -> str:
        """The game's ``short_name``."""
        return self.game_type.short_name

    @abstractmethod
    def new_initial_state(self, seed: int = 0) -> State:
        """The start position; every random choice of the game flows from ``seed``."""

    def params(self) -> dict[str, Any]:
        """Everything needed to rebuild this game with ``load_game``."""
        return {"players": self.num_players, **self.options}

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"load_game({self.name!r}, {opts})"


class State(ABC):
    """One position. ``apply_action`` checks; ``apply`` is the unchecked fast path for search."""

    game: Game
    """The game this is a position of."""

    # -- the OpenSpiel surface --------------------------------------------------------
    @abstractmethod
    def current_player(self) -> Seat:
        """Seat to move, 0-based; ``TERMINAL`` (-1) when the game is over."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """Legal actions in ascending order; empty exactly when the game is over."""

    @abstractmethod
    def apply(self, action: Action) -> None:
        """Play ``action`` without checking it is legal (callers know it is)."""

    def apply_action(self, action: Action) -> None:
        """Play ``action``; raise ``IllegalActionError`` if it is not legal here."""
        if self.is_terminal():
            raise IllegalActionError(
                self.game.name, self._describe_action(action), str(self), "the game is over"
            )
        if action not in self.legal_actions():
            raise IllegalActionError(self.game.name, self._describe_action(action), str(self))
        self.apply(action)

    @abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over: ``legal_actions()`` is empty exactly then."""

    @abstractmethod
    def returns(self) -> list[float]:
        """Per-seat share of the win: winners split 1.0, so the list sums to 1."""

    def scores(self) -> list[float]:
        """Per-seat game points (squares, marbles pushed off, ...); by default the returns."""
        return self.returns()

    @abstractmethod
    def action_to_string(self, action: Action) -> str:
        """The canonical notation of the game (its ``docs/rules/<game>.md``)."""

    @abstractmethod
    def string_to_action(self, text: str) -> Action:
        """Any notation ``docs/rules/<game>.md`` allows -> action; ``NotationError`` when it
        cannot parse, ``IllegalActionError`` when it parses but is not legal here."""

    @abstractmethod
    def clone(self) -> State:
        """An independent copy: playing on either never changes the other (searches clone
        all the time)."""

    def stats(self) -> dict[str, Any]:
        """Game-specific figures for analysis (JSON-able); ``per_seat`` lists one dict a seat."""
        return {}

    def ended_by(self) -> Ending:
        """How a finished game ended: ``Ending.NORMAL`` or a game's own rule
        (``Ending.REPETITION``...)."""
        return Ending.NORMAL

    def resample_from_infostate(self, seat: Seat, rng: random.Random) -> State:
        """A copy consistent with what ``seat`` knows; hidden parts re-drawn from ``rng``."""
        return self.clone()

    # -- hooks the generic agents use ------------------------------------------------
    def evaluate(self, seat: Seat) -> float:
        """Heuristic value of this position for ``seat`` in [-1, 1] (1 = won)."""
        if self.is_terminal():
            r = self.returns()
            n = len(r)
            return (r[seat] - 1.0 / n) * n / (n - 1) if n > 1 else 0.0
        return 0.0

    def rollout_action(self, rng: random.Random) -> Action:
        """The move a playout takes; uniform by default, games may do better."""
        return rng.choice(self.legal_actions())

    def ordered_actions(self) -> list[Action]:
        """Legal actions, most promising first (for alpha-beta move ordering)."""
        return self.legal_actions()

    def key(self) -> Hashable:
        """A hashable identity of the position (board and side to move)."""
        return str(self)

    # -- helpers ---------------------------------------------------------------------
    def _describe_action(self, action: Action) -> str:
        try:
            return self.action_to_string(action)
        except Exception:
            return str(action)

    def apply_string(self, text: str) -> Action:
        """Parse, check and play one action given in notation; return the action."""
        action = self.string_to_action(text)
        self.apply_action(action)
        return action


# --------------------------------------------------------------------------- agents


class Agent(Protocol):
    """A computer player. It must not mutate the state it is handed. A search agent may also
    offer the optional ``root_values`` (``SearchAgent``), which player noise needs, and the
    optional ``set_move_time`` (``TimedAgent``), which clocked matches use, and the optional
    ``preload`` (``LoadingAgent``)."""

    def step(self, state: State) -> Action:
        """The legal action it plays for the seat to move in ``state``, which it leaves
        unchanged."""
        ...


@runtime_checkable
class TimedAgent(Agent, Protocol):
    """An agent that can search within a time allowance (Blitz clocks, ``time_control``).

    In a clocked match ``play_match`` calls ``set_move_time(seconds)`` before each ``step`` of
    the agent: the wall time this move may take (``engines.clock.TimeControl.move_time``, a
    share of the clock left). The search then stops when that time is spent or its own node
    or iteration budget is, whichever comes first, and plays the best move found so far (an
    iterative deepening search: the last depth completed; at least one depth or iteration
    always completes). ``root_values`` keeps to the same allowance. ``None`` means no time
    limit: the budget alone, as in a match without a clock, which never calls it. Agents that
    search by iterative deepening or MCTS offer it; others play as fast as they do anyway.
    """

    def set_move_time(self, seconds: float | None) -> None:
        """Limit the next ``step`` (and ``root_values``) to ``seconds`` of wall time; ``None``:
        the budget alone."""
        ...


@runtime_checkable
class LoadingAgent(Agent, Protocol):
    """An agent whose first move would otherwise load code (the compiled searches: numba
    compiles them, or loads them from its cache, on first call). ``preload()`` does that
    loading, and nothing a later move would notice: the agent's generator and budgets are
    left as they were. ``play_match`` calls it before a clocked match's first clock starts, so
    no move is charged for loading."""

    def preload(self) -> None: ...


@runtime_checkable
class SearchAgent(Agent, Protocol):
    """An agent that can say what its search thinks of each move at the root.

    ``root_values(state, within)`` lists ``(action, value)`` for legal actions of ``state``,
    each valued by the search ``step`` runs (same budget, same generator), for the seat to
    move, higher better, on the scale of ``State.evaluate`` ([-1, 1]); a search may go beyond
    it for decided games (alpha-beta's ±(1000 − plies)). It may leave out moves it could not
    value (an MCTS move searched too rarely) but lists at least one. Given ``within``, only
    the moves valued within ``within`` of the best need exact values: any other may be given
    an upper bound, as long as that bound is itself more than ``within`` below the best (so
    alpha-beta can keep its cut-offs). Like ``step`` it must not mutate ``state``; it may draw
    from the agent's generator.
    """

    def root_values(self, state: State, within: float | None = None) -> list[tuple[Action, float]]:
        """``(action, value)`` for the moves at the root of ``state``, as the class says."""
        ...


@dataclass(frozen=True)
class AgentType:
    """A registered player: its parameters, the games it can play, and how to build it.

    ``factory(game, rng, **params)`` builds it; ``presets`` fixes some parameters (a named
    strategy like ``hunter`` is a preset of ``value``) and the rest keep their defaults unless
    given.
    """

    name: str
    """What an agent spec calls it (``mcts``)."""
    description: str
    """One line for the games listing (``playtester games``, ``GET /games``)."""
    factory: Callable[..., Agent]
    """``factory(game, rng, **params)`` builds the player; it draws only from ``rng``."""
    params: tuple[Option, ...] = ()
    """Its parameters, validated as a game's options are."""
    games: tuple[str, ...] | None = None
    """Games it plays; ``None`` = every game."""
    min_players: int = 1
    """The fewest players of a game it plays."""
    max_players: int = 99
    """The most players of a game it plays."""
    presets: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[Game, Mapping[str, Any], str], None] | None = None
    """``check(game, params, prefix)`` refuses validated parameters this game cannot take
    (``mcts``'s ``backend`` ``compiled`` on a game without a kernel) with an ``OptionError``
    whose field is ``prefix`` + the parameter's name."""
    hidden_information_only: bool = False
    """Plays only games whose ``GameType`` declares hidden information (the information-set
    search ``ismcts``)."""

    def plays(self, game_type: GameType) -> bool:
        """Whether it plays this kind of game, at some player count."""
        return (self.games is None or game_type.short_name in self.games) and (
            not self.hidden_information_only or not game_type.perfect_information
        )

    def supports(self, game: Game) -> bool:
        """Whether it plays ``game``, at that game's player count."""
        return self.plays(game.game_type) and (
            self.min_players <= game.num_players <= self.max_players
        )

    def describe(self) -> dict[str, Any]:
        """Its entry in the games listing: name, description, games, players, parameters."""
        return {
            "name": self.name,
            "description": self.description,
            "games": list(self.games) if self.games is not None else "all",
            "players": [self.min_players, self.max_players],
            "params": [p.describe() for p in self.params],
        }


def agent_label(spec: Mapping[str, Any]) -> str:
    """A short stable label for an agent spec: ``mcts(iterations=400)`` or ``hard``."""
    name = str(spec.get("name", "?"))
    extra = {k: v for k, v in spec.items() if k != "name"}
    if not extra:
        return name
    return name + "(" + ",".join(f"{k}={extra[k]}" for k in sorted(extra)) + ")"


# --------------------------------------------------------------------------- seeds


def derive_seed(*parts: int | str) -> int:
    """A 63-bit seed from a tuple of ints/strings; stable across runs, platforms and Pythons."""
    data = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


def match_seed(batch_seed: int, match_index: int) -> int:
    """The seed of one match of a batch: the game's chance and every agent flow from it."""
    return derive_seed("match", batch_seed, match_index)


def agent_rng(seed: int, seat: Seat) -> random.Random:
    return random.Random(derive_seed("agent", seed, seat))


# --------------------------------------------------------------------------- matches


@dataclass(frozen=True)
class MatchResult:
    """Everything kept of one match. Seat order is the game's; ``agents`` are labels by seat."""

    seed: int
    agents: tuple[str, ...]
    returns: tuple[float, ...]
    scores: tuple[float, ...]
    plies: int
    ended_by: Ending
    moves: tuple[str, ...]
    stats: dict[str, Any]
    duration: float
    first_player: Seat = 0
    """The seat that moved first. Play goes round the table from it, so a seat's turn position
    is ``(seat - first_player) % seats``: in Alhambra the starting seat is drawn, elsewhere it
    is seat 0."""
    move_times: tuple[tuple[float, ...], ...] | None = None
    """In a clocked match, per seat the seconds each of its moves took, in order (a seat that
    lost on time ends with the move that ran its clock out, which was not played); None
    without a clock."""

    @property
    def seats(self) -> int:
        return len(self.agents)

    def ranks(self) -> list[int]:
        """1 = best; seats level on returns, then on points, share a rank."""
        keys = [(self.returns[s], self.scores[s]) for s in range(self.seats)]
        return [1 + sum(other > mine for other in keys) for mine in keys]


def play_match(
    game: Game,
    agents: Sequence[Agent],
    seed: int,
    max_plies: int | None = None,
    labels: Sequence[str] | None = None,
    *,
    time_control: TimeControl | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> MatchResult:
    """Play one whole match; ``max_plies`` (default: the game's cap) ends it as a draw
    (``Ending.MAX_PLIES``), told apart from a game's own move-limit rule.

    With ``time_control`` each seat has a clock: the time of each of its ``step`` calls, read
    from ``clock``, is taken off it and the increment added after the move. A step that takes
    longer than the seat's clock holds loses the match on time (``Ending.TIME``: the move is
    not played, the others share the win). An agent offering ``set_move_time``
    (``TimedAgent``) is told before each step how long the move may take, and every agent
    offering ``preload`` (``LoadingAgent``) loads before the first clock starts. ``clock`` is
    there for tests; play reads the wall clock.
    """
    if len(agents) != game.num_players:
        raise OptionError(
            f"{game.name} with {game.num_players} players needs {game.num_players} agents, "
            f"got {len(agents)}",
            field="agents",
        )
    cap = game.game_type.max_game_length if max_plies is None else max_plies
    hidden = not game.game_type.perfect_information
    view_rng = random.Random(derive_seed("view", seed))
    if time_control is not None:
        for agent in agents:  # every clock starts after every player has loaded
            if isinstance(agent, LoadingAgent):
                agent.preload()
    started = time.perf_counter()
    state = game.new_initial_state(seed)
    first_player = max(state.current_player(), 0)
    moves: list[str] = []
    seats = game.num_players
    remaining = [time_control.base if time_control else 0.0] * seats
    used: list[list[float]] = [[] for _ in range(seats)]
    flagged: Seat | None = None
    while not state.is_terminal() and len(moves) < cap:
        seat = state.current_player()
        view = state.resample_from_infostate(seat, view_rng) if hidden else state
        agent = agents[seat]
        if time_control is None:
            action = agent.step(view)
        else:
            if isinstance(agent, TimedAgent):
                to_go = moves_to_go(cap - len(moves), seats)
                agent.set_move_time(time_control.move_time(remaining[seat], to_go))
            began = clock()
            action = agent.step(view)
            spent = clock() - began
            used[seat].append(spent)
            if spent > remaining[seat]:
                flagged = seat
                break
            remaining[seat] += time_control.increment - spent
        text = state.action_to_string(action)
        state.apply_action(action)
        moves.append(text)
    if flagged is not None:
        others = 1.0 / (seats - 1) if seats > 1 else 0.0
        returns = tuple(0.0 if s == flagged else others for s in range(seats))
        ended_by = Ending.TIME
    elif state.is_terminal():
        returns = tuple(state.returns())
        ended_by = state.ended_by()
    else:
        returns = tuple([1.0 / game.num_players] * game.num_players)
        ended_by = Ending.MAX_PLIES
    return MatchResult(
        seed=seed,
        agents=tuple(labels) if labels is not None else tuple(type(a).__name__ for a in agents),
        returns=returns,
        scores=tuple(state.scores()),
        plies=len(moves),
        ended_by=ended_by,
        moves=tuple(moves),
        stats=state.stats(),
        duration=time.perf_counter() - started,
        first_player=first_player,
        move_times=None if time_control is None else tuple(tuple(u) for u in used),
    )


def replay(game: Game, moves: Sequence[str], seed: int = 0) -> State:
    """The position after playing ``moves`` (notation) from the start, each one checked."""
    state = game.new_initial_state(seed)
    for text in moves:
        state.apply_string(text)
    return state
