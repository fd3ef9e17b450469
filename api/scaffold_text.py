"""The files ``playtester new-game`` writes, as templates (``string.Template``: ``$name`` the
game's registry name, ``$title`` its long name, ``$cls`` its class-name prefix, ``$package``
the import package, ``$dist`` the distribution, ``$letter`` the letter of the decisions in
docs/rules.md).

The game they make is a trivial but complete one (take one to three counters from a pile,
taking the last wins) so that the package installs, passes the conformance kit and plays at
once; its author replaces the rules and keeps the shape.
"""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "$title, a game for playtester."
requires-python = ">=3.11"
# playtester itself is not listed: install this package into playtester's environment.
dependencies = []

# How playtester finds the game: name = the module exposing GAME (engines/plugins.py).
[project.entry-points."playtester.games"]
$name = "$package"

[tool.setuptools]
packages = ["$package"]

# Its own pytest settings, so a run here never takes up a surrounding project's.
[tool.pytest.ini_options]
testpaths = ["tests"]
"""

INIT = '''\
"""$title for playtester: the module the entry point names.

playtester reads these names here: GAME (the Game subclass), CONTRACT_VERSION (the engine
contract this package is written against, as a number: playtester refuses another) and,
optionally, AGENTS (players of this game's own, as AgentType declarations), RENDER_BOARD (the
replay page's board: a function of the state and the last move returning SVG, or its
"module:attribute" reference) and REPORT (a report section of this game's own). Without
RENDER_BOARD the replay page shows the state's text; see playtester's docs/contract.md.
"""

from $package.rules import ${cls}Game, ${cls}State

CONTRACT_VERSION = 1
GAME = ${cls}Game
AGENTS = ()

__all__ = ["AGENTS", "CONTRACT_VERSION", "GAME", "${cls}Game", "${cls}State"]
'''

RULES = '''\
"""$title: the rules as code (docs/rules.md states them; each decision is cited as
``docs/rules.md ${letter}1`` where it is implemented).

The game as written: a pile of counters (the option ``pile``); the players take turns taking
one, two or three; whoever takes the last counter wins. Replace it with your own, keeping the
methods: the conformance kit (``playtester check-game $name``) checks what each must do.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from engines.contract import (
    TERMINAL,
    Action,
    Game,
    GameType,
    NotationError,
    Option,
    Seat,
    State,
)

MAX_PILE = 100
TAKES = (1, 2, 3)


class ${cls}State(State):
    """One position: the counters left and the seat to move.

    Keep it small and copy it cheaply: searches clone positions thousands of times a move.
    Everything random must come from the seed given to ``new_initial_state`` (kept here as a
    ``random.Random`` if the game draws during play), never from the global ``random``.

    Optional hooks the generic players use (engines/contract.py): ``evaluate(seat)``, a
    heuristic value in [-1, 1] that alphabeta and capped playouts read (the default knows
    only finished games); ``rollout_action(rng)``; ``ordered_actions()``; ``scores()``.
    """

    def __init__(self, game: ${cls}Game, pile: int) -> None:
        self.game = game
        self.pile = pile
        self.to_move: Seat = 0
        self.winner: Seat | None = None

    def current_player(self) -> Seat:
        """The seat to move (0-based), or TERMINAL once the game is over."""
        return TERMINAL if self.is_terminal() else self.to_move

    def legal_actions(self) -> list[Action]:
        """Every legal action as an int, sorted and distinct; empty exactly when the game is
        over (docs/rules.md ${letter}2)."""
        if self.is_terminal():
            return []
        return [take for take in TAKES if take <= self.pile]

    def apply(self, action: Action) -> None:
        """Play a legal action (unchecked: ``apply_action`` checks, searches call this)."""
        self.pile -= action
        if self.pile == 0:
            self.winner = self.to_move  # docs/rules.md ${letter}3: the last counter wins
        self.to_move = (self.to_move + 1) % self.game.num_players

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.pile == 0

    def returns(self) -> list[float]:
        """Each seat's share of the win, one per seat, summing to 1 (winners share 1.0; a
        draw shares it among all)."""
        seats = self.game.num_players
        if self.winner is None:
            return [1.0 / seats] * seats
        return [1.0 if seat == self.winner else 0.0 for seat in range(seats)]

    def action_to_string(self, action: Action) -> str:
        """The action in the game's notation (docs/rules.md ${letter}4); what matches store."""
        return f"take{action}"

    def string_to_action(self, text: str) -> Action:
        """Text in the notation back to the action; NotationError when it does not read."""
        cleaned = text.strip().lower() if isinstance(text, str) else ""
        if cleaned.startswith("take") and cleaned[4:] in {str(t) for t in TAKES}:
            return int(cleaned[4:])
        raise NotationError("$name", str(text), "take1, take2 or take3")

    def clone(self) -> ${cls}State:
        """An independent copy: playing on it never changes this position."""
        copy = ${cls}State(self.game, self.pile)
        copy.to_move = self.to_move
        copy.winner = self.winner
        return copy

    def key(self) -> Hashable:
        """The position's identity (everything that decides what follows)."""
        return (self.pile, self.to_move, self.winner)

    def __str__(self) -> str:
        """The text board: the replay page shows it when the game has no drawing."""
        if self.is_terminal():
            return f"pile empty; seat {self.winner} took the last counter"
        return f"pile {self.pile}; seat {self.to_move} to move"


class ${cls}Game(Game):
    """$title with its player count and options fixed."""

    game_type = GameType(
        short_name="$name",  # the entry point's name: playtester checks they agree
        long_name="$title",
        min_players=2,
        max_players=2,
        chance=False,  # True when the seed decides anything (a deal, dice)
        perfect_information=True,  # False when a seat cannot see everything; then
        # State.resample_from_infostate must redraw what that seat cannot see
        num_distinct_actions=len(TAKES),
        max_game_length=MAX_PILE,  # the longest possible game, in plies
        options=(
            Option(
                "pile",
                int,
                21,
                "Counters in the pile at the start (docs/rules.md ${letter}1).",
                minimum=1,
                maximum=MAX_PILE,
            ),
        ),
        description="Take one to three counters; whoever takes the last wins.",
    )

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)

    def new_initial_state(self, seed: int = 0) -> ${cls}State:
        """The start position; every random choice of the game comes from ``seed`` (this game
        draws nothing; one with chance keeps ``random.Random(seed)`` in its state)."""
        return ${cls}State(self, int(self.options["pile"]))
