"""The ``exact_play`` figure and its verdict (analysis/studies/perfect.py): formatted from the
reports' exact sections, with the one judgement it makes — whether a margin agrees with the
exact value — and the level it judges: the strongest one asked that is not ``perfect``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.studies.definition import Figure, Question, load_study
from analysis.studies.perfect import NO_EXACT, agrees, exact_data, exact_text, exact_verdict


def _margin(estimate: float, low: float | None, high: float | None, on: int = 0) -> dict[str, Any]:
    return {"estimate": estimate, "ci_low": low, "ci_high": high, "interval": "t",
            "units": 40, "games_at_exact_value": on, "games": 40}  # fmt: skip


def _share(agent: str, share: float) -> dict[str, Any]:
    return {"agent": agent, "moves": 680, "optimal": round(680 * share), "share": share,
            "ci_low": share - 0.03, "ci_high": min(share + 0.03, 1.0),
            "interval": "clopper-pearson, design-adjusted", "units": 40}  # fmt: skip


def _report(agent: str, share: float, margin: dict[str, Any]) -> dict[str, Any]:
    exact = {"start_value": -98, "board": "2x3", "board_total": 202,
             "exact_first_player_share": 0.0, "first_player_margin": margin,
             "optimal_moves": [_share(agent, share)],
             "decisive": [_share(agent, share / 2)]}  # fmt: skip
    first = {"estimate": -0.4, "ci_low": -0.45, "ci_high": -0.3, "interval": "t", "units": 40}
    return {"game": {"name": "alveoles", "exact": exact}, "first_player_advantage": first}


def test_a_margin_agrees_when_its_interval_holds_the_exact_value() -> None:
    def exact(margin: dict[str, Any]) -> dict[str, Any]:
        return {"start_value": -98, "first_player_margin": margin}

    assert agrees(exact(_margin(-90.0, -110.0, -70.0)))
    assert not agrees(exact(_margin(-60.0, -80.0, -40.0)))
    # No spread, no interval: it agrees only if every game ended on the exact value.
    assert agrees(exact(_margin(-98.0, None, None, on=40)))
    assert not agrees(exact(_margin(-100.0, None, None, on=0)))


def _study(tmp_path: Path, batches: tuple[str, ...] = ("greedy", "master", "perfect")) -> Any:
    """A study asking ``exact_play`` of each batch, named ``level`` or ``level-board``."""
    lines = ['title = "t"', "[defaults]", 'game = "alveoles"', "seed = 1", "matches = 10",
             'options = { layout = "classic-2x3", square_bonus = "none" }']  # fmt: skip
    for name in batches:
        lines += ["[[batch]]", f'name = "{name}"', f'agents = "{name.split("-")[0]}"']
    for name in batches:
        lines += ["[[question]]", 'figure = "exact_play"', f'batch = "{name}"']
    path = tmp_path / "s.toml"
    path.write_text("\n".join(lines) + "\n")
    return load_study(path)


def test_the_verdict_judges_the_strongest_level_before_perfect(tmp_path: Path) -> None:
    reports = {
        "greedy": _report("greedy", 0.6, _margin(-70.0, -120.0, -20.0)),
        "master": _report("master", 0.8, _margin(-60.0, -80.0, -40.0)),
        "perfect": _report("perfect", 1.0, _margin(-98.0, None, None, on=40)),
    }
    sentences, table = exact_verdict(_study(tmp_path), reports)
    text = " ".join(sentences)
    assert "from 60.0 % at `greedy` to **80.0 %** at `master`" in text
    assert "**does not agree** with the exact value, 38.0 points away" in text
    assert "40 of 40 on 2 × 3" in text
    assert len(table) == 2 + 3 and table[-1].endswith("| yes |") and "| no |" in table[3]
    # The opening sentence, the README's line, sums up the one board.
    assert sentences[0] == (
        "On 1 solved board, `master` makes the optimal move in 80.0 % [77.0 %, 83.0 %] of its "
        "moves, and its first player's margin does not agree with the exact value."
    )


def test_the_verdict_opens_on_the_strongest_level_over_every_board(tmp_path: Path) -> None:
    def on(board: str, report: dict[str, Any]) -> dict[str, Any]:
        report["game"]["exact"]["board"] = board
        return report

    reports = {
        "greedy": _report("greedy", 0.6, _margin(-70.0, -120.0, -20.0)),
        "master": _report("master", 0.8, _margin(-60.0, -80.0, -40.0)),
        "greedy-2x4": on("2x4", _report("greedy", 0.5, _margin(-70.0, -120.0, -20.0))),
        "master-2x4": on("2x4", _report("master", 0.7, _margin(-90.0, -110.0, -70.0))),
    }
    sentences, _table = exact_verdict(_study(tmp_path, tuple(reports)), reports)
    # The lowest share first, each with its interval; the -98 lies in one margin's interval.
    assert sentences[0] == (
        "On 2 solved boards, `master` makes the optimal move in 70.0 % [67.0 %, 73.0 %] to "
        "80.0 % [77.0 %, 83.0 %] of its moves, and its first player's margin agrees with the "
        "exact value on 1 of the 2."
    )
    assert sentences[1].startswith("On 2 × 3 squares") and sentences[2].startswith("On 2 × 4")


def test_a_batch_without_exact_values_says_so() -> None:
    q = Question(title="x", figure=Figure.EXACT_PLAY, batch="b", against=None, line=1)
    report = {"game": {"name": "alveoles"}}
    assert exact_text(q, report, None) == [NO_EXACT]
    assert exact_data(q, report, None) == {}
