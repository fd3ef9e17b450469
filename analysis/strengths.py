"""Bradley–Terry strengths of the players of a batch, with intervals over units of sampling.

Every ordered pair of seats held by different players in a match is one comparison, won by
the larger win share (a tie counts ½ each way); copies of one agent spec are one player and
their meetings with each other are no comparison. Strengths are fitted by choix's ILSR with a
small ridge penalty and shown on the Elo scale with mean zero.

The interval is analytic, so it needs no resampling and no seed: the cluster-robust sandwich
``I⁺ (G/(G−1) Σ_g u_g u_gᵀ) I⁺`` of the Bradley–Terry likelihood, with ``u_g`` the score
(gradient) of unit ``g``'s comparisons and ``I`` the information at the fit (a graph Laplacian;
its pseudo-inverse gives the covariance of the mean-zero strengths), and Student's t on
``stats.unit_df`` degrees of freedom (G − 2 for units of one size; the sandwich of Huber/White,
clustered as in Liang & Zeger, Biometrika 73 (1986)). Units are ``Wide.unit``
(``analysis.units``: a round of the seating design; matches sharing an opening only where the
batch declares its book a sample of openings). No interval is given with fewer
units than players (nor fewer than ``clustered.MIN_UNITS``): the units' scores sum to about
zero, so their sandwich has rank at most G − 1 and cannot hold the P − 1 free strengths'
covariance. Nor when a player won or lost every comparison (its strength is then unbounded and
only the ridge keeps it finite).

Columns: agent (the player's first label), labels (its copies), strength, ci_low, ci_high,
units, note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import choix
import numpy as np
import pandas as pd
from scipy.special import expit

from analysis import stats
from analysis.agents import player_of
from analysis.clustered import MIN_UNITS, too_few_units
from analysis.tidy import Wide, meeting_results

BT_ALPHA = 0.01
"""Small ridge penalty so Bradley–Terry strengths stay finite when a player never wins."""
ELO_PER_NAT = 400.0 / math.log(10.0)
UNBOUNDED = "a player won or lost every comparison: its strength is unbounded, so no interval"
COLUMNS = ["agent", "labels", "strength", "ci_low", "ci_high", "units", "note"]


def unit_comparisons(w: Wide, player: np.ndarray, players: np.ndarray) -> np.ndarray:
    """(G, P, P) comparison matrices per unit: ``C[g, a, b]`` is player ``a``'s summed results
    against ``b`` in unit ``g`` (players numbered by their position in ``players``)."""
    _, unit = np.unique(w.unit, return_inverse=True)
    g = int(unit.max()) + 1
    index = np.full(player.size, -1, dtype=np.int64)
    index[players] = np.arange(players.size)
    seat_player = index[player[w.agent]]  # (M, n)
    results = meeting_results(w.win)
    comp = np.zeros((g, players.size, players.size))
    for s in range(w.players):
        for t in range(w.players):
            if s == t:
                continue
            k = np.flatnonzero(seat_player[:, s] != seat_player[:, t])
            np.add.at(comp, (unit[k], seat_player[k, s], seat_player[k, t]), results[k, s, t])
    return comp


def sandwich_covariance(comp: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance of mean-zero strengths (natural scale) at ``theta``."""
    g = comp.shape[0]
    prob = expit(theta[:, None] - theta[None, :])
    meetings = comp + comp.transpose(0, 2, 1)
    scores = (comp - meetings * prob).sum(axis=2)  # (G, P): gradient per unit
    weight = meetings.sum(axis=0) * prob * (1 - prob)
    info = np.diag(weight.sum(axis=1)) - weight
    bread = np.linalg.pinv(info)
    meat = g / (g - 1) * scores.T @ scores
    return np.asarray(bread @ meat @ bread)


def strengths(w: Wide, groups: Sequence[int] | None = None) -> pd.DataFrame:
    """Bradley–Terry strengths (Elo scale, mean zero) with 95 % intervals over units."""
    if w.matches == 0:
        return pd.DataFrame(columns=COLUMNS)
    player = player_of(w, groups)
    present = np.unique(w.agent)
    players = np.unique(player[present])
    if players.size < 2:
        return pd.DataFrame(columns=COLUMNS)
    comp = unit_comparisons(w, player, players)
    total = comp.sum(axis=0)
    theta = np.asarray(choix.ilsr_pairwise_dense(total, alpha=BT_ALPHA))
    theta = theta - theta.mean()
    units = comp.shape[0]
    nothing = np.full(players.size, math.nan)
    lo, hi = nothing, nothing
    note = too_few_units(units, max(MIN_UNITS, players.size))
    if note is None and ((total.sum(axis=1) <= 0).any() or (total.sum(axis=0) <= 0).any()):
        note = UNBOUNDED
    if note is None:
        se = np.sqrt(np.clip(np.diag(sandwich_covariance(comp, theta)), 0.0, None))
        # The small-sample rule of every interval over units, on the comparisons per unit.
        sizes = comp.reshape(units, -1).sum(axis=1)
        q = stats.t_quantile(stats.unit_df(stats.totals_sums(np.zeros(units), sizes)))
        lo, hi = (theta - q * se) * ELO_PER_NAT, (theta + q * se) * ELO_PER_NAT
    return pd.DataFrame(
        {
            "agent": [w.labels[p] for p in players],
            "labels": [[w.labels[a] for a in present if player[a] == p] for p in players],
            "strength": theta * ELO_PER_NAT,
            "ci_low": lo,
            "ci_high": hi,
            "units": units,
            "note": note,
        },
        columns=COLUMNS,
    )
