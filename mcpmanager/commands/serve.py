"""`mcpmanager serve`: the engine without the window, serving one client over stdio or any number
over Streamable HTTP (a team gateway with `--host`, TLS and named tokens: docs/deploy.md).

    mcpmanager serve [--config P] [--stdio | --http [--port N]] [--mode discovery|direct] [--demo]

Ctrl-C or SIGTERM stops it: the calls in flight get their second (`core/serve/stopping.py`), then
the servers stop; a second signal means now (every server's process group is killed).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import MODES
from mcpmanager.core.system.collector import collector_paused
from mcpmanager.core.system.paths import Paths


class ServeError(Exception):
    """Bad usage (an option, the port, a config that is not there, an engine already serving):
    exit status 2 with a one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # No abbreviations: a mistyped `--token FILE` must not be taken for `--tokens` silently.
    serve = subparsers.add_parser("serve", help="run the engine headless and serve clients", allow_abbrev=False)
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


def _load(paths: Paths, demo: bool) -> Config:
    if demo:
        from mcpmanager.demo import demo_config

        return demo_config(paths)
    return load_config(paths.config_file)


def run(args: argparse.Namespace) -> int:
    with collector_paused():  # the SDK's imports: most of the start, which a client waits for
        from mcpmanager.core.engine.engine import Engine, Identity
        from mcpmanager.core.engine.host import host_http, token_file
        from mcpmanager.core.engine.single_instance import describe, engine_lock, wait_for_advertisement
        from mcpmanager.core.serve.http import PortUnavailable
        from mcpmanager.core.serve.stdio import serve_stdio

    exposure = _exposure(args)

    paths = Paths.resolve(config_file=args.config)
    if args.config is not None and not args.config.exists():
        raise ServeError(f"config file not found: {args.config}")
    config = _load(paths, args.demo)
    mode = args.mode or config.proxy.mode
    port = args.port if args.port is not None else config.proxy.port
    if not 0 <= port <= 65535:
        raise ServeError(f"--port must be 0..65535, got {port}")

    lock = None
    if args.http:
        lock = engine_lock(paths.runtime_dir)
        if not lock.acquire():
            info = wait_for_advertisement(paths.runtime_dir, 5.0)
            raise ServeError(f"{describe(info)}; stop it first, or let clients use it (`mcpmanager connect`)")

    identity = Identity(
        front_end="background" if args.background else "serve",  # `connect` started it: the window may take over
        config_label="bundled demo servers" if args.demo else None,
        token_file=token_file(paths) if args.http and exposure.tokens is None else None,
    )

    async def serve() -> None:
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
        anyio.run(serve)
    except* PortUnavailable as group:
        raise ServeError(str(group.exceptions[0])) from None
    finally:
        if lock is not None:
            lock.release()
    return 0


def _exposure(args: argparse.Namespace) -> Any:
    """`serve`'s gateway options as an `Exposure`, checked before anything starts (ServeError)."""
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
        raise ServeError(f"{given[0]} is for `serve --http`")
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
        raise ServeError(str(exc)) from None
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
