"""The MCP servers a user's clients already have, read from the clients' own config files (read only).

Where each client keeps them: `locations`. Each file is read by its layout's dialect (`dialects`),
text in, servers and problems out: JSON and JSONC by `json_reading` (the rules of each client's
keys are there), Codex's TOML by `codex_toml` (with `tomllib`), Goose's and Continue's YAML by
`goose` and `continue_yaml` (PyYAML's safe loader, YAML 1.2 types). A file that does not parse gives
one problem with its line and column; one that cannot be read or is not UTF-8 text gives one problem
too. An empty file is no servers and no problem (VS Code starts settings.json empty).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpmanager.core.clients.dialects import dialect_of
from mcpmanager.core.clients.locations import CLIENTS, Layout, client_locations
from mcpmanager.core.config.servers import ServerConfig


@dataclass(frozen=True)
class ClientConfig:
    """One client config file that exists: the servers read from it and what could not be read."""

    client: str  # a key of CLIENTS
    label: str  # for people: "VS Code (settings.json)"
    path: Path
    servers: list[ServerConfig] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each, naming the file and the entry


def find_client_configs(
    home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ
) -> list[ClientConfig]:
    """The servers configured in each client config file that exists, in `client_locations` order."""
    return [
        read_client_config(where.client, where.path, where.layout, label=where.label, home=home)
        for where in client_locations(home, platform, env)
        if where.path.is_file()
    ]


def read_client_config(
    client: str, path: Path, layout: Layout, *, label: str | None = None, home: Path | None = None
) -> ClientConfig:
    """Read one client config file; never raises for what is in it (see the module docstring)."""
    label = label or CLIENTS.get(client, client)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        return ClientConfig(client, label, path, [], [f"{path}: cannot read: {exc.strerror or exc}"])
    except UnicodeDecodeError as exc:
        return ClientConfig(client, label, path, [], [f"{path}: not UTF-8 text (bad byte at offset {exc.start})"])
    servers, problems = dialect_of(layout).read(text, path, home or Path.home())
    return ClientConfig(client, label, path, servers, problems)
