"""``GET /games`` and the new-batch form show the budgets this server accepts, and numbers that
are equal make the same agent."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import client_for, make_api

from engines.registry import load_game, normalise_agent_spec
from storage.models import BatchPlan
from storage.settings import Settings
from workers.batches import plan_batch


def plan(settings: Settings, agents: list[Any]) -> BatchPlan:
    """An Alquerque batch of two matches with these agents, as a request asks for it."""
    return plan_batch(
        game="alquerque",
        players=None,
        options={},
        agents=agents,
        matches=2,
        seed=1,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        settings=settings,
    )


def param(games: list[dict[str, Any]], game: str, agent: str, name: str) -> dict[str, Any]:
    info = next(g for g in games if g["name"] == game)
    spec = next(a for a in info["agents"] if a["name"] == agent)
    return next(p for p in spec["params"] if p["name"] == name)


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        ({}, {"iterations": 100_000, "depth": 16, "nodes": 1_000_000}),
        (
            {"max_agent_iterations": 500, "max_agent_depth": 3, "max_agent_nodes": 2000},
            {"iterations": 500, "depth": 3, "nodes": 2000},
        ),
    ],
)
def test_games_show_the_caps_in_force(
    migrated_sqlite_url: str, caps: dict[str, int], expected: dict[str, int]
) -> None:
    app, _ = make_api(migrated_sqlite_url, **caps)
    with client_for(app) as client:
        games = client.get("/games").json()
        form = client.get("/ui/new", params={"game": "alquerque"}).text
    assert param(games, "alquerque", "mcts", "iterations")["maximum"] == expected["iterations"]
    assert param(games, "alquerque", "alphabeta", "depth")["maximum"] == expected["depth"]
    assert param(games, "alquerque", "alphabeta", "nodes")["maximum"] == expected["nodes"]
    # A parameter whose own maximum is below the cap keeps its own.
    assert param(games, "alquerque", "mcts", "exploration")["maximum"] == 100
    assert f"1 to {expected['iterations']}" in form
    # The largest value shown is accepted; one more is refused, naming the field.
    settings = Settings(database_url=migrated_sqlite_url, **caps)
    shown = {"name": "mcts", "iterations": expected["iterations"]}
    planned = plan(settings, [shown, "random"])
    assert planned.agents[0]["iterations"] == expected["iterations"]
    above = {**shown, "iterations": expected["iterations"] + 1}
    with pytest.raises(ValueError, match=r"agents\[0\]\.iterations"):
        plan(settings, [above, "random"])


@pytest.mark.parametrize("negative_zero", [-0.0, "-0", "-0.0", " -0e5 "])
def test_negative_zero_is_the_same_agent_as_zero(negative_zero: Any) -> None:
    game = load_game("alquerque")
    zero = normalise_agent_spec(game, {"name": "mcts", "exploration": 0.0})
    same = normalise_agent_spec(game, {"name": "mcts", "exploration": negative_zero})
    assert same == zero
    assert str(same["exploration"]) == "0.0"  # not "-0.0": labels and stored specs agree
    agents = [{"name": "mcts", "exploration": negative_zero}, {"name": "mcts", "exploration": 0}]
    planned = plan(Settings(), agents)
    # One agent twice: the same spec, so the fixed seats of self-play.
    assert planned.agents[0] == planned.agents[1] and planned.seat_policy == "fixed"
