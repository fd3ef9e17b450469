"""Our games as OpenSpiel Python games: ``playtester_<name>`` for each registered game.

Each is a ``pyspiel.Game`` whose parameters are ``players`` and the game's options, with the
contract's rules inside. The differences from the contract are OpenSpiel's: the current player
is ``PlayerId.TERMINAL`` (−4) at the end, returns are zeros until the end (then our win shares,
so the game is constant-sum with sum 1), action ids are dense (:mod:`engines.openspiel.actions`)
and a game with chance shows it as explicit chance nodes (:mod:`engines.openspiel.chance`), its
hidden order as imperfect information.

Observation strings are the position's text (Alhambra's shows counts, never the order of the
bag or the deck). Information-state strings add what a seat remembers: the moves so far in a
game without chance, and in Alhambra a digest of every public position seen. Observation
tensors exist for the board games (``engines.openspiel.adapters``).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

import numpy as np
import pyspiel

from engines.core import Game, OptionError, State
from engines.openspiel.adapters import ADAPTERS, Adapter, adapter_of
from engines.openspiel.chance import NeedChance, ScriptedRandom
from engines.registry import build_game, game_class, options_record

SPIEL_PREFIX = "playtester_"
"""OpenSpiel short names of our games: ``playtester_alquerque`` and so on."""


def spiel_short_name(name: str) -> str:
    return SPIEL_PREFIX + name


@cache
def adapter(name: str) -> Adapter:
    """The adapter of game ``name`` (``engines.openspiel.adapters.adapter_of``)."""
    return adapter_of(game_class(name).game_type)


def _spiel_type(name: str) -> Any:
    gt = game_class(name).game_type
    found = adapter(name)
    kind = pyspiel.GameType
    params: dict[str, Any] = {"players": gt.min_players}
    for option in gt.options:
        default = option.default
        params[option.name] = default if isinstance(default, bool | int | float | str) else ""
    return kind(
        short_name=spiel_short_name(name),
        long_name=f"{gt.long_name} (playtester)",
        dynamics=kind.Dynamics.SEQUENTIAL,
        chance_mode=kind.ChanceMode.EXPLICIT_STOCHASTIC
        if gt.chance
        else kind.ChanceMode.DETERMINISTIC,
        information=kind.Information.PERFECT_INFORMATION
        if gt.perfect_information
        else kind.Information.IMPERFECT_INFORMATION,
        utility=kind.Utility.CONSTANT_SUM,
        reward_model=kind.RewardModel.TERMINAL,
        max_num_players=gt.max_players,
        min_num_players=gt.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=found.shape is not None,
        parameter_specification=params,
    )


@cache
def codec_of(name: str) -> Any:
    return adapter(name).codec()


class PlaytesterGame(pyspiel.Game):
    """One of our games with its players and options fixed, as an OpenSpiel game.

    Subclasses (one per game, made by :func:`register`) set ``NAME``, our registry name.
    """

    NAME = ""
    SPIEL_TYPE: Any = None

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = dict(params or {})
        players = given.pop("players", None)
        options = {k: _option_value(k, v, _list_options(self)) for k, v in given.items()}
        options = {k: v for k, v in options.items() if v != ""}
        try:
            self.ours: Game = build_game(self.NAME, players, options)
        except OptionError as exc:
            raise ValueError(f"{spiel_short_name(self.NAME)}: {exc}") from exc
        self.adapter: Adapter = adapter(self.NAME)
        gt = self.ours.game_type
        info = pyspiel.GameInfo(
            num_distinct_actions=codec_of(self.NAME).size,
            max_chance_outcomes=self.adapter.max_chance_outcomes,
            num_players=self.ours.num_players,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=(
                gt.max_game_length
                if self.adapter.longest is None
                else self.adapter.longest(self.ours)
            ),
        )
        super().__init__(self.SPIEL_TYPE, info, {"players": self.ours.num_players, **given})

    def new_initial_state(self) -> PlaytesterState:
        return PlaytesterState(self)

    def wrap(self, inner: State) -> PlaytesterState:
        """An OpenSpiel state around a copy of one of our positions (reached in our own play;
        its chance from there on shows as chance nodes, like any)."""
        return PlaytesterState(self, inner.clone())

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Observer:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return Observer(self, recall)


def _list_options(game: PlaytesterGame) -> set[str]:
    return {o.name for o in game_class(game.NAME).game_type.options if o.kind is list}


def _option_value(name: str, value: Any, structured: set[str]) -> Any:
    """An OpenSpiel parameter as our option: a structured option (Les Alvéoles' layout grid)
    travels as JSON text, since OpenSpiel parameters are numbers, switches and text."""
    if name in structured and isinstance(value, str) and value.lstrip().startswith("["):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"parameter {name} is not valid JSON: {exc}") from exc
    return value


class _Shared:
    """An immutable value OpenSpiel's copies share (its ``deepcopy`` is itself)."""

    __slots__ = ("value",)

    def __init__(self, value: Game) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self


class _Held:
    """A position OpenSpiel copies with the rules' own ``clone`` (a generic deep copy of a
    whole position is many times slower)."""

    __slots__ = ("state",)

    def __init__(self, state: State | None) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held:
        return _Held(None if self.state is None else self.state.clone())


class PlaytesterState(pyspiel.State):
    """A position of one of our games (``inner``), with the chance draws still pending."""

    def __init__(self, game: PlaytesterGame, inner: State | None = None) -> None:
        super().__init__(game)
        self.name = game.NAME
        self._ours = _Shared(game.ours)
        self.players = game.ours.num_players
        self._pre = _Held(None)
        self._inner = _Held(inner)
        self.step: int | None = None
        """The action code of the pending step (None: the deal)."""
        self.draws: list[int] = []
        self.need = 0
        """Outcomes of the pending chance draw (0: no chance node)."""
        self.seen = ""
        """Digest of the public positions so far (games with chance)."""
        self._text: str | None = None
        if inner is None:
            if game.adapter.deal is not None:
                self._run()
            else:
                self.inner = game.ours.new_initial_state(0)

    @property
    def ours(self) -> Game:
        return self._ours.value

    @property
    def inner(self) -> State | None:
        """Our position (None during the deal; the position before the pending step while
        a step waits for chance)."""
        return self._inner.state

    @inner.setter
    def inner(self, state: State | None) -> None:
        self._inner = _Held(state)

    @property
    def pre(self) -> State | None:
        """The position a pending step started from (None during the deal)."""
        return self._pre.state

    @pre.setter
    def pre(self, state: State | None) -> None:
        self._pre = _Held(state)

    # -- chance ----------------------------------------------------------------------
    def _run(self) -> None:
        """Run the pending step (the deal, or a move) with the draws so far; either it needs
        one more (a chance node) or it is done."""
        found = adapter(self.name)
        rng = ScriptedRandom(self.draws)
        try:
            if self.pre is None:
                assert found.deal is not None
                result = found.deal(self.ours, rng)
            else:
                assert found.set_rng is not None and self.step is not None
                result = self.pre.clone()
                found.set_rng(result, rng)
                result.apply(self.step)
        except NeedChance as need:
            self.need = need.outcomes
            return
        self.inner, self.pre, self.step, self.draws, self.need = result, None, None, [], 0
        self.seen = hashlib.blake2b((self.seen + self.text()).encode(), digest_size=12).hexdigest()

    # -- the OpenSpiel surface -------------------------------------------------------
    def current_player(self) -> int:
        if self.need:
            return int(pyspiel.PlayerId.CHANCE)
        assert self.inner is not None
        if self.inner.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return self.inner.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        assert self.inner is not None
        codec = codec_of(self.name)
        return sorted(codec.to_id(code) for code in self.inner.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(i, 1.0 / self.need) for i in range(self.need)]

    def text(self) -> str:
        """The position's text (computed once a position: observers ask for it per seat)."""
        if self._text is None:
            self._text = "" if self.inner is None else str(self.inner)
        return self._text

    def _apply_action(self, action: int) -> None:
        self._text = None
        if self.need:
            self.draws.append(action)
            self._run()
            return
        assert self.inner is not None
        code = codec_of(self.name).to_code(action)
        if adapter(self.name).deal is None:
            self.inner.apply(code)
            return
        self.pre, self.step, self.draws = self.inner, code, []
        self._run()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"chance {action}"
        base = self.inner if self.pre is None else self.pre
        try:
            assert base is not None
            return base.action_to_string(codec_of(self.name).to_code(action))
        except (ValueError, AssertionError):
            return f"action {action}"

    def is_terminal(self) -> bool:
        return not self.need and self.inner is not None and self.inner.is_terminal()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.players
        assert self.inner is not None
        return [float(r) for r in self.inner.returns()]

    def rewards(self) -> list[float]:
        return self.returns()

    def __str__(self) -> str:
        if self.inner is None:
            return f"dealing: {len(self.draws)} draws so far"
        if self.need:
            return f"{self.text()}\nchance: draw {len(self.draws) + 1} of the next step"
        return self.text()


class Observer:
    """OpenSpiel's observer interface (``tensor``, ``dict``, ``set_from``, ``string_from``).

    Without perfect recall: the position's public text and, for the board games, the tensor of
    the game's adapter. With it (the information state): the text with what the seat has seen
    before, the moves so far where every move is public, else the digest of public positions.
    """

    def __init__(self, game: PlaytesterGame, recall: bool) -> None:
        self.recall = recall
        self.adapter = game.adapter
        shape = (
            game.adapter.shape(game.ours.num_players)
            if game.adapter.shape is not None and not recall
            else (0,)
        )
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: PlaytesterState, player: int) -> None:
        self.tensor.fill(0.0)
        if self.adapter.fill is not None and self.tensor.size and state.inner is not None:
            self.adapter.fill(state.inner, self.tensor)

    def string_from(self, state: PlaytesterState, player: int) -> str:
        text = state.text()
        if not self.recall:
            return text
        if adapter(state.name).deal is None:
            moves = " ".join(str(a) for a in state.history())
            return f"seat {player}; moves: {moves}\n{text}"
        return f"seat {player}; public history {state.seen}\n{text}"


_REGISTERED: dict[str, type[PlaytesterGame]] = {}


def register(name: str) -> type[PlaytesterGame]:
    """Register game ``name`` with OpenSpiel (once) and return its game class: one of ours, or
    an installed game the generic adapter serves (``OptionError`` on ``game`` for one it
    cannot)."""
    if name not in _REGISTERED:
        spiel_type = _spiel_type(name)
        cls = type(
            f"Playtester_{name}", (PlaytesterGame,), {"NAME": name, "SPIEL_TYPE": spiel_type}
        )
        pyspiel.register_game(spiel_type, cls)
        _REGISTERED[name] = cls
    return _REGISTERED[name]


def register_all() -> None:
    """Register every game of :data:`ADAPTERS` (our four)."""
    for name in ADAPTERS:
        register(name)


def spiel_game_of(game: Game) -> PlaytesterGame:
    """The OpenSpiel game of one of our games, or of an installed one (registered on first
    use), with its players and options."""
    register(game.name)
    params: dict[str, Any] = {"players": game.num_players}
    for name, value in options_record(game).items():
        params[name] = value if isinstance(value, bool | int | float | str) else json.dumps(value)
    loaded: PlaytesterGame = pyspiel.load_game(spiel_short_name(game.name), params)
    return loaded
