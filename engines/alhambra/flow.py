"""Setup and everything between two turns: refills, scorings, the collector, the end.

Functions of an :class:`~engines.alhambra.rules.AlhambraTable` (they share its fields); every
random draw comes from the state's own generator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.alhambra.money import (
    HAND_TARGET,
    PILES,
    SCORING_1,
    SCORING_2,
    SCORING_CARDS,
    SCORING_PILE,
    currency_of,
    full_deck,
    pile_sizes,
    value_of,
)
from engines.alhambra.scoring import majority_points
from engines.alhambra.table import ACTION, FINAL, OVER
from engines.alhambra.tiles import NUM_TILES, TYPE_OF, TYPES

if TYPE_CHECKING:
    from engines.alhambra.table import AlhambraTable

MARKET_SLOTS = 4
DISPLAY_SIZE = 4
COLLECTOR_SETUP = 6
COLLECTOR_AFTER_FIRST = 6
COLLECTOR_SECOND_SHARE = 3
"""After the second scoring the collector takes the bag's tiles divided by this, rounded down."""
SKIP, BEFORE_FINAL = "skip", "before_final"
MISSED_SCORING_MODES = (SKIP, BEFORE_FINAL)
"""Option ``missed_scoring``: what becomes of a scoring card still in the deck at the end."""


def setup(state: AlhambraTable) -> None:
    """Bag and market, hands dealt to ≥ 20 each, the piled deck, the display, the start player."""
    rng = state.rng
    bag = list(range(1, NUM_TILES + 1))
    rng.shuffle(bag)
    state.bag = bag
    for slot in range(MARKET_SLOTS):
        state.market[slot] = bag.pop()
    if state.has_collector:
        _gift_collector(state, COLLECTOR_SETUP)
    money = full_deck()
    rng.shuffle(money)
    top_first = money[::-1]  # dealt from the top: index 0 is the top card
    pos = 0
    for seat in range(state.players):
        hand = state.hands[seat]
        while sum(value_of(c) for c in hand) < HAND_TARGET:
            hand.append(top_first[pos])
            pos += 1
        hand.sort()
    rest = top_first[pos:]
    piles: list[list[int]] = []
    at = 0
    for size in pile_sizes(len(rest)):
        piles.append(rest[at : at + size])
        at += size
    for scoring_card in SCORING_CARDS:
        pile = piles[SCORING_PILE[scoring_card]]
        pile.insert(rng.randrange(len(pile) + 1), scoring_card)
    # The deck is kept bottom first (top at the end); each scoring card's pile, as indices.
    deck: list[int] = []
    ranges = {}
    for index in range(PILES - 1, -1, -1):
        lo = len(deck)
        deck.extend(reversed(piles[index]))
        for scoring_card in SCORING_CARDS:
            if SCORING_PILE[scoring_card] == index:
                ranges[scoring_card] = (lo, len(deck))
    state.deck = deck
    state.ranges = ranges
    found = _refill_display(state)
    # docs/rules/alhambra.md H2: fewest cards, then the lowest total, then the lowest seat.
    state.start = min(
        range(state.players),
        key=lambda s: (len(state.hands[s]), sum(value_of(c) for c in state.hands[s]), s),
    )
    state.player = state.start
    for scoring_card in found:  # only with a tiny first pile; scored like any other
        score_round(state, scoring_card)


def _draw_card(state: AlhambraTable) -> int | None:
    """The top money card; an empty deck is first rebuilt from the spent cards, shuffled."""
    if not state.deck:
        if not state.discard:
            return None
        state.deck = state.discard
        state.discard = []
        state.rng.shuffle(state.deck)
    c = state.deck.pop()
    state.ranges.pop(c, None)
    return c


def _refill_display(state: AlhambraTable) -> list[int]:
    """Back to four cards; the scoring cards met on the way, set aside."""
    found = []
    display = state.display
    while len(display) < DISPLAY_SIZE:
        c = _draw_card(state)
        if c is None:
            break
        if c < 0:
            found.append(c)
        else:
            display.append(c)
    display.sort()
    return found


def end_turn(state: AlhambraTable) -> None:
    """After the turn's actions and placements: refill the market (or end the game), refill
    the display, score any scoring card met, and pass to the next seat."""
    state.turns += 1
    state.pending.clear()
    market = state.market
    bag = state.bag
    for slot in range(MARKET_SLOTS):
        if not market[slot] and bag:
            market[slot] = bag.pop()
    if not all(market):
        _start_end(state)
        return
    for scoring_card in _refill_display(state):
        score_round(state, scoring_card)
    state.phase = ACTION
    state.player = (state.player + 1) % state.players


def _start_end(state: AlhambraTable) -> None:
    """The bag cannot refill the market: each market tile goes to the player with the most
    money in its slot's currency (a tie: nobody), who places or reserves it; then scoring 3."""
    n = state.players
    gifts: dict[int, list[int]] = {}
    for slot, tile in enumerate(state.market):
        if not tile:
            continue
        money = [
            sum(value_of(c) for c in state.hands[s] if currency_of(c) == slot) for s in range(n)
        ]
        top = max(money)
        if top > 0 and money.count(top) == 1:
            gifts.setdefault(money.index(top), []).append(tile)
            state.market[slot] = 0
    state.final_queue = [(s, sorted(gifts[s])) for s in sorted(gifts)]
    next_gift(state)


def next_gift(state: AlhambraTable) -> None:
    """Hand the next end-of-game gifts to their player, or score the end once none is left
    (under ``before_final``, the scoring cards never drawn first, in order)."""
    if state.final_queue:
        seat, tiles = state.final_queue.pop(0)
        state.player = seat
        state.pending = tiles
        state.phase = FINAL
        return
    if state.score_missed:
        # docs/rules/alhambra.md H7 under 'before_final'. The bag is empty, so the collector's
        # gift after each of these scorings is nothing.
        for scoring_card in missed_cards(state):
            score_round(state, scoring_card)
    score_round(state, 0)
    state.pending = []
    state.phase = OVER


def missed_cards(state: AlhambraTable) -> list[int]:
    """The scoring cards still in the deck, in scoring order (at the end: those never drawn)."""
    return [c for c in SCORING_CARDS if c in state.deck]


def _type_counts(grid: dict[int, int]) -> list[int]:
    counts = [0] * len(TYPES)
    for tile in grid.values():
        if tile:
            counts[TYPE_OF[tile]] += 1
    return counts


def score_round(state: AlhambraTable, scoring_card: int) -> None:
    """Scoring round 1, 2 (the scoring cards) or 3 (``scoring_card`` 0, the end)."""
    round_index = {SCORING_1: 0, SCORING_2: 1, 0: 2}[scoring_card]
    counts = [_type_counts(g) for g in state.grids]
    collector = state.has_collector
    if collector:
        tiles = [0] * len(TYPES)
        for tile in state.collector_tiles:
            tiles[TYPE_OF[tile]] += 1
        counts.append(tiles)
    points = majority_points(counts, round_index)
    for seat in range(len(state.grids)):
        state.round_points[seat][round_index][0] += points[seat]
        state.round_points[seat][round_index][1] += state.longest_wall(seat)
    state.scorings += 1
    if collector:
        state.collector_points[round_index] += points[-1]
        if round_index == 0:
            _gift_collector(state, COLLECTOR_AFTER_FIRST)
        elif round_index == 1:
            _gift_collector(state, len(state.bag) // COLLECTOR_SECOND_SHARE)


def _gift_collector(state: AlhambraTable, count: int) -> None:
    for _ in range(min(count, len(state.bag))):
        state.collector_tiles.append(state.bag.pop())
