"""The 54 building tiles of Alhambra and the six building types.

The table is ``tiles.csv`` of this package (the published game's tiles: id, type, cost and a wall
on each side, N being the top of the printed tile), kept here as text so that the engine reads
no file at run time; ``tests/engines/test_alhambra_data.py`` checks that both copies agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

TYPES: Final = ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")
"""Building types in the order of the scoring table (pavilion scores least)."""
TYPE_INDEX: Final = {name: i for i, name in enumerate(TYPES)}

N, E, S, W = 1, 2, 4, 8
"""Wall bits of a tile's side mask."""
SIDES: Final = (N, E, S, W)
OPPOSITE: Final = {N: S, E: W, S: N, W: E}
SIDE_NAMES: Final = {N: "N", E: "E", S: "S", W: "W"}

FOUNTAIN: Final = 0
"""Tile id of a player's fountain (no walls, never moves)."""

TILES_CSV: Final = """\
id,type,cost,wall_n,wall_e,wall_s,wall_w
1,pavilion,2,1,1,0,1
2,pavilion,3,0,0,1,1
3,pavilion,4,0,1,1,0
4,pavilion,5,1,0,0,1
5,pavilion,6,1,0,0,0
6,pavilion,7,0,1,0,0
7,pavilion,8,0,0,0,0
8,seraglio,3,0,1,1,1
9,seraglio,4,1,1,0,0
10,seraglio,5,0,0,1,1
11,seraglio,6,0,1,1,0
12,seraglio,7,0,0,0,1
13,seraglio,8,0,0,1,0
14,seraglio,9,0,0,0,0
15,arcades,4,1,1,1,0
16,arcades,5,1,0,0,1
17,arcades,6,0,0,1,1
18,arcades,6,1,1,0,0
19,arcades,7,0,1,1,0
20,arcades,8,1,0,0,0
21,arcades,8,0,1,0,0
22,arcades,9,0,0,0,0
23,arcades,10,0,0,0,0
24,chambers,5,1,0,1,1
25,chambers,6,0,1,1,0
26,chambers,7,0,0,1,1
27,chambers,7,1,1,0,0
28,chambers,8,1,0,0,1
29,chambers,9,0,0,0,1
30,chambers,9,0,0,1,0
31,chambers,10,0,0,0,0
32,chambers,11,0,0,0,0
33,garden,6,0,1,1,1
34,garden,7,1,0,1,1
35,garden,8,0,0,1,1
36,garden,8,1,1,0,0
37,garden,8,1,0,0,1
38,garden,9,0,1,0,0
39,garden,10,1,0,0,0
40,garden,10,0,0,0,1
41,garden,10,0,0,0,0
42,garden,11,0,0,0,0
43,garden,12,0,0,1,0
44,tower,7,1,1,0,1
45,tower,8,1,1,1,0
46,tower,9,0,1,1,0
47,tower,9,1,1,0,0
48,tower,9,1,0,0,1
49,tower,10,0,0,0,1
50,tower,11,1,0,0,0
51,tower,11,0,0,1,0
52,tower,11,0,0,0,0
53,tower,12,0,0,0,0
54,tower,13,0,1,0,0
"""


@dataclass(frozen=True)
class Tile:
    """One building tile: ``walls`` is a mask of ``N``/``E``/``S``/``W`` bits."""

    id: int
    type: int
    cost: int
    walls: int

    @property
    def type_name(self) -> str:
        return TYPES[self.type]


def _parse(text: str) -> tuple[Tile, ...]:
    lines = text.strip().splitlines()
    if lines[0].split(",") != ["id", "type", "cost", "wall_n", "wall_e", "wall_s", "wall_w"]:
        raise ValueError("unexpected tile table header")
    out = []
    for line in lines[1:]:
        ident, kind, cost, *walls = line.split(",")
        mask = sum(bit for bit, flag in zip(SIDES, walls, strict=True) if flag.strip() == "1")
        out.append(Tile(int(ident), TYPE_INDEX[kind], int(cost), mask))
    return tuple(out)


TILES: Final = _parse(TILES_CSV)
NUM_TILES: Final = len(TILES)
TILE_BY_ID: Final = {t.id: t for t in TILES}
WALLS: Final = (0, *(t.walls for t in TILES))
"""Wall mask by tile id (index 0: the fountain)."""
TYPE_OF: Final = (-1, *(t.type for t in TILES))
"""Type index by tile id (-1: the fountain)."""
COST: Final = (0, *(t.cost for t in TILES))
"""Price by tile id."""
