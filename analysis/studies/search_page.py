"""What a study page says of its ``[tune]`` search: the confirmations as questions, the kept
batches in its table of batches, and a section with the trials, what their screen could tell
apart, the base variant screened as a control, the variants re-ranked at full strength, the
best one and the verdict, worded within what was tested.

The figures are the reports' and comparisons' (``first_player_advantage`` of each kept batch,
``compare`` of the two confirmations) and the trials' own saved figures. Two things are
computed here from those figures: the screen's spread and test of equality
(:mod:`analysis.heterogeneity`, each trial's standard error read off its 95 % interval), and
the most the replayed variants can be closer to an even game than the base, read off their
intervals and the confirmed base's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis.formatting import balance_note, shown_effective_n
from analysis.heterogeneity import Heterogeneity, heterogeneity, standard_error
from analysis.studies.page_text import Source, interval, p_clause, p_text, pct

FIGURE_KEYS = ("estimate", "ci_low", "ci_high", "p_value", "interval", "units")
QUESTION_KEYS = (*FIGURE_KEYS, "effective_n", "by")
DIFFERENCE_KEYS = ("a", "b", "difference", "ci_low", "ci_high", "interval", "test", "p_value")
RERANK = "rerank-"
BEST, BASE, CONTROL = "confirm-best", "confirm-base", "screen-base"
KEPT_PREFIX = "tune-"
"""How the page names a kept batch (its results folder's name)."""
FILES = "abcdefgh"


@dataclass(frozen=True)
class SearchInput:
    """What the page needs of a search: its saved trials, its kept batches (name -> id), the
    option searched and the screening level (None: trials play at the base level)."""

    trials: Sequence[Mapping[str, Any]]
    kept: Mapping[str, str]
    option: str
    screen_agents: str | None


@dataclass
class SearchPage:
    """The search's parts of a page: question sections (numbered on from the study's own),
    their twin entries, the section on the search and its twin data, and the kept batches
    the page quotes (name as in the results folder -> batch id) for its table of batches."""

    questions: list[str] = field(default_factory=list)
    question_data: list[dict[str, Any]] = field(default_factory=list)
    section: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    batches: dict[str, str] = field(default_factory=dict)


def _pick(f: Mapping[str, Any], keys: tuple[str, ...] = FIGURE_KEYS) -> dict[str, Any]:
    return {key: f[key] for key in keys if key in f}


def _grid(value: Any) -> list[str]:
    """A layout (rows 8 to 1) as a Markdown table."""
    lines = ["| | " + " | ".join(FILES) + " |", "|---|" + "---|" * len(FILES)]
    for index, row in enumerate(value):
        lines.append(f"| {8 - index} | " + " | ".join(str(v) for v in row) + " |")
    return lines


def _named(value: Any) -> str:
    """A variant's value as a sentence names it: a named value in code, a grid as 'placed'."""
    return f"`{value}`" if isinstance(value, str | int | float) else "as placed by hand"


def _points(value: float) -> str:
    return f"{value * 100:.1f}"


def _kept_entry(name: str, batch_id: str, report: Mapping[str, Any]) -> dict[str, Any]:
    meta = report["batch"]
    return {
        "id": batch_id,
        "name": KEPT_PREFIX + name,
        "options": meta.get("options"),
        "labels": meta.get("labels"),
        "matches": meta["matches"],
        "matches_done": meta["matches_done"],
        "matches_failed": meta["matches_failed"],
        "seed": meta.get("seed"),
        "status": meta["status"],
    }


def search_page(search: SearchInput, source: Source, first_number: int) -> SearchPage:
    """The search's parts of the page, its questions numbered from ``first_number``."""
    reports = {name: source.report(batch_id) for name, batch_id in search.kept.items()}
    page = SearchPage(batches={KEPT_PREFIX + name: i for name, i in sorted(search.kept.items())})
    compared = None
    if BEST in reports and BASE in reports:
        compared = source.compare(search.kept[BEST], search.kept[BASE])["first_player_advantage"]
    _questions(page, search, reports, compared, first_number)
    page.section, page.data = _section(search, reports, compared)
    page.data["batches"] = {
        KEPT_PREFIX + name: _kept_entry(name, search.kept[name], reports[name])
        for name in sorted(reports)
    }
    return page


def _questions(
    page: SearchPage,
    search: SearchInput,
    reports: Mapping[str, Any],
    compared: Mapping[str, Any] | None,
    number: int,
) -> None:
    """The confirmations as the page's questions: each variant's figure at the base batch's
    level, and their difference."""
    option = search.option
    asked: list[tuple[str, str, str | None]] = []
    if BEST in reports:
        asked.append((f"First-player advantage of the best {option} found, confirmed", BEST, None))
    if BASE in reports:
        value = reports[BASE]["batch"]["options"].get(option)
        title = f"First-player advantage of the base {option} ({_named(value)}), confirmed"
        asked.append((title, BASE, None))
    if compared is not None:
        asked.append((f"The best {option} found against the base", BEST, BASE))
    for title, name, against in asked:
        batch = KEPT_PREFIX + name
        if against is None:
            f = reports[name]["first_player_advantage"]
            block = reports[name].get("independence") or {}
            matches = block.get("matches")
            shown = shown_effective_n(f["effective_n"], matches)
            text = (
                f"First-player advantage in **{batch}**: **{pct(f['estimate'], True)}** "
                f"{interval(f, True)} (95 %, {f['interval']}), {p_clause(f['p_value'])}; "
                f"{f['units']:,} units of sampling, effective sample {shown:.1f}"
                f"{balance_note(f['effective_n'], matches, block.get('design_effect'))}; "
                f"measured at {f['by']}."
            )
            result = _pick(f, QUESTION_KEYS)
        else:
            assert compared is not None
            d, other = compared, KEPT_PREFIX + against
            text = (
                f"First-player advantage, **{batch}** {pct(d['a'], True)} against **{other}** "
                f"{pct(d['b'], True)}: difference **{pct(d['difference'], True)}** "
                f"{interval(d, True)} (95 %, {d['interval']}), {p_clause(d['p_value'])} "
                f"({d['test']})."
            )
            result = _pick(d, DIFFERENCE_KEYS)
        page.questions += [f"### {number}. {title}", "", text, ""]
        used = [name] + ([against] if against else [])
        page.question_data.append(
            {
                "number": number,
                "title": title,
                "figure": "first_player_advantage",
                "batch": batch,
                "against": None if against is None else KEPT_PREFIX + against,
                "result": result,
                "batches": {
                    KEPT_PREFIX + n: _kept_entry(n, search.kept[n], reports[n]) for n in used
                },
            }
        )
        number += 1


def _screen_test(
    trials: Sequence[Mapping[str, Any]], control: Mapping[str, Any] | None
) -> Heterogeneity | None:
    """Cochran's Q over every trial that played all its matches, and the control."""
    figures = [
        t["user_attrs"]["first_player_advantage"] for t in trials if t["state"] == "COMPLETE"
    ]
    if control is not None:
        figures.append(control)
    usable = [f for f in figures if f.get("ci_low") is not None and f.get("ci_high") is not None]
    if len(usable) < 2:
        return None
    return heterogeneity(
        [float(f["estimate"]) for f in usable],
        [standard_error(float(f["ci_low"]), float(f["ci_high"])) for f in usable],
    )


def _distance_bounds(f: Mapping[str, Any]) -> tuple[float, float]:
    """The least and the most distance from zero a 95 % interval allows."""
    low, high = float(f["ci_low"]), float(f["ci_high"])
    nearest = 0.0 if low <= 0 <= high else min(abs(low), abs(high))
    return nearest, max(abs(low), abs(high))


def closer_at_most(base: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> float:
    """How much closer to zero than ``base`` any of ``others`` can be, by the 95 % intervals:
    the base's farthest distance allowed minus each one's nearest, the largest of them
    (negative: every one is farther from zero than the base, by at least that much)."""
    if not others:
        raise ValueError("others: no figure to set against the base")
    farthest = _distance_bounds(base)[1]
    return max(farthest - _distance_bounds(f)[0] for f in others)


def _screen_lines(test: Heterogeneity | None, control: Mapping[str, Any] | None) -> list[str]:
    if test is None:
        return []
    told = (
        "could tell them apart"
        if test.distinguished
        else "could not tell them apart (their figures differ no more than sampling noise "
        "alone makes them)"
    )
    trials = test.count - (control is not None)
    screened = f"{trials} trials that played all their matches" + (
        f" and the control ({test.count} variants)" if control is not None else ""
    )
    return [
        "### What the screen could tell apart",
        "",
        f"Over the {screened}, the screen {told}: their first-player advantages spread by "
        f"{_points(test.spread)} points (standard deviation) where sampling alone gives "
        f"{_points(test.noise)}; Cochran's Q = {test.q:.1f} on {test.df} degrees of freedom, "
        f"{p_clause(test.p_value)}. Two variants had to differ by "
        f"{_points(test.least_difference)} points for the screen to tell them apart at 95 %. "
        "Each one's standard error is its 95 % interval's half-width over 1.96, and the test "
        "takes them as independent: they met the same openings, and where that shared luck "
        "makes their results alike the test can miss a difference but not invent one.",
        "",
    ]


def _section(
    search: SearchInput, reports: Mapping[str, Any], compared: Mapping[str, Any] | None
) -> tuple[list[str], dict[str, Any]]:
    """The section on the search and its data for the twin."""
    trials = sorted(
        search.trials,
        key=lambda t: (t["state"] != "COMPLETE", abs(_estimate(t)), t["number"]),
    )
    reranked = {
        int(name.removeprefix(RERANK)): report["first_player_advantage"]
        for name, report in reports.items()
        if name.startswith(RERANK)
    }
    control = reports[CONTROL]["first_player_advantage"] if CONTROL in reports else None
    base_value = reports[CONTROL]["batch"]["options"].get(search.option) if control else None
    pruned = sum(t["state"] == "PRUNED" for t in trials)
    level = f" at a screening level (`{search.screen_agents}`)" if search.screen_agents else ""
    out = [
        "## The search",
        "",
        f"{len(trials)} values of `{search.option}` tried{level}, {pruned} of them stopped "
        "early as clearly unfair; the objective is the absolute first-player advantage."
        + (
            f" The base {search.option} ({_named(base_value)}) was screened the same way, "
            "as a control, outside the search."
            if control is not None
            else " The base was not screened as a control."
        )
        + (
            f" The {len(reranked)} best were played again at the base batch's level."
            if reranked
            else ""
        ),
        "",
    ]
    test = _screen_test(trials, control)
    out += _screen_lines(test, control)
    out += [
        "| trial | first-player advantage | 95 % interval | re-ranked | 95 % interval |",
        "|---|---|---|---|---|",
    ]
    rows = []
    control_row = None
    # The control's row stands where its distance from zero ranks it among the trials.
    control_distance = math.inf
    if control is not None:
        control_distance = abs(_at(control))
        control_row = f"| control ({_named(base_value)}) | {pct(control['estimate'], True)} | "
        control_row += f"{interval(control, True)} | – | – |"
    for t in trials:
        first = t["user_attrs"].get("first_player_advantage", {})
        if control_row and t["state"] == "COMPLETE" and abs(_estimate(t)) > control_distance:
            out.append(control_row)
            control_row = None
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
    if control_row:
        out.append(control_row)
    data: dict[str, Any] = {"option": search.option, "trials": rows}
    if control is not None:
        data["control"] = {
            "value": base_value,
            "batch_id": search.kept[CONTROL],
            "screened": _pick(control),
            "closer_than": sum(
                t["state"] == "COMPLETE" and abs(_estimate(t)) > control_distance for t in trials
            ),
        }
    if test is not None:
        data["screen"] = test.as_dict()
    if BEST not in reports:
        return [*out, "", "The best value is not confirmed yet.", ""], data
    return _confirmed(search, reports, compared, out, data, reranked, test)


def _confirmed(
    search: SearchInput,
    reports: Mapping[str, Any],
    compared: Mapping[str, Any] | None,
    out: list[str],
    data: dict[str, Any],
    reranked: Mapping[int, Mapping[str, Any]],
    test: Heterogeneity | None,
) -> tuple[list[str], dict[str, Any]]:
    best = reports[BEST]
    value = best["batch"]["options"].get(search.option)
    out += ["", f"### The best {search.option}", ""]
    out += _grid(value) if isinstance(value, list) else [f"`{value}`"]
    out += ["", "### Confirmed", "", "| variant | matches | first-player advantage | 95 % interval "
            "| p |", "|---|---|---|---|---|"]  # fmt: skip
    confirmed = {"best": best}
    if BASE in reports:
        confirmed["base"] = reports[BASE]
    for label, report in confirmed.items():
        f = report["first_player_advantage"]
        out.append(
            f"| {label} | {report['batch']['matches_done']:,} | {pct(f['estimate'], True)} | "
            f"{interval(f, True)} | {p_text(f.get('p_value'))} |"
        )
    data["best"] = {"value": value, "batch_id": search.kept[BEST],
                    "first_player_advantage": _pick(best["first_player_advantage"])}  # fmt: skip
    if "base" not in confirmed or compared is None:
        return [*out, ""], data
    d = compared
    out += [
        "",
        f"Best minus base: **{pct(d['difference'], True)}** {interval(d, True)} "
        f"(95 %, {d['interval']}), {p_clause(d['p_value'])} ({d['test']}).",
    ]
    base_figure = confirmed["base"]["first_player_advantage"]
    data["base"] = {
        "value": confirmed["base"]["batch"]["options"].get(search.option),
        "batch_id": search.kept[BASE],
        "first_player_advantage": _pick(base_figure),
    }
    data["difference"] = {k: d[k] for k in ("difference", "ci_low", "ci_high", "p_value")}
    answer = verdict(best["first_player_advantage"], base_figure, d)
    out += ["", answer.sentence(search.option)]
    data["verdict"] = answer.as_dict()
    within = _within(search, data, reranked, base_figure, answer, test)
    return [*out, "", *within], data


def _within(
    search: SearchInput,
    data: dict[str, Any],
    reranked: Mapping[int, Mapping[str, Any]],
    base: Mapping[str, Any],
    answer: Verdict,
    test: Heterogeneity | None,
) -> list[str]:
    """The verdict bounded by what the search tested: how many variants, whether the screen
    told them apart, where the control stood, and how much closer to even any replayed
    variant can be than the confirmed base."""
    option = search.option
    parts = []
    if test is not None:
        parts.append(
            f"The screen {'told' if test.distinguished else 'did not tell'} its "
            f"{test.count} variants apart ({p_clause(test.p_value)})."
        )
    control = data.get("control")
    if control is not None:
        screened = sum(row["state"] == "COMPLETE" for row in data["trials"])
        parts.append(
            f"The base {option} screened at {pct(control['screened']['estimate'], True)}, "
            f"closer to zero than {control['closer_than']} of the {screened} screened."
        )
    if reranked:
        most = closer_at_most(base, list(reranked.values()))
        data["closer_at_most"] = most
        parts.append(
            f"Of the {len(reranked)} replayed at the base batch's level, none is closer to an "
            f"even game than the confirmed base by more than {_points(most)} points"
            if most > 0
            else f"Each of the {len(reranked)} replayed at the base batch's level is farther "
            f"from an even game than the confirmed base, by at least {_points(-most)} points"
        )
        parts[-1] += " (by their 95 % intervals and the base's)."
        parts.append(_picked_means(data["trials"], reranked, base))
    if answer.closer == "base":
        picked = ""
        if reranked:
            picked = f" It rests on the {len(reranked)} replayed at full strength"
            if test is not None and not test.distinguished:
                picked += f", picked by a screen that could not tell its {test.count} apart"
            picked += "."
        parts.append(
            f"So this search found no {option} fairer than the base.{picked} The "
            f"{len(search.trials)} tried are a sample of the possible ones; a fairer one may "
            "exist among the rest."
        )
    return ["### Within what was tested", "", " ".join(parts), ""] if parts else []


def _picked_means(
    rows: Sequence[Mapping[str, Any]],
    reranked: Mapping[int, Mapping[str, Any]],
    base: Mapping[str, Any],
) -> str:
    """What the replayed variants were picked on and what they gave: their mean screen figure
    against the whole screen's, and their mean when played again beside the base's."""
    screened = [r["screened"]["estimate"] for r in rows if r["state"] == "COMPLETE"]
    picked = [r["screened"]["estimate"] for r in rows if r["trial"] in reranked]
    again = [f["estimate"] for f in reranked.values()]
    return (
        f"They were picked for their screen figures (mean {pct(_mean(picked), True)}, against "
        f"{pct(_mean(screened), True)} over all {len(screened)} screened) and averaged "
        f"{pct(_mean(again), True)} when played again, where the confirmed base stands at "
        f"{pct(base['estimate'], True)}."
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


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


def _at(figure: Mapping[str, Any]) -> float:
    value = figure.get("estimate")
    return float("inf") if value is None else float(value)


def _estimate(trial: Mapping[str, Any]) -> float:
    return _at(trial["user_attrs"].get("first_player_advantage") or {})
