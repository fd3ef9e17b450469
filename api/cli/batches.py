"""``games``, ``batches``, ``delete``, ``show`` and ``replay``: what can be played, what is
stored, deleting a batch, one batch's figures and one match's moves."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from analysis.report import build_report
from api.cli.common import DbOption, fail, open_db, out, user_errors
from api.cli_tables import agents_table, describe_batch, seat_table, shape_table
from engines.core import replay as replay_moves
from engines.registry import broken_games, describe_games, describe_spiel_games, load_game
from engines.seating import seat_agents
from storage import crud
from storage.queries import find_match
from storage.records import split_moves
from storage.settings import get_settings
from storage.soundness import batch_problem

app = typer.Typer()


@app.command()
def games(
    family: Annotated[
        str,
        typer.Option(
            help="'playtester': our games; 'openspiel': OpenSpiel's, played as "
            "openspiel:<name> with their parameters as options (needs the openspiel extra)."
        ),
    ] = "playtester",
) -> None:
    """List games, their options, and the agents (with parameters) that can play them."""
    with user_errors():
        if family == "openspiel":
            _spiel_games()
            return
        if family != "playtester":
            fail(f"--family must be 'playtester' or 'openspiel', not {family!r}")
        # The bounds the server's GET /games shows: the engines' own, capped by the settings.
        for g in describe_games(caps=get_settings().agent_budget_limits):
            lo, hi = g["players"]
            span = str(lo) if lo == hi else f"{lo}–{hi}"
            out.print(
                f"[bold]{g['name']}[/bold] — {g['long_name']} ({span} players) "
                f"from {g['package']} {g['version']}",
                highlight=False,
            )
            if g["description"]:
                out.print(f"  {g['description']}", highlight=False)
            for o in g["options"]:
                choices = f" one of {o['choices']}" if "choices" in o else ""
                out.print(
                    f"  option {o['name']} ({o['type']}, default {o['default']!r}{choices}): "
                    f"{o['doc']}",
                    highlight=False,
                )
            for o in g["match_options"]:
                out.print(
                    f"  option {o['name']} (every game, {o['type']}, none by default; "
                    f"--time-control): {o['doc']}",
                    highlight=False,
                )
            out.print(f"  variation: {_variation_defaults(g)}", highlight=False)
            for a in g["agents"]:
                out.print(f"  agent [cyan]{a['name']}[/cyan]: {a['description']}", highlight=False)
                for p in a["params"]:
                    out.print(
                        f"      {p['name']} ({p['type']}{_bounds(p)}, default {p['default']!r}): "
                        f"{p['doc']}",
                        highlight=False,
                    )
        for b in broken_games():  # a package that fails to load never hides the others
            out.print(
                f"[bold red]{escape(b['name'])}[/bold red] — broken, from {escape(b['package'])} "
                f"{escape(b['version'])}: {escape(b['error'])}",
                highlight=False,
            )
        out.print(
            "OpenSpiel's games play as openspiel:<name>: `playtester games --family openspiel`"
        )


def _bounds(param: dict[str, Any]) -> str:
    """`` from 1 to 100000`` for a parameter with bounds, else nothing."""
    low, high = param.get("minimum"), param.get("maximum")
    if low is None and high is None:
        return ""
    if high is None:
        return f" from {low}"
    return f" up to {high}" if low is None else f" from {low} to {high}"


def _spiel_games() -> None:
    """The OpenSpiel family, one line a game: players, chance, information, parameters."""
    listing = describe_spiel_games()
    playable = [g for g in listing if g["playable"]]
    out.print(
        f"[bold]OpenSpiel games[/bold]: {len(playable)} of {len(listing)} playable as "
        "openspiel:<name>, parameters as options (e.g. playtester run openspiel:hex "
        "--option board_size=5 --agents mcts); agents random, mcts, alphabeta (two players), "
        "openspiel_mcts"
    )
    for g in listing:
        lo, hi = g["players"]
        span = str(lo) if lo == hi else f"{lo}–{hi}"
        params = ", ".join(f"{p['name']}={p['default']!r}" for p in g["params"]) or "none"
        if g["playable"]:
            out.print(
                f"  [cyan]{g['name']}[/cyan] — {g['long_name']} ({span} players; "
                f"{g['chance']}, {g['information']}); parameters: {params}",
                highlight=False,
            )
        else:
            out.print(f"  {g['name']} — not playable: {g['refused']}", highlight=False)


def _variation_defaults(game: dict[str, Any]) -> str:
    """The game's default variations in words (``GET /games``' ``variation``)."""
    v = game["variation"]
    shared = [f"a random opening of {v['opening_plies']} plies"] if v["opening_plies"] else []
    if game["chance"]:
        shared.append("one deal")
    opening = " and ".join(shared) or "the same start"
    return (
        f"agents that differ play each round of seatings with {opening}; one agent in every "
        f"seat gets player noise for {v['noise_plies']} plies (search agents choose within "
        f"{v['noise_margin']:g} of their best move); at most {v['max_plies']} plies"
    )


@app.command()
def batches(
    game: Annotated[str | None, typer.Option(help="Only batches of this game.")] = None,
    status: Annotated[str | None, typer.Option(help="Only batches in this status.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
    db: DbOption = None,
) -> None:
    """List batches with their status and progress."""
    with user_errors(db):
        engine = open_db(db)
        found = crud.list_batches(engine, game=game, status=status, limit=limit)
        if not found:
            out.print("no batches yet; start one with `playtester run`")
            return
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for name in ("id", "created", "game", "status", "progress"):
            table.add_column(name, no_wrap=True)
        table.add_column("agents", overflow="fold", ratio=1, min_width=12)
        for b in found:
            problem = batch_problem(b)
            if problem is not None:  # shown as stored, markup escaped, with what is wrong
                table.add_row(escape(repr(b.id)), "", "", "unreadable", "", escape(problem))
                continue
            p = crud.progress(engine, b.id)
            failed = f", {p.failed} failed" if p.failed else ""
            table.add_row(
                b.id,
                b.created_at.strftime("%m-%d %H:%M"),
                escape(f"{b.game}/{b.players}"),
                b.status,
                f"{p.done + p.failed}/{b.matches}{failed}",
                escape(" vs ".join(b.labels)),
            )
        out.print(table)


@app.command()
def delete(
    batch_id: Annotated[
        str,
        typer.Argument(
            help="The batch's full id, or a unique prefix of a hexadecimal one; an id an older "
            "import stored that is no batch id (../../x) is given in full, as stored."
        ),
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a finished or cancelled batch with all its matches and results (a queued or
    running batch is refused: cancel it first)."""
    with user_errors(db):
        engine = open_db(db)
        batch = crud.get_batch(engine, batch_id)
        full = batch.id if batch is not None else crud.resolve_batch_id(engine, batch_id)
        if not yes and not typer.confirm(f"delete batch {full!r} and all its results?"):
            fail("nothing deleted", code=1)
        try:
            was = crud.delete_batch(engine, full)
        except crud.BatchIsLive as exc:
            fail(str(exc))
        out.print(f"deleted batch {escape(repr(full))} ({was})", highlight=False)


