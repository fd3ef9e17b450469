"""Read-only routes about the service itself: the games it knows and its health."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from api.auth import require_read
from api.deps import DispatcherDep, SettingsDep
from api.schemas import Health
from engines.registry import describe_games, describe_spiel_games
from storage.db import get_engine
from storage.queries import ping

router = APIRouter(tags=["service"])


@router.get("/games", dependencies=[Depends(require_read)], summary="Games, options and agents")
def games(
    settings: SettingsDep,
    family: Literal["playtester", "openspiel"] = Query(
        "playtester",
        description="'playtester': our games; 'openspiel': every OpenSpiel game, played as "
        "openspiel:<name> (needs the openspiel extra on the server)",
    ),
) -> list[dict[str, Any]]:
    """Every game with its options, and the agents that can play it with their parameters;
    budgets (``iterations``, ``nodes``, ``depth``) show this server's caps as their maximum.
    ``family=openspiel`` lists OpenSpiel's games instead, each with its parameters and whether
    it can be played here (``playable``, else the reason in ``refused``); any of them takes the
    generic agents (``random``, ``mcts``, ``alphabeta`` for two players, ``openspiel_mcts``)."""
    if family == "openspiel":
        return describe_spiel_games()
    return describe_games(caps=settings.agent_budget_limits)


@router.get("/healthz", response_model=Health, summary="Database and broker reachable")
def healthz(request: Request, dispatcher: DispatcherDep) -> JSONResponse:
    """200 when the database and the broker answer, 503 naming the one that does not."""
    database = "ok"
    broker = "ok"
    healthy = True
    try:
        ping(get_engine(request.app.state.settings.database_url))
    except Exception as exc:  # any failure to reach it is the answer itself
        database, healthy = f"unreachable: {type(exc).__name__}", False
    try:
        broker = dispatcher.broker_status()
    except Exception as exc:
        broker, healthy = f"unreachable: {type(exc).__name__}", False
    body = Health(status="ok" if healthy else "unavailable", database=database, broker=broker)
    return JSONResponse(body.model_dump(), status_code=200 if healthy else 503)
