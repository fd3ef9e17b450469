"""``check-game`` and ``new-game``: a designer's own game, checked against the engine
contract (``engines.conformance``) and started from a complete package (``api.scaffold``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from api.cli.common import fail, out, parse_options, user_errors
from api.scaffold import write_package
from engines.conformance import SAMPLE_EVERY
from engines.conformance import check_game as run_kit

app = typer.Typer()

SHOWN_PER_CHECK = 5
"""Failures printed per check; the count says how many more there were."""


@app.command("check-game")
def check_game(
    name: Annotated[str, typer.Argument(help="The game's registry name (see `playtester games`).")],
    games: Annotated[int, typer.Option(help="Random games to play, from --seed onwards.")] = 2000,
    seed: Annotated[int, typer.Option(help="The first game's seed.")] = 0,
    players: Annotated[
        int | None, typer.Option(help="Play this player count only (default: every one).")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Game option key=value (JSON values allowed)."),
    ] = None,
    sample_every: Annotated[
        int,
        typer.Option(
            help="Run the costlier checks (clone, pickle, every action's notation, hidden "
            "views) at one ply in this many; more for long games."
        ),
    ] = SAMPLE_EVERY,
) -> None:
    """Play random games from many seeds and check every promise the service relies on:
    legal actions, clones, determinism, notation, returns, chance, hidden information, game
    length, pickling. Each failure names the seed and ply that show it; exit code 1 if any."""
    with user_errors():
        options = parse_options(option or [], [])
        report = run_kit(
            name,
            count=games,
            first_seed=seed,
            players=players,
            options=options,
            sample_every=sample_every,
        )
    out.print(report.speed_line(), highlight=False, soft_wrap=True)
    if report.ok:
        out.print(f"[green]ok[/green]: {report.games:,} games met every check")
        return
    by_check = Counter(f.check for f in report.failures)
    shown: Counter[str] = Counter()
    for failure in report.failures:
        if shown[failure.check] < SHOWN_PER_CHECK:
            out.print(f"[red]FAIL[/red] {escape(str(failure))}", highlight=False)
            shown[failure.check] += 1
    for check, total in sorted(by_check.items()):
        if total > SHOWN_PER_CHECK:
            out.print(f"  ... {total - SHOWN_PER_CHECK} more {check} failures", highlight=False)
    summary = ", ".join(f"{check} {total}" for check, total in sorted(by_check.items()))
    out.print(f"{len(report.failures)} of {report.games:,} games failed: {summary}")
    raise typer.Exit(1)


@app.command("new-game")
def new_game(
    name: Annotated[
        str, typer.Argument(help="The game's name: lower-case letters, digits, underscores.")
    ],
    directory: Annotated[
        Path | None,
        typer.Option("--dir", help="Where to write the package (default: ./playtester-NAME)."),
    ] = None,
) -> None:
    """Write a complete, installable game package: pyproject.toml with the entry point, the
    rules module (a trivial legal game to replace), docs/rules.md, and a test module running
    the conformance kit. Then: pip install -e DIR; playtester run NAME --agents random."""
    target = directory if directory is not None else Path(f"playtester-{name}")
    with user_errors():
        written = write_package(name, target)
    for path in written:
        out.print(f"wrote {escape(str(path))}", highlight=False)
    out.print(
        f"next: pip install -e {escape(str(target))} && playtester check-game {name} && "
        f"playtester run {name} --agents random",
        highlight=False,
    )
    if not written:
        fail("nothing written")
