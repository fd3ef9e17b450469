"""Alhambra's own computer players (none yet: the generic ones play it)."""

from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = ()
