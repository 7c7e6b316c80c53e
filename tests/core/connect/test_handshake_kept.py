"""Which `initialize` the relay keeps as the client's handshake (replayed to each new engine, and
whose version the HTTP link's headers carry): the one an engine accepted, not a refused one before
or after it. A recording link stands in for the engine here; the links themselves, against real
engines: tests/e2e/test_malformed_requests.py and tests/core/connect/test_relay.py."""

from __future__ import annotations

import json
from typing import Any

from mcpmanager.core.connect.relay import Message, Pending, Relay


class Recording(Relay):
    """A link that sends nothing: what the relay forwards is kept."""

    def __init__(self) -> None:
        async def write(data: bytes) -> None:
            self.written.append(json.loads(data))

        super().__init__(lambda: None, write)  # type: ignore[arg-type,return-value]
        self.written: list[Message] = []

    async def _forward(self, raw: bytes, message: Message | None, request: Pending | None) -> None:
        pass


def initialize(request_id: str, version: Any) -> bytes:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}).encode()


def refused(request_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "no"}}).encode()


def accepted(request_id: str) -> bytes:
    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "e", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


async def answer(relay: Relay, data: bytes) -> None:
    await relay._to_client(data, json.loads(data))


def kept(relay: Relay) -> tuple[Any, str | None]:
    _, replayed = relay._replayed_initialize()
    return replayed["params"]["protocolVersion"], relay._version


async def test_a_refused_first_initialize_gives_way_to_the_accepted_one() -> None:
    relay = Recording()
    await relay._from_client(initialize("bad", 5))
    await answer(relay, refused("bad"))
    await relay._from_client(initialize("good", "2025-11-25"))
    await answer(relay, accepted("good"))
    assert kept(relay) == ("2025-11-25", "2025-11-25")


async def test_a_refused_initialize_after_the_handshake_changes_nothing() -> None:
    relay = Recording()
    await relay._from_client(initialize("good", "2025-11-25"))
    await answer(relay, accepted("good"))
    await relay._from_client(initialize("again", "1999-01-01"))
    await answer(relay, refused("again"))
    assert kept(relay) == ("2025-11-25", "2025-11-25")
    assert [m.get("id") for m in relay.written] == ["good", "again"]  # both answers reach the client
