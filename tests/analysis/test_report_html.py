"""The HTML report opened in headless Chromium: the rendered DOM holds the figures and the
numbers, and a screenshot is saved (under the test's temporary folder)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from analysis_data import stored_alveoles_report
from PIL import Image

from analysis.plots import COLOURS
from analysis.render_html import render_html

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (scripts/test installs the Debian package)")
    return path


def run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


@pytest.mark.slow
def test_html_report_renders_in_chromium(migrated_sqlite_url: str, tmp_path: Path) -> None:
    report = stored_alveoles_report(migrated_sqlite_url, matches=200, p_seat0=0.4, seed=5)
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    text = page.read_text()
    # Self-contained: nothing to fetch (namespace URIs in the SVG are names, not requests).
    assert not re.search(r"(src|href)=[\"']?(https?:)?//|url\((?!#)|<script|<link|@import", text)

    dom = run_chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    for fig in (
        "fig-seats",
        "fig-agents",
        "fig-plies",
        "fig-heat-seat0",
        "fig-heat-agent-0",
        "fig-heat-agent-1",
        "fig-tiers",
    ):
        match = re.search(rf'<figure id="{fig}"[^>]*>\s*<svg', dom)
        assert match, f"figure {fig} missing from the rendered page"
    share = report["seats"][0]["win_share"]
    assert f"{100 * share:.1f}%" in dom
    assert report["batch"]["id"] in dom
    assert "greedy owns the square" in dom  # SVG text is kept as text
    fpa = report["first_player_advantage"]["estimate"]
    assert f"<b>{100 * fpa:.1f}%</b>" in dom

    shot = tmp_path / "report.png"
    run_chromium(tmp_path, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    with Image.open(shot) as image:
        assert image.format == "PNG" and image.size == (1280, 2400)
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    # The figures are painted, not only laid out: the seat bars in the first plot colour, the
    # game-length histogram in the third (analysis/plots.py), each over a visible area.
    for colour in (COLOURS[0], COLOURS[2]):
        rgb = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        painted = int((pixels == rgb).all(axis=1).sum())
        assert painted > 2_000, (colour, painted)
