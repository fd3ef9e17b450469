"""Study files end to end on this machine: checked whole before anything runs (errors name the
file, line and field), run once, found again when unchanged, run anew when changed, and a page
whose figures are the batches' own reports."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from api_support import client_for, make_api
from repo_paths import DATA, REPO
from sqlalchemy import func, select
from typer.testing import CliRunner

from analysis.compare import compare
from analysis.report import build_report
from analysis.studies.definition import load_study
from analysis.studies.page_text import interval, p_text, pct
from api.cli import app
from storage.db import get_engine
from storage.models import BATCH
from storage.submissions import OUTBOX

runner = CliRunner()
TINY = DATA / "tiny_study.toml"


def batch_count(url: str) -> int:
    with get_engine(url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(BATCH)).scalar_one())


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    shutil.copy(TINY, path)
    return path


def ids_from(output: str) -> dict[str, str]:
    return dict(re.findall(r"^([\w-]+): batch (\w+) \(", output, flags=re.M))


def test_a_study_runs_once_is_found_again_and_its_page_shows_the_reports_figures(
    tiny: Path, tmp_path: Path, sqlite_url: str
) -> None:
    code, output = invoke("study", "run", str(tiny), "--db", sqlite_url, "--workers", "1")
    assert code == 0, output
    ids = ids_from(output)
    assert set(ids) == {"easy-random", "random"}
    assert output.count("(new, queued)") == 2
    assert batch_count(sqlite_url) == 2

    # Unchanged: both found, none made, nothing queued for a service to start.
    code, again = invoke("study", "run", str(tiny), "--db", sqlite_url, "--workers", "1")
    assert code == 0, again
    assert ids_from(again) == ids
    assert again.count("(found, done)") == 2
    assert batch_count(sqlite_url) == 2
    with get_engine(sqlite_url).connect() as conn:
        assert conn.execute(select(func.count()).select_from(OUTBOX)).scalar_one() == 0

    pages = tmp_path / "pages"
    code, output = invoke("study", "report", str(tiny), "--out", str(pages))
    assert code == 0, output
    page = (pages / "tiny.md").read_text()
    engine = get_engine(sqlite_url)
    first = build_report(engine, ids["random"])["first_player_advantage"]
    assert f"**{pct(first['estimate'], True)}** {interval(first, True)}" in page
    assert f"p = {p_text(first['p_value'])}" in page
    diff = compare(engine, ids["random"], ids["easy-random"])
    for row in diff["seats"]:
        assert f"{pct(row['difference'], True)} | {interval(row, True)}" in page
    for row in build_report(engine, ids["easy-random"])["agents"]:
        assert (
            f"| {row['agent']} | {row['games']:,} | {pct(row['score'])} | {interval(row)} |" in page
        )
    for batch_id in ids.values():
        assert f"`{batch_id}`" in page
    assert f"playtester study run {tiny}" in page
    assert (pages / "tiny-2-seats.svg").read_text().startswith("<svg")
    assert "(tiny-2-seats.svg)" in page

    # The agents question put first moves the seats plot to number 3 and the agents plot to
    # number 1: the old files go, and a file beside the page that it never linked stays.
    (pages / "notes.svg").write_text("<svg/>")
    text = tiny.read_text()
    agents = '[[question]]\nfigure = "agents"\nbatch = "easy-random"\n'
    tiny.write_text(text.replace(agents, "").replace("[[question]]", agents + "\n[[question]]", 1))
    code, output = invoke("study", "report", str(tiny), "--out", str(pages))
    assert code == 0, output
    assert "(tiny-3-seats.svg)" in (pages / "tiny.md").read_text()
    plots = ["notes.svg", "tiny-1-agents.svg", "tiny-3-seats.svg"]
    assert sorted(p.name for p in pages.glob("*.svg")) == plots
    tiny.write_text(text)

    # A changed definition (one batch's seed) is refused while the old results are there (they
    # would be lost); with them moved away, it makes that batch anew and reuses the other.
    tiny.write_text(tiny.read_text().replace('name = "random"', 'name = "random"\nseed = 6'))
    code, refused = invoke("study", "run", str(tiny), "--db", sqlite_url, "--workers", "1")
    flat = " ".join(refused.split())
    assert code == 2 and f"{tiny}:13: random:" in flat and "another definition" in flat
    assert batch_count(sqlite_url) == 2
    shutil.move(tmp_path / "results" / "tiny" / "random", tmp_path / "old-random")
    code, changed = invoke("study", "run", str(tiny), "--db", sqlite_url, "--workers", "1")
    assert code == 0, changed
    new_ids = ids_from(changed)
    assert new_ids["easy-random"] == ids["easy-random"]
    assert new_ids["random"] != ids["random"]
    assert batch_count(sqlite_url) == 3


BAD = [
    ('game = "alquerque"', 'game = "chess"', 5, "easy-random.game"),
    ("seed = 5", "seed = 5\nplayers = 7", 8, "easy-random.players"),
    (
        "options = { no_capture_limit = 30 }",
        'options = { no_capture_limit = "many" }',
        16,
        "random.options.no_capture_limit",
    ),
    ('agents = "easy,random"', 'agents = "easy,nobody"', 11, "easy-random.agents"),
    ("matches = 12", "matches = 20000001", 6, "easy-random.matches"),
    ('figure = "agents"', 'figure = "luck"', 29, "question[2].figure"),
    ('batch = "easy-random"', 'batch = "missing"', 30, "question[2].batch"),
    # Square values are Les Alvéoles' figure: an Alquerque batch has no squares.
    ('figure = "agents"', 'figure = "square_values"', 29, "question[2].figure"),
    ('name = "random"', 'name = "random"\nwidth = 3', 15, "batch[1].width"),
    # A family is a set of single tests: two or more questions, each with one p-value.
    ('against = "easy-random"', 'against = "easy-random"\nfamily = "f"', 27, "question[1].family"),
    ('batch = "random"\n\n', 'batch = "random"\nfamily = "alone"\n\n', 21, "question[0].family"),
    (
        'batch = "random"\n\n',
        'batch = "random"\nfamily = "Two Words"\n\n',
        21,
        "question[0].family",
    ),
    ('batch = "random"\n\n', 'batch = "random"\nfamily = 3\n\n', 21, "question[0].family"),
    # Each key's errors at its own line, named by the key written in the file.
    ('name = "random"', 'name = "random"\nbook = "no-such-book.txt"', 15, "random.book"),
    ('name = "random"', 'name = "random"\nnoise = "x:0.1"', 15, "random.noise"),
    ('name = "random"', 'name = "random"\nstop = "sprt:nonsense"', 15, "random.stop"),
    ("seed = 5", "seed = 5\nnoise = 2.5", 8, "easy-random.noise"),
    # Values of the wrong kind, and nesting deeper than any study needs.
    ('name = "random"', 'name = "random"\ngame = ["alquerque"]', 15, "random.game"),
    ("seed = 5", "seed = 5\nplayers = true", 8, "defaults.players"),
    (
        "options = { no_capture_limit = 30 }",
        "options = { x = " + "[" * 2000 + "]" * 2000 + " }",
        16,
        "toml",
    ),
]
"""(text replaced, replacement, the line the error must name, the field it must start with)."""


@pytest.mark.parametrize(("old", "new", "line", "field"), BAD)
def test_a_bad_study_is_refused_naming_file_line_and_field_before_anything_runs(
    tiny: Path, migrated_sqlite_url: str, old: str, new: str, line: int, field: str
) -> None:
    sqlite_url = migrated_sqlite_url
    text = tiny.read_text()
    assert old in text
    tiny.write_text(text.replace(old, new, 1))
    for command in ("check", "run"):
        code, output = invoke("study", command, str(tiny), "--db", sqlite_url)
        assert code == 2, output
        flat = " ".join(output.split())
        assert f"{tiny}:{line}: {field}" in flat, flat
        assert "Traceback" not in output
    assert batch_count(sqlite_url) == 0


def test_check_counts_what_the_file_holds_in_words(tiny: Path, migrated_sqlite_url: str) -> None:
    code, output = invoke("study", "check", str(tiny), "--db", migrated_sqlite_url)
    assert code == 0, output
    # The tiny study: two batches of 12 matches and three questions.
    assert "2 batches, 24 matches, 3 questions" in " ".join(output.split()), output
    text = tiny.read_text()
    one = text[: text.index("[[batch]]", text.index("[[batch]]") + 1)]
    tiny.write_text(one + '[[question]]\nfigure = "draw_rate"\nbatch = "easy-random"\n')
    code, output = invoke("study", "check", str(tiny), "--db", migrated_sqlite_url)
    assert code == 0, output
    assert "1 batch, 12 matches, 1 question" in " ".join(output.split()), output
    assert batch_count(migrated_sqlite_url) == 0


@pytest.mark.parametrize("book", ["../../../../../etc/passwd", "/etc/passwd"])
def test_a_book_outside_the_study_folder_is_never_read(
    tiny: Path, migrated_sqlite_url: str, book: str
) -> None:
    """A study file travels between people: it may not make the planner read a file outside
    its folder, nor echo that file's first line in an error."""
    tiny.write_text(
        tiny.read_text().replace('name = "random"', f'name = "random"\nbook = "{book}"')
    )
    code, output = invoke("study", "check", str(tiny), "--db", migrated_sqlite_url)
    assert code == 2, output
    flat = " ".join(output.split())
    assert f"{tiny}:15: random.book" in flat and "outside the study file's folder" in flat, flat
    assert "root:x" not in output and "nologin" not in output
    assert batch_count(migrated_sqlite_url) == 0