'''

RULES_DOC = """\
# $title

The rules as implemented by `$package/rules.py`. Each decision is numbered; the code cites
the number where it implements it (`docs/rules.md ${letter}1`).

## Decisions

**${letter}1 — The pile.** The game starts with a pile of counters, 21 unless the option
`pile` says otherwise (1 to 100).

**${letter}2 — A turn.** The players take turns, seat 0 first; a turn takes one, two or three
counters, never more than are left.

**${letter}3 — The end.** The player who takes the last counter wins; there are no draws.

**${letter}4 — Notation.** A move is written `take1`, `take2` or `take3`.
"""

TESTS = '''\
"""$title against the engine contract and its own docs/rules.md."""

from __future__ import annotations

from engines.contract import play_match, replay
from engines.registry import load_game, make_agent
from engines.testing import assert_conforms


def test_${name}_follows_the_engine_contract() -> None:
    report = assert_conforms("$name", games=300)
    print(report.speed_line())


def test_taking_the_last_counter_wins() -> None:
    # docs/rules.md ${letter}1 and ${letter}3: from a pile of 5, take 2, 2, then 1 ends it.
    state = replay(load_game("$name", pile=5), ["take2", "take2", "take1"])
    assert state.is_terminal()
    assert state.returns() == [1.0, 0.0]


def test_a_match_between_random_players_ends() -> None:
    game = load_game("$name")
    agents = [make_agent(game, "random") for _ in range(game.num_players)]
    result = play_match(game, agents, seed=1)
    assert sorted(result.returns) == [0.0, 1.0]
'''

CONFTEST = '''\
"""The conformance kit as a pytest plugin: the ``conformance`` fixture and the
``--conformance-games N`` option (engines/testing.py)."""

pytest_plugins = ["engines.testing"]
'''

README = """\
# $title

A game for playtester: installed into playtester's environment, every command takes it by
its name, `$name`.

    pip install -e .
    playtester games                      # lists $name with this package and its version
    playtester check-game $name           # the conformance kit
    playtester run $name --agents random  # a batch of matches
    pytest                                # the rules' own tests and the kit

The rules are stated in `docs/rules.md` and written in `$package/rules.py`.
"""

FILES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "conftest.py": CONFTEST,
    "$package/__init__.py": INIT,
    "$package/rules.py": RULES,
    "docs/rules.md": RULES_DOC,
    "tests/test_${name}_rules.py": TESTS,
}
"""Each file's path (a template too) and its text."""
