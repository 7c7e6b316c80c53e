"""The servers of the config file (`mcpServers`): a command to run (stdio) or a URL to reach."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from mcpmanager.core.config.secrets import MASK, Masker, config_secrets, mask_arguments

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
class OAuthSettings:
    """A remote server's `"oauth"`: a client registered beforehand with the authorization server
    (without one, mcpmanager registers itself), the scopes to ask for, a fixed redirect port."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)  # best a `${keyring:NAME}` reference
    scopes: tuple[str, ...] = ()
    redirect_port: int | None = None  # for a client registered with one redirect URI; None: any free port

    def document(self, old: dict[str, object]) -> dict[str, object]:
        """As the config file spells it, over `old` (its keys this version does not know survive)."""
        known = {
            "clientId": self.client_id,
            "clientSecret": self.client_secret,
            "scopes": list(self.scopes) or None,
            "redirectPort": self.redirect_port,
        }
        return {key: value for key, value in {**old, **known}.items() if value is not None}


@dataclass(frozen=True)
class HttpServerConfig:
    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # tokens: keep them out of logs
    disabled: bool = False
    transport: HttpTransport = "http"  # "http" is Streamable HTTP
    start_timeout: float | None = None
    roots: list[str] | None = None
    oauth: OAuthSettings | None = None  # None: OAuth only if the server asks for it (a 401)


ServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig


def secret_values(server: ServerConfig) -> list[str]:
    """What a log, a pane or an error must never show, by the one rule (`secrets.py`): values of env
    variables and headers named as secrets, secrets among the arguments and in the URL."""
    if isinstance(server, StdioServerConfig):
        found = config_secrets(env=server.env, args=server.args)
    else:
        found = config_secrets(headers=server.headers, url=server.url)
        if server.oauth is not None and server.oauth.client_secret:
            found.add(server.oauth.client_secret)
    return sorted(found)


def masker(server: ServerConfig) -> Masker:
    """Masks `server`'s secrets in any text: its own values, and whatever has a secret's shape."""
    return Masker(secret_values(server))


def shown_command(server: ServerConfig) -> str:
    """The server's command line (or its transport and URL) as the window shows it, secrets masked."""
    if isinstance(server, HttpServerConfig):
        return f"{server.transport.upper()} {masker(server)(server.url)}"
    return " ".join(map(_shell_word, [server.command, *mask_arguments(server.args, masker(server))]))


_STAND_IN = "MCPMANAGERMASK"  # shell-safe, so a mask alone does not make its argument need quotes


def _shell_word(arg: str) -> str:
    """`arg` quoted as a shell would need it, where "***" reads as a mask, not as a glob."""
    return shlex.quote(arg.replace(MASK, _STAND_IN)).replace(_STAND_IN, MASK)
