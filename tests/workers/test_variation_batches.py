"""Variation in batches: the defaults, exact replays from (batch, match index), batches stored
without one played as before, and the faces (HTTP, CLI) refusing bad values and stop rules on
fixed seats by name."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at, route_cli_to
from sqlalchemy import func, select
from typer.testing import CliRunner

from api.cli import app as cli
from engines.core import OptionError, agent_rng, match_seed, play_match, replay
from engines.registry import load_game, make_agent
from engines.seating import seat_agents
from storage.crud import BATCH
from storage.db import get_engine
from storage.models import BatchPlan
from storage.settings import Settings
from workers.batches import plan_batch
from workers.play import build_game, play_chunk, play_one

runner = CliRunner()


def plan(game: str, agents: list[str], matches: int, **extra: Any) -> BatchPlan:
    request: dict[str, Any] = {
        "players": None,
        "options": {},
        "seed": 7,
        "seat_policy": None,
        "chunk_size": None,
        "max_plies": None,
        "settings": Settings(),
    }
    request.update(extra)
    return plan_batch(game=game, agents=agents, matches=matches, **request)


# --------------------------------------------------------------------------- defaults


def test_different_agents_get_random_openings_of_the_games_length() -> None:
    assert plan("alquerque", ["hard", "easy"], 4).variation == {
        "kind": "openings",
        "plies": 8,
        "source": "random",
        "default": True,
    }
    assert plan("alhambra", ["greedy", "random"], 4).variation == {
        "kind": "openings",
        "plies": 0,
        "source": "random",
        "default": True,
    }


def test_one_agent_everywhere_gets_noise_where_it_searches_else_none() -> None:
    assert plan("alquerque", ["hard"], 4).variation == {
        "kind": "noise",
        "plies": 10,
        "margin": 0.05,
        "temperature": None,
        "noised": ["hard", "hard#2"],
        "default": True,
    }
    assert plan("abalone", ["greedy"], 4).variation == {"kind": "none", "default": True}
    asked = plan("alquerque", ["hard", "easy"], 4, variation={"kind": "noise", "plies": 6})
    assert asked.variation is not None
    assert asked.variation["noised"] == ["hard"] and asked.variation["default"] is False
    assert plan("alquerque", ["hard"], 4, variation={"kind": "none"}).variation == {
        "kind": "none",
        "default": False,
    }


# --------------------------------------------------------------------------- replays


def test_a_batch_without_variation_plays_exactly_as_play_match_does() -> None:
    batch = plan("alquerque", ["medium", "easy"], 6).model_copy(update={"variation": None})
    game = build_game(batch)
    for index, record in enumerate(play_chunk(batch, 0, 6)):
        seed = match_seed(batch.seed, index)
        order = seat_agents(2, batch.seat_policy, index)
        agents = [
            make_agent(game, batch.agents[a], agent_rng(seed, s)) for s, a in enumerate(order)
        ]
        alone = play_match(game, agents, seed, batch.max_plies)
        assert record.seed == seed and record.moves == alone.moves


@pytest.mark.parametrize(
    ("game", "agents", "players"),
    [
        ("alquerque", ["medium", "easy"], None),
        ("alveoles", ["greedy", "random", "greedy"], 3),
        ("alhambra", ["greedy", "random"], None),
    ],
)
def test_openings_replay_exactly_and_each_round_shares_one(
    game: str, agents: list[str], players: int | None
) -> None:
    batch = plan(game, agents, 24, players=players, variation={"kind": "openings", "plies": 2})
    size = 6 if players == 3 else 2
    records = play_chunk(batch, 0, 24)
    the_game = build_game(batch)
    again = play_one(the_game, batch, 13)
    assert (again.moves, again.opening, again.seed) == (
        records[13].moves,
        records[13].opening,
        records[13].seed,
    )
    for r in records:
        assert r.ok
        replay(the_game, r.moves, r.seed)  # the stored seed and moves are the whole game
    rounds = [records[k : k + size] for k in range(0, 24, size)]
    for matches in rounds:
        assert len({r.moves[:2] for r in matches}) == 1
        assert len({r.opening for r in matches}) == 1
        # Every seating of the design once in the round.
        assert len({tuple(s.agent_index for s in r.seats) for r in matches}) == size
    if game != "alquerque":  # its first two plies have 5 lines only; the others have many
        assert len({matches[0].opening for matches in rounds}) == len(rounds)
    if game == "alhambra":  # a round plays one deal
        assert all(len({r.seed for r in matches}) == 1 for matches in rounds)


def test_noise_gives_distinct_openings_where_the_noiseless_agent_repeats_one() -> None:
    # Ten plies are the opening; the rest of a game does not change it.
    quiet = plan("alquerque", ["hard"], 4, variation={"kind": "none"}, max_plies=10)
    noisy = plan("alquerque", ["hard"], 8, max_plies=10)
    assert len({r.moves for r in play_chunk(quiet, 0, 4)}) == 1
    records = play_chunk(noisy, 0, 8)
    assert len({r.opening for r in records}) > 2
    again = play_one(build_game(noisy), noisy, 5)
    assert again.moves == records[5].moves


def test_seed_601_hard_self_play_has_many_distinct_openings_by_default() -> None:
    """``playtester run alquerque --agents hard --matches 40 --seed 601`` held one 10-ply
    opening in 40 matches; its first ten plies now differ. The batch is the CLI's, cut at
    ten plies (the cap only ends a match, so the openings are the full batch's)."""
    batch = plan("alquerque", ["hard"], 40, seed=601)
    assert batch.variation is not None and batch.variation["kind"] == "noise"
    records = play_chunk(batch.model_copy(update={"max_plies": 10}), 0, 40)
    openings = Counter(r.moves for r in records)
    assert len(openings) >= 10 and max(openings.values()) <= 12
    assert len({r.opening for r in records}) == len(openings)


# --------------------------------------------------------------------------- the faces


@pytest.fixture
def api(migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch):
    point_settings_at(monkeypatch, migrated_sqlite_url)
    app, _ = make_api(migrated_sqlite_url)
    with client_for(app) as client:
        yield client, migrated_sqlite_url
    forget_settings()


def batch_count(url: str) -> int:
    with get_engine(url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(BATCH)).scalar_one())


