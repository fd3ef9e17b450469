"""A stored batch's per-match arrays, with its turn order and units of sampling: what every
figure of a report (and a precision stop) starts from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine

from analysis import frames
from analysis.tidy import Wide, to_wide, with_matches
from analysis.units import links_games, links_openings
from engines.registry import load_game
from engines.seating import opening_round


def agent_groups(specs: list[dict[str, Any]]) -> list[int]:
    """For each agent index, the first index with the same spec (the same player)."""
    return [next(j for j, other in enumerate(specs) if other == spec) for spec in specs]


def starting_seat(batch: Any) -> Callable[[int], int]:
    """The seat that moves first in the batch's match with game seed ``seed`` (for rows stored
    before the first seat was kept)."""
    game = load_game(batch.game, players=batch.players, **batch.options)
    return lambda seed: max(game.new_initial_state(seed).current_player(), 0)


def load_wide(engine: Engine, batch: Any) -> Wide:
    """The batch's per-match arrays with each match's starting seat and unit of sampling
    (``analysis.units``: the rounds of its design, joined where matches replay one game and
    the batch drew nothing to make them two draws)."""
    long = frames.seat_results_numeric(engine, batch.id, batch.labels)
    w = to_wide(long, batch.players)
    del long
    return with_matches(
        w,
        frames.match_design(engine, batch.id, starting_seat(batch)),
        opening_round(batch.players, batch.seat_policy),
        by_opening=links_openings(batch.variation),
        by_game=links_games(batch.variation),
    )
