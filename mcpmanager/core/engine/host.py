"""Serving an engine to clients over HTTP: what `serve --http` and the window both wire up.

The bearer token is made (or reused) in the runtime directory, the endpoint is served on the
config's port (or the one asked for), and once it listens the engine advertises where, so
`mcpmanager status`, `connect` and a second `mcpmanager` find it. Beside it, on this machine's own
endpoint, the local socket `connect` relays over (`serve/local_socket.py`), advertised likewise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve.bearer_token import ensure_token, token_path
from mcpmanager.core.serve.exposure import LOCAL, Exposure
from mcpmanager.core.serve.http import serve_http
from mcpmanager.core.serve.local_socket import available, serve_local, socket_path
from mcpmanager.core.serve.routes import Controls
from mcpmanager.core.serve.stopping import GRACE, Stopping, drained
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn

logger = logging.getLogger(__name__)


def token_file(paths: Paths) -> Path:
    """Where an engine that serves HTTP keeps its bearer token (for its `Identity`)."""
    return token_path(paths.runtime_dir)


async def host_http(
    engine: Engine,
    port: int | None = None,
    controls: Controls | None = None,
    on_listening: Callable[[str], None] | None = None,
    exposure: Exposure = LOCAL,
) -> None:
    """Serve `engine` until cancelled, on 127.0.0.1 or as `exposure` says (a team gateway);
    `on_listening` gets the URL once it listens. Raises `PortUnavailable` when the port cannot be
    had, `ExposureError` when the exposure must not start."""
    token = ensure_token(engine.paths.runtime_dir)

    def listening(url: str) -> None:
        engine.listening(url)
        if on_listening is not None:
            on_listening(url)

    chosen = engine.config.proxy.port if port is None else port
    every = {**(controls or {}), "reconnect": lambda server: reconnect(engine, server)}
    if exposure.tokens is not None:
        every = {}  # a gateway's token holders are its users, not this machine's front end

    failure: Exception | None = None
    stopping = Stopping()
    # The stop (this task cancelled) reaches the endpoints only once the calls in flight had their
    # grace (`stopping`): cancelled at once, the sessions would end under them.
    serving = anyio.CancelScope(shield=True)
    ended = anyio.Event()

    async def serve() -> None:
        nonlocal failure
        try:
            with serving:
                async with anyio.create_task_group() as tg:
                    if exposure == LOCAL:
                        tg.start_soon(host_local, engine, token)
                    try:
                        await serve_http(
                            engine.router,
                            chosen,
                            listening,
                            token=token,
                            controls=every,
                            exposure=exposure,
                            stopping=stopping,
                        )
                    except Exception as exc:  # raised below as it is, not in the task group's exception group:
                        failure = exc  # callers name a busy port in one line (`except* PortUnavailable`)
                    tg.cancel_scope.cancel()
        finally:
            ended.set()  # (whatever ended it: the stop below waits for this)

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        try:
            await ended.wait()  # (only a failure ends it by itself)
        finally:
            with anyio.CancelScope(shield=True):
                if not ended.is_set():
                    stopping.begin()
                    try:
                        if not await drained(engine.router.callers):
                            logger.info("stopping with requests still in flight after %g s", GRACE)
                    finally:
                        serving.cancel()
                    await ended.wait()
    if failure is not None:
        raise failure


async def host_local(engine: Engine, token: str) -> None:
    """The local socket for `connect`, until cancelled; none (HTTP serves `connect` then) where the
    platform or the runtime directory's path allows none, or it cannot be bound."""
    path = socket_path(engine.paths.runtime_dir) if available() else None
    if path is None:
        return
    try:
        await serve_local(engine.router, path, token, engine.listening_locally)
    except OSError as exc:
        logger.warning("no local socket for connect (it relays over HTTP instead): %s", exc.strerror or exc)
        if engine.local_socket is not None:
            engine.listening_locally(None)
    # Stopping (cancelled), the advertisement keeps naming the socket, whose file is gone: a relay that
    # looks meanwhile (the engine stops its servers first) cannot reach it and tries again. Advertised
    # without one, the engine would read as an HTTP-only one, and the relay gives up on those.


def reconnect(engine: Engine, server: str) -> None:
    """`server` was signed in to or out of (`mcpmanager login`, `logout`): connect it again."""
    downstream = engine.downstreams.get(server)
    if downstream is not None and not downstream.config.disabled:
        spawn(downstream.restart(), name=f"reconnect:{server}")
