"""The conformance kit for a game author's own tests (pytest).

In a test module::

    from engines.testing import assert_conforms

    def test_my_game_follows_the_contract() -> None:
        assert_conforms("mygame")

Or as a pytest plugin (``pytest_plugins = ["engines.testing"]`` in the package's top
``conftest.py``, or ``pytest -p engines.testing``), which adds the ``conformance`` fixture and
the ``--conformance-games N`` option to play more games than a test asks for::

    def test_my_game_follows_the_contract(conformance) -> None:
        conformance("mygame")

A failure lists every broken promise with the seed and ply that show it (see
``engines.conformance``), so the game can be played again to that point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from engines.conformance import ConformanceReport, check_game

DEFAULT_GAMES = 300
"""Games a test plays unless it says: enough to meet most positions of a small game in a
few seconds. ``playtester check-game`` plays more."""
SHOWN_FAILURES = 20


def assert_conforms(
    name: str,
    *,
    games: int = DEFAULT_GAMES,
    first_seed: int = 0,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> ConformanceReport:
    """Run the kit over game ``name``; fail the test with every failure (the first
    ``SHOWN_FAILURES``), else return the report (its ``speed_line()`` says how fast it plays)."""
    report = check_game(name, count=games, first_seed=first_seed, players=players, options=options)
    if report.failures:
        shown = [str(f) for f in report.failures[:SHOWN_FAILURES]]
        more = len(report.failures) - len(shown)
        tail = [f"... and {more} more"] if more > 0 else []
        pytest.fail(
            f"{name} breaks the engine contract in {len(report.failures)} of {report.games} "
            "games:\n" + "\n".join(shown + tail),
            pytrace=False,
        )
    return report


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--conformance-games",
        type=int,
        default=None,
        help="random games the conformance fixture plays per game (default: the test's own)",
    )


@pytest.fixture
def conformance(request: pytest.FixtureRequest) -> Callable[..., ConformanceReport]:
    """``conformance(name, **keywords)``: ``assert_conforms`` with ``--conformance-games``
    in force when given."""
    wanted = request.config.getoption("--conformance-games", default=None)

    def run(name: str, **keywords: Any) -> ConformanceReport:
        if wanted is not None:
            keywords["games"] = wanted
        return assert_conforms(name, **keywords)

    return run
