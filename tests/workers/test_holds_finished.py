"""``holds_finished``: whether a study's results folder already holds its batch finished, so
that saving it again would add nothing. Only a manifest this version reads counts."""

from __future__ import annotations

import json
from pathlib import Path

from storage import crud
from storage.archive import export_batch
from storage.db import get_engine
from storage.settings import Settings
from workers.batches import plan_batch
from workers.local import run_local
from workers.studies.results import holds_finished


def stored_batch(url: str) -> str:
    plan = plan_batch(
        settings=Settings(),
        game="alquerque",
        players=None,
        options={},
        agents=["random", "easy"],
        matches=4,
        seed=5,
        seat_policy=None,
        chunk_size=2,
        max_plies=None,
    )
    return crud.create_batch(get_engine(url), plan=plan).id


def test_only_a_readable_manifest_of_the_batch_finished_counts(
    migrated_sqlite_url: str, tmp_path: Path
) -> None:
    batch_id = stored_batch(migrated_sqlite_url)
    engine = get_engine(migrated_sqlite_url)
    folder = export_batch(engine, batch_id, tmp_path / "early").path
    assert not holds_finished(folder, batch_id)  # saved before it was played

    run_local(batch_id, settings=Settings(database_url=migrated_sqlite_url), workers=1)
    folder = export_batch(engine, batch_id, tmp_path / "done").path
    assert holds_finished(folder, batch_id)
    assert not holds_finished(folder, "0" * 12)  # another batch's folder
    assert not holds_finished(tmp_path / "nowhere", batch_id)

    manifest = json.loads((folder / "batch.json").read_text())
    (folder / "batch.json").write_text(json.dumps({**manifest, "version": 2}))
    assert not holds_finished(folder, batch_id)  # a format this version cannot read
    (folder / "batch.json").write_text('{"batch": {"id": "' + batch_id + '", "status": "done"}}')
    assert not holds_finished(folder, batch_id)  # not a manifest at all
    (folder / "batch.json").write_text(json.dumps(manifest))
    assert holds_finished(folder, batch_id)