SEAT_CONFOUNDED = [
    {"agents": ["easy", "easy"], "stop_rule": "sprt:easy#2,easy,elo0=0,elo1=30"},
    {
        "agents": ["hard", "easy"],
        "seat_policy": "fixed",
        "stop_rule": "sprt:hard,easy,elo0=0,elo1=30",
    },
]


@pytest.mark.parametrize("case", SEAT_CONFOUNDED)
def test_a_stop_rule_on_fixed_seats_is_refused_over_http(api, case: dict[str, Any]) -> None:
    from analysis.stopping import parse

    client, url = api
    body = {"game": "alquerque", "matches": 4000, "seed": 502, **case}
    body["stop_rule"] = parse(case["stop_rule"]).to_json()
    answer = client.post("/batches", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "seat_policy"
    assert batch_count(url) == 0
    balanced = client.post("/batches", json={**body, "seat_policy": "balanced"})
    assert balanced.status_code == 202, balanced.text


@pytest.mark.parametrize("case", SEAT_CONFOUNDED)
def test_a_stop_rule_on_fixed_seats_is_refused_by_the_cli(
    case: dict[str, Any], sqlite_url: str
) -> None:
    args = ["run", "alquerque", "--agents", ",".join(case["agents"]), "--matches", "4000"]
    args += ["--seed", "502", "--stop", case["stop_rule"], "--db", sqlite_url]
    if "seat_policy" in case:
        args += ["--seat-policy", case["seat_policy"]]
    result = runner.invoke(cli, args)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: a stop rule compares two agents")
    assert "seat_policy" in lines[0]


BAD_HTTP = [
    ({"kind": "openings", "plies": 999}, "variation.plies"),
    ({"kind": "openings", "plies": "4"}, "variation.plies"),
    ({"kind": "noise", "margin": -0.5}, "variation.margin"),
    ({"kind": "noise", "temperature": 0}, "variation.temperature"),
    ({"kind": "random"}, "variation.kind"),
    ({"kind": "openings", "book": [["c2-c3", "a1-a2"]]}, "variation.book[0]"),
    (["openings"], "variation"),
    ({"kind": "openings", "plies": 2**64}, "variation.plies"),
    ({"kind": "noise\u0000"}, "variation.kind"),
    ({"kind": "openings", "book": [["c2-c3", "\u0000" * 5000]]}, "variation.book[0][1]"),
]


@pytest.mark.parametrize(("variation", "field"), BAD_HTTP)
def test_bad_variations_are_refused_over_http(api, variation: Any, field: str) -> None:
    client, url = api
    body = {"game": "alquerque", "agents": ["hard", "easy"], "matches": 4, "variation": variation}
    answer = client.post("/batches", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert "\x00" * 3 not in answer.json()["message"] and len(answer.json()["message"]) < 300
    assert batch_count(url) == 0


@pytest.mark.parametrize("number", [b"1e999", b"NaN", b"-Infinity"])
def test_margins_that_are_not_finite_are_refused_over_http(api, number: bytes) -> None:
    client, url = api
    body = (
        b'{"game": "alquerque", "agents": ["hard"], "matches": 4, '
        b'"variation": {"kind": "noise", "margin": ' + number + b"}}"
    )
    answer = client.post("/batches", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] in ("variation.margin", "body")
    assert batch_count(url) == 0


def test_a_variation_is_stored_in_full_and_the_games_list_their_defaults(api) -> None:
    client, _ = api
    book = [["c2-c3", "c4xc2"], ["d2-c3", "b4xd2"]]
    body = {
        "game": "alquerque",
        "agents": ["hard", "easy"],
        "matches": 4,
        "variation": {"kind": "openings", "book": book},
    }
    answer = client.post("/batches", json=body)
    assert answer.status_code == 202, answer.text
    stored = client.get(f"/batches/{answer.json()['id']}").json()["variation"]
    assert stored["kind"] == "openings" and stored["source"] == "book"
    assert stored["book"] == book and stored["plies"] == 2 and len(stored["book_digest"]) == 32
    games = {g["name"]: g for g in client.get("/games").json()}
    assert games["alquerque"]["variation"] == {
        "opening_plies": 8,
        "noise_plies": 10,
        "noise_margin": 0.05,
        "max_plies": 20,
    }


def test_submit_sends_the_variation(api, monkeypatch: pytest.MonkeyPatch) -> None:
    client, url = api
    route_cli_to(client.app, monkeypatch)
    args = ["submit", "alquerque", "--agents", "hard", "-n", "4", "--noise", "6:temperature=0.1"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    batch_id = result.stdout.strip()
    stored = client.get(f"/batches/{batch_id}").json()["variation"]
    assert (stored["kind"], stored["plies"], stored["temperature"]) == ("noise", 6, 0.1)
    refused = runner.invoke(cli, ["submit", "alquerque", "--agents", "hard", "--openings", "99"])
    assert refused.exit_code == 2 and "variation.plies" in refused.stderr
    assert batch_count(url) == 1


def write_book(tmp_path: Path, text: str) -> str:
    path = tmp_path / "book.txt"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--openings", "99"], "variation.plies must be between 0 and 20"),
        (["--openings", "-1"], "variation.plies must be between 0 and 20"),
        (["--noise", "5:nan"], "variation.margin must be a finite number"),
        (["--noise", "5:margin=1e999"], "variation.margin must be a finite number"),
        (["--noise", "5:temperature=0"], "variation.temperature must be above 0"),
        (["--noise", "five"], "variation.plies must be a number"),
        (["--noise", "5:speed=2"], "after the plies give MARGIN"),
        (["--openings", "4", "--noise", "3"], "give one variation"),
        (["--no-variation", "--noise", "3"], "give one variation"),
        (["--book", "/nonexistent/book.txt"], "cannot read the book"),
    ],
)
def test_bad_variations_are_refused_by_the_cli(
    extra: list[str], expected: str, sqlite_url: str
) -> None:
    result = runner.invoke(cli, ["run", "alquerque", "-a", "hard,easy", *extra, "--db", sqlite_url])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]


