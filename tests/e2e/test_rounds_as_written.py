"""A 2026-07-28 server's requests and answers through mcpmanager as they were written, with real
subprocess servers (`tests/helpers/round_server.py`, written with the SDK; a hand-written one for a
result without `resultType`) and the SDK's Client through `serve --stdio` and `serve --http`, in
both eras (legacy: the handshake; auto: 2026-07-28):

- the server is told the calling client's capabilities, and only those (plus roots where its entry
  configures them), on the lanes' path and the full one (a call with progress goes the full path),
  so it can refuse with -32021 what the client did not declare;
- a round's questions reach a 2026-07-28 client at once under the server's keys, and the server
  gets its own requestState back; a handshake-era client is asked each by mcpmanager;
- a requestState mcpmanager does not hold is refused with -32602; a server's -32602 passes as a
  JSON-RPC error with its data; a resource not found has the client's era's code and `data.uri`;
- a result without `resultType` is complete, from a stdio server and from an HTTP one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy.rounds import PARK_PREFIX
from tests.e2e.test_http import unused_port
from tests.helpers.asking_clients import Proxy, http_engine, proxy_client, wait_for_tools
from tests.helpers.clients import text_of
from tests.helpers.conformance import ROOT
from tests.helpers.fixture_servers import FAST, FIXTURES, write_config

TRANSPORTS = ["stdio", "http"]
ERAS = ["legacy", "auto"]
CONFIGURED_ROOT = "file:///srv/configured"
# What the SDK's Client declares for an elicitation callback (form and URL mode).
ELICITATION: dict[str, Any] = {"form": {}, "url": {}}

pytestmark = pytest.mark.parametrize(("transport", "era"), [(t, e) for t in TRANSPORTS for e in ERAS])


def round_server(*flags: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "tests.helpers.round_server", *flags], "cwd": str(ROOT), **extra}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("rounds-as-written")
    port = unused_port()
    bare = FIXTURES / "bare_modern_server.py"
    with (folder / "bare-http.log").open("w") as log:
        remote = subprocess.Popen([sys.executable, str(bare), "--http", str(port)], stderr=log)
    try:
        servers = {
            "rs": round_server(),
            "rs_fixed": round_server(roots=[CONFIGURED_ROOT]),
            "old": round_server("--handshake-only"),
            "bare": {"command": sys.executable, "args": [str(bare)]},
            "bare_http": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"},
        }
        config = write_config(folder, servers, supervisor=FAST)
        with http_engine(config, folder / "home") as running:
            yield running
    finally:
        remote.terminate()
        remote.wait(timeout=10)


class Person:
    """A client's elicitation side: fills every form with what its message asks for, in order."""

    ANSWERS: ClassVar[dict[str, str]] = {
        "Your name?": "ada",
        "Your favourite colour?": "blue",
        "Who are you?": "a tester",
    }

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"value": self.ANSWERS[params.message]})


async def sample(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="sampled"), model="m")


async def roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///home/ada/project")])  # type: ignore[arg-type]


async def on_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def declared(client: Client, tool: str, full_path: bool) -> dict[str, Any]:
    """What `tool` (a `declared` tool) was told the client can do; `full_path`: with a progress token,
    which the lanes leave to the full path."""
    result = await client.call_tool(tool, {}, progress_callback=on_progress if full_path else None)
    assert not result.is_error, text_of(result)
    told: dict[str, Any] = json.loads(text_of(result))
    return told


