"""A study's series (``batches = [...]``): checked where it is written, and the page it opens.

A small study of random players on three solved boards is played for real; its page's series
is checked against the first player's win share counted from the stored matches (and SciPy's
exact interval), against the solver's committed start values, and in its verdict's words, and
it is written twice to the same bytes."""

from __future__ import annotations

import json
import math
import shutil
import statistics
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from repo_paths import REPO
from scipy.stats import beta, binomtest, norm, t
from typer.testing import CliRunner

from analysis.studies.definition import StudyError, load_study
from analysis.studies.series_random import mean_interval
from api.cli import app

runner = CliRunner()
SOLVED = REPO / "studies" / "results" / "solved"

HEAD = """title = "Series"
half_width = 0.08

[defaults]
game = "alveoles"
players = 2
agents = "random"
seed = 11
no_variation = true

[[batch]]
name = "2x3"
matches = 400
options = { layout = "classic-2x3", square_bonus = "none" }

[[batch]]
name = "3x3"
matches = 40
options = { layout = "classic-3x3", square_bonus = "none" }
"""

SERIES = """
[[question]]
figure = "first_player_advantage"
batches = ["2x3", "3x3"]
labels = ["2 by 3", "3 by 3"]
axis = "board"

[question.exact]
2x3 = "results/solved/2x3.json"
3x3 = "results/solved/3x3.json"
"""


def _study(folder: Path, text: str) -> Path:
    """``text`` as ``folder/studies/series.toml``, with the committed solved 2 × 3 and 3 × 3
    files beside it."""
    path = folder / "studies" / "series.toml"
    (path.parent / "results" / "solved").mkdir(parents=True, exist_ok=True)
    for board in ("2x3", "3x3"):
        shutil.copy(SOLVED / f"{board}.json", path.parent / "results" / "solved")
    path.write_text(text)
    return path


def _refused(tmp_path: Path, text: str) -> StudyError:
    path = _study(tmp_path, text)
    with pytest.raises(StudyError) as caught:
        load_study(path)
    return caught.value


def _line(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_a_series_reads_its_points_labels_and_the_solvers_start_values(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path, HEAD + SERIES))
    (series,) = study.series
    assert study.questions == ()
    assert series.batches == ("2x3", "3x3") and series.labels == ("2 by 3", "3 by 3")
    for board in ("2x3", "3x3"):
        solved = json.loads((SOLVED / f"{board}.json").read_text())
        assert series.exact[board].start_value == solved["classic"]["start_value"]
        assert series.exact[board].meaning == solved["value"]
        assert series.exact[board].source == f"studies/results/solved/{board}.json"
    # The labels default to the batch names, and a point may have no exact value.
    bare = HEAD + '[[question]]\nfigure = "first_player_advantage"\nbatches = ["3x3", "2x3"]\n'
    (plain,) = load_study(_study(tmp_path / "bare", bare)).series
    assert plain.labels == ("3x3", "2x3") and plain.exact == {} and plain.axis == "batch"


