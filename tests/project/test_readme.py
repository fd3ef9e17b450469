"""The README is a front page: short, with the two commands a fresh machine runs, a "What we
found" block that `playtester study report` may rewrite between its markers, and links that
lead somewhere."""

from __future__ import annotations

import re
import shlex

from repo_paths import REPO
from typer.testing import CliRunner

from api.cli import app

README = (REPO / "README.md").read_text(encoding="utf-8")
MAIN_JOB = (
    "python3 -m venv .venv && .venv/bin/pip install -e . && "
    ".venv/bin/playtester run alquerque --agents hard,easy --matches 500 --seed 7"
)
TEST_SUITE = "./scripts/test"
BEGIN, END = "<!-- what-we-found:begin -->", "<!-- what-we-found:end -->"
LOCAL_LINK = re.compile(r"\]\((?!https?://)([^)#\s]+)(?:#[^)]*)?\)")
INTERVAL = re.compile(r"\[[−+-]?\d[\d.,]*( %)?, [−+-]?\d[\d.,]*( %)?\]")
STUDY_LINK = re.compile(r"\]\(docs/studies/([a-z0-9_]+)\.md\)")


def code_lines(text: str) -> list[str]:
    """The README's indented command lines, as a reader would copy them."""
    return [line[4:] for line in text.splitlines() if line.startswith("    ")]


def test_the_readme_stays_a_front_page() -> None:
    assert len(README.splitlines()) < 200


def test_the_two_commands_are_the_readmes_only_commands_and_come_first() -> None:
    assert code_lines(README) == [MAIN_JOB, TEST_SUITE]
    # Visible: both before the first study figure.
    assert README.index(TEST_SUITE) < README.index(BEGIN)


def test_the_main_job_asks_what_the_command_line_takes() -> None:
    words = shlex.split(MAIN_JOB.split("&&")[-1])
    assert words[0] == ".venv/bin/playtester"
    result = CliRunner().invoke(app, [*words[1:2], "--help"])
    assert result.exit_code == 0, result.output
    options = [w for w in words if w.startswith("--")]
    assert options == ["--agents", "--matches", "--seed"]
    for option in options:
        assert option in result.output


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert f"exec {TEST_SUITE}" in ci.splitlines()
    assert (REPO / "scripts" / "test").stat().st_mode & 0o111


def test_what_we_found_sits_between_its_markers_on_their_own_lines() -> None:
    lines = README.splitlines()
    assert lines.count(BEGIN) == 1 and lines.count(END) == 1
    assert README.count(BEGIN) == 1 and README.count(END) == 1
    assert lines.index(BEGIN) < lines.index(END)


def test_every_finding_has_an_interval_and_a_published_page() -> None:
    block = README[README.index(BEGIN) + len(BEGIN) : README.index(END)]
    items = re.split(r"\n(?=- )", block.strip())
    assert len(items) >= 6  # one or more per published study
    for item in items:
        assert item.startswith("- "), item
        assert INTERVAL.search(item), f"no interval: {item}"
        pages = STUDY_LINK.findall(item)
        assert pages, f"no study page: {item}"
        for name in pages:
            assert (REPO / "docs" / "studies" / f"{name}.md").is_file(), name
            assert (REPO / "docs" / "studies" / f"{name}.json").is_file(), name


def test_every_local_link_leads_to_a_file() -> None:
    targets = LOCAL_LINK.findall(README)
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (REPO / t).exists()]
    assert not missing, f"README links to missing files: {missing}"
