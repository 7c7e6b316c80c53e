"""Asking before a call: a tool whose rule (`approval_rule`) says `ask` is forwarded only once someone
said yes, one that says `deny` never is.

Who is asked, first that applies:
1. the window, when one observes this engine (it registers with `use_window` and follows `asked`
   and `settled`): Allow once, Always (the window writes `approval: "allow"` for the tool to the
   config), or Deny;
2. the client behind the call, through a form-mode elicitation, when it declared elicitation:
   accept allows, decline and cancel refuse;
3. nobody: the call is refused with a text that says it needs approval and how to allow it.
An ask unanswered within `proxy.approvalTimeout` is refused, saying so. Each decision is a
`Decision`, whose `note` the router writes into the call's activity record.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.config.model import Config
from mcpmanager.core.proxy.approval_rule import Rule, masked_arguments, rule_for
from mcpmanager.core.signals import Signal

Answer = Literal["once", "always", "deny"]
# Puts an elicitation to the client behind the call and returns what it said.
AskClient = Callable[[types.ElicitRequest], Awaitable[types.ElicitResult | types.ErrorData | Any]]
_ids = itertools.count(1)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    note: str  # for the activity log: what was decided, and by whom
    refusal: str | None = None  # the isError text when refused


@dataclass(eq=False)
class PendingAsk:
    """A call waiting for the window's answer."""

    server: str
    tool: str  # the server's own name of it
    exposed: str
    arguments: dict[str, Any]  # masked: what a person is shown
    client: str  # the calling client's name
    why: str  # why it is asked (`Rule.why`)
    deadline: float  # wall-clock time it is refused at
    answer: asyncio.Future[Answer] = field(repr=False)
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def key(self) -> str:
        return f"{self.server}:{self.tool}"

    def arguments_text(self, width: int = 100) -> str:
        """On one line when it fits in `width` characters, else indented."""
        if not self.arguments:
            return "(no arguments)"
        line = json.dumps(self.arguments, ensure_ascii=False)
        return line if len(line) <= width else json.dumps(self.arguments, indent=2, ensure_ascii=False)


