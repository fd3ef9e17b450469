"""Hostile archives against the real servers: the suite's share of ``bench/archive_fuzz.py``
(issue 43). The API in uvicorn on its own PostgreSQL database, Redis, no worker; the genuine
exports come from that server, and every hostile kind but a few near-repeats is built from them
at the small ``SUITE`` sizes and sent through the bench's own runner.

Asserted: each hostile upload answers 4xx (or 429), stores no row and changes no batch (a half
batch claiming to be done may be stored as the unfinished batch it is instead); eight
concurrent imports of one genuine archive store it once with one 201 and no 5xx; afterwards
every read route answers 200 for every stored batch, and a genuine export imports and downloads
again byte for byte. The time and memory each upload costs are the bench's to print, not
asserted here.
"""

from __future__ import annotations

import pytest
from service_fixtures import pg_cluster, redis_server, service_factory

from bench.archive_forge import KINDS, SUITE
from bench.archive_fuzz import Target, fuzz, summary, table

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(240)]

NEAR_REPEATS = {"points -inf", "id <b>x</b>", "count past 2^63"}
"""Left to the bench: each meets the same check as a kind the suite sends."""


def test_hostile_archives_store_nothing_and_every_read_still_answers(service_factory) -> None:
    service = service_factory(workers=0)
    target = Target(service.api.url, service.api.process.pid, service.database_url, timeout=60)
    report = fuzz(target, [kind for kind in KINDS if kind not in NEAR_REPEATS], SUITE)
    problems = report.problems(budget=False)
    assert not problems, "\n".join([table(report), summary(report), *problems])