async def test_a_server_is_told_the_calling_clients_capabilities_and_only_those(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    person = Person()
    async with proxy_client(proxy, transport, era, tmp_path / "a", elicitation_callback=person.elicit) as only_forms:
        await wait_for_tools(only_forms, {"rs__declared", "rs_fixed__declared"})
        for full_path in (False, True):
            assert await declared(only_forms, "rs__declared", full_path) == {"elicitation": ELICITATION}
            # Its entry names roots: mcpmanager answers them, so it declares them too.
            fixed = await declared(only_forms, "rs_fixed__declared", full_path)
            assert fixed == {"elicitation": ELICITATION, "roots": {"listChanged": True}}
        async with proxy_client(
            proxy,
            transport,
            era,
            tmp_path / "b",
            elicitation_callback=person.elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as everything:
            await wait_for_tools(everything, {"rs__declared"})
            for full_path in (False, True):
                told = await declared(everything, "rs__declared", full_path)
                assert told == {"elicitation": ELICITATION, "roots": {"listChanged": True}, "sampling": {}}
                # The first client's set again, after the second's (each set's envelope is kept apart).
                assert await declared(only_forms, "rs__declared", full_path) == {"elicitation": ELICITATION}

            assert text_of(await everything.call_tool("rs__needs_sampling", {})) == "sampling declared"
        with pytest.raises(MCPError) as refused:  # the server's own refusal, as it wrote it
            await only_forms.call_tool("rs__needs_sampling", {})
        error = refused.value.error
        assert (error.code, error.message, error.data) == (
            -32021,
            "This tool needs sampling.",
            {"required": ["sampling"]},
        )


async def test_a_rounds_questions_reach_the_client_at_once_under_the_servers_keys(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    person = Person()
    async with proxy_client(proxy, transport, era, tmp_path / "c", elicitation_callback=person.elicit) as client:
        await wait_for_tools(client, {"rs__ask_two"})
        answered = json.loads(text_of(await client.call_tool("rs__ask_two", {})))
        expected = {"favourite_colour": {"value": "blue"}, "user_name": {"value": "ada"}}
        assert answered == {"answers": expected, "keys": ["favourite_colour", "user_name"], "state": "intact"}
        assert sorted(person.asked) == ["Your favourite colour?", "Your name?"]
        if era == "legacy":
            return  # a handshake-era client was asked each question by mcpmanager: nothing more to see
        first = await client.session.call_tool("rs__ask_two", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert set(first.input_requests or {}) == {"user_name", "favourite_colour"}  # one result, the server's keys
        state = first.request_state
        assert state is not None and state.startswith(PARK_PREFIX)  # ours: the server's waits with mcpmanager
        responses: types.InputResponses = {
            "user_name": types.ElicitResult(action="accept", content={"value": "grace"}),
            "favourite_colour": types.ElicitResult(action="accept", content={"value": "green"}),
        }
        with pytest.raises(MCPError) as tampered:
            await client.session.call_tool(
                "rs__ask_two", {}, input_responses=responses, request_state=state + "-TAMPERED"
            )
        assert tampered.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as foreign:  # a state mcpmanager never issued
            await client.session.call_tool("rs__ask_two", {}, input_responses=responses, request_state="made-up")
        assert foreign.value.error.code == types.INVALID_PARAMS
        final = await client.session.call_tool(
            "rs__ask_two", {}, input_responses=responses, request_state=state, allow_input_required=True
        )
        assert isinstance(final, types.CallToolResult)
        got = json.loads(text_of(final))
        assert got["answers"] == {"favourite_colour": {"value": "green"}, "user_name": {"value": "grace"}}
        assert got["state"] == "intact"  # the server's own requestState came back to it unaltered


async def test_configured_roots_are_answered_by_mcpmanager_and_the_rest_of_the_round_by_the_client(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    person = Person()
    async with proxy_client(proxy, transport, era, tmp_path / "d", elicitation_callback=person.elicit) as client:
        await wait_for_tools(client, {"rs_fixed__where_and_who"})
        if era == "auto":
            first = await client.session.call_tool("rs_fixed__where_and_who", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult) and set(first.input_requests or {}) == {"who"}
        answered = json.loads(text_of(await client.call_tool("rs_fixed__where_and_who", {})))
        assert answered["answers"] == {"where": [CONFIGURED_ROOT], "who": {"value": "a tester"}}


async def test_a_servers_protocol_errors_and_a_missing_resource_stay_json_rpc_errors(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, era, tmp_path / "e") as client:
        await wait_for_tools(client, {"rs__bad_params"})
        for callback in (None, on_progress):  # the lanes' path and the full path
            with pytest.raises(MCPError) as refused:
                await client.call_tool("rs__bad_params", {}, progress_callback=callback)
            error = refused.value.error
            assert (error.code, error.message, error.data) == (-32602, "x must be a number", {"field": "x"})
        with pytest.raises(MCPError) as missing:
            await client.read_resource("round://missing")
        code = -32602 if era == "auto" else -32002  # SEP-2164: the code of the client's era
        assert missing.value.error.code == code
        assert isinstance(missing.value.error.data, dict) and missing.value.error.data["uri"] == "round://missing"


async def test_a_result_without_result_type_is_complete_from_stdio_and_http_servers(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, era, tmp_path / "f") as client:
        await wait_for_tools(client, {"bare__plain", "bare_http__plain"})
        for tool in ("bare__plain", "bare_http__plain"):
            for callback in (None, on_progress):
                result = await client.call_tool(tool, {}, progress_callback=callback)
                assert not result.is_error and text_of(result) == "no resultType here", (tool, text_of(result))
