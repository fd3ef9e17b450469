"""The section of a study page that reports its ``[tune]`` search: the trials, the variants
re-ranked at full strength, the best one and its confirmation beside the base variant.

Like the rest of the page it copies figures the reports and comparisons give
(``first_player_advantage`` of each kept batch, ``compare`` of the two confirmations) and the
trials' own saved figures; it computes none. Its verdict only reads them: which confirmation
is closer to zero and which intervals hold it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.studies.page_text import Source, interval, p_clause, p_text, pct

FIGURE_KEYS = ("estimate", "ci_low", "ci_high", "p_value", "interval", "units")
RERANK = "rerank-"
BEST, BASE = "confirm-best", "confirm-base"
FILES = "abcdefgh"


@dataclass(frozen=True)
class SearchInput:
    """What the page needs of a search: its saved trials, its kept batches (name -> id), the
    option searched and the screening level (None: trials play at the base level)."""

    trials: Sequence[Mapping[str, Any]]
    kept: Mapping[str, str]
    option: str
    screen_agents: str | None


def _pick(f: Mapping[str, Any]) -> dict[str, Any]:
    return {key: f[key] for key in FIGURE_KEYS if key in f}


def _grid(value: Any) -> list[str]:
    """A layout (rows 8 to 1) as a Markdown table."""
    lines = ["| | " + " | ".join(FILES) + " |", "|---|" + "---|" * len(FILES)]
    for index, row in enumerate(value):
        lines.append(f"| {8 - index} | " + " | ".join(str(v) for v in row) + " |")
    return lines


def search_section(search: SearchInput, source: Source) -> tuple[list[str], dict[str, Any]]:
    """The page's lines for the search and their data for the twin."""
    trials = sorted(
        search.trials,
        key=lambda t: (t["state"] != "COMPLETE", abs(_estimate(t)), t["number"]),
    )
    reranked = {
        int(name.removeprefix(RERANK)): source.report(batch_id)["first_player_advantage"]
        for name, batch_id in search.kept.items()
        if name.startswith(RERANK)
    }
    pruned = sum(t["state"] == "PRUNED" for t in trials)
    level = f" at a screening level (`{search.screen_agents}`)" if search.screen_agents else ""
    out = [
        "## The search",
        "",
        f"{len(trials)} values of `{search.option}` tried{level}, {pruned} of them stopped "
        "early as clearly unfair; the objective is the absolute first-player advantage."
        + (
            f" The {len(reranked)} best were played again at the base batch's level."
            if reranked
            else ""
        ),
        "",
        "| trial | first-player advantage | 95 % interval | re-ranked | 95 % interval |",
        "|---|---|---|---|---|",
    ]
    rows = []
    for t in trials:
        first = t["user_attrs"].get("first_player_advantage", {})
        again = reranked.get(t["number"])
        stopped = " (stopped)" if t["state"] == "PRUNED" else ""
        screened = f"{pct(first.get('estimate'), True)} | {interval(first, True)}"
        later = f"{pct(again['estimate'], True)} | {interval(again, True)}" if again else "– | –"
        out.append(f"| {t['number']}{stopped} | {screened} | {later} |")
        rows.append(
            {
                "trial": t["number"],
                "state": t["state"],
                "screened": _pick(first),
                "reranked": None if again is None else _pick(again),
            }
        )
    data: dict[str, Any] = {"option": search.option, "trials": rows}
    if BEST not in search.kept:
        return [*out, "", "The best value is not confirmed yet.", ""], data
    best = source.report(search.kept[BEST])
    value = best["batch"]["options"].get(search.option)
    out += ["", f"### The best {search.option}", ""]
    out += _grid(value) if isinstance(value, list) else [f"`{value}`"]
    out += ["", "### Confirmed", "", "| variant | matches | first-player advantage | 95 % interval "
            "| p |", "|---|---|---|---|---|"]  # fmt: skip
    confirmed = {"best": best}
    if BASE in search.kept:
        confirmed["base"] = source.report(search.kept[BASE])
    for label, report in confirmed.items():
        f = report["first_player_advantage"]
        out.append(
            f"| {label} | {report['batch']['matches_done']:,} | {pct(f['estimate'], True)} | "
            f"{interval(f, True)} | {p_text(f.get('p_value'))} |"
        )
    data["best"] = {"value": value, "batch_id": search.kept[BEST],
                    "first_player_advantage": _pick(best["first_player_advantage"])}  # fmt: skip
    if "base" in confirmed:
        d = source.compare(search.kept[BEST], search.kept[BASE])["first_player_advantage"]
        out += [
            "",
            f"Best minus base: **{pct(d['difference'], True)}** {interval(d, True)} "
            f"(95 %, {d['interval']}), {p_clause(d['p_value'])} ({d['test']}).",
        ]
        data["base"] = {
            "value": confirmed["base"]["batch"]["options"].get(search.option),
            "batch_id": search.kept[BASE],
            "first_player_advantage": _pick(confirmed["base"]["first_player_advantage"]),
        }
        data["difference"] = {k: d[k] for k in ("difference", "ci_low", "ci_high", "p_value")}
        answer = verdict(
            best["first_player_advantage"], confirmed["base"]["first_player_advantage"], d
        )
        out += ["", answer.sentence(search.option)]
        data["verdict"] = answer.as_dict()
    return [*out, ""], data


@dataclass(frozen=True)
class Verdict:
    """What the two confirmations say about the search's question: which variant is closer to
    an even game, which of their intervals hold zero, and whether they differ at 95 %."""

    closer: str
    best: float
    base: float
    even: tuple[str, ...]
    differ: bool

    def sentence(self, option: str) -> str:
        other = "base" if self.closer == "best" else "best"
        own, rival = (self.best, self.base) if self.closer == "best" else (self.base, self.best)
        holds = {
            ("best", "base"): "Both intervals hold zero.",
            ("best",): "The best's interval holds zero; the base's does not.",
            ("base",): "The base's interval holds zero; the best's does not.",
            (): "Neither interval holds zero.",
        }[self.even]
        differ = (
            "The two differ at 95 %."
            if self.differ
            else "The two do not differ at 95 % (the difference's interval holds zero)."
        )
        return (
            f"Closer to an even game: **the {self.closer} {option}** ({pct(own, True)}, "
            f"against the {other}'s {pct(rival, True)}). {holds} {differ}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"closer": self.closer, "even": list(self.even), "differ": self.differ}


def verdict(
    best: Mapping[str, Any], base: Mapping[str, Any], difference: Mapping[str, Any]
) -> Verdict:
    """Read the confirmations' first-player advantages and their difference (best minus
    base); a tie in distance from zero goes to the base, which needs no change to the game."""
    closer = "best" if abs(best["estimate"]) < abs(base["estimate"]) else "base"
    even = tuple(
        label
        for label, f in (("best", best), ("base", base))
        if f.get("ci_low") is not None and f["ci_low"] <= 0 <= f["ci_high"]
    )
    low, high = difference.get("ci_low"), difference.get("ci_high")
    differ = low is not None and high is not None and not low <= 0 <= high
    return Verdict(closer, float(best["estimate"]), float(base["estimate"]), even, differ)


def _estimate(trial: Mapping[str, Any]) -> float:
    first = trial["user_attrs"].get("first_player_advantage") or {}
    value = first.get("estimate")
    return float("inf") if value is None else float(value)
