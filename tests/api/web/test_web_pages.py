"""The dashboard's pages and JSON in process (no browser): boards drawn from the facts of
docs/rules/, replays against the stored results, the form's errors from the API, headlines from a
closed form, filters, sorting and pagination."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from analysis_data import CLASSIC_VALUES, played_batch, store_batch
from api_support import RecordingDispatcher, client_for, make_api
from fastapi.testclient import TestClient
from statsmodels.stats.proportion import proportion_confint

from api.web import forms
from api.web.boards import renderer_for
from engines.registry import load_game

SVG = "{http://www.w3.org/2000/svg}"
KEY = "page-key"
WIN = ((1.0, 0.0), (1.0, 0.0))
LOSS = ((0.0, 1.0), (0.0, 1.0))


@pytest.fixture
def app_client(migrated_sqlite_url: str) -> Iterator[tuple[TestClient, RecordingDispatcher, str]]:
    app, dispatcher = make_api(migrated_sqlite_url, api_key=KEY)
    with client_for(app) as client:
        yield client, dispatcher, migrated_sqlite_url


# --------------------------------------------------------------------------- boards


def test_every_registered_renderer_draws_its_games_positions_by_the_contract() -> None:
    from engines.registry import game_names

    assert renderer_for("no-such-game") is None
    for game_name in game_names():
        render = renderer_for(game_name)
        assert render is not None, f"{game_name} declares no board"
        state = load_game(game_name).new_initial_state(7)
        rng = random.Random(7)
        last = None
        for ply in range(4):
            drawn = render(state, last)
            assert drawn == render(state.clone(), last), f"{game_name}: not pure at ply {ply}"
            root = ET.fromstring(drawn)
            assert root.tag == f"{SVG}svg", game_name
            assert len(root.get("viewBox", "").split()) == 4, game_name
            assert root.get("width") is None and root.get("height") is None, game_name
            title = root.find(f"{SVG}title")
            assert title is not None and (title.text or "").strip(), game_name
            if state.is_terminal():
                break
            action = rng.choice(state.legal_actions())
            last = state.action_to_string(action)
            state.apply_action(action)


def test_alveoles_board_prints_the_classic_values_and_colours_the_closed_square() -> None:
    state = load_game("alveoles", players=2).new_initial_state()
    # Seat 0 plates a1's south side, seat 1 its west, seat 0 its east: a1 has three plates,
    # so seat 1 must close it and claims it (docs/rules/alveoles.md: the fourth plate claims it).
    for move in ("a1S", "a1W", "a1E", "a1N"):
        state.apply_string(move)
    root = ET.fromstring(renderer_for("alveoles")(state, "a1N"))  # type: ignore[misc]
    squares = [r for r in root.iter(f"{SVG}rect") if "sq" in r.get("class", "").split()]
    assert len(squares) == 64
    owned = [r for r in squares if "owned-1" in r.get("class", "")]
    assert len(owned) == 1
    a1 = owned[0]
    # a1 is the bottom-left square: smallest x, largest y.
    assert float(a1.get("x")) == min(float(r.get("x")) for r in squares)
    assert float(a1.get("y")) == max(float(r.get("y")) for r in squares)
    values = [
        (float(t.get("y")), float(t.get("x")), t.text)
        for t in root.iter(f"{SVG}text")
        if t.get("dominant-baseline") == "central" and t.get("font-weight") is not None
    ]
    # Read bottom row first, left to right: a1 … h1, a2 … h8 (the layout of docs/rules/alveoles.md).
    in_order = [int(v) for _, _, v in sorted(values, key=lambda t: (-t[0], t[1]))]
    assert in_order == CLASSIC_VALUES
    plates = [ln for ln in root.iter(f"{SVG}line") if "plate" in ln.get("class", "")]
    assert len(plates) == 4
    assert next(ln for ln in plates if "last" in ln.get("class", "")).get("y1") == a1.get("y")
    grooves = [ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "groove"]
    assert len(grooves) == 144 - 4


def test_alquerque_board_at_the_start_matches_docs_rules() -> None:
    state = load_game("alquerque").new_initial_state()
    root = ET.fromstring(renderer_for("alquerque")(state, None))  # type: ignore[misc]
    lines = list(root.iter(f"{SVG}line"))
    # 5 × 5 points: 40 orthogonal segments and one diagonal in each of the 16 unit squares.
    assert len(lines) == 56
    pieces = [c for c in root.iter(f"{SVG}circle") if "piece" in c.get("class", "")]
    xs = sorted({float(c.get("cx")) for c in root.iter(f"{SVG}circle")})
    ys = sorted({float(c.get("cy")) for c in root.iter(f"{SVG}circle")}, reverse=True)

    def name(c: Any) -> str:
        return "abcde"[xs.index(float(c.get("cx")))] + str(ys.index(float(c.get("cy"))) + 1)

    white = {name(c) for c in pieces if "seat-0" in c.get("class")}
    black = {name(c) for c in pieces if "seat-1" in c.get("class")}
    # docs/rules/alquerque.md: White on rows 1–2 and on d3, e3; Black mirrors it.
    assert white == {f"{f}{r}" for f in "abcde" for r in (1, 2)} | {"d3", "e3"}
    assert black == {f"{f}{r}" for f in "abcde" for r in (4, 5)} | {"a3", "b3"}


def test_alquerque_board_highlights_a_capture_path() -> None:
    state = load_game("alquerque").new_initial_state()
    state.apply_string("d3-c3")
    svg = renderer_for("alquerque")(state, "d3-c3")  # type: ignore[misc]
    root = ET.fromstring(svg)
    path = [p for p in root.iter(f"{SVG}polyline") if p.get("class") == "last"]
    assert len(path) == 1 and len(path[0].get("points").split()) == 2


# --------------------------------------------------------------------------- replay


@pytest.mark.parametrize("game", ["alveoles", "alquerque"])
def test_replay_positions_follow_the_stored_moves_to_the_stored_scores(
    app_client: tuple[TestClient, RecordingDispatcher, str], game: str
) -> None:
    client, _, url = app_client
    batch_id = played_batch(url, game, ["random", "random"], 2)
    for index in (0, 1):
        stored = client.get(f"/batches/{batch_id}/matches/{index}").json()
        positions: list[dict] = []
        start: int | None = 0
        while start is not None:  # a large board's positions come in several pages
            data = client.get(
                f"/ui/batches/{batch_id}/matches/{index}/positions", params={"start": start}
            ).json()
            assert data["positions"][0]["ply"] == start
            positions += data["positions"]
            start = data["next"]
        assert len(positions) == stored["plies"] + 1
        assert [p["move"] for p in positions[1:]] == stored["moves"]
        assert positions[0]["move"] is None and positions[-1]["to_move"] is None
        assert positions[-1]["scores"] == stored["scores"]
        boards = {p["board"] for p in positions}
        assert len(boards) == len(positions)  # every ply changes the board
        page = client.get(f"/ui/batches/{batch_id}/matches/{index}?ply=3")
        assert page.status_code == 200
        current = re.search(r'class="current" aria-current="step">(.*?)</a>', page.text, re.S)
        assert current is not None and stored["moves"][2] in current[1]
        assert 'href="?ply=4"' in page.text and 'href="?ply=2"' in page.text


def test_a_match_that_is_not_stored_is_a_404_page(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, url = app_client
    batch_id = played_batch(url, "alquerque", ["random"], 1)
    assert client.get(f"/ui/batches/{batch_id}/matches/7").status_code == 404
    missing = client.get("/ui/batches/abcdef123456")
    assert missing.status_code == 404 and "<h1>Not found</h1>" in missing.text


# --------------------------------------------------------------------------- form


def test_error_slots_follow_the_field_the_api_names() -> None:
    info = forms.game_info("alquerque")
    slots = forms.error_slots(info, 2)
    form = {"agent.0": "mcts", "agent.1": "alphabeta"}
    assert forms.error_slot("agents[1].depth", form, slots) == "agents[1].alphabeta.depth"
    assert forms.error_slot("agents[0].iterations", form, slots) == "agents[0].mcts.iterations"
    assert forms.error_slot("agents[0]", form, slots) == "agents[0]"
    assert forms.error_slot("options.no_capture_limit", form, slots) == ("options.no_capture_limit")
    assert forms.error_slot("stop_rule.elo1", form, slots) == "stop_rule"
    assert forms.error_slot("Idempotency-Key", form, slots) == forms.FORM_LEVEL
    assert forms.error_slot(None, form, slots) == forms.FORM_LEVEL


def test_form_body_leaves_blank_fields_to_the_defaults() -> None:
    info = forms.game_info("alquerque")
    form = {
        "game": "alquerque",
        "players": "2",
        "opt.no_capture_limit": "",
        "agent.0": "mcts",
        "param.0.mcts.iterations": "50",
        "param.0.mcts.exploration": "",
        "agent.1": "random",
        "matches": "12",
        "seed": "",
        "sprt": "on",
        "sprt.agent_a": "mcts",
        "sprt.agent_b": "random",
        "sprt.elo1": "20",
    }
    assert forms.form_to_body(form, info) == {
        "game": "alquerque",
        "players": 2,
        "agents": [{"name": "mcts", "iterations": "50"}, "random"],
        "matches": 12,
        "stop_rule": {"type": "sprt", "agents": ["mcts", "random"], "elo1": 20},
    }


def test_the_form_asks_for_a_variation_and_places_its_errors() -> None:
    info = forms.game_info("alquerque")
    form = {
        "game": "alquerque",
        "agent.0": "hard",
        "agent.1": "easy",
        "variation": "noise",
        "variation.plies": "6",
        "variation.margin": "0.02",
    }
    assert forms.form_to_body(form, info)["variation"] == {
        "kind": "noise",
        "plies": 6,
        "margin": 0.02,
    }
    assert "variation" not in forms.form_to_body({**form, "variation": ""}, info)
    slots = forms.error_slots(info, 2)
    assert forms.error_slot("variation.margin", form, slots) == "variation.margin"
    assert forms.error_slot("variation.book[2]", form, slots) == "variation"


BASE_FORM = {"game": "alquerque", "players": "2", "agent.0": "random", "agent.1": "random"}


def test_the_form_without_javascript_shows_the_apis_message_beside_the_field(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, dispatcher, _ = app_client
    answer = client.post("/ui/new", data={**BASE_FORM, "matches": "-4", "api_key": KEY})
    assert answer.status_code == 422
    direct = client.post(
        "/batches",
        json={"game": "alquerque", "players": 2, "agents": ["random", "random"], "matches": -4},
        headers={"Authorization": f"Bearer {KEY}"},
    ).json()
    beside = re.search(r'data-error-for="matches" id="err-matches">([^<]*)<', answer.text)
    assert beside is not None and beside[1] == direct["message"].replace("'", "&#39;")
    assert 'aria-describedby="err-matches" aria-invalid="true"' in answer.text
    assert dispatcher.started == []


def test_the_form_needs_the_key_and_lands_on_the_batch_page(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, dispatcher, _ = app_client
    refused = client.post("/ui/new", data={**BASE_FORM, "matches": "5", "api_key": "wrong"})
    assert refused.status_code == 401
    assert re.search(r'data-error-for="api_key" id="err-api_key">missing or wrong', refused.text)
    assert 'value="wrong"' not in refused.text  # a typed key is never echoed back
    made = client.post(
        "/ui/new", data={**BASE_FORM, "matches": "5", "api_key": KEY}, follow_redirects=False
    )
    assert made.status_code == 303
    batch_id = made.headers["location"].rsplit("/", 1)[-1]
    assert dispatcher.started == [batch_id]
    assert client.get(f"/batches/{batch_id}").json()["matches"] == 5
    as_json = client.post(
        "/ui/new",
        data={**BASE_FORM, "matches": "3"},
        headers={"Accept": "application/json", "Authorization": f"Bearer {KEY}"},
    )
    assert as_json.status_code == 202 and as_json.json()["url"].startswith("/ui/batches/")


def test_the_form_lists_each_option_and_agent_parameter_with_its_range(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, _ = app_client
    page = client.get("/ui/new?game=alveoles&players=3").text
    assert page.count('class="agent-pick"') == 3
    assert 'name="opt.layout"' in page and 'name="opt.square_bonus"' in page
    assert 'name="param.2.mcts.iterations"' in page
    # The cap in force (MAX_AGENT_ITERATIONS), not the search's own bound of 10⁶.
    assert re.search(r"int, default 400, 1 to 100000\b", page)
    assert re.search(r'<label for="agent-0">Seat 0</label>', page)


# --------------------------------------------------------------------------- list and batch


def test_the_list_shows_the_first_player_headline_with_its_interval(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, url = app_client
    _, batch_id = store_batch(
        url, game="alquerque", players=2, labels=["a", "b"], outcomes=[WIN] * 20 + [LOSS] * 10,
        seat_policy="fixed",
    )  # fmt: skip
    # Fixed seats, no moves recorded: every match its own unit (rounds of one), so exact.
    lo, hi = proportion_confint(20, 30, method="beta")
    estimate, low, high = (100 * (x - 0.5) for x in (20 / 30, lo, hi))
    expected = f"first player {estimate:.1f}% ({low:.1f}%–{high:.1f}%)"
    page = client.get("/").text
    assert expected in page
    live = client.get(f"/ui/live?ids={batch_id}").json()["items"][0]
    assert live["headline"] == expected and live["finished"] == 30


def test_the_list_filters_and_pages(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, url = app_client
    from api.web.pages import BATCHES_PER_PAGE

    made = []
    for i in range(BATCHES_PER_PAGE + 2):
        game = "alveoles" if i % 2 else "alquerque"
        made.append(store_batch(url, game=game, players=2, labels=["a", "b"], outcomes=[WIN])[1])
    first = client.get("/").text
    assert f"{len(made)} batches" in first and "page 1 of 2" in first
    second = client.get("/?page=2").text
    on_second = set(re.findall(r'data-batch="([0-9a-f]+)"', second))
    on_first = set(re.findall(r'data-batch="([0-9a-f]+)"', first))
    assert len(on_first) == BATCHES_PER_PAGE and on_first | on_second == set(made)
    only = client.get("/?game=alveoles").text
    assert f"{len(made) // 2} batches" in only
    assert set(re.findall(r'data-batch="([0-9a-f]+)"', only)) == set(made[1::2])
    assert "0 batches" in client.get("/?status=running").text
    assert client.get("/?status=nonsense").status_code == 422


def test_the_batch_page_sorts_and_filters_its_matches(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, url = app_client
    _, batch_id = store_batch(
        url,
        game="alquerque",
        players=2,
        labels=["a", "b"],
        outcomes=[WIN, LOSS, WIN, WIN, LOSS],
        plies=lambda i: [30, 12, 55, 7, 41][i],
        ended_by=lambda i: "repetition" if i == 2 else "normal",
        failed=[5],
    )

    def shown(query: str) -> list[int]:
        page = client.get(f"/ui/batches/{batch_id}?{query}").text
        section = page.split('id="matches"')[1]
        return [int(m) for m in re.findall(r"<td data-label=\"Match\">.*?#(\d+)", section)]

    assert shown("") == [0, 1, 2, 3, 4, 5]
    assert shown("sort=plies&order=desc") == [2, 4, 0, 1, 3, 5]
    assert shown("ended=repetition") == [2]
    assert shown("ended=failed") == [5]
    page = client.get(f"/ui/batches/{batch_id}").text
    assert 'id="fpa"' in page  # the report's own first-player paragraph
    assert f"/ui/compare?a={batch_id}" in page and f"/batches/{batch_id}/export?format=csv" in page


def test_pages_fetch_nothing_from_elsewhere(
    app_client: tuple[TestClient, RecordingDispatcher, str],
) -> None:
    client, _, url = app_client
    _, batch_id = store_batch(url, game="alquerque", players=2, labels=["a", "b"], outcomes=[WIN])
    for path in ("/", "/ui/new", f"/ui/batches/{batch_id}", "/ui/compare"):
        page = client.get(path).text
        for ref in re.findall(r'(?:src|href)="([^"]*)"', page):
            assert not re.match(r"^[a-z]+:", ref) or ref.startswith("http://www.w3.org"), ref
        for ref in re.findall(r'src="([^"]*)"', page):
            assert client.get(ref).status_code == 200, ref


# --------------------------------------------------------------------------- storage queries


def test_dashboard_queries_agree_on_both_dialects(db_url: str) -> None:
    from storage.db import get_engine
    from storage.queries import (
        batch_tallies,
        count_batches,
        list_matches_page,
        match_endings,
        starter_sums,
    )

    draw = ((0.5, 0.5), (3.0, 3.0))
    outcomes = [((1.0, 0.0), (9.0, 2.0)), draw, ((0.0, 1.0), (1.0, 12.0)), draw]
    engine, batch_id = store_batch(
        db_url,
        game="alveoles",
        players=2,
        labels=["a", "b"],
        outcomes=outcomes,
        plies=lambda i: [40, 144, 90, 144][i],
        ended_by=lambda i: "normal",
        failed=[4],
    )
    store_batch(db_url, game="alquerque", players=2, labels=["a", "b"], outcomes=[WIN])
    assert count_batches(engine) == 2
    assert count_batches(engine, game="alveoles") == 1
    assert count_batches(engine, status="done") == 0
    assert batch_tallies(engine, [batch_id])[batch_id] == (4, 1, 1)
    sums = starter_sums(engine, {batch_id: 1})[batch_id]
    # Seat 0 started every match (not recorded: seat 0) and took 1, 0.5, 0, 0.5; rounds of one
    # match: four games in four groups, sum 2, squares 1.5, and two shares strictly between 0
    # and 1; one distinct (empty) move list, and no opening recorded.
    assert sums == (4, 4, 2.0, 1.5, 1.5, 4.0, 2.0, 2, 1, False)
    # Rounds of two: groups (1, 0.5) and (0, 0.5) with totals 1.5 and 0.5.
    assert starter_sums(engine, {batch_id: 2})[batch_id][:8] == (4, 2, 2.0, 1.5, 2.5, 8.0, 4.0, 2)
    # Linked by opening, none recorded: each match stands alone.
    assert starter_sums(engine, {batch_id: 2}, [batch_id])[batch_id][1] == 4
    by_points, total = list_matches_page(engine, batch_id, sort="points", descending=True)
    assert total == 5
    # Top points 9, 3, 12, 3 for matches 0–3; the failed match has none and sorts apart.
    assert [m.match["match_index"] for m in by_points][:4] == [2, 0, 1, 3]
    longest, _ = list_matches_page(engine, batch_id, sort="plies", descending=True, limit=2)
    assert [m.match["match_index"] for m in longest] == [1, 3]
    failed, count = list_matches_page(engine, batch_id, failed=True)
    assert count == 1 and failed[0].match["match_index"] == 4 and failed[0].seats == []
    assert match_endings(engine, batch_id, failed_as="failed") == ["failed", "normal"]
    assert get_engine(db_url) is engine
