"""Hostile batch archives against a real server (issue 43): each kind's answer, the API's peak
memory, the time and the rows stored; then every read route, and a genuine round trip.

    .venv/bin/python -m bench.archive_fuzz             # every kind, bombs at a fifth to a tenth
    .venv/bin/python -m bench.archive_fuzz --full      # every kind at the probe's sizes
    .venv/bin/python -m bench.archive_fuzz --kinds "bad deflate,many members"

Starts a private PostgreSQL cluster and redis-server (``harness.servers``, as ``bench.service``
does) and the API in uvicorn on a fresh database, with no Celery worker, so the batch the
server holds part-played stays so. The genuine exports come from that server: small Alquerque
batches of random agents, submitted to it, played here by ``run_chunk`` (as a worker would),
downloaded with ``GET /batches/{id}/archive`` and removed again; ``bench.archive_forge``
builds each hostile kind from them. Each upload is timed, the API's peak memory read from
``/proc`` (its high-water mark, reset before each case through ``clear_refs``, plus what its
child processes grew by, sampled every few milliseconds) above its size just before the case
(what earlier cases left held is the "held" column's, above its size before the first), and
every table's rows counted before and after.

Pass: every hostile kind answered 4xx (or 429) within 2 s, the API's peak under 300 MB above
idle, no row stored and no batch changed (but for ``CLAIMS``: a half batch claiming to be done
may instead be stored as the unfinished batch it is, the claim ignored); the concurrent
imports of one genuine archive store it once (one 201) and answer no 5xx; then every read route
answers 200 for every stored batch, and a genuine export imports (201) and downloads again byte
for byte. Prints the table and writes ``bench/results/archive_fuzz.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from sqlalchemy import delete, func, select, text
from sqlmodel import SQLModel

from bench.archive_forge import DEFAULT, FULL, KINDS, Export, Sizes, Sources
from harness.servers import Api, PgCluster, RedisServer, service_env, wait_for
from storage.db import dispose_engine, get_engine, upgrade
from storage.models import BATCH

ROOT = Path(__file__).resolve().parent.parent
CONCURRENT = "8 concurrent imports"
CLIENTS = 8
MAX_SECONDS = 2.0
MAX_PEAK_MB = 300.0
MATCHES, CHUNK = 40, 10
GAME: dict[str, Any] = {"game": "alquerque", "agents": ["random", "random"]}
GAME |= {"matches": MATCHES, "chunk_size": CHUNK}
"""Every genuine batch: 40 matches in chunks of 10 (``archive_forge.running_tail`` forges the
chunks after the first, which ``prepare`` plays)."""
SEEDS = {"genuine": 1, "crowd": 2, "running": 3}
CLAIMS = {"done on half": MATCHES // 2}
"""Kinds whose one lie is a claim about the batch's state, with the matches they hold: the
import may ignore the claim instead of refusing the archive (issue 43: "status derived from the
chunk coverage, never taken from the file"), storing what it holds as an unfinished batch."""
UNFINISHED = {"queued", "running"}
STATE = ("status", "stopped_early", "decision", "finished_at", "error")


@dataclass(frozen=True)
class Target:
    """The API under test: where it answers, its process, its database."""

    url: str
    pid: int
    database_url: str
    timeout: float = 300.0

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=self.timeout)


# --------------------------------------------------------------------------- memory


def _status(pid: int) -> dict[str, int]:
    """The ``kB`` figures of ``/proc/<pid>/status``, in bytes."""
    figures = {}
    with open(f"/proc/{pid}/status") as lines:
        for line in lines:
            name, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                figures[name] = int(value.split()[0]) * 1024
    return figures


