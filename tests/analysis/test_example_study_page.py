"""The study of the installed example game (studies/kalah.toml) regenerates its committed page
and twin byte for byte, with the example installed as a distribution the way pip would install
it (playtester's own environment lacks it, as a designer's does before ``pip install``).

tests/analysis/test_study_pages.py regenerates every other committed page; a page of a game
from an example package is regenerated here, where the package is installed first."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from game_packages import Site, site_packages
from repo_paths import REPO
from typer.testing import CliRunner

from api.cli import app

EXAMPLE = REPO / "examples" / "kalah"
PAGES = REPO / "docs" / "studies"
runner = CliRunner()


@pytest.fixture
def kalah(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    (tmp_path / "site").mkdir()
    with site_packages(tmp_path / "site", monkeypatch) as site:
        site.install_example(EXAMPLE)
        yield site


@pytest.mark.usefixtures("kalah")
def test_the_kalah_study_page_regenerates_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the page names the study file as the repository does
    out = tmp_path / "pages"
    result = runner.invoke(app, ["study", "report", "studies/kalah.toml", "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in out.iterdir())
    assert "kalah.md" in written and "kalah.json" in written
    for name in written:
        committed = PAGES / name
        assert committed.is_file(), f"{name} is written but not committed"
        assert (out / name).read_bytes() == committed.read_bytes(), f"{name} differs"


@pytest.mark.usefixtures("kalah")
def test_the_study_states_the_published_values_of_its_boards() -> None:
    # The study's description (the page's opening) quotes the paper's values for its boards:
    # they must be those of kalah.published, which the example's solver reproduces.
    from kalah.published import MARGINS, OUTCOMES

    study = tomllib.loads((REPO / "studies" / "kalah.toml").read_text(encoding="utf-8"))
    text = " ".join(study["description"].split())
    assert "gives 2 houses of 4 as a loss for the first player" in text
    assert OUTCOMES[(2, 4)] == "loss"
    assert "3 houses of 3 as a win" in text and OUTCOMES[(3, 3)] == "win"
    assert "4 houses of 3 as a win by 8 seeds" in text and MARGINS[(4, 3)] == 8
    boards = {(b["options"]["houses"], b["options"]["seeds"]) for b in study["batch"]}
    assert boards == {(2, 4), (3, 3), (4, 3)}
    assert all(b["options"]["empty_capture"] for b in study["batch"])


@pytest.mark.usefixtures("kalah")
def test_the_kalah_study_is_valid_and_its_committed_batches_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What tests/workers/ check of every other shipped study and committed batch.
    monkeypatch.chdir(REPO)
    db = f"sqlite:///{tmp_path / 'check.db'}"
    result = runner.invoke(app, ["study", "check", "studies/kalah.toml", "--db", db])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["study", "verify", "studies/kalah.toml", "--sample", "4"])
    assert result.exit_code == 0, result.output
