"""The conformance kit: random games from many seeds, checking what the service relies on.

Every game, ours or an installed package's, is played here before the service trusts it
(``playtester check-game``, ``engines.testing`` for an author's own tests, and the suite over
our games). Each seed plays one random game; the kit stops that game at its first failure and
names the check, the seed and the ply that show it. The checks:

- ``legal``: until the end the seat to move is a seat and its legal actions are sorted,
  distinct and never empty; at the end there are none and ``current_player`` is ``TERMINAL``.
- ``clone``: playing on a clone leaves the original as it was.
- ``determinism``: the same seed and the same choices give the same positions, whatever the
  process's global random generator holds (a game draws only from its seed).
- ``notation``: every legal action's text reads back as that action.
- ``returns``: at the end, one finite return per seat, each in [0, 1], summing to 1, one finite
  score per seat, and an ending the rules may give (``Ending.NORMAL`` or a draw rule's).
- ``chance``: the seed is the game's only chance. A game declaring none gives the same
  positions for the same moves whatever the seed; a game declaring chance plays differently
  from some other seed (this one is judged over the whole run).
- ``hidden``: a game declaring hidden information gives a seat a view
  (``resample_from_infostate``) drawn from what that seat knows alone: two positions it cannot
  tell apart give the same view from the same generator, with the same seat to move and, for
  the seat to move, the same legal actions; and the views do differ from the truth (judged
  over the run).
- ``length``: every game is over within the declared ``max_game_length``.
- ``pickle``: a position survives pickling (workers ship them) and plays on the same.

Speed is the time spent in the game's own calls (new positions, legal actions, moves), not in
the checks: plies and games per second of random play.
"""

from __future__ import annotations

import math
import pickle
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.core import TERMINAL, Action, Ending, Game, State, derive_seed
from engines.errors import OptionError
from engines.registry import build_game, game_class

CHECKS = (
    "legal",
    "clone",
    "determinism",
    "notation",
    "returns",
    "chance",
    "hidden",
    "length",
    "pickle",
)
RULES_ENDINGS = frozenset(
    {Ending.NORMAL, Ending.REPETITION, Ending.NO_CAPTURE, Ending.NO_MOVE, Ending.MOVE_LIMIT}
)
"""The endings a game's rules may give; the others are the service's (cut, lost on time,
failed)."""
SAMPLE_EVERY = 3
"""By default the costlier checks (clone, pickle, every legal action's notation, hidden views)
run at one ply in this many, a different one per seed."""
REPLAY_EVERY = 4
"""One seed in this many is played twice (determinism and chance)."""


@dataclass(frozen=True)
class Failure:
    """One broken promise, with what it takes to see it again: the seed and the ply."""

    check: str
    seed: int
    ply: int
    players: int
    message: str

    def __str__(self) -> str:
        return (
            f"{self.check}: seed {self.seed}, ply {self.ply} ({self.players} players): "
            f"{self.message}"
        )


@dataclass
class ConformanceReport:
    """What a run of the kit played and found."""

    game: str
    games: int = 0
    plies: int = 0
    seconds: float = 0.0
    """Time spent in the game's own calls."""
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def speed_line(self) -> str:
        seconds = max(self.seconds, 1e-9)
        return (
            f"{self.game}: {self.games:,} games, {self.plies:,} plies in {self.seconds:.2f} s "
            f"of play: {self.plies / seconds:,.0f} plies/s, {self.games / seconds:,.1f} games/s"
        )


class _Stop(Exception):  # noqa: N818 - not an error: the game's first failure ends it
    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass
class _Seen:
    """What the run-wide checks need: whether chance or hidden views ever showed."""

    sample_every: int
    replayed: int = 0
    chance_showed: bool = False
    views_checked: int = 0
    views_differed: bool = False


@dataclass
class _Run:
    """One game of one seed under check."""

    game: Game
    seed: int
    report: ConformanceReport
    seen: _Seen
    ply: int = 0

    def fail(self, check: str, message: str) -> _Stop:
        return _Stop(Failure(check, self.seed, self.ply, self.game.num_players, message))

    def timed(self, call: Callable[..., Any], *args: Any) -> Any:
        began = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.report.seconds += time.perf_counter() - began


def check_games(
    games: Sequence[Game],
    *,
    count: int,
    first_seed: int = 0,
    name: str | None = None,
    sample_every: int = SAMPLE_EVERY,
) -> ConformanceReport:
    """Play ``count`` random games, seed ``first_seed`` onwards, each on the next of ``games``
    in turn (a game per player count, say), and check every promise on each; the costlier
    checks at one ply in ``sample_every``."""
    if not games:
        raise ValueError("check_games needs at least one game")
    if count < 1 or sample_every < 1:
        raise ValueError("check_games needs count and sample_every of at least 1")
    report = ConformanceReport(game=name or games[0].name)
    seen = _Seen(sample_every=sample_every)
    for index in range(count):
        seed = first_seed + index
        game = games[index % len(games)]
        run = _Run(game, seed, report, seen)
        try:
            keys, actions = _play(run, keep=index % REPLAY_EVERY == 0)
            if index % REPLAY_EVERY == 0:
                _replay(run, keys, actions)
        except _Stop as stop:
            report.failures.append(stop.failure)
        report.games += 1
    _judge_run(games, first_seed, report, seen)
    return report


