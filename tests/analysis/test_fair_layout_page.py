"""The committed fair-layout page says what its search tested: the confirmations are its
questions and batches, the screen's test of equality and its control are on it, and its
verdict stays within the intervals. Figures are recomputed here from the results folder's
Parquet files, statsmodels and SciPy, not read back from the code that wrote the page."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from repo_paths import REPO
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

STUDY = REPO / "studies" / "alveoles_fair_layout.toml"
RESULTS = REPO / "studies" / "results" / "alveoles_fair_layout"
PAGE = REPO / "docs" / "studies" / "alveoles_fair_layout.md"
TWIN = REPO / "docs" / "studies" / "alveoles_fair_layout.json"


@pytest.fixture(scope="module")
def twin() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TWIN.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def first_mover_share(folder: Path) -> float:
    """The mean win share of the seat that moved first, over the folder's played matches."""
    matches = pd.read_parquet(
        folder / "matches.parquet", columns=["match_index", "ok", "first_seat"]
    )
    seats = pd.read_parquet(folder / "seats.parquet", columns=["match_index", "seat", "win_share"])
    played = matches[matches["ok"]]
    joined = seats.merge(played, on="match_index")
    first = joined[joined["seat"] == joined["first_seat"]]
    assert len(first) == len(played)
    return float(first["win_share"].mean())


def batch_id(name: str) -> str:
    meta = json.loads((RESULTS / name / "batch.json").read_text(encoding="utf-8"))
    return str(meta["batch"]["id"])


def test_the_confirmations_are_questions_with_the_figures_their_matches_give(
    twin: dict[str, Any], page: str
) -> None:
    asked = {(q["batch"], q["against"]): q for q in twin["questions"]}
    best, base = "tune-confirm-best", "tune-confirm-base"
    assert {(best, None), (base, None), (best, base)} <= set(asked)
    for name in (best, base):
        share = first_mover_share(RESULTS / name)
        assert asked[(name, None)]["result"]["estimate"] == pytest.approx(share - 0.5, abs=2e-6)
        low, high = (
            asked[(name, None)]["result"]["ci_low"],
            asked[(name, None)]["result"]["ci_high"],
        )
        assert low < share - 0.5 < high
    difference = asked[(best, base)]["result"]
    expected = first_mover_share(RESULTS / best) - first_mover_share(RESULTS / base)
    assert difference["difference"] == pytest.approx(expected, abs=2e-6)
    assert difference["ci_low"] < expected < difference["ci_high"]
    questions = page.split("## Questions")[1].split("## The search")[0]
    for q in (asked[(best, None)], asked[(base, None)], asked[(best, base)]):
        assert f"### {q['number']}. {q['title']}" in questions


def test_every_kept_batch_is_in_the_pages_table_of_batches(page: str) -> None:
    table = page.split("## Batches")[1].split("## Methods")[0]
    kept = sorted(p.name for p in RESULTS.iterdir() if p.is_dir() and p.name.startswith("tune-"))
    assert {"tune-confirm-best", "tune-confirm-base", "tune-screen-base"} <= set(kept)
    for name in kept:
        assert f"| {name} | `{batch_id(name)}` |" in table


def test_classic_is_screened_as_the_trials_are(twin: dict[str, Any]) -> None:
    tune = tomllib.loads(STUDY.read_text(encoding="utf-8"))
    table, base = tune["tune"], tune["batch"][0]
    meta = json.loads((RESULTS / "tune-screen-base" / "batch.json").read_text())["batch"]
    assert meta["status"] == "done" and meta["options"]["layout"] == "classic"
    assert meta["matches"] == table["screen_matches"]
    # Common openings: the trials and the control keep the base batch's seed.
    assert table["common_openings"] and meta["seed"] == base["seed"]
    name, iterations = table["screen_agents"].split(":iterations=")
    assert [(a["name"], a["iterations"]) for a in meta["agents"]] == [(name, int(iterations))] * 2
    control = twin["search"]["control"]
    share = first_mover_share(RESULTS / "tune-screen-base")
    assert control["screened"]["estimate"] == pytest.approx(share - 0.5, abs=2e-6)
    assert control["batch_id"] == meta["id"]


