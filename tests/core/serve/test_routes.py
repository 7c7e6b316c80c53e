"""The endpoint's paths: once the engine stops, a POST that would start new work is answered 503
without reaching its app; what a client sends about work in flight still reaches it, body intact."""

from __future__ import annotations

import json

import anyio
from starlette.types import Message, Receive, Scope, Send

from mcpmanager.core.serve.routes import STOPPING, Paths
from mcpmanager.core.serve.stopping import Stopping

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
ANSWER = {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept", "content": {}}}  # to a server's question
CANCEL = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}


class Recorded:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:  # as an app reads it: every chunk, until no more
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"served"})


def request(paths: Paths, path: str, body: bytes = b"", method: str = "POST") -> tuple[int, bytes, dict[bytes, bytes]]:
    sent: list[Message] = []
    chunks = [body[:5], body[5:]]  # in two parts, as a body may come

    async def receive() -> Message:
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": method, "path": path, "headers": [], "query_string": b""}
    anyio.run(paths, scope, receive, send)
    start, answer = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], answer, dict(start["headers"])


def test_a_stopping_engine_takes_no_new_request_but_hears_about_the_work_in_flight() -> None:
    mcp, control = Recorded(), Recorded()
    stopping = Stopping()
    paths = Paths({"/mcp": mcp, "/mcp/direct": mcp, "/control/show": control}, stopping)
    call = json.dumps(CALL).encode()
    assert request(paths, "/mcp/direct", call)[:2] == (200, b"served")

    stopping.begin()
    for path in ("/mcp", "/mcp/", "/mcp/direct"):
        status, answer, headers = request(paths, path, call)
        assert (status, answer.decode()) == (503, STOPPING)
        assert headers[b"retry-after"] == b"1"
    assert request(paths, "/mcp", json.dumps([CANCEL, CALL]).encode())[0] == 503  # a batch with a request
    assert mcp.bodies == [call]  # none of them reached the app

    again = json.dumps({**CALL, "params": {"name": "echo", "arguments": {}, "inputResponses": {}, "requestState": "s"}})
    deep = b"[" * 100_000 + b"]" * 100_000
    for body in (json.dumps(ANSWER).encode(), json.dumps(CANCEL).encode(), again.encode(), b"{not json", deep):
        assert request(paths, "/mcp", body)[:2] == (200, b"served")
        assert mcp.bodies[-1] == body  # handed on whole
    huge = b" " * (5 << 20)  # past what is read to tell: on to the endpoint, which refuses it as too large
    assert request(paths, "/mcp", huge)[:2] == (200, b"served") and mcp.bodies[-1] == huge
    assert request(paths, "/mcp", method="DELETE")[:2] == (200, b"served")  # a client ending its session
    assert request(paths, "/control/show", call)[:2] == (200, b"served")  # the front end's controls answer
    assert request(paths, "/nowhere")[0] == 404

    served = len(mcp.bodies)
    stopping.close()  # the sessions end: nobody is left to hear even an answer or a cancellation
    for body in (json.dumps(ANSWER).encode(), json.dumps(CANCEL).encode()):
        assert request(paths, "/mcp", body)[:2] == (503, STOPPING.encode())
    assert request(paths, "/mcp", method="DELETE")[0] == 503
    assert len(mcp.bodies) == served
