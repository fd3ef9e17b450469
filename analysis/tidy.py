"""Turn the long seat-results table into one row per match (NumPy arrays, seat-major).

Every section works from this shape: with ``players`` seats, ``win[m, s]`` is seat ``s``'s win
share in the ``m``-th complete match. Matches missing a seat row (which a chunk written in one
transaction never leaves) are dropped rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from analysis.units import Units, sampling_units
from storage.models import SEAT_COLUMNS

LONG_COLUMNS = tuple(c for c in SEAT_COLUMNS if c not in ("batch_id", "rank", "move_ms"))
"""Columns of the long seat-results DataFrame the analysis reads: the stored seat columns of
one batch but ``rank`` and the move times (read apart, for the clock figures).

``rank`` (a placing by result, then points) is stored for display but never read here: every
head-to-head figure comes from the game result, ``win_share``, so a draw stays a draw whatever
the points.
"""


@dataclass(frozen=True)
class Wide:
    """Per-match arrays; ``labels[agent_index]`` names the agent sitting in a seat."""

    match_index: np.ndarray  # (M,) int64, ascending
    win: np.ndarray  # (M, n) float64
    points: np.ndarray  # (M, n) float64
    agent: np.ndarray  # (M, n) int64 agent_index
    labels: tuple[str, ...]
    first_seat: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """(M,) int64: the seat that moved first; a seat's turn position is
    ``(seat - first_seat) % n``. Seat 0 everywhere until ``with_matches`` says otherwise."""
    unit: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """(M,) int64 label of the match's unit of sampling (``analysis.units``); one unit per
    match until ``with_matches`` reads the batch's design."""
    units: Units | None = None
    """How ``unit`` was made (distinct openings, whether they were recorded), once known."""

    def __post_init__(self) -> None:
        m = self.match_index.size
        if self.first_seat.size != m:
            object.__setattr__(self, "first_seat", np.zeros(m, np.int64))
        if self.unit.size != m:
            object.__setattr__(self, "unit", np.arange(m, dtype=np.int64))

    @property
    def matches(self) -> int:
        return int(self.match_index.size)

    @property
    def players(self) -> int:
        return int(self.win.shape[1])


def agent_labels(df: pd.DataFrame) -> tuple[str, ...]:
    """Label of each agent_index found in ``df`` (missing indices get ``agent<i>``)."""
    if df.empty:
        return ()
    pairs = df[["agent_index", "agent"]].drop_duplicates("agent_index")
    top = int(pairs["agent_index"].max())
    found = dict(zip(pairs["agent_index"].astype(int), pairs["agent"].astype(str), strict=True))
    return tuple(found.get(i, f"agent{i}") for i in range(top + 1))


def to_wide(df: pd.DataFrame, players: int) -> Wide:
    """Pivot long seat results to per-match arrays without copying ``df``'s columns in place."""
    if players < 1:
        raise ValueError("players must be at least 1")
    labels = agent_labels(df)
    if df.empty:
        empty = np.zeros((0, players))
        return Wide(np.zeros(0, np.int64), empty, empty.copy(), empty.astype(np.int64), labels)
    mi = df["match_index"].to_numpy(np.int64)
    seat = df["seat"].to_numpy(np.int64)
    key = mi * players + seat
    if not (key.size < 2 or bool(np.all(key[1:] > key[:-1]))):
        order = np.argsort(key, kind="stable")
    else:
        order = None

    def col(name: str, dtype: type) -> np.ndarray:
        arr = df[name].to_numpy(dtype)
        return arr if order is None else arr[order]

    mi_s = mi if order is None else mi[order]
    seat_s = seat if order is None else seat[order]
    # Keep only matches with exactly seats 0..n-1 present.
    _, start, counts = np.unique(mi_s, return_index=True, return_counts=True)
    rows: np.ndarray | None = None
    if not (bool(np.all(counts == players)) and bool(np.all(seat_s < players))):
        first = start[counts == players]
        rows = (first[:, None] + np.arange(players)[None, :]).ravel()
        good = (seat_s[rows].reshape(-1, players) == np.arange(players)).all(axis=1)
        rows = (first[good][:, None] + np.arange(players)[None, :]).ravel()

    def shaped(arr: np.ndarray) -> np.ndarray:
        sel = arr if rows is None else arr[rows]
        return sel.reshape(-1, players)

    win = shaped(col("win_share", np.float64))
    return Wide(
        match_index=shaped(mi_s)[:, 0].copy(),
        win=win,
        points=shaped(col("points", np.float64)),
        agent=shaped(col("agent_index", np.int64)),
        labels=labels,
    )


def with_matches(
    w: Wide,
    matches: pd.DataFrame,
    round_size: int,
    *,
    by_opening: bool = False,
    by_game: bool = False,
) -> Wide:
    """``w`` with the turn order and units of sampling read from the ``frames.match_design``
    rows.

    ``matches`` needs the columns match_index, first_seat and opening (``frames.match_design``,
    whose missing starting seats are already filled in), and ``game`` for ``by_game``; units
    are the rounds of ``round_size`` matches, joined by a shared opening key only when
    ``by_opening`` and by a shared game only when ``by_game``
    (``analysis.units.sampling_units``).
    """
    rows = matches.set_index("match_index").reindex(w.match_index)
    first = rows["first_seat"].fillna(0).to_numpy(np.int64)
    units = sampling_units(
        w.match_index,
        _keys(rows["opening"]),
        round_size,
        by_opening=by_opening,
        game=_keys(rows["game"]) if by_game else None,
    )
    return replace(w, first_seat=first, unit=units.label, units=units)


def _keys(column: pd.Series) -> np.ndarray:
    """A nullable integer column as an object array of Python ints and None: keys are 63-bit,
    so they are compared as Python ints, never through float64."""
    return column.astype(object).where(column.notna(), None).to_numpy()


def turn_order_varies(w: Wide) -> bool:
    """True when some match did not start with seat 0, so turn position and seat index differ."""
    return bool(w.first_seat.size) and bool((w.first_seat != 0).any())


def by_turn(w: Wide) -> Wide:
    """``w`` with its seat columns in turn order: column ``t`` holds the seat that moved ``t``-th,
    ``(first_seat + t) % n``, so every seat figure computed on it is by turn position (0 = the
    starting player). ``w`` itself when every match started with seat 0."""
    if not turn_order_varies(w):
        return w
    n = w.players
    seat = (w.first_seat[:, None] + np.arange(n)[None, :]) % n
    rows = np.arange(w.matches)[:, None]
    return replace(
        w,
        win=w.win[rows, seat],
        points=w.points[rows, seat],
        agent=w.agent[rows, seat],
        first_seat=np.zeros(w.matches, np.int64),
    )


def meeting_results(win: np.ndarray) -> np.ndarray:
    """(M, n, n) result of seat ``s`` against seat ``t`` in each match: 1, ½ or 0.

    The result is the game's: the seat with the larger win share won the meeting, equal shares
    are a draw (a drawn game stays a draw whatever the points). The diagonal is ½.
    """
    a, b = win[:, :, None], win[:, None, :]
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def is_binary(values: np.ndarray) -> bool:
    """True when every value is exactly 0 or 1 (no shared wins)."""
    return bool(np.all((values == 0) | (values == 1)))
