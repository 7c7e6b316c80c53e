"""`mcpmanager import --from CLIENT`: the servers a client has, added to mcpmanager's own config.

What users of such a tool expect, and what this does:

- Every config file of the client that exists is read (`reading`: Claude Desktop's one or two
  files, Cursor's, VS Code's `mcp.json` and the `mcp` section of `settings.json`, Claude Code's user
  and per-project scopes), with the reader's rules and its problems (unreadable entries, VS Code
  `${input:…}` the client would ask for, variables mcpmanager does not expand). The problems are
  reported; what could be read is still imported.
- The servers go into mcpmanager's config file through `Control` (as every change does): nothing already
  there is lost (unknown keys included), the save is atomic and keeps one backup. A config file that
  does not load is refused with its own error and left as it is.
- A server identical to one mcpmanager has (same transport, command, arguments, environment, folder,
  or URL and headers; the name, `disabled` and `startTimeout` aside) is skipped: running it twice
  would only load its tools twice. A name taken by a different server gets `-2`, `-3`… (`free_name`).
- mcpmanager's own bridge entry in a client (`mcpmanager connect`, or an older `mcpmanager serve`)
  is never imported: it would make mcpmanager serve itself.
- Secrets can go to the keyring instead of mcpmanager's config (`--secrets-to-keyring`, the
  window's checkbox): `secrets_to_keyring` stores each added server's secret env and header values as
  `NAME/KEY` and imports references to them (`core/config/to_keyring.py`); the client's file is
  left as it is.
- `plan_import` changes nothing (the preview, `--dry-run`); `Control.import_servers` applies it: it
  reads the config file again and merges into what is on disk now, so an edit made meanwhile (the
  window, another editor) stays.

Which of a client's servers mcpmanager already serves (`served_by`, which `install
--disable-served` uses to turn them off in the client) and the identity of servers are in `served`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpmanager.core.clients.errors import ClientNotFound
from mcpmanager.core.clients.locations import CLIENTS, client_locations
from mcpmanager.core.clients.reading import ClientConfig, read_client_config
from mcpmanager.core.clients.served import BRIDGE_NAME as BRIDGE_NAME
from mcpmanager.core.clients.served import is_bridge as is_bridge
from mcpmanager.core.clients.served import same_definition as same_definition
from mcpmanager.core.clients.served import served_by as served_by
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.names import free_name
from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.config.to_keyring import Move, move_to_keyring, moves_of
from mcpmanager.core.vault.store import Vault


@dataclass(frozen=True)
class Added:
    name: str  # the name it gets in mcpmanager
    server: ServerConfig  # as read (its own name is the client's, made usable)
    source: Path


@dataclass(frozen=True)
class Skipped:
    server: ServerConfig
    source: Path
    reason: str  # "already in mcpmanager as 'x'", "mcpmanager's own entry"


@dataclass(frozen=True)
class ImportPlan:
    client: str
    label: str
    sources: list[ClientConfig]
    candidates: list[tuple[ServerConfig, Path]] = field(default_factory=list)  # every server read, in order
    added: list[Added] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    config: Config = field(default_factory=Config)  # mcpmanager's config with the servers added

    @property
    def problems(self) -> list[str]:
        return [problem for source in self.sources for problem in source.problems]


def client_label(client: str) -> str:
    return CLIENTS.get(client, client)


def check_client(client: str) -> None:
    if client not in CLIENTS:
        known = ", ".join(CLIENTS)
        raise ClientNotFound(f"unknown client {client!r} (expected one of: {known})")


def read_client(
    client: str, home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ
) -> list[ClientConfig]:
    """Every config file of `client` that exists, read; ClientNotFound (naming where it looked) if none."""
    check_client(client)
    places = [where for where in client_locations(home, platform, env) if where.client == client]
    found = [
        read_client_config(where.client, where.path, where.layout, label=where.label, home=home)
        for where in places
        if where.path.is_file()
    ]
    if not found:
        looked = ", ".join(str(where.path) for where in places)
        raise ClientNotFound(f"no {client_label(client)} config found (looked at {looked})")
    return found


def plan_import(
    client: str,
    config_path: Path,
    home: Path,
    platform: str = sys.platform,
    env: Mapping[str, str] = os.environ,
) -> ImportPlan:
    """What importing would add and skip; writes nothing. ConfigError if mcpmanager's config does not
    load (checked first: nothing is worth reading then), ClientNotFound if the client has no config."""
    config = load_config(config_path)
    return plan_for(client, read_client(client, home, platform, env), config)


def plan_for(client: str, sources: list[ClientConfig], config: Config) -> ImportPlan:
    """What importing the servers read from `sources` into `config` would add and skip."""
    candidates = [(server, source.path) for source in sources for server in source.servers]
    merged, added, skipped = merge(config, candidates)
    return ImportPlan(client, client_label(client), sources, candidates, added, skipped, merged)


def planned_moves(plan: ImportPlan) -> list[Move]:
    """The secrets `--secrets-to-keyring` would move: those of each added server, under the name it gets."""
    return [move for added in plan.added for move in moves_of(replace(added.server, name=added.name))]


def secrets_to_keyring(plan: ImportPlan, vault: Vault) -> list[tuple[ServerConfig, Path]]:
    """The plan's candidates with the secrets of each server to be added stored in `vault` (as
    `NAME/KEY`, NAME the one it gets) and replaced by references; to import instead of the plain
    ones. Blocks (the keyring); `VaultError` if one cannot be stored."""
    final = {id(added.server): added.name for added in plan.added}
    moved: list[tuple[ServerConfig, Path]] = []
    for server, source in plan.candidates:
        if id(server) in final:
            rewritten, _ = move_to_keyring(replace(server, name=final[id(server)]), vault)
            server = replace(rewritten, name=server.name)  # merge names it again: the same free name
        moved.append((server, source))
    return moved


def merge(config: Config, servers: Iterable[tuple[ServerConfig, Path]]) -> tuple[Config, list[Added], list[Skipped]]:
    """`config` with `servers` added: identical ones skipped, taken names suffixed `-2`, `-3`…"""
    added: list[Added] = []
    skipped: list[Skipped] = []
    for server, source in servers:
        if is_bridge(server):
            skipped.append(Skipped(server, source, "mcpmanager's own entry (the bridge to it)"))
            continue
        twin = next((name for name, mine in config.servers.items() if same_definition(mine, server)), None)
        if twin is not None:
            skipped.append(Skipped(server, source, f"already in mcpmanager as {twin!r}"))
            continue
        name = free_name(server.name, config.servers)
        config = config.with_server(replace(server, name=name))
        added.append(Added(name, server, source))
    return config, added, skipped
