"""OpenSpiel games checked and played in a child process (``workers.isolation``).

The engines only say whether a request is valid (``engines.openspiel.spiel`` refuses bad
parameters and games past its size caps with an ``OptionError``); they do no I/O, so they cannot
protect the process they run in from OpenSpiel's native code. This module is that protection,
in the layer that runs games and may start processes:

- ``plan_isolated``: a request naming an OpenSpiel game is planned (``workers.batches``) in a
  child under ``CHECK_LIMITS``. A crash, a limit or an uncaught exception there is a 422 naming
  the options (or the one option given, or the game). Answers are kept per request (seed
  aside), so a repeated request, good or bad, starts no child. At most
  ``NATIVE_CHECKS_AT_ONCE`` children check at once and ``NATIVE_CHECKS_WAITING`` more requests
  wait their turn, first come first served (``CheckQueue``); one more is refused at once with
  ``ChecksBusyError`` (the API's 429), so a flood of slow checks (bridge) costs a cheap one a
  wait of at most ``ceil(waiting / at_once)`` checks' wall limit, or a prompt refusal.
- ``iter_isolated``: a chunk of an OpenSpiel batch is played in a child under ``MATCH_LIMITS``
  per match. A match that crashes it or passes a limit is recorded as failed with the reason,
  and the rest of the chunk goes on in a new child: the worker itself never runs the game.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from engines.core import Ending, OptionError, match_seed
from engines.registry import SPIEL_PREFIX
from storage.models import BatchBase, BatchPlan
from storage.records import MatchRecord
from storage.settings import Settings
from workers.isolation import ChildFailedError, Limits, call_isolated, stream_isolated

CHECK_LIMITS = Limits(memory_bytes=1536 * 2**20, cpu_seconds=10.0, wall_seconds=20.0)
"""What checking one OpenSpiel request may use: loading the game, its agents and openings."""
MATCH_LIMITS = Limits(memory_bytes=2048 * 2**20, cpu_seconds=600.0, wall_seconds=900.0)
"""What one match of an OpenSpiel game may use in a worker."""
CHECK_RETRY_SECONDS = 5
"""The ``Retry-After`` of a check refused because the queue is full: most checks take tens of
milliseconds, the slowest ``CHECK_LIMITS.wall_seconds``."""
CACHE_SIZE = 1024
"""Checked requests remembered (the last ones used)."""

_cache: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
_cache_lock = threading.Lock()


class ChecksBusyError(RuntimeError):
    """As many OpenSpiel checks run and wait as the settings allow (the API's 429): try again
    in ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int = CHECK_RETRY_SECONDS) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CheckQueue:
    """Turns to check a request in a child: at most ``at_once`` at a time, and at most
    ``waiting`` more waiting, served in the order they came; one more raises
    ``ChecksBusyError`` at once. The bounds are given with each ``turn`` (the settings of the
    caller); a freed turn goes straight to the first waiter, so no later request overtakes it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._waiters: deque[threading.Event] = deque()

    def counts(self) -> tuple[int, int]:
        """Checks running and waiting now."""
        with self._lock:
            return self._running, len(self._waiters)

    @contextmanager
    def turn(self, at_once: int, waiting: int) -> Iterator[None]:
        with self._lock:
            if self._running < at_once and not self._waiters:
                self._running += 1
                mine = None
            elif len(self._waiters) < waiting:
                mine = threading.Event()
                self._waiters.append(mine)
            else:
                raise ChecksBusyError(
                    f"{self._running} OpenSpiel checks are running and {len(self._waiters)} "
                    "waiting, as many as NATIVE_CHECKS_AT_ONCE and NATIVE_CHECKS_WAITING "
                    f"allow; try again in {CHECK_RETRY_SECONDS} s"
                )
        if mine is not None:
            try:
                mine.wait()  # set by a finished check, which hands its turn over
            except BaseException:  # interrupted while waiting: the turn is given up
                self._give_up(mine)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set()  # the turn passes on: _running stays
            else:
                self._running -= 1

    def _give_up(self, mine: threading.Event) -> None:
        with self._lock:
            if mine in self._waiters:
                self._waiters.remove(mine)
                return
        self._release()  # the turn was handed over meanwhile: pass it on


_queue = CheckQueue()


def checks_now() -> tuple[int, int]:
    """OpenSpiel checks running and waiting in this process now."""
    return _queue.counts()


def is_native(game: Any) -> bool:
    """Whether the game named ``game`` runs native code (an OpenSpiel game)."""
    return isinstance(game, str) and game.strip().lower().startswith(SPIEL_PREFIX)


def _blamed(options: Any) -> str:
    """The field a failed check names: the one option given, else ``options``, else ``game``
    (the defaults themselves failed)."""
    given = [k for k in options if k != "time_control"] if isinstance(options, Mapping) else []
    if len(given) == 1:
        return f"options.{given[0]}"
    return "options" if given else "game"


def _key(request: Mapping[str, Any], settings: Settings) -> str | None:
    limits = [settings.max_matches_per_batch, settings.max_plies, settings.agent_budget_limits]
    try:
        return json.dumps([request, limits], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None  # not JSON data: checked each time (and refused by the plan)


def _remember(key: str | None, answer: tuple[Any, ...]) -> None:
    if key is None:
        return
    with _cache_lock:
        _cache[key] = answer
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def _recalled(key: str | None) -> tuple[Any, ...] | None:
    if key is None:
        return None
    with _cache_lock:
        answer = _cache.get(key)
        if answer is not None:
            _cache.move_to_end(key)
        return answer


def forget_checks() -> None:
    """Empty the cache of checked requests (tests)."""
    with _cache_lock:
        _cache.clear()


def _check(request: Mapping[str, Any], settings: Settings) -> tuple[Any, ...]:
    copied = Settings.model_construct(**settings.model_dump())
    turn = _queue.turn(settings.native_checks_at_once, settings.native_checks_waiting)
    try:
        with turn:
            plan = call_isolated("workers.batches:plan_here", (dict(request), copied), CHECK_LIMITS)
    except OptionError as exc:
        return ("refused", str(exc), exc.field)
    except ChildFailedError as exc:
        game = str(request.get("game", "")).strip()[:60]
        message = (
            f"{game} cannot be played with these parameters: checking them in OpenSpiel "
            f"{exc.reason} (a check may use {CHECK_LIMITS.describe()})"
        )
        return ("refused", message, _blamed(request.get("options")))
    return ("plan", plan)


def plan_isolated(request: Mapping[str, Any], settings: Settings) -> BatchPlan:
    """``workers.batches.plan_here(request, settings)`` run in a child, or remembered.

    ``request`` holds ``plan_here``'s keywords with the seed already fixed by the caller.
    """
    key = _key(request, settings)
    answer = _recalled(key)
    if answer is None:
        answer = _check(request, settings)
        _remember(key, answer)
    if answer[0] == "refused":
        raise OptionError(answer[1], field=answer[2])
    plan: BatchPlan = answer[1].model_copy(deep=True)
    return plan


# --------------------------------------------------------------------------- playing


def _failed(seed: int, index: int, error: str, duration: float = 0.0) -> MatchRecord:
    return MatchRecord(
        match_index=index,
        seed=seed,
        ok=False,
        plies=0,
        ended_by=Ending.ERROR,
        moves=(),
        stats={},
        duration=duration,
        error=error,
    )


def iter_isolated(
    batch: BatchBase, start: int, stop: int, limits: Limits = MATCH_LIMITS
) -> Iterator[MatchRecord]:
    """The records of matches ``start`` .. ``stop - 1`` of ``batch``, played in children.

    The child announces each match it begins with its stored seed, so a match that kills it
    is recorded with its own seed, and the next match goes on in a new child. When the game
    cannot even be built there, every match left fails with that reason (no child would fare
    better). An exception raised into this generator (a soft time limit) ends the child.
    """
    plan = BatchPlan.model_validate(batch.model_dump())
    index = start
    while index < stop:
        seed = match_seed(batch.seed, index)
        began = time.perf_counter()
        built = False
        try:
            for item in stream_isolated("workers.play:play_range", (plan, index, stop), limits):
                if isinstance(item, tuple):  # ("begin", index, seed): a match starts
                    built, seed, began = True, item[2], time.perf_counter()
                else:
                    yield item
                    index = item.match_index + 1
        except ChildFailedError as exc:
            if not built:
                reason = f"error: the game could not be built in its process: {exc.reason}"
                for i in range(index, stop):
                    yield _failed(match_seed(batch.seed, i), i, reason)
                return
            spent = time.perf_counter() - began
            reason = f"error: the match's process {exc.reason} (limits: {limits.describe()})"
            yield _failed(seed, index, reason, spent)
            index += 1
