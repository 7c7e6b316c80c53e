"""Tasks through mcpmanager (docs/protocol.md, "Tasks"), with the SDK's Client over `serve --stdio`
and `serve --http`, in both client eras, to two task servers (`tests/helpers/task_server.py`): `one`
over stdio speaking only the handshake era (the 2025-11-25 tasks utility) and `two` over Streamable
HTTP (mcpmanager speaks 2026-07-28 to it: the tasks extension). Both hand out the same task ids for
the same label. `callTimeout` is 2 s, so a task of 4 s outlives any one request."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict

from mcpmanager.core.sdk_compat import send_raw
from tests.helpers.asking_clients import Proxy, http_engine, proxy_client, tool_names
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config

EXTENSION = "io.modelcontextprotocol/tasks"
ROOT = Path(__file__).resolve().parents[2]
SERVERS = ("one", "two")
TIMEOUT = 30.0

pytestmark = pytest.mark.parametrize(
    ("transport", "era"), [(t, e) for t in ("stdio", "http") for e in ("legacy", "auto")]
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("task-log") / "tasks.jsonl"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, server_log: Path) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("tasks")
    port = free_port()
    env = {**os.environ, "TASK_SERVER_LOG": str(server_log), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.helpers.task_server", "--http", str(port)]
    http_server = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:  # until it accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and http_server.poll() is None, "the HTTP task server did not start"
                time.sleep(0.05)
        servers: dict[str, Any] = {
            "one": {
                "command": sys.executable,
                "args": ["-m", "tests.helpers.task_server", "--handshake-only"],
                "cwd": str(ROOT),
                "env": {"TASK_SERVER_LOG": str(server_log)},
            },
            "two": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"},
        }
        config = write_config(folder, servers, supervisor={**FAST, "callTimeout": 2})
        with http_engine(config, folder / "home") as running:
            yield running
    finally:
        http_server.terminate()
        http_server.wait(timeout=10)


class Statuses(ClientExtension):
    """A client that takes tasks: the extension declared (2026-07-28), the utility's status
    notifications heard (2025-11-25)."""

    identifier = EXTENSION

    def __init__(self) -> None:
        self.heard: list[dict[str, Any]] = []

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/tasks/status", params_type=types.TaskStatusNotificationParams, handler=self.on
            )
        ]

    async def on(self, params: types.TaskStatusNotificationParams) -> None:
        self.heard.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))


@asynccontextmanager
async def client_of(proxy: Proxy, transport: str, era: str, home: Path, **options: Any) -> AsyncIterator[Client]:
    async with proxy_client(proxy, transport, era, home, **options) as client:
        wanted = {f"{server}__{tool}" for server in SERVERS for tool in ("slow_job", "failing_job")}
        await wait_for(lambda: _listed(client, wanted), timeout=TIMEOUT)
        yield client


async def _listed(client: Client, wanted: set[str]) -> bool:
    return wanted <= await tool_names(client)


async def call_as_task(client: Client, tool: str, seconds: float, label: str) -> dict[str, Any]:
    """tools/call as a client that takes tasks does: the extension declared (2026-07-28), or `task`
    in the call (2025-11-25). The task, as the client's flavour writes it."""
    params = {"name": tool, "arguments": {"seconds": seconds, "label": label}}
    if modern(client):
        created = await send_raw(client, "tools/call", params, TIMEOUT, extensions={EXTENSION: {}})
        assert created["resultType"] == "task" and "task" not in created
        return created
    created = await send_raw(client, "tools/call", {**params, "task": {"ttl": 60_000}}, TIMEOUT)
    assert set(created) == {"task"}
    task: dict[str, Any] = created["task"]
    return task


async def tasks_request(client: Client, method: str, task_id: str) -> dict[str, Any]:
    extensions: dict[str, dict[str, Any]] | None = {EXTENSION: {}} if modern(client) else None
    return await send_raw(client, method, {"taskId": task_id}, TIMEOUT, extensions=extensions)


async def until_ended(client: Client, task_id: str) -> dict[str, Any]:
    ended: dict[str, Any] = {}

    async def done() -> bool:
        ended.update(await tasks_request(client, "tasks/get", task_id))
        return ended["status"] in ("completed", "failed", "cancelled")

    await wait_for(done, timeout=TIMEOUT, interval=0.2)
    return ended


async def until_asking(client: Client, task_id: str) -> dict[str, Any]:
    """The task once it waits for input (`input_required`, 2026-07-28)."""
    waiting: dict[str, Any] = {}

    async def asking() -> bool:
        waiting.update(await tasks_request(client, "tasks/get", task_id))
        return bool(waiting["status"] == "input_required")

    await wait_for(asking, timeout=TIMEOUT, interval=0.1)
    return waiting


