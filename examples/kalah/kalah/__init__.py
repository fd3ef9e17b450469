"""Kalah for playtester: the module the entry point ``kalah`` names."""

from engines.contract import LadderDeclaration
from kalah.rules import KalahGame, KalahState
from kalah.solver import PERFECT

CONTRACT_VERSION = 1
GAME = KalahGame
AGENTS = (PERFECT,)
RENDER_BOARD = "kalah.board:render"
"""The replay page's board (kalah/board.py), imported only when a board is drawn."""

LADDER = LadderDeclaration(
    levels=("random", "mcts:iterations=100", "mcts:iterations=1000", "alphabeta", "perfect"),
    reference="random",
    games=200,
    options={"houses": 4, "seeds": 3, "empty_capture": True},
)
"""The strength ladder: the players of studies/kalah.toml, weakest first as expected, on one
board, 4 houses of 3 seeds with empty_capture (the largest of the study's boards, and the one
where it sets MCTS against exact play). One ladder, not one a board: a study page shows one
game's ladder, and the order of these players does not hinge on the board."""

__all__ = [
    "AGENTS",
    "CONTRACT_VERSION",
    "GAME",
    "LADDER",
    "RENDER_BOARD",
    "KalahGame",
    "KalahState",
]
