"""The unit of sampling: which matches of a batch vary independently of each other.

Two matches are dependent when they share an opening (deterministic players then replay the
same line, so a batch of forty identical games is one observation, not forty) or when they
belong to one round of the seating design (a seat-swapped pair is what the pentanomial model
counts, and a round of a batch with declared openings plays one opening). A unit is a connected
component of "same opening key" ∪ "same round": every interval and test that treats matches as
independent draws should draw units instead.

A match whose opening was not recorded (rows stored before it was kept) links only to its
round; ``Units.openings_known`` says whether the figures could account for openings at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


@dataclass(frozen=True)
class Units:
    """Per-match unit labels (0 … count − 1, in order of first appearance) and what made them."""

    label: np.ndarray  # (M,) int64
    count: int
    distinct_openings: int
    openings_known: bool

    @property
    def matches(self) -> int:
        return int(self.label.size)


def sampling_units(match_index: np.ndarray, opening: np.ndarray, round_size: int) -> Units:
    """Units of matches ``match_index`` with opening keys ``opening`` (a float or nullable
    array: NaN / NA where not recorded) and rounds of ``round_size`` consecutive indices."""
    m = int(match_index.size)
    if round_size < 1:
        raise ValueError(f"round size must be at least 1, got {round_size}")
    if m == 0:
        return Units(np.zeros(0, np.int64), 0, 0, True)
    rounds = np.asarray(match_index, np.int64) // round_size
    _, round_id = np.unique(rounds, return_inverse=True)
    keys = np.asarray(opening, dtype=object)
    known = np.array([k is not None and k == k for k in keys.tolist()], dtype=bool)
    # Bipartite graph: match nodes 0..m-1, round nodes after them, opening nodes after those.
    n_rounds = int(round_id.max()) + 1
    rows = [np.arange(m), np.arange(m)]
    cols = [m + round_id]
    distinct = 0
    if known.any():
        opening_values, opening_id = np.unique(keys[known].astype(np.int64), return_inverse=True)
        distinct = int(opening_values.size)
        cols.append(m + n_rounds + opening_id)
        rows[1] = np.flatnonzero(known)
    else:
        rows.pop()
    size = m + n_rounds + distinct
    graph = coo_matrix(
        (np.ones(sum(r.size for r in rows)), (np.concatenate(rows), np.concatenate(cols))),
        shape=(size, size),
    )
    _, component = connected_components(graph, directed=False)
    _, first, label = np.unique(component[:m], return_index=True, return_inverse=True)
    # Relabel by first appearance, so labels read in match order.
    order = np.argsort(np.argsort(first))
    label = order[label].astype(np.int64)
    return Units(label, int(first.size), distinct, bool(known.all()))
