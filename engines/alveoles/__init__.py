"""Les Alvéoles: rules (``GAME``) and its own computer players (``AGENTS``)."""

from engines.alveoles.rules import Alveoles, AlveolesState
from engines.core import AgentType

GAME = Alveoles
AGENTS: tuple[AgentType, ...] = ()

__all__ = ["AGENTS", "GAME", "Alveoles", "AlveolesState"]
