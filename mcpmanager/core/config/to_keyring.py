"""Moving a server's literal secrets out of the config into the keyring: each value goes under
`SERVER/KEY` and the config keeps `${keyring:SERVER/KEY}` in its place (`mcpmanager secrets move`,
import's `--secrets-to-keyring`, the editor's "Store in keyring").

Which values move, by default: the env variables and headers the one rule calls secret (their name,
or a credential's shape). An `Authorization: Bearer <token>` keeps its scheme in the config, only the
token moves. Values that already refer to the keyring stay as they are. The config's backup
(`<name>.bak`, the file before the save) is scrubbed the same way: it would keep the secrets.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpmanager.core.config.save import backup_of
from mcpmanager.core.config.secrets import entry_is_secret
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig
from mcpmanager.core.system.atomic_write import write_atomic
from mcpmanager.core.vault.references import reference
from mcpmanager.core.vault.store import Vault

_SCHEME = re.compile(r"(?:bearer|basic|token)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Move:
    server: str
    where: str  # "env" or "header"
    key: str
    entry: str  # the keyring entry's name
    prefix: str  # what stays before the reference (`Bearer `)
    value: str = field(repr=False)  # the secret: never shown

    def describe(self) -> str:
        """One line naming the value and where it goes, never the value itself."""
        shown = f"{self.prefix}***" if self.prefix else "***"
        return f"{self.server}: {self.where} {self.key}={shown} → keyring entry {self.entry}"


def entry_name(server: str, key: str) -> str:
    return f"{server}/{key}"


def split_value(value: str) -> tuple[str, str]:
    """(what stays in the config, what goes to the keyring): `Bearer ` stays, its token goes."""
    scheme = _SCHEME.match(value)
    prefix = value[: scheme.end()] if scheme and scheme.end() < len(value) else ""
    return prefix, value[len(prefix) :]


def moves_of(server: ServerConfig, keys: Collection[str] | None = None) -> list[Move]:
    """What moving `server`'s secrets would do. `keys` (env or header names) chooses the values
    whatever their names say; None: every value the rule calls secret."""
    where, values = _values(server)
    found: list[Move] = []
    for key, value in values.items():
        chosen = key in keys if keys is not None else entry_is_secret(key, value)
        if not chosen or not value or "${keyring:" in value:
            continue
        prefix, secret = split_value(value)
        found.append(Move(server.name, where, key, entry_name(server.name, key), prefix, secret))
    return found


def with_references(server: ServerConfig, moves: Sequence[Move]) -> ServerConfig:
    """`server` with each moved value replaced by its reference (under `server`'s own name)."""
    _, values = _values(server)
    changed = dict(values)
    for move in moves:
        changed[move.key] = move.prefix + reference(move.entry)
    if isinstance(server, HttpServerConfig):
        return replace(server, headers=changed)
    return replace(server, env=changed)


def still_there(server: ServerConfig, moves: Sequence[Move]) -> list[Move]:
    """The `moves` whose value `server` still has as it had when it was moved (another program may
    have changed or removed it since): only those are replaced by their reference."""
    _, values = _values(server)
    return [move for move in moves if values.get(move.key) == move.prefix + move.value]


def move_to_keyring(
    server: ServerConfig, vault: Vault, keys: Collection[str] | None = None
) -> tuple[ServerConfig, list[Move]]:
    """Store `server`'s secrets in `vault` and return it rewritten to refer to them. Blocks (the
    keyring); `VaultError` when one cannot be stored (those stored before it stay stored)."""
    moves = moves_of(server, keys)
    for move in moves:
        vault.set(move.entry, move.value)
    return with_references(server, moves), moves


def scrub_backup(config_path: Path, moves: list[Move]) -> None:
    """Put the references in the config's backup too: saving the rewritten config kept the file as it
    was, secrets and all, as `<name>.bak`. Blocks (a file)."""
    backup = backup_of(config_path)
    try:
        # surrogateescape: a backup with bytes that are not UTF-8 (a damaged config saved over) is
        # scrubbed all the same, its other bytes kept as they are; failing here would leave the value.
        text = backup.read_bytes().decode("utf-8", errors="surrogateescape")
        mode = stat.S_IMODE(backup.stat().st_mode)
    except FileNotFoundError:
        return
    scrubbed = text
    for move in moves:  # the value as a JSON document spells it (escaped or not), for its reference
        spelled = {json.dumps(move.value, ensure_ascii=ascii)[1:-1] for ascii in (False, True)}
        for form in sorted(spelled, key=len, reverse=True):
            scrubbed = scrubbed.replace(form, json.dumps(reference(move.entry))[1:-1])
    if scrubbed != text:
        write_atomic(backup, scrubbed.encode("utf-8", errors="surrogateescape"), mode)


def _values(server: ServerConfig) -> tuple[str, Mapping[str, str]]:
    if isinstance(server, HttpServerConfig):
        return "header", server.headers
    return "env", server.env
