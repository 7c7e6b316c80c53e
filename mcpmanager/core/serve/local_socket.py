"""The engine's local socket: how `mcpmanager connect` reaches the engine on this machine.

A client launches `connect` and speaks JSON-RPC lines to it over stdio. Relaying those lines over
Streamable HTTP made each call pay for an HTTP request and its answer twice over (in `connect` and
in the engine); over a Unix socket the relay passes the lines as they are, and the engine serves
them as `serve --stdio` serves its stdin: the same session, the same fast lane (docs/protocol.md,
"connect over the local socket").

The socket is a file in the private runtime directory (0700; the socket itself 0600), named by the
engine's pid and advertised with its endpoint. Before any JSON-RPC, the peer sends one hello line
(`local_hello`) with the endpoint's bearer token (the directory's mode already keeps other users
out; the token keeps the two doors alike) and the mode it wants. The engine answers and serves, or
says why not and closes. What the peer sends after its hello is JSON-RPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

from mcpmanager.core.config.modes import Mode
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.serve.local_hello import answer_line, check_hello
from mcpmanager.core.serve.stdio import line_transport, serve_session
from mcpmanager.core.system.process_groups import pid_exists

logger = logging.getLogger(__name__)

HELLO_TIMEOUT = 5.0  # seconds a peer has to say hello before it is let go
ACCEPT_PAUSE = 0.2  # seconds before accepting again after an accept failed (out of descriptors)
HELLO_LIMIT = 2**16  # bytes: asyncio's line limit (a hello is a token and a mode)
_SUN_PATH_MAX = 104  # bytes a socket's path may take on every Unix (108 on Linux, 104 on macOS)
_NAME = re.compile(r"^engine-(\d+)\.sock$")


def available() -> bool:
    """Whether this platform serves one (Windows' event loop reads no Unix sockets: HTTP there)."""
    return sys.platform != "win32" and hasattr(socket, "AF_UNIX")


def socket_path(runtime_dir: Path) -> Path | None:
    """Where this engine listens; None when the runtime directory's path is too long for a socket."""
    path = runtime_dir / f"engine-{os.getpid()}.sock"
    return path if len(os.fsencode(path)) < _SUN_PATH_MAX else None


async def serve_local(router: Router, path: Path, token: str, on_listening: Callable[[Path], None]) -> None:
    """Serve `connect` on a Unix socket at `path` until cancelled; `on_listening` once it listens.
    The file goes when this returns. OSError when it cannot listen."""
    listener = _listening(path)
    try:
        loop = asyncio.get_running_loop()
        on_listening(path)
        async with anyio.create_task_group() as tg:
            failing = False
            while True:
                try:
                    connection, _ = await loop.sock_accept(listener)
                except OSError as exc:
                    # Out of descriptors (EMFILE), or a peer gone before it was taken: it passes. Raised
                    # here, it would end every session, and the engine with them (out of this task group).
                    if not failing:
                        logger.warning("cannot take a local connection (will retry): %s", exc.strerror or exc)
                    failing = True
                    await anyio.sleep(ACCEPT_PAUSE)
                    continue
                failing = False
                tg.start_soon(_session, router, connection, token)
    finally:
        listener.close()
        _remove(path)


def _listening(path: Path) -> socket.socket:
    """A socket listening at `path` (0600), the sockets of engines that are gone removed first."""
    _sweep(path.parent)
    _remove(path)  # a socket left by a process that had this pid before
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(os.fspath(path))
        os.chmod(path, 0o600)
        listener.listen(64)
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    return listener


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


async def _session(router: Router, connection: socket.socket, token: str) -> None:
    """One `connect`: its hello checked, then its session served until either side closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=HELLO_LIMIT)  # as `serve --stdio` reads (chunks, not lines)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, connection)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    try:
        mode, refusal = await _hello(reader, token)
        writer.write(answer_line(refusal))
        if refusal:  # (it may repeat what the peer sent: never the token)
            logger.warning("refused a local connection: %s", refusal.replace(token, "***"))
            return
        await serve_session(router, mode, lambda lane: line_transport(reader, writer, lane))
    except ConnectionError:
        pass  # the client left
    except Exception as exc:  # one connection's failure must not end the listener (and the engine with it)
        logger.warning("a local connection failed (%s)", type(exc).__name__, exc_info=True)
    finally:
        transport.close()


async def _hello(reader: asyncio.StreamReader, token: str) -> tuple[Mode | None, str | None]:
    """(the mode asked for, None) or (None, why the peer is refused)."""
    line = b""
    with anyio.move_on_after(HELLO_TIMEOUT):
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:
            return None, f"a hello over {HELLO_LIMIT} bytes"
        except asyncio.IncompleteReadError:
            return None, "closed before its hello"
    if not line:
        return None, f"no hello within {HELLO_TIMEOUT:g} s"
    return check_hello(line, token)


def _sweep(folder: Path) -> None:
    """Remove the sockets of engines that are gone (killed before they could)."""
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            found = _NAME.match(entry.name)
            if found and int(found.group(1)) != os.getpid() and not pid_exists(int(found.group(1))):
                _remove(entry)
