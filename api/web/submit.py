"""The new-batch form ``/ui/new``: shown from the games' descriptions, submitted with the API
key (the ``Authorization: Bearer`` header from the page's script, or the form's key field
without JavaScript), validated by the API's own request model and planner, answered with the
API's ``{message, field}`` beside the field at fault.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from analysis.stopping import SPRT_DEFAULTS
from api.auth import key_accepted, presented_key
from api.deps import DispatcherDep, EngineDep, SettingsDep
from api.errors import validation_error_body
from api.routes_batches import submit_batch
from api.schemas import GAME_NAME_PATTERN, MAX_PLAYERS, BatchCreate, BatchPublic
from api.web import forms
from api.web.templating import page
from engines.core import GameError, OptionError
from storage.settings import Settings
from workers.dispatchers import Dispatcher

router = APIRouter(include_in_schema=False)
MAX_FORM_BYTES = 64 * 1024


def _form_page(
    request: Request,
    form: dict[str, str],
    error: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    caps = request.app.state.settings.agent_budget_limits
    info = forms.game_info(form.get("game"), caps)
    players = forms.seat_count(info, form.get("players"))
    slot = None
    if error is not None:
        slot = forms.error_slot(error.get("field"), form, forms.error_slots(info, players))
    return page(
        request,
        "new.html",
        {
            "title": "New batch",
            "games": forms.games(caps),
            "info": info,
            "players": players,
            "agents": forms.agents_for(info, players),
            "form": form,
            "error": error,
            "error_slot": slot,
            "sprt_defaults": SPRT_DEFAULTS,
        },
        status_code,
    )


@router.get("/ui/new", response_class=HTMLResponse)
def new_batch_form(
    request: Request,
    game: Annotated[str | None, Query(pattern=f"{GAME_NAME_PATTERN}|^$", max_length=40)] = None,
    players: Annotated[int | None, Query(ge=1, le=MAX_PLAYERS)] = None,
) -> HTMLResponse:
    """The empty form for a game (the first one by default) and player count."""
    form = {k: str(v) for k, v in (("game", game), ("players", players)) if v}
    form["game"] = forms.game_info(game)["name"]
    return _form_page(request, form)


def _key_error(request: Request, settings: Settings, form: dict[str, str]) -> dict[str, Any] | None:
    """The API's key check, the key coming from the header (the page's script) or, without
    JavaScript, from the form."""
    given = presented_key(request) or form.get("api_key", "").strip() or None
    if key_accepted(settings, given):
        return None
    return {
        "message": "missing or wrong API key: enter the server's API_KEY to submit",
        "field": "api_key",
    }


def _submit(
    body: dict[str, Any],
    request: Request,
    engine: Engine,
    settings: Settings,
    dispatcher: Dispatcher,
) -> str:
    """Validate ``body`` with the API's request model and submit it as ``POST /batches`` does;
    the new batch's id. Raises what that route raises for bad input."""
    answer = submit_batch(
        BatchCreate.model_validate(body), request, Response(), engine, settings, dispatcher
    )
    if isinstance(answer, BatchPublic):
        return answer.id
    raise GameError("the submission was refused")  # pragma: no cover - needs an idempotency key


@router.post("/ui/new", response_model=None)
async def submit_form(
    request: Request, engine: EngineDep, settings: SettingsDep, dispatcher: DispatcherDep
) -> Response:
    """Submit the form: 303 to the new batch's page, or the form again with the error beside
    its field. Asked for JSON (the page's script), the answer is the API's: 202 with the
    batch's id and page, or the error ``{message, field}`` with its status."""
    wants_json = "application/json" in request.headers.get("accept", "")
    raw = await request.body()
    form = dict(parse_qsl(raw[:MAX_FORM_BYTES].decode("utf-8", "replace"), keep_blank_values=True))
    error = _key_error(request, settings, form)
    status_code = 401
    if error is None:
        info = forms.game_info(form.get("game"))
        body = forms.form_to_body(form, info)
        try:
            batch_id = await run_in_threadpool(_submit, body, request, engine, settings, dispatcher)
        except ValidationError as exc:
            error, status_code = validation_error_body(exc.errors()), 422
        except OptionError as exc:
            error, status_code = {"message": str(exc), "field": exc.field}, 422
        except GameError as exc:
            error, status_code = {"message": str(exc), "field": None}, 422
        else:
            root = request.scope.get("root_path", "")
            url = f"{root}/ui/batches/{batch_id}"
            if wants_json:
                return JSONResponse({"id": batch_id, "url": url}, status_code=202)
            return RedirectResponse(url, status_code=303)
    if wants_json:
        return JSONResponse(error, status_code=status_code)
    form.pop("api_key", None)  # never echoed back into the page
    return _form_page(request, form, error, status_code)
