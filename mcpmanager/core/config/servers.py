"""The servers of the config file (`mcpServers`): a command to run (stdio) or a URL to reach."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

HttpTransport = Literal["http", "sse"]

# Accepted "type" values (Claude Desktop, VS Code and Cursor spellings) → transport.
SERVER_TYPES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
TRANSPORT_KEYS = ("type", "command", "args", "env", "cwd", "url", "headers")


@dataclass(frozen=True)
class StdioServerConfig:
    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict, repr=False)  # tokens: keep them out of logs
    cwd: str | None = None
    disabled: bool = False
    start_timeout: float | None = None  # None: the supervisor's startTimeout
    roots: list[str] | None = None  # what the server is told its roots are; None: the clients' roots


@dataclass(frozen=True)
class HttpServerConfig:
    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # tokens: keep them out of logs
    disabled: bool = False
    transport: HttpTransport = "http"  # "http" is Streamable HTTP
    start_timeout: float | None = None
    roots: list[str] | None = None


ServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig


def secret_values(server: ServerConfig) -> list[str]:
    """What a log, a pane or an error must never show: environment and header values."""
    if isinstance(server, StdioServerConfig):
        return list(server.env.values())
    return list(server.headers.values())
