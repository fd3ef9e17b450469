"""An installed package's report section joins its batches' reports as ours do: declared as
``REPORT`` in its game module (here by reference), built from the stored batch, and refused
with the package named when what it names is not a report section."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from analysis_data import played_batch
from game_packages import Site, site_packages
from repo_paths import REPO

from analysis.games import game_report, registered
from analysis.report import build_report
from engines.plugins import GameLoadError
from storage.db import get_engine

TOY = (REPO / "tests" / "toy_nim.py").read_text(encoding="utf-8")
SECTION = """
from analysis.formatting import TextTable
from analysis.games import GameReport


def build(engine, batch, wide):
    return {"name": "toy", "batch": batch.id, "matches": wide.matches}


def tables(section):
    return [TextTable("Toy", ("matches",), [[str(section["matches"])]])]


REPORT = GameReport(name="toy", title="Toy: matches", build=build, tables=tables)
NOT_A_SECTION = {"name": "toy"}


class LookAlike:
    name = "toy"
    build = tables = staticmethod(print)


LOOK_ALIKE = LookAlike()
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    with site_packages(tmp_path, monkeypatch) as installed:
        yield installed


def test_a_packages_section_is_in_its_batches_report(site: Site, migrated_sqlite_url: str) -> None:
    source = TOY + '\nREPORT = "toy_section:REPORT"\n'
    site.install(
        "toy-nim",
        "0.3",
        {"toy": "toy_with_report"},
        {"toy_with_report": source, "toy_section": SECTION},
    )
    import toy_section  # type: ignore[import-not-found]

    assert game_report("toy") is toy_section.REPORT
    assert "toy" in registered()
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 6)
    report = build_report(get_engine(migrated_sqlite_url), batch_id)
    assert report["game"] == {"name": "toy", "batch": batch_id, "matches": 6}


def test_a_game_without_a_section_reports_the_generic_sections_only(
    site: Site, migrated_sqlite_url: str
) -> None:
    site.install("toy-nim", "0.3", {"toy": "toy_nim"})
    assert game_report("toy") is None and "toy" not in registered()
    batch_id = played_batch(migrated_sqlite_url, "toy", ["random", "random"], 4)
    report = build_report(get_engine(migrated_sqlite_url), batch_id)
    assert report["game"] is None and report["seats"]


@pytest.mark.parametrize(
    ("reference", "fragment"),
    [
        (
            "toy_section:NOT_A_SECTION",
            "REPORT 'toy_section:NOT_A_SECTION' is {'name': 'toy'}, of type dict, with no build",
        ),
        ("toy_section:LOOK_ALIKE", "REPORT is a LookAlike; it should be an analysis.games"),
    ],
)
def test_a_reference_to_something_else_is_refused_naming_the_package(
    site: Site, reference: str, fragment: str
) -> None:
    source = TOY + f'\nREPORT = "{reference}"\n'
    site.install(
        "odd-report", "0.2", {"toy": "toy_odd"}, {"toy_odd": source, "toy_section": SECTION}
    )
    with pytest.raises(GameLoadError) as caught:
        game_report("toy")
    assert "odd-report 0.2" in str(caught.value) and fragment in str(caught.value)
