"""Study pages and their JSON twins come from the committed results alone and always the same:
each committed page regenerates identically in a fresh database, and a study of the test's own,
reported twice through two fresh databases, gives the same bytes and the figures of the
database it was played in."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from repo_paths import DATA, REPO
from sqlalchemy.engine import Engine
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from analysis.compare import compare
from analysis.report import build_report
from analysis.studies.definition import load_study
from analysis.studies.index import index_text, nav_text, pages, update_index
from analysis.studies.page import LocalSource, render_page
from api.cli import app
from storage.db import get_engine
from storage.queries import play_seconds
from storage.settings import Settings
from workers.studies.plan import plan_study
from workers.studies.runner import find_here

runner = CliRunner()
PAGES = REPO / "docs" / "studies"
TINY = DATA / "tiny_study.toml"


def run_tiny(tmp_path: Path, sqlite_url: str) -> Path:
    """The tiny study copied into ``tmp_path/studies`` and run: its file."""
    study = tmp_path / "studies" / "tiny.toml"
    study.parent.mkdir()
    shutil.copy(TINY, study)
    result = runner.invoke(app, ["study", "run", str(study), "--db", sqlite_url, "--workers", "1"])
    assert result.exit_code == 0, result.output
    return study


def run_and_report(tmp_path: Path, sqlite_url: str, name: str, text: str) -> Path:
    """The study ``text`` written as ``tmp_path/studies/<name>.toml``, run and reported: the
    folder its page was written to."""
    study = tmp_path / "studies" / f"{name}.toml"
    study.parent.mkdir()
    study.write_text(text)
    result = runner.invoke(app, ["study", "run", str(study), "--db", sqlite_url, "--workers", "1"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "pages"
    result = runner.invoke(app, ["study", "report", str(study), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


EXAMPLE_STUDIES = {"kalah"}
"""Studies of a game from an example package: tests/analysis/test_example_study_page.py
installs the package and regenerates their pages."""


def committed_params() -> list[object]:
    studies = [
        p
        for p in sorted((REPO / "studies").glob("*.toml"))
        if (PAGES / f"{p.stem}.json").is_file() and p.stem not in EXAMPLE_STUDIES
    ]
    if not studies:
        return [pytest.param(None, marks=pytest.mark.skip(reason="no study page committed yet"))]
    return [pytest.param(p, id=p.stem) for p in studies]


@pytest.mark.parametrize("study", committed_params())
def test_every_committed_page_regenerates_identically(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the page names the study file as the repository does
    out = tmp_path / "pages"
    result = runner.invoke(app, ["study", "report", f"studies/{study.name}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in out.iterdir())
    assert f"{study.stem}.md" in written and f"{study.stem}.json" in written
    for name in written:
        committed = PAGES / name
        assert committed.is_file(), f"{name} is written but not committed"
        assert (out / name).read_bytes() == committed.read_bytes(), f"{name} differs"


def test_a_study_reported_twice_from_its_files_gives_the_same_bytes_and_its_figures(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = run_tiny(tmp_path, sqlite_url)

    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        result = runner.invoke(app, ["study", "report", str(study), "--out", str(out)])
        assert result.exit_code == 0, result.output
    names = sorted(p.name for p in outs[0].iterdir())
    assert names == ["tiny-2-seats.svg", "tiny-3-agents.svg", "tiny.json", "tiny.md"]
    assert names == sorted(p.name for p in outs[1].iterdir())
    for name in names:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name

    # The twin holds the figures of the database the study was played in.
    data = json.loads((outs[0] / "tiny.json").read_text())
    engine = get_engine(sqlite_url)
    ids = {name: batch["id"] for name, batch in data["batches"].items()}
    first = build_report(engine, ids["random"])["first_player_advantage"]
    (fpa, seats, agents) = data["questions"]
    assert fpa["figure"] == "first_player_advantage" and fpa["batch"] == "random"
    for key in ("estimate", "ci_low", "ci_high", "p_value"):
        assert fpa["result"][key] == pytest.approx(first[key], abs=1e-6)
    assert (
        fpa["result"]["units"] == first["units"] and fpa["result"]["interval"] == first["interval"]
    )
    assert seats["against"] == "easy-random" and len(seats["result"]["rows"]) == 2
    assert [row["agent"] for row in agents["result"]["rows"]] == ["easy", "random"]
    for name, batch_id in ids.items():
        batch = data["batches"][name]
        assert batch["matches_done"] == 12
        assert batch["play_seconds"] == pytest.approx(play_seconds(engine, batch_id), abs=1e-6)
    assert data["batches"]["random"]["keys"]["options"] == {"no_capture_limit": 30}
    assert data["matches"] == 24
    page = (outs[0] / "tiny.md").read_text()
    assert f"playtester study verify {study}" in page
    assert "## Levels" not in page and "levels" not in data  # no ladder file beside the results


def _ladder_line(pairing: str, index: int, seats: list[str], returns: list[float]) -> str:
    cpu = {"random": 0.001, "easy": 0.002, "medium": 0.03}
    return json.dumps(
        {
            "pairing": pairing,
            "index": index,
            "round": index // 2,
            "seats": seats,
            "returns": returns,
            "cpu": [cpu[s] * (1 + index % 3) for s in seats],
            "match_cpu": 0.1,
            "plies": 30,
            "opening": 1000 + index,
        }
    )


def test_a_page_names_its_strongest_level_with_the_ladders_elo_and_cpu_time(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = run_tiny(tmp_path, sqlite_url)  # plays easy and random; the ladder's anchor is easy
    # easy against random in seat-swapped pairs, easy scoring 3/4; medium against easy, 19/20.
    lines, easy_cpu = [], []
    for k in range(40):
        first, second = (1.0, 0.0) if k % 2 else (1.0, 1.0)
        lines.append(_ladder_line("easy-random", 2 * k, ["easy", "random"], [first, 1 - first]))
        lines.append(
            _ladder_line("easy-random", 2 * k + 1, ["random", "easy"], [1 - second, second])
        )
        easy_cpu += [0.002 * (1 + (2 * k) % 3), 0.002 * (1 + (2 * k + 1) % 3)]
    for k in range(20):
        won = 0.0 if k == 0 else 1.0
        lines.append(_ladder_line("medium-easy", 2 * k, ["medium", "easy"], [won, 1 - won]))
        lines.append(_ladder_line("medium-easy", 2 * k + 1, ["easy", "medium"], [1 - won, won]))
        easy_cpu += [0.002 * (1 + (2 * k) % 3), 0.002 * (1 + (2 * k + 1) % 3)]
    ladder = study.parent / "results" / "ladder"
    ladder.mkdir()
    (ladder / "alquerque.jsonl").write_text("\n".join(lines) + "\n")

    out = tmp_path / "pages"
    result = runner.invoke(app, ["study", "report", str(study), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "tiny.md").read_text()
    section = page.split("## Levels")[1].split("## Batches")[0]
    # random's Elo against easy from easy's score of 3/4 alone: −400·log10(3).
    random_elo = -400 * math.log10(0.75 / 0.25)
    data = json.loads((out / "tiny.json").read_text())["levels"]
    rows = {row["level"]: row for row in data["rows"]}
    assert data["strongest"] == "easy" and data["played"] == ["easy", "random"]
    assert rows["easy"]["elo"] == 0 and rows["easy"]["games"] == 120
    assert rows["easy"]["cpu_per_game"] == pytest.approx(sum(easy_cpu) / len(easy_cpu), abs=1e-6)
    assert rows["random"]["elo"] == pytest.approx(random_elo, abs=15)
    assert rows["medium"]["elo"] > 300
    easy_text = f"{sum(easy_cpu) / len(easy_cpu):.3g} CPU s a game"
    strongest = "The strongest level this study plays is **`easy`**: the ladder's reference"
    assert f"{strongest} (Elo 0), {easy_text}" in section
    assert "Measured stronger, and not played here: `medium`." in section
    assert "| **`random`** | 80 |" in section and "| `medium` | 40 |" in section
    assert "`studies/results/ladder/alquerque.jsonl`" in section


def test_a_ladder_file_that_is_not_a_ladders_is_one_error_and_no_page(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = run_tiny(tmp_path, sqlite_url)
    ladder = study.parent / "results" / "ladder" / "alquerque.jsonl"
    ladder.parent.mkdir()
    ladder.write_text(_ladder_line("easy-random", 0, ["easy", "random"], [1.0, 0.0]) + "\n")
    ladder.write_text(ladder.read_text() + '{"pairing": "easy-random", "index": 1}\n')
    out = tmp_path / "pages"
    result = runner.invoke(app, ["study", "report", str(study), "--out", str(out)])
    flat = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert f"the strength ladder's file: {ladder}:2: missing seats" in flat, flat
    assert "Traceback" not in result.output and not out.exists()


def test_every_committed_page_is_linked_from_the_index_and_the_site_nav() -> None:
    listed = pages(PAGES)
    index = (PAGES / "index.md").read_text()
    nav = (REPO / "mkdocs.yml").read_text()
    assert index_text(index, listed) == index, "docs/studies/index.md is not up to date"
    assert nav_text(nav, listed) == nav, "mkdocs.yml's Studies section is not up to date"
    for name in listed:
        assert f"({name}.md)" in index and f"studies/{name}.md" in nav


def test_the_index_and_the_nav_follow_the_pages(tmp_path: Path) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    shutil.copy(PAGES / "index.md", folder / "index.md")
    mkdocs = tmp_path / "mkdocs.yml"
    shutil.copy(REPO / "mkdocs.yml", mkdocs)
    for name, title in (("b", 'B: "quoted"'), ("a", "A")):
        (folder / f"{name}.md").write_text(f"# {title}\n")
        (folder / f"{name}.json").write_text(json.dumps({"title": title}))
    (folder / "stray.md").write_text("# no twin\n")
    assert update_index(folder, mkdocs) == {"a": "A", "b": 'B: "quoted"'}
    index = (folder / "index.md").read_text()
    assert '- [A](a.md)\n- [B: "quoted"](b.md)' in index and "stray" not in index
    assert "No study has published" not in index
    site = yaml.safe_load(mkdocs.read_text())
    assert site["nav"][-1] == {
        "Studies": ["studies/index.md", {"A": "studies/a.md"}, {'B: "quoted"': "studies/b.md"}]
    }
    assert site["validation"]["omitted_files"] == "warn"  # the rest of the file is untouched
    before = mkdocs.read_text()
    update_index(folder, mkdocs)
    assert mkdocs.read_text() == before


SQUARES = """
title = "Square values"