def _descendants(pid: int) -> Iterator[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as children:
                found = [int(child) for child in children.read().split()]
        except OSError:
            continue
        for child in found:
            yield child
            yield from _descendants(child)


class MemoryWatch:
    """How far the memory of a process rose while a case ran, above its size at the start
    (its idle size for this case: what earlier cases left held is not charged again).

    The process's own peak is its high-water mark (``VmHWM``), reset to its current size at the
    start (``clear_refs`` ``5``; without that right, its size sampled instead). Its descendants
    (a child that decodes under limits) are sampled every ``interval`` seconds, each counted by
    its private memory's growth since first seen. The two peaks are added: an upper bound.
    """

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        self.pid, self.interval = pid, interval
        self.idle = self.own = 0
        self.children = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> MemoryWatch:
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as clear:
                clear.write("5")
        except OSError:
            pass
        self.idle = self.own = _status(self.pid)["VmRSS"]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.own = max(self.own, _status(self.pid)["VmHWM"])

    def _sample(self) -> None:
        first: dict[int, int] = {}
        while not self._stop.wait(self.interval):
            try:
                self.own = max(self.own, _status(self.pid)["VmRSS"])
            except OSError:
                return
            grown = 0
            for child in _descendants(self.pid):
                try:
                    size = _status(child).get("RssAnon", 0)
                except OSError:
                    continue
                grown += size - first.setdefault(child, size)
            self.children = max(self.children, grown)

    @property
    def peak_mb(self) -> float:
        return (self.own - self.idle + self.children) / 2**20


def resident(pid: int) -> int:
    return _status(pid)["VmRSS"]


# --------------------------------------------------------------------------- the database


def tables() -> list[Any]:
    return list(SQLModel.metadata.sorted_tables)


def counts(database_url: str) -> dict[str, int]:
    """Rows of every table of the schema."""
    with get_engine(database_url).connect() as conn:
        return {
            table.name: int(conn.execute(select(func.count()).select_from(table)).scalar_one())
            for table in tables()
        }


def states(database_url: str) -> dict[str, str]:
    """Every stored batch's state columns, as text, by id."""
    with get_engine(database_url).connect() as conn:
        rows = conn.execute(select(BATCH.c.id, *(BATCH.c[name] for name in STATE)))
        return {row[0]: repr(tuple(row[1:])) for row in rows}


def remove_batch(database_url: str, batch_id: str) -> None:
    """Delete a batch and every row naming it, as an administrator would."""
    with get_engine(database_url).begin() as conn:
        for table in reversed(tables()):
            column = table.c.get("batch_id")
            if column is not None:
                conn.execute(delete(table).where(column == batch_id))
        conn.execute(delete(BATCH).where(BATCH.c.id == batch_id))


# --------------------------------------------------------------------------- the sources


def submitted(target: Target, client: httpx.Client, seed: int) -> str:
    """A batch of ``GAME`` submitted to the server, its start delivered to the broker (where
    no worker takes it): the id."""
    answer = client.post("/batches", json=GAME | {"seed": seed})
    assert answer.status_code == 202, answer.text
    batch_id: str = answer.json()["id"]
    wait_for(lambda: counts(target.database_url)["outbox"] == 0, 30, "the start delivered")
    return batch_id


def played_export(target: Target, client: httpx.Client, seed: int) -> Export:
    """A batch of ``GAME`` submitted, played to its end here (as a worker would), downloaded
    from the server, then removed from it."""
    from workers.chunks import run_chunk

    batch_id = submitted(target, client, seed)
    for start in range(0, MATCHES, CHUNK):
        run_chunk(batch_id, start, start + CHUNK, database_url=target.database_url, worker="fuzz")
    download = client.get(f"/batches/{batch_id}/archive")
    download.raise_for_status()
    remove_batch(target.database_url, batch_id)
    return Export.of_zip(download.content)


def prepare(target: Target) -> Sources:
    """The genuine exports, and a batch submitted to the server with its first chunk played."""
    from workers.chunks import run_chunk

    with target.client() as client:
        genuine = played_export(target, client, SEEDS["genuine"])
        crowd = played_export(target, client, SEEDS["crowd"])
        twin = played_export(target, client, SEEDS["running"])
        running = submitted(target, client, SEEDS["running"])
        run_chunk(running, 0, CHUNK, database_url=target.database_url, worker="fuzz")
        sources = Sources(genuine, twin, running_id=running, played=CHUNK, crowd=crowd)
        # A first genuine import warms the route's imports; then it is removed again.
        warm = sources.fresh()
        answer = upload(client, warm.zip())
        assert answer.status_code == 201, answer.text
        remove_batch(target.database_url, warm.batch_id)
    return sources


# --------------------------------------------------------------------------- cases


@dataclass
class Outcome:
    """One kind's result: the answers' statuses, the first answer's message, the upload's
    size, the API's peak above its size before the case and what it held after the case above
    its size before the first (MB), the wall time (the slowest answer), and what the database
    gained: rows per table, batches whose state changed."""

    kind: str
    statuses: list[int]
    message: str
    upload_bytes: int
    peak_mb: float
    held_mb: float
    wall_s: float
    rows: dict[str, int]
    changed: int
    expected_rows: dict[str, int] = field(default_factory=dict)
    stored_as: str | None = None
    added: int | None = None

    @property
    def status(self) -> str:
        if len(self.statuses) == 1:
            return str(self.statuses[0])
        tally = Counter(self.statuses)
        return ", ".join(f"{code}×{n}" for code, n in sorted(tally.items()))

    @property
    def stored(self) -> int:
        return sum(self.rows.values())

    def claim_ignored(self) -> bool:
        """A claim about the batch's state accepted without being believed: the batch stored
        unfinished with the matches the archive holds."""
        return (
            self.kind in CLAIMS
            and self.statuses == [201]
            and self.stored_as in UNFINISHED
            and self.added == CLAIMS[self.kind]
        )

    def problems(self, budget: bool = True) -> list[str]:
        """What fails the pass criteria (``budget``: the time and memory ones too)."""
        found = []
        if self.kind == CONCURRENT:
            if any(code >= 500 or code == 0 for code in self.statuses):
                found.append("5xx or no answer")
            if self.statuses.count(201) != 1:
                found.append(f"{self.statuses.count(201)} created")
            if self.rows != self.expected_rows:
                made = sum(self.expected_rows.values())
                found.append(f"stored {self.stored} rows, not the archive's {made}")
        elif self.claim_ignored():
            pass
        else:
            if not all(400 <= code < 500 for code in self.statuses):
                stored_as = f" ({self.message})" if self.message.startswith("stored as") else ""
                found.append(f"answered {self.status}{stored_as}")
            if any(self.rows.values()):
                found.append(f"stored {self.stored} rows")
        if self.changed:
            found.append(f"changed {self.changed} batch")
        if budget and self.wall_s >= MAX_SECONDS:
            found.append(f"{self.wall_s:.1f} s")
        if budget and self.peak_mb >= MAX_PEAK_MB:
            found.append(f"{self.peak_mb:,.0f} MB")
        return found


def upload(client: httpx.Client, body: bytes) -> httpx.Response:
    return client.post("/batches/import", content=body, headers={"Content-Type": "application/zip"})


def _send(target: Target, body: bytes, barrier: threading.Barrier | None = None) -> dict[str, Any]:
    """The answer to one upload: ``code`` (0: none), ``message``, and for an import done the
    batch's status (``stored_as``) and the matches it ``added``."""
    with target.client() as client:
        if barrier is not None:
            barrier.wait()
        try:
            answer = upload(client, body)
        except httpx.HTTPError as exc:
            return {"code": 0, "message": f"no answer ({type(exc).__name__})"}
    try:
        found = answer.json()
    except ValueError:
        found = {"message": answer.text}
    if "message" in found:
        message = f"{found.get('field')}: {found['message']}".replace("\n", " ")[:160]
        return {"code": answer.status_code, "message": message}
    status, added = found.get("status"), found.get("matches_added")
    message = f"stored as {status}, {added} matches added"
    return {"code": answer.status_code, "message": message, "stored_as": status, "added": added}


def run_case(target: Target, kind: str, sources: Sources, sizes: Sizes, idle: int) -> Outcome:
    body = KINDS[kind](sources, sizes)
    clients = CLIENTS if kind == CONCURRENT else 1
    before, was = counts(target.database_url), states(target.database_url)
    with MemoryWatch(target.pid) as watch:
        began = time.perf_counter()
        if clients == 1:
            answers = [_send(target, body)]
        else:
            barrier = threading.Barrier(clients)
            with ThreadPoolExecutor(clients) as pool:
                answers = list(pool.map(lambda _: _send(target, body, barrier), range(clients)))
        wall = time.perf_counter() - began
    after, now = counts(target.database_url), states(target.database_url)
    expected: dict[str, int] = {}
    if kind == CONCURRENT:
        made = sources.crowd.manifest["rows"]
        expected = dict.fromkeys(before, 0) | {"batch": 1, "chunk": made["chunks"]}
        expected |= {"match": made["matches"], "seat_result": made["seats"]}
    return Outcome(
        kind=kind,
        statuses=[answer["code"] for answer in answers],
        message=next((a for a in answers if a["code"] != 201), answers[0])["message"],
        upload_bytes=len(body),
        peak_mb=round(watch.peak_mb, 1),
        held_mb=round((resident(target.pid) - idle) / 2**20, 1),
        wall_s=round(wall, 3),
        rows={name: after[name] - before[name] for name in before},
        changed=sum(1 for key, value in was.items() if now.get(key) != value),
        expected_rows=expected,
        stored_as=answers[0].get("stored_as"),
        added=answers[0].get("added"),
    )


# --------------------------------------------------------------------------- afterwards


def read_routes(database_url: str, reference: str) -> Iterator[str]:
    """Every read route for every stored batch (the compare ones against ``reference``)."""
    yield from ("/batches", "/batches?status=done", "/", "/ui/compare")
    with get_engine(database_url).connect() as conn:
        firsts = conn.execute(
            text(
                "SELECT b.id, (SELECT min(match_index) FROM match m WHERE m.batch_id = b.id) "
                "FROM batch b ORDER BY b.id"
            )
        ).all()
    for batch_id, first in firsts:
        at = quote(batch_id, safe="")
        yield from (f"/batches/{at}", f"/ui/batches/{at}")
        yield from (f"/batches/{at}/report{kind}" for kind in ("", ".csv", ".html"))
        yield f"/compare?a={quote(batch_id)}&b={reference}"
        yield f"/ui/compare?a={quote(batch_id)}&b={reference}"
        if first is not None:
            yield f"/ui/batches/{at}/matches/{first}"
            yield f"/ui/batches/{at}/matches/{first}/positions"


def check_reads(target: Target, reference: str) -> tuple[int, list[str]]:
    """How many read routes were asked, and those that did not answer 200 (with their
    status)."""
    failed, asked = [], 0
    with target.client() as client:
        for route in read_routes(target.database_url, reference):
            asked += 1
            answer = _get(client, route)
            if answer != "200":
                failed.append(f"{route} {answer}")
    return asked, failed


def _get(client: httpx.Client, route: str) -> str:
    """A route's status, asked again once on a new connection when the server closed the
    one it had (as it does after some errors): the route's answer, not the connection's."""
    for attempt in range(2):
        try:
            return str(client.get(route).status_code)
        except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
            if attempt:
                return f"no answer ({type(exc).__name__})"
        except httpx.HTTPError as exc:
            return f"no answer ({type(exc).__name__})"
    raise AssertionError("unreachable")


def round_trip(target: Target, genuine: Export) -> dict[str, Any]:
    """A genuine export imported (its status) and downloaded again (byte for byte?)."""
    sent = genuine.raw
    assert sent is not None, "a genuine export, as served"
    with target.client() as client:
        answer = upload(client, sent)
        again = client.get(f"/batches/{genuine.batch_id}/archive")
    same = again.status_code == 200 and again.content == sent
    return {"status": answer.status_code, "identical": same, "message": answer.text[:160]}


@dataclass
class Report:
    sizes: Sizes
    idle_mb: float
    outcomes: list[Outcome]
    routes_asked: int
    routes_failed: list[str]
    round_trip: dict[str, Any]

    def problems(self, budget: bool = True) -> list[str]:
        found = [
            f"{o.kind}: {', '.join(o.problems(budget))}"
            for o in self.outcomes
            if o.problems(budget)
        ]
        found += [f"read {route}" for route in self.routes_failed]
        if self.round_trip["status"] != 201 or not self.round_trip["identical"]:
            found.append(f"round trip: {self.round_trip}")
        return found


def fuzz(target: Target, kinds: Iterable[str], sizes: Sizes) -> Report:
    """Send each of ``kinds`` to ``target`` (prepared here), then check its reads and a round
    trip."""
    sources = prepare(target)
    idle = resident(target.pid)
    outcomes = [run_case(target, kind, sources, sizes, idle) for kind in kinds]
    trip = round_trip(target, sources.genuine)
    asked, failed = check_reads(target, sources.genuine.batch_id)
    return Report(sizes, round(idle / 2**20, 1), outcomes, asked, failed, trip)


def table(report: Report) -> str:
    lines = [
        "| kind | status | peak MB above idle | wall s | rows stored | upload | held MB after "
        "| verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in report.outcomes:
        verdict = "; ".join(o.problems()) or "pass"
        if o.claim_ignored() and verdict == "pass":
            verdict = f"pass: the claim ignored, {o.message}"
        size = f"{o.upload_bytes / 1024:,.0f} KB"
        lines.append(
            f"| {o.kind} | {o.status} | {o.peak_mb:,.0f} | {o.wall_s:.2f} | {o.stored:,} "
            f"| {size} | {o.held_mb:,.0f} | {verdict} |"
        )
    return "\n".join(lines)


def summary(report: Report) -> str:
    trip = report.round_trip
    lines = [
        f"idle API: {report.idle_mb:,.0f} MB",
        f"read routes: {report.routes_asked - len(report.routes_failed)} of "
        f"{report.routes_asked} answered 200",
        *(f"  {route}" for route in report.routes_failed[:40]),
        f"genuine round trip: import {trip['status']}, byte-identical: {trip['identical']}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every kind at the probe's sizes")
    parser.add_argument("--kinds", help="comma-separated kinds (default: all)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    args = parser.parse_args()
    kinds = list(KINDS) if not args.kinds else [k.strip() for k in args.kinds.split(",")]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
    sizes = FULL if args.full else DEFAULT

    pg, redis_server = PgCluster(), RedisServer()
    folder = Path(tempfile.mkdtemp(prefix="pt_archive_fuzz_"))
    api: Api | None = None
    url = ""
    try:
        pg.start()
        redis_server.start()
        url = pg.url(pg.create_database())
        upgrade(url)
        api = Api(service_env(url, redis_server.url), folder)
        report = fuzz(Target(api.url, api.process.pid, url, args.timeout), kinds, sizes)
    finally:
        if api is not None:
            api.stop()
        if url:
            dispose_engine(url)
        redis_server.remove()
        pg.remove()
        shutil.rmtree(folder, ignore_errors=True)

    print(table(report))
    print(summary(report))
    problems = report.problems()
    print(f"{len(problems)} problems" if problems else "every pass criterion met")
    out = ROOT / "bench" / "results" / "archive_fuzz.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    figures = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "full": args.full,
        "sizes": asdict(sizes),
        "idle_mb": report.idle_mb,
        "kinds": [asdict(o) | {"problems": o.problems()} for o in report.outcomes],
        "read_routes": {"asked": report.routes_asked, "failed": report.routes_failed},
        "round_trip": report.round_trip,
        "problems": problems,
    }
    out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
