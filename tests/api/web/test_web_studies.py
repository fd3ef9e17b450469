"""The dashboard's study pages: the list from the twins, a page from its Markdown with every
text escaped and only its own figures shown, and nothing outside the pages' folder reachable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from api_support import client_for, make_api
from fastapi.testclient import TestClient

import api.web.studies as web_studies

PAGE = """# Fair <script>alert(1)</script> play

A description with <b>markup</b> and a [link](javascript:alert(2)).

### 1. First-player advantage

First-player advantage in **random**: **+5.0 %** [+1.0 %, +9.0 %] (95 %).

| seat | games |
|---|---|
| 0 | 1,200 |

![Seat balance of random](demo-1-seats.svg)
![elsewhere](https://example.com/x.svg)
![up](../../secret.svg)
"""


@pytest.fixture
def client(tmp_path: Path, migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "demo.md").write_text(PAGE)
    twin = {
        "format": "playtester-study",
        "title": "Fair <i>play</i>",
        "questions": [{}, {}],
        "matches": 1200,
        "play_seconds": 7200.0,
        "levels": {
            "strongest": "expert",
            "rows": [
                {"level": "greedy", "cpu_per_game": 0.002},
                {"level": "expert", "cpu_per_game": 1.4},
            ],
        },
    }
    (pages / "demo.json").write_text(json.dumps(twin))
    (pages / "demo-1-seats.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    (pages / "sizes.md").write_text(PAGE)
    series = {"title": "By size", "points": [{}, {}], "figure": "first_player_advantage"}
    (pages / "sizes.json").write_text(json.dumps({**twin, "questions": [{}] * 3, "series": series}))
    (pages / "lonely.json").write_text(json.dumps(twin))  # no Markdown beside it: not listed
    (pages / "other.json").write_text("{not json")
    (tmp_path / "secret.svg").write_text("<svg>secret</svg>")
    monkeypatch.setattr(web_studies, "PAGES", pages)
    app, _ = make_api(migrated_sqlite_url)
    return client_for(app)


def test_the_list_shows_each_published_study_escaped(client: TestClient) -> None:
    answer = client.get("/ui/studies")
    assert answer.status_code == 200
    assert 'href="/ui/studies/demo"' in answer.text
    assert "Fair &lt;i&gt;play&lt;/i&gt;" in answer.text and "<i>play" not in answer.text
    assert "1,200" in answer.text and "2.00" in answer.text  # matches, playing hours
    assert "<code>expert</code>, 1.40 CPU s a game" in answer.text
    assert "lonely" not in answer.text and "/ui/studies/other" not in answer.text
    # Questions: the twin's own, and a series as one more.
    cells = re.findall(r'<td data-label="Questions">(\d+)</td>', answer.text)
    assert sorted(map(int, cells)) == [2, 4]


def test_a_page_is_rendered_with_its_text_escaped_and_only_its_own_figures(
    client: TestClient,
) -> None:
    answer = client.get("/ui/studies/demo")
    assert answer.status_code == 200
    html = answer.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "&lt;b&gt;markup&lt;/b&gt;" in html
    assert 'href="javascript:' not in html  # left as text, not a link
    assert "<strong>+5.0 %</strong>" in html and "<td>1,200</td>" in html
    assert 'src="/ui/studies/figures/demo-1-seats.svg"' in html
    assert 'src="https://example.com' not in html and 'secret.svg"' not in html
    figure = client.get("/ui/studies/figures/demo-1-seats.svg")
    assert figure.status_code == 200 and figure.headers["content-type"] == "image/svg+xml"
    assert "default-src 'none'" in figure.headers["content-security-policy"]


@pytest.mark.parametrize(
    "path",
    [
        "/ui/studies/lonely",
        "/ui/studies/nothing",
        "/ui/studies/..%2Fsecret",
        "/ui/studies/figures/secret.svg",
        "/ui/studies/figures/..%2Fsecret.svg",
        "/ui/studies/figures/demo.md",
        "/ui/studies/DEMO",
    ],
)
def test_nothing_outside_the_pages_is_reachable(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code in (404, 422), (path, answer.status_code)
    assert "<svg>secret" not in answer.text and "&lt;svg&gt;secret" not in answer.text
