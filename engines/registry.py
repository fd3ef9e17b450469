"""Find games and agents by name; validate options and agent specs in one place.

Games are the entry points of the group ``playtester.games`` (``engines.plugins``): ours,
declared in playtester's own ``pyproject.toml``, and any installed package's. Each game module
exposes ``GAME`` (its ``Game`` subclass) and may expose ``AGENTS`` (its own players);
``engines.agents`` exposes the players that work on any game. Modules are imported on first use
so that ``import engines`` stays cheap in worker start-up; a package that fails to load is
listed by ``broken_games`` and never hides the others.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from functools import cache
from typing import Any

from engines import clock, plugins
from engines.contract import BoardRenderer, LadderDeclaration
from engines.core import (
    Agent,
    AgentType,
    Game,
    OptionError,
    UnknownAgentError,
    UnknownGameError,
    shown,
    validate_options,
)

GENERIC_AGENTS_MODULE = "engines.agents"
SPIEL_MODULE = "engines.openspiel.spiel"
"""Games named ``openspiel:<name>``: any OpenSpiel game (the ``openspiel`` extra)."""
SPIEL_PREFIX = "openspiel:"
OPENSPIEL_AGENT_MODULE = "engines.openspiel_agent"
"""OpenSpiel's ``MCTSBot`` as the agent ``openspiel_mcts`` (any game; needs the extra)."""
COMPILED_MODULE = "engines.compiled"
"""The agents built on the compiled searches: ``mcts`` and ``alphabeta`` (compiled where the game
has a kernel, else Python), and the ``expert`` and ``master`` levels."""


@cache
def _declarations() -> tuple[dict[str, plugins.Declared], tuple[plugins.Refused, ...]]:
    games, refused = plugins.sort_declarations(plugins.declared_games())
    return games, tuple(refused)


@cache
def _loaded(name: str) -> plugins.Loaded | plugins.GameLoadError:
    """A declared game loaded, or the error that stops it (kept: it is not retried)."""
    try:
        return plugins.load(_declarations()[0][name])
    except plugins.GameLoadError as exc:
        return exc


def forget_games() -> None:
    """Read the installed games again (after a package was installed in this process)."""
    for cached in (_declarations, _loaded, game_class, _agent_types, _declared_member):
        cached.cache_clear()


@cache
def _declared_member(name: str, member: str) -> Any:
    key = name.strip().lower()
    if key not in _declarations()[0]:
        return None  # an OpenSpiel game, or one no longer installed: nothing declared
    loaded = _loaded(key)
    if isinstance(loaded, plugins.GameLoadError):
        return None
    return plugins.resolve(loaded, member)


def board_renderer(name: str) -> BoardRenderer | None:
    """Game ``name``'s board renderer (its module's ``RENDER_BOARD``), or None when it has none,
    is not an installed game, or fails to load. A reference is imported on first use; one that
    does not resolve raises ``GameLoadError`` naming the package."""
    found: BoardRenderer | None = _declared_member(name, "board")
    return found


def report_section(name: str) -> Any:
    """Game ``name``'s report section (its module's ``REPORT``, an ``analysis.games.GameReport``
    which ``analysis.games`` checks), or None as for ``board_renderer``, which it resolves
    the same way."""
    return _declared_member(name, "report")


def declared_ladder(name: str) -> LadderDeclaration | None:
    """The strength ladder game ``name``'s module declares (its ``LADDER``), or None when it
    declares none; the errors of ``game_class`` for a name that is not a loaded game."""
    game_class(name)
    loaded = _loaded(name.strip().lower())
    return loaded.ladder if isinstance(loaded, plugins.Loaded) else None


@cache
def game_class(name: str) -> type[Game]:
    key = name.strip().lower() if isinstance(name, str) else name
    if isinstance(key, str) and key.startswith(SPIEL_PREFIX):
        spiel: type[Game] = _spiel_module().spiel_game_class(key)
        return spiel
    games, refused = _declarations()
    if key not in games:
        for refusal in refused:
            if refusal.declared.name == key:
                raise plugins.GameLoadError(refusal.reason)
        raise UnknownGameError(str(name), game_names())
    loaded = _loaded(key)
    if isinstance(loaded, plugins.GameLoadError):
        raise plugins.GameLoadError(str(loaded))  # a fresh one: no traceback piles up on it
    return loaded.game


def has_chance(name: str) -> bool:
    """Whether game ``name`` has chance. An OpenSpiel game's comes from OpenSpiel's list of
    games, without loading the game (whose parameters may be the ones that crash it)."""
    key = name.strip().lower() if isinstance(name, str) else name
    if isinstance(key, str) and key.startswith(SPIEL_PREFIX):
        chance: bool = _spiel_module().spiel_has_chance(key)
        return chance
    return game_class(name).game_type.chance


