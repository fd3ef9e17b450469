"""A study's results as files beside it: a study stopped midway goes on from them in a new
database and plays only what is missing; saves are whole or not at all; the files replay as
stored (``study verify``), for a study of the test's own and for every committed batch."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from api_support import client_for, make_api
from repo_paths import REPO
from sqlalchemy import select
from typer.testing import CliRunner

from analysis.studies.definition import StudyError, load_study
from api.cli import app
from engines.compiled.warm import needs
from storage.archive import MANIFEST, read_archive, read_batch
from storage.archive.layout import MATCHES, SEATS, TABLE_FILES, file_digest
from storage.db import get_engine, upgrade
from storage.models import CHUNK, BatchBase
from storage.queries import find_match
from storage.settings import Settings
from workers.chunks import run_chunk
from workers.play import build_game
from workers.studies.plan import plan_study
from workers.studies.results import (
    Checkpoints,
    Keeper,
    batch_folder,
    exporter,
    recover,
    restore,
    save,
)
from workers.studies.runner import StudyRun, run_here
from workers.verify import verify_batch

runner = CliRunner()
STUDY = """title = "One batch"
half_width = 0.05
budget_cpu_hours = 1

[[batch]]
name = "random"
game = "alquerque"
agents = "random"
matches = 12
seed = 3

[[question]]
figure = "first_player_advantage"
batch = "random"
"""


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    path = tmp_path / "studies" / "one.toml"
    path.parent.mkdir()
    path.write_text(STUDY)
    return path


def url_in(tmp_path: Path, name: str) -> str:
    url = f"sqlite:///{tmp_path}/{name}.db"
    upgrade(url)
    return url


def chunk_rows(url: str, batch_id: str) -> list[tuple[int, int, float, str]]:
    with get_engine(url).connect() as conn:
        rows = conn.execute(
            select(CHUNK.c.start, CHUNK.c.stop, CHUNK.c.duration, CHUNK.c.finished_at)
            .where(CHUNK.c.batch_id == batch_id)
            .order_by(CHUNK.c.start)
        )
        return [(a, b, d, str(f)) for a, b, d, f in rows]


def played_first(study_path: Path, url: str, stop: int) -> tuple[str, Path]:
    """Machine A: the study's batch made, matches [0, stop) played and saved, then A stops."""
    study = load_study(study_path)
    planned = plan_study(study, Settings(database_url=url))
    engine = get_engine(url)
    folder = batch_folder(study, "random")

    def play(run: StudyRun) -> None:
        run_chunk(run.batch_id, 0, stop, database_url=url)
        save(engine, run.batch_id, folder)

    (run,) = run_here(engine, planned, play=play)
    return run.batch_id, folder


