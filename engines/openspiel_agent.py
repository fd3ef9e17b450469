"""The ``openspiel_mcts`` agent: OpenSpiel's ``MCTSBot`` (:mod:`engines.openspiel.bots`).

Declared here, with no import of OpenSpiel, so the registry lists it whether or not the
``openspiel`` extra is installed; a spec naming it is refused when it is not. Apart from
:mod:`engines.agents` because the bridge it loads sits above the games, which sit above the
generic agents.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.core import Agent, AgentType, Game, Option, OptionError

BRIDGED: tuple[str, ...] = ("abalone", "alhambra", "alquerque", "alveoles")
"""Our games the bridge registers with OpenSpiel (``engines.openspiel.adapters.ADAPTERS``)."""
SPIEL_GAMES = "openspiel:*"
"""How the agent's list of games names every OpenSpiel game."""


@dataclass(frozen=True)
class SpielAgentType(AgentType):
    """An agent of our bridged games and of every ``openspiel:<name>`` game."""

    def supports(self, game: Game) -> bool:
        bridged = game.name.startswith("openspiel:") or game.name in BRIDGED
        return bridged and self.min_players <= game.num_players <= self.max_players


def check_openspiel(game: Game, params: Mapping[str, Any], prefix: str = "") -> None:
    """Refuse the agent without OpenSpiel, and playout-free search on a game with no
    evaluation of its own."""
    if importlib.util.find_spec("pyspiel") is None:
        raise OptionError(
            "openspiel_mcts needs the open_spiel package; install the OpenSpiel extra: "
            "pip install -e '.[openspiel]'",
            field=f"{prefix}name",
        )
    if params.get("leaves") == "evaluation" and game.name.startswith("openspiel:"):
        raise OptionError(
            f"{prefix}leaves 'evaluation' values leaves with the game's own evaluation, and "
            f"{game.name} has none; use 'playout'",
            field=f"{prefix}leaves",
        )


def make_spiel_mcts(game: Game, rng: random.Random, **params: Any) -> Agent:
    from engines.openspiel.bots import SpielMctsAgent

    return SpielMctsAgent(game, rng, **params)


SPIEL_MCTS = SpielAgentType(
    name="openspiel_mcts",
    description="OpenSpiel's MCTSBot (UCT with random playouts and MCTS-Solver), run through "
    "the OpenSpiel bridge; needs the openspiel extra.",
    factory=make_spiel_mcts,
    params=(
        Option(
            "iterations",
            int,
            200,
            "search simulations per move (MCTSBot's max_simulations)",
            minimum=1,
            maximum=100_000,
        ),
        Option(
            "leaves",
            str,
            "playout",
            "how a new leaf is valued: one uniformly random 'playout' to the end, or the "
            "game's own evaluation ('evaluation'; our games only)",
            choices=("playout", "evaluation"),
        ),
        Option("uct_c", float, 2.0, "UCT exploration constant", minimum=0.0, maximum=100.0),
    ),
    games=(*BRIDGED, SPIEL_GAMES),
    check=check_openspiel,
)

AGENTS: tuple[AgentType, ...] = (SPIEL_MCTS,)
