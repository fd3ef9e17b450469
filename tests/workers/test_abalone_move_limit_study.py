"""The Abalone move-limit study plays no limit between 2,000 plies and the standard 400 because
``expert`` is deterministic for a seed: a game with a lower limit is the same game as with a
higher one until the search can see the lower cut. Its committed results must bear that out,
or the study's description (and the limits it leaves out) would be wrong."""

from __future__ import annotations

import pyarrow.parquet as pq
from repo_paths import REPO

from analysis.studies.definition import load_study
from engines.compiled.levels_abalone import EXPERT_DEPTH, EXPERT_QUIESCENCE
from storage.archive.layout import MATCHES

STUDY = REPO / "studies" / "abalone_move_limit.toml"
RESULTS = REPO / "studies" / "results" / "abalone_move_limit"
STANDARD_LIMIT = 400
"""The move limit when a batch sets none (docs/rules/abalone.md, B3)."""
SEEN_AHEAD = EXPERT_DEPTH + EXPERT_QUIESCENCE
"""The furthest ahead ``expert`` searches: the plies before a cut it cannot see."""


def games(batch: str) -> dict[int, tuple[int, list[str]]]:
    table = pq.read_table(RESULTS / batch / MATCHES, columns=["match_index", "seed", "moves"])
    return {row["match_index"]: (row["seed"], list(row["moves"])) for row in table.to_pylist()}


def test_the_study_plays_the_same_seeds_at_each_limit() -> None:
    study = load_study(STUDY)
    limits = {
        batch.name: batch.keys["options"].get("move_limit", STANDARD_LIMIT)
        for batch in study.batches
    }
    assert limits == {"limit-2000": 2000, "limit-400": STANDARD_LIMIT}
    assert len({batch.keys["seed"] for batch in study.batches}) == 1
    assert {batch.keys["agents"] for batch in study.batches} == {"expert"}


def test_a_game_cut_at_400_plies_is_the_2000_ply_game_until_its_search_sees_the_cut() -> None:
    short, long = games("limit-400"), games("limit-2000")
    common = sorted(short.keys() & long.keys())
    assert common, "no match played at both limits"
    parted_early = []
    for index in common:
        (seed, cut), (long_seed, full) = short[index], long[index]
        assert seed == long_seed, index
        shared = min(len(cut), len(full), STANDARD_LIMIT - SEEN_AHEAD)
        if cut[:shared] != full[:shared]:
            parted_early.append(index)
    assert not parted_early