def test_a_study_file_that_is_not_toml_or_missing_is_refused(
    tmp_path: Path, sqlite_url: str
) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('title = "x"\n[[batch]\nname = 1\n')
    code, output = invoke("study", "check", str(broken), "--db", sqlite_url)
    assert code == 2 and f"{broken}:2: toml:" in " ".join(output.split())
    code, output = invoke("study", "check", str(tmp_path / "none.toml"), "--db", sqlite_url)
    assert code == 2 and "no such study file" in output


ONE_BATCH = '[[batch]]\nname = "a"\ngame = "alquerque"\nagents = "random"\n'


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ('title = "t"\nquestion = 5\n' + ONE_BATCH, 2, "question"),
        ('title = "t"\nbatch = "a"\n', 2, "batch"),
        ("defaults = [1]\n" + ONE_BATCH, 1, "defaults"),
        ('description = ["x"]\n' + ONE_BATCH, 1, "description"),
        ("tune = 3\n" + ONE_BATCH, 1, "tune"),
        # The precision target is a share's half-width, the budget a positive number of hours.
        ('title = "t"\nhalf_width = 0.5\n' + ONE_BATCH, 2, "half_width"),
        ('title = "t"\nhalf_width = "2 points"\n' + ONE_BATCH, 2, "half_width"),
        ('title = "t"\n\nbudget_cpu_hours = 0\n' + ONE_BATCH, 3, "budget_cpu_hours"),
        ('title = "t"\nbudget_cpu_hours = true\n' + ONE_BATCH, 2, "budget_cpu_hours"),
        ('title = "t"\nbudget_cpu_hours = inf\n' + ONE_BATCH, 2, "budget_cpu_hours"),
    ],
)
def test_a_study_whose_tables_are_not_tables_is_refused_by_line_and_field(
    tmp_path: Path, sqlite_url: str, text: str, line: int, field: str
) -> None:
    path = tmp_path / "shape.toml"
    path.write_text(text)
    code, output = invoke("study", "check", str(path), "--db", sqlite_url)
    assert code == 2, output
    assert f"{path}:{line}: {field}: " in " ".join(output.split())
    assert "Traceback" not in output


