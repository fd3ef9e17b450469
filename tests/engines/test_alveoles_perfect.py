"""The ``perfect`` agent: where it plays, and that it gets the exact value against anyone.

The start values below come from a plain minimax over whole games (the one
``test_alveoles_solver.py`` checks the solver against), not from the solver: all-50 2 × 2,
the first player ends 100 points ahead; ``classic-2x3``, 98 behind.
"""

from __future__ import annotations

import random

import pytest

from engines import OptionError, load_game
from engines.core import play_match
from engines.registry import make_agent, normalise_agent_spec

START_VALUES = {"classic-2x2": 100, "classic-2x3": -98}


def _margin(layout: str, first: str, second: str, seed: int) -> float:
    game = load_game("alveoles", players=2, layout=layout, square_bonus="none")
    agents = [
        make_agent(game, first, random.Random(seed)),
        make_agent(game, second, random.Random(seed + 1)),
    ]
    result = play_match(game, agents, seed)
    return result.scores[0] - result.scores[1]


@pytest.mark.parametrize("layout", sorted(START_VALUES))
def test_two_perfect_players_end_on_the_exact_value(layout: str) -> None:
    for seed in range(3):
        assert _margin(layout, "perfect", "perfect", seed) == START_VALUES[layout]


@pytest.mark.parametrize("layout", sorted(START_VALUES))
@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_perfect_gets_at_least_the_exact_value_against_anyone(layout: str, opponent: str) -> None:
    for seed in range(5):
        assert _margin(layout, "perfect", opponent, seed) >= START_VALUES[layout]
        assert _margin(layout, opponent, "perfect", seed) <= START_VALUES[layout]


@pytest.mark.parametrize(
    ("players", "options", "field", "message"),
    [
        (2, {"layout": "classic-3x4", "square_bonus": "none"}, "options.layout", "3 × 4 board"),
        (2, {"layout": "classic", "square_bonus": "none"}, "options.layout", "at most 24"),
        (2, {"layout": "classic-2x2"}, "options.square_bonus", "needs square_bonus 'none'"),
        (3, {"layout": "classic-2x2", "square_bonus": "none"}, "agent.name", "3 players"),
    ],
)
def test_perfect_refuses_games_it_has_no_values_for(
    players: int, options: dict[str, str], field: str, message: str
) -> None:
    game = load_game("alveoles", players=players, **options)
    with pytest.raises(OptionError) as err:
        normalise_agent_spec(game, "perfect")
    assert err.value.field == field
    assert message in str(err.value)
