"""mcpmanager: a desktop manager and discovery proxy for MCP servers."""

__version__ = "0.1.0"
