"""Links in answers never follow the client's Host header, forwarded headers are trusted only
from configured proxies, and /compare refuses batches that cannot be compared."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest
from analysis_data import alveoles_outcome, alveoles_stats, store_batch, two_player_outcomes
from api_support import client_for, forget_settings, make_api, point_settings_at

GOOD = {"game": "alquerque", "agents": ["random", "random"], "matches": 4, "chunk_size": 2}
# The Host is a loopback name the allow-list accepts (a foreign one is refused outright, as
# tests/api/test_api_origin.py shows), so only what the links are built from is under test.
HOSTILE = {
    "Host": "evil.localhost",
    "X-Forwarded-Host": "evil.example",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Prefix": "/phish",
    "Forwarded": "host=evil.example;proto=https",
}


def all_links(batch: dict) -> list[str]:
    return list(batch["links"].values())


@pytest.mark.parametrize("public_url", [None, "https://playtester.example.org/api/"])
def test_links_ignore_the_host_header(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch, public_url: str | None
) -> None:
    point_settings_at(monkeypatch, migrated_sqlite_url)
    app, _ = make_api(migrated_sqlite_url, public_url=public_url)
    with client_for(app) as client:
        created = client.post("/batches", json=GOOD, headers=HOSTILE)
        assert created.status_code == 202, created.text
        bid = created.json()["id"]
        answers = [
            created.json(),
            client.get(f"/batches/{bid}", headers=HOSTILE).json(),
            client.get("/batches", headers=HOSTILE).json()["items"][0],
            client.post(f"/batches/{bid}/cancel", headers=HOSTILE).json(),
        ]
    forget_settings()
    base = "/batches/" if public_url is None else "https://playtester.example.org/api/batches/"
    for batch in answers:
        links = all_links(batch)
        assert len(links) == 5
        assert all(link.startswith(base + bid) for link in links), links
        assert not any("evil" in link or "phish" in link for link in links)
    assert answers[0]["links"]["report"] == f"{base}{bid}/report"


@pytest.mark.parametrize(
    "bad", ["ftp://x.example", "playtester.example.org", "https://x.example/?q=1", "https://"]
)
def test_public_url_must_be_an_http_base(bad: str) -> None:
    from pydantic import ValidationError

    from storage.settings import Settings

    with pytest.raises(ValidationError, match="public_url"):
        Settings(public_url=bad)


# --------------------------------------------------------------------------- the real server


class Server:
    """``playtester serve`` on a free port, its log lines collected as they come."""

    def __init__(self, database_url: str, **env: str) -> None:
        environment = {k: v for k, v in os.environ.items() if k not in {"BROKER_URL"}}
        environment.update(DATABASE_URL=database_url, **env)
        self.lines: queue.Queue[str] = queue.Queue()
        command = ["serve", "--port", "0", "--no-migrate"]
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from api.cli import main; main()", *command],
            env=environment,
            stdout=subprocess.PIPE,  # uvicorn's access log goes to stdout, the rest to stderr
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        started = self.wait_for(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
        self.url = f"http://127.0.0.1:{started.group(1)}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first new log line matching ``pattern`` (fails after ``timeout`` seconds)."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"the server never logged {pattern!r}")
            found = re.search(pattern, line)
            if found:
                return found

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture
def serve(migrated_sqlite_url: str) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(**env: str) -> Server:
        server = Server(migrated_sqlite_url, **env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.mark.slow
def test_forwarded_headers_count_only_from_configured_proxies(serve) -> None:
    spoofed = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    # Default: no proxy is trusted, not even one on this machine.
    server = serve()
    assert httpx.get(server.url + "/healthz", headers=spoofed).status_code == 200
    logged = server.wait_for(r'(\S+) - "GET /healthz HTTP/1\.1" 200')
    assert logged.group(1).startswith("127.0.0.1:")
    # A configured proxy (here this machine) is believed.
    server = serve(TRUSTED_PROXIES="127.0.0.1")
    assert httpx.get(server.url + "/healthz", headers=spoofed).status_code == 200
    logged = server.wait_for(r'(\S+) - "GET /healthz HTTP/1\.1" 200')
    assert logged.group(1).startswith("203.0.113.9")


def test_serve_passes_the_proxy_settings_to_uvicorn() -> None:
    from api.cli.service import uvicorn_options
    from storage.settings import Settings

    assert uvicorn_options(Settings()) == {"proxy_headers": False}
    trusted = Settings(trusted_proxies="10.0.0.2, 10.1.0.0/16")
    assert uvicorn_options(trusted) == {
        "proxy_headers": True,
        "forwarded_allow_ips": "10.0.0.2,10.1.0.0/16",
    }


# --------------------------------------------------------------------------- compare


@pytest.fixture
def three_batches(migrated_sqlite_url: str) -> tuple[str, str, str, str]:
    """Alquerque (2 players), Les Alvéoles with 2 players and with 3 players."""
    url = migrated_sqlite_url
    _, alquerque = store_batch(url, game="alquerque", players=2, labels=["x", "y"],
                               outcomes=two_player_outcomes(40, 0.6, seed=1))  # fmt: skip
    two = [alveoles_stats([i % 2 for i in range(64)]) for _ in range(30)]
    _, alveoles2 = store_batch(url, game="alveoles", players=2, labels=["greedy", "random"],
                               outcomes=[alveoles_outcome(s) for s in two],
                               stats=lambda i: two[i])  # fmt: skip
    three = [alveoles_stats([i % 3 for i in range(64)], rows=(0, 0, 0), players=3)] * 30
    _, alveoles3 = store_batch(url, game="alveoles", players=3, labels=["greedy"],
                               outcomes=[alveoles_outcome(s) for s in three],
                               seat_policy="fixed", stats=lambda i: three[i])  # fmt: skip
    return url, alquerque, alveoles2, alveoles3


def test_compare_refuses_different_games_and_player_counts(
    three_batches: tuple[str, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from api.cli import app as cli

    url, alquerque, alveoles2, alveoles3 = three_batches
    point_settings_at(monkeypatch, url)
    app, _ = make_api(url)
    runner = CliRunner()
    with client_for(app) as client:
        assert client.get("/compare", params={"a": alveoles2, "b": alveoles2}).status_code == 200
        for a, b, words in [
            (alquerque, alveoles2, "different games"),
            (alveoles2, alveoles3, "different player counts"),
        ]:
            answer = client.get("/compare", params={"a": a, "b": b})
            assert answer.status_code == 422, answer.text
            body = answer.json()
            assert body["field"] == "b" and words in body["message"], body
            done = runner.invoke(cli, ["compare", a, b, "--db", url])
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            assert done.exit_code == 2 and len(lines) == 1, done.output
            assert lines[0].startswith("error: ") and words in lines[0]
    forget_settings()
