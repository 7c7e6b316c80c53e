"""One downstream server: its process or remote connection, its session, its tools, its state.

One owner task per connection attempt enters the transport and the SDK session and leaves them in
that same task (anyio cancel scopes are task-bound). The `Lifecycle` decides; this module only
carries out its commands: spawn an attempt, stop it, schedule a retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager import __version__
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig, secret_values
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.sdk_compat import (
    Transport,
    complete_by_default,
    pass_results_through,
    sends_request_headers,
    stamp_capabilities,
)
from mcpmanager.core.supervisor import explain, lifecycle
from mcpmanager.core.supervisor.asks import NobodyUpstream, UpstreamAsks
from mcpmanager.core.supervisor.client_wishes import ClientWishes
from mcpmanager.core.supervisor.envelope import Envelopes
from mcpmanager.core.supervisor.eras import HANDSHAKE, KnownEras
from mcpmanager.core.supervisor.events import (
    Listener,
    OffersChanged,
    ResourceUpdated,
    ServerMessage,
    StatusChanged,
    TaskStatus,
    ToolDict,
    ToolsChanged,
)
from mcpmanager.core.supervisor.filled import filled_for_start
from mcpmanager.core.supervisor.freshness import Freshness
from mcpmanager.core.supervisor.lifecycle import Lifecycle, State, Status
from mcpmanager.core.supervisor.listening import Changes, after_the_storm, listen_for_changes
from mcpmanager.core.supervisor.offers import Listed, every_page, list_offers
from mcpmanager.core.supervisor.process import ChildProcess, Spawner, SpawnError, spawn_child
from mcpmanager.core.supervisor.remote import remote_transport
from mcpmanager.core.supervisor.state_line import state_line
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.supervisor.task_calls import Snapshot, TaskStatusBinding
from mcpmanager.core.supervisor.tool_calls import ToolCalls
from mcpmanager.core.tasks import first_of, spawn
from mcpmanager.core.vault.references import MissingSecret
from mcpmanager.core.vault.store import VaultError

logger = logging.getLogger(__name__)

_LIST_CHANGED = (types.PromptListChangedNotification, types.ResourceListChangedNotification)
# The extensions mcpmanager carries for its clients, declared to every server in a host's settings:
# MCP Apps (`catalogue.apps`, which this layer may not import; the same identifier and MIME type).
CARRIED: dict[str, dict[str, Any]] = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
_LAST_WORDS = 0.5  # seconds to let a closed server's exit code and last stderr lines arrive


class _StartFailure(Exception):
    def __init__(self, reason: str, permanent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


class Downstream(ClientWishes, ToolCalls):
    def __init__(
        self,
        config: ServerConfig,
        settings: SupervisorSettings,
        log_dir: Path | None,
        listener: Listener,
        clock: Callable[[], float] = time.monotonic,
        spawner: Spawner = spawn_child,
        asks: UpstreamAsks | None = None,
        eras: KnownEras | None = None,
    ) -> None:
        """`spawner` makes the child process of a stdio server (tests pass a fake one); `asks`
        answers what the server asks its client (sampling, elicitation, roots)."""
        self.config = config
        self._asks = asks or NobodyUpstream()
        self._eras = eras or KnownEras(None)
        self._spawner = spawner
        self.name = config.name
        self.settings = settings
        self._listener = listener
        self._clock = clock
        self.lifecycle = Lifecycle(
            lifecycle.Policy(
                backoff_initial=settings.backoff_initial,
                backoff_max=settings.backoff_max,
                crash_limit=settings.crash_limit,
                crash_window=settings.crash_window,
                healthy_after=settings.healthy_after,
            )
        )
        secrets = secret_values(config)
        log_path = log_dir / f"{_file_safe(self.name)}.log" if log_dir else None
        self.log = StderrLog(log_path, settings.ring_lines, settings.log_max_bytes, secrets)
        # The log file's trouble (a full disk) is part of what a front end shows for this server.
        self.log.troubled.connect(lambda _trouble: self._listener(StatusChanged(self.name, self.status)))
        self.tools: list[ToolDict] | None = None
        self.process: ChildProcess | None = None
        self.protocol_version: str | None = None
        self.declared: types.ServerCapabilities | None = None  # what it declared when it last connected
        # Each list's caching hints as the server last gave them ("tools", "prompts", "resources",
        # "templates"; `freshness`): a merged list is cached no longer than its parts.
        self.freshness: dict[str, Freshness] = {}
        self.last_exit: str | None = None
        self.ready_since: float | None = None
        self._client: Client | None = None
        self._envelopes = Envelopes()  # what each request tells a 2026-07-28 server its client can do
        self._ready = asyncio.Event()
        self._attempt: asyncio.Task[None] | None = None
        self._attempt_scope: anyio.CancelScope | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._refetch = asyncio.Event()
        self._refetch_offers = asyncio.Event()
        ClientWishes.__init__(self)
        self._stopping = False
        self._phase = "start"
        self._lost_recorded = False  # this attempt's crash was recorded when its pipe closed
        self._status_changed = asyncio.Event()  # replaced on every change: set means "look again"

    # Control --------------------------------------------------------------------------------------

    @property
    def status(self) -> Status:
        return self.lifecycle.status

    def state_line(self) -> str:
        """Its state as the window, the log and `status` write it (`state_line.py`)."""
        status = self.status
        return state_line(
            status.state.value,
            status.reason,
            status.retry_in,
            restarts=status.restarts,
            last_exit=self.last_exit,
            logs=self.log.trouble,
        )

    @property
    def start_timeout(self) -> float:
        return self.config.start_timeout or self.settings.start_timeout

    def start(self) -> None:
        self._apply(lifecycle.StartRequested(self._clock()))

    def disable(self) -> None:
        self._apply(lifecycle.DisableRequested(self._clock()))

    async def stop(self) -> None:
        """Stop and wait until the process group is gone."""
        self._apply(lifecycle.StopRequested(self._clock()))
        await self._join()

    async def restart(self) -> None:
        await self.stop()
        self.start()

    async def _join(self) -> None:
        attempt = self._attempt
        if attempt is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(attempt)

    def _apply(self, event: lifecycle.Event) -> None:
        before = self.status
        commands = self.lifecycle.handle(event)
        for command in commands:
            match command:
                case lifecycle.Spawn():
                    self._stopping = False
                    previous = self._attempt
                    self._attempt = spawn(self._run_attempt(previous), name=f"downstream:{self.name}")
                case lifecycle.Shutdown():
                    self._stopping = True
                    if self._attempt_scope is not None:
                        self._attempt_scope.cancel()
                case lifecycle.ScheduleRetry(delay):
                    loop = asyncio.get_running_loop()
                    self._retry = loop.call_later(delay, lambda: self._apply(lifecycle.RetryDue(self._clock())))
                case lifecycle.CancelRetry():
                    if self._retry is not None:
                        self._retry.cancel()
                        self._retry = None
        if self.status != before:
            if self.status.state is not State.READY:
                self._ready.clear()
            changed, self._status_changed = self._status_changed, asyncio.Event()
            changed.set()
            logger.info("%s: %s", self.name, self.state_line())
            self._listener(StatusChanged(self.name, self.status))

    # The connection attempt (one owner task) ------------------------------------------------------

    async def _run_attempt(self, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            # A crash is recorded when the pipe closes, before the last attempt has reaped its
            # process group: the next attempt begins once that clean-up is done.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(previous)
        if self._stopping:
            return  # stopped before the attempt began: spawn nothing (it would run until startTimeout)
        self._phase = "start"
        self._lost_recorded = False
        timeout = self.start_timeout
        reason: str | None = None
        permanent = sign_in = False
        # The start deadline is a scope around the whole attempt (the session's task groups must nest
        # inside it); once the server is ready the deadline is lifted.
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            self._attempt_scope = scope
            try:
                await self._attempt_body(scope)
            except _StartFailure as failure:
                reason, permanent = failure.reason, failure.permanent
            except Exception as exc:  # boundary: any failure of one server is its crash, never ours
                logger.debug("%s: attempt failed", self.name, exc_info=True)
                reason, sign_in = self._explain(exc), explain.needs_sign_in(exc)
        self._client = None
        self._attempt_scope = None
        was_ready = self.ready_since is not None
        self.ready_since = None
        self.process = None
        if self._stopping or self._lost_recorded:
            return  # we ended it (not a crash), or the crash was recorded when its pipe closed
        if scope.cancel_called and not was_ready:
            reason = explain.with_stderr(self.log, f"{self._phase} timed out after {timeout:g} s")
        self._crashed(reason or "connection closed", permanent, sign_in)

    async def _attempt_body(self, scope: anyio.CancelScope) -> None:
        async with AsyncExitStack() as stack:
            transport = await self._open_transport()
            # A server known to speak only the handshake era is not probed again (see `eras`).
            handshake_only = self._eras.era(self.config) == HANDSHAKE
            client = Client(
                transport,
                mode="legacy" if handshake_only else "auto",
                cache=None,
                message_handler=self._on_message,
                client_info=types.Implementation(name="mcpmanager", version=__version__),
                sampling_callback=lambda _ctx, params: self._asks.sample(self.name, params),
                elicitation_callback=lambda _ctx, params: self._asks.elicit(self.name, params),
                list_roots_callback=lambda _ctx: self._asks.roots(self.name),
                logging_callback=self._on_log,
                log_level="info",  # modern servers log only for requests that opt in
                # Declared at the handshake, which a server hears once for every client to come; the
                # task binding hears a utility server's status notifications (`task_calls`).
                extensions=[
                    TaskStatusBinding(self._task_status),
                    *(advertise(identifier, settings) for identifier, settings in CARRIED.items()),
                ],
            )
            self._phase = "handshake"
            try:
                await stack.enter_async_context(client)
            except MCPError:
                if handshake_only:
                    self._eras.remember(self.config, None)  # upgraded? probe it on the next attempt
                raise
            modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
            self._eras.remember(self.config, client.protocol_version if modern else HANDSHAKE)
            pass_results_through(client)
            complete_by_default(client)
            stamp_capabilities(client, self._capabilities_for_caller)
            sends_request_headers(client)  # a client's unknown Mcp-Param-* headers go on (`param_headers`)
            self.protocol_version = client.protocol_version
            self.declared = client.server_capabilities
            self._phase = "tools/list"
            tools = await self._list_tools(client)
            # Known before "ready", like the tools: a request naming a prompt or resource is routed
            # (or waits for a starting server) on what is known, with no gap between the two.
            self._phase = "listing prompts and resources"
            offers = await list_offers(client, self.log.note, self.freshness)
            scope.deadline = math.inf
            self._client = client
            await self._resume(client)
            self._set_tools(tools)
            self._set_offers(offers)
            self.ready_since = time.time()
            self._apply(lifecycle.BecameReady(self._clock()))
            self._ready.set()
            raise _StartFailure(await self._serve(client))

    def _capabilities_for_caller(self, own: dict[str, Any]) -> dict[str, Any] | None:
        """The capabilities a request tells the server: the calling client's (`envelope`)."""
        return self._envelopes.capabilities(own, self.config.roots is not None)

    async def _open_transport(self) -> Transport:
        try:  # `${keyring:…}` references, filled at each start; a missing entry needs the user
            config = await filled_for_start(self.config, self.log)
        except VaultError as exc:
            raise _StartFailure(str(exc), isinstance(exc, MissingSecret)) from exc
        if isinstance(config, StdioServerConfig):
            process = self._spawner(config, self.log, self.settings.stop_grace)
            try:
                await process.start()
            except SpawnError as exc:  # noted once, as the attempt's end (`_crashed`)
                raise _StartFailure(str(exc), exc.permanent) from exc
            self.process = process
            return process.transport()
        self.log.note(f"connecting to {config.url}")
        return remote_transport(config)

    async def _serve(self, client: Client) -> str:
        """Keep the session until something ends it; return why (a crash reason)."""
        outcome = "connection closed"
        async with anyio.create_task_group() as tg:

            async def until_exit() -> None:
                nonlocal outcome
                process = self.process
                if process is None:  # a remote server: the session ends it
                    await anyio.Event().wait()  # not sleep_forever: see pyproject
                    return
                await first_of(process.exited, process.closed)
                # Its last words and exit code follow the pipe's end within moments (not if a
                # grandchild holds stderr open: then the exit code alone, after the bound).
                with anyio.move_on_after(_LAST_WORDS):
                    await process.exited.wait()
                    await process.stderr_closed.wait()
                outcome = explain.exit_reason(process, self.log)
                self._lose(outcome)
                tg.cancel_scope.cancel()

            tg.start_soon(until_exit)
            tg.start_soon(self._refetch_loop, client)
            tg.start_soon(self._offers_loop, client)
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                changes = Changes(self._refetch.set, self._refetch_offers.set, self._resource_updated, self._listening)
                tg.start_soon(listen_for_changes, client, lambda: sorted(self.subscriptions), self._relisten, changes)
        return outcome

    async def _refetch_loop(self, client: Client) -> None:
        while True:
            await after_the_storm(self._refetch)
            try:
                with anyio.fail_after(self.start_timeout):
                    tools = await self._list_tools(client)
            except Exception as exc:
                if self._ending():
                    return  # the process is going: its exit, not this, is the news (and its last words)
                self.log.note(f"refetching tools after list_changed failed: {self._explain(exc)}")
                continue
            self._set_tools(tools)

    async def _offers_loop(self, client: Client) -> None:
        while True:
            await after_the_storm(self._refetch_offers)
            try:
                with anyio.fail_after(self.start_timeout):
                    found = await list_offers(client, self.log.note, self.freshness)
            except TimeoutError:
                if self._ending():
                    return
                self.log.note(f"listing prompts and resources took over {self.start_timeout:g} s")
                continue
            self._set_offers(found)

    def _ending(self) -> bool:
        """Whether the process closed its output or exited: a request that failed then failed for that."""
        process = self.process
        return process is not None and (process.closed.is_set() or process.exited.is_set())

    def _set_offers(self, found: dict[str, list[Listed]]) -> None:
        self._listener(OffersChanged(self.name, found["prompts"], found["resources"], found["templates"]))

    async def _on_message(self, message: IncomingMessage) -> None:
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS and not isinstance(message, Exception):
            return  # the listen stream's events reach us here too: `listening` handles them, once
        if isinstance(message, types.ToolListChangedNotification):
            self._refetch.set()
        elif isinstance(message, _LIST_CHANGED):
            self._refetch_offers.set()
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._resource_updated(message.params.uri)
        elif isinstance(message, Exception):
            logger.debug("%s: transport error: %s", self.name, message)

    async def _task_status(self, snapshot: Snapshot) -> None:
        self._listener(TaskStatus(self.name, snapshot))

    def _resource_updated(self, uri: str) -> None:
        self._listener(ResourceUpdated(self.name, uri))

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        self.log.message(params.level, params.logger, data)
        self._listener(ServerMessage(self.name, params.level, params.logger, params.data))
        await self._asks.log(self.name, params)

    async def _list_tools(self, client: Client) -> list[ToolDict]:
        async def page(cursor: str | None) -> tuple[list[Any], str | None, Any]:
            listed = await client.list_tools(cursor=cursor, cache_mode="bypass")
            return list(listed.tools), listed.next_cursor, listed

        tools, self.freshness["tools"] = await every_page(page)
        return tools

    def _set_tools(self, tools: list[ToolDict]) -> None:
        if tools != self.tools:
            self.tools = tools
            self._listener(ToolsChanged(self.name, tools))

    def _lose(self, reason: str) -> None:
        """The server's pipe closed: record the crash now, so calls see its state at once (and wait
        for the restart); reaping its process group is left to the attempt's clean-up."""
        if self._stopping:
            return
        self._lost_recorded = True
        self._client = None
        if self.process is not None:  # calls sent as bytes end with the session's (a grandchild may hold the pipe)
            self.process.raw.close()
        self._crashed(reason)

    def _crashed(self, reason: str, permanent: bool = False, sign_in: bool = False) -> None:
        self.last_exit = reason
        self.log.note(reason)
        self._apply(lifecycle.Crashed(self._clock(), reason, permanent, sign_in))

    def _explain(self, exc: BaseException) -> str:
        return explain.explain(exc, self.process, self.log, self.ready_since is not None)


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"
