"""`mcpmanager connect [--mode discovery|direct]`: what a client launches to reach the user's engine.

Stdio to the client; to the one running engine, its local socket where it offers one, its
Streamable HTTP endpoint otherwise (`core/connect/relay.py`). If no engine runs, one is started in
the background (`core/connect/engine_starter.py`) and waited for. Kept light on imports on purpose:
a client waits for this to start (the SDK alone would take most of a second).
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from mcpmanager.core.config.modes import MODES

if TYPE_CHECKING:
    from mcpmanager.core.connect.relay import Endpoint, Relay

DEFAULT_WAIT = 30.0  # seconds: clients allow 10 (Codex) to 60 (Claude Desktop) for their start


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "connect", help="stdio bridge a client launches: to the running engine (started if none runs)"
    )
    parser.add_argument("--mode", choices=MODES, help="what this client sees (default: the engine's)")
    parser.add_argument("--no-start", action="store_true", help="fail instead of starting an engine")
    wait = f"seconds to wait for a started engine, or for one to answer again (default {DEFAULT_WAIT:g})"
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, help=wait)
    http = "relay over the engine's HTTP endpoint even where it offers a local socket"
    parser.add_argument("--http", action="store_true", help=http)


def run(args: argparse.Namespace) -> int:
    # Imported here, not with the parser: every other command's process would pay for them.
    import anyio

    from mcpmanager.core.connect.engine_starter import endpoint_of, find_or_start
    from mcpmanager.core.connect.relay import NoEngine
    from mcpmanager.core.connect.socket_relay import SocketRelay
    from mcpmanager.core.connect.stdio_lines import stdio_lines
    from mcpmanager.core.system.paths import Paths

    if args.log_level == "info":  # the client keeps our stderr in its log: only what matters, unless asked
        logging.getLogger().setLevel(logging.WARNING)
    paths = Paths.resolve()

    def find() -> Endpoint:
        found = endpoint_of(find_or_start(paths, args.wait, start=not args.no_start), args.mode)
        return found._replace(socket=None) if args.http else found

    try:
        first = find()  # fail in one line, before taking over stdio, when no engine can be had
    except NoEngine as exc:
        print(f"mcpmanager connect: {exc}", file=sys.stderr)
        return 2

    async def relay() -> None:
        link: type[Relay] = SocketRelay
        if first.socket is None:  # (httpx only where it is used: a client waits for this to start)
            from mcpmanager.core.connect.http_relay import HttpRelay

            link = HttpRelay
        async with stdio_lines() as (lines, write):
            await link(find, write, first, args.wait).run(lines)

    status = 0
    try:
        anyio.run(relay)
    except* NoEngine as group:  # the engine went away and none could be had again
        print(f"mcpmanager connect: {group.exceptions[0]}", file=sys.stderr)
        status = 1
    return status
