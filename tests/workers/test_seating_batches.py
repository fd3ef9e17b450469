"""Seating designs in stored batches: balance counted from the raw rows, identical agents rate
level under ``balanced``, ``rotate`` batches replay as before, warnings for incomplete designs."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from scipy.stats import binomtest
from sqlalchemy import select
from typer.testing import CliRunner

from analysis.report import build_report
from api.cli import app
from storage import crud
from storage.db import get_engine
from storage.settings import Settings
from workers.batches import plan_batch
from workers.local import run_local

runner = CliRunner()
AGENTS = ["random", "greedy", "random"]


def seatings(url: str, batch_id: str) -> dict[int, list[int]]:
    """Agent index by seat for every stored match, read straight from seat_result."""
    t = crud.SEAT_RESULT
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(t.c.match_index, t.c.seat, t.c.agent_index)
            .where(t.c.batch_id == batch_id)
            .order_by(t.c.match_index, t.c.seat)
        ).all()
    out: dict[int, list[int]] = {}
    for match_index, _seat, agent in rows:
        out.setdefault(match_index, []).append(agent)
    return out


def flat(text: str) -> str:
    """Console output with its line wrapping undone."""
    return " ".join(text.split())


def play(url: str, policy: str | None, matches: int, seed: int = 1) -> str:
    plan = plan_batch(
        settings=Settings(),
        game="alveoles",
        players=3,
        options={},
        agents=AGENTS,
        matches=matches,
        seed=seed,
        seat_policy=policy,
        chunk_size=100,
        max_plies=None,
    )
    batch = crud.create_batch(get_engine(url), plan=plan)
    run_local(batch.id, workers=2, settings=Settings(database_url=url))
    return batch.id


def twin_record(url: str, batch_id: str) -> tuple[int, int, int]:
    """Wins, draws, losses of agent 0 (``random``) against agent 2 (``random#2``) by result."""
    t = crud.SEAT_RESULT
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(t.c.match_index, t.c.agent_index, t.c.win_share).where(t.c.batch_id == batch_id)
        ).all()
    share: dict[tuple[int, int], float] = {(m, a): w for m, a, w in rows}
    wins = draws = losses = 0
    for m in {m for m, _, _ in rows}:
        mine, theirs = share[(m, 0)], share[(m, 2)]
        wins += mine > theirs
        draws += mine == theirs
        losses += mine < theirs
    return wins, draws, losses


@pytest.mark.slow
def test_two_copies_of_one_agent_rate_level_under_balanced_seating(
    migrated_sqlite_url: str,
) -> None:
    url = migrated_sqlite_url
    balanced_id = play(url, None, 600)
    batch = crud.get_batch(get_engine(url), balanced_id)
    assert batch is not None and batch.seat_policy == "balanced"

    # The design's balance, counted exactly from the stored rows.
    stored = seatings(url, balanced_id)
    assert sorted(stored) == list(range(600))
    cells = Counter((agent, seat) for order in stored.values() for seat, agent in enumerate(order))
    assert set(cells.values()) == {200} and len(cells) == 9
    follows = Counter((order[(s + 1) % 3], order[s]) for order in stored.values() for s in range(3))
    assert set(follows.values()) == {300} and len(follows) == 6

    wins, _draws, losses = twin_record(url, balanced_id)
    assert binomtest(wins, wins + losses).pvalue > 0.05
    report = build_report(get_engine(url), balanced_id)
    assert report["batch"]["seating"]["complete"] is True
    twin = next(
        p for p in report["pairings"] if {p["agent_a"], p["agent_b"]} == {"random", "random#2"}
    )
    assert twin["elo_low"] < 0 < twin["elo_high"]

    # The same batch seated by rotate measures table position instead of strength.
    rotate_id = play(url, "rotate", 600)
    wins, _draws, losses = twin_record(url, rotate_id)
    assert binomtest(wins, wins + losses).pvalue < 1e-9


def test_a_stored_rotate_batch_replays_as_before(sqlite_url: str) -> None:
    common = ["--players", "3", "--agents", ",".join(AGENTS), "--seed", "4", "--workers", "1"]
    ran = runner.invoke(
        app,
        [
            "run",
            "alveoles",
            *common,
            "--seat-policy",
            "rotate",
            "--matches",
            "7",
            "--db",
            sqlite_url,
        ],
    )
    assert ran.exit_code == 0, ran.output
    assert "warning: incomplete seating design: 7 matches" in flat(ran.output)
    batch_id = re.search(r"batch (\w{12}): done", ran.stdout).group(1)  # type: ignore[union-attr]
    # rotate as it always was: seat s holds agent (s + i) % 3.
    assert seatings(sqlite_url, batch_id) == {i: [(s + i) % 3 for s in range(3)] for i in range(7)}
    shown = runner.invoke(app, ["replay", batch_id, "4", "--db", sqlite_url])
    assert shown.exit_code == 0, shown.output
    assert "seat 0 greedy, seat 1 random#2, seat 2 random" in flat(shown.stdout)
    assert "re-played from its seed: same moves" in shown.stdout


def test_balanced_batches_replay_and_warn_only_when_incomplete(sqlite_url: str) -> None:
    common = ["--players", "3", "--agents", ",".join(AGENTS), "--seed", "4", "--workers", "1"]
    whole = runner.invoke(app, ["run", "alveoles", *common, "--matches", "6", "--db", sqlite_url])
    assert whole.exit_code == 0, whole.output
    assert "warning" not in whole.output
    batch_id = re.search(r"batch (\w{12}): done", whole.stdout).group(1)  # type: ignore[union-attr]
    expected = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2], [2, 1, 0]]
    assert seatings(sqlite_url, batch_id) == dict(enumerate(expected))
    shown = runner.invoke(app, ["replay", batch_id, "3", "--db", sqlite_url])
    assert shown.exit_code == 0, shown.output
    assert "seat 0 random, seat 1 random#2, seat 2 greedy" in flat(shown.stdout)
    assert "re-played from its seed: same moves" in shown.stdout

    part = runner.invoke(app, ["run", "alveoles", *common, "--matches", "4", "--db", sqlite_url])
    assert part.exit_code == 0, part.output
    assert "warning: incomplete seating design: 4 matches" in flat(part.output)
    assert "6 matches would complete it" in flat(part.output)
