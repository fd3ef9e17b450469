"""OpenSpiel checks wait in a bounded queue (issue 43, point 8): six slow checks once made an
unrelated ``connect_four`` check wait 59 s. With ``NATIVE_CHECKS_AT_ONCE`` checks running and
``NATIVE_CHECKS_WAITING`` waiting, one more is answered 429 with ``Retry-After`` at once, over
HTTP as on the command line (one ``error:`` line), and the queue serves everyone again once the
slow ones end.

The slow checks are real requests through the app whose child, forked by the fork server,
first blocks opening a FIFO for reading (as bridge's check spends seconds in OpenSpiel); the
test opens its other end to let them go. Every wait below is for a state it observes (the
queue's counts, answers received), never for a time."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import client_for, forget_settings, make_api, point_settings_at
from typer.testing import CliRunner

from api.cli import app as cli
from workers import native_games

pytest.importorskip("pyspiel")

SLOW = "openspiel:tic_tac_toe"
"""The game whose check the test makes slow (standing in for bridge)."""
OBSERVED = 120.0
"""How long a wait for an observed state may last before the test fails (never reached)."""


def slow_body(n: int) -> dict[str, Any]:
    return {"game": SLOW, "agents": ["random"], "matches": n}


def cheap_body(rows: int) -> dict[str, Any]:
    return {
        "game": "openspiel:connect_four",
        "options": {"rows": rows},
        "agents": ["random"],
        "matches": 1,
    }


def until(seen: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + OBSERVED
    while not seen():
        assert time.monotonic() < deadline, f"never observed: {what}"
        time.sleep(0.01)


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A FIFO the child of every check of ``SLOW`` opens for reading before it plans: it
    blocks there until the test opens the FIFO for writing."""
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    real = native_games.call_isolated

    def gated(target: str, args: tuple[Any, ...], limits: Any) -> Any:
        if args[0]["game"] == SLOW:
            # In the child, with room to wait: the test opens the gate, not the wall clock.
            real("os:open", (str(fifo), os.O_RDONLY), dataclasses.replace(limits, wall_seconds=600))
        return real(target, args, limits)

    monkeypatch.setattr(native_games, "call_isolated", gated)
    native_games.forget_checks()
    yield fifo
    native_games.forget_checks()


def test_a_full_queue_answers_429_at_once_and_serves_again_when_the_slow_checks_end(
    migrated_sqlite_url: str, gate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, dispatcher = make_api(
        migrated_sqlite_url, native_checks_at_once=2, native_checks_waiting=2
    )
    point_settings_at(monkeypatch, migrated_sqlite_url)  # the command line's settings
    answers: list[int] = []
    with client_for(app) as client:
        # Checked before the flood: answered from memory, even when the queue is full.
        assert client.post("/batches/check", json=cheap_body(5)).status_code == 200

        def check(n: int) -> None:
            answers.append(client.post("/batches/check", json=slow_body(n)).status_code)

        flood = [threading.Thread(target=check, args=(n,)) for n in range(1, 7)]
        for thread in flood:
            thread.start()
        # Two running, two waiting: the other two are refused without waiting.
        until(lambda: native_games.checks_now() == (2, 2) and len(answers) == 2, "a full queue")
        assert answers == [429, 429]

        refused = client.post("/batches/check", json=cheap_body(6))
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["Retry-After"]) > 0
        body = refused.json()
        assert body["field"] == "game"
        assert "2 OpenSpiel checks are running and 2 waiting" in body["message"]
        assert "NATIVE_CHECKS_WAITING" in body["message"]
        submitted = client.post("/batches", json=cheap_body(6))
        assert submitted.status_code == 429, submitted.text
        assert client.get("/batches").json()["items"] == [] and not dispatcher.started
        assert client.post("/batches/check", json=cheap_body(5)).status_code == 200

        # The command line, checking in this process's queue, says so on one line.
        ran = CliRunner().invoke(
            cli, ["run", "openspiel:connect_four", "--agents", "random", "-n", "1"]
        )
        assert ran.exit_code == 2, ran.output
        assert "error: 2 OpenSpiel checks are running and 2 waiting" in ran.output
        assert "Traceback" not in ran.output and isinstance(ran.exception, SystemExit)

        # The gate opens: the running checks end, the waiting ones take their turns.
        writer = os.open(gate, os.O_WRONLY)
        try:
            for thread in flood:
                thread.join()
        finally:
            os.close(writer)
        assert sorted(answers) == [200] * 4 + [429] * 2
        assert native_games.checks_now() == (0, 0)

        served = client.post("/batches/check", json=cheap_body(6))
        assert served.status_code == 200, served.text
        assert served.json()["options"]["rows"] == 6
        assert client.post("/batches", json=cheap_body(6)).status_code == 202
    forget_settings()


def test_waiting_checks_take_their_turns_in_the_order_they_came() -> None:
    queue = native_games.CheckQueue()
    order: list[str] = []
    with queue.turn(1, 2):
        first = threading.Thread(target=lambda: _take(queue, "first", order))
        first.start()
        until(lambda: queue.counts() == (1, 1), "first waiting")
        second = threading.Thread(target=lambda: _take(queue, "second", order))
        second.start()
        until(lambda: queue.counts() == (1, 2), "second waiting")
        with pytest.raises(native_games.ChecksBusyError), queue.turn(1, 2):
            pass
    first.join()
    second.join()
    assert order == ["first", "second"] and queue.counts() == (0, 0)


def _take(queue: native_games.CheckQueue, name: str, order: list[str]) -> None:
    with queue.turn(1, 2):
        order.append(name)
