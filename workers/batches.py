"""Turning a request (command line or HTTP body) into a validated batch plan.

Both user interfaces call ``plan_batch``; every error is an ``OptionError`` whose ``field``
names the offending part of the request (``"agents[1].iterations"``, ``"options.layout"``).
Planning only validates: it never plays a match, so a request costs the same whatever its
agents. Chunk sizes are left to the runner, which measures the batch's own first chunk
(``workers.sizing``) unless the request fixes ``chunk_size``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypedDict, Unpack, cast

from engines.clock import FIELD as TIME_CONTROL_FIELD
from engines.clock import parse_time_control
from engines.core import Game, OptionError, agent_label
from engines.registry import (
    agent_type,
    build_game,
    make_agent,
    normalise_agent_spec,
    options_record,
    spec_from_text,
)
from engines.seating import BALANCED, FIXED, POLICIES, SeatPolicy, seat_swapped_pairs
from engines.variation import NOISE, NONE, OPENINGS, offers_root_values, parse_variation
from storage.models import AUTO_CHUNK_SIZE, BatchPlan, new_batch_id
from storage.settings import Settings
from storage.usertext import unstorable_field
from workers.native_games import is_native, plan_isolated

MAX_SEED = 2**63 - 1
MAX_CHUNK_SIZE = 5000
MAX_MATCH_CHARS = 20_000_000
"""Most characters of positions one match may replay: its plies times its start's text."""
STOP_RULE_CHECK_EVERY = 200
"""With a stop rule, chunks hold at most this many matches (or 1 % of the batch if fewer)."""


