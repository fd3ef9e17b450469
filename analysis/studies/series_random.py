"""The section of a series page that sets each solved board's classic value layout beside
randomly drawn ones (``analysis.studies.series``' ``RandomLayouts``): per board the mean
margin over layouts with its t interval (a layout is the unit: each is drawn on its own), how
many favour each side, and where the classic value lies among them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import t

from analysis.studies.page_text import by_side, capitalised, listed
from analysis.studies.series import RandomLayouts, Series

RANDOM_TITLE = "## Random value layouts of the solved boards"
CLASSIC_PLACES = {"below", "above", "opposite", "typical"}
"""Where a classic value lies among its board's random ones (``RandomRow.classic_place``)."""
MeanInterval = tuple[float, float | None, float | None]
"""A mean and its interval's ends (none where a single value gives no interval)."""


@dataclass(frozen=True)
class RandomRow:
    """A solved board's random value layouts, summed up, beside its classic layout's value."""

    batch: str
    label: str
    source: str
    layouts: RandomLayouts
    classic: int | None
    mean: float
    low: float | None
    high: float | None
    """The mean's 95 % t interval over layouts; none from a single layout."""

    @property
    def classic_place(self) -> str | None:
        """``below`` or ``above`` every random layout's value, on the ``opposite`` side of an
        even game from more than half of them, else ``typical``; none without a classic."""
        c, values = self.classic, self.layouts.values
        if c is None:
            return None
        if c < min(values):
            return "below"
        if c > max(values):
            return "above"
        against = self.layouts.second_ahead if c > 0 else self.layouts.first_ahead
        return "opposite" if c != 0 and 2 * against > self.layouts.count else "typical"


def mean_interval(values: Sequence[int], level: float = 0.95) -> MeanInterval:
    """The mean of ``values`` and its t interval (``n - 1`` degrees of freedom)."""
    sample = np.asarray(values, dtype=float)
    mean = float(sample.mean())
    if len(sample) < 2:
        return mean, None, None
    spread = float(sample.std(ddof=1))
    if spread == 0.0:
        # Every layout alike: SciPy gives NaN for a zero scale, and the interval is the mean.
        return mean, mean, mean
    low, high = t.interval(level, len(sample) - 1, loc=mean, scale=spread / np.sqrt(len(sample)))
    return mean, float(low), float(high)


def random_rows(series: Series) -> list[RandomRow]:
    """A row per board of the series whose solved-values file holds random layouts, in the
    series' order."""
    rows = []
    for name in series.batches:
        exact = series.exact.get(name)
        if exact is None or exact.random is None or not exact.random.values:
            continue
        mean, low, high = mean_interval(exact.random.values)
        rows.append(RandomRow(name, series.label(name), exact.source, exact.random,
                              exact.classic, mean, low, high))  # fmt: skip
    return rows


