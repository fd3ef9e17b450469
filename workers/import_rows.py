"""An imported archive's rows checked against the batch this server planned from it, every row,
and its matches replayed: what ``workers.imports`` runs before anything is stored.

Every check raises ``ArchiveError`` naming the archive's member and the field (``seats.parquet``,
``win_share``) and the first match at fault.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from itertools import groupby

from engines.core import Ending, Game
from engines.seating import seat_agents
from storage.archive import Archive, ArchiveError
from storage.archive.layout import CHUNKS, MATCHES, SEATS
from storage.archive.manifest import EARLIEST, load_json
from storage.models import BatchBase
from storage.records import join_moves
from workers.native_games import is_native
from workers.play import build_game, play_one, stored_seed
from workers.verify import compare_match

PLAYED_ENDINGS = frozenset(
    {
        Ending.NORMAL,
        Ending.REPETITION,
        Ending.NO_CAPTURE,
        Ending.NO_MOVE,
        Ending.MOVE_LIMIT,
        Ending.MAX_PLIES,
        Ending.TIME,
    }
)
FAILED_ENDINGS = frozenset({Ending.ERROR, Ending.TIME_LIMIT, Ending.ABANDONED})
MAX_POINTS = 1e6
"""Largest game points a seat may have (the largest any game scores is a few hundred)."""
SHARE_TOLERANCE = 1e-9

REPLAY_CONFIDENCE = 0.999
FORGED_SHARE = 0.5
AGENT_REPLAYS = 10
"""Matches replayed with the agents from their seeds, drawn unpredictably (the system's
random source) from the played ones. A forgery that changed a share ``f`` of the played
matches escapes a sample of ``n`` drawn without replacement with probability at most
``(1 - f) ** n``: for a wholesale forgery, every match (``f`` = 1), one replay catches it
surely; for one of at least half of them (``FORGED_SHARE``), ten give ``0.5 ** 10`` = 1/1024,
under 1 - ``REPLAY_CONFIDENCE`` = 0.001. With moves stored, every match is replayed through
the rules besides (:func:`replay_moves`), which catches any result that its moves do not give,
in every match."""


def _refuse(member: str, field: str, message: str) -> ArchiveError:
    return ArchiveError(f"{member}: {message}", member=member, field=field)


def _finite(value: float) -> bool:
    return math.isfinite(value)


def check_rows(batch: BatchBase, archive: Archive) -> None:
    """Every chunk, match and seat row of ``archive`` is one this server could have stored for
    ``batch`` (its planned definition); ``ArchiveError`` for the first that is not."""
    _check_chunks(archive)
    _check_matches(batch, archive)
    _check_seats(batch, archive)


def _check_chunks(archive: Archive) -> None:
    chunks = archive.chunks
    oks = dict(zip(archive.matches["match_index"], archive.matches["ok"], strict=True))
    latest = datetime.now(UTC) + timedelta(days=1)
    for i, (start, stop, done, failed) in enumerate(
        zip(chunks["start"], chunks["stop"], chunks["done"], chunks["failed"], strict=True)
    ):
        where = f"chunk [{start}, {stop})"
        if done < 0 or failed < 0 or done + failed != stop - start:
            raise _refuse(CHUNKS, "done", f"{where} counts {done} done and {failed} failed")
        held = [oks.get(index) for index in range(start, stop)]
        if held.count(True) != done or held.count(False) != failed:
            raise _refuse(
                CHUNKS,
                "done",
                f"{where} says {done} done and {failed} failed; its matches hold "
                f"{held.count(True)} played and {held.count(False)} failed",
            )
        if not _finite(chunks["duration"][i]) or chunks["duration"][i] < 0:
            raise _refuse(CHUNKS, "duration", f"{where} has a duration that is no duration")
        if not EARLIEST <= chunks["finished_at"][i] <= latest:
            raise _refuse(CHUNKS, "finished_at", f"{where} finished at an impossible time")
        counts = [chunks[f"stop_{k}"][i] for k in range(5)]
        if any(c is not None and not 0 <= c <= stop - start for c in counts):
            raise _refuse(CHUNKS, "stop_0", f"{where} has stop-rule counts out of range")


def _check_matches(batch: BatchBase, archive: Archive) -> None:
    m = archive.matches
    clocked = batch.time_control is not None
    for i, index in enumerate(m["match_index"]):
        where = f"match {index}"
        if m["seed"][i] != stored_seed(batch, index):
            raise _refuse(MATCHES, "seed", f"{where}'s seed is not the batch's for that match")
        plies, moves, ended = m["plies"][i], m["moves"][i], m["ended_by"][i]
        if not 0 <= plies <= batch.max_plies:
            raise _refuse(
                MATCHES, "plies", f"{where} has {plies} plies; the batch allows 0 to "
                f"{batch.max_plies}"
            )  # fmt: skip
        if not _finite(m["duration"][i]) or m["duration"][i] < 0:
            raise _refuse(MATCHES, "duration", f"{where} has a duration that is no duration")
        if m["ok"][i]:
            if ended not in PLAYED_ENDINGS or (ended == Ending.TIME and not clocked):
                raise _refuse(MATCHES, "ended_by", f"{where} ended by {ended[:32]!r}")
            if ended == Ending.MAX_PLIES and plies != batch.max_plies:
                raise _refuse(MATCHES, "plies", f"{where} was cut at {plies}, not the cap")
            if (moves or archive.moves) and len(moves) != plies:
                raise _refuse(
                    MATCHES, "moves", f"{where} stores {len(moves)} moves for {plies} plies"
                )
            first = m["first_seat"][i]
            if first is not None and not 0 <= first < batch.players:
                raise _refuse(MATCHES, "first_seat", f"{where} has first seat {first}")
        else:
            if ended not in FAILED_ENDINGS or plies or moves or m["first_seat"][i] is not None:
                raise _refuse(MATCHES, "ok", f"{where} is failed but holds a played match's data")
        try:
            stats = load_json(m["stats"][i], max_nesting=8)
        except ValueError as exc:
            raise _refuse(MATCHES, "stats", f"{where}'s stats: {exc}") from None
        if not isinstance(stats, dict):
            raise _refuse(MATCHES, "stats", f"{where}'s stats are not an object")


def _seat_groups(archive: Archive) -> Iterator[tuple[int, list[int]]]:
    """(match index, its seat rows' positions), in order."""
    indices = archive.seats["match_index"]
    for index, rows in groupby(range(len(indices)), key=indices.__getitem__):
        yield index, list(rows)


def _check_seats(batch: BatchBase, archive: Archive) -> None:
    s = archive.seats
    ok = dict(zip(archive.matches["match_index"], archive.matches["ok"], strict=True))
    seated = set()
    players = batch.players
    for index, rows in _seat_groups(archive):
        where = f"match {index}"
        if index in seated:
            raise _refuse(SEATS, "match_index", f"{where}'s seat rows are not together")
        seated.add(index)
        if not ok.get(index):
            raise _refuse(SEATS, "match_index", f"{where} failed, yet has seat rows")
        if [s["seat"][r] for r in rows] != list(range(players)):
            raise _refuse(
                SEATS, "seat", f"{where} must seat 0 to {players - 1} once each, in order"
            )
        order = seat_agents(len(batch.agents), batch.seat_policy, index)
        shares = 0.0
        for r in rows:
            seat, agent = s["seat"][r], s["agent_index"][r]
            if agent != order[seat] or s["agent"][r] != batch.labels[agent]:
                raise _refuse(
                    SEATS,
                    "agent_index",
                    f"{where} seat {seat}: not the agent the seat policy seats",
                )
            points, share = s["points"][r], s["win_share"][r]
            if not _finite(points) or abs(points) > MAX_POINTS:
                raise _refuse(SEATS, "points", f"{where} seat {seat}: points {points!r}")
            if not _finite(share) or not 0.0 <= share <= 1.0:
                raise _refuse(SEATS, "win_share", f"{where} seat {seat}: win share {share!r}")
            if not 1 <= s["rank"][r] <= players:
                raise _refuse(SEATS, "rank", f"{where} seat {seat}: rank {s['rank'][r]}")
            shares += share
            _check_move_ms(batch, where, seat, s["move_ms"][r])
        if abs(shares - 1.0) > SHARE_TOLERANCE:
            raise _refuse(SEATS, "win_share", f"{where}'s win shares sum to {shares!r}, not 1")
    missing = [i for i, played in ok.items() if played and i not in seated]
    if missing:
        raise _refuse(SEATS, "seat", f"match {missing[0]} was played but has no seat rows")


def _check_move_ms(batch: BatchBase, where: str, seat: int, text: str | None) -> None:
    if text is None:
        return
    if batch.time_control is None:
        raise _refuse(SEATS, "move_ms", f"{where} seat {seat}: move times without clocks")
    try:
        times = load_json(text, max_nesting=1)
    except ValueError as exc:
        raise _refuse(SEATS, "move_ms", f"{where} seat {seat}: {exc}") from None
    if not isinstance(times, list) or not all(
        isinstance(t, int | float) and not isinstance(t, bool) and t >= 0 for t in times
    ):
        raise _refuse(SEATS, "move_ms", f"{where} seat {seat}: not a list of move times")


def replay_moves(batch: BatchBase, archive: Archive) -> int:
    """Replay every played match's stored moves through the rules from its seed, and check
    its ending, result, points and stats against the rows; the matches replayed. A game with
    native code (OpenSpiel) is not replayed here, in the API's process, where a crash would
    take the server down: none."""
    if not archive.moves or is_native(batch.game):
        return 0
    game = build_game(batch)
    m = archive.matches
    seats = dict(_seat_groups(archive))
    replayed = 0
    for i, index in enumerate(m["match_index"]):
        if not m["ok"][i]:
            continue
        _replay_one(game, batch, archive, i, seats[index])
        replayed += 1
    return replayed


def _replay_one(game: Game, batch: BatchBase, archive: Archive, i: int, rows: list[int]) -> None:
    m, s = archive.matches, archive.seats
    index = m["match_index"][i]
    where = f"match {index}"
    state = game.new_initial_state(m["seed"][i])
    first = max(state.current_player(), 0)
    for ply, text in enumerate(m["moves"][i], start=1):
        if state.is_terminal():
            raise _refuse(MATCHES, "moves", f"{where}: ply {ply} comes after the game ended")
        try:
            state.apply_string(text)
        except (ValueError, KeyError, IndexError) as exc:
            raise _refuse(MATCHES, "moves", f"{where}: ply {ply} {text[:40]!r}: {exc}") from None
    ended = m["ended_by"][i]
    n = game.num_players
    if state.is_terminal():
        expected_end, returns = str(state.ended_by()), list(state.returns())
    elif ended == Ending.TIME:
        lost = [r for r in rows if s["win_share"][r] == 0.0]
        loser = s["seat"][lost[0]] if len(lost) == 1 else -1
        expected_end = Ending.TIME
        returns = [0.0 if seat == loser else 1.0 / (n - 1) for seat in range(n)]
    else:
        expected_end, returns = Ending.MAX_PLIES, [1.0 / n] * n
    if ended != expected_end:
        raise _refuse(MATCHES, "ended_by", f"{where}: its moves end by {expected_end}, not {ended}")
    if m["first_seat"][i] is not None and m["first_seat"][i] != first:
        raise _refuse(MATCHES, "first_seat", f"{where}: seat {first} moves first, not that one")
    scores = state.scores()
    for seat, r in enumerate(rows):
        if abs(s["win_share"][r] - returns[seat]) > SHARE_TOLERANCE:
            raise _refuse(
                SEATS, "win_share", f"{where} seat {seat}: its moves give {returns[seat]!r}"
            )
        if abs(s["points"][r] - float(scores[seat])) > SHARE_TOLERANCE:
            raise _refuse(SEATS, "points", f"{where} seat {seat}: its moves give {scores[seat]!r}")
    if json.loads(m["stats"][i]) != json.loads(json.dumps(state.stats())):
        raise _refuse(MATCHES, "stats", f"{where}: its moves give other stats")


def replay_sample(batch: BatchBase, archive: Archive, *, size: int = AGENT_REPLAYS) -> int:
    """Replay ``size`` played matches drawn unpredictably with the agents from their seeds, as
    ``playtester verify`` does, and refuse on any difference; the matches replayed (none for
    a batch with clocks, whose matches do not replay from seeds, nor for a game with native
    code, as :func:`replay_moves`)."""
    if batch.time_control is not None or is_native(batch.game):
        return 0
    m = archive.matches
    played = [i for i, ok in enumerate(m["ok"]) if ok]
    chosen = sorted(random.SystemRandom().sample(played, min(size, len(played))))
    if not chosen:
        return 0
    seats = dict(_seat_groups(archive))
    game = build_game(batch)
    for i in chosen:
        index = m["match_index"][i]
        row = {name: m[name][i] for name in m}
        row["moves"] = join_moves(row["moves"])
        row["stats"] = json.loads(row["stats"])
        seat_rows = [{name: archive.seats[name][r] for name in archive.seats} for r in seats[index]]
        found, _ = compare_match(row, seat_rows, play_one(game, batch, index))
        if found:
            what = found[0].what
            raise _refuse(
                SEATS if what.startswith("seat ") else MATCHES,
                what.split()[-1],
                f"match {index} does not replay as stored: {found[0].describe()[:300]}",
            )
    return len(chosen)


def played(archive: Archive) -> Sequence[int]:
    """The indices of the archive's played matches."""
    m = archive.matches
    return [index for index, ok in zip(m["match_index"], m["ok"], strict=True) if ok]
