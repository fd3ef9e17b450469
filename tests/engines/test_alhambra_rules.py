"""Alhambra turns, purchases, the end, and whole games for 2–6 players (docs/rules/alhambra.md)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engines.alhambra import flow
from engines.alhambra.building import cell_of
from engines.alhambra.money import card, full_deck, value_of
from engines.alhambra.rules import Alhambra, AlhambraState
from engines.core import IllegalActionError, NotationError

DENAR, DIRHAM, DUCAT, FLORIN = range(4)


def new(players: int = 3, seed: int = 1) -> AlhambraState:
    return Alhambra(players, {}).new_initial_state(seed)


def money_in_play(state: AlhambraState) -> list[int]:
    cards = [c for h in state.hands for c in h] + state.display + state.discard
    return sorted(cards + [c for c in state.deck if c >= 0])


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_a_whole_game_conserves_tiles_and_money(players: int) -> None:
    state = new(players, seed=players)
    rng = random.Random(players)
    deck = sorted(full_deck())
    plies = 0
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
        plies += 1
        assert state.tiles_in_play() == 54
        assert money_in_play(state) == deck
    assert plies < Alhambra.game_type.max_game_length
    assert state.bag == []  # the game ends only when the bag cannot refill the market
    assert state.scorings >= 1 and state.current_player() == -1
    stats = state.stats()
    assert [s["turn_position"] for s in stats["per_seat"]] == [
        (seat - state.start) % players for seat in range(players)
    ]
    assert [s["points"] for s in stats["per_seat"]] == state.scores()
    for seat, row in enumerate(stats["per_seat"]):
        assert sum(row["tiles_by_type"].values()) == len(state.alhambra(seat)) - 1
        assert sum(row["reserve_by_type"].values()) == len(state.reserve(seat))
        assert row["money_left"] == sum(value_of(c) for c in state.hands[seat])
        assert len(row["rounds"]) == 3
    assert ("collector" in stats) == (players == 2)
    assert sum(state.returns()) == pytest.approx(1.0)


def test_the_start_player_has_fewest_cards_then_lowest_total_then_lowest_seat() -> None:
    for seed in range(20):
        state = new(4, seed)
        keys = [(len(h), sum(value_of(c) for c in h)) for h in state.hands]
        best = min(keys)
        assert state.start == keys.index(best)
        assert state.current_player() == state.start


def test_takes_one_card_or_several_worth_at_most_five() -> None:
    state = new()
    state.display = sorted([card(DENAR, 1), card(DENAR, 2), card(DIRHAM, 2), card(FLORIN, 9)])
    takes = sorted(state.action_to_string(a) for a in state.legal_actions() if a < 16)
    assert takes == sorted(
        [
            "take denar:1",
            "take denar:2",
            "take dirham:2",
            "take florin:9",
            "take denar:1+denar:2",
            "take denar:1+dirham:2",
            "take denar:2+dirham:2",
            "take denar:1+denar:2+dirham:2",
        ]
    )
    with pytest.raises(IllegalActionError):
        state.apply_string("take denar:2+florin:9")
    seat = state.current_player()
    state.apply_string("take dirham:2+denar:1")
    assert card(DENAR, 1) in state.hands[seat] and card(DIRHAM, 2) in state.hands[seat]
    assert state.current_player() == (seat + 1) % 3  # a take ends the turn


def _with_hand(state: AlhambraState, cards: list[int]) -> int:
    seat = state.current_player()
    state.hands[seat] = sorted(cards)
    return seat


def test_an_exact_purchase_gives_another_action_and_an_overpayment_ends_it() -> None:
    state = new(3, 7)
    state.market[FLORIN] = 7  # pavilion, cost 8
    state.market[DUCAT] = 1  # pavilion, cost 2
    seat = _with_hand(state, [card(FLORIN, 7), card(FLORIN, 1), card(DUCAT, 9)])
    state.apply_string("buy florin pay florin:1+florin:7")
    assert state.current_player() == seat and state.pending == [7]
    assert state.market[FLORIN] == 0  # stays empty until the end of the turn
    assert state.exact[seat] == 1
    texts = [state.action_to_string(a) for a in state.legal_actions()]
    assert not any(t.startswith("buy florin") for t in texts)
    assert "buy ducat pay ducat:9" in texts
    state.apply_string("buy ducat pay ducat:9")  # 9 for a price of 2: the turn's last action
    texts = [state.action_to_string(a) for a in state.legal_actions()]
    assert all(t.split()[0] in ("place", "reserve") for t in texts)
    assert {int(t.split()[1]) for t in texts} == {1, 7}
    assert "place 7 at 1,0" in texts  # tile 7 has no walls
    assert state.exact[seat] == 1
    state.apply_string("reserve 1")
    assert state.current_player() == seat
    state.apply_string("place 7 at 1,0")
    assert state.current_player() == (seat + 1) % 3
    assert all(state.market)  # refilled
    assert state.reserve(seat) == [1] and state.alhambra(seat)[(1, 0)] == 7


def test_only_minimal_payments_are_offered() -> None:
    state = new(3, 7)
    state.market = [7, 0, 0, 0]  # tile 7 costs 8
    _with_hand(state, [card(DENAR, 9), card(DENAR, 9), card(DENAR, 2)])
    buys = [state.action_to_string(a) for a in state.legal_actions()]
    # 9 + 2 and 9 + 9 cover 8 too, but a card of each can be left out.
    assert [b for b in buys if b.startswith("buy")] == ["buy denar pay denar:9"]
    with pytest.raises(IllegalActionError):
        state.apply_string("buy denar pay denar:2+denar:9+denar:9")


def test_redesign_moves_between_alhambra_and_reserve() -> None:
    state = new(3, 2)
    seat = state.current_player()
    state.reserves[seat] = [7, 5]
    state.forget(seat)
    texts = {state.action_to_string(a) for a in state.legal_actions()}
    assert {"place 7 at 1,0", "place 5 at 0,1"} <= texts
    assert "place 5 at 0,-1" not in texts  # its N wall would face the fountain's open side
    state.apply_string("place 5 at 0,1")
    assert state.alhambra(seat) == {(0, 0): 0, (0, 1): 5}
    assert state.reserve(seat) == [7]
    for _ in range(2):  # the others take money
        state.apply_string(state.action_to_string(state.take_masks()[0]))
    state.apply_string("swap 7 for 5")
    assert state.alhambra(seat) == {(0, 0): 0, (0, 1): 7} and state.reserve(seat) == [5]
    for _ in range(2):
        state.apply_string(state.action_to_string(state.take_masks()[0]))
    state.apply_string("remove 7")
    assert state.alhambra(seat) == {(0, 0): 0} and state.reserve(seat) == [5, 7]


def test_the_end_gives_market_tiles_to_the_richest_in_their_currency() -> None:
    state = new(3, 4)
    state.bag = []
    state.market = [1, 2, 3, 0]
    state.hands = [
        [card(DENAR, 5), card(DIRHAM, 3)],
        [card(DENAR, 4), card(DIRHAM, 3)],
        [card(DUCAT, 1)],
    ]
    flow.end_turn(state)
    # denar: seat 0 (5 > 4); dirham: tie, nobody; ducat: seat 2.
    assert state.current_player() == 0 and state.pending == [1]
    assert state.market == [0, 2, 0, 0]
    state.apply_string("reserve 1")
    assert state.current_player() == 2 and state.pending == [3]
    state.apply_string("reserve 3")
    assert state.is_terminal() and state.scorings >= 1
    assert state.reserve(0) == [1] and state.reserve(2) == [3] and state.reserve(1) == []


def test_notation_reads_its_own_text_and_refuses_nonsense() -> None:
    state = new(2, 5)
    rng = random.Random(5)
    for _ in range(120):
        if state.is_terminal():
            break
        for action in state.legal_actions():
            assert state.string_to_action(state.action_to_string(action)) == action
        state.apply(rng.choice(state.legal_actions()))
    for bad in ["buy euro pay euro:3", "place 99 at 0,1", "place 5 at 0", "swap 5", "take"]:
        with pytest.raises(NotationError):
            state.string_to_action(bad)
    assert state.string_to_action("  PLACE 23 AT (1, -2) ") == state.string_to_action(
        "place 23 at 1,-2"
    )


def test_read_access_for_viewers() -> None:
    state = new(3, 9)
    state.grids[1][cell_of(1, 0)] = 7
    state.grids[1][cell_of(0, -1)] = 14
    assert state.alhambra(1) == {(0, 0): 0, (1, 0): 7, (0, -1): 14}
    state.reserves[1] = [3, 40]
    copy = state.reserve(1)
    copy.append(1)
    assert state.reserve(1) == [3, 40]
    text = str(state)
    assert "market" in text and "seat 1" in text


def test_resampling_keeps_what_the_seat_knows_and_redraws_the_rest() -> None:
    state = new(4, 11)
    rng = random.Random(0)
    for _ in range(60):
        state.apply(rng.choice(state.legal_actions()))
    views = [
        state.resample_from_infostate(state.current_player(), random.Random(i)) for i in range(5)
    ]
    for view in views:
        assert view.market == state.market and view.display == state.display
        assert view.hands == state.hands and view.grids == state.grids
        assert view.reserves == state.reserves and view.discard == state.discard
        assert Counter(view.bag) == Counter(state.bag)
        assert Counter(view.deck) == Counter(state.deck)
        for scoring_card, (lo, hi) in state.ranges.items():
            assert lo <= view.deck.index(scoring_card) < hi
        assert view.legal_actions() == state.legal_actions()
    assert len({tuple(v.bag) for v in views}) > 1
    assert len({tuple(v.deck) for v in views}) > 1
