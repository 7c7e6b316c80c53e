"""The endpoint's paths: a stopping engine's MCP paths answer 503 without reaching their app."""

from __future__ import annotations

import anyio
from starlette.types import Message, Receive, Scope, Send

from mcpmanager.core.serve.routes import STOPPING, Paths


class Recorded:
    def __init__(self) -> None:
        self.called: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.called.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"served"})


def request(paths: Paths, path: str) -> tuple[int, bytes, dict[bytes, bytes]]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": path, "headers": [], "query_string": b""}
    anyio.run(paths, scope, receive, send)
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], body, dict(start["headers"])


def test_a_stopping_engine_takes_no_new_mcp_request() -> None:
    mcp, control = Recorded(), Recorded()
    paths = Paths({"/mcp": mcp, "/mcp/direct": mcp, "/control/show": control})
    assert request(paths, "/mcp/direct")[:2] == (200, b"served")

    paths.stopping = True
    for path in ("/mcp", "/mcp/", "/mcp/direct"):
        status, body, headers = request(paths, path)
        assert (status, body.decode()) == (503, STOPPING)
        assert headers[b"retry-after"] == b"1"
    assert mcp.called == ["/mcp/direct"]  # nothing reached the app once stopping
    assert request(paths, "/control/show")[:2] == (200, b"served")  # the front end's controls still answer
    assert request(paths, "/nowhere")[0] == 404
