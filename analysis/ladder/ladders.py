"""Each game's ladder: its levels, its fixed reference, its player count and its pairings.

The built-in games' ladders are written here (``LADDERS``); an installed game's comes from its
module's ``LADDER`` (``engines.contract.LadderDeclaration``), or, when it declares none, is the
generic ladder of the generic agents it is offered (``generic_ladder``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engines import registry
from engines.contract import LadderDeclaration
from engines.core import State, derive_seed


@dataclass(frozen=True)
class Ladder:
    """A game's levels (agent specs as typed, weakest first as expected) and how they meet.

    With three players a pairing ``A-B`` seats one ``A`` against two copies of ``B``; the
    copies are one player, so the fit counts only ``A``'s meetings with each ``B``.
    """

    game: str
    players: int
    levels: tuple[str, ...]
    reference: str
    games: int
    """Games a pairing plays unless told otherwise: whole rounds of the seating design."""
    extra: tuple[tuple[str, str], ...] = ()
    """Pairings beyond the next level up and the reference."""
    options: tuple[tuple[str, Any], ...] = ()
    """The game's options for every match, as (name, value) pairs (its defaults when empty)."""
    opening_plies: int | None = None
    """Random opening plies of every pairing's batch, each opening played once from each
    seat; None plays the game's default variation (its ``VariationDefaults.opening_plies``).
    A ladder sets it where the game's default opening decides too many games to measure
    strong levels apart, without changing that default, which studies rely on."""

    def variation(self) -> dict[str, Any] | None:
        """The variation every pairing's batch asks for (None: the service's default)."""
        if self.opening_plies is None:
            return None
        return {"kind": "openings", "plies": self.opening_plies}

    def pairings(self) -> list[tuple[str, str]]:
        """Each level against the next one up and against the reference, then ``extra``:
        the stronger level (as expected) first, no pairing twice."""
        found: list[tuple[str, str]] = []
        seen: set[frozenset[str]] = set()
        ranked = {level: i for i, level in enumerate(self.levels)}
        candidates = [(self.levels[i + 1], self.levels[i]) for i in range(len(self.levels) - 1)]
        for level in self.levels:
            if level != self.reference:
                low, high = sorted((level, self.reference), key=ranked.__getitem__)
                candidates.append((high, low))
        for a, b in [*candidates, *self.extra]:
            if frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                found.append((a, b))
        return found

    def seat_agents(self, a: str, b: str) -> list[str]:
        """The batch's agents for pairing ``a-b``: ``a`` once, ``b`` in every other seat."""
        return [a, *[b] * (self.players - 1)]

    def seed(self, a: str, b: str) -> int:
        """The pairing's batch seed: the same on every machine and run."""
        return derive_seed("ladder", self.game, self.players, a, b)


def pairing_name(a: str, b: str) -> str:
    return f"{a}-{b}"


LADDERS: dict[str, Ladder] = {
    ladder.game: ladder
    for ladder in (
        Ladder(
            "alquerque",
            2,
            ("random", "easy", "medium", "hard", "expert", "master"),
            "easy",
            200,
            extra=(("expert", "medium"), ("master", "medium")),
            # The game's 8 random plies decide about half the expert-hard pairs whoever sits
            # where; 4 leave about a fifth decided (bench/README.md, "Alquerque's ladder
            # openings").
            opening_plies=4,
        ),
        Ladder(
            "alveoles",
            2,
            (
                "random",
                "greedy",
                "bonus_builder",
                "hunter",
                "value",
                "cautious",
                "expert",
                "master",
            ),
            "greedy",
            200,
        ),
        Ladder(
            "abalone", 2, ("random", "easy", "medium", "hard", "expert", "master"), "medium", 200
        ),
        Ladder(
            "alhambra",
            3,
            ("random", "greedy", "builder", "collector", "banker", "mcts", "expert"),
            "greedy",
            300,
            extra=(("expert", "builder"), ("expert", "collector"), ("expert", "banker")),
        ),
    )
}
"""The four games. Alhambra is played by three (its most common table, and the setting of
its earlier strength figures); the others by two."""


GENERIC_GAMES = 200
GENERIC_MCTS_ITERATIONS = (100, 1000)
"""The generic ladder's Monte Carlo tree search budgets, a tenfold step."""


def from_declaration(game: str, declared: LadderDeclaration) -> Ladder:
    """The ladder a game's module declares as its ``LADDER``."""
    return Ladder(
        game,
        declared.players,
        tuple(declared.levels),
        declared.reference,
        declared.games,
        extra=tuple((a, b) for a, b in declared.extra),
        options=tuple(sorted(declared.options.items())),
    )


def generic_ladder(game: str) -> Ladder:
    """The ladder of a game that declares none: ``random`` (the reference), ``mcts`` at
    100 and 1,000 iterations a move, and ``alphabeta`` when the game offers it and its
    positions have an evaluation of their own (else it would search on win or loss alone),
    each the generic agent of that name (a game's own agent of that name leaves its level
    out); at the game's default options, for two players when
    it seats two, else for its fewest."""
    game_type = registry.game_class(game).game_type
    players = 2 if game_type.min_players <= 2 <= game_type.max_players else game_type.min_players
    # A game's own agent of a generic name (its tuned ``mcts``) takes other parameters.
    agents = registry.agent_types(registry.load_game(game, players))
    offered = {a.name for a in agents if a.games is None}
    levels = ["random"] if "random" in offered else []
    if "mcts" in offered:
        levels += [f"mcts:iterations={n}" for n in GENERIC_MCTS_ITERATIONS]
    if "alphabeta" in offered and _has_evaluation(game, players):
        levels.append("alphabeta")
    if "random" not in levels:
        raise ValueError(
            f"no ladder for {game!r}: it declares no LADDER and is not offered the generic "
            "random player"
        )
    return Ladder(game, players, tuple(levels), "random", GENERIC_GAMES)


def _has_evaluation(game: str, players: int) -> bool:
    state = registry.load_game(game, players).new_initial_state(0)
    return type(state).evaluate is not State.evaluate


def ladder_for(game: str) -> Ladder:
    """The ladder of ``game``: a built-in game's own, else the one its module declares, else
    the generic one. A ``ValueError`` for a name that is not a game that loads."""
    if game in LADDERS:
        return LADDERS[game]
    declared = registry.declared_ladder(game)
    if declared is not None:
        return from_declaration(game, declared)
    return generic_ladder(game)


def ladder_games() -> list[str]:
    """The games a ladder can be played for: every game that loads."""
    return registry.game_names()


def find_pairing(ladder: Ladder, name: str) -> tuple[str, str]:
    """The pairing ``A-B`` of ``ladder`` named ``name``; a ``ValueError`` otherwise."""
    for a, b in ladder.pairings():
        if pairing_name(a, b) == name:
            return a, b
    names = ", ".join(pairing_name(a, b) for a, b in ladder.pairings())
    raise ValueError(f"{ladder.game} has no pairing {name!r}; one of {names}")
