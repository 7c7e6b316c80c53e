"""Command line entry points (a stable contract: see the README)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from mcpmanager import __version__
from mcpmanager.commands import clients as clients_command
from mcpmanager.commands import connect as connect_command
from mcpmanager.commands import export as export_command
from mcpmanager.commands import login as login_command
from mcpmanager.commands import pins as pins_command
from mcpmanager.commands import resolve as resolve_command
from mcpmanager.commands import search as search_command
from mcpmanager.commands import secrets as secrets_command
from mcpmanager.commands import tokens as tokens_command
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.modes import MODES
from mcpmanager.core.config.secrets import MaskingFormatter, mask_strings
from mcpmanager.core.engine.advertisement import read_advertisements
from mcpmanager.core.system.display import has_display
from mcpmanager.core.system.paths import Paths

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

    # No abbreviations: a mistyped `--token FILE` must not be taken for `--tokens` silently.
    serve = commands.add_parser("serve", help="run the engine headless and serve clients", allow_abbrev=False)
    serve.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    how = serve.add_mutually_exclusive_group()
    how.add_argument("--stdio", action="store_true", help="serve one client over stdin/stdout (default)")
    how.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="HTTP port (default: the config's, 0 = any)")
    team = serve.add_argument_group("a team gateway (docs/deploy.md)")
    team.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1; others need TLS)")
    team.add_argument("--tls-cert", type=Path, metavar="FILE", help="TLS certificate chain (PEM)")
    team.add_argument("--tls-key", type=Path, metavar="FILE", help="its private key (PEM)")
    team.add_argument("--tokens", type=Path, metavar="FILE", help="named tokens (`mcpmanager tokens add`)")
    team.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME", help="a name clients reach it by (repeatable)"
    )
    team.add_argument("--stateless", action="store_true", help="keep no session: any replica answers any request")
    serve.add_argument("--mode", choices=MODES, help="what clients see (default: config)")
    serve.add_argument("--demo", action="store_true", help="serve the bundled demo servers")
    serve.add_argument("--background", action="store_true", help=argparse.SUPPRESS)  # started by `connect`

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

    status = commands.add_parser("status", help="the running engines and their servers")
    status.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    status.add_argument("--json", action="store_true", help="print JSON")
    return parser


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
        return _serve(args)
    if args.command == "status":
        return _status(args)
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


def _load(paths: Paths, demo: bool) -> Config:
    if demo:
        from mcpmanager.demo import demo_config

        return demo_config(paths)
    return load_config(paths.config_file)


def _serve(args: argparse.Namespace) -> int:
    from mcpmanager.core.engine.engine import Engine, Identity
    from mcpmanager.core.engine.host import host_http, token_file
    from mcpmanager.core.engine.single_instance import describe, engine_lock, wait_for_advertisement
    from mcpmanager.core.serve.http import PortUnavailable
    from mcpmanager.core.serve.stdio import serve_stdio

    exposure = _exposure(args)

    paths = Paths.resolve(config_file=args.config)
    if args.config is not None and not args.config.exists():
        raise UsageError(f"config file not found: {args.config}")
    config = _load(paths, args.demo)
    mode = args.mode or config.proxy.mode
    port = args.port if args.port is not None else config.proxy.port
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {port}")

    lock = None
    if args.http:
        lock = engine_lock(paths.runtime_dir)
        if not lock.acquire():
            info = wait_for_advertisement(paths.runtime_dir, 5.0)
            raise UsageError(f"{describe(info)}; stop it first, or let clients use it (`mcpmanager connect`)")

    identity = Identity(
        front_end="background" if args.background else "serve",  # `connect` started it: the window may take over
        config_label="bundled demo servers" if args.demo else None,
        token_file=token_file(paths) if args.http and exposure.tokens is None else None,
    )

    async def run() -> None:
        engine = Engine(config, paths, mode, identity)
        await engine.start()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on_signals, tg.cancel_scope, engine.groups.kill_all)
                if not args.demo:
                    tg.start_soon(engine.watch_config)
                if args.http:

                    def listening(url: str) -> None:
                        print(f"mcpmanager: serving {len(config.servers)} servers on {url}", file=sys.stderr)

                    # Asked by the window opening (it takes over): stop as on SIGTERM.
                    controls = {"quit": tg.cancel_scope.cancel} if args.background else {}
                    await host_http(engine, port, controls, listening, exposure)
                else:
                    await serve_stdio(engine.router)
                tg.cancel_scope.cancel()
        finally:
            _now_on_signals(engine.groups.kill_all)  # (again: a stop that began before the receiver ran)
            with anyio.CancelScope(shield=True):
                await engine.stop()

    try:
        anyio.run(run)
    except* PortUnavailable as group:
        raise UsageError(str(group.exceptions[0])) from None
    finally:
        if lock is not None:
            lock.release()
    return 0


def _exposure(args: argparse.Namespace) -> Any:
    """`serve`'s gateway options as an `Exposure`, checked before anything starts (UsageError)."""
    from mcpmanager.core.serve.exposure import Exposure, ExposureError, check

    given = [
        flag
        for flag, value in (
            ("--host", args.host),
            ("--tls-cert", args.tls_cert),
            ("--tls-key", args.tls_key),
            ("--tokens", args.tokens),
            ("--allow-host", args.allow_host),
            ("--stateless", args.stateless),
        )
        if value
    ]
    if given and not args.http:
        raise UsageError(f"{given[0]} is for `serve --http`")
    exposure = Exposure(
        host=args.host if args.host is not None else "127.0.0.1",
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tokens=args.tokens,
        allow_hosts=tuple(args.allow_host),
        stateless=args.stateless,
    )
    try:
        check(exposure)
    except ExposureError as exc:
        raise UsageError(str(exc)) from None
    return exposure


