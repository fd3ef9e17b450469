"""``storage.queries.starter_matches``: each successful match's round keys and its starting
player's result, on both dialects, as the stored rows written here say they are."""

from __future__ import annotations

from analysis_data import store_batch

from storage.models import MATCH
from storage.queries import StarterMatches, starter_matches


def test_keys_and_the_starter_s_result_per_match(db_url: str) -> None:
    # Seat 0 takes 1, 0, ½, 1, 0, 1 of matches 0–5 (6 failed, stored apart); move lists
    # A, B, A, none, B, C; openings 7 on even matches; match 4 started with seat 1.
    shares = [1.0, 0.0, 0.5, 1.0, 0.0, 1.0]
    outcomes = [((w, 1 - w), (w, 1 - w)) for w in shares]
    lists = [("a", "x"), ("b",), ("a", "x"), (), ("b",), ("c", "x")]
    engine, batch_id = store_batch(
        db_url, game="alquerque", players=2, labels=["p", "q"], outcomes=outcomes,
        moves=lambda i: lists[i], openings=lambda i: 7 if i % 2 == 0 else None, failed=[6],
    )  # fmt: skip
    _, other = store_batch(
        db_url, game="alquerque", players=2, labels=["p", "q"], outcomes=outcomes[:2]
    )
    with engine.begin() as conn:
        conn.execute(
            MATCH.update()
            .where(MATCH.c.batch_id == batch_id, MATCH.c.match_index == 4)
            .values(first_seat=1)
        )
    got = starter_matches(engine, [batch_id, other])
    mine = got[batch_id]
    assert isinstance(mine, StarterMatches)
    assert mine.match_index == [0, 1, 2, 3, 4, 5]
    assert mine.opening == [7, None, 7, None, 7, None]
    # Equal move lists share a key and unequal ones differ; no moves recorded: no key.
    g = mine.game
    assert g[3] is None and g[0] == g[2] and g[1] == g[4]
    assert len({g[0], g[1], g[5]}) == 3
    # Seat 1 started match 4 and took 1 − 0 there.
    assert mine.win_share == [1.0, 0.0, 0.5, 1.0, 1.0, 1.0]
    assert got[other].match_index == [0, 1] and got[other].game == [None, None]
    assert starter_matches(engine, []) == {}
