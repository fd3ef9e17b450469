"""Each game's ladder: its levels, its fixed reference, its player count and its pairings."""

from __future__ import annotations

from dataclasses import dataclass

from engines.core import derive_seed


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
            ("random", "easy", "medium", "hard", "expert"),
            "easy",
            200,
            extra=(("expert", "medium"),),
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


def ladder_for(game: str) -> Ladder:
    """The ladder of ``game``; a ``ValueError`` naming the games that have one."""
    try:
        return LADDERS[game]
    except KeyError:
        raise ValueError(f"no ladder for {game!r}; one of {', '.join(LADDERS)}") from None


def find_pairing(ladder: Ladder, name: str) -> tuple[str, str]:
    """The pairing ``A-B`` of ``ladder`` named ``name``; a ``ValueError`` otherwise."""
    for a, b in ladder.pairings():
        if pairing_name(a, b) == name:
            return a, b
    names = ", ".join(pairing_name(a, b) for a, b in ladder.pairings())
    raise ValueError(f"{ladder.game} has no pairing {name!r}; one of {names}")
