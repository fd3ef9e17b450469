"""Turning a request (command line or HTTP body) into a validated batch plan.

Every face builds a ``BatchRequest`` (``workers.request``: the request's one declaration, its
types and fixed bounds) and calls ``plan_batch``, which checks it against the games, the agents
and the server's limits; every error is an ``OptionError`` whose ``field`` names the offending
part of the request (``"agents[1].iterations"``, ``"options.layout"``).
Planning only validates: it never plays a match, so a request costs the same whatever its
agents. Chunk sizes are left to the runner, which measures the batch's own first chunk
(``workers.sizing``) unless the request fixes ``chunk_size``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from analysis.stopping import SprtRule, StopRule
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
from engines.seating import BALANCED, FIXED, SeatPolicy, seat_swapped_pairs
from engines.variation import NOISE, NONE, OPENINGS, offers_root_values, parse_variation
from storage.models import AUTO_CHUNK_SIZE, BatchPlan, new_batch_id
from storage.settings import Settings
from storage.usertext import unstorable_field
from workers.native_games import is_native, plan_isolated
from workers.request import MAX_CHUNK_SIZE, MAX_SEED, BatchRequest, build_request

__all__ = ["MAX_CHUNK_SIZE", "MAX_SEED", "BatchRequest", "plan_batch", "plan_here"]

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


def _within(value: int, name: str, low: int, high: int) -> int:
    """``value`` (a whole number: the request's type) within a server's bound."""
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


def _seed(seed: int | None) -> int:
    """The batch seed asked for, else a fresh random one."""
    return random.SystemRandom().getrandbits(63) if seed is None else seed


def _seat_policy(policy: SeatPolicy | None, specs: Sequence[Mapping[str, Any]]) -> str:
    """The seat policy asked for; by default ``fixed`` when every seat has the same agent (seat
    balance is what is measured), else ``balanced``."""
    if policy is None:
        policy = SeatPolicy(FIXED if all(s == specs[0] for s in specs) else BALANCED)
    return policy.value


def _check_seats_for_rule(rule: StopRule | None, policy: str) -> None:
    """Refuse an SPRT on fixed seats: it compares two agents, and with each always in the
    same seat their difference is the seats' as much as theirs. (A precision stop measures one
    figure, which the report labels when seats are in it.)"""
    if isinstance(rule, SprtRule) and policy == FIXED:
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


def _max_plies(max_plies: int | None, game: Game, settings: Settings) -> int:
    """The ply cap asked for, else the game's own, within ``MAX_PLIES``; and within
    ``MAX_MATCH_CHARS`` of positions (plies times the start's text), so that a match's replay
    stays bounded."""
    asked = max_plies is not None
    if max_plies is None:
        max_plies = min(game.game_type.max_game_length, settings.max_plies)
    cap = _within(max_plies, "max_plies", 1, settings.max_plies)
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


def _chunk_size(chunk_size: int | None) -> int:
    """The fixed chunk size asked for, else ``AUTO_CHUNK_SIZE`` (the runner sizes chunks from
    the batch's own first chunks)."""
    return AUTO_CHUNK_SIZE if chunk_size is None else chunk_size


def plan_batch(
    request: BatchRequest | None = None, /, *, settings: Settings, **fields: Any
) -> BatchPlan:
    """Validate a batch request through the engine registry and return the plan to store.

    The request is a ``BatchRequest``, or its fields as keywords (``plan_batch(settings=...,
    game=..., agents=..., matches=...)``; a key it does not have is a ``TypeError``).
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
    if request is None:
        request = build_request(fields)
    elif fields:
        raise TypeError("give a BatchRequest or its fields as keywords, not both")
    if not is_native(request.game):
        return plan_here(request, settings)
    # The seed is drawn here, so that the same request planned twice is one check.
    fixed = _seed(request.seed)
    plan = plan_isolated({**request.model_dump(mode="json"), "seed": 0}, settings)
    # A remembered plan is a copy with its own id.
    return plan.model_copy(update={"seed": fixed, "id": new_batch_id()})


def plan_here(request: BatchRequest | Mapping[str, Any], settings: Settings) -> BatchPlan:
    """``plan_batch`` in this process: ``request`` is a ``BatchRequest`` or its fields."""
    asked = build_request(request)
    agents = asked.agents
    _check_storable(
        game=asked.game,
        options=asked.options,
        agents=agents,
        stop_rule=None if asked.stop_rule is None else asked.stop_rule.request_json(),
        variation=asked.variation,
    )
    players = asked.players
    if players is None and len(agents) > 1:
        players = len(agents)
    options, time_control = _time_control(asked.options)
    the_game = build_game(asked.game, players, options)
    specs = _seat_specs(the_game, agents, settings)
    labels = unique_labels([_short_label(the_game, s) for s in specs])
    # Each check raises at once: a request with several mistakes is told of the first one here.
    matches = _within(asked.matches, "matches", 1, settings.max_matches_per_batch)
    seed = _seed(asked.seed)
    policy = _seat_policy(asked.seat_policy, specs)
    max_plies = _max_plies(asked.max_plies, the_game, settings)
    chunk_size = _chunk_size(asked.chunk_size)
    rule = None if asked.stop_rule is None else asked.stop_rule.validate(labels)
    _check_seats_for_rule(rule, policy)
    varied = _variation(asked.variation, the_game, specs, labels)
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
        stop_rule=None if rule is None else rule.to_json(),
        variation=varied,
    )
