"""What a study page's first screen holds, checked without a browser: the verdict, its table
and its strength plot come before every other section, the plot is short for its width, and
the README's "What we found" is one short item per study. The screenshots of the first screens
in Chromium at 1280 x 800 are docs/studies/screens/<study>.png."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from repo_paths import REPO

PAGES = REPO / "docs" / "studies"
README = REPO / "README.md"
BEGIN, END = "<!-- what-we-found:begin -->", "<!-- what-we-found:end -->"
LARGEST_ASPECT = 2.0 / 6.4
"""The strength plot's height over its width at most: at the docs site's content width
(about 930 pixels at 1280) it is drawn about 290 pixels high at most, and the site's style
sheet caps it at 210 (docs/studies/studies.css)."""


def _twins(*keys: str) -> list[Path]:
    """The twins holding any of ``keys``: by default those of a first-player verdict; with
    ``figure_verdicts`` too, every page the README's "What we found" lists (how close to
    perfect has a figure's verdict only)."""
    keys = keys or ("verdict",)
    return [
        p for p in sorted(PAGES.glob("*.json")) if any(k in json.loads(p.read_text()) for k in keys)
    ]


FOUND = ("verdict", "figure_verdicts")


def _twin(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _sections(page: str) -> list[str]:
    return [line for line in page.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("twin", _twins(), ids=lambda p: p.stem)
def test_the_verdict_its_table_and_its_plot_come_before_every_other_section(twin: Path) -> None:
    page = (PAGES / f"{twin.stem}.md").read_text(encoding="utf-8")
    assert _sections(page)[0] == "## Verdict"
    lines = page.splitlines()
    # The title, then the verdict: nothing between them.
    assert [line for line in lines[: lines.index("## Verdict")] if line] == [lines[0]]
    head = page.split("## Verdict", 1)[1].split("\n## ", 1)[0]
    data = _twin(twin)
    for sentence in data["verdict"]:
        assert sentence["text"] in head
    assert 1 <= len(data["verdict"]) <= 5
    table = [line for line in head.splitlines() if line.startswith("|")]
    groups = list(dict.fromkeys(r["group"] for r in data["strength"]["rows"]))
    # One row per group under its header and rule.
    assert len(table) == 2 + len(groups)
    assert [row.split(" | ")[0].lstrip("| ") for row in table[2:]] == groups
    cells = {
        (row.split(" | ")[0].lstrip("| "), level): cell
        for row in table[2:]
        for level, cell in zip(table[0].split(" | ")[1:], row.split(" | ")[1:], strict=False)
    }
    for row in data["strength"]["rows"]:
        # The twin's figures rounded as the table shows them (the twin keeps six decimals).
        level = next(h for (g, h) in cells if g == row["group"] and f"`{row['level']}`" in h)
        shown = [float(v) for v in re.findall(r"[+-]\d+\.\d", cells[(row["group"], level)])]
        wanted = [row["estimate"], row["ci_low"], row["ci_high"]]
        assert shown == pytest.approx([w * 100 for w in wanted], abs=0.051)
    plot = f"]({twin.stem}-strength.svg)"
    if any(r["elo"] is not None for r in data["strength"]["rows"]):
        assert plot in head
    # The question and the commands come after the answer.
    assert page.index("## Verdict") < page.index("## How to reproduce")
    assert page.index("## Verdict") < page.index("## The question")
    if plot in page:
        assert page.index(plot) < page.index("## The question")


@pytest.mark.parametrize(
    "plot", sorted(PAGES.glob("*-strength.svg")), ids=lambda p: p.stem.removesuffix("-strength")
)
def test_the_strength_plot_is_short_enough_for_the_first_screen(plot: Path) -> None:
    root = ET.fromstring(plot.read_text(encoding="utf-8"))
    _, _, width, height = (float(v) for v in root.attrib["viewBox"].split())
    assert height / width <= LARGEST_ASPECT + 1e-9
    # Drawn to the page's width: no fixed size of its own.
    assert "width" not in root.attrib and "height" not in root.attrib


def test_every_study_page_has_its_first_screen() -> None:
    screens = PAGES / "screens"
    for twin in _twins(*FOUND):
        shot = screens / f"{twin.stem}.png"
        assert shot.is_file(), shot
        # A PNG's width and height are the big-endian words at bytes 16-24.
        head = shot.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(head[16:20]), int.from_bytes(head[20:24])) == (1280, 800)


def _items() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip("\n").splitlines()
    items: list[list[str]] = []
    for line in block:
        if line.startswith("- "):
            items.append([line])
        else:
            assert line.startswith("  "), line
            items[-1].append(line)
    return items


def _read(item: list[str]) -> str:
    """The item as a reader sees it: links' text without their targets, no Markdown marks."""
    text = " ".join(line.strip() for line in item)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.replace("**", "").replace("`", "")


def test_what_we_found_is_one_short_item_per_study() -> None:
    items = _items()
    assert len(items) == len(_twins(*FOUND))
    for item, twin in zip(items, _twins(*FOUND), strict=True):
        assert f"](docs/studies/{twin.stem}.md)" in "".join(item)
        assert all(len(line) <= 100 for line in item), item
        # Two lines of 100 characters as read, the title included.
        assert len(_read(item)) <= 200, _read(item)
        assert _twin(twin)["summary"] in " ".join(line.strip() for line in item)


def test_the_strategies_verdict_names_the_leader_the_stored_games_give() -> None:
    data = _twin(PAGES / "alveoles_strategies.json")
    folder = REPO / "studies" / "results" / "alveoles_strategies" / "four-strategies"
    seats = pd.read_parquet(folder / "seats.parquet")
    matches = pd.read_parquet(folder / "matches.parquet")
    played = seats[seats["match_index"].isin(matches[matches["ok"]]["match_index"])]
    scores = played.groupby("agent")["win_share"].mean()
    leader = str(scores.idxmax())
    share = float(scores.max())
    first = data["verdict"][0]["text"]
    assert first.startswith("At one table of 4, ")
    assert f"`{leader}` scores most, {share * 100:.1f} % [" in first
    assert data["summary"].startswith(f"`{leader}` scores most of the 4 at one table, ")
    assert f"against a fair {100 / 4:.1f} %" in data["summary"]


def test_the_perfect_play_verdict_opens_on_the_range_its_table_shows() -> None:
    data = _twin(PAGES / "alveoles_perfect.json")
    page = (PAGES / "alveoles_perfect.md").read_text(encoding="utf-8")
    head = page.split("## Verdict", 1)[1].split("\n## ", 1)[0]
    # The strongest level on each board: the last row before `perfect`'s, board by board.
    table = [r.split(" | ") for r in head.splitlines() if r.startswith("| ")]
    rows = [r for r in table[1:] if "[" in r[4]]
    tops: dict[str, list[str]] = {}
    for row in rows:
        if row[2] != "`perfect`":
            tops[row[0]] = row
    shares = sorted((float(r[4].split(" %")[0]), r[4]) for r in tops.values())
    agreed = sum(r[7].startswith("yes") for r in tops.values())
    (level,) = {r[2] for r in tops.values()}
    first = data["figure_verdicts"][0]["text"]
    assert first.startswith(
        f"On {len(tops)} solved boards, {level} makes the optimal move in {shares[0][1]} to "
        f"{shares[-1][1]} of its moves, and its first player's margin agrees with the exact value "
    )
    where = {0: "none of them", len(tops): f"all {len(tops)}"}.get(agreed, f"{agreed} of the")
    assert where in first
    assert data["summary"] == first.split(", and its first player's margin")[0] + "."
    assert first in head
