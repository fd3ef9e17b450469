"""Which games have a compiled kernel: the one declaration that the compiled search, the
``mcts`` agent and the validation of agent specs all read.

Importing this module loads neither numba nor a kernel, so asking whether a game has one
costs nothing. A game's kernel is the module ``engines/<game>/kernel.py`` (ARCHITECTURE.md,
"A game kernel"); its id in the compiled search is its place in :data:`KERNEL_GAMES`, and
:mod:`engines.compiled.dispatch` has one branch on that id in each of its functions.
"""

from __future__ import annotations

KERNEL_GAMES: tuple[str, ...] = ("alveoles", "alquerque", "abalone", "alhambra")
"""Registry names of the games with a kernel, in the order of their ids."""
HIDDEN_GAMES: tuple[str, ...] = ("alhambra",)
"""Those whose kernels hide information (``redraw``, ``quick_score``): their compiled search is
the information-set MCTS, and the perfect-information searches refuse them."""


def has_kernel(game_name: str) -> bool:
    """Whether the game named ``game_name`` (a registry name) has a compiled kernel."""
    return game_name in KERNEL_GAMES


def kernel_id(game_name: str) -> int:
    """The id the compiled search knows a declared game's kernel by."""
    return KERNEL_GAMES.index(game_name)


def kernel_module(game_name: str) -> str:
    """The import path of a declared game's kernel module."""
    return f"engines.{game_name}.kernel"
