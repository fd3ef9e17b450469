"""Any OpenSpiel game as a playtester game: ``openspiel:<name>``, its parameters as options.

The registry hands names starting with ``openspiel:`` to :func:`spiel_game_class`, which builds
(once per name) a ``Game`` subclass whose declared ``GameType`` comes from OpenSpiel's own:
players, chance, information, and one ``Option`` per OpenSpiel parameter with its default.

Chance follows the contract: every chance outcome is drawn from a generator seeded by the
match seed, so ``(batch, match)`` replays move for move and only the players' moves are stored
(in OpenSpiel's action strings). The outcomes still to come are fixed by that generator and
unknown to the players, so a game with chance counts as one with hidden information here:
``play_match`` hands agents a view whose future is re-drawn (and, where OpenSpiel hides cards
or pieces, whose hidden part OpenSpiel re-samples), as Alhambra does.

Refused, with a message naming the game: simultaneous-move and mean-field games, games whose
chance OpenSpiel draws internally (``SAMPLED_STOCHASTIC``: no seed of ours could replay them),
one-player games, games built on another game (a game as a parameter), and imperfect-information
games OpenSpiel cannot re-sample (agents would see what their seat does not). Parameters that
name a file on the server are not options (see ``_offered``).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from dataclasses import replace
from functools import cache
from types import ModuleType
from typing import Any, ClassVar

from engines.core import (
    TERMINAL,
    Action,
    Game,
    GameType,
    IllegalActionError,
    NotationError,
    Option,
    OptionError,
    Seat,
    State,
    VariationDefaults,
    derive_seed,
    shown,
)

PREFIX = "openspiel:"
"""Registry names of OpenSpiel games start with this."""
OURS_PREFIX = "playtester_"
"""OpenSpiel names of our own games (``engines.openspiel.ours``), refused here."""
INSTALL_HINT = "install the OpenSpiel extra: pip install -e '.[openspiel]'"
PROBE_PLIES = 60
"""Random plies a probe plays looking for a position to re-sample (imperfect information)."""
MAX_DISTINCT_ACTIONS = 100_000
"""Most actions an OpenSpiel game may have (its ``num_distinct_actions``: the branching bound)."""
MAX_GAME_LENGTH = 100_000
"""Most plies an OpenSpiel game may last (its ``max_game_length``)."""
MAX_POSITION_CHARS = 20_000
"""Longest text of an OpenSpiel game's start (its cells, as OpenSpiel prints the board)."""
VARIATION = VariationDefaults(opening_plies=2, noise_plies=6, noise_margin=0.05, max_plies=20)
"""Openings and noise of OpenSpiel games: short, since many of them are small."""


def load_pyspiel() -> ModuleType:
    """``pyspiel``, or an ``OptionError`` on ``game`` saying how to install it."""
    try:
        import pyspiel
    except ImportError as exc:
        raise OptionError(
            f"OpenSpiel games need the open_spiel package; {INSTALL_HINT}", field="game"
        ) from exc
    return pyspiel


def is_spiel_name(name: str) -> bool:
    return isinstance(name, str) and name.strip().lower().startswith(PREFIX)


def refusal(spiel_type: Any) -> str | None:
    """Why playtester cannot play the OpenSpiel game of ``spiel_type``, or None."""
    import pyspiel

    kind = pyspiel.GameType
    name = spiel_type.short_name
    if name.startswith(OURS_PREFIX):
        own = name.removeprefix(OURS_PREFIX)
        return f"{name} is our own {own} registered with OpenSpiel; play {own!r} itself"
    if spiel_type.dynamics == kind.Dynamics.SIMULTANEOUS:
        return f"{name} is a simultaneous-move game; playtester plays games taken in turns"
    if spiel_type.dynamics == kind.Dynamics.MEAN_FIELD:
        return f"{name} is a mean-field game; playtester plays games between seated players"
    if spiel_type.chance_mode == kind.ChanceMode.SAMPLED_STOCHASTIC:
        return (
            f"{name} draws its chance inside OpenSpiel from its own generator, so a match could "
            "not be replayed from its seed"
        )
    if spiel_type.max_num_players < 2:
        return f"{name} is a one-player game; playtester compares seats"
    if any(isinstance(v, dict) for v in dict(spiel_type.parameter_specification).values()):
        return f"{name} is built on another game (a game as a parameter)"
    return None


def spiel_names() -> list[str]:
    """Short names of every sequential OpenSpiel game, playable or not, sorted."""
    pyspiel = load_pyspiel()
    return sorted(t.short_name for t in pyspiel.registered_games())