def stop_rule_chunk_cap(matches: int, *, pairs: bool = False) -> int:
    """Largest chunk of a batch of ``matches`` that carries a stop rule.

    The rule is checked after every chunk, so chunks stay at ``min(200, 1 % of the batch)``
    matches (at least 1). ``pairs``: two players with seat-swapped pairs (matches 2k, 2k+1),
    where chunks hold whole pairs: the cap is rounded down to an even number, at least 2.
    """
    cap = min(STOP_RULE_CHECK_EVERY, max(1, matches // 100))
    if pairs:
        cap = max(2, cap - cap % 2)
    return cap


def stop_rule_chunk_size(chunk_size: int, matches: int, *, pairs: bool) -> int:
    """``chunk_size`` cut to ``stop_rule_chunk_cap``; even (at least 2) for seat-swapped pairs,
    so that a pair never straddles two chunks and each chunk's counts hold whole pairs."""
    size = min(chunk_size, stop_rule_chunk_cap(matches, pairs=pairs))
    if pairs:
        size = max(2, size - size % 2)
    return size


def _short_label(game: Game, spec: Mapping[str, Any]) -> str:
    """``agent_label`` of the spec without parameters left at their defaults."""
    defaults = {p.name: p.default for p in agent_type(game, spec["name"]).params}
    shown = {k: v for k, v in spec.items() if k == "name" or defaults.get(k, object()) != v}
    return agent_label(shown)


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Labels made unique in order: the second ``random`` becomes ``random#2``."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def _whole(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"{name} must be a whole number, not {value!r}", field=name)
    if not low <= value <= high:
        raise OptionError(f"{name} must be between {low} and {high}, not {value}", field=name)
    return value


def _check_storable(**parts: Any) -> None:
    """Refuse text no column can store (a NUL, a lone surrogate) anywhere in the request, by
    the field that holds it, before any check echoes it or a query sends it."""
    for name, value in parts.items():
        where = unstorable_field(value, name)
        if where is not None:
            raise OptionError(
                f"{where} holds a character that cannot be stored (a NUL or a lone surrogate)",
                field=where,
            )


def _check_budgets(spec: Mapping[str, Any], field: str, settings: Settings) -> None:
    """Refuse agent budgets (iterations, nodes, depth) above the server's bounds."""
    for name, bound in settings.agent_budget_limits.items():
        value = spec.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > bound:
            raise OptionError(
                f"{field}.{name} must be at most {bound} (MAX_AGENT_{name.upper()}), not {value}",
                field=f"{field}.{name}",
            )


def _options_record(game: Game) -> dict[str, Any]:
    """Options as stored: every declared option's validated value, in canonical form."""
    record = options_record(game)
    try:
        json.dumps(record, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"options must be JSON data: {exc}", field="options") from exc
    return record


def _check_stop_rule(rule: Any, labels: list[str]) -> dict[str, Any]:
    # Imported here: NumPy and SciPy load only for batches that carry a stop rule.
    from analysis.sprt import validate_stop_rule

    return validate_stop_rule(rule, labels)


def _seat_specs(
    game: Game, agents: Sequence[str | Mapping[str, Any]], settings: Settings
) -> list[dict[str, Any]]:
    """One validated agent spec per seat: ``agents`` gives one per seat, or one for them all."""
    n = game.num_players
    if len(agents) not in (1, n):
        raise OptionError(
            f"{game.name} with {n} players needs 1 or {n} agents, got {len(agents)}",
            field="agents",
        )
    specs = []
    for i, raw in enumerate(agents):
        spec = spec_from_text(raw) if isinstance(raw, str) else raw
        specs.append(normalise_agent_spec(game, spec, field=f"agents[{i}]"))
        _check_budgets(specs[-1], f"agents[{i}]", settings)
    if len(specs) == 1:
        specs = [dict(specs[0]) for _ in range(n)]
    return specs


def _seed(seed: Any) -> int:
    """The batch seed asked for, else a fresh random one."""
    if seed is None:
        seed = random.SystemRandom().getrandbits(63)
    return _whole(seed, "seed", 0, MAX_SEED)


def _seat_policy(policy: str | None, specs: Sequence[Mapping[str, Any]]) -> str:
    """The seat policy asked for; by default ``fixed`` when every seat has the same agent (seat
    balance is what is measured), else ``balanced``."""
    if policy is None:
        policy = FIXED if all(s == specs[0] for s in specs) else BALANCED
    if policy not in POLICIES:
        raise OptionError(
            f"seat_policy must be one of {', '.join(POLICIES)}, not {policy!r}",
            field="seat_policy",
        )
    return SeatPolicy(policy).value


def _check_seats_for_rule(rule: dict[str, Any] | None, policy: str) -> None:
    """Refuse an SPRT on fixed seats: it compares two agents, and with each always in the
    same seat their difference is the seats' as much as theirs. (A precision stop measures one
    figure, which the report labels when seats are in it.)"""
    if rule is not None and rule.get("type") == "sprt" and policy == FIXED:
        raise OptionError(
            "a stop rule compares two agents, but with seat_policy fixed each agent keeps its "
            "seat, so a seat's advantage would pass for strength; use seat_policy balanced",
            field="seat_policy",
        )


def _searches(game: Game, spec: Mapping[str, Any]) -> bool:
    """Whether the agent of ``spec`` offers root values (player noise can move it)."""
    return offers_root_values(make_agent(game, spec, random.Random(0)))


def _variation(
    raw: Mapping[str, Any] | None,
    game: Game,
    specs: Sequence[Mapping[str, Any]],
    labels: Sequence[str],
) -> dict[str, Any]:
    """The variation to store: the one asked for, else the one the question needs. Different
    agents are being compared: random openings of the game's length, one per round. One agent
    in every seat measures the game itself, which a forced opening would change: player noise
    when that agent offers root values, else none."""
    default = raw is None
    if raw is None:
        if any(s != specs[0] for s in specs):
            raw = {"kind": OPENINGS}
        else:
            raw = {"kind": NOISE if _searches(game, specs[0]) else NONE}
    variation = parse_variation(raw, game)
    if variation.kind == NOISE:
        pairs = zip(specs, labels, strict=True)
        noised = tuple(label for spec, label in pairs if _searches(game, spec))
        variation = replace(variation, noised=noised)
    return replace(variation, default=default).record()


def _max_plies(max_plies: Any, game: Game, settings: Settings) -> int:
    """The ply cap asked for, else the game's own, within ``MAX_PLIES``; and within
    ``MAX_MATCH_CHARS`` of positions (plies times the start's text), so that a match's replay
    stays bounded."""
    asked = max_plies is not None
    if max_plies is None:
        max_plies = min(game.game_type.max_game_length, settings.max_plies)
    cap = _whole(max_plies, "max_plies", 1, settings.max_plies)
    plies = min(cap, game.game_type.max_game_length)
    chars = len(str(game.new_initial_state(0)))
    if plies * chars > MAX_MATCH_CHARS:
        field = "max_plies" if asked and cap == plies else "options"
        raise OptionError(
            f"{game.name} with these options and {plies:,} plies would replay "
            f"{plies * chars:,} characters of positions ({chars:,} a position), over the "
            f"{MAX_MATCH_CHARS:,} allowed; ask for fewer max_plies or a smaller board",
            field=field,
        )
    return cap


TIME_CONTROL = "time_control"
"""The match option every game takes beside its own: the players' clocks
(``engines.clock``). A request gives it among the options (``options.time_control``); the
batch stores it apart (``BatchBase.time_control``), since the game's rules never see it."""


def _time_control(options: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The game's own options, and the canonical time control asked for among them."""
    if TIME_CONTROL not in options:
        return dict(options), None
    rest = {k: v for k, v in options.items() if k != TIME_CONTROL}
    control = parse_time_control(options[TIME_CONTROL], field=TIME_CONTROL_FIELD)
    return rest, None if control is None else control.text


def _chunk_size(chunk_size: Any) -> int:
    """The fixed chunk size asked for, else ``AUTO_CHUNK_SIZE`` (the runner sizes chunks from
    the batch's own first chunks)."""
    if chunk_size is None:
        return AUTO_CHUNK_SIZE
    return _whole(chunk_size, "chunk_size", 1, MAX_CHUNK_SIZE)


class _LeftOutAsNone(TypedDict, total=False):
    """The keys of a batch request that may be left out, as None."""

    stop_rule: Mapping[str, Any] | None
    variation: Mapping[str, Any] | None


class BatchRequest(_LeftOutAsNone):
    """A batch request: ``plan_batch``'s keywords but ``settings``, and what a child process
    plans (``plan_here``). The faces build one from a ``POST /batches`` body, the command
    line's options or a study file's keys."""

    game: str
    players: int | None
    options: Mapping[str, Any]
    agents: Sequence[str | Mapping[str, Any]]
    matches: int
    seed: int | None
    seat_policy: str | None
    chunk_size: int | None
    max_plies: int | None


def _whole_request(given: Mapping[str, Any]) -> BatchRequest:
    """``given`` with every key of ``BatchRequest``, those left out as None. A key it lacks or
    does not know is a ``TypeError``, as a missing or unknown keyword would be."""
    unknown = sorted(given.keys() - BatchRequest.__annotations__.keys())
    if unknown:
        raise TypeError(f"a batch request has no key {', '.join(unknown)}")
    missing = sorted(BatchRequest.__required_keys__ - given.keys())
    if missing:
        raise TypeError(f"a batch request lacks {', '.join(missing)}")
    whole = dict.fromkeys(BatchRequest.__optional_keys__) | dict(given)
    return cast(BatchRequest, whole)


def plan_batch(*, settings: Settings, **request: Unpack[BatchRequest]) -> BatchPlan:
    """Validate a batch request through the engine registry and return the plan to store.

    ``players`` None means the number of agents given when more than one, else the game's
    minimum. One agent for an n-player game sits in every seat; otherwise one spec per seat.
    Limits come from ``settings`` (the API passes its app's, the command line the
    environment's). ``chunk_size`` None leaves chunk sizing to the runner (``AUTO_CHUNK_SIZE``).
    ``variation`` None takes the default for the agents given (see ``_variation``); the
    stored plan always holds one. ``options`` may hold the match option ``time_control``
    (``"60+1"``), which every game takes: it is validated here and stored apart.

    A game with native code (OpenSpiel) is planned in a child process
    (``workers.native_games``): whatever its parameters do there, this process only sees an
    ``OptionError``.
    """
    whole = _whole_request(request)
    if not is_native(whole["game"]):
        return plan_here(whole, settings)
    # The seed is drawn here, so that the same request planned twice is one check.
    fixed = _seed(whole["seed"])
    plan = plan_isolated({**whole, "seed": 0}, settings)
    # A remembered plan is a copy with its own id.
    return plan.model_copy(update={"seed": fixed, "id": new_batch_id()})


def plan_here(request: Mapping[str, Any], settings: Settings) -> BatchPlan:
    """``plan_batch`` in this process: ``request`` holds its keywords but ``settings``."""
    whole = _whole_request(request)
    agents = whole["agents"]
    if not agents:
        raise OptionError("give at least one agent", field="agents")
    _check_storable(
        game=whole["game"],
        options=whole["options"],
        agents=agents,
        stop_rule=whole["stop_rule"],
        variation=whole["variation"],
    )
    players = whole["players"]
    if players is None and len(agents) > 1:
        players = len(agents)
    options, time_control = _time_control(whole["options"])
    the_game = build_game(whole["game"], players, options)
    specs = _seat_specs(the_game, agents, settings)
    labels = unique_labels([_short_label(the_game, s) for s in specs])
    # Each check raises at once: a request with several mistakes is told of the first one here.
    matches = _whole(whole["matches"], "matches", 1, settings.max_matches_per_batch)
    seed = _seed(whole["seed"])
    policy = _seat_policy(whole["seat_policy"], specs)
    max_plies = _max_plies(whole["max_plies"], the_game, settings)
    chunk_size = _chunk_size(whole["chunk_size"])
    stop_rule = whole["stop_rule"]
    rule = None if stop_rule is None else _check_stop_rule(stop_rule, labels)
    _check_seats_for_rule(rule, policy)
    varied = _variation(whole["variation"], the_game, specs, labels)
    if rule is not None and chunk_size != AUTO_CHUNK_SIZE:
        n = the_game.num_players
        chunk_size = stop_rule_chunk_size(chunk_size, matches, pairs=seat_swapped_pairs(n, policy))
    return BatchPlan(
        game=the_game.name,
        players=the_game.num_players,
        options=_options_record(the_game),
        agents=specs,
        labels=labels,
        matches=matches,
        seed=seed,
        seat_policy=policy,
        chunk_size=chunk_size,
        max_plies=max_plies,
        time_control=time_control,
        stop_rule=rule,
        variation=varied,
    )
