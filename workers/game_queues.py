"""One chunk queue per game, so a worker never takes a chunk of a game it cannot play.

A batch's chunks go to its game's queue, ``playtester.game.<name>``. A worker consumes the
queues of the games it can load, found at its start from the installed entry points
(``engines.plugins``); a chunk of a game no worker has waits in its queue, neither taken nor
failed, until a worker that has it starts. Where every worker has every game, every worker
consumes every queue: the same as one shared queue.

A game that is not an installed package's (OpenSpiel's ``openspiel:<name>``, played by any
worker with the ``openspiel`` extra) keeps the shared chunk queue, ``playtester``, and a worker
that consumes the shared queue (``-Q playtester``, or no ``-Q``) takes the queues of every
game it loads with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from engines import plugins

CHUNK_QUEUE = "playtester"
"""The shared chunk queue: games that are not an installed package's."""
CONTROL_QUEUE = "playtester.control"
"""Short bookkeeping tasks (starting a batch) so they never wait behind a backlog of chunks."""
GAME_QUEUE_PREFIX = "playtester.game."


def chunk_queue(game: str) -> str:
    """The queue of ``game``'s chunks: its own for a game of the entry points, else the
    shared one."""
    name = game.strip().lower()
    if plugins.NAME_PATTERN.fullmatch(name):
        return GAME_QUEUE_PREFIX + name
    return CHUNK_QUEUE


def queue_game(queue: str) -> str | None:
    """The game whose chunks ``queue`` holds; None for any other queue."""
    if queue.startswith(GAME_QUEUE_PREFIX):
        return queue[len(GAME_QUEUE_PREFIX) :]
    return None


def declared_queues() -> list[str]:
    """The queues of the games installed here, none of them imported: what a process that
    sends or counts chunks knows of."""
    games, _refused = plugins.sort_declarations(plugins.declared_games())
    return sorted(chunk_queue(name) for name in games)


def consumed(selected: Iterable[str], loaded: Iterable[str]) -> list[str]:
    """The queues a worker consumes, from those it was started with (``selected``, its
    ``-Q`` or every queue the app declares) and the games it ``loaded``.

    The shared chunk queue brings the queues of every game loaded; a game's queue named on
    its own is kept only when its game loaded; other queues are kept as they are.
    """
    chosen = list(dict.fromkeys(selected))
    have = set(loaded)
    if CHUNK_QUEUE in chosen:
        games = have
    else:
        games = {g for g in map(queue_game, chosen) if g is not None} & have
    plain = [q for q in chosen if queue_game(q) is None]
    return plain + sorted(chunk_queue(g) for g in games)