def spiel_has_chance(name: str) -> bool:
    """Whether ``openspiel:<short name>`` has chance (as its ``GameType.chance``), read from
    OpenSpiel's list of games: no game is loaded."""
    pyspiel = load_pyspiel()
    short = name.strip().lower().removeprefix(PREFIX).strip()
    for spiel_type in pyspiel.registered_games():
        if spiel_type.short_name == short:
            return bool(spiel_type.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC)
    return False


def _offered(param: str) -> bool:
    """Whether an OpenSpiel parameter is an option: ``players`` is the player count, and a
    parameter naming a file or folder (``filename``, ``instances_file``, ``puzzles_root``)
    keeps its default, so no request makes the server read a file it names."""
    return param != "players" and "file" not in param and not param.endswith("_root")


def _option(name: str, default: Any) -> Option:
    """An OpenSpiel parameter as an option. OpenSpiel declares no ranges, so numbers get a
    generous one (ten times the default, at least ±1,000): wide enough for any real setting,
    narrow enough that no request makes OpenSpiel build a board of a billion cells."""
    doc = f"OpenSpiel parameter {name}"
    if isinstance(default, bool):
        return Option(name, bool, default, doc)
    if isinstance(default, int | float):
        bound = max(1000.0 if isinstance(default, int) else 1e6, 10.0 * abs(default))
        return Option(name, type(default), default, doc, minimum=-bound, maximum=bound)
    return Option(name, str, default if isinstance(default, str) else "", doc)


@cache
def spiel_game_class(name: str) -> type[SpielGame]:
    """The ``Game`` class of ``openspiel:<short name>``; ``OptionError`` on ``game`` when
    OpenSpiel has no such game or playtester cannot play it."""
    pyspiel = load_pyspiel()
    short = name.strip().lower().removeprefix(PREFIX).strip()
    types = {t.short_name: t for t in pyspiel.registered_games()}
    spiel_type = types.get(short)
    if spiel_type is None:
        raise OptionError(
            f"unknown OpenSpiel game {shown(short)}; `playtester games --family openspiel` "
            "lists them",
            field="game",
        )
    why = refusal(spiel_type)
    if why is not None:
        raise OptionError(f"openspiel:{short} cannot be played: {why}", field="game")
    spec = dict(spiel_type.parameter_specification)
    has_players = "players" in spec
    try:
        default_game = pyspiel.load_game(short)
    except pyspiel.SpielError as exc:
        raise OptionError(
            f"openspiel:{short} cannot be played: OpenSpiel cannot load it with its default "
            f"parameters ({exc})",
            field="game",
        ) from exc
    low = max(2, spiel_type.min_num_players)
    high = spiel_type.max_num_players if has_players else default_game.num_players()
    if not has_players:
        low = high = default_game.num_players()
    chance = spiel_type.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC
    perfect = spiel_type.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    game_type = GameType(
        short_name=PREFIX + short,
        long_name=f"{spiel_type.long_name} (OpenSpiel)",
        min_players=low,
        max_players=high,
        chance=chance,
        perfect_information=perfect and not chance,
        num_distinct_actions=default_game.num_distinct_actions(),
        max_game_length=default_game.max_game_length(),
        options=tuple(_option(k, v) for k, v in sorted(spec.items()) if _offered(k)),
        points=_points(default_game, spiel_type),
        description=f"OpenSpiel's {spiel_type.long_name}, played through its Python API.",
        variation=VARIATION,
    )
    cls = type(
        f"Spiel_{short}",
        (SpielGame,),
        {"game_type": game_type, "spiel_name": short, "has_players_param": has_players},
    )
    if not perfect:
        _probe_resampling(cls, pyspiel)
    return cls


def _points(game: Any, spiel_type: Any) -> bool:
    """Whether OpenSpiel's returns are points worth reporting, not just win, draw or loss."""
    import pyspiel

    general = spiel_type.utility == pyspiel.GameType.Utility.GENERAL_SUM
    return general or game.max_utility() - game.min_utility() > 2.0


def _probe_resampling(cls: type[SpielGame], pyspiel: ModuleType) -> None:
    """Refuse an imperfect-information game OpenSpiel cannot re-sample from a seat's view."""
    game = cls(cls.game_type.min_players, {o.name: o.default for o in cls.game_type.options})
    state = game.new_initial_state(0)
    rng = random.Random(0)
    for _ in range(PROBE_PLIES):
        if state.is_terminal():
            return
        try:
            state.resample_from_infostate(state.current_player(), rng)
        except pyspiel.SpielError as exc:
            raise OptionError(
                f"openspiel:{cls.spiel_name} cannot be played: it hides information and "
                f"OpenSpiel cannot re-sample it from a seat's view ({exc}), so agents would "
                "see what their seat does not",
                field="game",
            ) from exc
        state.apply(rng.choice(state.legal_actions()))


