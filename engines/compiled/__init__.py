"""The agents built on the compiled search core: ``mcts`` (a UCT search over the game's numba
kernel where it has one, else the Python search), ``alphabeta`` (likewise, for two players
with perfect information), Les Alvéoles' ``expert`` and ``master``, Abalone's ``alphabeta``
(with its evaluation's weights), ``expert`` and ``master``, Alhambra's information-set
``mcts`` and ``expert`` (:mod:`engines.compiled.levels_alhambra`), and Alquerque's ``expert`` and
``master``.

Each module's role is the first word of its name:

- ``kernels``: which games have a kernel, and which of them hide information (the one
  declaration; loads no numba);
- ``dispatch`` and ``dispatch_alphabeta``: a game's kernel functions by its id, for every search
  and for the alpha-beta alone;
- ``search_uct``, ``search_ismcts``, ``search_negamax``: the compiled searches, and
  ``search_parts``, what they share (the Monte Carlo tree, playouts, clock checks, copies);
- ``agent_base`` (:class:`~engines.compiled.agent_base.CompiledAgent`: kernel, generator, timer,
  ``preload``), ``agent_mcts``, ``agent_ismcts``, ``agent_alphabeta``: the searches behind the
  agent contract;
- ``choose_mcts``, ``choose_alphabeta``: the generic ``mcts`` and ``alphabeta`` agents, which
  choose the compiled search or the Python one;
- ``levels_alveoles``, ``levels_abalone``, ``levels_alhambra``, ``levels_alquerque``: each
  game's own agents built on the compiled searches;
- ``warm``: fills numba's cache (``python -m engines.compiled.warm``).

numba is loaded only when a compiled agent is first made (the ``choose_`` and ``levels_``
modules import the ``agent_`` ones inside their factories), so a process that never uses one
(the CLI listing games, a worker playing other agents) starts without it.
"""

from __future__ import annotations

from engines.compiled import levels_abalone, levels_alhambra, levels_alquerque, levels_alveoles
from engines.compiled.choose_alphabeta import ALPHABETA
from engines.compiled.choose_mcts import MCTS
from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = (
    *(MCTS, ALPHABETA, levels_alveoles.EXPERT, levels_alveoles.MASTER),
    *(levels_abalone.ALPHABETA, levels_abalone.EXPERT, levels_abalone.MASTER),
    *(levels_alhambra.MCTS, levels_alhambra.EXPERT),
    *(levels_alquerque.EXPERT, levels_alquerque.MASTER),
)

__all__ = ["AGENTS"]
