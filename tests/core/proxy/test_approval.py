"""Asking before a call, at unit level: which tools can destroy data (annotations as the MCP spec
reads them, else the name), which policy a call gets, what a person is shown of its arguments, and
the decisions of `Approvals`: the window's answers, an unanswered ask, a client's elicitation answer."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.settings import ProxySettings, ToolSettings
from mcpmanager.core.proxy.approval import Approvals, PendingAsk
from mcpmanager.core.proxy.approval_rule import can_destroy, masked_arguments, rule_for

READ_ONLY = {"readOnlyHint": True}
DESTRUCTIVE = {"destructiveHint": True}
WRITES = {"readOnlyHint": False}  # the spec's default destructiveHint (true) applies
ADDITIVE = {"readOnlyHint": False, "destructiveHint": False}


@pytest.mark.parametrize(
    ("name", "annotations", "destroys"),
    [
        ("delete_item", None, True),  # no annotations: the name's verb
        ("drop-table", None, True),
        ("purgeCache", None, True),
        ("wipe_disk", None, True),
        ("get_item", None, False),
        ("create_issue", None, False),
        ("create_issue", DESTRUCTIVE, True),  # the server's word
        ("create_issue", WRITES, True),
        ("create_issue", ADDITIVE, False),
        ("create_issue", {"title": "Create"}, False),  # annotations silent on it: the name decides
        ("delete_item", READ_ONLY, False),  # read-only never destroys
        ("delete_item", ADDITIVE, True),  # a false destructiveHint does not clear a name that says delete
        ("start_process", {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}, True),
    ],
)
def test_which_tools_can_destroy_data(name: str, annotations: dict[str, Any] | None, destroys: bool) -> None:
    spec: dict[str, Any] = {"name": name} if annotations is None else {"name": name, "annotations": annotations}
    assert can_destroy(name, spec) is destroys


def test_the_policy_a_call_gets() -> None:
    delete, get = {"name": "delete_item"}, {"name": "get_item"}
    default = ProxySettings()
    assert (default.ask_before, default.approval_timeout) == ("destructive", 120.0)
    assert rule_for("delete_item", delete, None, default).policy == "ask"
    assert rule_for("delete_item", delete, None, default).why == "its name says it can destroy data"
    marked = {"name": "create_issue", "annotations": WRITES}
    assert rule_for("create_issue", marked, None, default).why == "its annotations say it can destroy data"
    assert rule_for("get_item", get, None, default).policy == "allow"
    assert rule_for("get_item", get, None, ProxySettings(ask_before="all")).policy == "ask"
    assert rule_for("delete_item", delete, None, ProxySettings(ask_before="never")).policy == "allow"
    # A tool's own setting wins over the default rule, either way.
    own = rule_for("delete_item", delete, ToolSettings(approval="allow"), default)
    assert (own.policy, own.own) == ("allow", True)
    assert rule_for("get_item", get, ToolSettings(approval="deny"), ProxySettings(ask_before="never")).policy == "deny"
    assert rule_for("get_item", get, ToolSettings(aliases=["g"]), default).own is False


def test_arguments_are_shown_with_their_secrets_masked() -> None:
    shown = masked_arguments(
        {
            "path": "/srv/data",
            "apiKey": "plain-looking-value",
            "options": {"password": "hunter22", "force": True},
            "note": "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 to push",
        }
    )
    assert shown["path"] == "/srv/data" and shown["options"]["force"] is True
    assert shown["apiKey"] == "***" and shown["options"]["password"] == "***"
    assert "ghp_" not in shown["note"] and shown["note"].startswith("use *** to push")


def tool(name: str = "delete_item", server: str = "store") -> CatalogueTool:
    return CatalogueTool(server, name, name, {"name": name, "inputSchema": {"type": "object"}})


def approvals(timeout: float = 5.0, **tools: ToolSettings) -> Approvals:
    made = Approvals()
    config = Config(tools={f"store:{k}": v for k, v in tools.items()}, proxy=ProxySettings(approval_timeout=timeout))
    made.config = lambda: config
    return made


async def asked_in_window(made: Approvals, answer: str | None) -> tuple[Any, list[PendingAsk], list[PendingAsk]]:
    """Ask as the router does with a window registered; the window answers `answer` (None: never)."""
    asked: list[PendingAsk] = []
    settled: list[PendingAsk] = []
    made.asked.connect(asked.append)
    made.settled.connect(settled.append)
    leave = made.use_window()
    assert made.window
    target = tool()
    deciding = asyncio.ensure_future(
        made.in_window(target, {"id": 7, "token": "s3cr3t-value"}, made.rule(target), "Claude Code")
    )
    while not asked:
        await asyncio.sleep(0)
    assert made.pending() == asked and not settled
    if answer is not None:
        assert made.answer(asked[0].id, answer)  # type: ignore[arg-type]
    decision = await deciding
    leave()
    leave()  # twice is once
    assert not made.window and made.pending() == [] and settled == asked
    return decision, asked, settled


async def test_the_window_is_asked_and_its_answer_decides() -> None:
    once, [ask], _ = await asked_in_window(approvals(), "once")
    assert (once.allowed, once.note) == (True, "allowed once in the window")
    assert (ask.server, ask.tool, ask.client, ask.why) == (
        "store",
        "delete_item",
        "Claude Code",
        "its name says it can destroy data",
    )
    assert ask.arguments == {"id": 7, "token": "***"} and '"token": "***"' in ask.arguments_text()
    always, _, _ = await asked_in_window(approvals(), "always")
    assert (always.allowed, always.note) == (True, "allowed always in the window")
    denied, _, _ = await asked_in_window(approvals(), "deny")
    assert (denied.allowed, denied.note) == (False, "denied in the window")
    assert denied.refusal.startswith("The user refused the call to 'delete_item' on server 'store'")


async def test_an_ask_nobody_answers_is_refused_after_the_time_limit() -> None:
    made = approvals(timeout=0.2)
    timed_out, [ask], _ = await asked_in_window(made, None)
    assert (timed_out.allowed, timed_out.note) == (False, "not answered within 0.2 s (window)")
    assert "was not approved within 0.2 s (asked in the mcpmanager window), so it was refused" in timed_out.refusal
    assert not made.answer(ask.id, "once")  # a late click changes nothing


async def test_a_call_given_up_on_withdraws_its_ask() -> None:
    made = approvals()
    settled: list[PendingAsk] = []
    made.settled.connect(settled.append)
    made.use_window()
    target = tool()
    deciding = asyncio.ensure_future(made.in_window(target, {}, made.rule(target), "c"))
    while not made.pending():
        await asyncio.sleep(0)
    deciding.cancel()  # the client cancelled its request
    with pytest.raises(asyncio.CancelledError):
        await deciding
    assert made.pending() == [] and len(settled) == 1


def test_refusals_say_why_and_how_to_allow() -> None:
    made = approvals(delete_item=ToolSettings(approval="deny"))
    target = tool()
    denied = made.denied(target, made.rule(target))
    assert (denied.allowed, denied.note) == (False, "denied by policy")
    said = denied.refusal or ""
    assert "its approval is set to 'deny'" in said and 'tools."store:delete_item".approval' in said
    nobody = approvals().nobody(target, made.rule(tool("drop_all")), "Cursor")
    assert nobody.note == "refused: nobody to ask"
    said = nobody.refusal or ""
    assert "no mcpmanager window is open and Cursor did not declare elicitation" in said
    assert 'set tools."store:delete_item".approval to "allow"' in said


@pytest.mark.parametrize(
    ("answer", "allowed", "note"),
    [
        (types.ElicitResult(action="accept", content={}), True, "allowed by Cursor"),
        (types.ElicitResult(action="decline"), False, "declined by Cursor"),
        (types.ElicitResult(action="cancel"), False, "cancelled by Cursor"),
        (types.ErrorData(code=-1, message="the user closed the window"), False, "refused: Cursor could not be asked"),
    ],
)
async def test_the_clients_answer_decides(answer: Any, allowed: bool, note: str) -> None:
    made = approvals()
    questions: list[types.ElicitRequest] = []

    async def ask(request: types.ElicitRequest) -> Any:
        questions.append(request)
        return answer

    target = tool()
    decision = await made.of_client(target, {"id": 7, "apiKey": "abcdefgh"}, made.rule(target), "Cursor", ask)
    assert (decision.allowed, decision.note) == (allowed, note)
    [question] = questions
    assert isinstance(question.params, types.ElicitRequestFormParams)
    assert "'delete_item' on server 'store'" in question.params.message and '"apiKey": "***"' in question.params.message
    assert "abcdefgh" not in question.params.message


async def test_a_client_that_never_answers_is_refused_after_the_time_limit() -> None:
    made = approvals(timeout=0.1)
    never = asyncio.Event()

    async def ask(request: types.ElicitRequest) -> Any:
        await never.wait()

    target = tool()
    decision = await made.of_client(target, {}, made.rule(target), "Cursor", ask)
    assert (decision.allowed, decision.note) == (False, "not answered within 0.1 s (client)")