class SpielGame(Game):
    """An OpenSpiel game with its parameters fixed; subclasses are made by
    :func:`spiel_game_class`, one per OpenSpiel game."""

    spiel_name: ClassVar[str]
    has_players_param: ClassVar[bool]

    def __init__(self, players: int, options: Mapping[str, Any]) -> None:
        super().__init__(players, options)
        pyspiel = load_pyspiel()
        # Only the parameters changed from their defaults: OpenSpiel fills in the rest, and
        # some defaults give way to others (hex's board_size to num_rows and num_cols).
        declared = type(self).game_type.options
        params = {
            o.name: self.options[o.name] for o in declared if self.options[o.name] != o.default
        }
        if self.has_players_param:
            params["players"] = players
        blamed = _blamed(self.options, type(self).game_type.options)
        try:
            self.spiel_game = pyspiel.load_game(self.spiel_name, params)
            start = self.spiel_game.new_initial_state()
        except pyspiel.SpielError as exc:
            raise OptionError(
                f"openspiel:{self.spiel_name} refuses these parameters: {exc}", field=blamed
            ) from exc
        if not start.is_terminal() and not start.is_chance_node() and not start.legal_actions():
            raise OptionError(
                f"openspiel:{self.spiel_name} with these parameters starts with no legal move",
                field=blamed,
            )
        _check_size(self.spiel_name, self.spiel_game, start, blamed)
        # The loaded game's own length and action count (they follow its parameters).
        vars(self)["game_type"] = replace(
            type(self).game_type,
            num_distinct_actions=self.spiel_game.num_distinct_actions(),
            max_game_length=self.spiel_game.max_game_length(),
        )
        self.hidden = not type(self).game_type.perfect_information
        self.spiel_hidden = (
            self.spiel_game.get_type().information
            != pyspiel.GameType.Information.PERFECT_INFORMATION
        )

    def new_initial_state(self, seed: int = 0) -> SpielState:
        """The start, with chance at the start drawn from ``seed`` (as every later chance)."""
        rng = random.Random(derive_seed("openspiel chance", seed))
        return SpielState(self, self.spiel_game.new_initial_state(), rng)


def _check_size(name: str, game: Any, start: Any, blamed: str) -> None:
    """Refuse a game too large to play and replay in bounded time: too many actions, plies or
    cells (see ``MAX_DISTINCT_ACTIONS``, ``MAX_GAME_LENGTH``, ``MAX_POSITION_CHARS``), or one
    whose length is below one ply."""
    sizes = (
        ("distinct actions", game.num_distinct_actions(), MAX_DISTINCT_ACTIONS),
        ("plies at most", game.max_game_length(), MAX_GAME_LENGTH),
        ("characters in its starting position", len(str(start)), MAX_POSITION_CHARS),
    )
    if game.max_game_length() < 1:
        # Parameters OpenSpiel takes without complaint can still give a length below one
        # (banqi's max_no_progress=-1000): no ply cap could be drawn from it.
        raise OptionError(
            f"openspiel:{name} with these parameters lasts at most {game.max_game_length():,} "
            "plies: a game must last at least one",
            field=blamed,
        )
    for what, size, cap in sizes:
        if size > cap:
            raise OptionError(
                f"openspiel:{name} with these parameters is too large: {size:,} {what}, "
                f"over the {cap:,} allowed",
                field=blamed,
            )


def _blamed(given: Mapping[str, Any], declared: tuple[Option, ...]) -> str:
    """The option to name when OpenSpiel refuses a set of parameters: the one changed from its
    default when there is exactly one, else ``options``."""
    changed = [o.name for o in declared if given.get(o.name, o.default) != o.default]
    return f"options.{changed[0]}" if len(changed) == 1 else "options"


