"""The endpoint's routes: one path per mode over one engine, behind the local guard.

/mcp             the engine's default mode (the config's, or `serve --mode`)
/mcp/discovery   discovery mode: the meta-tools and the always-on tools
/mcp/direct      direct mode: every enabled tool
/control/<name>  (POST) asks the running front end to do something: `show` brings the window
                 forward (a second `mcpmanager` does this instead of starting another engine);
                 `reconnect?server=NAME` connects a server again after `mcpmanager login` (the
                 query's parameters are the action's keyword arguments)

Each path also answers with a trailing slash. Paths are looked up in a dict rather than routed by a
web framework: every tool call passes here, and Starlette's app, error and exception middleware and
router (a regular expression per route, tried in turn) cost a tenth of the engine's CPU per call
over HTTP (docs/benchmarks.md). An error escaping an app is answered 500 by uvicorn, as Starlette did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcpmanager.core.config.modes import MODES
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.sdk_compat import use_session_manager
from mcpmanager.core.serve.guard import Admission, ASGIApp, Guard, Receive, Scope, Send
from mcpmanager.core.serve.json_first import JsonFirstSessions
from mcpmanager.core.serve.stopping import Stopping, new_work
from mcpmanager.core.serve.trimmed import TrimmedHeaders

BASE = "/mcp"
STOPPING = "mcpmanager's engine is stopping; the request was not taken. Send it again in a moment.\n"
Controls = Mapping[str, Callable[..., object]]


def build_app(
    router: Router,
    admission: Admission,
    controls: Controls | None = None,
    stateless: bool = False,
    stopping: Stopping | None = None,
) -> tuple[ASGIApp, AbstractAsyncContextManager[Any]]:
    """The app and a context that runs every mode's session manager (enter it before serving).
    `stateless`: no session is kept between requests, so any replica can answer any of them.
    `stopping`: once begun, MCP requests are answered 503 (all of them as the context exits)."""
    stopping = Stopping() if stopping is None else stopping
    routes: dict[str, ASGIApp] = {}
    # The guard checks Host and Origin against the endpoint's own names; the SDK's own check knows
    # only loopback names, so it is switched off rather than kept as a second, narrower list.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    for mode in MODES:
        server = router.mode_server(mode).server
        # The SDK's session manager, answering requests with JSON unless they need a stream (`json_first`).
        sessions = JsonFirstSessions(app=server, stateless=stateless, security_settings=security)
        sessions.lanes = router.mode_server(mode).wire_lane  # each session's fast lane (`wire_lane`)
        use_session_manager(server, sessions)
        endpoint = StreamableHTTPASGIApp(sessions)
        routes[f"{BASE}/{mode}"] = endpoint
        if mode == router.mode:
            routes[BASE] = endpoint
    for name, action in (controls or {}).items():
        routes[f"/control/{name}"] = _control(action)
    app = TrimmedHeaders(Guard(Paths(routes, stopping), admission))  # header values as RFC 9110 reads them

    @asynccontextmanager
    async def running() -> Any:
        async with AsyncExitStack() as stack:
            for mode in MODES:
                await stack.enter_async_context(router.mode_server(mode).server.session_manager.run())
            try:
                yield
            finally:
                stopping.close()  # before the sessions end: what comes in from now is not taken

    return app, running()


class Paths:
    """ASGI: the app of the request's path (with or without a trailing slash), else 404. Once the
    engine stops (`stopping`), an MCP request that would start new work is answered 503 without
    being served: the sessions are about to end, so it would otherwise fail, or be cut off, without
    saying whether it ran. A 503 says it did not, and `connect` sends it on to the next engine
    (`http_relay`). What a client sends about the work in flight still reaches it, until the sessions
    end (`closed`): from then on everything is answered 503."""

    def __init__(self, apps: Mapping[str, ASGIApp], stopping: Stopping) -> None:
        self.apps = {**apps, **{f"{path}/": app for path, app in apps.items()}}
        self.stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # (lifespan: uvicorn runs none here)
            return
        app = self.apps.get(scope["path"])
        if app is None:
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        if self.stopping.begun and scope["path"].startswith(BASE):
            refused, receive = (True, receive) if self.stopping.closed else await new_work(scope, receive)
            if refused:
                await PlainTextResponse(STOPPING, status_code=503, headers={"Retry-After": "1"})(scope, receive, send)
                return
        await app(scope, receive, send)


def _control(action: Callable[..., object]) -> ASGIApp:
    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            answer = PlainTextResponse("Method Not Allowed", status_code=405, headers={"Allow": "POST"})
        else:
            try:
                action(**request.query_params)
                answer = PlainTextResponse("ok\n")
            except TypeError:
                answer = PlainTextResponse("unexpected parameters\n", status_code=400)
        await answer(scope, receive, send)

    return endpoint
