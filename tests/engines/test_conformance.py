"""One contract suite run over every registered game, each of its player counts and each text
choice of its options (an Abalone layout, an Alvéoles bonus rule).

Random playouts to the end, legal actions sorted and non-empty until then, clone independence,
notation round trips for every legal action met, replay determinism from (seed, match index),
returns that share out 1.0, and clear errors for illegal or unreadable actions.
"""

from __future__ import annotations

import random

import pytest

from engines.core import (
    TERMINAL,
    Ending,
    Game,
    IllegalActionError,
    MatchResult,
    NotationError,
    OptionError,
    State,
    agent_rng,
    match_seed,
    play_match,
    replay,
)
from engines.registry import game_class, game_names, load_game, make_agent

PLAYOUTS = 3


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


def _check_returns(state: State, players: int) -> None:
    returns = state.returns()
    assert len(returns) == players
    assert sum(returns) == pytest.approx(1.0)
    assert all(0.0 <= r <= 1.0 for r in returns)


@pytest.mark.parametrize(("name", "players", "options"), CASES, ids=IDS)
def test_random_playouts_follow_the_contract(
    name: str, players: int, options: dict[str, object]
) -> None:
    game = _game(name, players, options)
    cap = game.game_type.max_game_length
    for seed in range(PLAYOUTS):
        rng = random.Random(seed)
        state = game.new_initial_state(seed)
        plies = 0
        while not state.is_terminal() and plies < cap:
            seat = state.current_player()
            assert 0 <= seat < game.num_players
            legal = state.legal_actions()
            assert legal, f"no legal action before the end:\n{state}"
            assert legal == sorted(set(legal)), "legal actions must be sorted and distinct"
            for action in legal:
                text = state.action_to_string(action)
                assert state.string_to_action(text) == action, text
            action = rng.choice(legal)
            if plies % 7 == 0:
                _check_clone_independence(state, action)
            state.apply_action(action)
            plies += 1
        if state.is_terminal():
            assert state.legal_actions() == []
            assert state.current_player() == TERMINAL
            assert isinstance(state.ended_by(), Ending)
            assert state.ended_by() not in {Ending.MAX_PLIES, Ending.FAILED}
            with pytest.raises(IllegalActionError):
                state.apply_action(0)
        _check_returns(state, game.num_players)
        assert len(state.scores()) == game.num_players


def _check_clone_independence(state: State, action: int) -> None:
    before = (str(state), state.key(), state.legal_actions(), state.current_player())
    copy = state.clone()
    assert (str(copy), copy.key(), copy.legal_actions()) == before[:3]
    copy.apply(action)
    assert (str(state), state.key(), state.legal_actions(), state.current_player()) == before
    again = state.clone()
    again.apply(action)
    assert str(again) == str(copy) and again.key() == copy.key()


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