class Approvals:
    def __init__(self) -> None:
        self.config: Callable[[], Config] = Config  # the engine's config now (the engine sets it)
        self.asked: Signal[PendingAsk] = Signal("approval asked")
        self.settled: Signal[PendingAsk] = Signal("approval settled")  # answered, timed out or withdrawn
        self._windows = 0
        self._pending: dict[int, PendingAsk] = {}

    # The window ------------------------------------------------------------------------------------

    def use_window(self) -> Callable[[], None]:
        """A window asks from now on; call what this returns when it goes away."""
        self._windows += 1
        done = False

        def leave() -> None:
            nonlocal done
            if not done:
                done, self._windows = True, self._windows - 1

        return leave

    @property
    def window(self) -> bool:
        return self._windows > 0

    def pending(self) -> list[PendingAsk]:
        return list(self._pending.values())

    def answer(self, ask_id: int, answer: Answer) -> bool:
        """The window's answer to ask `ask_id`; False when it is no longer waiting."""
        ask = self._pending.get(ask_id)
        if ask is None or ask.answer.done():
            return False
        ask.answer.set_result(answer)
        return True

    # Deciding --------------------------------------------------------------------------------------

    def rule(self, tool: CatalogueTool) -> Rule:
        config = self.config()
        return rule_for(tool.name, tool.spec, config.tools.get(tool.key), config.proxy)

    @property
    def timeout(self) -> float:
        return self.config().proxy.approval_timeout

    def denied(self, tool: CatalogueTool, rule: Rule) -> Decision:
        setting = _setting(tool)
        text = (
            f"Calling '{tool.exposed}' on server '{tool.server}' is refused: {rule.why} in mcpmanager's config. "
            f'Nothing was sent to the server. To allow it, set {setting} to "ask" or "allow" '
            "(in the mcpmanager window: Catalogue, the tool's Approval)."
        )
        return Decision(False, "denied by policy", text)

    def nobody(self, tool: CatalogueTool, rule: Rule, client: str) -> Decision:
        text = (
            f"Calling '{tool.exposed}' on server '{tool.server}' needs the user's approval ({rule.why}), and "
            f"nobody could be asked: no mcpmanager window is open and {client} did not declare elicitation. "
            "Nothing was sent to the server. To allow it, open the mcpmanager window and call again, or set "
            f'{_setting(tool)} to "allow" in mcpmanager\'s config.'
        )
        return Decision(False, "refused: nobody to ask", text)

    async def in_window(
        self, tool: CatalogueTool, arguments: Mapping[str, Any] | None, rule: Rule, client: str
    ) -> Decision:
        timeout = self.timeout
        ask = PendingAsk(
            tool.server,
            tool.name,
            tool.exposed,
            masked_arguments(arguments),
            client,
            rule.why,
            time.time() + timeout,
            asyncio.get_running_loop().create_future(),
        )
        self._pending[ask.id] = ask
        self.asked.emit(ask)
        try:
            answer = await asyncio.wait_for(asyncio.shield(ask.answer), timeout)
        except TimeoutError:
            return self._timed_out(tool, "in the mcpmanager window", "window")
        finally:
            self._pending.pop(ask.id, None)
            if not ask.answer.done():
                ask.answer.cancel()  # timed out, or the client gave up: a late click changes nothing
            self.settled.emit(ask)
        if answer == "deny":
            return self._declined(tool, "denied in the window", "in the mcpmanager window")
        return Decision(True, "allowed always in the window" if answer == "always" else "allowed once in the window")

    async def of_client(
        self, tool: CatalogueTool, arguments: Mapping[str, Any] | None, rule: Rule, client: str, ask: AskClient
    ) -> Decision:
        shown = json.dumps(masked_arguments(arguments), ensure_ascii=False)
        message = (
            f"mcpmanager asks before this call ({rule.why}): '{tool.name}' on server '{tool.server}' "
            f"with arguments {shown}. Accept to run it once; decline to refuse it."
        )
        params = types.ElicitRequestFormParams(message=message, requested_schema={"type": "object", "properties": {}})
        try:
            answer = await asyncio.wait_for(ask(types.ElicitRequest(params=params)), self.timeout)
        except TimeoutError:
            return self._timed_out(tool, f"of {client}", "client")
        if isinstance(answer, types.ElicitResult) and answer.action == "accept":
            return Decision(True, f"allowed by {client}")
        if isinstance(answer, types.ElicitResult):
            verb = "declined" if answer.action == "decline" else "cancelled"
            return self._declined(tool, f"{verb} by {client}", f"of {client}")
        why = answer.message if isinstance(answer, types.ErrorData) else f"it answered with a {type(answer).__name__}"
        text = (
            f"Calling '{tool.exposed}' on server '{tool.server}' needs the user's approval, and {client} could "
            f"not be asked: {why}. Nothing was sent to the server."
        )
        return Decision(False, f"refused: {client} could not be asked", text)

    def _declined(self, tool: CatalogueTool, note: str, where: str) -> Decision:
        text = (
            f"The user refused the call to '{tool.exposed}' on server '{tool.server}' (asked {where}). "
            "Nothing was sent to the server."
        )
        return Decision(False, note, text)

    def _timed_out(self, tool: CatalogueTool, where: str, who: str) -> Decision:
        seconds = f"{self.timeout:g}"
        text = (
            f"The call to '{tool.exposed}' on server '{tool.server}' was not approved within {seconds} s (asked "
            f"{where}), so it was refused. Nothing was sent to the server; call again to be asked again."
        )
        return Decision(False, f"not answered within {seconds} s ({who})", text)


def _setting(tool: CatalogueTool) -> str:
    return f'tools."{tool.key}".approval'
