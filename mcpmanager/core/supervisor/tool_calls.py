"""Tool calls on one server, mixed into its `Downstream`: through the SDK's session, or as bytes
(`raw_calls`) for the proxy's fast lane. Either way a failure comes back as an
isError result that names the server, the tool and why, in the same words; a protocol error the
spec defines (`protocol_errors`) is raised as the server sent it, for the client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types.methods import is_input_required
from pydantic import ValidationError

from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.sdk_compat import stamp_request
from mcpmanager.core.supervisor import explain
from mcpmanager.core.supervisor.envelope import Envelopes, calling
from mcpmanager.core.supervisor.lifecycle import State, Status
from mcpmanager.core.supervisor.process import ChildProcess
from mcpmanager.core.supervisor.protocol_errors import passes
from mcpmanager.core.supervisor.raw_calls import RawCalls, RawClosed
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.tool_results import error_result

logger = logging.getLogger(__name__)

ProgressCallback = ProgressFnT
# A raw call's outcome: the result as the server wrote it, or an isError result saying why there is none.
RawOutcome = dict[str, Any] | types.CallToolResult | types.InputRequiredResult


class Unavailable(Exception):
    """The server cannot take a request now; the message says why (and its state)."""


class ToolCalls:
    # Provided by the Downstream this is mixed into.
    name: str
    settings: SupervisorSettings
    log: StderrLog
    process: ChildProcess | None
    protocol_version: str | None
    _client: Client | None
    _status_changed: asyncio.Event
    _raw_stamp: tuple[Client, dict[str, Any] | None] | None = None  # (`_stamp`)
    _raw_metas: tuple[dict[str, Any], dict[str, Any]] | None = None  # the last caller's (capabilities, `_meta`)
    _envelopes: Envelopes

    def _capabilities_for_caller(self, own: dict[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError

    @property
    def status(self) -> Status:
        raise NotImplementedError

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressCallback | None = None,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Call a tool; failures come back as isError results naming the server and its state.

        An `InputRequiredResult` (a 2026-07-28 server asking the user something) is handed back to
        the caller as it is, and the caller's answers (`input_responses`, `request_state`) are passed
        down on the retry: the client at the far end owns the conversation with the user."""
        try:
            client = await self.ready_client()
        except Unavailable as exc:
            return error_result(str(exc))
        try:
            result = await client.session.call_tool(
                name,
                arguments,
                read_timeout_seconds=self.settings.call_timeout,
                progress_callback=progress,
                input_responses=input_responses,
                request_state=request_state,
                meta=cast(types.RequestParamsMeta, meta) if meta else None,
                allow_input_required=True,
            )
            if isinstance(result, types.CallToolResult | types.InputRequiredResult):
                return _without_server_info(result)
            return self._shapeless(name)
        except MCPError as exc:
            return await self._refused(name, exc)
        except TimeoutError:
            return self._too_slow(name)
        except Exception as exc:  # the connection broke under the call: most likely the server died
            if isinstance(explain.leaf(exc), ValidationError):  # no: it answered, with no result
                return self._shapeless(name)
            return await self._cut_off(name, exc)

    def raw_lane(self) -> RawCalls | None:
        """Where a tool call can go as bytes now (a ready stdio server), or None."""
        process, client = self.process, self._client
        if process is None or client is None or self.status.state is not State.READY:
            return None
        return process.raw_lane()

    async def call_tool_raw(
        self, lane: RawCalls, name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> RawOutcome:
        """Call a tool through `lane` (`raw_lane`), stamped as the session stamps its requests: the
        `result` the server wrote, untouched; a 2026-07-28 server's question as its typed
        `InputRequiredResult` (answered and retried the session's way); or an isError result saying
        why there is none, in `call_tool`'s words. `meta`: as for `call_tool`."""
        params: dict[str, Any] = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
        if (stamp := self._stamp()) or meta:
            params["_meta"] = {**(meta or {}), **(stamp or {})}
        try:
            answer = await lane.request({"method": "tools/call", "params": params}, self.settings.call_timeout)
        except TimeoutError:
            return self._too_slow(name)
        except RawClosed:
            return await self._closed_under(name)
        except Exception as exc:
            return await self._cut_off(name, exc)
        result = answer.get("result")
        if type(result) is dict and type(result.get("content")) is list:
            return result
        if "error" in answer:
            try:
                error = types.ErrorData.model_validate(answer["error"])
            except ValueError:
                error = types.ErrorData(code=types.INTERNAL_ERROR, message=str(answer["error"]))
            return await self._refused(name, MCPError.from_error_data(error))
        if is_input_required(result):
            try:
                return types.InputRequiredResult.model_validate(result)
            except ValueError:
                pass
        return self._shapeless(name)

    def _stamp(self) -> dict[str, Any] | None:
        """The `_meta` the session puts on a tools/call (`stamp_request`): the same for every call of
        one session (its era's envelope: version, client info, capabilities, log level), so it is
        taken once per session rather than rebuilt, with its HTTP headers, on every call; then with
        the calling client's capabilities (`envelope`), built once per capability set."""
        client = self._client
        if client is None:
            return None
        if self._raw_stamp is None or self._raw_stamp[0] is not client:
            probe: dict[str, Any] = {"method": "tools/call", "params": {"name": "", "arguments": {}}}
            with calling(None):  # the session's own envelope
                stamp_request(client, probe)
            self._raw_stamp = (client, probe["params"].get("_meta"))
        meta = self._raw_stamp[1]
        own = meta.get(types.CLIENT_CAPABILITIES_META_KEY) if meta is not None else None
        if meta is None or own is None:
            return meta  # a handshake-era server: no envelope
        capabilities = self._capabilities_for_caller(own)
        if capabilities is None:
            return meta
        last = self._raw_metas
        if last is None or last[0] is not capabilities:
            last = self._raw_metas = (capabilities, {**meta, types.CLIENT_CAPABILITIES_META_KEY: capabilities})
        return last[1]

    async def _refused(self, name: str, exc: MCPError) -> types.CallToolResult:
        if passes(exc):  # an error the spec defines (invalid params, a capability...): the client's, as sent
            error = exc.error  # (but never with a secret of this server's in it)
            raise MCPError(error.code, self.log.mask(error.message), _masked(error.data, self.log.mask)) from None
        if exc.error.code == types.REQUEST_TIMEOUT:  # the SDK's read timeout: not a refusal
            return self._too_slow(name)
        if exc.error.code != types.CONNECTION_CLOSED:
            return error_result(f"Server '{self.name}' rejected the call to '{name}': {self.log.mask(str(exc))}")
        return await self._closed_under(name)

    # The failure texts, for the other ways of calling a tool in this room (`task_calls`).
    async def refused(self, name: str, exc: MCPError) -> types.CallToolResult:
        return await self._refused(name, exc)

    def too_slow(self, name: str) -> types.CallToolResult:
        return self._too_slow(name)

    async def cut_off(self, name: str, exc: Exception) -> types.CallToolResult:
        return await self._cut_off(name, exc)

    def _shapeless(self, name: str) -> types.CallToolResult:
        return shapeless(self.name, name)

    def _too_slow(self, name: str) -> types.CallToolResult:
        return error_result(f"Server '{self.name}' did not answer '{name}' within {self.settings.call_timeout:g} s.")

    async def _closed_under(self, name: str) -> types.CallToolResult:
        await self._settle()  # the server died under the call: say how, once the exit is known
        return self.unavailable(f"the connection closed during the call to '{name}'")

    async def _cut_off(self, name: str, exc: Exception) -> types.CallToolResult:
        logger.debug("%s: call to %s failed", self.name, name, exc_info=True)
        await self._settle()
        return self.unavailable(f"the call to '{name}' was cut off ({type(explain.leaf(exc)).__name__})")

    async def ready_client(self) -> Client:
        """The live client of a ready server, after waiting (bounded by startingWait) for one that is
        starting or restarting after a crash; raises `Unavailable` saying why there is none."""
        wait = self.settings.starting_wait
        if self._coming_back(wait):
            with anyio.move_on_after(wait) as waited:
                while self._coming_back(wait):
                    await self._status_changed.wait()
            if waited.cancelled_caught:
                raise Unavailable(self.unavailable_text(f"it was not ready within {wait:g} s"))
        client = self._client
        if client is None or self.status.state is not State.READY:
            raise Unavailable(self.unavailable_text())
        return client

    def _coming_back(self, wait: float) -> bool:
        """Starting, or backing off with its restart due within `wait`."""
        status = self.status
        if status.state is State.STARTING:
            return True
        return status.state is State.BACKOFF and status.retry_in is not None and status.retry_in <= wait

    async def _settle(self) -> None:
        # Give the exit watcher a moment so the error names the real state, not "ready".
        with anyio.move_on_after(1.0):
            while self.status.state is State.READY:
                await anyio.sleep(0.02)

    def unavailable(self, detail: str | None = None) -> types.CallToolResult:
        return error_result(self.unavailable_text(detail))

    def unavailable_text(self, detail: str | None = None) -> str:
        return explain.unavailable_text(self.name, self.status, self.log, detail)


def shapeless(server: str, tool: str) -> types.CallToolResult:
    """What a call comes to when the server's answer is no result a client could read."""
    return error_result(f"Server '{server}' answered '{tool}' with an unknown result shape.")


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    """A JSON value with every string in it masked (keys are names: kept)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {key: _masked(item, mask) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, mask) for item in value]
    return value


def _without_server_info(
    result: types.CallToolResult | types.InputRequiredResult,
) -> types.CallToolResult | types.InputRequiredResult:
    """Drop the downstream's identity stamp: the client talks to mcpmanager, which stamps its own."""
    meta = result.meta
    if not meta or types.SERVER_INFO_META_KEY not in meta:
        return result
    rest = {k: v for k, v in meta.items() if k != types.SERVER_INFO_META_KEY}
    return result.model_copy(update={"meta": rest or None})
