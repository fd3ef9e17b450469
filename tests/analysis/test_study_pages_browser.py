"""Each study page's first screen in Chromium at 1280 x 800, on the docs site built from the
repository: the verdict, its table and its plot (the strength plot, or a series' plot) end
above the fold.

Every wait is on the page's observed state (its load event, the plot's image decoded), never
on the clock."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

playwright_api = pytest.importorskip("playwright.sync_api")

WIDTH, HEIGHT = 1280, 800
PLOT_KINDS = ("strength", "series")
"""The plots that open a page, beneath its verdict's table (``<study>-<kind>.svg``)."""
PLOTTED = sorted(
    (p.stem.removesuffix(f"-{kind}"), kind)
    for kind in PLOT_KINDS
    for p in (REPO / "docs" / "studies").glob(f"*-{kind}.svg")
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs site, built as ``mkdocs build`` builds it."""
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    done = subprocess.run(
        [str(mkdocs), "build", "-q", "-d", str(out)], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (scripts/test installs the Debian package)")
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def _bottom(tab: Any, selector: str) -> float:
    box = tab.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    return float(box["y"] + box["height"])


@pytest.mark.parametrize(("study", "kind"), PLOTTED, ids=[study for study, _ in PLOTTED])
def test_the_verdict_its_table_and_its_plot_fit_the_first_screen(
    study: str, kind: str, site: Path, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        tab = context.new_page()
        tab.goto((site / "studies" / study / "index.html").as_uri(), wait_until="load")
        plot = f'article img[src$="{study}-{kind}.svg"]'
        tab.wait_for_function(
            "s => { const i = document.querySelector(s); return i && i.complete "
            "&& i.naturalWidth > 0; }",
            arg=plot,
        )
        verdict = tab.locator("article h2#verdict")
        assert verdict.count() == 1
        # The verdict's table is the first table of the page, its plot the first image.
        table = _bottom(tab, "article table")
        drawn = _bottom(tab, plot)
        assert table < drawn <= HEIGHT, (table, drawn)
        top = tab.locator(plot).first.bounding_box()
        assert top is not None and top["height"] > 100  # drawn, not squashed to nothing
    finally:
        context.close()
