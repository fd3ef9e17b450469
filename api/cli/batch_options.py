"""The options that describe a batch, declared once for ``run`` (play here) and ``submit``
(send to a server), and the one request both build from them.

A command takes them as ``game: batch_options.Game, agents: batch_options.Agents, ...`` under
the parameter names ``batch_request`` reads back from ``ctx.params``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from api.cli.common import parse_options
from engines.clock import FIELD as TIME_CONTROL_FIELD
from engines.core import OptionError
from engines.registry import spec_from_text
from workers.batches import TIME_CONTROL
from workers.request import BatchRequest, build_request
from workers.request_text import DEFAULT_MATCHES as DEFAULT_MATCHES  # the --matches default
from workers.request_text import parse_stop, parse_variation, split_agents

Game = Annotated[str, typer.Argument(help="Game name (see `playtester games`).")]
Agents = Annotated[
    str,
    typer.Option(
        "--agents",
        "-a",
        help="Agents by seat, comma-separated; parameters after a colon: "
        "hard,mcts:iterations=200,exploration=1.2. One agent plays every seat.",
    ),
]
Players = Annotated[
    int | None,
    typer.Option(help="Players (default: number of agents if >1, else the game minimum)."),
]
Matches = Annotated[int, typer.Option("--matches", "-n", help="Matches to play.")]
Seed = Annotated[int | None, typer.Option(help="Batch seed (default: random).")]
SeatPolicy = Annotated[
    str | None, typer.Option(help="balanced (default when agents differ), rotate or fixed.")
]
Options = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Game option key=value (JSON values allowed)."),
]
OptionFiles = Annotated[
    list[str] | None,
    typer.Option("--option-file", help="Game option key=path.json (value read from file)."),
]
MaxPlies = Annotated[int | None, typer.Option(help="Ply cap; a match reaching it is a draw.")]
TimeControl = Annotated[
    str | None,
    typer.Option(
        "--time-control",
        help="Clocks for every game, SECONDS[+INCREMENT]: 60+1 gives each player 60 s for the "
        "game and adds 1 s after each of its moves; a player whose clock runs out loses. "
        "Clocked matches are not reproducible from their seed (their stored moves replay "
        "them). Default: no clocks.",
    ),
]
ChunkSize = Annotated[
    int | None,
    typer.Option(help="Matches per chunk (default: measured, ~CHUNK_SECONDS of work)."),
]
Stop = Annotated[
    str | None,
    typer.Option(
        help="Stopping rule: sprt:A,B,elo0=0,elo1=5[,alpha=0.05,beta=0.05], "
        "precision:FIGURE,half_width=H[,min_units=30] (FIGURE first_player_advantage or "
        "score:LABEL), or JSON."
    ),
]

Openings = Annotated[
    int | None,
    typer.Option(
        help="Random openings of K plies, one per round of seatings (the default, with the "
        "game's K, when the agents differ); with --book, the plies taken from each line."
    ),
]
Book = Annotated[
    str | None,
    typer.Option(help="Openings from a book: one per line, moves separated by commas."),
]
Noise = Annotated[
    str | None,
    typer.Option(
        help="Player noise: search agents pick among near-best moves for the first M plies, "
        "M[:MARGIN] or M:temperature=T (the default when every seat has one agent)."
    ),
]
NoVariation = Annotated[
    bool, typer.Option("--no-variation", help="No openings and no player noise.")
]
BookUnits = Annotated[
    str | None,
    typer.Option(
        help="With --book: 'round' (the default: each round is a unit of sampling, and the "
        "figures speak of the book's openings) or 'line' (the book is a sample of openings: "
        "the matches of one line form one unit, and the wider intervals speak of openings "
        "beyond the book)."
    ),
]


def batch_request(params: Mapping[str, Any]) -> BatchRequest:
    """The batch a command's options ask for, from its parsed parameters
    (``typer.Context.params``): what ``plan_batch`` plans here, and ``POST /batches`` on a server
    (``BatchRequest.body``). ``--time-control`` goes among the options, where the request
    carries it (``options.time_control``)."""
    options = parse_options(params["option"] or [], params["option_file"] or [])
    if params["time_control"] is not None:
        if TIME_CONTROL in options:
            raise OptionError(
                "give the time control once: --time-control or --option time_control",
                field=TIME_CONTROL_FIELD,
            )
        options[TIME_CONTROL] = params["time_control"]
    return build_request(
        {
            "game": params["game"],
            "players": params["players"],
            "options": options,
            "agents": [spec_from_text(piece) for piece in split_agents(params["agents"])],
            "matches": params["matches"],
            "seed": params["seed"],
            "seat_policy": params["seat_policy"],
            "chunk_size": params["chunk_size"],
            "max_plies": params["max_plies"],
            "stop_rule": parse_stop(params["stop"]),
            "variation": _with_book_units(
                parse_variation(
                    params["openings"], params["book"], params["noise"], params["no_variation"]
                ),
                params.get("book_units"),
            ),
        }
    )


def _with_book_units(variation: dict[str, Any] | None, units: str | None) -> dict[str, Any] | None:
    """``variation`` with ``--book-units`` added (refused without ``--book``)."""
    if units is None:
        return variation
    if variation is None or variation.get("source") != "book":
        raise OptionError("--book-units needs --book", field="variation.units")
    return {**variation, "units": units}