def modern(client: Client) -> bool:
    return client.protocol_version == "2026-07-28"


def logged(server_log: Path, event: str, label: str) -> list[dict[str, Any]]:
    if not server_log.exists():
        return []
    lines = [json.loads(line) for line in server_log.read_text().splitlines() if line.strip()]
    return [line for line in lines if line["event"] == event and line["label"] == label]


def text_of(result: dict[str, Any] | types.CallToolResult) -> str:
    if isinstance(result, types.CallToolResult):
        return "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return "".join(c["text"] for c in result["content"] if c.get("type") == "text")


@pytest.mark.parametrize("server", SERVERS)
async def test_a_client_that_takes_tasks_gets_the_task_and_its_result(
    proxy: Proxy, transport: str, era: str, server: str, tmp_path: Path
) -> None:
    statuses, others = Statuses(), Statuses()
    label = f"a-{uuid.uuid4().hex[:8]}"
    async with (
        client_of(proxy, transport, era, tmp_path / "stdio", extensions=[statuses]) as client,
        client_of(proxy, transport, era, tmp_path / "other", extensions=[others]) as other,
    ):
        task = await call_as_task(client, f"{server}__slow_job", 1, label)
        ours = task["taskId"]
        assert ours != f"task-{label}"  # mcpmanager's own id, not the server's
        assert task["status"] == "working" and task["createdAt"] and task["lastUpdatedAt"]
        if modern(client):
            assert task["ttlMs"] == 600_000 and task["pollIntervalMs"] == 200
        else:
            assert task["ttl"] == 600_000 and task["pollInterval"] == 200
        ended = await until_ended(client, ours)
        assert ended["taskId"] == ours and ended["status"] == "completed"
        if modern(client):
            assert text_of(ended["result"]) == f"done {label} after 1 s"  # the extension inlines it
        else:
            result = await tasks_request(client, "tasks/result", ours)
            assert text_of(result) == f"done {label} after 1 s"
            assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": ours}
            listed = await send_raw(client, "tasks/list", {}, TIMEOUT)
            assert ours in [t["taskId"] for t in listed["tasks"]]
            assert ours not in [t["taskId"] for t in (await send_raw(other, "tasks/list", {}, TIMEOUT))["tasks"]]
            if server == "one":  # a 2025-11-25 server announces its tasks' statuses: to this client
                await wait_for(lambda: any(s["taskId"] == ours and s["status"] == "completed" for s in statuses.heard))
                await other.list_tools()  # (a round trip: what it was sent before this has arrived)
                assert not others.heard  # the other client connected meanwhile heard nothing of it
            with pytest.raises(MCPError) as foreign:  # nor can another connection read its task
                await tasks_request(other, "tasks/get", ours)
            assert foreign.value.error.code == types.INVALID_PARAMS
        # (A 2026-07-28 client has no connection beyond its request: its task's unguessable id is the key.)


class TaskNews(ClientExtension):
    """A client's ears for task statuses, both flavours: the utility's `notifications/tasks/status`
    on its connection (2025-11-25) and the extension's `notifications/tasks` on the listen streams it
    opens (2026-07-28). It declares no tasks itself: each request that takes them says so, so a
    listen that does not is refused."""

    identifier = "com.example/task-news"

    def __init__(self) -> None:
        self.heard: list[dict[str, Any]] = []
        self.acked: list[types.SubscriptionFilter] = []

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(method=method, params_type=AnyParams, handler=self.on)
            for method in ("notifications/tasks/status", "notifications/tasks")
        ]

    async def on(self, params: AnyParams) -> None:
        self.heard.append(params.model_dump(mode="json", by_alias=True))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.SubscriptionsAcknowledgedNotification):
            self.acked.append(message.params.notifications)

    def of(self, task_id: str) -> list[dict[str, Any]]:
        return [heard for heard in self.heard if heard.get("taskId") == task_id]


class AnyParams(BaseModel):
    model_config = ConfigDict(extra="allow")


@asynccontextmanager
async def listening(client: Client, news: TaskNews, task_ids: list[str]) -> AsyncIterator[dict[str, Any]]:
    """A 2026-07-28 client's `subscriptions/listen` naming `task_ids` (the SDK's `listen` takes no
    extension's filter: sent raw), open until the block ends; its acknowledged filter."""
    before = len(news.acked)
    params = {"notifications": {"toolsListChanged": True, "taskIds": task_ids}}
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: send_raw(client, "subscriptions/listen", params, None, extensions={EXTENSION: {}}))
        await wait_for(lambda: len(news.acked) > before, timeout=TIMEOUT)
        yield news.acked[-1].model_dump(mode="json", by_alias=True, exclude_none=True)
        group.cancel_scope.cancel()