@pytest.mark.parametrize(
    ("change", "field", "fragment", "message"),
    [
        (('"2x3", "3x3"]', '"2x3", "4x4"]'), "batches", "batches =", "no batch named '4x4'"),
        (('"2x3", "3x3"]', '"2x3"]'), "batches", "batches =", "two batches or more"),
        (('"2x3", "3x3"]', '"2x3", "2x3"]'), "batches", "batches =", "'2x3' is listed twice"),
        (('"2 by 3", "3 by 3"]', '"2 by 3"]'), "labels", "labels =", "gives 1 labels for 2"),
        (('"2 by 3", "3 by 3"]', '"a", "a"]'), "labels", "labels =", "two points share a label"),
        (('axis = "board"', 'axis = ""'), "axis", "axis =", "non-empty text"),
        (('axis = "board"', 'against = "3x3"'), "against", "against =", "has none"),
        (
            ('figure = "first_player_advantage"\nbatches', 'figure = "seats"\nbatches'),
            "figure",
            "figure =",
            "made of first_player_advantage only",
        ),
        (
            ('3x3 = "results/solved/3x3.json"', '4x4 = "results/solved/3x3.json"'),
            "exact.4x4",
            "4x4 =",
            "not a batch of this series",
        ),
        (
            ('3x3 = "results/solved/3x3.json"', '3x3 = "results/solved/4x4.json"'),
            "exact.3x3",
            "3x3 =",
            "no such file: results/solved/4x4.json",
        ),
        (
            ('3x3 = "results/solved/3x3.json"', '3x3 = "../solved/3x3.json"'),
            "exact.3x3",
            "3x3 =",
            "inside the study file's folder",
        ),
        (
            ('3x3 = "results/solved/3x3.json"', '3x3 = "results/solved/2x3.json"'),
            "exact.3x3",
            "3x3 =",
            "no value for the batch's layout 'classic-3x3'",
        ),
    ],
)
def test_a_series_that_cannot_be_read_is_refused_where_it_is_written(
    tmp_path: Path, change: tuple[str, str], field: str, fragment: str, message: str
) -> None:
    old, new = change
    text = HEAD + SERIES.replace(old, new)
    assert text != HEAD + SERIES
    error = _refused(tmp_path, text)
    assert error.field == f"question[0].{field}"
    assert error.line == _line(text, fragment)
    assert message in error.message, error.message


def test_a_solved_file_for_other_rules_is_refused(tmp_path: Path) -> None:
    # Without square_bonus = none the batch plays the default bonus rule, which the solver's
    # values do not hold for.
    text = (HEAD + SERIES).replace(
        'options = { layout = "classic-2x3", square_bonus = "none" }',
        'options = { layout = "classic-2x3" }',
    )
    error = _refused(tmp_path, text)
    assert error.field == "question[0].exact.2x3"
    assert "square_bonus = 'none'; the batch plays square_bonus = 'overlapping'" in error.message


@pytest.mark.parametrize("key", ["labels", "axis", "exact"])
def test_a_question_of_one_batch_has_no_series_keys(tmp_path: Path, key: str) -> None:
    value = {"labels": '["a"]', "axis": '"board"', "exact": '{ 2x3 = "x.json" }'}[key]
    text = (
        HEAD + f'[[question]]\nfigure = "first_player_advantage"\nbatch = "2x3"\n{key} = {value}\n'
    )
    error = _refused(tmp_path, text)
    assert error.field == f"question[0].{key}" and error.line == _line(text, f"{key} =")
    assert "only a series" in error.message


def test_a_study_has_one_series(tmp_path: Path) -> None:
    text = (
        HEAD
        + SERIES
        + '[[question]]\nfigure = "first_player_advantage"\nbatches = ["2x3", "3x3"]\n'
    )
    error = _refused(tmp_path, text)
    assert error.field == "question[1].batches" and "one series" in error.message


def _played(tmp_path: Path, sqlite_url: str) -> Path:
    """The study played (both batches), then a third board added to its file and its series,
    not played: the study file."""
    path = _study(tmp_path, HEAD + SERIES)
    done = runner.invoke(app, ["study", "run", str(path), "--db", sqlite_url, "--workers", "1"])
    assert done.exit_code == 0, done.output
    more = (
        '[[batch]]\nname = "2x4"\nmatches = 40\n'
        'options = { layout = "classic-2x4", square_bonus = "none" }\n'
    )
    text = (HEAD + more + SERIES).replace('"3x3"]\nlabels', '"3x3", "2x4"]\nlabels')
    path.write_text(text.replace('"3 by 3"]', '"3 by 3", "2 by 4"]'))
    return path


def _first_shares(folder: Path) -> pd.DataFrame:
    """Per game, seat 0's (the first mover's) win share and its moves, from a results folder."""
    seats = pd.read_parquet(folder / "seats.parquet")
    matches = pd.read_parquet(folder / "matches.parquet")[["match_index", "moves"]]
    first = seats[seats["seat"] == 0][["match_index", "win_share"]]
    return first.merge(matches, on="match_index").sort_values("match_index")