[defaults]
game = "alveoles"
seed = 3

[[batch]]
name = "random"
agents = "random"
matches = 16

[[question]]
figure = "square_values"
batch = "random"
"""


def test_the_square_values_question_shows_each_values_winners_against_losers(
    tmp_path: Path, sqlite_url: str
) -> None:
    out = run_and_report(tmp_path, sqlite_url, "squares", SQUARES)
    assert (out / "squares-1-square-values.svg").is_file()

    data = json.loads((out / "squares.json").read_text())
    rows = data["questions"][0]["result"]["rows"]
    # The classic layout's values (docs/rules/alveoles.md), one row each.
    assert sorted(row["tier"] for row in rows) == [1, 5, 10, 15, 20, 30, 50]
    report = build_report(get_engine(sqlite_url), data["batches"]["random"]["id"])
    expected = {row["tier"]: row for row in report["game"]["deciding_tiers"]}
    for row in rows:
        for key in ("difference", "ci_low", "ci_high", "p_holm"):
            assert row[key] == pytest.approx(expected[row["tier"]][key], abs=1e-6)
    question = (out / "squares.md").read_text().split("## Batches")[0]
    table = [line for line in question.splitlines() if line.startswith("| ")]
    values = [line.split("|")[1].strip() for line in table[1:]]
    assert values == ["50", "30", "20", "15", "10", "5", "1"]


FAMILY = """
title = "A family of tests"

