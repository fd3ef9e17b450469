from engines.core import AgentType

AGENTS: tuple[AgentType, ...] = ()
