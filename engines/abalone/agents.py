"""Abalone computer players (placeholder list while the levels are written)."""

from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = ()
