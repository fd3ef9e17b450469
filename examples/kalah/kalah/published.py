"""Kalah's published game-theoretic values, the outside check on ``kalah.solver``.

Source: Geoffrey Irving, Jeroen Donkers and Jos Uiterwijk, "Solving Kalah", ICGA Journal
23(3), 2000, pp. 139-148. The paper solved Kalah(m, n), m houses a side and n seeds a house,
from the opening position with the first player to move, under the empty-capture rule (the
last seed in an empty house of one's own is taken even when the opposite house is empty: the
example's ``empty_capture`` option, docs/rules.md K4) and with the seeds left on the board at
the end going to the owner of their row (docs/rules.md K5).

``OUTCOMES`` is its table of results for every m and n from 1 to 6 but (6, 6): win, draw or
loss for the first player. ``MARGINS`` is its table of perfect games for 4 to 6 houses: the
first player's final store difference under perfect play.
"""

from __future__ import annotations

from typing import Literal

CITATION = (
    'G. Irving, J. Donkers and J. Uiterwijk, "Solving Kalah", ICGA Journal 23(3), 2000, pp. 139-148'
)
RULES = {"empty_capture": True}
"""The example's options that give the paper's rules."""

Outcome = Literal["win", "draw", "loss"]

_ROWS = {  # houses: the outcome for 1, 2, ... seeds a house (W, D, L)
    1: "DLWLWD",
    2: "WLLLWW",
    3: "DWWWWL",
    4: "WWWWWD",
    5: "DDWWWW",
    6: "WWWWW",
}
_WORDS: dict[str, Outcome] = {"W": "win", "D": "draw", "L": "loss"}

OUTCOMES: dict[tuple[int, int], Outcome] = {
    (houses, seeds + 1): _WORDS[letter]
    for houses, row in _ROWS.items()
    for seeds, letter in enumerate(row)
}
"""(houses, seeds) → the first player's result under perfect play."""

MARGINS: dict[tuple[int, int], int] = {
    (4, 1): 2,
    (4, 2): 6,
    (4, 3): 8,
    (4, 4): 2,
    (4, 5): 2,
    (4, 6): 0,
    (5, 1): 0,
    (5, 2): 0,
    (5, 3): 8,
    (5, 4): 12,
    (5, 5): 2,
    (5, 6): 2,
    (6, 1): 2,
    (6, 2): 10,
    (6, 3): 2,
    (6, 4): 10,
    (6, 5): 12,
}
"""(houses, seeds) → the first player's final store difference under perfect play."""


def outcome_of(margin: int) -> Outcome:
    """The result a final store difference gives the first player."""
    return "win" if margin > 0 else "loss" if margin < 0 else "draw"
