"""Alhambra's material: the 54 tiles of docs/rules/alhambra.md and the money deck."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from engines.alhambra import tiles
from engines.alhambra.money import (
    CURRENCIES,
    SCORING_1,
    SCORING_2,
    card_name,
    full_deck,
    minimal_payments,
    parse_card,
    pile_sizes,
    value_of,
)
from engines.alhambra.rules import Alhambra

# docs/rules/alhambra.md, "Material": count and price range of each type.
EXPECTED_TYPES = {
    "pavilion": (7, 2, 8),
    "seraglio": (7, 3, 9),
    "arcades": (9, 4, 10),
    "chambers": (9, 5, 11),
    "garden": (11, 6, 12),
    "tower": (11, 7, 13),
}


def test_the_package_data_file_and_the_embedded_table_agree() -> None:
    path = Path(tiles.__file__).with_name("tiles.csv")
    assert path.read_text() == tiles.TILES_CSV


def test_54_tiles_with_counts_and_price_ranges_per_type() -> None:
    rows = list(csv.DictReader(io.StringIO(tiles.TILES_CSV)))
    assert len(rows) == 54 == len(tiles.TILES)
    assert [int(r["id"]) for r in rows] == list(range(1, 55))
    for kind, (count, low, high) in EXPECTED_TYPES.items():
        costs = [int(r["cost"]) for r in rows if r["type"] == kind]
        assert (len(costs), min(costs), max(costs)) == (count, low, high), kind
    walls = sum(int(r[k]) for r in rows for k in ("wall_n", "wall_e", "wall_s", "wall_w"))
    assert walls == 80
    assert sum(t.walls.bit_count() for t in tiles.TILES) == 80


def test_parsed_tiles_keep_each_side() -> None:
    tile_1 = tiles.TILE_BY_ID[1]  # pavilion 2: walls N, E, W
    assert tile_1.type_name == "pavilion" and tile_1.cost == 2
    assert tile_1.walls == tiles.N | tiles.E | tiles.W
    assert tiles.WALLS[54] == tiles.E and tiles.COST[54] == 13


def test_108_money_cards_in_four_currencies() -> None:
    deck = full_deck()
    assert len(deck) == 108
    counts = Counter(card_name(c) for c in deck)
    assert len(counts) == 36 and set(counts.values()) == {3}
    assert {name.split(":")[0] for name in counts} == set(CURRENCIES)
    assert sum(value_of(c) for c in deck) == 4 * 3 * 45


def test_card_names_read_back() -> None:
    for c in full_deck():
        assert parse_card(card_name(c)) == c
    assert parse_card("Florin:9") == parse_card("flo:9")
    assert parse_card("florin:0") is None and parse_card("euro:3") is None


def test_piles_as_equal_as_possible() -> None:
    assert pile_sizes(90) == [18] * 5
    assert pile_sizes(93) == [19, 19, 19, 18, 18]


def test_a_new_game_holds_108_money_cards_and_both_scoring_cards_in_their_piles() -> None:
    for players in range(2, 7):
        for seed in range(5):
            state = Alhambra(players, {}).new_initial_state(seed)
            hands = [c for h in state.hands for c in h]
            money = hands + state.display + [c for c in state.deck if c >= 0]
            assert sorted(money) == sorted(full_deck())
            for hand in state.hands:
                values = [value_of(c) for c in hand]
                # Dealt until 20 is reached: without its last card a hand is below 20, so
                # without its largest card too.
                assert sum(values) >= 20 and sum(values) - max(values) < 20
            assert sorted(c for c in state.deck if c < 0) == [SCORING_2, SCORING_1]
            rest = 108 - len(hands)
            sizes = pile_sizes(rest)
            from_top = state.deck[::-1]
            # Scoring card 1 within pile 2, scoring card 2 within pile 4 (the display took 4
            # cards off pile 1; each pile grew by its scoring card).
            one = from_top.index(SCORING_1) + 4
            two = from_top.index(SCORING_2) + 4
            assert sizes[0] <= one <= sizes[0] + sizes[1]
            start_4 = sum(sizes[:3]) + 1
            assert start_4 <= two <= start_4 + sizes[3]


def test_minimal_payments_leave_out_no_card() -> None:
    assert minimal_payments([4, 5, 3], 7) == [(3, 4), (3, 5), (4, 5)]
    assert minimal_payments([9, 1, 1], 2) == [(1, 1), (9,)]
    assert minimal_payments([2, 2], 5) == []
    assert minimal_payments([6, 6, 6], 6) == [(6,)]