def _interval(games: pd.DataFrame) -> tuple[float, float]:
    """The 95 % interval of the first mover's mean share (draws count half) over units of
    sampling, from SciPy (docs/statistics.md): a batch that varies nothing counts games with
    the same moves as one unit. Whole wins, one game a unit: Clopper-Pearson. Otherwise Korn
    and Graubard's: Clopper-Pearson at the Bernoulli size of the mean's cluster-robust (CR1)
    variance, shrunk by (z / t)² on Kish's effective units less two."""
    x = games["win_share"].to_numpy(float)
    m, p = len(x), float(x.mean())
    units = games.groupby(games["moves"].map(str))["win_share"].agg(["sum", "size"])
    g = len(units)
    if g == m and set(x) <= {0.0, 1.0}:
        ci = binomtest(int(x.sum()), m).proportion_ci(0.95, method="exact")
        return float(ci.low), float(ci.high)
    residuals = units["sum"].to_numpy(float) - p * units["size"].to_numpy(float)
    variance = g / (g - 1) * float((residuals**2).sum()) / m**2
    size = m * p * (1 - p) / (m - 1) / variance
    kish = m * m / float((units["size"].to_numpy(float) ** 2).sum())
    size *= (norm.ppf(0.975) / t.ppf(0.975, kish - 2)) ** 2
    k = p * size
    return float(beta.ppf(0.025, k, size - k + 1)), float(beta.ppf(0.975, k + 1, size - k))