def game_names() -> list[str]:
    """The games that load, sorted (each imported once to know)."""
    return [n for n in sorted(_declarations()[0]) if isinstance(_loaded(n), plugins.Loaded)]


def game_origin(name: str) -> plugins.Origin:
    """The package and version game ``name`` comes from."""
    game_class(name)  # the same errors as any use of the name
    return _declarations()[0][name.strip().lower()].origin


def broken_games() -> list[dict[str, str]]:
    """Declared games that will not load, each with its package, version and error: a package
    that fails to import or to meet the contract, and refused names (clashes)."""
    games, refused = _declarations()
    out = [
        {**_origin_record(r.declared.origin), "name": r.declared.name, "error": r.reason}
        for r in refused
    ]
    for name in sorted(games):
        loaded = _loaded(name)
        if isinstance(loaded, plugins.GameLoadError):
            out.append({**_origin_record(games[name].origin), "name": name, "error": str(loaded)})
    return sorted(out, key=lambda b: (b["name"], b["package"]))


def _origin_record(origin: plugins.Origin) -> dict[str, str]:
    return {"package": origin.package, "version": origin.version}


def load_game(name: str, players: int | None = None, **options: Any) -> Game:
    """Build a game with validated options. ``players`` defaults to the game's minimum."""
    return build_game(name, players, options)


def build_game(name: str, players: int | None, options: Mapping[str, Any]) -> Game:
    """``load_game`` with the options as one mapping, for options a user typed.

    Any key is an option name here, even ``players`` or ``name``: it is refused as an unknown
    option naming ``options.<key>`` rather than taken for an argument.
    """
    cls = game_class(name)
    gt = cls.game_type
    count = gt.min_players if players is None else players
    if isinstance(count, bool) or not isinstance(count, int):
        raise OptionError(f"players must be a whole number, not {shown(count)}", field="players")
    if not gt.min_players <= count <= gt.max_players:
        span = (
            str(gt.min_players)
            if gt.min_players == gt.max_players
            else f"{gt.min_players}–{gt.max_players}"
        )
        raise OptionError(
            f"{gt.short_name} is played by {span} players, not {count}", field="players"
        )
    clean = validate_options(gt.options, options, owner=gt.short_name, prefix="options.")
    return cls(count, clean)


def options_record(game: Game) -> dict[str, Any]:
    """The game's validated options as the JSON data a batch stores (canonical values)."""
    return {o.name: o.stored(game.options[o.name]) for o in game.game_type.options}


@cache
def _agent_types() -> dict[str, AgentType]:
    found: dict[str, AgentType] = {}
    modules = [GENERIC_AGENTS_MODULE, OPENSPIEL_AGENT_MODULE, COMPILED_MODULE]
    declared: list[AgentType] = [a for m in modules for a in importlib.import_module(m).AGENTS]
    for name in game_names():
        loaded = _loaded(name)
        if isinstance(loaded, plugins.Loaded):  # always: game_names lists loaded games only
            declared.extend(loaded.agents)
    for agent_type in declared:
        # A game's own agent may share a generic name (its tuned ``mcts``): keep both,
        # keyed by (name, games), and let ``_most_specific`` pick per game.
        found[f"{agent_type.name}@{','.join(agent_type.games or ('*',))}"] = agent_type
    return found


def _most_specific(candidates: Iterable[AgentType]) -> list[AgentType]:
    """One agent per name, sorted by name: a game's own over a generic one of the same name.

    Callers pass only agents of one game, so a game's own agent overrides the generic one for
    that game alone.
    """
    chosen: dict[str, AgentType] = {}
    for agent_type in candidates:
        current = chosen.get(agent_type.name)
        if current is None or (current.games is None and agent_type.games is not None):
            chosen[agent_type.name] = agent_type
    return sorted(chosen.values(), key=lambda a: a.name)


def agent_types(game: Game) -> list[AgentType]:
    """The agents that can play ``game`` (its player count included), one per name."""
    return _most_specific(a for a in _agent_types().values() if a.supports(game))


def game_agent_types(name: str) -> list[AgentType]:
    """The agents of game ``name`` at any player count: the generic ones and the game's own,
    one per name (the game's own where both exist)."""
    game_type = game_class(name).game_type
    return _most_specific(a for a in _agent_types().values() if a.plays(game_type))


def agent_type(game: Game, name: str, *, field: str = "agent") -> AgentType:
    for candidate in agent_types(game):
        if candidate.name == name:
            return candidate
    known = [a.name for a in agent_types(game)]
    everywhere = {a.name for a in _agent_types().values()}
    if name in everywhere:
        raise OptionError(
            f"agent {name!r} cannot play {game.name} with {game.num_players} players; "
            f"agents that can: {', '.join(known)}",
            field=field,
        )
    raise UnknownAgentError(name, game.name, known, field=field)


