"""The config as mcpmanager holds it: typed, validated, and carrying its JSON document.

One JSON document, Claude-Desktop compatible at the top (`mcpServers`), mcpmanager's own sections
(`tools`, `synonyms`, `proxy`, `supervisor`) beside it. The parsed document is kept in
`Config.document`, and every `with_*` change writes itself into a copy of it, so keys mcpmanager does
not know survive a save.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mcpmanager.core.config.document import write_document
from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings, is_tool_key


@dataclass(frozen=True)
class Config:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    tools: dict[str, ToolSettings] = field(default_factory=dict)
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    proxy: ProxySettings = field(default_factory=ProxySettings)
    supervisor: SupervisorSettings = field(default_factory=SupervisorSettings)
    # The whole JSON document, unknown keys included. Derived from the fields above plus what was
    # read, so it takes no part in equality.
    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def with_server(self, server: ServerConfig) -> Config:
        """Add `server`, or replace the one of the same name in its place."""
        return self._changed(servers={**self.servers, server.name: server})

    def without_server(self, name: str) -> Config:
        """Remove a server (KeyError if absent); its tool settings stay for when it comes back."""
        if name not in self.servers:
            raise KeyError(name)
        return self._changed(servers={k: v for k, v in self.servers.items() if k != name})

    def with_servers(self, servers: dict[str, ServerConfig], tools: dict[str, ToolSettings]) -> Config:
        """Every server and tool setting at once (a rename moves a server's settings with it)."""
        return self._changed(servers=dict(servers), tools=dict(tools))

    def with_tool_settings(self, key: str, settings: ToolSettings) -> Config:
        if not is_tool_key(key):
            raise ValueError(f"tool settings key must be 'server:tool', got {key!r}")
        return self._changed(tools={**self.tools, key: settings})

    def enabled_servers(self) -> list[ServerConfig]:
        return [server for server in self.servers.values() if not server.disabled]

    def to_document(self) -> dict[str, Any]:
        """The document with the typed fields written in (what saving writes)."""
        return write_document(self.document, self.servers, self.tools, self.synonyms, self.proxy, self.supervisor)

    def _changed(self, **changes: Any) -> Config:
        config = replace(self, **changes)
        return replace(config, document=config.to_document())


class ConfigError(ValueError):
    """An unreadable or invalid config file. str() is one line: `<file>[:line:col]: [key.path: ]reason`."""

    def __init__(
        self, source: str, reason: str, *, key: str = "", line: int | None = None, column: int | None = None
    ) -> None:
        self.source, self.reason, self.key, self.line, self.column = source, reason, key, line, column
        where = source if line is None else f"{source}:{line}:{column}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")
