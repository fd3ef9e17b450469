"""The generic players' strength against exact play, on small Kalah boards the example solves.

    .venv/bin/python -m bench.kalah_strength                       # 2 x 4, 3 x 3, 4 x 3
    .venv/bin/python -m bench.kalah_strength --boards 3x3 --games 40

The game is the worked example ``examples/kalah`` (installed for this process as
:mod:`bench.generic_mcts` does, unless it is installed already), under the rules it was solved
under (``empty_capture``, ``kalah.published.RULES``). Its solver gives every move's value: the
final store difference the mover secures with best play after it. For each board and each
player (generic ``mcts`` at 100, 1,000 and 3,000 iterations, generic ``alphabeta`` at depth
4, and ``random`` as the floor) the bench measures:

- **optimal moves**: over every position where the player moved in its own self-play games
  (``--games`` of them, seeded), the share of its moves of the best value, counted over the
  positions where the choice matters (some legal move is worse than another; a position where
  every move has the same value is left out, and how many were is given), and the mean seeds
  lost by a move against the best one (its regret);
- **best results kept**: over the positions where the choice can change the result (some
  move keeps a win, or a draw, that another gives away), the share of its moves that keep the
  best result. A search that plays to win, not to win by most, can keep every result while
  its margin-optimal share is lower;
- **score against perfect**: ``--games`` games against the example's ``perfect``, half with
  the player first; a win 1, a draw 1/2. The solved value bounds it: perfect cannot lose the
  seat the board favours, so the player's best possible score is the solved result of its
  seats, shown beside it.

The players are built with ``engines.registry.make_agent`` from a seeded generator, no player
noise or opening, so a game is its seed's. Results go to
``studies/results/kalah_strength/strength.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.generic_mcts import install_example
from engines import registry
from engines.core import Agent, Game, State

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "studies" / "results" / "kalah_strength" / "strength.json"
BOARDS = ((2, 4), (3, 3), (4, 3))
PLAYERS = (
    "random",
    "mcts:iterations=100",
    "mcts:iterations=1000",
    "mcts:iterations=3000",
    "alphabeta:depth=4",
)


@dataclass
class Strength:
    """One player's strength on one board."""

    board: str
    player: str
    decisions: int
    distinct_positions: int
    """Distinct positions among the decisions (a deterministic player repeats its games)."""
    indifferent: int
    """Positions where every legal move had the same value (left out of the share)."""
    optimal: int
    optimal_share: float
    mean_regret: float
    """Seeds lost by a move against the best move, over the decisions that matter."""
    result_decisions: int
    """Positions where some move loses a better result (win, draw, loss) than another."""
    result_kept: int
    result_share: float
    """The share of those where the move kept the best result."""
    games_against_perfect: int
    score_against_perfect: float
    best_possible_score: float
    """The score exact play gets in the same seats: the solved result of each seat."""
    cpu_seconds: float


def _spec(text: str) -> dict[str, Any]:
    name, _, rest = text.partition(":")
    params: dict[str, Any] = {"name": name}
    for pair in filter(None, rest.split(",")):
        key, _, value = pair.partition("=")
        params[key] = int(value)
    return params


def _values(state: State) -> list[tuple[int, int]]:
    # The example is importable only once install_example has put it on the path.
    from kalah.solver import best_actions

    return best_actions(state)


def _solved_score(state: State, seat: int) -> float:
    """What exact play gets in ``seat`` from ``state``: the solved margin's result."""
    from kalah.solver import margin

    ahead = margin(state) * (1 if seat == 0 else -1)
    return 1.0 if ahead > 0 else 0.0 if ahead < 0 else 0.5


def _play(game: Game, agents: list[Agent], seed: int, watch: int | None) -> tuple[State, list]:
    """A game from its seed; with ``watch``, every move of that seat as (position, move)."""
    state = game.new_initial_state(seed)
    seen: list[tuple[State, int]] = []
    while not state.is_terminal():
        seat = state.current_player()
        action = agents[seat].step(state.clone())
        if watch is None or seat == watch:
            seen.append((state.clone(), action))
        state.apply(action)
    return state, seen


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _score(state: State, seat: int) -> float:
    return float(state.returns()[seat])


