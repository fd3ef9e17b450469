"""The Abalone kernel against the Python rules, ply by ply, and the facts of docs/rules/abalone.md.

Random games are played through the Python rules (the reference) and the kernel side by side;
at every ply both must agree on the legal set, the seat to move, the terminal flag and the
marbles off; at the end on the returns, the scores and how the game ended. Three kinds of
random game take turns so that every ending occurs: uniform moves under a short move limit,
the rules' playout policy (which pushes marbles off) with a small ``marbles_to_win``, and
marbles stepping back and forth (repetitions). ``PLAYTESTER_DIFFERENTIAL_GAMES`` sets the
games per configuration (the issue's figure, 2,000, runs in a few minutes).
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from engines.abalone import heuristics
from engines.abalone import kernel as ab
from engines.abalone.board import BY_NAME, DIRECTIONS, NAMES, OFFSETS, STRIDE, line_action
from engines.abalone.rules import AbaloneState
from engines.core import play_match
from engines.registry import load_game, make_agent

GAMES = int(os.environ.get("PLAYTESTER_DIFFERENTIAL_GAMES", "150"))
"""Random games per configuration (players, layout)."""
CONFIGS = [
    (2, "standard"),
    (2, "belgian_daisy"),
    (2, "german_daisy"),
    (2, "free_placement"),
    (3, "standard"),
    (3, "free_placement"),
]
# docs/rules/abalone.md gives the opening moves of every layout and depths 1–3 of two; the
# rest are the Python rules' own counts (tests/engines/test_abalone_rules.py's perft, run once to
# depth 4: a minute of Python, too long for the suite).
PERFT = {
    "standard": [44, 1936, 98912, 5045110],
    "belgian_daisy": [52, 2692, 149322, 8270666],
    "german_daisy": [80, 6244, 493480, 38240570],
}


def _kernel_legal(ks: np.ndarray, buf: np.ndarray) -> list[int]:
    n = ab.legal_actions(ks, buf)
    return sorted(buf[:n].tolist())


def _undo(action: int) -> int:
    """The single-marble move that takes back a single-marble ``action`` (else -1)."""
    direction, head = divmod(action, STRIDE)
    if direction >= 6:
        return -1
    return ((direction + 3) % 6) * STRIDE + head + OFFSETS[direction]


def _pick(
    state: AbaloneState, style: int, rng: random.Random, last: dict[int, int], shuffle_from: int
) -> int:
    """Style 0: uniform; 1: the rules' playout policy; 2: uniform, then from ply
    ``shuffle_from`` single marbles stepping back where they came from."""
    legal = state.legal_actions()
    if style == 1:
        return state.rollout_action(rng)
    if style == 2 and not state.placing and state.plies >= shuffle_from:
        seat = state.current_player()
        back = _undo(last[seat]) if seat in last else -1
        if back in legal and rng.random() < 0.9:
            return back
        singles = [a for a in legal if a < 6 * STRIDE]
        if singles:
            return rng.choice(singles)
    return rng.choice(legal)


def _game_options(index: int, rng: random.Random) -> dict[str, object]:
    style = index % 3
    if style == 0:  # uniform moves: the move limit ends most of them
        return {"move_limit": rng.randrange(20, 120), "marbles_to_win": rng.randrange(1, 7)}
    if style == 1:  # the playout policy pushes marbles off
        return {"move_limit": 300, "marbles_to_win": rng.choice((1, 2, 3, 6))}
    return {"move_limit": 200, "repetition_draw": rng.random() < 0.9}


@pytest.mark.parametrize(("players", "layout"), CONFIGS)
def test_abalone_kernel_equals_rules_on_every_ply(players: int, layout: str) -> None:
    rng = random.Random(1000 * players + CONFIGS.index((players, layout)))
    buf = np.empty(ab.MAX_ACTIONS, dtype=np.int64)
    returns, scores = np.zeros(3), np.zeros(3)
    endings: set[tuple[str, bool]] = set()
    for index in range(GAMES):
        options = _game_options(index, rng)
        game = load_game("abalone", players=players, layout=layout, **options)
        state = game.new_initial_state()
        ks = ab.new_state(players, layout, **options)  # type: ignore[arg-type]
        last: dict[int, int] = {}
        shuffle_from = rng.randrange(80)
        while True:
            assert ab.current_player(ks) == state.current_player()
            legal = state.legal_actions()
            assert _kernel_legal(ks, buf) == legal
            assert bool(ks[ab.ENDED]) == state.is_terminal()
            assert ks[ab.PUSHED : ab.PUSHED + players].tolist() == state.pushed_off
            assert ks[ab.LOST : ab.LOST + players].tolist() == state.lost
            if not legal:
                break
            seat = state.current_player()
            action = _pick(state, index % 3, rng, last, shuffle_from)
            last[seat] = action
            state.apply(action)
            ab.apply(ks, action)
        ab.returns(ks, returns)
        ab.scores(ks, scores)
        assert returns[:players].tolist() == state.returns()
        assert scores[:players].tolist() == state.scores()
        assert ab.ENDINGS[ks[ab.ENDED]] == state.ended_by()
        assert ks[ab.WINNER] == state.winner()
        endings.add((state.ended_by(), state.winner() >= 0))
    if GAMES >= 30:
        assert {("normal", True), ("repetition", False), ("move_limit", False)} <= endings


def test_a_player_without_a_move_loses_with_two_and_draws_with_three() -> None:
    # The decisions of docs/rules/abalone.md, on the positions of
    # tests/engines/test_abalone_rules.py.
    game2, game3 = load_game("abalone"), load_game("abalone", players=3)
    boxed = ab.encode(AbaloneState.from_cells(game2, [["A1"], ["A2", "B1", "B2"]]))
    three = ab.encode(AbaloneState.from_cells(game3, [["A1"], ["A2", "B1"], ["B2"]]))
    assert ab.current_player(boxed) == -1 and ab.ENDINGS[boxed[ab.ENDED]] == "normal"
    assert ab.ENDINGS[three[ab.ENDED]] == "no_move"
    out = np.zeros(3)
    ab.returns(boxed, out)
    assert out[:2].tolist() == [0.0, 1.0]
    ab.returns(three, out)
    assert out.tolist() == pytest.approx([1 / 3] * 3)
    # Black to move, boxed in after White's move: White wins at once.
    state = AbaloneState.from_cells(game2, [["A1"], ["A3", "B1", "B2", "C5"]], to_move=1)
    ks = ab.encode(state)
    move = state.string_to_action("A3W")
    state.apply(move)
    ab.apply(ks, move)
    assert state.returns() == [0.0, 1.0]
    ab.returns(ks, out)
    assert out[:2].tolist() == [0.0, 1.0] and ab.current_player(ks) == -1


def test_the_encoding_carries_the_repetition_history() -> None:
    rng = random.Random(11)
    buf = np.empty(ab.MAX_ACTIONS, dtype=np.int64)
    for players, layout in CONFIGS:
        game = load_game("abalone", players=players, layout=layout, move_limit=80)
        for _ in range(4):
            state = game.new_initial_state()
            ks = ab.new_state(players, layout, move_limit=80)
            last: dict[int, int] = {}
            for ply in range(rng.randrange(100)):
                if state.is_terminal():
                    break
                action = _pick(state, 2, rng, last, 0)
                last[state.current_player()] = action
                state.apply(action)
                ab.apply(ks, action)
                if ply % 7 == 0:
                    encoded = ab.encode(state)
                    assert encoded[: ab.HISTORY].tolist() == ks[: ab.HISTORY].tolist()
                    size = ks[ab.HISTORY_LEN]
                    assert sorted(encoded[ab.HISTORY : ab.HISTORY + size]) == sorted(
                        ks[ab.HISTORY : ab.HISTORY + size]
                    )
            copy = ab.encode(state)
            while not state.is_terminal():  # the encoded copy ends the game as the rules do
                action = rng.choice(state.legal_actions())
                state.apply(action)
                ab.apply(copy, action)
                assert _kernel_legal(copy, buf) == state.legal_actions()
            assert ab.ENDINGS[copy[ab.ENDED]] == state.ended_by()


def _perft(ks: np.ndarray, depth: int, buf: np.ndarray) -> int:
    """Move sequences of ``depth`` plies, the last ply counted from the legal list."""
    n = ab.legal_actions(ks, buf[depth])
    if depth == 1:
        return n
    total = 0
    for action in buf[depth, :n].tolist():
        child = ks.copy()
        ab.apply(child, action)
        total += _perft(child, depth - 1, buf)
    return total


@pytest.mark.parametrize("layout", sorted(PERFT))
def test_kernel_perft_matches_docs_rules_and_the_rules(layout: str) -> None:
    start = ab.new_state(2, layout)
    buf = np.empty((5, ab.MAX_ACTIONS), dtype=np.int64)
    assert [_perft(start, depth, buf) for depth in (1, 2, 3, 4)] == PERFT[layout]


def test_weighted_evaluation_equals_the_rules_heuristic() -> None:
    """``evaluate_weighted`` against ``heuristics.evaluate`` (what ``hard`` judges by) on
    positions of random games, with random weights, for 2 and 3 players."""
    rng = random.Random(21)
    checked = 0
    for players, layout in CONFIGS:
        game = load_game("abalone", players=players, layout=layout, marbles_to_win=3)
        for _ in range(4):
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply(state.rollout_action(rng) if rng.random() < 0.7 else
                            rng.choice(state.legal_actions()))  # fmt: skip
                if rng.random() < 0.3:
                    ks = ab.encode(state)
                    values = [rng.uniform(0.0, 3.0) for _ in ab.WEIGHT_NAMES]
                    weights = heuristics.Weights(**dict(zip(ab.WEIGHT_NAMES, values, strict=True)))
                    for seat in range(players):
                        expected = (
                            state.evaluate(seat)
                            if state.is_terminal()
                            else heuristics.evaluate(state, seat, weights)
                        )
                        got = ab.evaluate_weighted(ks, seat, np.array(values))
                        assert got == pytest.approx(expected, abs=1e-9)
                    checked += 1
    assert checked > 200
    assert ab.DEFAULT_WEIGHTS.tolist() == [1.0, 0.3, 0.15, 0.2]  # the rules' Weights()


def test_action_class_and_key() -> None:
    """Ejections, pushes and quiet moves as the rules' move ordering sorts them; the key
    follows the marbles and the side to move, whatever the way there."""
    rng = random.Random(5)
    buf = np.empty(ab.MAX_ACTIONS, dtype=np.int64)
    classes = set()
    for players in (2, 3):
        game = load_game("abalone", players=players, marbles_to_win=4)
        for _ in range(3):
            state = game.new_initial_state()
            while not state.is_terminal():
                ks = ab.encode(state)
                enemy = state.opponents(state.current_player())
                for action in buf[: ab.legal_actions(ks, buf)]:
                    kind = ab.action_class(ks, int(action))
                    assert kind == heuristics.push_class(state, int(action), enemy)
                    classes.add(kind)
                state.apply(state.rollout_action(rng))
    assert classes == {0, 1, 2}
    # Two orders of the same four moves reach one position with one key.
    first, second = ab.new_state(), ab.new_state()
    a, b, c, d = (_code(m) for m in ("C3NW", "G5SE", "C5NW", "G7SE"))
    for action in (a, b, c, d):
        ab.apply(first, action)
    for action in (c, d, a, b):
        ab.apply(second, action)
    assert ab.key(first) == ab.key(second) != ab.key(ab.new_state())
    ab.apply(first, _code("B1NW"))
    assert ab.key(first) != ab.key(second)


def _code(move: str) -> int:
    """The action code of ``A1A3E``-style notation, legal or not."""
    direction = next(d for d in sorted(DIRECTIONS, key=len, reverse=True) if move.endswith(d))
    ends = [BY_NAME[move[i : i + 2]] for i in range(0, len(move) - len(direction), 2)]
    code = line_action(ends[0], ends[-1] if len(ends) > 1 else None, DIRECTIONS.index(direction))
    assert code is not None
    return code


def test_docs_rules_pushes_in_the_kernel() -> None:
    """The push rules of docs/rules/abalone.md on hand-built positions, through the kernel."""
    game, game3 = load_game("abalone"), load_game("abalone", players=3)

    def run(marbles: list[list[str]], move: str) -> tuple[np.ndarray, bool]:
        state = AbaloneState.from_cells(game3 if len(marbles) == 3 else game, marbles)
        ks = ab.encode(state)
        buf = np.empty(ab.MAX_ACTIONS, dtype=np.int64)
        code = _code(move)
        legal = code in buf[: ab.legal_actions(ks, buf)].tolist()
        if legal:
            ab.apply(ks, code)
        return ks, legal

    def cells(ks: np.ndarray, seat: int) -> set[str]:
        return {NAMES[c] for k, c in enumerate(ab.RULES_CELL) if ks[ab.BOARDS + seat] >> k & 1}

    ks, legal = run([["C3", "C4"], ["C5", "I9"]], "C3C4E")  # 2 v 1 into an empty cell
    assert legal and cells(ks, 0) == {"C4", "C5"} and cells(ks, 1) == {"C6", "I9"}
    ks, legal = run([["A1", "A2", "A3"], ["A4", "A5", "I9"]], "A1A3E")  # 3 v 2, one off
    assert legal and cells(ks, 1) == {"A5", "I9"}
    assert ks[ab.PUSHED : ab.PUSHED + 2].tolist() == [1, 0]
    assert ks[ab.LOST : ab.LOST + 2].tolist() == [0, 1]
    ks, legal = run([["E1", "E2", "E3", "E4"], ["E5", "E6", "I9"]], "E2E4E")  # 4 count as 3
    assert legal and cells(ks, 1) == {"E6", "E7", "I9"}
    ks, legal = run([["E1", "E2", "E3"], ["E4", "I9"], ["E5", "I5"]], "E1E3E")  # mixed group
    assert legal and cells(ks, 1) == {"E5", "I9"} and cells(ks, 2) == {"E6", "I5"}
    for black, white, move in [
        (["E1", "E2", "E3"], ["E4", "E5", "E6"], "E1E3E"),  # pac 3 v 3
        (["E1", "E2"], ["E3", "E4"], "E1E2E"),  # pac 2 v 2
        (["E1"], ["E2"], "E1E"),  # one marble never pushes
        (["E1", "E2", "E3", "E5"], ["E4"], "E1E3E"),  # own marble behind the opponent's
        (["E1", "E2", "E3", "E4"], ["E5", "E6", "E7"], "E2E4E"),  # a line of 4 counts 3
        (["C3", "C4"], ["D3"], "C3C4NW"),  # broadside never pushes
        (["A1"], ["I9"], "A1SW"),  # never off the board
    ]:
        assert not run([black, [*white, "I5"]], move)[1], move


def _mcts_match(players: int) -> tuple[str, ...]:
    game = load_game("abalone", players=players)
    spec = {"name": "mcts", "iterations": 30, "max_rollout_plies": 10}
    agents = [make_agent(game, spec, random.Random(seat)) for seat in range(players)]
    assert type(agents[0]).__name__ == "CompiledMctsAgent"
    result = play_match(game, agents, seed=1)  # checks every move against the rules
    assert result.stats["ended_by"] in ("normal", "repetition", "move_limit")
    return result.moves


@pytest.mark.parametrize("players", [2, 3])
def test_compiled_mcts_plays_whole_abalone_matches(players: int) -> None:
    """Through the agent contract, the game's default options; the seeds replay the match."""
    first = _mcts_match(players)
    assert len(first) > 0 and _mcts_match(players) == first
