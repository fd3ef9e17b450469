"""Replays: a stored match replayed move by move with its game's engine, each position drawn
by the board renderer its game declares (``RENDER_BOARD``, ``api.web.boards``) or, for a game
without one, shown as the engine's text (``str(state)``); served as JSON for the page to step
through and as a page that shows any one ply without JavaScript (``?ply=``). Any installed
game replays: nothing here names one.

The positions are exact by construction: every stored move is applied with the engine's own
notation parser, which refuses an illegal one.

The JSON comes in pages of about ``PAGE_BYTES`` (``?start=`` the first ply, ``next`` the first
ply of the next page, null on the last): however long the match and large its board, one
request builds one page.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import Engine

from api.auth import require_read
from api.deps import EngineDep
from api.schemas import MAX_INT32, BatchId
from api.web.boards import BoardRenderer, renderer_for
from api.web.pages import not_found
from api.web.templating import page
from engines.core import State
from engines.plugins import GameLoadError
from engines.registry import game_origin
from storage.crud import NotFound, find_batch
from storage.models import Batch
from storage.queries import find_match
from storage.records import split_moves
from workers.play import build_game

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_read)])
MatchIndex = Annotated[int, Path(ge=0, le=MAX_INT32)]
PAGE_BYTES = 1_000_000
"""A page of positions stops at the first position past this many bytes of JSON."""


def _position(
    game: str, state: State, ply: int, move: str | None, mover: int | None, draw: bool
) -> dict[str, Any]:
    render = renderer_for(game) if draw else None
    terminal = state.is_terminal()
    return {
        "ply": ply,
        "move": move,
        "mover": mover,
        "to_move": None if terminal else state.current_player(),
        "scores": [float(x) for x in state.scores()],
        "board": _drawn(game, render, state, ply, move) if render else None,
        "text": str(state) if draw and not render else None,
    }


def _drawn(game: str, render: BoardRenderer, state: State, ply: int, move: str | None) -> str:
    """The board at ``ply``; a renderer that fails, or answers other than text, is its
    package's fault, named as such (a 422 on ``game``) rather than an internal error."""
    try:
        drawn = render(state, move)
    except Exception as exc:  # a package's renderer may raise anything
        raise GameLoadError(
            f"game {game!r} from {game_origin(game)}: its board renderer failed at ply {ply}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(drawn, str):
        raise GameLoadError(
            f"game {game!r} from {game_origin(game)}: its board renderer answered a "
            f"{type(drawn).__name__} at ply {ply}, not SVG text"
        )
    return drawn


def _walk(
    batch: Batch, match: dict[str, Any]
) -> Iterator[tuple[State, int, str | None, int | None]]:
    """Each position of a stored match: the state, its ply, the move that led there and who
    played it (the state is the same object throughout, moved on after each)."""
    game = build_game(batch)
    state = game.new_initial_state(match["seed"])
    yield state, 0, None, None
    for ply, move in enumerate(split_moves(match["moves"]), start=1):
        mover = state.current_player()
        state.apply_string(move)
        yield state, ply, move, mover


def replay_positions(
    batch: Batch, match: dict[str, Any], board_at: int | None = None
) -> list[dict[str, Any]]:
    """Every position of a stored match, from the start to the last move: ply, the move that
    led there and who played it, who moves next, the scores, and the board (SVG) or, for a
    game without a renderer, the engine's text board; the board of every ply, or of ply
    ``board_at`` only."""
    return [
        _position(batch.game, state, ply, move, mover, board_at is None or board_at == ply)
        for state, ply, move, mover in _walk(batch, match)
    ]


def positions_page(
    batch: Batch, match: dict[str, Any], start: int, budget: int = PAGE_BYTES
) -> tuple[list[dict[str, Any]], int | None]:
    """The positions from ply ``start``, each with its board, until their JSON passes
    ``budget`` bytes (at least one position), and the ply the next page starts at (None: this
    page ends the match)."""
    page: list[dict[str, Any]] = []
    size = 0
    for state, ply, move, mover in _walk(batch, match):
        if ply < start:
            continue
        if page and size > budget:
            return page, ply
        position = _position(batch.game, state, ply, move, mover, True)
        size += len(json.dumps(position, separators=(",", ":")))
        page.append(position)
    return page, None


def _load(
    engine: Engine, batch_id: str, index: int
) -> tuple[Batch, dict[str, Any], list[dict[str, Any]]]:
    batch = find_batch(engine, batch_id)
    stored = find_match(engine, batch.id, index)
    return batch, stored.match, stored.seats


@router.get("/ui/batches/{batch_id}/matches/{index}/positions")
def positions(
    batch_id: BatchId,
    index: MatchIndex,
    request: Request,
    engine: EngineDep,
    start: Annotated[int, Query(ge=0, le=MAX_INT32)] = 0,
) -> Response:
    """A page of the match's positions as JSON (``positions_page``) with its seats."""
    batch, match, seats = _load(engine, batch_id, index)
    found, after = positions_page(batch, match, start)
    body = json.dumps(
        {
            "batch": batch.id,
            "index": index,
            "game": batch.game,
            "seats": [{"seat": s["seat"], "agent": s["agent"]} for s in seats],
            "start": start,
            "next": after,
            "positions": found,
        },
        separators=(",", ":"),
    ).encode()
    headers = {"Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        # One SVG per ply repeats the same markup: gzip takes a 400-ply answer from 3 MB to
        # about 150 kB for the cost of one fast pass.
        body = gzip.compress(body, compresslevel=1)
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type="application/json", headers=headers)


@router.get("/ui/batches/{batch_id}/matches/{index}", response_class=HTMLResponse)
def replay_page(
    batch_id: BatchId,
    index: MatchIndex,
    request: Request,
    engine: EngineDep,
    ply: Annotated[int | None, Query(ge=0, le=MAX_INT32)] = None,
) -> HTMLResponse:
    """The match at ply ``ply`` (default: the start), with links to step and the move list."""
    try:
        batch, match, seats = _load(engine, batch_id, index)
    except NotFound as exc:
        return not_found(request, str(exc))
    if not match["ok"]:
        return page(
            request,
            "replay.html",
            {
                "title": f"Match {index}",
                "batch": batch,
                "match": match,
                "seats": seats,
                "failed": True,
                "positions": [],
                "current": None,
                "ply": 0,
                "last": 0,
            },
        )
    last = len(split_moves(match["moves"]))
    current_ply = min(ply or 0, last)
    found = replay_positions(batch, match, board_at=current_ply)
    return page(
        request,
        "replay.html",
        {
            "title": f"Match {index} of batch {batch.id}",
            "batch": batch,
            "match": match,
            "seats": seats,
            "failed": False,
            "positions": found,
            "current": found[current_ply],
            "ply": current_ply,
            "last": last,
        },
    )