def test_the_screens_test_of_equality_is_cochrans_q_over_the_trials_and_the_control(
    twin: dict[str, Any], page: str
) -> None:
    search = twin["search"]
    figures = [t["screened"] for t in search["trials"] if t["state"] == "COMPLETE"]
    figures.append(search["control"]["screened"])
    estimates = np.array([f["estimate"] for f in figures])
    z = stats.norm.ppf(0.975)
    errors = np.array([(f["ci_high"] - f["ci_low"]) / (2 * z) for f in figures])
    combined = combine_effects(estimates, errors**2)
    screen = search["screen"]
    assert screen["count"] == len(figures) == 41
    assert screen["df"] == len(figures) - 1
    assert screen["q"] == pytest.approx(combined.q, abs=1e-4)
    p_value = stats.chi2.sf(combined.q, len(figures) - 1)
    assert screen["p_value"] == pytest.approx(p_value, abs=1e-5)
    assert screen["spread"] == pytest.approx(np.std(estimates, ddof=1), abs=1e-5)
    assert screen["noise"] == pytest.approx(math.sqrt(np.mean(errors**2)), abs=1e-5)
    told = "could tell them apart" if p_value < 0.05 else "could not tell them apart"
    said = page.split("### What the screen could tell apart")[1].split("| trial |")[0]
    assert told in said
    assert f"Cochran's Q = {combined.q:.1f} on {len(figures) - 1} degrees of freedom" in said


def test_the_verdict_bounds_how_much_fairer_a_replayed_layout_can_be(
    twin: dict[str, Any], page: str
) -> None:
    search = twin["search"]
    base = search["base"]["first_player_advantage"]
    base_far = max(abs(base["ci_low"]), abs(base["ci_high"]))

    def near(f: dict[str, float]) -> float:
        return 0.0 if f["ci_low"] <= 0 <= f["ci_high"] else min(abs(f["ci_low"]), abs(f["ci_high"]))

    replayed = [t["reranked"] for t in search["trials"] if t["reranked"] is not None]
    assert len(replayed) == tomllib.loads(STUDY.read_text())["tune"]["rerank"]
    most = max(base_far - near(f) for f in replayed)
    verdict = page.split("### Within what was tested")[1].split("## ")[0]
    if most > 0:
        wording = f"by more than {most * 100:.1f} points"
    else:
        wording = f"by at least {-most * 100:.1f} points"
    assert wording in verdict
    # What the replayed were picked on and what they gave again: means of the twin's figures.
    complete = [t for t in search["trials"] if t["state"] == "COMPLETE"]
    picked = np.mean([t["screened"]["estimate"] for t in complete if t["reranked"]])
    everyone = np.mean([t["screened"]["estimate"] for t in complete])
    again = np.mean([f["estimate"] for f in replayed])
    assert (
        f"(mean {picked * 100:+.1f} %, against {everyone * 100:+.1f} % over all "
        f"{len(complete)} screened) and averaged {again * 100:+.1f} % when played again"
    ) in verdict
    assert re.search(r"The screen did(?: not)? tell its 41 variants apart", verdict)


def test_the_verdict_names_the_batch_of_its_strength_figure_after_the_confirmations(
    twin: dict[str, Any],
) -> None:
    # The search's sentence quotes the 9,674-game confirmation of `classic`; the figure at the
    # strongest level comes from another batch of the same layout, so it must say which.
    search, strength = (entry["text"] for entry in twin["verdict"][:2])
    assert "confirmed at" in search
    played = {name: b["matches"] for name, b in twin["batches"].items()}
    named = re.match(r"In the `(\w[\w-]*)` batch \(([\d,]+) games\) at `", strength)
    assert named, strength
    assert int(named[2].replace(",", "")) == played[named[1]]
    share = first_mover_share(RESULTS / named[1])
    assert f"**{(share - 0.5) * 100:+.1f} %**" in strength