def test_the_series_opens_the_page_with_the_games_own_figures(
    tmp_path: Path, sqlite_url: str
) -> None:
    path = _played(tmp_path, sqlite_url)
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        done = runner.invoke(app, ["study", "report", str(path), "--out", str(out)])
        assert done.exit_code == 0, done.output
    names = sorted(p.name for p in outs[0].iterdir())
    assert names == ["series-series.svg", "series.json", "series.md"]
    for name in names:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name

    data = json.loads((outs[0] / "series.json").read_text())
    page = (outs[0] / "series.md").read_text()
    points = {p["batch"]: p for p in data["series"]["points"]}
    assert [p["label"] for p in data["series"]["points"]] == ["2 by 3", "3 by 3", "2 by 4"]
    results = path.parent / "results" / "series"
    for board, matches in (("2x3", 400), ("3x3", 40)):
        shares = _first_shares(results / board)["win_share"]
        p = points[board]
        assert p["played"] and p["games"] == len(shares) == matches
        assert p["estimate"] == pytest.approx(shares.mean() - 0.5, abs=1e-6)
        solved = json.loads((SOLVED / f"{board}.json").read_text())
        assert p["exact"]["start_value"] == solved["classic"]["start_value"]
        assert p["exact"]["outcome"] == (
            f"first player loses by {-solved['classic']['start_value']} points"
        )
    # 2 × 3 has drawn games, 3 × 3 none: the two forms of the interval.
    for board in ("2x3", "3x3"):
        low, high = _interval(_first_shares(results / board))
        assert points[board]["ci_low"] == pytest.approx(low - 0.5, abs=1e-6)
        assert points[board]["ci_high"] == pytest.approx(high - 0.5, abs=1e-6)
    # The change from the first point to the last one played is the difference of the two.
    change = data["series"]["change"]
    assert (change["from"], change["to"]) == ("2x3", "3x3")
    difference = points["3x3"]["estimate"] - points["2x3"]["estimate"]
    assert change["difference"] == pytest.approx(difference, abs=1e-6)
    assert not points["2x4"]["played"] and data["not_played"] == ["2x4"]

    # The verdict's words, from the same figures.
    verdict = " ".join(s["text"] for s in data["verdict"])
    assert page.index("## Verdict") < page.index("](series-series.svg)") < page.index("## How")
    a, b = points["2x3"], points["3x3"]
    assert (
        f"At `random`, the first player's advantage is **{a['estimate'] * 100:+.1f} %** "
        f"[{a['ci_low'] * 100:+.1f} %, {a['ci_high'] * 100:+.1f} %] on 2 by 3 and "
        f"**{b['estimate'] * 100:+.1f} %**"
    ) in verdict
    moved = change["ci_low"] > 0 or change["ci_high"] < 0
    word = ("rises" if difference > 0 else "falls") if moved else "is not shown to change"
    if moved and a["estimate"] * b["estimate"] > 0:
        nearer = abs(b["estimate"]) < abs(a["estimate"])
        word += " toward an even game" if nearer else " away from an even game"
    assert f"from 2 by 3 to 3 by 3 it {word} ({difference * 100:+.1f} pp" in verdict
    assert "loses by 98 points on 2 by 3 and by 78 on 3 by 3" in verdict
    # 400 games reach the study's ±8 points; 40 do not, and the batch has finished.
    half = (b["ci_high"] - b["ci_low"]) / 2 * 100
    assert a["state"] == "settled" and b["state"] == "wide"
    assert (
        f"Settled to ±8.0 pp: 2 by 3; stopped wider than that: 3 by 3 (40 games, ±{half:.1f} pp); "
        "not yet played: 2 by 4."
    ) in verdict
    ahead = [p for p in (a, b) if p["ci_high"] < 0]
    assert f"on {len(ahead)} of the 2 solved boards played" in verdict
    # The table has a row per point played, the figure in the level's column.
    verdict_section = page.split("## Verdict", 1)[1].split("\n## ", 1)[0]
    table = [line for line in verdict_section.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 2 and "`random`" in table[0].split(" | ")[1]
    assert table[2].startswith("| 2 by 3 | ") and "first player loses by 98 points" in table[2]
    # The question of the batch not yet played says so, and so does the batches' table.
    assert "| 2x4 | – | alveoles | 2 | random |" in page and "not yet played |" in page
    assert data["summary"].startswith(f"First player {a['estimate'] * 100:+.1f} % [")


def test_a_study_still_playing_marks_what_has_no_results(tmp_path: Path, sqlite_url: str) -> None:
    # Two questions, one of them on a batch added after the study was played, and a
    # comparison with it: the page is written, the missing batch said not yet played.
    questions = (
        '[[question]]\nfigure = "first_player_advantage"\nbatch = "2x3"\n'
        '[[question]]\nfigure = "first_player_advantage"\nbatch = "3x3"\nagainst = "2x3"\n'
    )
    path = _study(tmp_path, HEAD + questions)
    done = runner.invoke(app, ["study", "run", str(path), "--db", sqlite_url, "--workers", "1"])
    assert done.exit_code == 0, done.output
    more = '[[batch]]\nname = "2x4"\nmatches = 40\noptions = { layout = "classic-2x4" }\n'
    path.write_text(HEAD + more + questions.replace('against = "2x3"', 'against = "2x4"'))
    out = tmp_path / "pages"
    done = runner.invoke(app, ["study", "report", str(path), "--out", str(out)])
    assert done.exit_code == 0, done.output
    page = (out / "series.md").read_text()
    data = json.loads((out / "series.json").read_text())
    assert "### 2. the starting player's win share minus 1/n" in page
    assert "Not yet played: **2x4** has no results yet." in page
    assert "| 2x4 | – | alveoles | 2 | random | layout=classic-2x4 | 0 of 40 | 11 | – |" in page
    first, compared = data["questions"]
    assert first["result"]["estimate"] is not None and compared["result"] is None
    assert data["not_played"] == ["2x4"] and set(data["batches"]) == {"2x3", "3x3"}
    # The verdict reads the question answered, 2 × 3's.
    estimate = first["result"]["estimate"]
    assert f"advantage is **{estimate * 100:+.1f} %**" in data["verdict"][0]["text"]


# The random value layouts of the solved boards: a section after the verdict, from files with
# hand-picked values. 2 × 3's classic value lies below all its random layouts; 3 × 3's lies
# inside their range but on the second player's side, where 7 of its 8 layouts favour the
# first; 2 × 4's file has an empty `random` list and no row.
RANDOM_VALUES = {"2x3": [-12, 5, 30, 0, 44, 18, -3], "3x3": [10, -3, 7, 12, 15, 9, 11, 8]}
CLASSIC_VALUES = {"2x3": -20, "3x3": -1, "2x4": 6}
DRAW = "values drawn by hand for the test"
RANDOM_STUDY = (
    HEAD.replace("matches = 400", "matches = 20").replace("matches = 40", "matches = 20")
    + '[[batch]]\nname = "2x4"\nmatches = 20\n'
    + 'options = { layout = "classic-2x4", square_bonus = "none" }\n'
    + SERIES.replace('"3x3"]\nlabels', '"3x3", "2x4"]\nlabels')
    .replace('"3 by 3"]', '"3 by 3", "2 by 4"]')
    .replace(
        '3x3 = "results/solved/3x3.json"',
        '3x3 = "results/solved/3x3.json"\n2x4 = "results/solved/2x4.json"',
    )
)
SECTION = "## Random value layouts of the solved boards"


def _write_solved(folder: Path, with_random: bool) -> None:
    """Solved-values files for the three boards in ``folder``, as the solver lays them out,
    holding the hand-picked values (the random layouts' only with ``with_random``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for board, classic in CLASSIC_VALUES.items():
        data: dict[str, object] = {
            "board": board,
            "players": 2,
            "square_bonus": "none",
            "value": "best square-point margin the first player can force from the empty board",
            "random_draw": DRAW,
            "classic": {"name": f"classic-{board}", "start_value": classic},
        }
        if with_random:
            values = RANDOM_VALUES.get(board, [])
            data["random"] = [{"index": i, "start_value": v} for i, v in enumerate(values)]
        (folder / f"{board}.json").write_text(json.dumps(data, indent=1))


def _random_study(folder: Path, sqlite_url: str) -> Path:
    path = folder / "studies" / "series.toml"
    _write_solved(path.parent / "results" / "solved", with_random=True)
    path.write_text(RANDOM_STUDY)
    done = runner.invoke(app, ["study", "run", str(path), "--db", sqlite_url, "--workers", "1"])
    assert done.exit_code == 0, done.output
    return path


def _report(path: Path, out: Path) -> tuple[str, dict[str, Any]]:
    done = runner.invoke(app, ["study", "report", str(path), "--out", str(out)])
    assert done.exit_code == 0, done.output
    return (out / "series.md").read_text(), json.loads((out / "series.json").read_text())


def _expected(values: list[int]) -> tuple[float, float, float]:
    """The mean and its 95 % t interval, worked out apart from the page's code."""
    mean = statistics.mean(values)
    half = t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def test_the_random_layouts_of_the_solved_boards_follow_the_verdict(
    tmp_path: Path, sqlite_url: str
) -> None:
    path = _random_study(tmp_path, sqlite_url)
    page, data = _report(path, tmp_path / "one")
    # After the first screen (the verdict, its table, its plot and its note), before the rest;
    # the verdict's own table keeps its row per point played.
    assert page.index("## Verdict") < page.index("](series-series.svg)") < page.index(SECTION)
    assert page.index(SECTION) < page.index("## How to reproduce")
    head = page.split("## Verdict", 1)[1].split("\n## ", 1)[0]
    assert len([line for line in head.splitlines() if line.startswith("|")]) == 2 + 3

    section = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in section.splitlines()
            if line.startswith("| ") and " by " in line.split(" | ")[0]}  # fmt: skip
    assert list(rows) == ["2 by 3", "3 by 3"]
    twin = {r["batch"]: r for r in data["series"]["random_layouts"]["rows"]}
    assert list(twin) == ["2x3", "3x3"]
    # Counted by hand: (first player ahead, even, second player ahead).
    counts = {"2x3": (4, 1, 2), "3x3": (7, 0, 1)}
    for board, label in (("2x3", "2 by 3"), ("3x3", "3 by 3")):
        values = RANDOM_VALUES[board]
        mean, low, high = _expected(values)
        first, even, second = counts[board]
        row = twin[board]
        assert row["layouts"] == len(values)
        assert row["mean"] == pytest.approx(mean, abs=1e-5)
        assert row["ci_low"] == pytest.approx(low, abs=1e-5)
        assert row["ci_high"] == pytest.approx(high, abs=1e-5)
        assert (row["first_player_ahead"], row["even"], row["second_player_ahead"]) == counts[board]
        assert row["classic"] == CLASSIC_VALUES[board]
        assert row["source"] == f"studies/results/solved/{board}.json"
        cells = [c.strip() for c in rows[label].strip("| ").split(" | ")]
        assert cells == [
            label,
            str(len(values)),
            f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]",
            f"{min(values):+} to {max(values):+}",
            str(first),
            str(even),
            str(second),
            f"{CLASSIC_VALUES[board]:+}",
        ]
    # 2 × 3's interval holds 0 (about -6.7 to +30.1), 3 × 3's lies above it (about +4.5 to
    # +12.8): worked out here as a check on the hand-picked values.
    assert _expected(RANDOM_VALUES["2x3"])[1] < 0 < _expected(RANDOM_VALUES["3x3"])[1]
    sentence = data["series"]["random_layouts"]["text"]
    assert sentence in section
    assert sentence == (
        "The classic layout's exact value is not typical of its board's random value layouts: "
        "it lies below every random layout's on 2 by 3 and within their range but on the other "
        "side of an even game from most of them on 3 by 3, while the 95 % interval of the mean "
        "margin over random layouts favours the first player on 3 by 3 and holds an even game "
        "on 2 by 3 (read from the `random` lists of `studies/results/solved/2x3.json` and "
        "`studies/results/solved/3x3.json`)."
    )
    assert section.index(sentence) < section.index("| board |")
    assert DRAW in section
    assert [r["classic_place"] for r in twin.values()] == ["below", "opposite"]

    # The same study with no random layouts in any file: no section, and none in the twin.
    _write_solved(path.parent / "results" / "solved", with_random=False)
    page, data = _report(path, tmp_path / "two")
    assert SECTION not in page and "## Verdict" in page
    assert data["series"]["random_layouts"] is None


