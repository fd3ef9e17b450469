"""The section of a study page that reports its ``[tune]`` search: the trials, the variants
re-ranked at full strength, the best one and its confirmation beside the base variant.

Like the rest of the page it copies figures the reports and comparisons give
(``first_player_advantage`` of each kept batch, ``compare`` of the two confirmations) and the
trials' own saved figures; it computes none.
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
    return [*out, ""], data


def _estimate(trial: Mapping[str, Any]) -> float:
    first = trial["user_attrs"].get("first_player_advantage") or {}
    value = first.get("estimate")
    return float("inf") if value is None else float(value)
