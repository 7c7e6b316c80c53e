"""Resolution of what models call: tool names (`names`) and argument names (`arguments`), safely."""

from mcpmanager.core.resolve.names import NameResolver, Resolution

__all__ = ["NameResolver", "Resolution"]
