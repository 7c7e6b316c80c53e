"""The endpoint's routes: one path per mode over one engine, behind the local guard.

/mcp             the engine's default mode (the config's, or `serve --mode`)
/mcp/discovery   discovery mode: the meta-tools and the always-on tools
/mcp/direct      direct mode: every enabled tool
/control/<name>  (POST) asks the running front end to do something: `show` brings the window
                 forward (a second `mcpmanager` does this instead of starting another engine);
                 `reconnect?server=NAME` connects a server again after `mcpmanager login` (the
                 query's parameters are the action's keyword arguments)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Route

from mcpmanager.core.config.modes import MODES
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.sdk_compat import use_session_manager
from mcpmanager.core.serve.guard import Admission, Guard
from mcpmanager.core.serve.json_first import JsonFirstSessions

BASE = "/mcp"
Controls = Mapping[str, Callable[..., object]]


def build_app(
    router: Router, admission: Admission, controls: Controls | None = None, stateless: bool = False
) -> tuple[Starlette, AbstractAsyncContextManager[Any]]:
    """The app and a context that runs every mode's session manager (enter it before serving).
    `stateless`: no session is kept between requests, so any replica can answer any of them."""
    routes: list[BaseRoute] = []
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
        routes.append(Route(f"{BASE}/{mode}", endpoint=endpoint))
        if mode == router.mode:
            routes.append(Route(BASE, endpoint=endpoint))
    for name, action in (controls or {}).items():
        routes.append(Route(f"/control/{name}", endpoint=_control(action), methods=["POST"]))
    app = Starlette(routes=routes, middleware=[Middleware(Guard, admission=admission)])

    @asynccontextmanager
    async def running() -> Any:
        async with AsyncExitStack() as stack:
            for mode in MODES:
                await stack.enter_async_context(router.mode_server(mode).server.session_manager.run())
            yield

    return app, running()


def _control(action: Callable[[], object]) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> PlainTextResponse:
        try:
            action(**request.query_params)
        except TypeError:
            return PlainTextResponse("unexpected parameters\n", status_code=400)
        return PlainTextResponse("ok\n")

    return endpoint