def test_a_malformed_random_list_is_refused_where_exact_names_the_file(tmp_path: Path) -> None:
    path = _study(tmp_path, HEAD + SERIES)
    solved = path.parent / "results" / "solved" / "3x3.json"
    data = json.loads(solved.read_text())
    data["random"][1] = {"index": 1, "start_value": "12"}
    solved.write_text(json.dumps(data))
    with pytest.raises(StudyError) as caught:
        load_study(path)
    assert caught.value.field == "question[0].exact.3x3"
    assert "random layout 1 has no integer start_value" in caught.value.message


@pytest.mark.parametrize(
    ("values", "expected"),
    [([7], (7.0, None, None)), ([3, 3, 3], (3.0, 3.0, 3.0))],
)
def test_the_mean_interval_of_one_layout_or_of_equal_ones(
    values: list[int], expected: tuple[float, float | None, float | None]
) -> None:
    # One layout gives no interval; equal ones a zero-width one (SciPy alone gives NaN).
    assert mean_interval(values) == expected


def _point(label: str, state: str, games: int) -> Any:
    from analysis.studies.estimates import Estimate, Interval
    from analysis.studies.series import SeriesPoint

    advantage = Estimate(0.01, Interval(-0.02, 0.04))
    return SeriesPoint(label, label, "expert", advantage, games, 0.03, state, None)


def test_a_series_settled_everywhere_says_so_without_naming_every_point() -> None:
    from analysis.studies.series_page import _status

    every = [_point(f"{n} × {n}", "settled", 1_000) for n in range(2, 9)]
    assert _status(every) == "All 7 points settled to ±3.0 pp."
    # One point still playing: the settled ones are named, and the one playing with its games.
    mixed = [*every[:2], _point("8 × 8", "playing", 500)]
    assert _status(mixed) == (
        "Settled to ±3.0 pp: 2 × 2 and 3 × 3; still playing: 8 × 8 (500 games, ±3.0 pp)."
    )
    assert _status(every[:1]) == "Settled to ±3.0 pp: 2 × 2."