def test_an_illegal_book_line_is_refused_by_the_cli(tmp_path: Path, sqlite_url: str) -> None:
    book = write_book(tmp_path, "# two lines\nc2-c3, c4xc2\nc2-c3 d4xb2  # not legal here\n")
    args = ["run", "alquerque", "-a", "hard,easy", "--book", book, "--db", sqlite_url]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert "variation.book[1]: move 2 'd4xb2' is not legal after c2-c3" in result.stderr


def test_a_book_batch_runs_from_the_cli(tmp_path: Path, sqlite_url: str) -> None:
    book = write_book(tmp_path, "c2-c3, c4xc2, c1xc3\nd2-c3 b4xd2\n")
    args = ["run", "alquerque", "-a", "medium,easy", "-n", "4", "--seed", "3", "--book", book]
    result = runner.invoke(cli, [*args, "--openings", "2", "--workers", "1", "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    assert "book openings (2 lines, 2 plies)" in " ".join(result.stderr.split())
    engine = get_engine(sqlite_url)
    with engine.connect() as conn:
        (variation,) = conn.execute(select(BATCH.c.variation)).one()
    stored = variation if isinstance(variation, dict) else json.loads(variation)
    assert stored["book"] == [["c2-c3", "c4xc2"], ["d2-c3", "b4xd2"]]


def test_a_plan_error_names_variation_before_anything_is_stored() -> None:
    with pytest.raises(OptionError) as caught:
        plan("alquerque", ["hard"], 4, variation={"kind": "noise", "plies": 21})
    assert caught.value.field == "variation.plies"
    assert load_game("alquerque").game_type.variation.max_plies == 20
