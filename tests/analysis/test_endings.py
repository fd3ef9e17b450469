"""How matches end, and the other kinds the code branches on, are named once as constants: a
batch's own ply cap is its own ending, told apart from Abalone's move-limit rule in every
report."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as sps
from api_support import RecordingDispatcher, client_for, make_api
from typer.testing import CliRunner

from analysis import seats, stats
from analysis.report import build_report
from analysis.tidy import Wide
from api.cli import app as cli
from api.errors import _unreadable_body
from engines.core import Ending, agent_rng, match_seed, play_match
from engines.registry import load_game, make_agent
from storage.db import get_engine


def test_a_batch_cap_and_the_abalone_rule_end_matches_differently() -> None:
    capped = load_game("abalone")
    ruled = load_game("abalone", move_limit=20)
    seed = match_seed(302, 0)
    for game, cap, ending in ((capped, 20, Ending.MAX_PLIES), (ruled, None, Ending.MOVE_LIMIT)):
        agents = [make_agent(game, "random", agent_rng(seed, s)) for s in range(2)]
        result = play_match(game, agents, seed, max_plies=cap)
        assert (result.plies, result.ended_by) == (20, ending)
        assert result.returns == (0.5, 0.5)
        # The game's own record says whether its rules ended it.
        assert result.stats["ended_by"] == (None if cap else "move_limit")


def run_abalone(url: str, *extra: str) -> str:
    result = CliRunner().invoke(
        cli,
        [
            *("run", "abalone", "--agents", "random", "--matches", "4", "--seed", "302"),
            *("--workers", "1", "--db", url, *extra),
        ],
    )
    assert result.exit_code == 0, result.output
    found = re.search(r"batch (\w{12}): done", result.stdout)
    assert found, result.stdout
    return found.group(1)


def test_seed_302_move_limit_and_max_plies_give_different_reports(tmp_path: Path) -> None:
    """Issue 18, finding 8: ``--option move_limit=60`` and ``--max-plies 60`` once gave the
    same report."""
    url = f"sqlite:///{tmp_path / 'endings.db'}"
    by_rule = build_report(get_engine(url), run_abalone(url, "--option", "move_limit=60"))
    by_cap = build_report(get_engine(url), run_abalone(url, "--max-plies", "60"))
    # Random players push off no six marbles in 60 plies: every match is drawn at 60.
    assert by_rule["shape"]["ended_by"] == {"move_limit": 4}
    assert by_cap["shape"]["ended_by"] == {"max_plies": 4}

    def causes(report: dict) -> dict[str, tuple[str, int]]:
        rows = report["game"]["endings"]["by_cause"]
        return {r["ended_by"]: (r["label"], r["games"]) for r in rows if r["games"]}

    assert causes(by_rule) == {"move_limit": ("drawn: move limit", 4)}
    assert causes(by_cap) == {"max_plies": ("drawn: batch ply cap (max_plies)", 4)}


def test_the_chi_square_seat_test_is_known_by_its_constant() -> None:
    rng = np.random.default_rng(3)
    win = np.zeros((300, 3))
    win[np.arange(300), rng.integers(0, 3, 300)] = 1.0
    w = Wide(
        match_index=np.arange(300),
        win=win,
        points=win.copy(),
        agent=np.zeros((300, 3), dtype=np.int64),
        labels=("random",),
    )
    found = seats.seat_test(w)
    assert found["method"] == stats.CHI_SQUARE_GOF
    scipy = sps.chisquare(win.sum(axis=0))  # equal shares expected
    assert (found["statistic"], found["df"], found["p_value"]) == pytest.approx(
        (scipy.statistic, 2, scipy.pvalue)
    )


def test_the_digit_limit_is_known_by_its_type_not_its_wording() -> None:
    # Python's text for the limit on an integer's digits is its own to change.
    reworded = ValueError("Exceeds the limit (4300) for integer string conversion")
    assert "too many digits" in _unreadable_body(reworded)
    assert "UTF-8" in _unreadable_body(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "digits"))


def test_the_digit_limit_over_http(migrated_sqlite_url: str) -> None:
    app, _ = make_api(migrated_sqlite_url)
    body = b'{"game":"alquerque","agents":["random"],"matches":' + b"1" * 5000 + b"}"
    with client_for(app) as client:
        answer = client.post("/batches", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422
    assert answer.json() == {
        "message": "the request body holds a number with too many digits",
        "field": "body",
    }


class TextStatusDispatcher(RecordingDispatcher):
    """A dispatcher whose status text reads like a failure but is not one."""

    def broker_status(self) -> str:
        return "unreachable by design: local mode has no broker"


class FailingDispatcher(RecordingDispatcher):
    def broker_status(self) -> str:
        raise TimeoutError("no answer")


def test_health_follows_whether_a_check_failed_not_its_text(migrated_sqlite_url: str) -> None:
    app, _ = make_api(migrated_sqlite_url)
    app.state.dispatcher = TextStatusDispatcher()
    with client_for(app) as client:
        healthy = client.get("/healthz")
        app.state.dispatcher = FailingDispatcher()
        failing = client.get("/healthz")
    assert healthy.status_code == 200 and healthy.json()["status"] == "ok"
    assert failing.status_code == 503
    assert failing.json()["broker"] == "unreachable: TimeoutError"
