"""What the committed study pages say beside their figures, recomputed here from the committed
Parquet results with pandas alone: the order of play by turn position where the game draws who
starts, draws by ending with the decided games apart, each figure's diversity, the fair
compensation where the advantage is not zero, and the verdict the page opens with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from repo_paths import REPO

from analysis.studies.found import BEGIN, END, readme_text, update_readme
from engines.registry import game_class

PAGES = REPO / "docs" / "studies"
RESULTS = REPO / "studies" / "results"
MINE = ("abalone", "alhambra", "alquerque", "alveoles", "alveoles_strategies")
"""The pages of this issue's studies (the fair-layout page has a section of its own)."""
THRESHOLD = 100  # docs/statistics.md: "How diverse a figure's games must be"
TRUNCATIONS = {"move_limit", "max_plies"}


def _twin(name: str) -> dict[str, Any]:
    return json.loads((PAGES / f"{name}.json").read_text())


def _played(study: str, batch: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = RESULTS / study / batch
    matches = pd.read_parquet(folder / "matches.parquet")
    seats = pd.read_parquet(folder / "seats.parquet")
    return matches[matches["ok"]], seats


def _by_turn(matches: pd.DataFrame, seats: pd.DataFrame) -> pd.DataFrame:
    """One row per match and seat with its turn position: (seat − first seat) mod n."""
    n = seats["seat"].max() + 1
    rows = seats.merge(matches[["match_index", "first_seat", "ended_by"]], on="match_index")
    rows["position"] = (rows["seat"] - rows["first_seat"]) % n
    return rows


def _questions(figure: str) -> list[pytest.param]:
    out = []
    for name in MINE:
        if not (PAGES / f"{name}.json").is_file():
            continue
        for q in _twin(name)["questions"]:
            if q["figure"] == figure:
                out.append(pytest.param(name, q, id=f"{name}-{q['number']}"))
    return out


@pytest.mark.parametrize(("study", "question"), _questions("seats"))
def test_a_seats_figure_reads_turn_positions_where_the_game_draws_who_starts(
    study: str, question: dict[str, Any]
) -> None:
    matches, seats = _played(study, question["batch"])
    if question["against"] or matches["first_seat"].nunique() == 1:
        assert "positions" not in question["result"]
        return
    rows = _by_turn(matches, seats)
    shares = rows.groupby("position")["win_share"].mean()
    positions = question["result"]["positions"]
    assert [r["position"] for r in positions] == list(shares.index)
    for row in positions:
        assert row["win_share"] == pytest.approx(shares[row["position"]], abs=1e-6)
    section = (PAGES / f"{study}.md").read_text().split(f"### {question['number']}. ")[1]
    section = section.split("\n### ")[0]
    assert "| turn position | games |" in section and "| seat | games |" in section


@pytest.mark.parametrize(("study", "question"), _questions("first_player_advantage"))
def test_a_first_player_figure_with_draws_gives_the_decided_games_and_draws_by_ending(
    study: str, question: dict[str, Any]
) -> None:
    for batch in [question["batch"]] + ([question["against"]] if question["against"] else []):
        matches, seats = _played(study, batch)
        rows = _by_turn(matches, seats)
        best = rows.groupby("match_index")["win_share"].max()
        drawn = best[best < 1].index
        decided = question["result"].get("decided", {})
        if len(drawn) == 0:
            assert batch not in decided
            continue
        d = decided[batch]
        endings = matches[matches["match_index"].isin(drawn)]["ended_by"].value_counts()
        assert d["decided"] == len(matches) - len(drawn)
        assert d["draws_by_ending"] == {str(k): int(v) for k, v in endings.items()}
        first = rows[(rows["position"] == 0) & ~rows["match_index"].isin(drawn)]
        assert d["first_player"]["wins"] == pytest.approx(first["win_share"].sum())
        n = seats["seat"].max() + 1
        share = first["win_share"].sum() / d["decided"]
        assert d["first_player"]["estimate"] == pytest.approx(share - 1 / n, abs=1e-6)
        truncated = sum(int(v) for k, v in endings.items() if k in TRUNCATIONS)
        assert d["mostly_truncated"] == (truncated * 2 > len(drawn))
        assert d["largely_truncated"] == (truncated * 2 > len(matches))
        page = (PAGES / f"{study}.md").read_text()
        line = f"Decided games in **{batch}**: {d['decided']:,} of {len(matches):,}"
        assert line in page
        said = next(row for row in page.splitlines() if row.startswith(line))
        # A few cut games out of many do not make the figure about unfinished games.
        assert ("largely about games nobody won" in said) == (truncated * 2 > len(matches))


def test_abalones_standard_draws_are_all_truncations_and_the_verdict_says_so() -> None:
    q = next(q for q in _twin("abalone")["questions"] if q["batch"] == "standard")
    d = q["result"]["decided"]["standard"]
    assert d["draws_by_ending"] == {"move_limit": 222} and d["decided"] == 178
    assert d["first_player"]["wins"] == 114
    # The verdict opens on the strongest level's standard batch: its draws and decided games
    # counted here from the stored matches.
    matches, seats = _played("abalone", "master")
    rows = _by_turn(matches, seats)
    best = rows.groupby("match_index")["win_share"].max()
    drawn = matches[matches["match_index"].isin(best[best < 1].index)]
    decided = best[best == 1].index
    wins = int(rows[(rows["position"] == 0) & rows["match_index"].isin(decided)]["win_share"].sum())
    verdict = " ".join(v["text"] for v in _twin("abalone")["verdict"])
    assert verdict.startswith("At `master` (Elo ")
    if len(drawn):
        assert set(drawn["ended_by"]) == {"move_limit"}
        assert f"All of its draws ({len(drawn)} of {len(drawn)}) are games cut" in verdict
    assert (
        f"among the {len(decided)} decided games the first player wins {wins} "
        f"({100 * wins / len(decided):.1f} %)"
    ) in verdict


def test_the_move_limit_series_counts_the_games_each_limit_cut_from_the_stored_matches() -> None:
    said, shares = [], []
    for batch, label in (("limit-400", "a 400-ply limit"), ("limit-2000", "a 2,000-ply limit")):
        matches, seats = _played("abalone_move_limit", batch)
        cut = int((matches["ended_by"] == "move_limit").sum())
        said.append(f"{cut:,} of {len(matches):,} on {label}")
        rows = _by_turn(matches, seats)
        best = rows.groupby("match_index")["win_share"].max()
        decided = best[best == 1].index
        first = rows[(rows["position"] == 0) & rows["match_index"].isin(decided)]
        shares.append(f"{100 * first['win_share'].sum() / len(decided):.1f} %")
    verdict = " ".join(v["text"] for v in _twin("abalone_move_limit")["verdict"])
    assert (
        f"Games cut unfinished at the move limit: {said[0]} and {said[1]}; among decided games "
        f"the first player wins {shares[0]} and {shares[1]}."
    ) in verdict
    # Neither limit's batch reached the study's ±3 points, and no clause before names it.
    assert "Stopped wider than ±3.0 pp: a 400-ply limit (400 games" in verdict
    page = (PAGES / "abalone_move_limit.md").read_text()
    # Nothing here is solved: the table has no column for perfect play.
    assert "under perfect play" not in page
    # Cut games are most of the 400-ply batch and a few of the 2,000-ply one: only the first's
    # figure is said to be largely about games nobody won.
    for batch, largely in (("limit-400", True), ("limit-2000", False)):
        line = next(r for r in page.splitlines() if r.startswith(f"Decided games in **{batch}**"))
        assert ("largely about games nobody won" in line) == largely, line


def _all_questions() -> list[pytest.param]:
    return [
        pytest.param(name, q, id=f"{name}-{q['number']}")
        for name in MINE
        if (PAGES / f"{name}.json").is_file()
        for q in _twin(name)["questions"]
    ]


@pytest.mark.parametrize(("study", "question"), _all_questions())
def test_every_figure_gives_its_diversity_and_none_rests_on_too_few_openings(
    study: str, question: dict[str, Any]
) -> None:
    diversity = question["result"]["diversity"]
    for batch in [question["batch"]] + ([question["against"]] if question["against"] else []):
        matches, _ = _played(study, batch)
        d = diversity[batch]
        assert d["distinct_openings"] == matches["opening"].nunique()
        assert d["distinct_games"] == matches["moves"].map(tuple).nunique()
        assert d["distinct_openings"] >= THRESHOLD, f"{study}/{batch}: {d}"
        assert d["warning"] is None


@pytest.mark.parametrize(("study", "question"), _questions("first_player_advantage"))
def test_a_first_player_figure_that_is_not_zero_gives_its_compensation(
    study: str, question: dict[str, Any]
) -> None:
    if question["against"]:
        return
    result = question["result"]
    if result["ci_low"] <= 0 <= result["ci_high"]:
        assert "compensation" not in result
        return
    komi = result["compensation"]
    game = _twin(study)["batches"][question["batch"]]["keys"]["game"]
    scores_points = game_class(game).game_type.points
    assert bool(komi["offsets"]) == scores_points
    section = (PAGES / f"{study}.md").read_text().split(f"### {question['number']}. ")[1]
    assert ("Fair compensation (komi)" if scores_points else "no compensation") in section


@pytest.mark.parametrize("study", [n for n in MINE if (PAGES / f"{n}.json").is_file()])
def test_each_page_opens_with_its_verdict_table_and_strength_plot(study: str) -> None:
    page = (PAGES / f"{study}.md").read_text()
    twin = _twin(study)
    if "verdict" not in twin:
        assert not any(q["figure"] == "first_player_advantage" for q in twin["questions"])
        return
    head = page.split("## How to reproduce")[0]
    assert "## Verdict" in head and "| first player's edge [95 %] |" in head
    sentences = twin["verdict"]
    assert 1 <= len(sentences) <= 5
    for s in sentences:
        assert s["page"] == f"docs/studies/{study}.md" and s["text"] in head
    rows = twin["strength"]["rows"]
    for row in rows:
        # The starting player's win share minus 1/n, from the stored games.
        matches, seats = _played(study, row["batch"])
        played = _by_turn(matches, seats)
        n = seats["seat"].max() + 1
        share = played[played["position"] == 0]["win_share"].mean()
        assert row["estimate"] == pytest.approx(share - 1 / n, abs=1e-6)
    if any(r["elo"] is not None for r in rows):
        assert f"({study}-strength.svg)" in head and (PAGES / f"{study}-strength.svg").is_file()
    for judged in twin["strength"]["settled"]:
        low, high = judged["ci_low"], judged["ci_high"]
        inside = low >= -0.02 and high <= 0.02
        assert judged["settled"] == inside
        if inside:
            words = "settled with strength"
        elif low <= 0 <= high:
            words = "not yet shown settled"
        else:
            words = "still moving with strength"
        assert words in judged["words"] and judged["words"] in head


def test_the_square_values_are_percentage_points_and_the_head_to_head_is_named() -> None:
    page = (PAGES / "alveoles_strategies.md").read_text()
    assert "+56.1 pp" in page and "+56.1 %" not in page
    assert "the two leaders" not in page
    twin = _twin("alveoles_strategies")
    pair = next(q for q in twin["questions"] if q["batch"] == "value-vs-bonus")
    assert "value" in pair["title"].lower() and "bonus" in pair["title"].lower()


def test_the_what_we_found_block_is_the_twins_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "studies"
    folder.mkdir()
    verdict = [{"text": "First +6.2 % [+3.0 %, +9.5 %].", "page": "docs/studies/b.md"}]
    (folder / "b.json").write_text(json.dumps({"title": "B", "verdict": verdict}))
    (folder / "a.json").write_text(json.dumps({"title": "A"}))  # no verdict: not listed
    # A page whose only verdict is a figure's own is listed by that verdict's first sentence.
    own = [{"text": "On 3 solved boards, 64.8 % [64.0 %, 65.5 %].", "page": "docs/studies/c.md"},
           {"text": "On 2 × 3 squares, more.", "page": "docs/studies/c.md"}]  # fmt: skip
    (folder / "c.json").write_text(json.dumps({"title": "C", "figure_verdicts": own}))
    readme = tmp_path / "README.md"
    readme.write_text(f"# X\n\n{BEGIN}\n- kept by hand\n{END}\n\n## More\n")
    update_readme(readme, folder)
    expected = (
        f"# X\n\n{BEGIN}\n- [**B**](docs/studies/b.md): {verdict[0]['text']}\n"
        f"- [**C**](docs/studies/c.md): {own[0]['text']}\n{END}"
    )
    assert readme.read_text() == expected + "\n\n## More\n"
    before = readme.read_text()
    update_readme(readme, folder)
    assert readme.read_text() == before


def test_the_readmes_what_we_found_block_regenerates_identically_from_the_twins() -> None:
    readme = (REPO / "README.md").read_text()
    assert BEGIN in readme and END in readme
    assert readme_text(readme, PAGES) == readme, "README's What we found is not the twins'"
