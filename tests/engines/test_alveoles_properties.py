"""Les Alvéoles invariants over random play (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engines import load_game
from engines.alveoles.notation import GROOVE_NAMES, SQUARE_GROOVES
from engines.alveoles.rules import AlveolesState
from engines.alveoles.scoring import score_owners

layouts = st.one_of(
    st.just("classic"),
    st.lists(st.lists(st.integers(1, 60), min_size=8, max_size=8), min_size=8, max_size=8),
)


def forced_grooves(state: AlveolesState) -> set[int]:
    """The missing groove of every unclaimed 3-sided square, found by scanning the board."""
    out = set()
    for grooves in SQUARE_GROOVES:
        empty = [g for g in grooves if not state.has_plate(g)]
        if len(empty) == 1:
            out.add(empty[0])
    return out


@settings(max_examples=25, deadline=None)
@given(
    players=st.integers(2, 4),
    layout=layouts,
    mode=st.sampled_from(["overlapping", "disjoint"]),
    seed=st.integers(0, 2**32),
)
def test_random_play_invariants(players: int, layout: object, mode: str, seed: int) -> None:
    game = load_game("alveoles", players=players, layout=layout, square_bonus=mode)
    values = game.values  # type: ignore[attr-defined]
    state = game.new_initial_state()
    assert isinstance(state, AlveolesState)
    rng = random.Random(seed)
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal == sorted(legal) and legal
        forced = forced_grooves(state)
        if forced:
            assert set(legal) == forced  # forced closing, on every placement
        else:
            assert legal == [g for g in range(144) if not state.has_plate(g)]
        mover = state.current_player()
        before = state.owners_string()
        action = rng.choice(legal)
        if rng.random() < 0.1:  # also exercise the checked path and notation round trip
            state.apply_string(GROOVE_NAMES[action])
        else:
            state.apply(action)
        closed = [sq for sq in range(64) if before[sq] == "." and state.owner(sq) >= 0]
        assert all(state.owner(sq) == mover for sq in closed)
        assert bool(forced) == bool(closed)  # a plate closes something exactly when forced
        numbered = any(values[sq] > 1 for sq in closed)
        if not state.is_terminal():
            expected = mover if numbered else (mover + 1) % players
            assert state.current_player() == expected  # replay only after a numbered closure
    assert state.placements == 144
    assert sum(state.square_points()) == sum(values)
    stats = state.stats()
    assert sum(stats["per_seat"][s]["squares"] for s in range(players)) == 64
    assert stats["value_tiers"] == sorted(set(values), reverse=True)
    for figures in stats["per_seat"]:
        assert list(figures["squares_by_value"]) == [str(v) for v in stats["value_tiers"]]
    rescored = score_owners(stats["owners"], values, players, mode)
    assert state.scores() == [float(s.total) for s in rescored]


@settings(max_examples=15, deadline=None)
@given(players=st.integers(2, 4), seed=st.integers(0, 2**32))
def test_read_api_agrees_with_the_plates_played(players: int, seed: int) -> None:
    """The read API, checked against the set of grooves this test has played itself."""
    game = load_game("alveoles", players=players)
    state = game.new_initial_state()
    assert isinstance(state, AlveolesState)
    rng = random.Random(seed)
    played: set[int] = set()
    while True:
        assert list(state.empty_grooves) == [g for g in range(144) if g not in played]
        assert state.filled_mask == sum(1 << g for g in played)
        plated = [[g for g in grooves if g in played] for grooves in SQUARE_GROOVES]
        for sq, on in enumerate(plated):
            assert state.square_codes[sq] & 7 == len(on)
            assert state.square_codes[sq] >> 3 == sum(on)
        assert dict(state.forced) == {
            sq: next(g for g in SQUARE_GROOVES[sq] if g not in played)
            for sq, on in enumerate(plated)
            if len(on) == 3
        }
        assert state.unsafe_mask == sum(
            {1 << g for sq, on in enumerate(plated) if len(on) >= 2 for g in SQUARE_GROOVES[sq]}
        )
        if state.is_terminal():
            break
        action = rng.choice(state.legal_actions())
        state.apply(action)
        played.add(action)
    assert len(played) == 144
