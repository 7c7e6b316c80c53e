"""Serving clients over Streamable HTTP (uvicorn), until cancelled: on 127.0.0.1 for this machine,
or on another address, with TLS and named tokens, as a team gateway (`exposure`)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterator

import anyio
import uvicorn

from mcpmanager.core.proxy.router import Router
from mcpmanager.core.serve.exposure import LOCAL, WILDCARDS, Exposure, admission, check, ssl_context
from mcpmanager.core.serve.header_timeout import HeaderTimeout
from mcpmanager.core.serve.routes import BASE, Controls, build_app
from mcpmanager.core.serve.stopping import Stopping

logger = logging.getLogger(__name__)


class PortUnavailable(OSError):
    """The HTTP port could not be bound (in use, not permitted)."""


SHUTDOWN_GRACE = 1  # seconds for requests in flight when the endpoint stops


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal handlers: the front end (CLI or GUI) owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_http(
    router: Router,
    port: int = 0,
    on_listening: Callable[[str], None] | None = None,
    *,
    token: str,
    controls: Controls | None = None,
    exposure: Exposure = LOCAL,
    stopping: Stopping | None = None,
) -> None:
    """Serve Streamable HTTP until cancelled, on 127.0.0.1 to requests carrying `token`, or as
    `exposure` says (see `routes` for the paths); `on_listening` gets the default mode's URL once
    bound. ExposureError when the exposure must not start (no TLS on a network address…).
    `stopping`: begun by the caller before it cancels this, to refuse new requests meanwhile."""
    check(exposure)
    app, running = build_app(router, admission(exposure, token), controls, exposure.stateless, stopping)
    # The session manager runs here rather than in uvicorn's lifespan: uvicorn's graceful shutdown
    # waits for every connection to close *before* the lifespan shutdown, and a connected client's
    # open stream (a session's GET stream, a modern subscriptions/listen response) never ends by
    # itself, so SIGTERM would wait for as long as a client stays. Ending those streams first lets
    # uvicorn exit at once.
    # Bind here, not in uvicorn: a busy port is then an OSError we can report in one line (uvicorn
    # would log it and call sys.exit inside our task).
    where = f"{exposure.host if exposure.host in WILDCARDS else exposure.url_host}:{port}"
    sock = _bound(exposure.host, port, where)  # (not inheritable: no server started below may hold the port)
    # A modern (stateless) request in flight is its connection: uvicorn would wait for a long tool
    # call to finish before stopping. A moment for quick answers, then such calls are cancelled (the
    # bridge tells its client the call may or may not have run).
    tls = ssl_context(exposure) if exposure.tls else None
    config = uvicorn.Config(
        app,
        host=exposure.host,
        port=port,
        log_level="warning",
        lifespan="off",
        # llhttp (Node's parser, in C) rather than h11: h11 parsed and wrote each request in Python,
        # a quarter of what a tool call cost the engine over HTTP (docs/benchmarks.md); with a time
        # limit on a request's headers, which uvicorn has not.
        http=HeaderTimeout,
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        # The certificate files, checked by `check` above; uvicorn builds its own context from them.
        ssl_certfile=str(exposure.tls_cert) if tls else None,
        ssl_keyfile=str(exposure.tls_key) if tls else None,
    )
    server = _Uvicorn(config)
    finished = anyio.Event()
    launched = False

    async def run() -> None:
        # Shielded: cancelling uvicorn's task raises an ExceptionGroup; asking it to exit is clean.
        with anyio.CancelScope(shield=True):
            try:
                await server.serve(sockets=[sock])
            finally:
                finished.set()

    async with anyio.create_task_group() as tg:
        try:
            async with running:
                tg.start_soon(run)
                launched = True
                try:
                    while not server.started:
                        if finished.is_set():
                            raise OSError(f"cannot listen on {where}")
                        await anyio.sleep(0.02)
                    bound = server.servers[0].sockets[0].getsockname()[1]
                    url = f"{'https' if tls else 'http'}://{exposure.url_host}:{bound}{BASE}"
                    logger.info("listening on %s", url)
                    if on_listening is not None:
                        on_listening(url)
                    await anyio.Event().wait()  # until cancelled (not sleep_forever: see pyproject)
                finally:
                    server.should_exit = True  # stop accepting before the streams end
                    router.close_listeners()  # modern listen streams; leaving the manager ends the sessions
        finally:
            server.should_exit = True
            if launched:
                with anyio.CancelScope(shield=True):
                    await finished.wait()


def _bound(host: str, port: int, where: str) -> socket.socket:
    """A socket bound to `host:port` (IPv4 or IPv6); PortUnavailable in one line when it cannot be."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise PortUnavailable(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    sock = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":
            # A restarted gateway binds its port again at once, past the old one's TIME_WAIT.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PortUnavailable(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    return sock
