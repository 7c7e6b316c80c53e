"""`mcpmanager export`: mcpmanager's servers written into a client's config file, in its format.

    mcpmanager export --to CLIENT [--servers NAME[,NAME…] …] [--replace] [--with-secrets] [--dry-run] [--config P]
    mcpmanager export --to CLIENT --undo [--dry-run]

CLIENT is one of `install`'s. Each server gets a line (`+` written, `~` replaced, `=` there already,
`!` not written and why), then the preview (a unified diff of the client's file, secrets masked),
then the file is written with a backup beside it (`--dry-run`: the preview only). `--undo` reverts
the last export (byte for byte when the file was not edited since). See `core/clients/export.py`.

Exit status 0 on success (also when there is nothing to write, and when some servers were not
written: their lines say why), 2 on bad usage or input (an unknown client or server, no servers, a
client not found, a file that does not read, a broken mcpmanager config) with a one-line reason on
stderr and nothing written; 1 when a file cannot be written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcpmanager.commands.clients import CLIENT_HELP  # the same clients as install's

if TYPE_CHECKING:  # the machinery loads only when the command runs
    from mcpmanager.core.clients.change import Target
    from mcpmanager.core.clients.export import ExportPlan
    from mcpmanager.core.clients.export_undo import UndoPlan


class BadUsage(Exception):
    """Exit status 2 with this one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    exp = subparsers.add_parser(
        "export", help="write mcpmanager's servers into a client's config (preview, backup, undo)"
    )
    exp.add_argument("--to", dest="client", required=True, metavar="CLIENT", help=CLIENT_HELP)
    exp.add_argument(
        "--servers", nargs="+", metavar="NAME", help="only these servers (names, or NAME,NAME); default: all"
    )
    exp.add_argument("--replace", action="store_true", help="overwrite a different server of the same name there")
    exp.add_argument(
        "--with-secrets", action="store_true", help="write ${keyring:…} secrets into the client's file, in plain text"
    )
    exp.add_argument("--undo", action="store_true", help="revert the last export (from its backup)")
    exp.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
    exp.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    exp.add_argument("--platform", help=argparse.SUPPRESS)  # tests: another platform's places


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.clients.errors import ClientNotFound, InstallError
    from mcpmanager.core.clients.export import ExportError
    from mcpmanager.core.config.model import ConfigError

    try:
        return _undo(args) if args.undo else _export(args)
    except (BadUsage, ClientNotFound, InstallError, ExportError, ConfigError) as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # the reader went away (`| head`): the entry point ends quietly
    except OSError as exc:
        print(f"mcpmanager: cannot write {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _targets(args: argparse.Namespace) -> list[Target]:
    from mcpmanager.core.clients.install import install_targets

    return install_targets(args.client, Path.home(), str(args.platform or sys.platform), os.environ)


def _names(args: argparse.Namespace) -> list[str] | None:
    if args.servers is None:
        return None
    return [name.strip() for word in args.servers for name in word.split(",") if name.strip()]


def _export(args: argparse.Namespace) -> int:
    from mcpmanager.core.clients.export import chosen_servers, plan_export
    from mcpmanager.core.clients.importing import check_client
    from mcpmanager.core.config.load import load_config
    from mcpmanager.core.system.paths import Paths
    from mcpmanager.core.vault.store import Vault

    check_client(args.client)
    if args.config is not None and not args.config.exists():
        raise BadUsage(f"config file not found: {args.config}")
    path = Paths.resolve(config_file=args.config).config_file
    names = _names(args)
    servers = chosen_servers(load_config(path), names, path)
    targets = _targets(args)
    vault = Vault() if args.with_secrets else None
    # Every file is planned (and checked) before any is written.
    plans = [
        plan_export(target, servers, named=names is not None, replace_taken=args.replace, secrets_from=vault)
        for target in targets
    ]
    if vault is not None and any(plan.secrets for plan in plans):
        from mcpmanager.commands.secrets import keyring_line

        print(keyring_line(vault))
    for plan in plans:
        _do(plan, args.dry_run)
    return 0


def _do(plan: ExportPlan, dry_run: bool) -> None:
    from mcpmanager.core.clients.export import apply_export

    change = plan.change
    target = change.target
    where = f"{target.label} ({target.path})"
    print(f"{where}:")
    for line in plan.lines:
        print(line)
    if not change.changed:
        print(f"Nothing to write to {target.path}.")
        return
    print(change.diff())
    if plan.secrets:
        print(
            f"Secrets from the keyring go into {target.path} in plain text (masked above): {', '.join(plan.secrets)}."
        )
    if plan.secrets and plan.readable_by:
        print(
            f"Warning: {target.path} can be read by {plan.readable_by} too, and so can these secrets "
            f"(`chmod go-r {target.path}` keeps them to you; mcpmanager leaves the file's mode as it is)."
        )
    if plan.bridge:
        print(
            f"mcpmanager is installed in {target.label} too, and serves these servers: their tools would load twice. "
            f"To leave mcpmanager: `mcpmanager install --client {target.client} --undo`; "
            "or turn them off in mcpmanager."
        )
    count = len(plan.written)
    servers = f"{count} server{'s' if count != 1 else ''}"
    if dry_run:
        print(f"Dry run: {target.path} was not changed ({servers} would be written).")
        return
    backup = apply_export(plan)
    kept = f"backup of the file before: {backup}" if backup else f"{target.path} is new"
    print(f"Exported {servers} to {where} ({kept}).")
    them = "them" if count != 1 else "it"
    print(f"Restart {target.label} to load {them}. `mcpmanager export --to {target.client} --undo` reverts this.")


def _undo(args: argparse.Namespace) -> int:
    from mcpmanager.core.clients.export_undo import plan_export_undo
    from mcpmanager.core.clients.importing import check_client

    check_client(args.client)
    if args.servers is not None or args.replace or args.with_secrets:
        raise BadUsage("--undo takes neither --servers, --replace nor --with-secrets: it reverts the last export")
    plans = [plan_export_undo(target) for target in _targets(args)]
    for plan in plans:
        _undo_one(plan, args.dry_run)
    return 0


def _undo_one(plan: UndoPlan, dry_run: bool) -> None:
    from mcpmanager.core.clients.export_undo import apply_export_undo

    change = plan.change
    path = change.target.path
    if change.changed:
        print(change.diff())
    if dry_run:
        for note in change.notes:
            print(note)
        print(f"Dry run: {path} was not changed.")
        return
    apply_export_undo(plan)
    if change.changed and change.exact:
        what = f"from {change.restore}" if change.restore else "(export had created it: removed)"
        print(f"Restored {path} byte for byte {what}.")
    for note in change.notes:
        print(note)
