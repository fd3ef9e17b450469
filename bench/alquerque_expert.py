"""A candidate for Alquerque's ``expert``: the compiled alpha-beta on a tuned evaluation.

    .venv/bin/python -m bench.alquerque_expert fit --games 300 --workers 2
    .venv/bin/python -m bench.alquerque_expert match --matches 200 --seed 46 --workers 2 \\
        --weights tuned
    .venv/bin/python -m bench.alquerque_expert match --matches 100 --seed 46 --weights tuned \
        --spare 0.3 --opening-plies 4 --log /tmp/spare.jsonl
    .venv/bin/python -m bench.alquerque_expert compare /tmp/spare.jsonl /tmp/expert.jsonl

``fit`` tunes the weights of ``engines.alquerque.evaluation`` on data ("Texel tuning"):
self-play games of the compiled alpha-beta on the weights ``--player`` names (the default
evaluation unless told; ``--nodes`` a move, the search rules of ``expert``) from random
openings of ``--opening`` plies, their seeds ``FIT_SEED`` + i kept apart from any match seed;
at every position of those games where the side to move has no capture (the positions the
search evaluates) the features and the game's result for the side to move; then a logistic
regression of the result on the features (a win 1, a draw 1/2, a loss 0: the mean
cross-entropy, with a small ridge), by SciPy's L-BFGS. The weights, their data and the fit's
log-loss go to ``--out`` (JSON). ``--positions`` keeps the games' positions in a file, to fit
them again without playing (``--decisive``: on the decided games only).

``match`` plays the candidate (``expert``'s search, ``--nodes`` a move, on those weights)
against ``hard`` over the service's seating for an ``expert``/``hard`` batch of ``--seed``:
each random opening twice, seats swapped, so the pair of games is the unit of sampling. It
prints the candidate's score with its 95 % interval over pairs, its Elo, the endings, and the
CPU seconds of its own moves per game; each match's line goes to ``--log`` as it ends.
``--opening-plies`` plays the ladder's random openings of that length instead of the game's
default; ``--spare`` sets the weight of the spare-moves term on the weights given.
``--endgame`` lets the candidate read the solved endings (``engines.alquerque.endgame``), as
``expert`` does. ``compare`` reads two such logs of one seed and gives each one's summary and
the first's score less the second's, pair by pair over the openings both played.

The compiled search hands the weights to ``engines.alquerque.kernel_weighted.evaluate_weighted``
through ``engines.compiled.dispatch_alphabeta.evaluate_weighted`` (no weights: the default
evaluation, ``expert``'s).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

FIT_SEED = 9_100_000
"""Self-play seeds of the fit start here: far from the match seeds given on the command line."""
DEFAULT_WEIGHTS = Path("/tmp/alquerque_expert_weights.json")
EXPERT_QUIESCENCE = 8
RIDGE = 1e-3


def searcher(
    game: Any,
    rng: random.Random,
    nodes: int,
    weights: tuple[float, ...],
    contempt: float = 0.0,
    endgame: bool = False,
) -> Any:
    """``expert``'s search (compiled alpha-beta, captures compulsory, forced replies free); a
    draw is worth ``-contempt`` to it; with ``endgame``, it reads the solved endings."""
    from engines.alquerque.endgame import table_loader
    from engines.compiled.agent_alphabeta import CompiledAlphaBetaAgent

    return CompiledAlphaBetaAgent(
        game,
        rng,
        depth=16,
        nodes=nodes,
        quiescence=EXPERT_QUIESCENCE,
        weights=weights,
        contempt=contempt,
        extend_single=True,
        compulsory=True,
        endgame=table_loader(game) if endgame else None,
    )


# --------------------------------------------------------------------------- fit


def self_play(
    index: int, nodes: int, opening: int, weights: tuple[float, ...] = ()
) -> list[tuple[list[float], float]]:
    """One self-play game's quiet positions: (features for the side to move, its result), the
    search on ``weights`` (none: the default evaluation)."""
    from engines.alquerque.evaluation import features
    from engines.registry import load_game

    seed = FIT_SEED + index
    rng = random.Random(seed)
    game = load_game("alquerque")
    state = game.new_initial_state()
    for _ in range(opening):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    player = searcher(game, rng, nodes, weights)
    seen: list[tuple[list[float], int]] = []
    while not state.is_terminal():
        if not state.has_capture:
            seen.append((features(state, state.to_move), state.to_move))
        state.apply(player.step(state))
    result = state.returns()
    return [(f, float(result[seat])) for f, seat in seen]


def _self_play_job(
    args: tuple[int, int, int, tuple[float, ...]],
) -> list[tuple[list[float], float]]:
    return self_play(*args)


def fit_weights(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, float]:
    """Weights minimising the mean cross-entropy of ``sigmoid(x · w)`` against ``y`` in [0, 1]
    plus ``ridge`` times the squared weights, and that mean cross-entropy."""
    from scipy.optimize import minimize

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        # log(1 + e^z) - y z, written to stay finite for large |z|.
        value = np.logaddexp(0.0, z) - y * z
        p = 0.5 * (1.0 + np.tanh(z / 2.0))
        grad = x.T @ (p - y) / len(y) + 2 * ridge * w
        return float(value.mean() + ridge * w @ w), grad

    result = minimize(
        loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10}
    )
    w = result.x
    z = x @ w
    return w, float((np.logaddexp(0.0, z) - y * z).mean())


def run_fit(args: argparse.Namespace) -> None:
    from engines.alquerque.evaluation import FEATURE_NAMES

    started = time.process_time()
    player = chosen_weights(args.player, None)
    if args.positions is not None and args.positions.exists():
        games = json.loads(args.positions.read_text())
    else:
        jobs = [(i, args.nodes, args.opening, player) for i in range(args.games)]
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            games = pool.map(_self_play_job, jobs, chunksize=4)
        if args.positions is not None:
            args.positions.write_text(json.dumps(games))
    if args.decisive:
        # A drawn game's positions say nothing of which features win.
        games = [played for played in games if played and played[0][1] != 0.5]
    rows = [row for played in games for row in played]
    x = np.array([f for f, _ in rows], dtype=np.float64)
    y = np.array([r for _, r in rows], dtype=np.float64)
    weights, log_loss = fit_weights(x, y)
    baseline = float(-(y * math.log(0.5) + (1 - y) * math.log(0.5)).mean())
    report = {
        "features": list(FEATURE_NAMES),
        "weights": [round(float(w), 6) for w in weights],
        "games": args.games,
        "positions": len(rows),
        "games_fitted": len(games),
        "decisive_only": args.decisive,
        "player_weights": list(player),
        "nodes": args.nodes,
        "opening_plies": args.opening,
        "seeds": [FIT_SEED, FIT_SEED + args.games - 1],
        "results": dict(Counter(str(r) for r in y.tolist())),
        "log_loss": round(log_loss, 5),
        "log_loss_even": round(baseline, 5),
        "cpu_s_parent": round(time.process_time() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for name, w in zip(FEATURE_NAMES, report["weights"], strict=True):
        print(f"{name:>14} {w:+.4f}")
    print(
        f"{len(rows)} positions of {args.games} games; "
        f"log-loss {log_loss:.4f} (even {baseline:.4f})"
    )


# --------------------------------------------------------------------------- match


def _match_job(
    args: tuple[int, int, int, tuple[float, ...], int, float, int | None, bool],
) -> dict[str, Any]:
    return play_one(*args)


def play_one(
    index: int,
    matches: int,
    seed: int,
    weights: tuple[float, ...],
    nodes: int,
    contempt: float = 0.0,
    opening_plies: int | None = None,
    endgame: bool = False,
) -> dict[str, Any]:
    """Match ``index`` of the ``expert``/``hard`` batch of ``seed``, seated and opened as the
    service does, with the candidate in ``expert``'s seat; CPU seconds per seat. With
    ``opening_plies``, random openings of that many plies (the ladder's design) instead of the
    game's default length."""
    from bench.ladder.play import CpuTimed
    from engines.core import LoadingAgent, agent_rng, match_seed, play_match
    from storage.settings import get_settings
    from workers.batches import plan_batch
    from workers.play import build_game, seat_match

    batch = plan_batch(
        game="alquerque",
        agents=["expert", "hard"],
        matches=matches,
        seed=seed,
        seat_policy=None,
        chunk_size=None,
        max_plies=None,
        variation=None if opening_plies is None else {"kind": "openings", "plies": opening_plies},
        settings=get_settings(),
    )
    game = build_game(batch)
    seated = seat_match(game, batch, index)
    seat = seated.order.index(0)
    candidate = searcher(
        game, agent_rng(match_seed(batch.seed, index), seat), nodes, weights, contempt, endgame
    )
    player = seated.players[seat]
    if hasattr(player, "inner"):
        player.inner = candidate
    else:
        seated.players[seat] = candidate
    for p in seated.players:
        inner = getattr(p, "inner", p)
        if isinstance(inner, LoadingAgent):
            inner.preload()
    timed = [CpuTimed(p) for p in seated.players]
    result = play_match(game, timed, seated.game_seed, batch.max_plies, seated.labels)
    return {
        "index": index,
        "candidate_seat": seat,
        "score": float(result.returns[seat]),
        "ended_by": str(result.ended_by),
        "plies": result.plies,
        "pieces": [int(v) for v in result.scores],
        "cpu": [round(t.seconds, 4) for t in timed],
    }


def summarise(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Score over pairs of games (one opening, seats swapped), its 95 % interval and Elo."""
    from analysis.stats import elo_with_interval, score_interval

    pairs: dict[int, list[float]] = {}
    for line in lines:
        pairs.setdefault(line["index"] // 2, []).append(line["score"])
    units = np.array([np.mean(v) for v in pairs.values()])
    score = float(units.mean())
    variance = float(units.var(ddof=1)) if len(units) > 1 else 0.0
    lo, hi = score_interval(score, variance, len(units))
    elo, elo_lo, elo_hi = elo_with_interval(score, variance, len(units))
    own = [line["cpu"][line["candidate_seat"]] for line in lines]
    theirs = [line["cpu"][1 - line["candidate_seat"]] for line in lines]
    endings = Counter((line["ended_by"], line["score"]) for line in lines)
    return {
        "games": len(lines),
        "pairs": len(units),
        "score": round(score, 4),
        "interval": [round(lo, 4), round(hi, 4)],
        "elo": [round(elo), round(elo_lo), round(elo_hi)],
        "candidate_cpu_s_per_game": round(float(np.mean(own)), 3),
        "hard_cpu_s_per_game": round(float(np.mean(theirs)), 3),
        "plies_mean": round(float(np.mean([line["plies"] for line in lines])), 1),
        "endings": {f"{e} {s}": n for (e, s), n in sorted(endings.items())},
    }


def paired_difference(
    candidate: list[dict[str, Any]], baseline: list[dict[str, Any]]
) -> dict[str, Any]:
    """The candidate's score less the baseline's, pair by pair (the same opening, both seats,
    in both logs), over the pairs both logs hold whole: mean, 95 % normal interval, pairs."""
    from analysis.stats import normal_interval

    def by_pair(lines: list[dict[str, Any]]) -> dict[int, float]:
        pairs: dict[int, list[float]] = {}
        for line in lines:
            pairs.setdefault(line["index"] // 2, []).append(line["score"])
        return {k: float(np.mean(v)) for k, v in pairs.items() if len(v) == 2}

    ours, theirs = by_pair(candidate), by_pair(baseline)
    common = sorted(ours.keys() & theirs.keys())
    diffs = np.array([ours[k] - theirs[k] for k in common])
    mean = float(diffs.mean())
    variance = float(diffs.var(ddof=1)) if len(diffs) > 1 else 0.0
    lo, hi = normal_interval(mean, variance, len(diffs))
    return {
        "pairs": len(common),
        "difference": round(mean, 4),
        "interval": [round(lo, 4), round(hi, 4)],
        "pairs_better": int((diffs > 0).sum()),
        "pairs_worse": int((diffs < 0).sum()),
    }


def _read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_compare(args: argparse.Namespace) -> None:
    candidate, baseline = _read_log(args.candidate), _read_log(args.baseline)
    report = {
        "candidate": summarise(candidate),
        "baseline": summarise(baseline),
        "difference": paired_difference(candidate, baseline),
    }
    print(json.dumps(report, indent=1))


def chosen_weights(name: str, spare: float | None) -> tuple[float, ...]:
    """The weights a command names: 'tuned' (``TUNED_WEIGHTS``), 'none' (the default
    evaluation) or a fit's JSON; ``spare`` replaces the spare-moves weight."""
    from engines.alquerque.evaluation import TUNED_WEIGHTS

    weights: tuple[float, ...] = ()
    if name == "tuned":
        weights = TUNED_WEIGHTS
    elif name != "none":
        weights = tuple(json.loads(Path(name).read_text())["weights"])
    if spare is not None:
        if not weights:
            raise SystemExit("--spare needs weights: the default evaluation has no spare term")
        weights = (*weights[:-1], spare)
    return weights


def run_match(args: argparse.Namespace) -> None:
    weights = chosen_weights(args.weights, args.spare)
    jobs = [
        (
            i,
            args.matches,
            args.seed,
            weights,
            args.nodes,
            args.contempt,
            args.opening_plies,
            args.endgame,
        )
        for i in range(args.matches)
    ]
    if args.endgame:
        from engines.alquerque.endgame import search_table

        search_table()  # built or loaded once, before the processes fork
    lines = []
    args.log.parent.mkdir(parents=True, exist_ok=True)
    with (
        args.log.open("a") as log,
        multiprocessing.get_context("fork").Pool(args.workers) as pool,
    ):
        for line in pool.imap_unordered(_match_job, jobs):
            line["nodes"] = args.nodes
            line["weights"] = list(weights)
            line["contempt"] = args.contempt
            line["opening_plies"] = args.opening_plies
            line["endgame"] = args.endgame
            log.write(json.dumps(line) + "\n")
            log.flush()
            lines.append(line)
    print(json.dumps(summarise(lines), indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.alquerque_expert")
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("fit", help="tune the evaluation's weights on self-play games")
    fit.add_argument("--games", type=int, default=400)
    fit.add_argument("--nodes", type=int, default=3000, help="node budget of the self-play")
    fit.add_argument("--opening", type=int, default=8, help="random plies at the start")
    fit.add_argument(
        "--player",
        default="none",
        help="the self-play search's weights: 'none' (the default evaluation), 'tuned' or a "
        "fit's JSON",
    )
    fit.add_argument(
        "--positions",
        type=Path,
        default=None,
        help="the self-play games' positions: read from this file when it exists (no games "
        "are played), else written to it",
    )
    fit.add_argument(
        "--decisive", action="store_true", help="fit on the positions of decided games only"
    )
    fit.add_argument("--workers", type=int, default=1)
    fit.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS)
    match = sub.add_parser("match", help="the candidate against hard, seats swapped")
    match.add_argument("--matches", type=int, default=200)
    match.add_argument("--seed", type=int, default=46)
    match.add_argument("--nodes", type=int, default=100_000)
    match.add_argument(
        "--weights",
        default="tuned",
        help="'tuned' (the committed TUNED_WEIGHTS, expert's), 'none' (the default "
        "evaluation: expert's before them) or the JSON a fit wrote",
    )
    match.add_argument("--contempt", type=float, default=0.0, help="a draw is worth minus this")
    match.add_argument(
        "--spare", type=float, default=None, help="the weight of the spare-moves term"
    )
    match.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random opening plies (the ladder plays 4); the game's default length if omitted",
    )
    match.add_argument(
        "--endgame", action="store_true", help="the candidate reads the solved endings"
    )
    match.add_argument("--workers", type=int, default=1)
    match.add_argument("--log", type=Path, default=Path("/tmp/alquerque_expert.jsonl"))
    compare = sub.add_parser("compare", help="two match logs of one seed, pair by pair")
    compare.add_argument("candidate", type=Path)
    compare.add_argument("baseline", type=Path)
    args = parser.parse_args(argv)
    if getattr(args, "games", 1) < 1 or getattr(args, "matches", 2) < 2:
        parser.error("--games must be at least 1 and --matches at least 2")
    if args.command == "fit":
        run_fit(args)
    elif args.command == "compare":
        run_compare(args)
    else:
        run_match(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
