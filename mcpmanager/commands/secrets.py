"""`mcpmanager secrets`: the keyring entries the config refers to (`${keyring:NAME}`).

    mcpmanager secrets list [--json]        the entries the config refers to, and whether each is there
    mcpmanager secrets set NAME             store a value (from stdin when it is not a terminal, else asked)
    mcpmanager secrets delete NAME
    mcpmanager secrets move SERVER[:KEY]    a server's literal secrets into the keyring, the config rewritten

A value is never taken from the command line: every process on the machine can read another's
arguments. Each subcommand names the keyring in use, and says so plainly when it is the unencrypted
file fallback (docs/trust.md). `move` saves the config through `Control` (atomic, lossless, one
backup); a running engine follows the file. Exit status 2 on bad usage, 1 when the keyring fails.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpmanager.core.config.model import Config
    from mcpmanager.core.vault.store import Vault


class SecretsError(Exception):
    """Bad usage or input: exit status 2 with this one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("secrets", help="secrets kept in the OS keyring (${keyring:NAME} in the config)")
    parser.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    actions = parser.add_subparsers(dest="secrets_action")
    listing = actions.add_parser("list", help="the entries the config refers to, and whether each is there")
    listing.add_argument("--json", action="store_true", help="print JSON")
    store = actions.add_parser("set", help="store a value: from stdin when piped, else asked for (never argv)")
    store.add_argument("name", help="the entry's name, as in ${keyring:NAME}")
    delete = actions.add_parser("delete", help="remove an entry from the keyring")
    delete.add_argument("name")
    move = actions.add_parser("move", help="move a server's literal secrets into the keyring, rewriting the config")
    move.add_argument("target", metavar="SERVER[:KEY]", help="a server (its secret env/headers) or one KEY of it")
    move.add_argument("--dry-run", action="store_true", help="say what would move; change nothing")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.vault.store import Vault, VaultError

    vault = Vault()
    try:
        if args.secrets_action == "set":
            return _set(vault, args.name)
        if args.secrets_action == "delete":
            return _delete(vault, args.name)
        if args.secrets_action == "move":
            return _move(vault, args)
        return _list(vault, args)
    except VaultError as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 1


def keyring_line(vault: Vault) -> str:
    """Which keyring is in use, in one line; plain about the unencrypted file fallback."""
    return vault.summary()


def _set(vault: Vault, name: str) -> int:
    if not name.strip():
        raise SecretsError("an entry needs a name")
    if sys.stdin.isatty():
        value = getpass.getpass(f"Value for {name} (not shown): ")
    else:
        value = sys.stdin.read().removesuffix("\n").removesuffix("\r")  # `echo … |` adds a line end
    if not value:
        raise SecretsError(f"no value given for {name}: nothing stored")
    vault.set(name, value)
    print(f"stored {name}; refer to it as ${{keyring:{name}}}", file=sys.stderr)
    print(keyring_line(vault), file=sys.stderr)
    return 0


def _delete(vault: Vault, name: str) -> int:
    if not vault.delete(name):
        raise SecretsError(f"no keyring entry named {name!r}")
    print(f"removed {name} from the keyring", file=sys.stderr)
    print(keyring_line(vault), file=sys.stderr)
    return 0


def _config_path(args: argparse.Namespace) -> Path:
    from mcpmanager.core.system.paths import Paths

    return Paths.resolve(config_file=args.config).config_file


def _load(path: Path) -> Config:
    from mcpmanager.core.config.load import load_config
    from mcpmanager.core.config.model import ConfigError

    try:
        return load_config(path)
    except ConfigError as exc:
        raise SecretsError(str(exc)) from None


def referenced(config: Config) -> list[dict[str, str]]:
    """Each reference of the config: the entry's name, the server and where in it."""
    from mcpmanager.core.config.servers import HttpServerConfig
    from mcpmanager.core.vault.references import referenced_names

    found: list[dict[str, str]] = []
    for server in config.servers.values():
        if isinstance(server, HttpServerConfig):
            places = [("url", server.url), *((f"header {k}", v) for k, v in server.headers.items())]
        else:
            places = [*((f"env {k}", v) for k, v in server.env.items())]
            places += [(f"argument {n}", arg) for n, arg in enumerate(server.args, 1)]
        found += [
            {"name": name, "server": server.name, "where": where}
            for where, value in places
            for name in referenced_names(value)
        ]
    return found


def _list(vault: Vault, args: argparse.Namespace) -> int:
    path = _config_path(args)
    references = referenced(_load(path)) if path.exists() else []
    present = {name: vault.get(name) is not None for name in {ref["name"] for ref in references}}
    if getattr(args, "json", False):
        entries = [{**ref, "present": present[ref["name"]]} for ref in references]
        described: dict[str, Any] = {"keyring": keyring_line(vault).removeprefix("keyring: "), "references": entries}
        print(json.dumps(described, indent=1))
        return 0
    print(keyring_line(vault))
    if not references:
        print(f"{path} refers to no keyring entry")
    width = max((len(ref["name"]) for ref in references), default=0)
    for ref in references:
        state = "stored " if present[ref["name"]] else "MISSING"
        print(f"  {ref['name']:<{width}}  {state}  {ref['server']}: {ref['where']}")
    missing = sorted(name for name, there in present.items() if not there)
    if missing:
        print(f"missing entries fail their server at start; store one with `mcpmanager secrets set {missing[0]}`")
    return 0


def _move(vault: Vault, args: argparse.Namespace) -> int:
    import anyio

    from mcpmanager.core.config.to_keyring import move_to_keyring, moves_of
    from mcpmanager.core.engine.control import Control, ControlError

    path = _config_path(args)
    name, _, key = str(args.target).partition(":")
    server = _load(path).servers.get(name)
    if server is None:
        raise SecretsError(f"no server named {name!r} in {path}")
    keys = [key] if key else None
    moves = moves_of(server, keys)
    if key and not moves:
        raise SecretsError(f"{name} has no literal value {key!r} to move (none, empty, or a reference already)")
    if not moves:
        print(f"{name} has no literal secret in its env or headers: nothing to move", file=sys.stderr)
        return 0
    for move in moves:
        print(("would move " if args.dry_run else "moving ") + move.describe())
    print(keyring_line(vault))
    if args.dry_run:
        print("Nothing was changed (--dry-run).")
        return 0
    _, moved = move_to_keyring(server, vault, keys)
    try:
        # Into the config as it is when saved (not the copy read above); the backup scrubbed too.
        made = anyio.run(Control(path).move_secrets, name, moved)
    except ControlError as exc:
        raise SecretsError(f"stored in the keyring, but the config was not rewritten: {exc}") from None
    for move in moved:
        if move not in made:
            print(
                f"{name}: {move.where} {move.key} changed in {path.name} meanwhile: left as it is now", file=sys.stderr
            )
    print(f"{path} now refers to the keyring; a running mcpmanager restarts {name} with the same values.")
    return 0