async def _cancel_on_signals(scope: anyio.CancelScope, kill_all: Callable[[], None]) -> None:
    """The first Ctrl-C/SIGTERM stops the engine (`scope`); from then on, another one means now, as
    it does once the stop came another way (this cancelled: stdin closed, the quit control)."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
    finally:
        # At once, not after the endpoint stopped: leaving the receiver put the default handlers
        # back, which would end the process and orphan the servers if a signal came while the calls
        # in flight have their second (`serve/stopping.py`).
        _now_on_signals(kill_all)
    scope.cancel()


def _now_on_signals(kill_all: Callable[[], None]) -> None:
    """A Ctrl-C/SIGTERM while stopping (a second one, or a client's after it closed our stdin) means
    "now": go to the end of the stop ladder, SIGKILL every server's group, so the stop finishes at
    once instead of the client's SIGKILL orphaning them mid-ladder."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: kill_all())


def _status(args: argparse.Namespace) -> int:
    from mcpmanager.core.vault.store import Vault

    paths = Paths.resolve(config_file=args.config)
    # The engine masks what it advertises; masking again by the rule is the net under a reason some
    # future path forgets to mask (the output lands in terminals, bug reports and CI logs).
    engines = [mask_strings(info) for info in read_advertisements(paths.runtime_dir)]
    if not engines:
        if args.json:
            print(json.dumps({"engines": []}, indent=1))
        else:
            print("no mcpmanager engine is running", file=sys.stderr)
        return 1
    keyring = secrets_command.keyring_line(Vault())  # where `${keyring:…}` entries live (docs/trust.md)
    if args.json:
        print(json.dumps({"engines": engines, "keyring": keyring.removeprefix("keyring: ")}, indent=1))
        return 0
    for info in engines:
        print(_format_engine(info))
    print(keyring)
    return 0


def _format_engine(info: dict[str, Any]) -> str:
    lines = [f"engine pid {info.get('pid')} ({info.get('mode')} mode) at {info.get('endpoint')}"]
    if info.get("socket"):  # where `mcpmanager connect` reaches it (docs/protocol.md)
        lines[0] += f", for connect at {info['socket']}"
    lines.append(f"  config {info.get('config')}; {info.get('tools')} tools")
    if info.get("config_error"):
        lines.append(f"  config change refused (the running setup stays): {info['config_error']}")
    servers: dict[str, dict[str, Any]] = info.get("servers") or {}
    width = max((len(name) for name in servers), default=0)
    for name, server in servers.items():
        state = server.get("state", "?")
        tools = server.get("tools")
        detail = f"{tools} tools" if tools is not None else ""
        offered = [f"{server[kind]} {kind}" for kind in ("prompts", "resources") if server.get(kind)]
        detail = ", ".join([detail, *offered]) if detail and offered else detail
        reason = server.get("reason") or ""
        retry = server.get("retry_in")
        if retry is not None:
            reason += f" (retry in {retry:g} s)"
        logs = f"logs: {server['logs']}" if server.get("logs") else ""  # a full disk: it serves on
        held = [entry["tool"] for entry in server.get("held") or []]
        withheld = f"held for review (changed or new, see `mcpmanager pins`): {', '.join(held)}" if held else ""
        text = "; ".join(part for part in (detail, reason, logs, withheld) if part)
        lines.append(f"  {name:<{width}}  {state:<8}  {text}".rstrip())
    for suggestion in info.get("suggested_always_on") or []:  # learned from use (docs/discovery.md)
        lines.append(f"  suggested always-on: {suggestion['name']} [{suggestion['server']}], called "
                     f"{suggestion['calls']} times through discovery, +{suggestion['tokens']} tokens")  # fmt: skip
    return "\n".join(lines)


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
        from mcpmanager.gui.app import run
    except ImportError as exc:  # Qt's system libraries missing: say which, and what still works
        raise UsageError(f"the window cannot start ({exc}); `mcpmanager serve` runs without it") from exc
    return run(args.gui_config, tray=args.tray)
