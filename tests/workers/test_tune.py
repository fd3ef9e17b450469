"""``playtester tune``: the layout encoding keeps the design's values, a clearly unfair trial is
stopped, and a small search runs end to end, stores its trials and resumes without replaying."""

from __future__ import annotations

import json
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from api_support import client_for, make_api
from repo_paths import DATA, REPO
from sqlalchemy import func, select
from typer.testing import CliRunner

from analysis.report import build_report
from analysis.studies.definition import StudyError, load_study
from api.cli import app
from engines.alveoles.layouts import CLASSIC, LAYOUT_SPACE
from engines.registry import game_names
from storage.db import ensure_schema, get_engine
from storage.models import BATCH
from storage.settings import Settings
from workers.local import run_local
from workers.studies.plan import plan_one
from workers.studies.runner import trial_here
from workers.studies.tuning import clearly_unfair, parse_tune

runner = CliRunner()
TUNE = DATA / "tiny_tune.toml"
CLASSIC_VALUES = [v for row in CLASSIC for v in row]
CLASSIC_VALUES_FLAT = tuple(CLASSIC_VALUES)  # the classic layout as the option normalises it


def batch_count(url: str) -> int:
    with get_engine(url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(BATCH)).scalar_one())


@pytest.mark.parametrize("seed", range(20))
def test_a_half_turn_layout_keeps_the_values_and_the_symmetry(seed: int) -> None:
    rng = random.Random(seed)
    keys = [rng.random() for _ in range(32)]
    placed = LAYOUT_SPACE.decode(CLASSIC_VALUES_FLAT, keys, "half_turn")
    grid = [v for row in placed for v in row]
    assert Counter(grid) == Counter(CLASSIC_VALUES)
    assert all(grid[i] == grid[63 - i] for i in range(64))
    # The pair with the smallest key takes the largest value, the largest key a white square.
    assert grid[min(range(32), key=keys.__getitem__)] == 50
    assert grid[max(range(32), key=keys.__getitem__)] == 1


def test_a_free_layout_is_a_permutation_and_odd_counts_cannot_be_symmetric() -> None:
    keys = [i / 64 for i in range(64)][::-1]
    grid = [v for row in LAYOUT_SPACE.decode(CLASSIC_VALUES_FLAT, keys, "none") for v in row]
    assert grid == sorted(CLASSIC_VALUES)  # the last cell has the smallest key
    with pytest.raises(ValueError, match="even number"):
        LAYOUT_SPACE.decode((7,) + (1,) * 63, [0.5] * 32, "half_turn")


