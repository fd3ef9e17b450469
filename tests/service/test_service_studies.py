"""A study run through a real server (uvicorn, Celery workers, PostgreSQL, Redis): its batches
are submitted with their content keys, found again on a second run, and its page is written
from the server's reports."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from repo_paths import DATA
from service_fixtures import pg_cluster, redis_server, service_factory
from typer.testing import CliRunner

from api.cli import app

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(240)]

TINY = DATA / "tiny_study.toml"
runner = CliRunner()


def test_a_study_runs_on_a_server_and_is_found_there_again(service_factory, tmp_path: Path) -> None:
    service = service_factory(workers=1)
    study = tmp_path / "tiny.toml"
    shutil.copy(TINY, study)

    first = runner.invoke(app, ["study", "run", str(study), "--service", service.api.url])
    assert first.exit_code == 0, first.output
    ids = dict(re.findall(r"^([\w-]+): batch (\w+) \(sent", first.output, flags=re.M))
    assert set(ids) == {"easy-random", "random"}
    for batch_id in ids.values():
        assert service.batch(batch_id)["status"] == "done"

    again = runner.invoke(app, ["study", "run", str(study), "--service", service.api.url])
    assert again.exit_code == 0, again.output
    assert dict(re.findall(r"^([\w-]+): batch (\w+) \(sent", again.output, flags=re.M)) == ids
    listed = service.api.client.get("/batches").json()["items"]
    assert sorted(item["id"] for item in listed) == sorted(ids.values())

    pages = tmp_path / "pages"
    report = runner.invoke(
        app, ["study", "report", str(study), "--service", service.api.url, "--out", str(pages)]
    )
    assert report.exit_code == 0, report.output
    page = (pages / "tiny.md").read_text()
    served = service.api.client.get(f"/batches/{ids['random']}/report").json()
    estimate = served["first_player_advantage"]["estimate"]
    assert f"**{estimate * 100:+.1f} %**" in page
    assert f"--service {service.api.url}" in page


def test_a_study_asking_more_than_the_servers_caps_is_refused_before_anything_is_sent(
    service_factory, tmp_path: Path
) -> None:
    service = service_factory(workers=0, MAX_AGENT_ITERATIONS="50")
    study = tmp_path / "greedy.toml"
    study.write_text(
        '[[batch]]\nname = "deep"\ngame = "alquerque"\nmatches = 4\n'
        'agents = "mcts:iterations=400,random"\n'
    )
    result = runner.invoke(app, ["study", "run", str(study), "--service", service.api.url])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert (
        f"{study}:5: deep.agents[0].iterations: agents[0].iterations must be at most 50 "
        "(MAX_AGENT_ITERATIONS), not 400" in flat
    )
    assert service.api.client.get("/batches").json()["items"] == []
