"""Alhambra positions for the tests that an agent never reads the hidden order: a position
part-way through a game, and the same information set with another true order."""

from __future__ import annotations

import random

from engines.alhambra.rules import AlhambraState
from engines.registry import load_game


def midgame(players: int, seed: int, plies: int) -> AlhambraState:
    state = load_game("alhambra", players=players).new_initial_state(seed)
    rng = random.Random(seed)
    for _ in range(plies):
        state.apply(state.rollout_action(rng))
    return state


def other_hidden_order(state: AlhambraState, seed: int) -> AlhambraState:
    """The same information set with another true order: the bag and the deck's money
    shuffled, each scoring card not yet drawn moved elsewhere in what is left of its pile
    (docs/rules/alhambra.md: a seat knows only the pile a scoring card is in), another
    generator for future chance."""
    other = state.clone()
    rng = random.Random(seed)
    rng.shuffle(other.bag)
    size = len(other.deck)
    money = [c for c in other.deck if c >= 0]
    rng.shuffle(money)
    spots = {}
    for card, (lo, hi) in other.ranges.items():
        now = other.deck.index(card)
        choices = [i for i in range(lo, min(hi, size)) if i != now and i not in spots]
        spots[rng.choice(choices) if choices else now] = card
    it = iter(money)
    other.deck = [spots[i] if i in spots else next(it) for i in range(size)]
    other.rng = random.Random(seed + 1)
    return other


def scoring_cards_moved(state: AlhambraState, other: AlhambraState) -> bool:
    """Whether every scoring card still in the deck lies elsewhere in ``other``'s."""
    return all(state.deck.index(card) != other.deck.index(card) for card in state.ranges)
