"""Rounds a 2026-07-28 client does not finish as it was asked, through mcpmanager to real subprocess
servers (the conformance fixture as a handshake-era server, `--handshake-only`; the 2026-07-28
`round_server`) with the SDK's Client, over `serve --stdio`, `serve --http` and `connect`:

- a retry that answers part of a round: a handshake-era server is told what was answered and the
  client is asked the rest again (only those questions, under the same keys, a new requestState);
  a 2026-07-28 server gets the partial answers untouched (its round, its re-ask);
- a retry answering a key the round never asked has that answer ignored: a 2026-07-28 server never
  sees it, a handshake-era server's call finishes, or is asked again only what is still missing;
- a round abandoned by a client on a pipe (`serve --stdio`, `connect`) does not make that same
  client's next call's question ambiguous; two clients over HTTP, where requests carry no identity,
  still are (mcpmanager cannot tell the abandoned round's client from the other one).

Each test uses server entries of its own: a round left parked stays with its server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy.rounds import PARK_PREFIX
from tests.helpers.asking_clients import Answering, Proxy, http_engine, outcome, proxy_client, wait_for_tools
from tests.helpers.clients import text_of
from tests.helpers.conformance import ROOT, conformance_fixture
from tests.helpers.fixture_servers import FAST, write_config

PARTIAL = ["http", "connect"]
PIPES = ["stdio", "connect"]
OLD_SERVERS = ["old_partial", "old_unasked", "old_pipe_stdio", "old_pipe_connect", "old_http"]


def round_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "tests.helpers.round_server"], "cwd": str(ROOT)}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("rounds-unfinished")
    servers = {name: conformance_fixture("--handshake-only") for name in OLD_SERVERS}
    servers.update({"rs_partial": round_server(), "rs_unasked": round_server()})
    config = write_config(folder, servers, supervisor=FAST)
    with http_engine(config, folder / "home") as running:
        yield running


def round_of(result: Any) -> types.InputRequiredResult:
    assert isinstance(result, types.InputRequiredResult), result
    assert result.request_state is not None and result.request_state.startswith(PARK_PREFIX)
    return result


def keys_by_method(result: types.InputRequiredResult) -> dict[str, str]:
    """A handshake-era server's questions carry no key: mcpmanager numbers them. Which is which."""
    return {request.method: key for key, request in (result.input_requests or {}).items()}


# (Clients are made with `Answering` callbacks for what they declare; these calls answer by hand.)
Response = types.ElicitResult | types.CreateMessageResult | types.ListRootsResult
NAME = types.ElicitResult(action="accept", content={"name": "ada"})
GREETING = types.CreateMessageResult(role="assistant", content=types.TextContent(text="hello there"), model="m")
ROOTS = types.ListRootsResult(roots=[types.Root(uri="file:///home/ada/one")])  # type: ignore[arg-type]
MULTIPLE = "test_input_required_result_multiple_inputs"  # asks a form, a sample and roots at once


async def call(
    client: Client, tool: str, responses: types.InputResponses | None = None, state: str | None = None
) -> Any:
    """One request of a round by hand (the Client would answer a round itself)."""
    arguments = {"message": "Who are you?"} if tool.endswith("__test_elicitation") else {}
    return await client.session.call_tool(
        tool, arguments, input_responses=responses, request_state=state, allow_input_required=True
    )


@pytest.mark.parametrize("transport", PARTIAL)
async def test_a_retry_missing_an_answer_is_asked_the_rest_again(proxy: Proxy, transport: str, tmp_path: Path) -> None:
    tool = f"old_partial__{MULTIPLE}"
    async with proxy_client(proxy, transport, "auto", tmp_path, **Answering().callbacks()) as client:
        await wait_for_tools(client, {tool})
        first = round_of(await call(client, tool))
        keys = keys_by_method(first)
        assert set(keys) == {"elicitation/create", "sampling/createMessage", "roots/list"}
        partial: types.InputResponses = {keys["elicitation/create"]: NAME, keys["sampling/createMessage"]: GREETING}
        again = round_of(await call(client, tool, partial, first.request_state))
        # Only what is missing, under the key it had; a new state (the first one is used up).
        assert list(again.input_requests or {}) == [keys["roots/list"]]
        assert isinstance((again.input_requests or {})[keys["roots/list"]], types.ListRootsRequest)
        assert again.request_state != first.request_state
        with pytest.raises(MCPError) as used:
            await call(client, tool, {keys["roots/list"]: ROOTS}, first.request_state)
        assert used.value.error.code == types.INVALID_PARAMS
        final = await call(client, tool, {keys["roots/list"]: ROOTS}, again.request_state)
    assert isinstance(final, types.CallToolResult) and not final.is_error, final
    assert text_of(final) == "Name: ada; Greeting: hello there; Roots: 1"