class SpielState(State):
    """A position of an OpenSpiel game: its ``pyspiel.State`` and the generator of its chance.

    Chance nodes never show: after every move the chance outcomes that follow are drawn from
    the state's own generator, with OpenSpiel's probabilities.
    """

    game: SpielGame

    def __init__(self, game: SpielGame, spiel_state: Any, rng: random.Random) -> None:
        self.game = game
        self.spiel_state = spiel_state
        """The OpenSpiel state (read it, do not play on it: chance would not follow)."""
        self.rng = rng
        self._settle()

    def _settle(self) -> None:
        spiel = self.spiel_state
        while spiel.is_chance_node():
            outcomes = spiel.chance_outcomes()
            point = self.rng.random()
            chosen = outcomes[-1][0]
            for outcome, probability in outcomes:
                point -= probability
                if point < 0:
                    chosen = outcome
                    break
            spiel.apply_action(chosen)

    # -- the contract ----------------------------------------------------------------
    def current_player(self) -> Seat:
        if self.spiel_state.is_terminal():
            return TERMINAL
        return int(self.spiel_state.current_player())

    def legal_actions(self) -> list[Action]:
        if self.spiel_state.is_terminal():
            return []
        return list(self.spiel_state.legal_actions())

    def apply(self, action: Action) -> None:
        self.spiel_state.apply_action(action)
        self._settle()

    def is_terminal(self) -> bool:
        return bool(self.spiel_state.is_terminal())

    def returns(self) -> list[float]:
        """Winners (the seats with the highest OpenSpiel return) split 1.0."""
        n = self.game.num_players
        if not self.spiel_state.is_terminal():
            return [1.0 / n] * n
        raw = list(self.spiel_state.returns())
        top = max(raw)
        winners = [s for s in range(n) if raw[s] >= top - 1e-9]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]

    def scores(self) -> list[float]:
        """OpenSpiel's own returns (chips, points, ±1)."""
        return [float(r) for r in self.spiel_state.returns()]

    def action_to_string(self, action: Action) -> str:
        return str(self.spiel_state.action_to_string(self.spiel_state.current_player(), action))

    def string_to_action(self, text: str) -> Action:
        import pyspiel

        name = self.game.name
        if self.spiel_state.is_terminal():
            raise IllegalActionError(name, str(text), str(self), "the game is over")
        legal = self.spiel_state.legal_actions()
        action: int | None = None
        # As written first: an action string may itself end in a space.
        for candidate in dict.fromkeys((str(text), str(text).strip())):
            try:
                action = int(self.spiel_state.string_to_action(candidate))
                break
            except pyspiel.SpielError:
                continue
        if action is None:
            sample = ", ".join(self.action_to_string(a) for a in legal[:4])
            expected = f"an OpenSpiel action string, e.g. {sample}"
            raise NotationError(name, str(text), expected)
        if action not in legal:
            raise IllegalActionError(name, str(text), str(self))
        return action

    def clone(self) -> SpielState:
        other = SpielState.__new__(SpielState)
        other.game = self.game
        other.spiel_state = self.spiel_state.clone()
        if self.game.game_type.chance:
            other.rng = random.Random()
            other.rng.setstate(self.rng.getstate())
        else:
            other.rng = self.rng  # never drawn from: a game without chance
        return other

    def resample_from_infostate(self, seat: Seat, rng: random.Random) -> SpielState:
        """A copy whose future chance is re-drawn from ``rng`` and, where OpenSpiel hides
        information, whose hidden part OpenSpiel re-samples for ``seat``."""
        view = self.clone()
        view.rng = random.Random(rng.getrandbits(64))
        if self.game.spiel_hidden and not self.spiel_state.is_terminal():
            view.spiel_state = self.spiel_state.resample_from_infostate(seat, rng.random)
        return view

    def key(self) -> Hashable:
        """The position's text and the seat to move; the whole history where information is
        hidden (the text may show or hide it)."""
        if self.game.hidden:
            return self.spiel_state.history_str()
        return (self.current_player(), str(self.spiel_state))

    def __str__(self) -> str:
        return str(self.spiel_state)


def describe_spiel_games() -> list[dict[str, Any]]:
    """The OpenSpiel family as JSON-able data: every game OpenSpiel registers, under its
    playtester name, with its players, chance, information and parameters, and either
    ``playable`` true or the reason its kind is refused (``refused``). Loading a game checks
    more (its default parameters load; OpenSpiel can re-sample what a seat does not see), which
    this listing leaves to a request naming the game: some games take seconds to load."""
    pyspiel = load_pyspiel()
    out = []
    for spiel_type in sorted(pyspiel.registered_games(), key=lambda t: t.short_name):
        why = refusal(spiel_type)
        spec = dict(spiel_type.parameter_specification)
        params = [
            {"name": k, "default": v if not isinstance(v, dict) else {}}
            for k, v in sorted(spec.items())
        ]
        out.append(
            {
                "name": PREFIX + spiel_type.short_name,
                "long_name": spiel_type.long_name,
                "players": [spiel_type.min_num_players, spiel_type.max_num_players],
                "chance": spiel_type.chance_mode.name.lower(),
                "information": spiel_type.information.name.lower(),
                "dynamics": spiel_type.dynamics.name.lower(),
                "params": params,
                "playable": why is None,
                "refused": why,
            }
        )
    return out
