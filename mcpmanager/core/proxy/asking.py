"""What a server asks its client (sampling, elicitation, roots), handed to the client behind the call.

The client is found by `Callers` (the one whose request is in flight on that server). It is asked
the way its protocol era allows: a handshake-era client gets the request itself, sent on the
stream of its own request; a 2026-07-28 client gets it inside an `InputRequiredResult` of its
request (`rounds` parks the server's call until the client answers). A client is only asked for
what it declared; otherwise the server gets an error saying which client lacks what.

Roots: a server with `roots` in its config is told those and no client is asked. Otherwise a
server asking during a client's request gets that client's roots (or an error, like any other
question, when that client cannot say or several clients are calling); asking when no request is in
flight (most ask right after connecting) it gets the union of the roots the connected handshake-era
clients declared.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

from mcpmanager.core.proxy.callers import Caller, Callers
from mcpmanager.core.supervisor.asks import SampleAnswer
from mcpmanager.core.supervisor.protocol_errors import CannotAsk

logger = logging.getLogger(__name__)

ROOTS_WAIT = 5.0  # seconds a connected client gets to say its roots when no call is in flight
Answer = types.InputResponse | types.ErrorData
# A 2026-07-28 server's question the client's retry did not answer (`rounds`): left out of what the
# server is sent, so the server, whose round it is, decides (most ask again).
UNANSWERED = types.ErrorData(code=types.INVALID_PARAMS, message="The client's retry did not answer this question.")


def _refusal(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def missing_capability(capabilities: types.ClientCapabilities, request: types.InputRequest) -> str | None:
    """What the client would need to declare to be asked `request`, when it did not."""
    if isinstance(request, types.CreateMessageRequest):
        if capabilities.sampling is None:
            return "sampling"
        if (request.params.tools or request.params.tool_choice) and capabilities.sampling.tools is None:
            return "sampling with tools"
        return None
    if isinstance(request, types.ElicitRequest):
        elicitation = capabilities.elicitation
        if elicitation is None:
            return "elicitation"
        if isinstance(request.params, types.ElicitRequestURLParams):
            return None if elicitation.url is not None else "URL-mode elicitation"
        # An empty `elicitation: {}` means form mode (the spec's backwards-compatible reading).
        return None if elicitation.form is not None or elicitation.url is None else "form-mode elicitation"
    return "roots" if capabilities.roots is None else None


def capability_error(caller: Caller, request: types.InputRequest) -> types.ErrorData | None:
    """The error a server gets when the client behind `caller` did not declare what `request` needs."""
    missing = missing_capability(caller.capabilities, request)
    if missing is None:
        return None
    return types.ErrorData(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"{caller.client_name} (the client calling '{caller.server}' through mcpmanager) did not declare "
        f"{missing}, so it cannot answer this request.",
    )


def _result_type(request: types.InputRequest) -> type[BaseModel]:
    if isinstance(request, types.CreateMessageRequest):
        wants_tools = bool(request.params.tools or request.params.tool_choice)
        return types.CreateMessageResultWithTools if wants_tools else types.CreateMessageResult
    return types.ElicitResult if isinstance(request, types.ElicitRequest) else types.ListRootsResult


async def ask_caller(caller: Caller, request: types.InputRequest) -> Answer:
    """Put `request` to the client behind `caller`, the way its era allows."""
    if caller.modern:
        return (await ask_together(caller, {None: request}))[None]
    if caller.closed:
        return _refusal(f"{caller.client_name} is no longer waiting on this request")
    return await ask_session(caller.ctx.session, request, caller.ctx.request_id)


async def ask_together(caller: Caller, requests: Mapping[str | None, types.InputRequest]) -> dict[str | None, Answer]:
    """Put `requests` to a 2026-07-28 client at once, in one InputRequiredResult of its request,
    under their keys where they have one (`rounds`); its answers by the same keys."""
    if caller.closed:
        refusal = _refusal(f"{caller.client_name} is no longer waiting on this request")
        return dict.fromkeys(requests, refusal)
    if caller.questions is None:
        refusal = _refusal(
            f"{caller.client_name} speaks MCP 2026-07-28 and can only be asked during tools/call, "
            "prompts/get or resources/read"
        )
        return dict.fromkeys(requests, refusal)
    loop = asyncio.get_running_loop()
    answers: dict[str | None, asyncio.Future[Answer]] = {}
    for key, request in requests.items():  # queued in one go: they leave in one result
        answers[key] = loop.create_future()
        caller.questions.put_nowait((key, request, answers[key]))
    return {key: await answer for key, answer in answers.items()}


async def ask_session(session: ServerSession, request: types.InputRequest, related: types.RequestId | None) -> Answer:
    """Send `request` to a handshake-era client (on the stream of its request `related`, if any)."""
    url = request.params if isinstance(request, types.ElicitRequest) else None
    if isinstance(url, types.ElicitRequestURLParams) and url.elicitation_id is None:
        # 2026-07-28 dropped the id; the handshake era requires it.
        request = types.ElicitRequest(params=url.model_copy(update={"elicitation_id": secrets.token_urlsafe(12)}))
    try:
        result = await session.send_request(
            request,
            _result_type(request),
            metadata=ServerMessageMetadata(related_request_id=related),
        )
    except MCPError as exc:
        return exc.error
    except Exception as exc:  # the client went away or cannot be reached: the server gets why
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The client could not be asked: {exc}")
    return result  # type: ignore[return-value]  # validated as `_result_type(request)`


class ClientAsks:
    """The proxy's answer to `UpstreamAsks`: every server's questions go to the right client."""

    def __init__(
        self,
        callers: Callers,
        sessions: Callable[[], Iterable[tuple[int, ServerSession]]],
        configured_roots: Callable[[str], list[str] | None],
        log: Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]],
    ) -> None:
        self.callers = callers
        self._log = log  # to the clients: the router knows them
        self._sessions = sessions  # handshake-era clients connected now, by connection key
        self._configured_roots = configured_roots
        self._heard_roots: dict[int, list[types.Root]] = {}  # per connection: what a client last said
        callers.connections.on_close(self.client_roots_changed)  # a client that left has no roots

    async def sample(self, server: str, params: types.CreateMessageRequestParams) -> SampleAnswer:
        answer = await self._ask(server, types.CreateMessageRequest(params=params), "sampling")
        if isinstance(answer, types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData):
            return answer
        return _refusal(f"The client answered {server}'s sampling request with a {type(answer).__name__}.")

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        answer = await self._ask(server, types.ElicitRequest(params=params), "elicitation")
        if isinstance(answer, types.ElicitResult | types.ErrorData):
            return answer
        return _refusal(f"The client answered {server}'s elicitation request with a {type(answer).__name__}.")

    async def roots(self, server: str) -> types.ListRootsResult | types.ErrorData:
        if self._configured_roots(server) is None and not self.callers.on(server):
            return types.ListRootsResult(roots=await self._all_roots())
        caller = self.callers.find(server)
        if isinstance(caller, str):
            return _refusal(f"mcpmanager cannot forward roots from server '{server}': {caller}.")
        return await self.roots_for(server, caller)

    async def roots_for(self, server: str, caller: Caller) -> types.ListRootsResult | types.ErrorData:
        """The roots `server` is told during `caller`'s request: its configured ones, else the caller's."""
        configured = self._configured_roots(server)
        if configured is not None:
            return types.ListRootsResult(roots=[_root(entry) for entry in configured])
        request = types.ListRootsRequest()
        answer = capability_error(caller, request) or await ask_caller(caller, request)
        if isinstance(answer, types.ListRootsResult):
            self._heard_roots[caller.key] = list(answer.roots)
            return answer
        if isinstance(answer, types.ErrorData):
            return answer
        return _refusal(f"{caller.client_name} answered roots/list with a {type(answer).__name__}.")

    async def answer_round(self, caller: Caller, requests: types.InputRequests) -> types.InputResponses:
        """What `caller`'s client says to one round of a 2026-07-28 server's questions (its
        `inputRequests`): roots from the config where it names them, a refusal (raised, with the
        code the spec gives) for a question the client did not declare it can answer, the rest put
        to the client: all at once under the server's keys (a 2026-07-28 client), or one by one
        (a handshake-era client, asked by mcpmanager). A question that cannot be answered ends the
        request (`CannotAsk`: a tool call's text, as where a handshake-era server is refused). A
        question the client's retry left unanswered is left out: the server asks again if it wants."""
        answers: dict[str, Answer] = {}
        asked: dict[str | None, types.InputRequest] = {}
        configured = self._configured_roots(caller.server)
        for key, request in requests.items():
            if isinstance(request, types.ListRootsRequest) and configured is not None:
                answers[key] = types.ListRootsResult(roots=[_root(entry) for entry in configured])
            elif (refused := capability_error(caller, request)) is not None:
                raise CannotAsk.from_error_data(refused)
            else:
                asked[key] = request
        if caller.modern:
            replies = await ask_together(caller, asked)
        else:
            replies = {key: await ask_caller(caller, request) for key, request in asked.items()}
        for asked_key, reply in replies.items():
            if reply is UNANSWERED:
                continue
            if isinstance(reply, types.ErrorData):
                raise CannotAsk.from_error_data(reply)
            if isinstance(reply, types.ListRootsResult):
                self._heard_roots[caller.key] = list(reply.roots)
            answers[str(asked_key)] = reply
        return answers  # type: ignore[return-value]  # (no ErrorData left: raised above)

    async def log(self, server: str, message: types.LoggingMessageNotificationParams) -> None:
        await self._log(server, message)

    def client_roots_changed(self, key: int) -> None:
        """A client (connection `key`) said its roots changed: forget what it said before."""
        self._heard_roots.pop(key, None)

    async def _ask(self, server: str, request: types.InputRequest, what: str) -> Answer:
        caller = self.callers.find(server)
        if isinstance(caller, str):
            return _refusal(f"mcpmanager cannot forward {what} from server '{server}': {caller}.")
        return capability_error(caller, request) or await ask_caller(caller, request)

    async def _all_roots(self) -> list[types.Root]:
        """The union of the roots the connected handshake-era clients declared (asked now)."""
        connected = dict(self._sessions())
        asked = [(k, s) for k, s in connected.items() if (s.client_capabilities or types.ClientCapabilities()).roots]

        async def ask(key: int, session: ServerSession) -> None:
            with anyio.move_on_after(ROOTS_WAIT):
                answer = await ask_session(session, types.ListRootsRequest(), None)
                if isinstance(answer, types.ListRootsResult):
                    self._heard_roots[key] = list(answer.roots)

        await asyncio.gather(*(ask(k, s) for k, s in asked), return_exceptions=True)
        union: dict[str, types.Root] = {}
        for key, roots in self._heard_roots.items():
            if key not in connected:
                continue  # only clients connected now
            for root in roots:
                union.setdefault(str(root.uri), root)
        return list(union.values())


def _root(entry: str) -> types.Root:
    """A configured root: a URI as written, or a path made into a file:// URI."""
    if "://" in entry:
        return types.Root(uri=entry)  # type: ignore[arg-type]  # pydantic parses the string
    path = Path(entry).expanduser().resolve()
    return types.Root(uri=path.as_uri(), name=path.name or str(path))  # type: ignore[arg-type]