def test_a_study_may_not_take_the_ladders_folder_name(
    tmp_path: Path, migrated_sqlite_url: str
) -> None:
    path = tmp_path / "ladder.toml"
    shutil.copy(TINY, path)
    code, output = invoke("study", "run", str(path), "--db", migrated_sqlite_url)
    flat = " ".join(output.split())
    assert code == 2 and f"{path}:1: file name: 'ladder' is taken" in flat, flat
    assert batch_count(migrated_sqlite_url) == 0


def test_the_report_of_a_study_not_yet_run_says_so(tiny: Path, tmp_path: Path) -> None:
    code, output = invoke("study", "report", str(tiny), "--out", str(tmp_path / "pages"))
    assert code == 2
    flat = " ".join(output.split())
    assert "not run yet: no results in" in flat and "playtester study run" in flat
    assert not (tmp_path / "pages").exists()


# A study of a game from an example package (kalah) is checked where the package is installed:
# tests/analysis/test_example_study_page.py.
SHIPPED = sorted(p for p in (REPO / "studies").glob("*.toml") if p.stem != "kalah")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_study_is_valid(path: Path, migrated_sqlite_url: str) -> None:
    sqlite_url = migrated_sqlite_url
    code, output = invoke("study", "check", str(path), "--db", sqlite_url)
    assert code == 0, output
    assert batch_count(sqlite_url) == 0
    study = load_study(path)
    assert study.half_width is not None and 0 < study.half_width <= 0.05
    assert study.budget_cpu_hours is not None and study.budget_cpu_hours > 0


def test_a_study_is_checked_whole_by_the_server_before_its_first_batch_is_sent(
    tmp_path: Path, migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import api.cli.study as study_cli
    from api.client import ServiceClient

    # The second batch is within this machine's limits but over the server's.
    app, dispatcher = make_api(migrated_sqlite_url, max_matches_per_batch=20)
    monkeypatch.setattr(
        study_cli,
        "client_for",
        lambda server, key: ServiceClient(server, api_key=key, http=client_for(app)),
    )
    study = tmp_path / "two.toml"
    study.write_text(
        '[defaults]\ngame = "alquerque"\nagents = "random"\n\n'
        '[[batch]]\nname = "small"\nmatches = 10\n\n'
        '[[batch]]\nname = "large"\nmatches = 30\n'
    )
    code, output = invoke("study", "run", str(study), "--service", "http://playtester.test")
    assert code == 2, output
    flat = " ".join(output.split())
    assert f"{study}:11: large.matches: matches must be between 1 and 20, not 30" in flat
    assert output.count("error:") == 1
    assert dispatcher.started == [] and batch_count(migrated_sqlite_url) == 0
