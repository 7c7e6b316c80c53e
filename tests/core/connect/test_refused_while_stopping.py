"""`connect --http` and a request the stopping engine refused (503, `serve/stopping.py`): it is sent
to that engine again until its endpoint closes, and is still "not taken" while one of those sends is
on its way, so the engine's loss noticed meanwhile (another call's connection broken) sends it on to
the next engine instead of answering the client that it may have run. The engine here is an HTTP
handler in this process (httpx's mock transport): the order of events is the test's own."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anyio
import httpx2
import pytest

from mcpmanager.core.connect.http_relay import HttpRelay
from mcpmanager.core.connect.relay import MAYBE_RUN, Endpoint
from mcpmanager.core.serve.routes import STOPPING
from tests.helpers.relay_engines import HANDSHAKE, INITIALIZE, INITIALIZED, Client, message

ENDPOINT = Endpoint("http://127.0.0.1:9/mcp", "a-token")


class StoppingEngine:
    """An engine that refuses the call `echo` (503) while it stops, and answers it once the relay has
    come back (its handshake replayed); a call to `boom` breaks its connection mid-answer."""

    def __init__(self) -> None:
        self.echo_posts = 0
        self.resending = anyio.Event()  # the relay's second send of `echo` has arrived
        self.replayed = False

    async def answer(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":
            return httpx2.Response(405)  # (no event stream for the session)
        body = json.loads(request.content)
        method, params = body.get("method"), body.get("params") or {}
        if method == "initialize":
            self.replayed = str(body["id"]).startswith("mcpmanager-bridge-")
            result = {"protocolVersion": HANDSHAKE, "capabilities": {}, "serverInfo": {"name": "e", "version": "1"}}
            answer = {"jsonrpc": "2.0", "id": body["id"], "result": result}
            return httpx2.Response(200, json=answer, headers={"mcp-session-id": "s"})
        if "id" not in body:
            return httpx2.Response(202)
        if params.get("name") == "boom":
            raise httpx2.ReadError("connection reset mid-answer", request=request)
        self.echo_posts += 1
        if not self.replayed:
            if self.echo_posts == 2:
                self.resending.set()
                await anyio.Event().wait()  # on its way: the stopping engine would refuse it again
            return httpx2.Response(503, text=STOPPING, headers={"Retry-After": "1"})
        text = params["arguments"]["text"]
        return httpx2.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {"content": [{"text": text}]}})


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> StoppingEngine:
    engine = StoppingEngine()
    transport = httpx2.MockTransport(engine.answer)
    monkeypatch.setattr(httpx2, "AsyncClient", partial(httpx2.AsyncClient, transport=transport))
    return engine


async def test_a_refused_request_being_sent_again_when_the_engine_is_lost_goes_to_the_next_one(
    engine: StoppingEngine,
) -> None:
    client = Client()
    relay = HttpRelay(lambda: ENDPOINT, client.write, ENDPOINT)
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.run, client.lines())
        await client.send.send(INITIALIZE)
        await client.answer(1)
        await client.send.send(INITIALIZED)
        await client.send.send(message(2, "tools/call", name="echo", arguments={"text": "after"}))
        with anyio.fail_after(10):
            await engine.resending.wait()
        await client.send.send(message(3, "tools/call", name="boom", arguments={}))
        broken: dict[str, Any] = (await client.answer(3))["result"]
        assert broken["isError"] is True and MAYBE_RUN in broken["content"][0]["text"]  # (it was taken)
        answered = await client.answer(2)
        assert answered.get("result") == {"content": [{"text": "after"}]}, answered  # not "may or may not have run"
        assert engine.replayed and engine.echo_posts == 3
        client.send.close()
