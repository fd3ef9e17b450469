"""A ladder's own opening length (``Ladder.opening_plies``): its pairings' batches play random
openings of that length, each opening from both seats, while a ladder without one keeps the
game's default variation."""

from __future__ import annotations

import json
import math
from typing import Any

from repo_paths import REPO

from analysis.ladder.ladders import Ladder, ladder_for
from analysis.studies.definition import load_study
from analysis.studies.levels import levels_section
from bench.ladder.play import pairing_batch
from engines.core import play_match
from engines.registry import load_game
from workers.play import build_game, seat_match
from workers.studies.results import committed_ladder


def _openings(ladder: Ladder, plies: int) -> list[tuple[list[str], tuple[str, ...]]]:
    """Each match's seats and first ``plies`` moves, for the first pairing's four matches."""
    a, b = ladder.pairings()[0]
    batch = pairing_batch(ladder, a, b, 4)
    game = build_game(batch)
    played = []
    for index in range(4):
        seated = seat_match(game, batch, index)
        result = play_match(game, seated.players, seated.game_seed, batch.max_plies, seated.labels)
        played.append((seated.labels, tuple(result.moves[:plies])))
    return played


def test_a_ladder_s_opening_length_is_its_batches_and_each_round_swaps_seats() -> None:
    ladder = Ladder("alquerque", 2, ("random", "easy"), "random", 4, opening_plies=3)
    batch = pairing_batch(ladder, "easy", "random", 4)
    assert (batch.variation["kind"], batch.variation["plies"]) == ("openings", 3)
    played = _openings(ladder, 3)
    for first, second in (played[0:2], played[2:4]):
        assert first[0] == list(reversed(second[0]))
        assert first[1] == second[1]


def test_a_ladder_without_one_plays_the_game_s_default_openings() -> None:
    ladder = Ladder("alquerque", 2, ("random", "easy"), "random", 4)
    batch = pairing_batch(ladder, "easy", "random", 4)
    default = load_game("alquerque").game_type.variation.opening_plies
    assert (batch.variation["kind"], batch.variation["plies"]) == ("openings", default)
    assert batch.variation["default"] is True


def test_alquerque_s_ladder_plays_shorter_openings_than_its_studies() -> None:
    ladder = ladder_for("alquerque")
    default = load_game("alquerque").game_type.variation.opening_plies
    assert ladder.opening_plies is not None and ladder.opening_plies < default
    batch = pairing_batch(ladder, *ladder.pairings()[0], ladder.games)
    assert batch.variation["plies"] == ladder.opening_plies


PERFT_4 = 12
"""Move sequences of 4 plies from Alquerque's start (perft at depth 4, docs/rules/alquerque.md)."""


def test_the_committed_alquerque_ladder_and_its_study_page_say_its_openings() -> None:
    rows = [
        json.loads(line)
        for line in (REPO / "studies/results/ladder/alquerque.jsonl").read_text().splitlines()
    ]
    # Played from 4-ply openings: no more distinct openings than 4-ply lines exist (8 plies
    # reach 1,924), and enough rounds that every line was drawn.
    assert len({r["opening"] for r in rows}) == PERFT_4
    study = load_study(REPO / "studies/alquerque.toml")
    levels = committed_ladder(study)
    assert levels is not None
    text = "\n".join(levels_section(study, levels)[0])
    assert "from random openings of 4 plies, each played from both seats" in text
    other = load_study(REPO / "studies/alveoles.toml")
    other_levels = committed_ladder(other)
    assert other_levels is not None
    assert "random openings of" not in "\n".join(levels_section(other, other_levels)[0])


def pairing_scores(
    rows: list[dict[str, Any]], pairing: str
) -> tuple[list[dict[str, Any]], list[float], float, float]:
    """A ladder pairing's games, the first-named level's score in each, its mean and the Elo
    that mean gives."""
    games = [r for r in rows if r["pairing"] == pairing]
    level = pairing.split("-")[0]
    scores = [r["returns"][r["seats"].index(level)] for r in games]
    score = sum(scores) / len(scores)
    return games, scores, score, 400 * math.log10(score / (1 - score))


def test_the_alquerque_rules_doc_quotes_its_strong_levels_committed_pairings() -> None:
    """The figures docs/rules/alquerque.md gives for `expert` against `hard` (and `master`
    against `expert`), recomputed from the committed ladder: the score, its Elo, the endings
    and the pairs the opening decided."""
    rows = [
        json.loads(line)
        for line in (REPO / "studies/results/ladder/alquerque.jsonl").read_text().splitlines()
    ]
    games, scores, score, elo = pairing_scores(rows, "expert-hard")
    drawn = [r for r in games if r["returns"][0] == 0.5]
    by_round: dict[int, list[list[float]]] = {}
    for r in games:
        by_round.setdefault(r["round"], []).append(r["returns"])
    # The same seat won both games of a round, whichever level sat there.
    decided = sum(1 for a, b in by_round.values() if a == b and a[0] != 0.5)
    page = " ".join((REPO / "docs/rules/alquerque.md").read_text().split())
    assert f"There `expert` scores {score:.3f} [" in page
    assert f"over {len(games)} games (+{elo:.0f} Elo from that pairing" in page
    assert f"The opening decides {decided} of the {len(by_round)} pairs" in page
    endings = {e: sum(1 for r in drawn if r["ended_by"] == e) for e in ("no_capture", "repetition")}
    assert (
        f"{len(drawn)} of the {len(games)} games are drawn, {endings['no_capture']} at the "
        f"no-capture limit and {endings['repetition']} by repetition, and `expert` wins "
        f"{scores.count(1.0)} and loses {scores.count(0.0)}"
    ) in page
    # And `master` against `expert`.
    games, scores, score, elo = pairing_scores(rows, "master-expert")
    assert f"`master` scores {score:.3f} [" in page
    assert f"over {len(games)} games (+{elo:.0f} Elo from that pairing" in page
    assert (
        f"it wins {scores.count(1.0)}, draws {scores.count(0.5)} and loses {scores.count(0.0)}"
    ) in page
