"""Decisions of docs/rules/alhambra.md on hand-built positions: a scoring that never comes
(H7, option ``missed_scoring``), a closed wall ring (H6), and the extra action after an exact
purchase (H4).

Expected points are worked out by hand from that page's scoring tables (round 1: 1st; round 2:
1st / 2nd; round 3: 1st / 2nd / 3rd; ties add the places they hold and share, rounded down).
Tiles by type and walls (engines/alhambra/tiles.csv): 1 pavilion N+E+W, 5 pavilion N,
7 pavilion open, 41 and 42 garden open, 43 garden S, 44 tower N+E+W, 45 tower N+E+S, 46 tower
E+S, 52 and 53 tower open, 54 tower E.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from api.cli import app
from engines.alhambra import building, flow
from engines.alhambra.building import cell_of
from engines.alhambra.money import SCORING_1, SCORING_2, card
from engines.alhambra.rules import AlhambraState
from engines.alhambra.tiles import WALLS
from engines.core import OptionError
from engines.registry import build_game, describe_games, load_game, options_record

SEAT_TILES = (
    ((7, 1, 0), (5, 0, 1), (52, -1, 0)),  # 2 pavilions, 1 tower; longest wall 1 (tile 5's N)
    ((1, 0, 1), (53, 1, 0), (41, -1, 0)),  # pavilion, tower, garden; wall 3 (tile 1)
    ((44, 0, 1), (54, 0, -1), (42, 1, 0)),  # 2 towers, garden; wall 3 (tile 44)
)
COLLECTOR_TILES = [45, 46, 43]  # 2 towers, 1 garden: the third seat's counts, and no walls


def built(seat_tiles: tuple[tuple[int, int, int], ...]) -> dict[int, int]:
    grid = building.new_alhambra()
    for tile, x, y in seat_tiles:
        assert building.can_place(grid, cell_of(x, y), WALLS[tile]), (tile, x, y)
        grid[cell_of(x, y)] = tile
    return grid


def at_the_end(players: int, mode: str, drawn: tuple[int, ...]) -> AlhambraState:
    """A game whose bag is empty with nothing left on the market, the Alhambras above built,
    the scoring cards in ``drawn`` already met (with no points from them, for clarity), the
    others still in the deck; the end of the turn then ends the game."""
    state = load_game("alhambra", players=players, missed_scoring=mode).new_initial_state(11)
    assert isinstance(state, AlhambraState)
    for scoring_card in drawn:
        state.deck.remove(scoring_card)
        state.ranges.pop(scoring_card, None)
    state.scorings = len(drawn)
    state.round_points = [[[0, 0] for _ in range(3)] for _ in range(players)]
    for seat in range(players):
        state.grids[seat] = built(SEAT_TILES[seat])
        state.where[seat] = {t: c for c, t in state.grids[seat].items()}
        state.reserves[seat] = []
        state.forget(seat)
    if players == 2:
        state.collector_tiles = COLLECTOR_TILES[:]
        state.collector_points = [0, 0, 0]
    state.bag = []
    state.market = [0, 0, 0, 0]
    flow.end_turn(state)
    assert state.is_terminal()
    return state


# Walls: 1, 3, 3 at every scoring held.
WALLS_OF = (1, 3, 3)
# Round 2 majorities. Pavilion 8/1: seat 0 (2) 8, seat 1 (1) 1. Garden 12/5: seats 1 and 2
# tie (12 + 5) // 2 = 8 each. Tower 13/6: seat 2 (2) 13; seats 0 and 1 tie for 2nd and 3rd,
# (6 + 0) // 2 = 3 each.
ROUND_2 = (8 + 3, 1 + 8 + 3, 8 + 13)
# Round 3. Pavilion 16/8/1: 16, 8. Garden 20/12/5: (20 + 12) // 2 = 16 each for seats 1, 2.
# Tower 21/13/6: seat 2 21; seats 0 and 1 (13 + 6) // 2 = 9 each.
ROUND_3 = (16 + 9, 8 + 16 + 9, 16 + 21)
# Round 1 (1st only). Pavilion 1: seat 0. Garden 5: seats 1 and 2 tie, (5 + 0) // 2 = 2 each.
# Tower 6: seat 2.
ROUND_1 = (1, 2, 2 + 6)


def rounds_of(state: AlhambraState, seat: int) -> list[list[int]]:
    return [list(r) for r in state.round_points[seat]]


def test_the_literal_rule_skips_a_scoring_card_never_drawn() -> None:
    state = at_the_end(3, "skip", drawn=(SCORING_1,))
    for seat in range(3):
        assert rounds_of(state, seat) == [[0, 0], [0, 0], [ROUND_3[seat], WALLS_OF[seat]]]
    assert state.scores() == [26.0, 36.0, 40.0]
    stats = state.stats()
    assert (stats["scorings"], stats["missed_scorings"]) == (2, 1)


def test_before_final_scores_the_missed_card_with_round_twos_table() -> None:
    state = at_the_end(3, "before_final", drawn=(SCORING_1,))
    for seat in range(3):
        assert rounds_of(state, seat) == [
            [0, 0],
            [ROUND_2[seat], WALLS_OF[seat]],
            [ROUND_3[seat], WALLS_OF[seat]],
        ]
    assert state.scores() == [26.0 + 12, 36.0 + 15, 40.0 + 24]
    stats = state.stats()
    assert (stats["scorings"], stats["missed_scorings"]) == (3, 1)


def test_both_cards_missed_are_scored_in_order_each_with_its_table() -> None:
    late = at_the_end(3, "before_final", drawn=())
    for seat in range(3):
        assert rounds_of(late, seat) == [
            [ROUND_1[seat], WALLS_OF[seat]],
            [ROUND_2[seat], WALLS_OF[seat]],
            [ROUND_3[seat], WALLS_OF[seat]],
        ]
    assert (late.stats()["scorings"], late.stats()["missed_scorings"]) == (3, 2)
    literal = at_the_end(3, "skip", drawn=())
    assert (literal.stats()["scorings"], literal.stats()["missed_scorings"]) == (1, 2)


def test_the_collector_scores_the_missed_round_and_gets_nothing_from_the_empty_bag() -> None:
    # Two players: the collector holds the third seat's counts above, so it takes the third
    # seat's majority points and no walls.
    late = at_the_end(2, "before_final", drawn=(SCORING_1,))
    assert late.collector_points == [0, ROUND_2[2], ROUND_3[2]]
    assert late.collector_tiles == COLLECTOR_TILES  # a third of an empty bag is nothing
    assert [rounds_of(late, s)[1] for s in (0, 1)] == [[11, 1], [12, 3]]
    assert late.stats()["collector"]["points"] == 21 + 37
    literal = at_the_end(2, "skip", drawn=(SCORING_1,))
    assert literal.collector_points == [0, 0, 37]
    assert literal.stats()["collector"]["points"] == 37


def test_a_game_not_over_does_not_say_which_cards_are_missed() -> None:
    state = load_game("alhambra", players=3, missed_scoring="before_final").new_initial_state(4)
    assert state.stats()["missed_scorings"] is None and state.stats()["scorings"] == 0


def test_a_game_that_met_both_cards_is_the_same_under_both_readings() -> None:
    for mode in ("skip", "before_final"):
        state = at_the_end(3, mode, drawn=(SCORING_1, SCORING_2))
        assert state.stats()["scorings"] == 3 and state.stats()["missed_scorings"] == 0
        assert [rounds_of(state, s)[1] for s in range(3)] == [[0, 0]] * 3


def test_the_option_is_declared_validated_stored_and_listed() -> None:
    assert options_record(load_game("alhambra", players=2)) == {"missed_scoring": "skip"}
    game = build_game("alhambra", 2, {"missed_scoring": "  Before_Final "})
    assert options_record(game) == {"missed_scoring": "before_final"}
    for wrong in ("sometimes", 3, ""):
        with pytest.raises(OptionError) as caught:
            build_game("alhambra", 2, {"missed_scoring": wrong})
        assert caught.value.field == "options.missed_scoring"
    listed = {g["name"]: g for g in describe_games(caps={})}["alhambra"]
    (option,) = [o for o in listed["options"] if o["name"] == "missed_scoring"]
    assert option["default"] == "skip" and option["choices"] == ["skip", "before_final"]
    shown = CliRunner().invoke(app, ["games"])
    assert shown.exit_code == 0 and "missed_scoring" in shown.stdout


def test_a_closed_ring_scores_all_its_segments() -> None:
    # Eight tiles around the fountain whose outer walls close one ring round the 3 × 3 cells:
    # 4 sides of 3 segments, 12, the chain ending on the corner it started from.
    ring = (
        (5, 0, 1), (6, 1, 0), (13, 0, -1), (12, -1, 0),
        (9, 1, 1), (3, 1, -1), (2, -1, -1), (4, -1, 1),
    )  # fmt: skip
    state = load_game("alhambra", players=3).new_initial_state(2)
    assert isinstance(state, AlhambraState)
    state.grids[0] = built(ring)
    state.forget(0)
    assert state.longest_wall(0) == 12
    state.round_points = [[[0, 0] for _ in range(3)] for _ in range(3)]
    flow.score_round(state, SCORING_1)
    assert state.round_points[0][0][1] == 12
    # Without the corner tile 2 (S + W) at (−1, −1) the ring opens: one chain of 12 − 2.
    state.grids[0] = built(ring[:6] + ring[7:])
    state.forget(0)
    assert state.longest_wall(0) == 10


def _hand(state: AlhambraState, cards: list[int]) -> int:
    seat = state.current_player()
    state.hands[seat] = sorted(cards)
    return seat


def test_the_extra_action_after_an_exact_purchase_is_always_taken() -> None:
    state = load_game("alhambra", players=3).new_initial_state(7)
    assert isinstance(state, AlhambraState)
    state.market[3] = 7  # pavilion, cost 8, paid in florins (slot 3)
    seat = _hand(state, [card(3, 8)])
    state.apply_string("buy florin pay florin:8")
    # The same seat acts again; nothing ends the turn but an action: every legal action is a
    # take, a purchase or a redesign (no pass, no placing yet), and taking money is offered.
    assert state.current_player() == seat and state.pending == [7]
    texts = [state.action_to_string(a) for a in state.legal_actions()]
    kinds = {t.split()[0] for t in texts}
    assert "take" in kinds and kinds <= {"take", "buy", "place", "remove", "swap"}
    assert "pass" not in texts
    # Bought tiles are placed only after the first action that is not an exact purchase.
    take = next(t for t in texts if t.startswith("take"))
    state.apply_string(take)
    after = {state.action_to_string(a).split()[0] for a in state.legal_actions()}
    assert after <= {"place", "reserve"} and state.current_player() == seat
    assert state.exact[seat] == 1


def test_exact_purchases_chain_until_another_action() -> None:
    state = load_game("alhambra", players=3).new_initial_state(5)
    assert isinstance(state, AlhambraState)
    state.market[0], state.market[1] = 7, 1  # pavilions costing 8 (denars) and 2 (dirhams)
    seat = _hand(state, [card(0, 8), card(1, 2)])
    state.apply_string("buy denar pay denar:8")
    state.apply_string("buy dirham pay dirham:2")
    assert state.current_player() == seat and sorted(state.pending) == [1, 7]
    assert state.exact[seat] == 2
    texts = [state.action_to_string(a) for a in state.legal_actions()]
    assert any(t.startswith("take") for t in texts)
    assert not any(t.startswith(("reserve", "give", "pass")) for t in texts)
