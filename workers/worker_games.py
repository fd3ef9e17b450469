"""A Celery worker's games: the chunk queues it consumes and the games it advertises.

Connected to the worker's signals by ``workers.celery_app``: once the worker is set up and
before it consumes anything, its queues are narrowed to the games it loads here
(``workers.game_queues.consumed``); once it is ready, it advertises those games with their
packages (``workers.roster``) until it shuts down.
"""

from __future__ import annotations

import logging
from typing import Any

from kombu import Queue

from engines import registry
from storage.settings import get_settings
from workers import roster
from workers.broker import broker
from workers.game_queues import consumed, queue_game

log = logging.getLogger(__name__)

_node: list[str] = []
_games: dict[str, str] = {}
_advertisers: list[roster.Advertiser] = []


def consume_loadable_games(sender: str, instance: Any, **_: object) -> None:
    """``celeryd_after_setup``: consume the queues of the games this worker loads, and of no
    other game; remember them, with their packages, for the advertisement."""
    queues = instance.app.amqp.queues
    selected = list(queues.consume_from)
    wanted = consumed(selected, registry.game_names())
    for name in wanted:
        if name not in queues:
            queues.add(Queue(name))
    queues.select(wanted)
    games = [g for g in map(queue_game, wanted) if g is not None]
    _node[:] = [str(sender)]
    _games.clear()
    _games.update(roster.games_here(games))
    for broken in registry.broken_games():
        name, error = broken["name"], broken["error"]
        log.warning("worker %s leaves the chunks of %s: %s", sender, name, error)
    log.info("worker %s consumes %s", sender, ", ".join(wanted) or "nothing")


def advertise_games(**_: object) -> None:
    """``worker_ready``: advertise this worker's games until it shuts down."""
    settings = get_settings()
    if not _node or not settings.broker_url or _advertisers:
        return
    advertiser = roster.Advertiser(broker(settings), _node[0], _games)
    advertiser.start()
    _advertisers.append(advertiser)


def withdraw_games(**_: object) -> None:
    """``worker_shutdown``: this worker plays nothing any more."""
    while _advertisers:
        _advertisers.pop().stop()
