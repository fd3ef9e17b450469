"""The unit of sampling: which matches of a batch were drawn independently of each other.

A unit is what the batch's design draws independently (``engines.variation``,
``engines.seating``): a round of the seating design (one match with fixed seats, a seat-swapped
pair, the seatings of one drawn opening or deal), or a single match where rounds hold one. Under
player noise or random openings every round draws its opening afresh, so two rounds that happen
to begin alike are two draws of the same distribution, not one observation: equal openings do
not join units.

Two exceptions, both declared rather than guessed:

- a batch whose book's lines stand for openings beyond the book (``variation.units`` ``line``)
  links the matches of one line into one unit, so its figures speak of openings it did not play;
  batches stored before variations were declared link matches that share an opening as well,
  since nothing says what they drew;
- a batch that played no more distinct games than one round holds (deterministic players with
  nothing to vary them) is one unit whatever its size: a game played a thousand times bounds
  nothing about the game.

A match whose opening was not recorded (rows stored before it was kept) links only to its
round; ``Units.openings_known`` says whether openings could be counted at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

ROUND = "round"
OPENING = "opening and round"
ONE_LINE = "one line"


@dataclass(frozen=True)
class Units:
    """Per-match unit labels (0 … count − 1, in order of first appearance) and what made them.

    ``linked_by``: ``round`` (the design's rounds), ``opening and round`` (declared, or a batch
    stored before variations) or ``one line`` (every match replays the games of one round)."""

    label: np.ndarray  # (M,) int64
    count: int
    distinct_openings: int
    openings_known: bool
    linked_by: str = ROUND

    @property
    def matches(self) -> int:
        return int(self.label.size)


def links_openings(variation: Mapping[str, Any] | None) -> bool:
    """True when matches sharing an opening form one unit: a book declared a sample of openings
    (``units`` ``line``), or a batch stored before variations were declared (``None``)."""
    return variation is None or variation.get("units") == "line"


def sampling_units(
    match_index: np.ndarray,
    opening: np.ndarray,
    round_size: int,
    *,
    by_opening: bool = False,
    distinct_games: int | None = None,
) -> Units:
    """Units of matches ``match_index`` in rounds of ``round_size`` consecutive indices, with
    opening keys ``opening`` (a float or object array: NaN / None where not recorded).

    ``by_opening`` also links matches whose keys are equal; ``distinct_games`` (when known, and
    every opening recorded) makes every match one unit when it is no more than one round's worth
    of games."""
    m = int(match_index.size)
    if round_size < 1:
        raise ValueError(f"round size must be at least 1, got {round_size}")
    if m == 0:
        return Units(np.zeros(0, np.int64), 0, 0, True)
    keys = np.asarray(opening, dtype=object)
    known = np.array([k is not None and k == k for k in keys.tolist()], dtype=bool)
    opening_id = np.zeros(0, np.int64)
    distinct = 0
    if known.any():
        values, opening_id = np.unique(keys[known].astype(np.int64), return_inverse=True)
        distinct = int(values.size)
    all_known = bool(known.all())
    if all_known and distinct_games is not None and distinct_games <= round_size < m:
        return Units(np.zeros(m, np.int64), 1, distinct, all_known, ONE_LINE)
    rounds = np.asarray(match_index, np.int64) // round_size
    _, round_id = np.unique(rounds, return_inverse=True)
    if not by_opening or distinct == 0:
        return Units(_first_appearance(round_id), int(round_id.max()) + 1, distinct, all_known)
    # Bipartite graph: match nodes 0..m-1, round nodes after them, opening nodes after those.
    n_rounds = int(round_id.max()) + 1
    rows = np.concatenate([np.arange(m), np.flatnonzero(known)])
    cols = np.concatenate([m + round_id, m + n_rounds + opening_id])
    size = m + n_rounds + distinct
    graph = coo_matrix((np.ones(rows.size), (rows, cols)), shape=(size, size))
    _, component = connected_components(graph, directed=False)
    label = _first_appearance(component[:m])
    return Units(label, int(label.max()) + 1, distinct, all_known, OPENING)


def _first_appearance(groups: np.ndarray) -> np.ndarray:
    """``groups`` relabelled 0, 1, … in order of first appearance, so labels read in match
    order."""
    _, first, label = np.unique(groups, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return np.asarray(order[label], dtype=np.int64)