def test_without_option_and_symmetry_permute_searches_what_the_game_declares(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.toml"
    text = TUNE.read_text()
    path.write_text(text.replace('option = "layout"\n', "").replace('symmetry = "half_turn"\n', ""))
    spec = parse_tune(load_study(path))
    # Les Alvéoles' layout is its one option with placements; half-turn is declared first.
    assert (spec.option, spec.symmetry) == ("layout", "half_turn")
    assert spec.placement is LAYOUT_SPACE


@pytest.mark.parametrize("module", ["tuning.py", "search.py"])
def test_the_search_names_no_game_and_works_from_what_the_game_declares(module: str) -> None:
    text = (REPO / "workers" / "studies" / module).read_text(encoding="utf-8")
    for game in game_names():
        assert not re.search(rf"\b{game}\b", text), f"{module} names {game}"


@pytest.mark.parametrize(
    ("low", "high", "unfair"),
    [(0.06, 0.2, True), (-0.2, -0.06, True), (0.04, 0.2, False), (-0.3, 0.3, False)],
)
def test_clearly_unfair_means_the_whole_interval_is_outside_the_margin(
    low: float, high: float, unfair: bool
) -> None:
    assert clearly_unfair({"ci_low": low, "ci_high": high}, 0.05) is unfair


@pytest.mark.parametrize(
    ("old", "new", "line", "field"),
    [
        ("trials = 3", "trials = 0", 16, "tune.trials"),
        ('sampler = "tpe"', 'sampler = "grid"', 17, "tune.sampler"),
        ('batch = "classic"\noption', 'batch = "none"\noption', 12, "tune.batch"),
        ("seed = 11", "seed = 11\nbudget = 5", 19, "tune.budget"),
        ('space = "permute"', 'space = "choices"', 11, "tune.choices"),
        ("trials = 3", "trials = 3\nrerank = 4", 17, "tune.rerank"),
        ("seed = 11", "seed = 11\ncommon_openings = 1", 19, "tune.common_openings"),
        ("seed = 11", 'seed = 11\nscreen_agents = ""', 19, "tune.screen_agents"),
        ("seed = 11", "seed = 11\nscreen_matches = 0", 19, "tune.screen_matches"),
        # What permute may search is the game's to declare: its symmetries, its options.
        ('symmetry = "half_turn"', 'symmetry = "mirror"', 15, "tune.symmetry"),
        ('game = "alveoles"', 'game = "alquerque"', 14, "tune.space"),
    ],
)
def test_a_bad_tune_table_names_its_line_and_field(
    tmp_path: Path, old: str, new: str, line: int, field: str
) -> None:
    path = tmp_path / "t.toml"
    text = TUNE.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(StudyError) as caught:
        parse_tune(load_study(path))
    assert str(caught.value).startswith(f"{path}:{line}: {field}")


def test_a_trial_the_check_finds_clearly_unfair_is_cancelled(migrated_sqlite_url: str) -> None:
    settings = Settings(database_url=migrated_sqlite_url, chunk_seconds=0.05)
    study = load_study(TUNE)
    planned = plan_one(study, study.batch("classic"), settings)
    engine = get_engine(migrated_sqlite_url)
    seen: list[int] = []

    def play(batch_id: str, progress) -> None:  # type: ignore[no-untyped-def]
        run_local(batch_id, settings=settings, workers=1, progress=progress)

    def stop(report: dict) -> bool:
        seen.append(report["batch"]["matches_done"])
        return True

    outcome = trial_here(engine, play, check_every=1)(planned, stop)
    assert outcome.stopped and seen
    assert outcome.report["batch"]["status"] == "cancelled"
    assert outcome.report["batch"]["matches_done"] < planned.plan.matches


@pytest.mark.slow
def test_a_small_search_runs_confirms_and_resumes_without_replaying(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = tmp_path / "tiny_tune.toml"
    shutil.copy(TUNE, study)
    result_file = tmp_path / "best.json"
    args = ["tune", str(study), "--db", sqlite_url, "--workers", "1", "--out", str(result_file)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    made = batch_count(sqlite_url)
    # Three trials, the base screened as they are (a control), the best and the base confirmed.
    assert made == 3 + 1 + 2
    result = json.loads(result_file.read_text())
    best = [v for row in result["best"]["value"] for v in row]
    assert Counter(best) == Counter(CLASSIC_VALUES)
    assert result["base"]["value"] == "classic"
    assert result["trials"] == 3
    assert "best layout: first-player advantage" in " ".join(first.output.split())
    assert Path(f"{sqlite_url.removeprefix('sqlite:///')}.optuna.db").is_file()

    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert batch_count(sqlite_url) == made
    assert json.loads(result_file.read_text())["best"] == result["best"]


def test_tune_refuses_a_study_without_a_tune_table(tmp_path: Path, sqlite_url: str) -> None:
    ensure_schema(sqlite_url)
    path = tmp_path / "plain.toml"
    path.write_text('[[batch]]\nname = "a"\ngame = "alquerque"\nagents = "random"\n')
    result = runner.invoke(app, ["tune", str(path), "--db", sqlite_url])
    assert result.exit_code == 2
    assert f"{path}:1: tune: this study has no [tune] table" in " ".join(result.output.split())


@pytest.mark.integration
def test_trials_in_postgresql_keep_to_their_own_schema(pg_url: str) -> None:
    import optuna

    from storage.tuning import OPTUNA_SCHEMA, optuna_storage

    ensure_schema(pg_url)
    with get_engine(pg_url).connect() as conn:
        ours = conn.execute(select(func.count()).select_from(BATCH)).scalar_one()
        revision = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one()
    settings = Settings(database_url=pg_url)
    study = optuna.create_study(storage=optuna_storage(settings), study_name="s")
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=2)
    again = optuna.load_study(storage=optuna_storage(settings), study_name="s")
    assert len(again.trials) == 2
    with get_engine(pg_url).connect() as conn:
        assert (
            conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one() == revision
        )
        assert conn.execute(select(func.count()).select_from(BATCH)).scalar_one() == ours
        tables = conn.exec_driver_sql(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %(s)s",
            {"s": OPTUNA_SCHEMA},
        ).scalar_one()
    assert tables > 5


@pytest.mark.integration
def test_trials_in_postgresql_go_through_the_projects_connection_options(pg_url: str) -> None:
    from storage.db import ConnectionOptions, configure_connections
    from storage.tuning import OPTUNA_SCHEMA, optuna_storage

    configure_connections(ConnectionOptions(tcp_timeout=8.0))
    try:
        storage = optuna_storage(Settings(database_url=pg_url))
        with storage.engine.connect() as conn:
            shown = {
                name: conn.exec_driver_sql(f"SHOW {name}").scalar_one()
                for name in ("tcp_user_timeout", "tcp_keepalives_count", "search_path")
            }
        storage.engine.dispose()
    finally:
        configure_connections(None)
    # As storage.db sets them for the session: 8 s of silence (shown in ms), three probes.
    assert shown == {
        "tcp_user_timeout": "8000",
        "tcp_keepalives_count": "3",
        "search_path": OPTUNA_SCHEMA,
    }


def tune_file(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "t.toml"
    text = TUNE.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


CHOICES = 'space = "choices"\nchoices = ["classic", "nowhere"]'
BAD_SEARCHES = [
    # A choice the game refuses, an option it does not have, a confirmation over the cap.
    ('space = "permute"', CHOICES, 15, "tune.choices", "layout"),
    (
        'option = "layout"\nspace = "permute"',
        'option = "width"\nspace = "choices"\nchoices = [3, 4]',
        15,
        "tune.choices",
        "width",
    ),
    ("confirm_matches = 24", "confirm_matches = 20000001", 21, "tune.confirm_matches", "matches"),
    # A screening level the game does not have, a re-ranking over the cap.
    ("seed = 11", 'seed = 11\nscreen_agents = "nobody"', 19, "tune.screen_agents", "agents"),
    (
        "seed = 11",
        "seed = 11\nrerank = 1\nrerank_matches = 20000001",
        20,
        "tune.rerank_matches",
        "matches",
    ),
]


@pytest.mark.parametrize(("old", "new", "line", "field", "named"), BAD_SEARCHES)
def test_a_search_that_cannot_run_is_refused_before_anything_is_stored(
    tmp_path: Path, migrated_sqlite_url: str, old: str, new: str, line: int, field: str, named: str
) -> None:
    path = tune_file(tmp_path, old, new)
    result = runner.invoke(app, ["tune", str(path), "--db", migrated_sqlite_url, "--workers", "1"])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"{path}:{line}: {field}: " in flat and named in flat.split(field, 1)[1]
    assert result.output.count("error:") == 1, result.output
    assert batch_count(migrated_sqlite_url) == 0
    database = migrated_sqlite_url.removeprefix("sqlite:///")
    assert not Path(f"{database}.optuna.db").exists()


def test_a_search_over_a_servers_cap_is_refused_before_anything_is_sent(
    tmp_path: Path, migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import api.cli.tune as tune_cli
    from api.client import ServiceClient

    server_db = f"sqlite:///{tmp_path}/server.db"
    ensure_schema(server_db)
    app_, dispatcher = make_api(server_db, max_matches_per_batch=20)
    monkeypatch.setattr(
        tune_cli,
        "client_for",
        lambda server, key: ServiceClient(server, api_key=key, http=client_for(app_)),
    )
    path = tmp_path / "t.toml"
    shutil.copy(TUNE, path)
    args = ["tune", str(path), "--db", migrated_sqlite_url, "--service", "http://playtester.test"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"{path}:21: tune.confirm_matches: " in flat and "between 1 and 20" in flat
    assert dispatcher.started == [] and batch_count(server_db) == 0
    assert not Path(f"{migrated_sqlite_url.removeprefix('sqlite:///')}.optuna.db").exists()


MULTI_FIDELITY = """
screen_agents = "random"
screen_matches = 8
rerank = 2
rerank_matches = 12
"""


@pytest.mark.slow
def test_a_search_screens_cheaply_reranks_the_best_at_full_strength_and_confirms_the_winner(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = tmp_path / "multi.toml"
    study.write_text(TUNE.read_text() + MULTI_FIDELITY)
    result_file = tmp_path / "best.json"
    args = ["tune", str(study), "--db", sqlite_url, "--workers", "1", "--out", str(result_file)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    # Three screening trials and the base screened beside them as a control, the two best
    # re-ranked, the winner and the base confirmed.
    assert batch_count(sqlite_url) == 3 + 1 + 2 + 2
    with get_engine(sqlite_url).connect() as conn:
        rows = conn.execute(select(BATCH.c.agents, BATCH.c.matches, BATCH.c.seed)).all()
    by_matches = Counter((str(agents), matches) for agents, matches, _seed in rows)
    assert sum(n for (agents, m), n in by_matches.items() if m == 8 and "random" in agents) == 4
    assert sum(n for (agents, m), n in by_matches.items() if m == 12 and "greedy" in agents) == 2
    # Common openings: trials, the control and re-rankings keep the base batch's seed (3).
    assert all(seed == 3 for _agents, matches, seed in rows if matches in (8, 12))

    result = json.loads(result_file.read_text())
    # The control is the base layout at the screening level, and what its batch reports.
    control = result["control"]
    assert control["value"] == "classic"
    engine = get_engine(sqlite_url)
    report = build_report(engine, control["batch_id"])
    assert report["batch"]["options"]["layout"] == "classic"
    assert (report["batch"]["matches"], report["batch"]["seed"]) == (8, 3)
    assert all("random" in str(agent) for agent in report["batch"]["agents"])
    assert control["first_player_advantage"] == report["first_player_advantage"]
    assert "the base variant screened as a control" in " ".join(first.output.split())
    reranked = result["reranked"]
    assert len(reranked) == 2
    screened = [abs(r["screened"]["estimate"]) for r in reranked]
    assert screened == sorted(screened)  # the best screened trials, best first
    closest = min(
        reranked, key=lambda r: (abs(r["first_player_advantage"]["estimate"]), r["trial"])
    )
    assert result["best"]["value"] == closest["value"]
    said = " ".join(first.output.split())
    assert "re-ranked" in said
    # Without a study half-width a confirmation plays its cap.
    assert "confirming the best variant: 24 matches" in said

    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert batch_count(sqlite_url) == 8
    assert json.loads(result_file.read_text())["best"] == result["best"]


@pytest.mark.slow
def test_a_search_goes_on_from_its_files_in_a_new_database_without_playing_again(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    study = folder / "multi.toml"
    study.write_text(TUNE.read_text() + MULTI_FIDELITY)
    first_db, second_db = (f"sqlite:///{tmp_path}/{name}.db" for name in ("one", "two"))
    out = tmp_path / "best.json"
    args = ["tune", str(study), "--workers", "1", "--out", str(out)]
    first = runner.invoke(app, [*args, "--db", first_db])
    assert first.exit_code == 0, first.output
    best = json.loads(out.read_text())["best"]

    results = folder / "results" / "multi"
    saved = json.loads((results / "tune-trials.json").read_text())
    assert [t["state"] for t in saved["trials"]] == ["COMPLETE"] * 3
    kept = sorted(p.name for p in results.iterdir() if p.is_dir())
    assert len(kept) == 5 and "tune-confirm-best" in kept and "tune-confirm-base" in kept
    assert "tune-screen-base" in kept
    assert sum(name.startswith("tune-rerank-") for name in kept) == 2

    again = runner.invoke(app, [*args, "--db", second_db])
    assert again.exit_code == 0, again.output
    # Only the kept batches came in, from their files; no trial was played again.
    assert batch_count(second_db) == 5
    assert "3 trials read from" in " ".join(again.output.split())
    # Folders that hold their batch finished are not saved again.
    assert not [line for line in again.output.splitlines() if line.startswith("kept ")]
    assert json.loads(out.read_text())["best"] == best

    # The page is written from the files alone, the search's section with it.
    played = runner.invoke(app, ["study", "run", str(study), "--db", second_db, "--workers", "1"])
    assert played.exit_code == 0, played.output
    pages = tmp_path / "pages"
    written = runner.invoke(app, ["study", "report", str(study), "--out", str(pages)])
    assert written.exit_code == 0, written.output
    twin = json.loads((pages / "multi.json").read_text())["search"]
    assert sorted(t["trial"] for t in twin["trials"]) == [0, 1, 2]
    assert sum(t["reranked"] is not None for t in twin["trials"]) == 2
    assert twin["best"]["value"] == best["value"]
    engine = get_engine(first_db)
    for label in ("best", "base"):
        figure = build_report(engine, twin[label]["batch_id"])["first_player_advantage"]
        assert twin[label]["first_player_advantage"]["estimate"] == pytest.approx(
            figure["estimate"], abs=1e-6
        )
    page = (pages / "multi.md").read_text()
    assert "## The search" in page and "### The best layout" in page
    distance = {
        label: abs(twin[label]["first_player_advantage"]["estimate"]) for label in ("best", "base")
    }
    closer = "best" if distance["best"] < distance["base"] else "base"
    assert twin["verdict"]["closer"] == closer
    assert f"Closer to an even game: **the {closer} layout**" in page
    grid = [line for line in page.split("### The best layout")[1].splitlines() if line[:3] == "| 8"]
    assert grid == ["| 8 | " + " | ".join(str(v) for v in best["value"][0]) + " |"]
    # The confirmations are the page's questions, and every kept batch is in its table.
    questions = json.loads((pages / "multi.json").read_text())["questions"]
    assert [(q["batch"], q["against"]) for q in questions] == [
        ("tune-confirm-best", None),
        ("tune-confirm-base", None),
        ("tune-confirm-best", "tune-confirm-base"),
    ]
    table = page.split("## Batches")[1]
    for name in kept:
        assert f"| {name} | `{twin['batches'][name]['id']}` |" in table
    # The screen's test covers the three trials and the control.
    assert twin["screen"]["count"] == 4 and twin["control"]["value"] == "classic"
    assert "| control (`classic`) |" in page

    # study verify replays the batches the page quotes, the search's kept ones too.
    verified = runner.invoke(app, ["study", "verify", str(study), "--sample", "2"])
    assert verified.exit_code == 0, verified.output
    replayed = [line.split(" (")[0] for line in verified.output.splitlines() if "replayed" in line]
    assert sorted(replayed) == sorted(["classic", *kept])


def test_trials_of_another_search_are_refused_by_the_tune_table(tmp_path: Path) -> None:
    import optuna

    from workers.studies.trials import restore_trials

    path = tmp_path / "t.toml"
    shutil.copy(TUNE, path)
    trials = tmp_path / "tune-trials.json"
    trials.write_text(json.dumps({"format": "playtester-tune-trials", "search": "x", "trials": []}))
    stored = optuna.create_study()
    with pytest.raises(StudyError) as caught:
        restore_trials(stored, "y", trials, load_study(path))
    assert str(caught.value).startswith(f"{path}:11: tune: ")
    assert "another search" in str(caught.value)
    assert stored.trials == []


def test_a_confirmation_stops_at_the_studys_half_width_not_at_its_cap(
    tmp_path: Path, sqlite_url: str
) -> None:
    study = tmp_path / "precise.toml"
    study.write_text(
        "half_width = 0.25\n"
        + TUNE.read_text().replace("confirm_matches = 24", "confirm_matches = 200")
    )
    result_file = tmp_path / "best.json"
    args = ["tune", str(study), "--db", sqlite_url, "--workers", "1", "--out", str(result_file)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    for label in ("best", "base"):
        assert (
            f"confirming the {label} variant: until its first-player-advantage interval "
            "is ±25 points, at most 200 matches"
        ) in said
    result = json.loads(result_file.read_text())
    engine = get_engine(sqlite_url)
    for label in ("best", "base"):
        report = build_report(engine, result[label]["batch_id"])
        figure = report["first_player_advantage"]
        assert report["batch"]["stopped_early"], label
        assert report["batch"]["matches_done"] < 200
        # It stopped because its interval was as narrow as the study asks.
        assert (figure["ci_high"] - figure["ci_low"]) / 2 <= 0.25 + 1e-9