def normalise_agent_spec(
    game: Game, spec: str | Mapping[str, Any], *, field: str = "agent"
) -> dict[str, Any]:
    """Validate an agent spec and return it with every parameter filled in.

    A spec is ``{"name": "mcts", "iterations": 400}`` or just ``"mcts"``.
    """
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise OptionError("an agent spec needs a string 'name'", field=field)
    name = spec["name"].strip()
    atype = agent_type(game, name, field=f"{field}.name")
    given = {k: v for k, v in spec.items() if k != "name"}
    fixed = set(atype.presets) & set(given)
    if fixed:
        raise OptionError(
            f"agent {name!r} fixes {sorted(fixed)[0]!r}; use its base strategy to change it",
            field=f"{field}.{sorted(fixed)[0]}",
        )
    params = validate_options(atype.params, given, owner=f"agent {name!r}", prefix=f"{field}.")
    if atype.check is not None:
        atype.check(game, {**params, **atype.presets}, f"{field}.")
    return {"name": name, **params}


def make_agent(
    game: Game,
    spec: str | Mapping[str, Any],
    rng: random.Random | None = None,
    *,
    field: str = "agent",
) -> Agent:
    """Build a player for ``game`` from a JSON-able spec; it draws only from ``rng``."""
    full = normalise_agent_spec(game, spec, field=field)
    atype = agent_type(game, full["name"], field=f"{field}.name")
    params = {k: v for k, v in full.items() if k != "name"}
    params.update(atype.presets)
    return atype.factory(game, rng if rng is not None else random.Random(0), **params)


def _capped(agent: dict[str, Any], caps: Mapping[str, int]) -> dict[str, Any]:
    """An agent's description with each parameter's maximum lowered to the cap in force."""
    params = []
    for param in agent["params"]:
        cap = caps.get(param["name"])
        if cap is not None and param.get("maximum") is not None and param["maximum"] > cap:
            param = {**param, "maximum": cap}
        params.append(param)
    return {**agent, "params": params}


def describe_games(*, caps: Mapping[str, int]) -> list[dict[str, Any]]:
    """Games, their options, and the agents that can play them, as JSON-able data.

    ``agents`` lists every agent of the game at any player count with its parameters;
    ``agents_for_min_players`` names those that can play it with its minimum number of players;
    ``match_options`` the options every game takes beside its own (``time_control``);
    ``variation`` gives the game's default openings and player noise (``VariationDefaults``).
    ``caps`` bounds parameters by name (the settings' ``iterations``, ``nodes`` and ``depth``
    limits, which every batch is checked against): a parameter's ``maximum`` is the lower of
    its own and the cap. Every face passes them, so none lists a bound its batches refuse.
    """
    out = []
    for name in game_names():
        gt = game_class(name).game_type
        at_min = load_game(name)
        out.append(
            {
                "name": gt.short_name,
                **_origin_record(game_origin(name)),
                "long_name": gt.long_name,
                "description": gt.description,
                "players": [gt.min_players, gt.max_players],
                "chance": gt.chance,
                "perfect_information": gt.perfect_information,
                "max_game_length": gt.max_game_length,
                "variation": asdict(gt.variation),
                "options": [o.describe() for o in gt.options],
                "match_options": [clock.describe()],
                "agents": [_capped(a.describe(), caps) for a in game_agent_types(name)],
                "agents_for_min_players": [a.name for a in agent_types(at_min)],
            }
        )
    return out


def describe_spiel_games() -> list[dict[str, Any]]:
    """The OpenSpiel family (``openspiel:<name>``), listed apart from our games: each game
    with its parameters and whether it can be played (see ``engines.openspiel.spiel``)."""
    listing: list[dict[str, Any]] = _spiel_module().describe_spiel_games()
    return listing


def _spiel_module() -> Any:
    """The OpenSpiel bridge, or an ``OptionError`` on ``game`` when OpenSpiel is missing."""
    try:
        return importlib.import_module(SPIEL_MODULE)
    except ImportError as exc:
        raise OptionError(
            "OpenSpiel games need the open_spiel package; install the OpenSpiel extra: "
            "pip install -e '.[openspiel]'",
            field="game",
        ) from exc


def spec_from_text(text: str) -> dict[str, Any]:
    """Parse a command-line agent: ``mcts`` or ``mcts:iterations=400,exploration=1.2``."""
    name, _, rest = text.strip().partition(":")
    spec: dict[str, Any] = {"name": name.strip()}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            raise OptionError(
                f"agent parameter {part!r} should look like key=value", field="agents"
            )
        spec[key.strip()] = value.strip()
    return spec