@app.command()
def show(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    db: DbOption = None,
) -> None:
    """Seat balance, agent scores, game length and how games ended, for one batch."""
    with user_errors(db):
        engine = open_db(db)
        batch = crud.find_batch(engine, batch_id)
        p = crud.progress(engine, batch.id)
        out.print(f"batch [bold]{batch.id}[/bold] — {describe_batch(batch)}", highlight=False)
        rate = f", {p.rate:.1f} matches/s" if p.rate else ""
        out.print(f"status {batch.status}: {p.done} played, {p.failed} failed of {p.matches}{rate}")
        if batch.error:
            out.print(f"first error: {batch.error}", highlight=False)
        if batch.stopped_early:
            out.print(f"stopped early: {json.dumps(batch.decision)}", highlight=False)
        report = build_report(engine, batch.id)
        out.print(seat_table(report))
        out.print(agents_table(report))
        out.print(shape_table(report))


@app.command()
def replay(
    batch_id: Annotated[str, typer.Argument(help="Batch id or a unique prefix of it.")],
    match_index: Annotated[int, typer.Argument(help="Match index within the batch (from 0).")],
    check: Annotated[
        bool,
        typer.Option(help="Also re-play the match from its seed and compare the moves."),
    ] = True,
    db: DbOption = None,
) -> None:
    """Print a stored match's moves (numbered, with who moved) and its final position."""
    from workers.play import play_chunk

    with user_errors(db):
        engine = open_db(db)
        batch = crud.find_batch(engine, batch_id)
        row = find_match(engine, batch.id, match_index).match
        if not row["ok"]:
            fail(f"match {match_index} failed: {row['error']}", code=1)
        game = load_game(batch.game, players=batch.players, **batch.options)
        moves = split_moves(row["moves"])
        order = seat_agents(len(batch.agents), batch.seat_policy, match_index)
        seats = [batch.labels[a] for a in order]
        out.print(
            f"match {match_index} of batch {batch.id}, seed {row['seed']}: "
            + ", ".join(f"seat {s} {label}" for s, label in enumerate(seats)),
            highlight=False,
        )
        state = replay_moves(game, [], seed=row["seed"])
        for ply, text in enumerate(moves, start=1):
            seat = state.current_player()
            state.apply_string(text)  # checked: raises IllegalActionError if not legal
            out.print(f"{ply:4d}. seat {seat} ({seats[seat]}): {text}", highlight=False)
        out.print(f"ended by {row['ended_by']} after {row['plies']} plies; final position:")
        out.print(str(state), highlight=False, markup=False)
        if check:
            again = play_chunk(batch, match_index, match_index + 1)[0]
            if list(again.moves) != moves:
                fail("re-playing the match from its seed gives different moves", code=1)
            out.print("re-played from its seed: same moves")