[defaults]
game = "alquerque"
matches = 40
seed = 11

[[batch]]
name = "random"
agents = "random"

[[batch]]
name = "easy"
agents = "easy"

[[question]]
figure = "first_player_advantage"
batch = "random"
family = "edge"

[[question]]
figure = "first_player_advantage"
batch = "easy"
family = "edge"

[[question]]
figure = "first_player_advantage"
batch = "easy"
against = "random"
family = "edge"

[[question]]
figure = "first_player_advantage"
batch = "easy"
"""


def test_a_familys_p_values_are_holm_adjusted_over_its_questions_on_the_page_and_twin(
    tmp_path: Path, sqlite_url: str
) -> None:
    out = run_and_report(tmp_path, sqlite_url, "family", FAMILY)

    data = json.loads((out / "family.json").read_text())
    engine = get_engine(sqlite_url)
    ids = {name: batch["id"] for name, batch in data["batches"].items()}
    raw = [
        build_report(engine, ids["random"])["first_player_advantage"]["p_value"],
        build_report(engine, ids["easy"])["first_player_advantage"]["p_value"],
        compare(engine, ids["easy"], ids["random"])["first_player_advantage"]["p_value"],
    ]
    expected = multipletests(raw, method="holm")[1]
    questions = data["questions"]
    for question, p, adjusted in zip(questions[:3], raw, expected, strict=True):
        assert question["family"] == {"name": "edge", "questions": [1, 2, 3]}
        assert question["result"]["p_value"] == pytest.approx(p, abs=1e-6)
        assert question["result"]["p_holm"] == pytest.approx(adjusted, abs=1e-6)
    assert "family" not in questions[3] and "p_holm" not in questions[3]["result"]

    questions_part = (out / "family.md").read_text().split("## Questions")[1].split("\n## ")[0]
    sections = questions_part.split("### ")[1:]
    assert len(sections) == 4
    for section, adjusted in zip(sections[:3], expected, strict=True):
        line = "Holm-adjusted over the 3 tests of family `edge` (questions 1, 2, 3): "
        written = "p < 0.001" if adjusted < 0.001 else f"p = {adjusted:.3g}"
        assert f"{line}{written}." in section, section
    assert "Holm" not in sections[3]


THREE_PLAYERS = """title = "Three players"