def _margin(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def _on(labels: list[str], rows: list[RandomRow]) -> str:
    """``on 2 × 3 and 3 × 3``, or ``on every board`` when the labels are all the rows'."""
    return (
        "on every board" if len(rows) > 1 and len(labels) == len(rows) else f"on {listed(labels)}"
    )


def _classic_clause(rows: list[RandomRow]) -> str:
    """Whether the classic values are typical of the random ones, and where they are not."""
    placed = [r for r in rows if r.classic_place is not None]
    if not placed:
        return ""
    where = {k: [r.label for r in placed if r.classic_place == k] for k in sorted(CLASSIC_PLACES)}
    parts = []
    if where["below"]:
        parts.append(f"below every random layout's on {listed(where['below'])}")
    if where["above"]:
        whose = "every one's" if parts else "every random layout's"
        parts.append(f"above {whose} on {listed(where['above'])}")
    if where["opposite"]:
        parts.append(
            "within their range but on the other side of an even game from most of them on "
            + listed(where["opposite"])
        )
    typical = where["typical"]
    if not parts:
        return (
            f"{capitalised(_on(typical, placed))} the classic layout's exact value is typical of "
            "its board's random value layouts: within their range, and not on the other side of "
            "an even game from most of them"
        )
    odd = [r.label for r in placed if r.classic_place != "typical"]
    text = "The classic layout's exact value is not typical of its board's random value layouts"
    text += f" on {listed(odd)}" if typical else ""
    text += ": it lies " + listed(parts)
    return text + (f" (it is typical on {listed(typical)})" if typical else "")


def _means_clause(rows: list[RandomRow]) -> str:
    """Which side each board's mean margin over random layouts favours, by its interval."""
    known = [r for r in rows if r.low is not None and r.high is not None]
    first, second, even = by_side([(r.label, r.low, r.high) for r in known])
    parts = []
    if first:
        parts.append(f"favours the first player {_on(first, rows)}")
    if second:
        parts.append(f"favours the second player {_on(second, rows)}")
    if even:
        parts.append(f"holds an even game {_on(even, rows)}")
    if not parts:
        return ""
    return "the 95 % interval of the mean margin over random layouts " + listed(parts)


def _random_sentence(rows: list[RandomRow]) -> str:
    classic, means = _classic_clause(rows), _means_clause(rows)
    text = f"{classic}, while {means}" if classic and means else classic or capitalised(means)
    files = listed([f"`{r.source}`" for r in rows])
    return f"{text} (read from the `random` lists of {files})."


def _random_table(series: Series, rows: list[RandomRow]) -> list[str]:
    heads = [series.axis, "random layouts", "first player's mean margin [95 %]", "range",
             "first player ahead", "even", "second player ahead", "classic layout"]  # fmt: skip
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for r in rows:
        n = r.layouts
        mean = f"{_margin(r.mean)} [{_margin(r.low)}, {_margin(r.high)}]"
        span = f"{min(n.values):+,} to {max(n.values):+,}"
        classic = "–" if r.classic is None else f"{r.classic:+,}"
        cells = [r.label, f"{n.count:,}", mean, span, f"{n.first_ahead:,}", f"{n.even:,}",
                 f"{n.second_ahead:,}", classic]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _random_note(series: Series, rows: list[RandomRow]) -> str:
    exact = series.exact[rows[0].batch]
    draws = {r.layouts.draw for r in rows}
    drawn = f" ({draws.pop()})" if len(draws) == 1 and None not in draws else ""
    return (
        f"Every margin is a start value in points, the {exact.meaning}. *Mean margin*: over the "
        f"board's random layouts, each drawn on its own{drawn}, with its 95 % t interval over "
        "layouts; *range*: the lowest and the highest layout's value; *first player ahead*, "
        "*even*, *second player ahead*: the layouts whose value is above 0, 0, below 0; "
        "*classic layout*: the start value of the file's classic layout."
    )


def random_section(series: Series, rows: list[RandomRow]) -> list[str]:
    """The section on the random layouts of the solved boards; none when no file holds any."""
    if not rows:
        return []
    out = [RANDOM_TITLE, "", _random_sentence(rows), "", *_random_table(series, rows), ""]
    return [*out, _random_note(series, rows), ""]


def random_data(rows: list[RandomRow]) -> dict[str, Any] | None:
    if not rows:
        return None
    return {
        "text": _random_sentence(rows),
        "rows": [
            {
                "batch": r.batch,
                "label": r.label,
                "source": r.source,
                "layouts": r.layouts.count,
                "mean": r.mean,
                "ci_low": r.low,
                "ci_high": r.high,
                "lowest": min(r.layouts.values),
                "highest": max(r.layouts.values),
                "first_player_ahead": r.layouts.first_ahead,
                "even": r.layouts.even,
                "second_player_ahead": r.layouts.second_ahead,
                "classic": r.classic,
                "classic_place": r.classic_place,
            }
            for r in rows
        ],
    }