@pytest.mark.parametrize("transport", PARTIAL)
async def test_a_2026_servers_round_gets_a_partial_answer_as_the_client_sent_it(
    proxy: Proxy, transport: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, "auto", tmp_path, **Answering().callbacks()) as client:
        await wait_for_tools(client, {"rs_partial__ask_two"})
        first = round_of(await call(client, "rs_partial__ask_two"))
        assert set(first.input_requests or {}) == {"user_name", "favourite_colour"}
        only_name: types.InputResponses = {"user_name": types.ElicitResult(action="accept", content={"value": "grace"})}
        final = await call(client, "rs_partial__ask_two", only_name, first.request_state)
    assert isinstance(final, types.CallToolResult) and not final.is_error, final
    got = json.loads(text_of(final))  # what the server saw: the one answer, its own state intact
    assert got == {
        "answers": {"favourite_colour": None, "user_name": {"value": "grace"}},
        "keys": ["user_name"],
        "state": "intact",
    }


@pytest.mark.parametrize("transport", PARTIAL)
async def test_an_answer_to_a_question_never_asked_is_ignored(proxy: Proxy, transport: str, tmp_path: Path) -> None:
    old_tool, new_tool = f"old_unasked__{MULTIPLE}", "rs_unasked__ask_two"
    form = types.ElicitResult(action="accept", content={"value": "x"})
    async with proxy_client(proxy, transport, "auto", tmp_path, **Answering().callbacks()) as client:
        await wait_for_tools(client, {old_tool, new_tool})
        # A 2026-07-28 server gets the answers to its questions, not the stray one.
        new = round_of(await call(client, new_tool))
        both: types.InputResponses = {"user_name": form, "favourite_colour": form}
        final = await call(client, new_tool, {**both, "zz_never_asked": form}, new.request_state)
        assert isinstance(final, types.CallToolResult) and not final.is_error, final
        assert json.loads(text_of(final))["keys"] == ["favourite_colour", "user_name"]
        # A handshake-era server's round (mcpmanager's keys): what is missing is asked again, the
        # stray key neither answers it nor comes back in the new round.
        old = round_of(await call(client, old_tool))
        keys = keys_by_method(old)
        partial: types.InputResponses = {keys["elicitation/create"]: NAME, keys["sampling/createMessage"]: GREETING}
        again = round_of(await call(client, old_tool, {**partial, "zz_never_asked": ROOTS}, old.request_state))
        assert list(again.input_requests or {}) == [keys["roots/list"]]
        done = await call(client, old_tool, {keys["roots/list"]: ROOTS, "zz_never_asked": form}, again.request_state)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert text_of(done) == "Name: ada; Greeting: hello there; Roots: 1"


@pytest.mark.parametrize("transport", PIPES)
async def test_a_round_abandoned_on_a_pipe_leaves_that_clients_next_question_to_it(
    proxy: Proxy, transport: str, tmp_path: Path
) -> None:
    server = f"old_pipe_{transport}"
    answering = Answering()
    async with proxy_client(proxy, transport, "auto", tmp_path, **answering.callbacks()) as client:
        await wait_for_tools(client, {f"{server}__test_elicitation", f"{server}__test_sampling"})
        abandoned = round_of(await call(client, f"{server}__test_elicitation"))
        # The client never retries it. Its next call's question still reaches it: its requests come
        # on one pipe, so the parked round and the new call are the same client's.
        got = await outcome(client, f"{server}__test_sampling", {"prompt": "Still there?"})
        assert got == f"LLM response: {Answering.reply_to('Still there?')}"
        key = next(iter(abandoned.input_requests or {}))
        done = await call(client, f"{server}__test_elicitation", {key: NAME}, abandoned.request_state)
        assert isinstance(done, types.CallToolResult) and not done.is_error, done  # (late, but it is answered)


async def test_a_round_abandoned_over_http_still_makes_another_clients_question_ambiguous(
    proxy: Proxy, tmp_path: Path
) -> None:
    gone, other = Answering(), Answering()
    async with proxy_client(proxy, "http", "auto", tmp_path / "a", **gone.callbacks()) as first:
        await wait_for_tools(first, {"old_http__test_elicitation", "old_http__test_sampling"})
        abandoned = round_of(await call(first, "old_http__test_elicitation"))
        async with proxy_client(proxy, "http", "auto", tmp_path / "b", **other.callbacks()) as second:
            got = await outcome(second, "old_http__test_sampling", {"prompt": "Whose question?"})
        # Requests over HTTP carry no client identity: the question may be the parked call's own
        # (a server may ask again while it waits), so nobody is asked rather than perhaps the wrong one.
        assert "cannot tell which one this is for" in got, got
        assert gone.samples == [] and other.samples == []
        key = next(iter(abandoned.input_requests or {}))
        done = await call(first, "old_http__test_elicitation", {key: NAME}, abandoned.request_state)
        assert isinstance(done, types.CallToolResult) and not done.is_error, done
