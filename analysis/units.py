"""The unit of sampling: which matches of a batch were drawn independently of each other.

A unit is what the batch's design draws independently (``engines.variation``,
``engines.seating``): a round of the seating design (one match with fixed seats, a seat-swapped
pair, the seatings of one drawn opening or deal), or a single match where rounds hold one. Under
player noise or random openings every round draws its opening afresh, so two rounds that happen
to begin alike are two draws of the same distribution, not one observation: equal openings do
not join units.

Equal *games* do, where the batch drew nothing that would make them two draws
(``links_games``: no variation, a book's lines, player noise that moves no agent, batches
stored before variations were declared): matches that replay the same move list, from the first
move to the last, are then one observation — deterministic players replaying their line — and
join one unit, with their rounds. The units thus follow the number of distinct games: a batch
that replays one game is one unit whatever its size, one that replays two, three or ten games is
at most that many, and a batch whose games all differ keeps its rounds.

One more link is declared rather than found: a batch whose book's lines stand for openings
beyond the book (``variation.units`` ``line``) links the matches of one line into one unit, so
its figures speak of openings it did not play; batches stored before variations were declared
link matches that share an opening as well, since nothing says what they drew.

A match whose opening or moves were not recorded (rows stored before they were kept, an archive
exported without moves) links only through what was; ``Units.openings_known`` says whether
openings could be counted at all.
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
GAME = "game and round"
ONE_LINE = "one line"


@dataclass(frozen=True)
class Units:
    """Per-match unit labels (0 … count − 1, in order of first appearance) and what made them.

    ``linked_by``: ``round`` (the design's rounds), ``opening and round`` (declared, or a batch
    stored before variations), ``game and round`` (matches that replay one game joined, with
    their rounds) or ``one line`` (every match in one unit although the design made several
    rounds: the batch replays one line). ``distinct_games``: the different games among the
    matches whose moves were recorded; ``rounds``: the units the design alone makes."""

    label: np.ndarray  # (M,) int64
    count: int
    distinct_openings: int
    openings_known: bool
    linked_by: str = ROUND
    distinct_games: int = 0
    rounds: int = 0

    @property
    def matches(self) -> int:
        return int(self.label.size)


def links_openings(variation: Mapping[str, Any] | None) -> bool:
    """True when matches sharing an opening form one unit: a book declared a sample of openings
    (``units`` ``line``), or a batch stored before variations were declared (``None``)."""
    return variation is None or variation.get("units") == "line"


def links_games(variation: Mapping[str, Any] | None) -> bool:
    """True when matches that replay one game form one unit: the batch drew no random opening
    per round and no player noise on an agent it moves, so an equal game is a replay, not a
    second draw (``none``, a book's lines, noise that moves no agent, or a batch stored before
    variations were declared)."""
    if variation is None:
        return True
    kind = variation.get("kind")
    if kind == "openings":
        return variation.get("source") == "book"
    if kind == "noise":
        return not variation.get("noised")
    return True


def _key_ids(keys: Any) -> tuple[np.ndarray, np.ndarray]:
    """(known mask, dense ids of the known keys) of an object array with None / NaN where a key
    was not recorded. Keys are compared as Python ints (63-bit), never through float64."""
    values = np.asarray(keys, dtype=object)
    known = np.array([k is not None and k == k for k in values.tolist()], dtype=bool)
    if not known.any():
        return known, np.zeros(0, np.int64)
    _, ids = np.unique(values[known].astype(np.int64), return_inverse=True)
    return known, np.asarray(ids, np.int64).ravel()


def sampling_units(
    match_index: np.ndarray,
    opening: np.ndarray,
    round_size: int,
    *,
    by_opening: bool = False,
    game: np.ndarray | None = None,
) -> Units:
    """Units of matches ``match_index`` in rounds of ``round_size`` consecutive indices, with
    opening keys ``opening`` and game keys ``game`` (integer keys in float or object arrays:
    NaN / None where not recorded; equal keys, equal move lists).

    A unit is a connected set of matches under "same round", "same game" and, when
    ``by_opening``, "same opening"."""
    m = int(match_index.size)
    if round_size < 1:
        raise ValueError(f"round size must be at least 1, got {round_size}")
    if m == 0:
        return Units(np.zeros(0, np.int64), 0, 0, True)
    opening_known, opening_id = _key_ids(opening)
    distinct = int(opening_id.max()) + 1 if opening_id.size else 0
    all_known = bool(opening_known.all())
    if game is None:
        game_known, game_id = np.zeros(m, bool), np.zeros(0, np.int64)
    else:
        game_known, game_id = _key_ids(game)
    games = int(game_id.max()) + 1 if game_id.size else 0
    rounds = np.asarray(match_index, np.int64) // round_size
    _, round_id = np.unique(rounds, return_inverse=True)
    round_id = np.asarray(round_id, np.int64).ravel()
    n_rounds = int(round_id.max()) + 1
    linked_openings = by_opening and distinct > 0
    if not linked_openings and games == game_id.size:
        # No game played twice (the common case): the rounds are the units.
        label = _first_appearance(round_id)
        return Units(label, n_rounds, distinct, all_known, ROUND, games, n_rounds)
    # Bipartite graph: match nodes 0..m-1, then round, game and (declared) opening nodes.
    rows = [np.arange(m), np.flatnonzero(game_known)]
    cols = [m + round_id, m + n_rounds + game_id]
    size = m + n_rounds + games
    if linked_openings:
        rows.append(np.flatnonzero(opening_known))
        cols.append(size + opening_id)
        size += distinct
    r, c = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(r.size), (r, c)), shape=(size, size))
    _, component = connected_components(graph, directed=False)
    label = _first_appearance(component[:m])
    count = int(label.max()) + 1
    if count == 1 and n_rounds > 1:
        linked_by = ONE_LINE
    elif linked_openings:
        linked_by = OPENING
    elif count < n_rounds:
        linked_by = GAME
    else:
        linked_by = ROUND
    return Units(label, count, distinct, all_known, linked_by, games, n_rounds)


def _first_appearance(groups: np.ndarray) -> np.ndarray:
    """``groups`` relabelled 0, 1, … in order of first appearance, so labels read in match
    order."""
    _, first, label = np.unique(groups, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return np.asarray(order[label], dtype=np.int64)