def check_game(
    name: str,
    *,
    count: int,
    first_seed: int = 0,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
    sample_every: int = SAMPLE_EVERY,
) -> ConformanceReport:
    """The kit over a registered game: ``count`` games spread over every player count it
    allows (or ``players`` alone), with ``options`` (validated as a batch's are)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise OptionError(f"the number of games must be at least 1, not {count!r}", field="games")
    if isinstance(sample_every, bool) or not isinstance(sample_every, int) or sample_every < 1:
        raise OptionError(
            f"sample_every must be at least 1, not {sample_every!r}", field="sample_every"
        )
    game_type = game_class(name).game_type
    counts = (
        range(game_type.min_players, game_type.max_players + 1) if players is None else [players]
    )
    games = [build_game(name, n, options or {}) for n in counts]
    return check_games(
        games,
        count=count,
        first_seed=first_seed,
        name=game_type.short_name,
        sample_every=sample_every,
    )


def _judge_run(
    games: Sequence[Game], first_seed: int, report: ConformanceReport, seen: _Seen
) -> None:
    # Judged on the games that got as far as the check: a run that failed everywhere else
    # has not shown anything about chance or views.
    game = games[0]
    if game.game_type.chance and not seen.chance_showed and seen.replayed >= 2:
        report.failures.append(
            Failure(
                "chance",
                first_seed,
                0,
                game.num_players,
                "the game declares chance, but no other seed changed a position for the "
                f"same moves in {report.games} games",
            )
        )
    if not game.game_type.perfect_information and seen.views_checked and not seen.views_differed:
        report.failures.append(
            Failure(
                "hidden",
                first_seed,
                0,
                game.num_players,
                "the game declares hidden information, but every seat's view was the true "
                f"position in {report.games} games (nothing hidden, or the truth shows)",
            )
        )


def _play(run: _Run, *, keep: bool) -> tuple[list[Any], list[Action]]:
    """One random game with every per-ply check; the positions' keys and the moves, kept for
    a replay when ``keep``."""
    game, seed = run.game, run.seed
    rng = random.Random(derive_seed("conformance", seed))
    cap = game.game_type.max_game_length
    state: State = run.timed(game.new_initial_state, seed)
    keys: list[Any] = []
    actions: list[Action] = []
    while True:
        terminal = run.timed(state.is_terminal)
        if terminal or run.ply >= cap:
            break
        legal = _check_legal(run, state)
        action = rng.choice(legal)
        every = run.seen.sample_every
        sampled = run.ply % every == seed % every
        _check_notation(run, state, legal if sampled else [action])
        if sampled:
            _check_clone(run, state, action)
            if not game.game_type.perfect_information:
                _check_views(run, state)
        if keep:
            keys.append(state.key())
            actions.append(action)
        copy = _pickled(run, state) if sampled else None
        run.timed(state.apply, action)
        if copy is not None:
            _check_pickled_plays_on(run, state, copy, action)
        run.ply += 1
        run.report.plies += 1
    if not state.is_terminal():
        raise run.fail("length", f"not over after the declared max_game_length of {cap} plies")
    _check_end(run, state)
    if keep:
        keys.append(state.key())
    return keys, actions


def _check_legal(run: _Run, state: State) -> list[Action]:
    seat = state.current_player()
    if not 0 <= seat < run.game.num_players:
        raise run.fail("legal", f"current_player() is {seat!r} before the end")
    legal = run.timed(state.legal_actions)
    if not legal:
        raise run.fail("legal", f"no legal action before the end, in:\n{state}")
    if list(legal) != sorted(set(legal)):
        raise run.fail("legal", f"legal actions are not sorted and distinct: {legal[:20]!r}")
    return list(legal)


def _check_notation(run: _Run, state: State, actions: Sequence[Action]) -> None:
    for action in actions:
        try:
            text = state.action_to_string(action)
            back = state.string_to_action(text)
        except Exception as exc:
            raise run.fail("notation", f"action {action} raised {_named(exc)}") from None
        if back != action:
            raise run.fail("notation", f"action {action} reads as {text!r}, which reads {back}")


def _fingerprint(state: State) -> tuple[Any, ...]:
    # ``key`` is the position's identity by contract; its text would only cost more.
    return (state.key(), state.legal_actions(), state.current_player())


def _check_clone(run: _Run, state: State, action: Action) -> None:
    before = _fingerprint(state)
    copy = state.clone()
    if _fingerprint(copy) != before:
        raise run.fail("clone", "a clone differs from its original")
    copy.apply(action)
    if _fingerprint(state) != before:
        text = state.action_to_string(action)
        raise run.fail("clone", f"playing {text!r} on a clone changed the original")


def _pickled(run: _Run, state: State) -> State:
    try:
        copy: State = pickle.loads(pickle.dumps(state))
    except Exception as exc:
        raise run.fail("pickle", f"the position does not pickle: {_named(exc)}") from None
    if _fingerprint(copy) != _fingerprint(state):
        raise run.fail("pickle", "an unpickled position differs from the original")
    return copy


def _check_pickled_plays_on(run: _Run, state: State, copy: State, action: Action) -> None:
    copy.apply(action)
    if copy.key() != state.key():
        raise run.fail("pickle", "an unpickled position plays on differently from the original")


def _check_views(run: _Run, state: State) -> None:
    """What a seat is shown depends on what it knows and the generator alone: the seat to
    move and one other, in turn, at each sampled ply."""
    truth = state.key()
    to_move = state.current_player()
    seats = run.game.num_players
    other_seat = (to_move + 1 + run.ply % max(seats - 1, 1)) % seats
    for seat in sorted({to_move, other_seat}):
        draw = derive_seed("view", run.seed, run.ply, seat)
        view = state.resample_from_infostate(seat, random.Random(draw))
        other = state.resample_from_infostate(seat, random.Random(draw + 1))
        again = other.resample_from_infostate(seat, random.Random(draw))
        if view.key() != again.key():
            raise run.fail(
                "hidden",
                f"seat {seat}'s view depends on what it cannot see: two positions it cannot "
                "tell apart give different views from one generator",
            )
        if view.current_player() != to_move:
            raise run.fail("hidden", f"seat {seat}'s view has another seat to move")
        if seat == to_move and view.legal_actions() != state.legal_actions():
            raise run.fail("hidden", f"the view of seat {seat}, to move, has other legal actions")
        run.seen.views_checked += 1
        if view.key() != truth:
            run.seen.views_differed = True


def _check_end(run: _Run, state: State) -> None:
    n = run.game.num_players
    if state.legal_actions():
        raise run.fail("legal", "the game is over but legal actions remain")
    if state.current_player() != TERMINAL:
        raise run.fail("legal", f"the game is over but current_player() is not {TERMINAL}")
    returns = list(state.returns())
    if len(returns) != n or not all(isinstance(r, int | float) for r in returns):
        raise run.fail("returns", f"returns {returns!r} are not {n} numbers, one per seat")
    if not all(math.isfinite(r) and 0.0 <= r <= 1.0 for r in returns):
        raise run.fail("returns", f"returns {returns!r} are not all finite and in [0, 1]")
    if abs(sum(returns) - 1.0) > 1e-9:
        raise run.fail("returns", f"returns {returns!r} sum to {sum(returns)}, not 1")
    scores = list(state.scores())
    if len(scores) != n or not all(math.isfinite(s) for s in scores):
        raise run.fail("returns", f"scores {scores!r} are not {n} finite numbers")
    if state.ended_by() not in RULES_ENDINGS:
        raise run.fail("returns", f"ended_by() is {state.ended_by()!r}, not an ending of rules")


def _replay(run: _Run, keys: list[Any], actions: list[Action]) -> None:
    """The same seed and moves again, under another global generator: the same positions.
    Then the same moves from another seed: the same positions without chance, and with
    chance, at some seed, others."""
    outer = random.getstate()
    try:
        random.seed(derive_seed("disturb", run.seed))
        same = _positions(run.game, run.seed, actions)
    finally:
        random.setstate(outer)
    for ply, (want, got) in enumerate(zip(keys, same, strict=False)):
        if want != got:
            run.ply = ply
            raise run.fail("determinism", "the same seed and moves reached another position")
    if len(same) != len(keys):
        run.ply = len(same) - 1
        raise run.fail("determinism", "the same seed and moves did not replay")
    run.seen.replayed += 1
    other = _positions(run.game, run.seed + 7919, actions)
    differs = other != keys
    if differs:
        run.seen.chance_showed = True
    if differs and not run.game.game_type.chance:
        run.ply = next(
            (i for i, (a, b) in enumerate(zip(keys, other, strict=False)) if a != b), len(other)
        )
        raise run.fail(
            "chance",
            f"the game declares no chance, but seed {run.seed + 7919} reached another "
            "position with the same moves",
        )


def _positions(game: Game, seed: int, actions: Sequence[Action]) -> list[Any]:
    """The keys of the positions the moves pass through from ``seed``, up to the first move
    that is not legal there."""
    state = game.new_initial_state(seed)
    keys = [state.key()]
    for action in actions:
        if state.is_terminal() or action not in state.legal_actions():
            break
        state.apply(action)
        keys.append(state.key())
    return keys


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
