"""Which server a client's entry is: the same server as one of mcpmanager's (`same_definition`),
one mcpmanager already serves (`served_by`, for `install --disable-served`), or mcpmanager's own
entry (`is_bridge`, never imported or exported)."""

from __future__ import annotations

import re
from dataclasses import replace

from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig

BRIDGE_NAME = "mcpmanager"  # the name of mcpmanager's entry in a client's config


def same_definition(a: ServerConfig, b: ServerConfig) -> bool:
    """The same server whatever it is called: what starts or reaches it is equal. `disabled` and
    `startTimeout` are about how mcpmanager runs it, not which server it is."""
    return type(a) is type(b) and _essence(a) == _essence(b)


def _essence(server: ServerConfig) -> ServerConfig:
    return replace(server, name="", disabled=False, start_timeout=None)


def served_by(server: ServerConfig, config: Config) -> str | None:
    """The enabled mcpmanager server that serves what this client server is, or None.

    The same definition under any name, or the same name starting the same thing (command and
    arguments, or URL): a token filled in later in mcpmanager (a VS Code `${input:…}`, an envFile)
    leaves the same server behind a different environment or headers."""
    enabled = [mine for mine in config.servers.values() if not mine.disabled]
    for mine in enabled:
        if same_definition(mine, server):
            return mine.name
    for mine in enabled:
        if mine.name == server.name and type(mine) is type(server) and _target(mine) == _target(server):
            return mine.name
    return None


def _target(server: ServerConfig) -> tuple[str, ...]:
    if isinstance(server, StdioServerConfig):
        return (server.command, *server.args)
    return (server.transport, server.url)


def is_bridge(server: ServerConfig) -> bool:
    """mcpmanager's own entry: the name it installs under, or a command line that runs mcpmanager."""
    if not isinstance(server, StdioServerConfig):
        return False
    if server.name == BRIDGE_NAME:
        return True
    program = re.split(r"[\\/]", server.command)[-1]  # a Windows path read anywhere
    words = [program.lower(), *(arg.lower() for arg in server.args)]
    runs_us = any(word.removesuffix(".exe") == "mcpmanager" for word in words)
    return runs_us and any(word in ("connect", "serve") for word in words)
