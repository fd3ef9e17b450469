"""A study run through a real server (uvicorn, Celery workers, PostgreSQL, Redis): its batches
are submitted with their content keys, found again on a second run, and its page is written
from the server's reports; its results are saved as it runs, and a fresh server given them
reports the same without playing a match."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from repo_paths import DATA
from service_fixtures import Service, pg_cluster, redis_server, service_factory
from typer.testing import CliRunner

from api.cli import app
from storage.archive import import_batch, read_archive
from workers.studies.results import throwaway_engine

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


def folder_report(folder: Path) -> dict[str, Any]:
    """The report of the batch a results folder holds, from a database of its own."""
    from analysis.report import build_report

    with throwaway_engine() as engine:
        batch_id = import_batch(engine, folder).batch_id
        report: dict[str, Any] = json.loads(json.dumps(build_report(engine, batch_id)))
    return report


def test_a_study_on_a_server_keeps_its_results_and_a_fresh_server_takes_them_up(
    service_factory, pg_cluster, redis_server, tmp_path: Path
) -> None:
    service = service_factory(workers=1)
    study = tmp_path / "studies" / "tiny.toml"
    study.parent.mkdir()
    shutil.copy(TINY, study)
    results = study.parent / "results" / "tiny"

    first = runner.invoke(app, ["study", "run", str(study), "--service", service.api.url])
    assert first.exit_code == 0, first.output
    ids = dict(re.findall(r"^([\w-]+): batch (\w+) \(sent", first.output, flags=re.M))
    assert set(ids) == {"easy-random", "random"}
    served = {}
    for name, batch_id in ids.items():
        archive = read_archive(results / name)
        assert (archive.batch_id, archive.batch["status"]) == (batch_id, "done")
        served[name] = service.api.client.get(f"/batches/{batch_id}/report").json()
        assert folder_report(results / name) == served[name]

    # A second server, its database fresh and no worker at all: it can only report what the
    # committed folders bring it.
    folder = tmp_path / "second"
    folder.mkdir()
    second = Service(pg_cluster, redis_server, folder, 0)
    try:
        again = runner.invoke(app, ["study", "run", str(study), "--service", second.api.url])
        assert again.exit_code == 0, again.output
        flat = " ".join(again.output.split())
        for name, batch_id in ids.items():
            sent = f"{name}: batch {batch_id} sent from its results (12 matches added, done)"
            assert sent in flat
            assert f"{name}: batch {batch_id} (sent, done)" in flat
            assert second.api.client.get(f"/batches/{batch_id}/report").json() == served[name]
    finally:
        second.close()