def measure(houses: int, seeds: int, player: str, games: int, seed: int) -> Strength:
    from kalah.published import RULES

    game = registry.load_game("kalah", houses=houses, seeds=seeds, **RULES)
    started = time.process_time()
    decisions = indifferent = optimal = result_decisions = result_kept = 0
    regret = 0
    distinct: set[Hashable] = set()
    for g in range(games):
        rng = random.Random(seed * 1_000_003 + g)
        agents = [registry.make_agent(game, _spec(player), rng) for _ in range(2)]
        _, seen = _play(game, agents, seed + g, watch=None)
        for position, action in seen:
            valued = dict(_values(position))
            if len(set(valued.values())) == 1:
                indifferent += 1
                continue
            decisions += 1
            distinct.add(position.key())
            best = max(valued.values())
            optimal += valued[action] == best
            regret += best - valued[action]
            results = {_sign(v) for v in valued.values()}
            if len(results) > 1:
                result_decisions += 1
                result_kept += _sign(valued[action]) == max(results)
    score = best_possible = 0.0
    for g in range(games):
        seat = g % 2
        rng = random.Random(seed * 2_000_003 + g)
        ours = registry.make_agent(game, _spec(player), rng)
        perfect = registry.make_agent(game, "perfect", rng)
        agents = [ours, perfect] if seat == 0 else [perfect, ours]
        final, _ = _play(game, agents, seed + g, watch=seat)
        score += _score(final, seat)
        best_possible += _solved_score(game.new_initial_state(seed + g), seat)
    return Strength(
        board=f"{houses}x{seeds}",
        player=player,
        decisions=decisions,
        distinct_positions=len(distinct),
        indifferent=indifferent,
        optimal=optimal,
        optimal_share=round(optimal / decisions, 4) if decisions else float("nan"),
        mean_regret=round(regret / decisions, 3) if decisions else float("nan"),
        result_decisions=result_decisions,
        result_kept=result_kept,
        result_share=round(result_kept / result_decisions, 4) if result_decisions else float("nan"),
        games_against_perfect=games,
        score_against_perfect=round(score / games, 4),
        best_possible_score=round(best_possible / games, 4),
        cpu_seconds=round(time.process_time() - started, 1),
    )


def _board(text: str) -> tuple[int, int]:
    houses, _, seeds = text.partition("x")
    try:
        return int(houses), int(seeds)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a board is HOUSESxSEEDS, e.g. 3x3, not {text!r}"
        ) from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="+", type=_board, default=list(BOARDS))
    parser.add_argument("--players", nargs="+", default=list(PLAYERS))
    parser.add_argument("--games", type=int, default=100, help="self-play and versus games")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2 (one game in each seat against perfect)")
    with tempfile.TemporaryDirectory() as root:
        install_example(Path(root))
        rows = []
        for houses, seeds in args.boards:
            if 2 * houses * seeds > 24:
                parser.error(f"{houses}x{seeds} has more than the 24 seeds perfect solves")
            for player in args.players:
                row = measure(houses, seeds, player, args.games, args.seed)
                rows.append(asdict(row))
                print(
                    f"{row.board} {row.player:<22} optimal {row.optimal_share:6.1%} of "
                    f"{row.decisions} ({row.distinct_positions} distinct; {row.indifferent} "
                    f"indifferent), result kept {row.result_share:6.1%} of "
                    f"{row.result_decisions}, regret "
                    f"{row.mean_regret:.2f}, vs perfect {row.score_against_perfect:.3f} "
                    f"(exact play {row.best_possible_score:.3f}), {row.cpu_seconds} s",
                    flush=True,
                )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {"games": args.games, "seed": args.seed, "rows": rows}
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
