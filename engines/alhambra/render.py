"""The state as text (for ``playtester replay`` and error messages) and its ``stats()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.alhambra import building, flow
from engines.alhambra.money import CURRENCIES, card_name, currency_of, value_of
from engines.alhambra.table import ACTION, FINAL, OVER
from engines.alhambra.tiles import COST, SIDE_NAMES, SIDES, TYPE_OF, TYPES, WALLS

if TYPE_CHECKING:
    from engines.alhambra.table import AlhambraTable


def tile_label(tile: int) -> str:
    """``23A`` (id and type letter) or ``F`` for the fountain."""
    if tile == 0:
        return "F"
    return f"{tile}{TYPES[TYPE_OF[tile]][0].upper()}"


def walls_label(tile: int) -> str:
    walls = WALLS[tile]
    return "".join(SIDE_NAMES[s] for s in SIDES if walls & s) or "-"


def grid_lines(state: AlhambraTable, seat: int) -> list[str]:
    """The Alhambra as rows (north on top): each cell ``id+type letter/walls``."""
    layout = state.alhambra(seat)
    xs = [x for x, _ in layout]
    ys = [y for _, y in layout]
    lines = []
    for y in range(max(ys), min(ys) - 1, -1):
        cells = []
        for x in range(min(xs), max(xs) + 1):
            tile = layout.get((x, y))
            cells.append("." if tile is None else f"{tile_label(tile)}/{walls_label(tile)}")
        lines.append(f"    y={y:>3}: " + " ".join(f"{c:<9}" for c in cells))
    lines.append(f"    x from {min(xs)} to {max(xs)}")
    return lines


def text(state: AlhambraTable) -> str:
    n = state.players
    if state.phase == OVER:
        status = "game over"
    elif state.phase == ACTION:
        status = f"seat {state.player} to act"
    elif state.phase == FINAL:
        status = f"seat {state.player} places end-of-game tiles"
    else:
        status = f"seat {state.player} places bought tiles"
    market = ", ".join(
        f"{CURRENCIES[s]}: " + (f"{tile_label(t)} ({COST[t]})" if t else "empty")
        for s, t in enumerate(state.market)
    )
    lines = [
        f"Alhambra, {n} players; {status}; turn {state.turns + 1}; start seat {state.start}",
        f"  market: {market}",
        "  display: " + (" ".join(card_name(c) for c in state.display) or "empty"),
        f"  bag {len(state.bag)} tiles; deck {len(state.deck)} cards; spent {len(state.discard)}",
    ]
    if state.pending:
        lines.append("  to place: " + " ".join(tile_label(t) for t in state.pending))
    if state.has_collector:
        counts = [0] * len(TYPES)
        for tile in state.collector_tiles:
            counts[TYPE_OF[tile]] += 1
        lines.append(f"  collector: {counts} points {sum(state.collector_points)}")
    scores = state.scores()
    for seat in range(n):
        hand = " ".join(card_name(c) for c in state.hands[seat])
        reserve = " ".join(tile_label(t) for t in state.reserves[seat]) or "-"
        lines.append(
            f"  seat {seat}: {scores[seat]:g} points; types {state.type_counts(seat)}; "
            f"reserve {reserve}; hand {hand or '-'}"
        )
        lines.extend(grid_lines(state, seat))
    return "\n".join(lines)


def _by_type(tiles: list[int]) -> dict[str, int]:
    out = dict.fromkeys(TYPES, 0)
    for tile in tiles:
        if tile:
            out[TYPES[TYPE_OF[tile]]] += 1
    return out


def stats(state: AlhambraTable) -> dict[str, Any]:
    """Per seat: turn position, points per round (majorities, walls), tiles by type in the
    Alhambra and the reserve, longest wall, money left, exact purchases. Per game: turns, the
    start seat, the scorings held, the scoring cards never drawn (``missed_scorings``: skipped
    or, under ``before_final``, scored just before the last scoring) and (two players) the
    collector's points per round and tiles by type."""
    per_seat = []
    for seat in range(state.players):
        hand = state.hands[seat]
        rounds = state.round_points[seat]
        per_seat.append(
            {
                "turn_position": state.turn_position(seat),
                "points": sum(m + w for m, w in rounds),
                "rounds": [{"majorities": m, "walls": w} for m, w in rounds],
                "tiles_by_type": _by_type(list(state.grids[seat].values())),
                "reserve_by_type": _by_type(state.reserves[seat]),
                "longest_wall": building.longest_wall(state.grids[seat]),
                "money_left": sum(value_of(c) for c in hand),
                "money_cards": len(hand),
                "money_by_currency": {
                    cur: sum(value_of(c) for c in hand if currency_of(c) == i)
                    for i, cur in enumerate(CURRENCIES)
                },
                "exact_purchases": state.exact[seat],
            }
        )
    out: dict[str, Any] = {
        "per_seat": per_seat,
        "turns": state.turns,
        "start_seat": state.start,
        "scorings": state.scorings,
        "missed_scorings": len(flow.missed_cards(state)) if state.phase == OVER else 0,
    }
    if state.has_collector:
        out["collector"] = {
            "points": sum(state.collector_points),
            "rounds": list(state.collector_points),
            "tiles_by_type": _by_type(state.collector_tiles),
        }
    return out