def test_a_study_stopped_midway_goes_on_from_its_files_in_a_new_database(
    study_path: Path, tmp_path: Path
) -> None:
    url_a, url_b, url_c = (url_in(tmp_path, name) for name in "abc")
    batch_id, folder = played_first(study_path, url_a, 5)
    assert read_archive(folder).batch["status"] != "done"
    assert len(read_archive(folder).matches["match_index"]) == 5

    result = runner.invoke(app, ["study", "run", str(study_path), "--db", url_b, "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert f"random: batch {batch_id} read from its results (5 matches added" in result.output
    assert f"random: batch {batch_id} (found, " in result.output
    # The imported chunk is A's own row (its duration and time), not played again here.
    imported = chunk_rows(url_a, batch_id)
    rows = chunk_rows(url_b, batch_id)
    assert rows[0] == imported[0] and rows[0][:2] == (0, 5)
    assert rows[-1][1] == 12 and all(a[1] == b[0] for a, b in pairwise(rows))
    saved = read_archive(folder)
    assert saved.batch["status"] == "done"
    assert saved.matches["match_index"] == list(range(12))

    # The matches are those of the same study played at one go in a third database.
    result = runner.invoke(app, ["study", "run", str(study_path), "--db", url_c, "--workers", "1"])
    assert result.exit_code == 0, result.output
    whole = Path(tmp_path / "whole")
    shutil.move(folder, whole)
    fresh = runner.invoke(app, ["study", "run", str(study_path), "--db", url_in(tmp_path, "d")])
    assert fresh.exit_code == 0, fresh.output
    fresh_id = read_archive(folder).batch_id
    for index in range(12):
        resumed = find_match(get_engine(url_b), batch_id, index)
        at_once = find_match(get_engine(f"sqlite:///{tmp_path}/d.db"), fresh_id, index)
        assert resumed.match["moves"] == at_once.match["moves"]
        assert [s["win_share"] for s in resumed.seats] == [s["win_share"] for s in at_once.seats]


def test_checkpoints_save_on_their_interval_and_when_asked(
    study_path: Path, tmp_path: Path
) -> None:
    url = url_in(tmp_path, "a")
    batch_id, folder = played_first(study_path, url, 2)
    shutil.rmtree(folder)
    now = [100.0]
    saves: list[int] = []
    points = Checkpoints(
        exporter(get_engine(url), batch_id),
        folder,
        every=300.0,
        clock=lambda: now[0],
        saved=lambda s: saves.append(s.matches),
    )
    now[0] = 399.0
    points.tick()
    assert saves == [] and not folder.exists()
    now[0] = 400.0
    points.tick()
    assert saves == [2]
    run_chunk(batch_id, 2, 4, database_url=url)
    now[0] = 500.0
    points.tick()
    assert saves == [2]
    points.save()
    assert saves == [2, 4] and len(read_archive(folder).matches["match_index"]) == 4


def test_a_save_stopped_midway_leaves_a_whole_folder(study_path: Path, tmp_path: Path) -> None:
    url = url_in(tmp_path, "a")
    batch_id, folder = played_first(study_path, url, 2)
    engine = get_engine(url)
    run_chunk(batch_id, 2, 4, database_url=url)
    staged, old = folder.with_name(".random.new"), folder.with_name(".random.old")

    def count() -> int:
        return len(read_archive(folder).matches["match_index"])

    # Stopped after the old folder moved aside, the new export whole: the new one is taken.
    shutil.copytree(folder, old)
    save(engine, batch_id, folder)
    shutil.move(folder, staged)
    recover(folder)
    assert count() == 4 and not staged.exists() and not old.exists()

    # Stopped with the new export half-written: the old folder comes back.
    shutil.move(folder, old)
    shutil.copytree(old, staged)
    (staged / MANIFEST).unlink()
    recover(folder)
    assert count() == 4 and not staged.exists() and not old.exists()

    # A leftover export beside a whole folder is dropped; the folder stays as it was.
    before = (folder / MANIFEST).read_bytes()
    staged.mkdir()
    (staged / "matches.parquet").write_bytes(b"half")
    recover(folder)
    assert not staged.exists() and (folder / MANIFEST).read_bytes() == before


def test_results_of_another_batch_for_the_same_definition_are_refused(
    study_path: Path, tmp_path: Path
) -> None:
    url_a, url_b = url_in(tmp_path, "a"), url_in(tmp_path, "b")
    batch_id, _folder = played_first(study_path, url_a, 2)
    study = load_study(study_path)
    planned = plan_study(study, Settings(database_url=url_b))
    (other,) = run_here(get_engine(url_b), planned, play=lambda _run: None)
    with pytest.raises(StudyError, match=f"holds batch {other.batch_id} .* holds batch {batch_id}"):
        restore(get_engine(url_b), study, planned)


def test_study_verify_finds_a_changed_move_in_the_files(study_path: Path, tmp_path: Path) -> None:
    url = url_in(tmp_path, "a")
    result = runner.invoke(app, ["study", "run", str(study_path), "--db", url, "--workers", "1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["study", "verify", str(study_path), "--sample", "12"])
    assert result.exit_code == 0, result.output
    assert "random (" in result.output and "12 of 12 played matches replayed as stored" in (
        result.output
    )

    # One move of match 7 changed, the manifest's digest made to agree: verify says where.
    folder = study_path.parent / "results" / "one" / "random"
    table = pq.read_table(folder / MATCHES).to_pydict()
    moves = table["moves"][7]
    swap = next(i for i in range(4, len(moves)) if moves[i] != moves[3])
    moves[3], moves[swap] = moves[swap], moves[3]
    schema = pq.read_schema(folder / MATCHES)
    pq.write_table(pa.Table.from_pydict(table, schema=schema), folder / MATCHES)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"][MATCHES] = file_digest(folder / MATCHES)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    result = runner.invoke(app, ["study", "verify", str(study_path), "--sample", "12"])
    assert result.exit_code == 1
    assert "match 7: moves at ply 4 differs" in " ".join(result.output.split())


def test_a_server_given_the_results_reports_them_and_plays_nothing(
    study_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import api.cli.study as study_cli
    from analysis.report import build_report
    from api.client import ServiceClient

    url = url_in(tmp_path, "a")
    result = runner.invoke(app, ["study", "run", str(study_path), "--db", url, "--workers", "1"])
    assert result.exit_code == 0, result.output
    folder = batch_folder(load_study(study_path), "random")
    batch_id = read_archive(folder).batch_id
    saved = {p.name: p.read_bytes() for p in folder.iterdir()}

    # A server with a fresh database, which plays nothing (its dispatcher only records).
    server, dispatcher = make_api(url_in(tmp_path, "server"))
    monkeypatch.setattr(
        study_cli,
        "client_for",
        lambda s, key: ServiceClient(s, api_key=key, http=client_for(server)),
    )
    command = ["study", "run", str(study_path), "--service", "http://playtester.test"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert f"random: batch {batch_id} sent from its results (12 matches added, done)" in (
        result.output
    )
    assert f"random: batch {batch_id} (sent, done)" in result.output
    assert dispatcher.started == []
    assert client_for(server).get(f"/batches/{batch_id}/report").json() == json.loads(
        json.dumps(build_report(get_engine(url), batch_id))
    )
    # Finished in its folder already: nothing saved again, nothing sent on a second run.
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == saved
    again = runner.invoke(app, command)
    assert again.exit_code == 0, again.output
    assert "sent from its results" not in again.output


def test_a_batch_watched_on_a_server_is_saved_on_its_interval_when_done_and_on_ctrl_c(
    study_path: Path, tmp_path: Path
) -> None:
    url = url_in(tmp_path, "a")
    batch_id, folder = played_first(study_path, url, 2)
    shutil.rmtree(folder)
    study = load_study(study_path)
    now = [0.0]
    saves: list[int] = []
    keeper = Keeper(
        study,
        lambda b: exporter(get_engine(url), b),
        every=300.0,
        clock=lambda: now[0],
        saved=lambda s: saves.append(s.matches),
    )
    playing = [StudyRun("random", batch_id, None, "running")]
    keeper.polled(playing)
    now[0] = 299.0
    keeper.polled(playing)
    assert saves == [] and not folder.exists()
    now[0] = 300.0
    keeper.polled(playing)
    assert saves == [2]
    run_chunk(batch_id, 2, 5, database_url=url)
    keeper.save_all()  # Ctrl-C
    assert saves == [2, 5] and len(read_archive(folder).matches["match_index"]) == 5
    run_chunk(batch_id, 5, 12, database_url=url)
    done = [StudyRun("random", batch_id, None, "done")]
    keeper.polled(done)
    keeper.polled(done)
    keeper.save_all()
    assert saves == [2, 5, 12] and read_archive(folder).batch["status"] == "done"


SPARE_SECONDS = 1.0
"""A batch replays its quickest drawn match beside its quickest decided one when that drawn
match took at most this long when it was played (seconds, as stored)."""


EXAMPLE_STUDIES = {"kalah"}
"""Results of a game from an example package, which this environment lacks:
tests/analysis/test_example_study_page.py installs the package and replays them."""


def committed_batches() -> list[Path]:
    found = (REPO / "studies" / "results").glob(f"*/*/{MANIFEST}")
    # A folder whose name starts with a dot is a save in progress, not a committed batch.
    return sorted(
        p.parent
        for p in found
        if not p.parent.name.startswith(".") and p.parent.parent.name not in EXAMPLE_STUDIES
    )


def _needs_compiled(folder: Path) -> bool:
    row = read_batch(folder)
    batch = BatchBase(**{k: row[k] for k in BatchBase.model_fields})
    return bool(needs(build_game(batch), batch.agents))


def _same_as(folders: list[Path]) -> dict[Path, Path]:
    """Each folder that holds the very batch of an earlier one (two studies sharing a batch,
    e.g. Abalone's standard layout at the 400-ply limit), mapped to that earlier folder:
    same batch id, same table digests in the manifest."""
    first: dict[str, Path] = {}
    copies: dict[Path, Path] = {}
    for folder in folders:
        manifest = json.loads((folder / MANIFEST).read_text())
        key = json.dumps([manifest["batch"]["id"], manifest["files"]], sort_keys=True)
        if key in first:
            copies[folder] = first[key]
        else:
            first[key] = folder
    return copies


def _committed_params() -> list[object]:
    folders = committed_batches()
    if not folders:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="no committed results"))]
    copies = _same_as(folders)
    return [
        pytest.param(
            folder,
            copies.get(folder),
            id=f"{folder.parent.name}/{folder.name}",
            # A compiled agent compiles on its first move: minutes on a cold cache.
            marks=[pytest.mark.slow] if _needs_compiled(folder) else [],
        )
        for folder in folders
    ]


def quickest_by_result(folder: Path) -> list[int]:
    """The matches to replay of a committed batch: its quickest decided match (some seat won
    more than another, by the stored seat rows), and its quickest drawn one where that took at
    most ``SPARE_SECONDS``; a batch of draws only replays its quickest draw.

    Any one match that replays as stored proves that this code still plays the batch's
    definition from its seeds as it was played; the quickest one proves it at the least cost,
    which keeps the suite's share of a long batch (Abalone at a 2,000-ply limit, whose draws
    took eight minutes each) at seconds. The random sample of ten decided and ten drawn
    matches that bounds a forgery's chance of escaping stays the job of
    ``playtester study verify``."""
    rows = pq.read_table(folder / MATCHES, columns=["match_index", "ok", "duration"]).to_pydict()
    seats = pq.read_table(folder / SEATS, columns=["match_index", "win_share"]).to_pydict()
    shares: dict[int, list[float]] = {}
    for index, share in zip(seats["match_index"], seats["win_share"], strict=True):
        shares.setdefault(index, []).append(share)
    decided: list[tuple[float, int]] = []
    drawn: list[tuple[float, int]] = []
    for index, ok, duration in zip(rows["match_index"], rows["ok"], rows["duration"], strict=True):
        if ok:
            kind = decided if max(shares[index]) > min(shares[index]) else drawn
            kind.append((duration, index))
    chosen = [min(decided)] if decided else []
    if drawn and (not decided or min(drawn)[0] <= SPARE_SECONDS):
        chosen.append(min(drawn))
    return sorted(index for _duration, index in chosen)


@pytest.mark.parametrize(("folder", "same_as"), _committed_params())
def test_every_committed_batch_replays_as_stored(
    folder: Path, same_as: Path | None, migrated_sqlite_url: str
) -> None:
    from storage.archive import import_batch
    from storage.crud import find_batch

    engine = get_engine(migrated_sqlite_url)
    summary = import_batch(engine, folder)  # checks the tables against the manifest's digests
    if same_as is not None:
        # The same batch as an earlier folder, which replays it: the very same files.
        for name in (MANIFEST, *TABLE_FILES):
            assert (folder / name).read_bytes() == (same_as / name).read_bytes(), name
        return
    verdict = verify_batch(
        engine, find_batch(engine, summary.batch_id), matches=quickest_by_result(folder)
    )
    assert verdict.sampled, f"{folder}: no played match to replay"
    assert verdict.ok, verdict.mismatches[0].describe()
