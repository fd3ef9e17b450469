"""One contract suite run over every registered game, each of its player counts and each text
choice of its options (an Abalone layout, an Alvéoles bonus rule).

The conformance kit (``engines.conformance``, what ``playtester check-game`` runs) plays a few
hundred random games of each game over its player counts, and a few of each option variant;
beside it, replay determinism from (seed, match index) through ``play_match``, and clear
errors for illegal or unreadable actions.
"""

from __future__ import annotations

import random

import pytest

from engines.conformance import check_games
from engines.core import (
    Ending,
    Game,
    IllegalActionError,
    MatchResult,
    NotationError,
    OptionError,
    agent_rng,
    match_seed,
    play_match,
    replay,
)
from engines.registry import game_class, game_names, load_game, make_agent

KIT_GAMES = {"abalone": 120, "alhambra": 120, "alquerque": 400, "alveoles": 300}
"""Random games per built-in game in the suite: a few hundred, fewer where a game is long
(``playtester check-game`` plays more); a game not named here plays 200."""
KIT_SAMPLE_EVERY = {"abalone": 25, "alhambra": 25, "alveoles": 6}
"""The long games' costlier checks at one ply in this many (about 15 a game; 24 in Les
Alvéoles, whose every ply has dozens of actions to read back)."""
VARIANT_GAMES = 4


def _variants(name: str, players: int) -> list[dict[str, object]]:
    """The default options, then each other text choice of each option (``layout``...) one at
    a time; a choice the game refuses at this player count is left out."""
    variants: list[dict[str, object]] = [{}]
    for option in game_class(name).game_type.options:
        for choice in option.choices or ():
            if choice == option.default or not isinstance(choice, str):
                continue
            try:
                load_game(name, players=players, **{option.name: choice})
            except OptionError:
                continue
            variants.append({option.name: choice})
    return variants


def _cases() -> list[tuple[str, int, dict[str, object]]]:
    cases: list[tuple[str, int, dict[str, object]]] = []
    for name in game_names():
        try:
            game_type = game_class(name).game_type
        except Exception:
            cases.append((name, 0, {}))  # the game fails to load: its tests say why, below
            continue
        for n in range(game_type.min_players, game_type.max_players + 1):
            cases.extend((name, n, options) for options in _variants(name, n))
    return cases


CASES = _cases()
IDS = [
    f"{name}-{players}p" + "".join(f"-{k}={v}" for k, v in options.items())
    for name, players, options in CASES
]


def _game(name: str, players: int, options: dict[str, object]) -> Game:
    return load_game(name, players=players or None, **options)


@pytest.mark.parametrize("name", game_names())
def test_the_conformance_kit_passes_every_game(name: str) -> None:
    game_type = game_class(name).game_type
    games = [load_game(name, n) for n in range(game_type.min_players, game_type.max_players + 1)]
    report = check_games(
        games, count=KIT_GAMES.get(name, 200), sample_every=KIT_SAMPLE_EVERY.get(name, 3)
    )
    assert [str(f) for f in report.failures] == []
    assert report.games == KIT_GAMES.get(name, 200) and report.plies > report.games


@pytest.mark.parametrize(("name", "players", "options"), CASES, ids=IDS)
def test_every_option_variant_passes_the_kit(
    name: str, players: int, options: dict[str, object]
) -> None:
    report = check_games([_game(name, players, options)], count=VARIANT_GAMES, sample_every=5)
    assert [str(f) for f in report.failures] == []


@pytest.mark.parametrize(("name", "players", "options"), CASES, ids=IDS)
def test_replay_from_seed_and_index_is_identical(
    name: str, players: int, options: dict[str, object]
) -> None:
    game = _game(name, players, options)

    def run(index: int) -> MatchResult:
        seed = match_seed(99, index)
        agents = [
            make_agent(game, {"name": "random"}, agent_rng(seed, s))
            for s in range(game.num_players)
        ]
        return play_match(game, agents, seed)

    first, second, other = run(3), run(3), run(4)
    assert (first.moves, first.returns, first.scores) == (
        second.moves,
        second.returns,
        second.scores,
    )
    # Another index is another seed: another game (the chance, the random players' moves).
    assert first.moves and other.moves and other.moves != first.moves
    # Replaying the stored moves from the seed reaches the stored result, ended or cut.
    final = replay(game, first.moves, seed=match_seed(99, 3))
    assert first.plies == len(first.moves)
    assert tuple(final.scores()) == first.scores
    if final.is_terminal():
        assert tuple(final.returns()) == first.returns
        assert first.ended_by == final.ended_by() != Ending.MAX_PLIES
    else:
        assert first.ended_by == Ending.MAX_PLIES
        assert first.plies == game.game_type.max_game_length
        assert first.returns == tuple([1.0 / game.num_players] * game.num_players)


@pytest.mark.parametrize(("name", "players", "options"), CASES, ids=IDS)
def test_bad_actions_raise_clear_errors(
    name: str, players: int, options: dict[str, object]
) -> None:
    game = _game(name, players, options)
    state = game.new_initial_state(1)
    legal = set(state.legal_actions())
    illegal = next(a for a in [-1, -12345, *range(10**6)] if a not in legal)
    with pytest.raises(IllegalActionError) as caught:
        state.apply_action(illegal)
    assert isinstance(caught.value, ValueError)
    assert name in str(caught.value)
    for garbage in ["", "???", "not a move at all", "zz99"]:
        with pytest.raises(NotationError):
            state.string_to_action(garbage)
    assert set(state.legal_actions()) == legal  # a refused action changes nothing


@pytest.mark.parametrize(("name", "players", "options"), CASES, ids=IDS)
def test_agent_hooks_answer_on_a_fresh_position(
    name: str, players: int, options: dict[str, object]
) -> None:
    game = _game(name, players, options)
    state = game.new_initial_state(5)
    legal = state.legal_actions()
    assert sorted(state.ordered_actions()) == legal
    assert state.rollout_action(random.Random(0)) in legal
    for seat in range(game.num_players):
        assert -1.0 <= state.evaluate(seat) <= 1.0
    hash(state.key())
    assert state.key() == state.clone().key()