[defaults]
game = "alveoles"
players = 3
agents = "random"
matches = 30

[[batch]]
name = "asked"
seed = 1

[[batch]]
name = "listed"
seed = 2

[[question]]
figure = "first_player_advantage"
batch = "asked"

[[question]]
figure = "seats"
batch = "listed"
"""


class Recording(LocalSource):
    """The page's reports as ``LocalSource`` computes them, noting which asked for the
    compensation; ``full`` computes it for every batch whatever was asked."""

    def __init__(self, engine: Engine, full: bool) -> None:
        super().__init__(engine)
        self.full = full
        self.compensated: set[str] = set()

    def report(self, batch_id: str, *, compensation: bool = True) -> dict[str, Any]:
        if compensation:
            self.compensated.add(batch_id)
        return super().report(batch_id, compensation=compensation or self.full)


def test_a_page_computes_the_compensation_only_where_it_can_show_it(
    tmp_path: Path, sqlite_url: str
) -> None:
    path = tmp_path / "studies" / "three.toml"
    path.parent.mkdir()
    path.write_text(THREE_PLAYERS)
    result = runner.invoke(app, ["study", "run", str(path), "--db", sqlite_url, "--workers", "1"])
    assert result.exit_code == 0, result.output
    study = load_study(path)
    engine = get_engine(sqlite_url)
    ids = find_here(engine, plan_study(study, Settings(database_url=sqlite_url)))

    for batch_id in ids.values():
        full = build_report(engine, batch_id)
        assert full["fair_compensation"]["offsets"], "a points game of three has its komi"
        assert build_report(engine, batch_id, compensation=False)["fair_compensation"] is None

    lean, full = Recording(engine, full=False), Recording(engine, full=True)
    pages = [render_page(study, ids, source, ["playtester study run"]) for source in (lean, full)]
    assert lean.compensated == {ids["asked"]}
    assert pages[0].markdown == pages[1].markdown and pages[0].data == pages[1].data
    assert pages[0].figures == pages[1].figures
