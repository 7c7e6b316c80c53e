"""Command line entry points (a stable contract: see the README)."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from mcpmanager import __version__
from mcpmanager.commands import clients as clients_command
from mcpmanager.commands import connect as connect_command
from mcpmanager.commands import export as export_command
from mcpmanager.commands import login as login_command
from mcpmanager.commands import pins as pins_command
from mcpmanager.commands import resolve as resolve_command
from mcpmanager.commands import search as search_command
from mcpmanager.commands import secrets as secrets_command
from mcpmanager.commands import serve as serve_command
from mcpmanager.commands import status as status_command
from mcpmanager.commands import tokens as tokens_command
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.secrets import MaskingFormatter
from mcpmanager.core.system.collector import collector_paused
from mcpmanager.core.system.display import has_display

logger = logging.getLogger("mcpmanager")


class UsageError(Exception):
    """Bad usage or input: exit status 2 with a one-line reason."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpmanager", description="Manager and proxy for MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcpmanager {__version__}")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument(
        "--config", dest="gui_config", type=Path, help="config file for the window (default: the user's)"
    )
    parser.add_argument("--tray", action="store_true", help="start in the tray without opening the window")
    commands = parser.add_subparsers(dest="command")

    serve_command.add_parser(commands)
    connect_command.add_parser(commands)
    search_command.add_parser(commands)
    resolve_command.add_parser(commands)
    clients_command.add_parser(commands)
    export_command.add_parser(commands)
    pins_command.add_parser(commands)
    login_command.add_parser(commands)
    secrets_command.add_parser(commands)
    tokens_command.add_parser(commands)

    demo = commands.add_parser("demo-server", help="run a bundled demo server (the demo config launches these)")
    demo.add_argument("script", help="notes_server.py or clock_server.py")

    status_command.add_parser(commands)
    return parser


def entry() -> int:
    """The process's entry (the console script, `python -m mcpmanager`, the frozen app): `main`, then
    every object frozen for the collector, so that the interpreter's last collections at exit skip
    them; with the SDK loaded they took 0.2 to 0.5 s after the work was done (a client waits that
    long for `serve --stdio` to end). Not in `main`: a caller in its own process keeps its collector."""
    status = main()
    gc.freeze()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(MaskingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), handlers=[handler])
    if args.log_level.upper() != "DEBUG":
        # httpx logs every request at INFO: a line per call to a remote server is noise, not news.
        for name in ("httpx", "httpx2"):
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        status = _run(args, parser)
        sys.stdout.flush()  # here, not at exit: a reader that went away is met below
        return status
    except BrokenPipeError:
        # The reader went away (`mcpmanager status | head`): stop quietly. Point stdout at nothing so
        # the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "serve":
        try:
            return serve_command.run(args)
        except serve_command.ServeError as exc:
            raise UsageError(str(exc)) from None
    if args.command == "status":
        return status_command.run(args)
    if args.command == "connect":
        return connect_command.run(args)
    if args.command == "search":
        return search_command.run(args)
    if args.command == "resolve":
        return resolve_command.run(args)
    if args.command in ("import", "install"):
        return clients_command.run(args)
    if args.command == "export":
        return export_command.run(args)
    if args.command == "pins":
        try:
            return pins_command.run(args)
        except pins_command.PinsError as exc:
            raise UsageError(str(exc)) from None
    if args.command == "secrets":
        try:
            return secrets_command.run(args)
        except secrets_command.SecretsError as exc:
            raise UsageError(str(exc)) from None
    if args.command == "tokens":
        try:
            return tokens_command.run(args)
        except tokens_command.TokensCommandError as exc:
            raise UsageError(str(exc)) from None
    if args.command in ("login", "logout"):
        try:
            return login_command.run(args)
        except login_command.LoginError as exc:
            raise UsageError(str(exc)) from None
    if args.command == "demo-server":
        return _demo_server(args.script)
    if args.command is None:
        return _default(args)
    parser.error(f"unknown command {args.command}")
    return 2


def _demo_server(script: str) -> int:
    from mcpmanager.demo import run_demo_server

    try:
        run_demo_server(script)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _no_display() -> bool:
    # An explicit Qt platform (offscreen, vnc…) is the user's choice.
    return not (os.environ.get("QT_QPA_PLATFORM") or has_display())


def _default(args: argparse.Namespace) -> int:
    """The desktop manager, with the engine inside it (the bundled demo servers if there is no config)."""
    if args.gui_config is not None and not args.gui_config.exists():
        raise UsageError(f"config file not found: {args.gui_config}")
    if _no_display():
        # Qt would abort the process with a core dump and a list of platform plugins.
        raise UsageError(
            "no display to show the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "`mcpmanager serve --http` runs the engine without it"
        )
    try:
        with collector_paused():  # Qt's and the SDK's imports
            from mcpmanager.gui.app import run
    except ImportError as exc:  # Qt's system libraries missing: say which, and what still works
        raise UsageError(f"the window cannot start ({exc}); `mcpmanager serve` runs without it") from exc
    return run(args.gui_config, tray=args.tray)