async def test_a_task_status_reaches_the_client_that_took_the_task_alone(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    """A utility server (`one`) announces a task's status: the client that took the task hears it
    under its own id, in its flavour (on its connection, or on the listen stream that named the task,
    the result inlined), and another client, with a task of its own, hears only of that one."""
    news, other_news = TaskNews(), TaskNews()
    label = f"g-{uuid.uuid4().hex[:8]}"
    async with (
        client_of(proxy, transport, era, tmp_path / "a", extensions=[news], message_handler=news.on_message) as client,
        client_of(
            proxy, transport, era, tmp_path / "b", extensions=[other_news], message_handler=other_news.on_message
        ) as other,
    ):
        # Long enough that the listen is open before it ends (it opens in milliseconds).
        ours = (await call_as_task(client, "one__slow_job", 3, label))["taskId"]
        theirs = (await call_as_task(other, "one__slow_job", 60, f"{label}-other"))["taskId"]
        async with AsyncExitStack() as streams:
            if modern(client):
                polled = (await call_as_task(client, "two__slow_job", 60, label))["taskId"]
                acked = await streams.enter_async_context(listening(client, news, [ours, "made-up", polled]))
                # Only what it will hear of: not an id mcpmanager never gave, nor a task of a
                # 2026-07-28 server (which announces on a listen stream mcpmanager does not open).
                assert acked == {"toolsListChanged": True, "taskIds": [ours]}
                assert (await streams.enter_async_context(listening(other, other_news, [theirs])))["taskIds"] == [
                    theirs
                ]
                with pytest.raises(MCPError) as undeclared:  # naming tasks without declaring the extension
                    await send_raw(client, "subscriptions/listen", {"notifications": {"taskIds": [ours]}}, TIMEOUT)
                assert undeclared.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
                await tasks_request(client, "tasks/cancel", polled)
            await wait_for(lambda: any(s["status"] == "completed" for s in news.of(ours)), timeout=TIMEOUT)
            completed = next(s for s in news.of(ours) if s["status"] == "completed")
            if modern(client):  # the extension's full task, on the stream that asked for it
                assert text_of(completed["result"]) == f"done {label} after 3 s"
                assert completed["ttlMs"] == 600_000 and completed["pollIntervalMs"] == 200
                assert completed["_meta"]["io.modelcontextprotocol/subscriptionId"] is not None
            else:  # the utility's task, no result
                assert completed["ttl"] == 600_000 and "result" not in completed
            assert f"task-{label}" not in [s["taskId"] for s in news.heard]  # never the server's own id
            await tasks_request(other, "tasks/cancel", theirs)
            await wait_for(lambda: any(s["status"] == "cancelled" for s in other_news.of(theirs)), timeout=TIMEOUT)
            await client.list_tools()  # (a round trip: what it was sent before this has arrived)
            assert not other_news.of(ours) and not news.of(theirs)
            assert {s["taskId"] for s in other_news.heard} == {theirs}


async def test_a_client_that_takes_no_task_gets_the_result_past_call_timeout(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with client_of(proxy, transport, era, tmp_path / "stdio") as client:
        messages: list[str | None] = []

        async def heard(progress: float, total: float | None, message: str | None) -> None:
            messages.append(message)

        for server in SERVERS:
            label = f"b-{server}-{uuid.uuid4().hex[:8]}"
            messages.clear()
            started = time.monotonic()
            arguments = {"seconds": 4, "label": label}
            result = await client.call_tool(f"{server}__slow_job", arguments, progress_callback=heard)
            assert time.monotonic() - started >= 4  # beyond callTimeout (2 s): no request lasted that long
            assert not result.is_error and text_of(result) == f"done {label} after 4 s"
            assert messages == ["slow_job working"]  # the task's status, while mcpmanager waited for it
            failed = await client.call_tool(f"{server}__failing_job", {"seconds": 0.2, "label": label})
            assert failed.is_error and text_of(failed) == f"{label} failed on purpose"
            quick = await client.call_tool(f"{server}__optional_job", {"seconds": 0.1, "label": label})
            # Optional: the utility's server runs it in the call (no `task` asked); the extension's decides
            # itself (mcpmanager declares the extension to it) and makes a task, which mcpmanager runs.
            ran = "" if server == "two" else " (no task)"
            assert text_of(quick) == f"done {label} after 0.1 s{ran}"


@pytest.mark.parametrize("server", SERVERS)
async def test_cancelling_reaches_the_server(
    proxy: Proxy, transport: str, era: str, server: str, tmp_path: Path, server_log: Path
) -> None:
    async with client_of(proxy, transport, era, tmp_path / "stdio") as client:
        # A client that took the task cancels it.
        label = f"c1-{uuid.uuid4().hex[:8]}"
        task = await call_as_task(client, f"{server}__slow_job", 60, label)
        answer = await tasks_request(client, "tasks/cancel", task["taskId"])
        if modern(client):
            assert answer["resultType"] == "complete" and "taskId" not in answer
        else:
            assert answer["taskId"] == task["taskId"] and answer["status"] == "cancelled"
        assert logged(server_log, "cancelled", label)
        assert (await until_ended(client, task["taskId"]))["status"] == "cancelled"
        # A client that never saw the task gives up on its call: mcpmanager cancels the task.
        label = f"c2-{uuid.uuid4().hex[:8]}"
        with anyio.move_on_after(3):
            await client.call_tool(f"{server}__slow_job", {"seconds": 60, "label": label})
        assert logged(server_log, "created", label)
        await wait_for(lambda: logged(server_log, "cancelled", label), timeout=TIMEOUT)
        # The abandoned request's answer (over HTTP, its POST's) is written once the server's cancel
        # returned: a later call's answer comes after it, so the client does not close under it.
        after = await client.call_tool("one__optional_job", {"seconds": 0.3, "label": label})
        assert not after.is_error


async def test_two_servers_same_task_ids_are_kept_apart(
    proxy: Proxy, transport: str, era: str, tmp_path: Path, server_log: Path
) -> None:
    label = f"d-{uuid.uuid4().hex[:8]}"  # both servers call their task `task-<label>`
    async with client_of(proxy, transport, era, tmp_path / "stdio") as client:
        first = await call_as_task(client, "one__slow_job", 1, label)
        second = await call_as_task(client, "two__failing_job", 1, label)
        created = logged(server_log, "created", label)
        assert len(created) == 2 and {c["taskId"] for c in created} == {f"task-{label}"}
        assert first["taskId"] != second["taskId"]
        one, two = await until_ended(client, first["taskId"]), await until_ended(client, second["taskId"])
        if modern(client):
            assert text_of(one["result"]) == f"done {label} after 1 s"
            assert text_of(two["result"]) == f"{label} failed on purpose" and two["result"]["isError"]
        else:
            assert text_of(await tasks_request(client, "tasks/result", first["taskId"])) == f"done {label} after 1 s"
            failed = await tasks_request(client, "tasks/result", second["taskId"])
            assert text_of(failed) == f"{label} failed on purpose"
        # Cancelling one leaves the other's twin alone; a made-up id names nothing.
        with pytest.raises(MCPError) as unknown:
            await tasks_request(client, "tasks/get", f"task-{label}")
        assert unknown.value.error.code == types.INVALID_PARAMS


class Person:
    """The person behind a client: accepts mcpmanager's approval forms, gives a name, confirms."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def reply(self, message: str) -> dict[str, Any]:
        self.asked.append(message)
        if message.startswith("What is your name"):
            return {"action": "accept", "content": {"name": "Alice"}}
        if message.startswith("Delete "):
            return {"action": "accept", "content": {"confirm": True}}
        return {"action": "accept", "content": {}}  # mcpmanager's approval form (delete_job)

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        return types.ElicitResult.model_validate(self.reply(params.message))

    def answers(self, asked: dict[str, Any]) -> dict[str, Any]:
        """Replies to a 2026-07-28 round (`inputRequests`), under its keys."""
        return {key: self.reply(request["params"]["message"]) for key, request in asked.items()}


async def call_through_rounds(client: Client, person: Person, tool: str, label: str) -> dict[str, Any]:
    """A 2026-07-28 client taking tasks, answering each InputRequiredResult round and retrying with
    the answers and the round's requestState, until the call ends: its last answer."""
    params: dict[str, Any] = {"name": tool, "arguments": {"seconds": 0, "label": label}}
    answer = await send_raw(client, "tools/call", params, TIMEOUT, extensions={EXTENSION: {}})
    for _ in range(5):
        if answer.get("resultType") != "input_required":
            return answer
        retry = {**params, "inputResponses": person.answers(answer["inputRequests"])}
        if "requestState" in answer:
            retry["requestState"] = answer["requestState"]
        answer = await send_raw(client, "tools/call", retry, TIMEOUT, extensions={EXTENSION: {}})
    raise AssertionError(f"{tool} kept asking: {answer}")


async def test_a_task_made_after_a_round_of_questions_reaches_the_client(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    """`asks_first` asks before it makes its task (an InputRequiredResult, then a task on the retry),
    and mcpmanager asks approval before `delete_job` (a delete): the retry that ends the round is the
    request the task is made for, and the client that takes tasks gets it there."""
    person = Person()
    label = f"e-{uuid.uuid4().hex[:8]}"
    async with client_of(proxy, transport, era, tmp_path / "stdio", elicitation_callback=person) as client:
        for tool, said in (("asks_first", "Hello, Alice! (from a task)"), ("delete_job", f"deleted {label}")):
            if modern(client):
                created = await call_through_rounds(client, person, f"two__{tool}", label)
                assert created["resultType"] == "task" and isinstance(created.get("taskId"), str), created
                assert "requestState" not in created and "inputRequests" not in created
                task_id = created["taskId"]
            else:  # asked by elicitation during the call, in its era
                params = {"name": f"two__{tool}", "arguments": {"seconds": 0, "label": label}, "task": {}}
                task_id = (await send_raw(client, "tools/call", params, TIMEOUT))["task"]["taskId"]
            if tool == "delete_job" and modern(client):  # its question, on tasks/get, under the server's key
                waiting = await until_asking(client, task_id)
                assert list(waiting["inputRequests"]) == ["confirm"]
                assert waiting["inputRequests"]["confirm"]["method"] == "elicitation/create"
                update = {"taskId": task_id, "inputResponses": person.answers(waiting["inputRequests"])}
                acked = await send_raw(client, "tasks/update", update, TIMEOUT, extensions={EXTENSION: {}})
                assert acked["resultType"] == "complete" and "taskId" not in acked
            if modern(client):
                ended = await until_ended(client, task_id)
                assert ended["status"] == "completed" and text_of(ended["result"]) == said
            else:  # tasks/result waits for it (and asks the task's question meanwhile)
                assert text_of(await tasks_request(client, "tasks/result", task_id)) == said
        # A client that takes no task: mcpmanager asks it everything and runs the task for it.
        result = await client.call_tool("two__delete_job", {"seconds": 0, "label": f"{label}-run"})
        assert not result.is_error and text_of(result) == f"deleted {label}-run"


async def test_a_tasks_request_whose_mcp_name_names_another_task_is_refused(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    """SEP-2243: over HTTP a 2026-07-28 `tasks/*` carries `Mcp-Name`; one naming another task is
    refused with -32020 (HTTP 400), as the SDK refuses a tools/call naming another tool. Without
    the header (the SDK's client sends none on `tasks/*`), or in the handshake era, it passes."""
    async with client_of(proxy, transport, era, tmp_path / "stdio") as client:
        task = await call_as_task(client, "two__slow_job", 60, f"f-{uuid.uuid4().hex[:8]}")
        ours = task["taskId"]
        extensions: dict[str, dict[str, Any]] | None = {EXTENSION: {}} if modern(client) else None
        named = await send_raw(client, "tasks/get", {"taskId": ours}, TIMEOUT, extensions=extensions, name=ours)
        assert named["taskId"] == ours
        if transport == "http" and modern(client):
            with pytest.raises(MCPError) as mismatched:
                await send_raw(client, "tasks/get", {"taskId": ours}, TIMEOUT, extensions=extensions, name="another")
            assert mismatched.value.error.code == types.HEADER_MISMATCH
            # The status the SDK gives its own header refusals, seen on the wire.
            status, body = await anyio.to_thread.run_sync(
                post, f"{proxy.url}/direct", tasks_get_headers(proxy.token, "another"), tasks_get(ours)
            )
            assert status == 400 and body["error"]["code"] == types.HEADER_MISMATCH
        else:  # no header on this wire: nothing to disagree with
            again = await send_raw(
                client, "tasks/get", {"taskId": ours}, TIMEOUT, extensions=extensions, name="another"
            )
            assert again["taskId"] == ours
        await tasks_request(client, "tasks/cancel", ours)


def tasks_get(task_id: str) -> dict[str, Any]:
    """A 2026-07-28 tasks/get, its envelope written out (what the SDK's client stamps)."""
    meta = {
        types.PROTOCOL_VERSION_META_KEY: "2026-07-28",
        types.CLIENT_CAPABILITIES_META_KEY: {"extensions": {EXTENSION: {}}},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task_id, "_meta": meta}}


def tasks_get_headers(token: str, name: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tasks/get",
        "Mcp-Name": name,
    }


def post(url: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """One JSON POST: its status and JSON answer (an error status's too)."""
    request = urllib.request.Request(url, json.dumps(body).encode(), {**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())
