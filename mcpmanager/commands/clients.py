"""`mcpmanager import` and `mcpmanager install`: bring a client's servers in, put mcpmanager in.

    mcpmanager import --from CLIENT [--dry-run] [--secrets-to-keyring] [--config P]
    mcpmanager install --client CLIENT [--mode discovery|direct] [--disable-served] [--dry-run] [--config P]
    mcpmanager install --client CLIENT --undo [--dry-run]

CLIENT is a key of the clients' table (`core/clients/locations.py`): claude-desktop, cursor, vscode, …
The clients' files are looked for in the user's home folder (`HOME`, `USERPROFILE` on Windows) and
the platform's places (`XDG_CONFIG_HOME`, `APPDATA`, `CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`, `CODEX_HOME`,
`CLINE_MCP_SETTINGS_PATH`, `CLINE_DATA_DIR`, `CLINE_DIR`, `GOOSE_PATH_ROOT`, `CONTINUE_GLOBAL_DIR`); see
`core/clients/locations.py`.

- import: prints each server added (`+`, with the name it got when its own was taken by a different
  server) or skipped (`=`, identical to one mcpmanager has); problems reading the client's files go
  to stderr, one line each; `--dry-run` writes nothing. `--secrets-to-keyring` stores the secret env
  and header values of the servers added in the OS keyring (as `SERVER/KEY`) and imports references
  to them (the dry run names each value that would move, masked). See `core/clients/importing.py`.
- install: prints the preview (a unified diff of the client's file, secrets masked), then writes it
  with a timestamped backup next to the file (`--dry-run`: the preview only). Servers there that
  mcpmanager already serves are named, and `--disable-served` turns them off in the client. `--undo`
  reverts the last install (byte for byte when the file was not edited since). See
  `core/clients/install.py`.

Exit status 0 on success (also when there is nothing to do), 2 on bad usage or input (an unknown
client, a client not found, a file that does not read, a broken mcpmanager config) with a one-line
reason on stderr and nothing written; 1 when a file cannot be written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcpmanager.core.clients.locations import client_keys
from mcpmanager.core.config.modes import MODES

if TYPE_CHECKING:  # the machinery loads only when the command runs: `connect` shares this parser
    from mcpmanager.core.clients.change import Change
    from mcpmanager.core.clients.importing import ImportPlan
    from mcpmanager.core.config.model import Config
    from mcpmanager.core.config.servers import ServerConfig

CLIENT_HELP = client_keys()


class BadUsage(Exception):
    """Exit status 2 with this one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `import` and `install` subcommands."""
    imp = subparsers.add_parser("import", help="add a client's MCP servers to mcpmanager's config")
    imp.add_argument("--from", dest="client", required=True, metavar="CLIENT", help=CLIENT_HELP)
    imp.add_argument("--dry-run", action="store_true", help="show what would be added; change nothing")
    imp.add_argument(
        "--secrets-to-keyring", action="store_true", help="store their secret env/header values in the OS keyring"
    )
    imp.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    imp.add_argument("--platform", help=argparse.SUPPRESS)  # tests: read another platform's layout

    ins = subparsers.add_parser("install", help="put mcpmanager into a client's config (preview, backup, undo)")
    ins.add_argument("--client", required=True, metavar="CLIENT", help=CLIENT_HELP)
    ins.add_argument("--mode", choices=MODES, help="what the client sees (default: the engine's proxy.mode)")
    ins.add_argument(
        "--disable-served", action="store_true", help="turn off there the servers mcpmanager already serves"
    )
    ins.add_argument("--undo", action="store_true", help="revert the last install (from its backup)")
    ins.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
    ins.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    ins.add_argument("--platform", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.clients.errors import ClientNotFound, InstallError
    from mcpmanager.core.config.model import ConfigError

    try:
        if args.config is not None and args.command == "install" and not args.config.exists():
            raise BadUsage(f"config file not found: {args.config}")
        return _import(args) if args.command == "import" else _install(args)
    except (BadUsage, ClientNotFound, InstallError, ConfigError) as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mcpmanager: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _home() -> Path:
    return Path.home()  # HOME, or USERPROFILE on Windows


def _platform(args: argparse.Namespace) -> str:
    return str(args.platform or sys.platform)


# import ------------------------------------------------------------------------------------------


def _import(args: argparse.Namespace) -> int:
    from dataclasses import replace

    import anyio

    from mcpmanager.core.clients.importing import plan_import
    from mcpmanager.core.engine.control import Control, ControlError
    from mcpmanager.core.system.paths import Paths

    path = Paths.resolve(config_file=args.config).config_file
    plan = plan_import(args.client, path, _home(), _platform(args), os.environ)
    for problem in plan.problems:
        print(f"mcpmanager: {problem}", file=sys.stderr)
    candidates = _secrets_to_keyring(plan, args.dry_run) if args.secrets_to_keyring else plan.candidates
    if not args.dry_run and plan.added:
        # The config file as it is now (an edit made since the preview is kept); a running engine
        # follows the file.
        try:
            added, skipped = anyio.run(Control(path).import_servers, candidates)
        except ControlError as exc:
            raise BadUsage(str(exc)) from None
        plan = replace(plan, added=added, skipped=skipped)
    _report_import(plan, path, args.dry_run)
    return 0


def _secrets_to_keyring(plan: ImportPlan, dry_run: bool) -> list[tuple[ServerConfig, Path]]:
    """Say which values move (masked) and, unless a dry run, store them: the candidates to import."""
    from mcpmanager.commands.secrets import keyring_line
    from mcpmanager.core.clients.importing import planned_moves, secrets_to_keyring
    from mcpmanager.core.vault.store import Vault, VaultError

    vault = Vault()
    moves = planned_moves(plan)
    for move in moves:
        print(("would move " if dry_run else "moving ") + move.describe())
    if moves:
        print(keyring_line(vault))
    if dry_run or not moves:
        return plan.candidates
    try:
        return secrets_to_keyring(plan, vault)
    except VaultError as exc:
        raise BadUsage(f"{exc}; nothing was imported") from None


def _report_import(plan: ImportPlan, path: Path, dry_run: bool) -> None:
    for source in plan.sources:
        added = [a for a in plan.added if a.source == source.path]
        skipped = [s for s in plan.skipped if s.source == source.path]
        print(f"{source.label}: {source.path}")
        for item in added:
            renamed = f" (as {item.name!r}: {item.server.name!r} is taken by a different server)"
            print(f"  + {item.server.name}{renamed if item.name != item.server.name else ''}")
        for skip in skipped:
            print(f"  = {skip.server.name}: {skip.reason}")
        if not added and not skipped:
            print("  (no servers)")
    count = len(plan.added)
    servers = f"{count} server{'s' if count != 1 else ''}"
    there = f"; {len(plan.skipped)} skipped" if plan.skipped else ""
    if dry_run:
        print(f"{servers} would be added to {path}{there}. Nothing was changed (--dry-run).")
    elif count:
        print(f"{servers} added to {path}{there}. A running mcpmanager picks them up at once.")
    else:
        print(f"Nothing to add to {path}{there}.")


# install -----------------------------------------------------------------------------------------


def _install(args: argparse.Namespace) -> int:
    from mcpmanager.core.clients.install import install_targets, plan_install, plan_undo
    from mcpmanager.core.system.own_command import mcpmanager_command

    targets = install_targets(args.client, _home(), _platform(args), os.environ)
    if args.undo:
        if args.mode is not None or args.disable_served:
            raise BadUsage("--undo takes neither --mode nor --disable-served: it reverts the last install")
        changes = [plan_undo(target) for target in targets]  # every file checked before any is written
    else:
        config = _served_config(args)
        command = mcpmanager_command()
        changes = [
            plan_install(
                target,
                command,
                args.mode,
                config=config,
                disable_served=args.disable_served,
                home=_home(),
            )
            for target in targets
        ]
    for change in changes:
        _do(change, args.dry_run)
    return 0


def _served_config(args: argparse.Namespace) -> Config | None:
    """mcpmanager's config, to tell which servers it serves. Needed for --disable-served; without it
    a broken file only costs the hint (said on stderr)."""
    from mcpmanager.core.config.load import load_config
    from mcpmanager.core.config.model import ConfigError
    from mcpmanager.core.system.paths import Paths

    path = Paths.resolve(config_file=args.config).config_file
    try:
        return load_config(path)
    except ConfigError as exc:
        if args.disable_served:
            raise
        print(f"mcpmanager: cannot tell which servers mcpmanager serves: {exc}", file=sys.stderr)
        return None


def _do(change: Change, dry_run: bool) -> None:
    from mcpmanager.core.clients.backups import apply_change
    from mcpmanager.core.clients.dialects import dialect_of

    target = change.target
    where = f"{target.label} ({target.path})"
    if not change.changed:
        if change.action == "install":
            print(f"mcpmanager is already installed in {where}, {_mode(change)}: nothing to change.")
        for note in change.notes:
            print(note)
        _offer(change)
        return
    print(change.diff())
    if dry_run:
        print(f"Dry run: {target.path} was not changed.")
        _offer(change)
        return
    backup = apply_change(change)
    if change.action == "install":
        kept = f"backup of the file before: {backup}" if backup else f"{target.path} is new"
        print(f"Installed mcpmanager in {where}, {_mode(change)} ({kept}).")
        if change.moved:
            kept = dialect_of(target.layout).off_wording((change.after or b"").decode("utf-8"))
            print(
                f"Turned off there, since mcpmanager serves them: {', '.join(change.moved)} "
                f"({kept}; --undo puts them back)."
            )
        print(f"Restart {target.label} to load it. `mcpmanager install --client {target.client} --undo` reverts this.")
    elif change.exact:
        what = f"from {change.restore}" if change.restore else "(install had created it: removed)"
        print(f"Restored {target.path} byte for byte {what}.")
    for note in change.notes:
        print(note)
    _offer(change)


def _mode(change: Change) -> str:
    return f"{change.mode} mode" if change.mode else "the engine's mode (its config's proxy.mode)"


def _offer(change: Change) -> None:
    if change.served:
        names = ", ".join(change.served)
        print(
            f"Also served by mcpmanager, so their tools load twice in {change.target.label}: {names}. "
            f"`mcpmanager install --client {change.target.client} --disable-served` turns them off there."
        )
