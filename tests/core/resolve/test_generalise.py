"""Resolution that generalises (issue 17): renames read from the parameters' descriptions and types,
bare names that tools of several servers fit, and short words with two letters swapped.

The tools and wordings here are this file's own (a review site, a spreadsheet, a ride service…),
not those of the benchmark's catalogues."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.proxy.discovery import Discovery
from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments
from mcpmanager.core.resolve.names import NameResolver
from mcpmanager.core.search.index import SearchIndex


def spec(properties: dict[str, Any], *required: str, **extra: Any) -> dict[str, Any]:
    return {"inputSchema": {"type": "object", "properties": properties, "required": list(required)}, **extra}


def text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def number(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}


REVIEW = spec(
    {
        "product": text("The product being reviewed."),
        "opinion": text("The reviewer's written comment about the product."),
        "stars": number("Rating from 1 to 5."),
        "anonymous": {"type": "boolean", "description": "Hide the reviewer's name."},
    },
    "product",
    "opinion",
)
RIDE = spec(
    {
        "pickup": text("The street address where the driver collects the passenger."),
        "dropoff": text("The street address the passenger is taken to."),
        "riders": number("How many passengers travel."),
    },
    "pickup",
    "dropoff",
)
SMS = spec({"number": text("The phone number."), "message": text("The message content to send.")}, "number", "message")
PARCEL = spec(
    {
        "to": text("The street address the parcel is delivered to."),
        "fallback": text("The street address it goes back to when nobody answers."),
    },
    "to",
)
ALBUM = {"album": text("The name of the album.")}
TABLE = spec({"day": text("The day of the booking."), "start_time": text("The start time of the booking.")}, "day")
TICKET = spec(
    {
        "title": text("Short summary of the ticket."),
        "extra": text('JSON of further fields. Examples: set severity with {"severity": 2}.'),
        "assignee_id": text("The agent the ticket goes to."),
    },
    "title",
)
COMMUTE = spec(
    {"home_lat": {"type": "number", "description": "Latitude of home"}, "work_lat": {"type": "number"}},
    "home_lat",
    "work_lat",
)


# The same tools with the refusals' target parameters required, so the call lacks them.
RATED = spec(REVIEW["inputSchema"]["properties"], "product", "opinion", "stars")
SIGNED = spec(REVIEW["inputSchema"]["properties"], "product", "opinion", "anonymous")
DETAILED = spec(TICKET["inputSchema"]["properties"], "title", "extra")
ASSIGNED = spec(TICKET["inputSchema"]["properties"], "title", "assignee_id")
# A tool that reads (optional targets are read into only there), lacking its required `party`.
SEATED = spec({**TABLE["inputSchema"]["properties"], "party": number("How many people come.")}, "day", "party")


def check(name: str, definition: dict[str, Any], arguments: dict[str, Any]) -> CheckedArguments:
    return ArgumentChecker().check(f"s:{name}", name, definition, arguments)


@pytest.mark.parametrize(
    ("name", "definition", "passed", "forwarded"),
    [
        # the passed name is a word of one free parameter's description, and the type agrees
        ("post_review", REVIEW, {"product": "kettle", "comment": "Boils fast"}, {"opinion": "Boils fast"}),
        # a form word (`text`) through its argument group: "the message content"
        ("send_sms", SMS, {"number": "+4712345678", "text": "On my way"}, {"message": "On my way"}),
        # two fit, of which one is required: the call is about what it lacks
        ("send_parcel", PARCEL, {"address": "9 Oak Ave"}, {"to": "9 Oak Ave"}),
        # a bare `name` is the name of the tool's own thing: "the name of the album"
        ("create_album", spec(ALBUM, "album"), {"name": "Summer"}, {"album": "Summer"}),
    ],
)
def test_a_description_and_a_type_are_evidence_for_a_rename(
    name: str, definition: dict[str, Any], passed: dict[str, Any], forwarded: dict[str, Any]
) -> None:
    checked = check(name, definition, passed)
    assert checked.arguments is not None, checked.problems
    assert {k: v for k, v in checked.arguments.items() if k not in passed} == forwarded
    assert checked.renames[-1].how == "described"


@pytest.mark.parametrize(
    ("name", "definition", "passed", "why"),
    [
        ("book_ride", RIDE, {"riders": 1, "address": "9 Oak Ave"}, "two free parameters fit"),
        # the call runs without it: an optional parameter is not read into it (test_described_guards)
        ("post_review", REVIEW, {"product": "kettle", "opinion": "ok", "rating": 4}, "valid without `rating`"),
        ("book_ride", RIDE, {"pickup": "1 Elm St", "dropoff": "9 Oak Ave", "passengers": 2}, "valid without it"),
        ("book_ride", RIDE, {"pickup": "1 Elm St", "address": "9 Oak Ave"}, "pickup, passed, fits as well"),
        # Below, the parameter the passed name would go to is required and missing, so the
        # description is read (test_described_guards) and each refusal is for the reason given.
        ("post_review", RATED, {"product": "kettle", "opinion": "ok", "rating": "four"}, "a string for an integer"),
        ("post_review", SIGNED, {"product": "kettle", "opinion": "ok", "hide_name": True}, "a flag"),
        ("file_ticket", DETAILED, {"title": "Crash", "severity": "high"}, "only an example of the description"),
        ("file_ticket", ASSIGNED, {"title": "Crash", "agent": "ann"}, "an id is not named by prose"),
        ("log_commute", COMMUTE, {"work_lat": 52.5, "lat": 52.4}, "lat is home's or work's"),
        ("tag_photo", spec(ALBUM, "album"), {"name": "Summer"}, "a bare name of what the tool is not about"),
        ("find_table", SEATED, {"day": "Fri", "time": "19:00"}, "an optional start_time qualifies time"),
    ],
)
def test_a_rename_the_evidence_does_not_single_out_is_refused(
    name: str, definition: dict[str, Any], passed: dict[str, Any], why: str
) -> None:
    assert check(name, definition, passed).refused, why


def test_the_refusals_tools_take_a_rename_their_evidence_does_single_out() -> None:
    # The refusals above are for their reasons, not because these tools never rename.
    assert check("post_review", RATED, {"product": "k", "opinion": "ok", "rating": 4}).arguments == {
        "product": "k",
        "opinion": "ok",
        "stars": 4,
    }
    assert check("find_table", SEATED, {"day": "Fri", "people": 4}).arguments == {"day": "Fri", "party": 4}


def test_two_fitting_parameters_are_named_in_the_refusal() -> None:
    problems = check("book_ride", RIDE, {"riders": 1, "address": "9 Oak Ave"}).problems
    assert any("'pickup'" in p and "'dropoff'" in p for p in problems), problems


def test_no_rename_from_a_description_on_a_tool_that_destroys() -> None:
    wipe = spec({"folder": text("The files folder to erase.")}, "folder", annotations={"destructiveHint": True})
    assert check("empty_folder", wipe, {"files": "/tmp/x"}).refused
    assert check("list_folder", {**wipe, "annotations": {}}, {"files": "/tmp/x"}).arguments == {"folder": "/tmp/x"}


def tool(name: str, description: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}, **extra}


SERVERS = {
    "sheets": [tool("sheets_undo", "Undo the last change"), tool("sheets_add_row"), tool("sheets_read_range")],
    "notes": [tool("undo_edit", "Undo the last edit of a note"), tool("edit_note"), tool("read_note")],
    "rides": [tool("get_rider", "Get a rider"), tool("list_trips", "List trips"), tool("start_trip", "Start a trip")],
    "tags": [tool("get_tag", "Get a tag"), tool("drop_tag", "Delete a tag")],
    "mail": [tool("move_mail", "Move a mail", annotations={"destructiveHint": True}), tool("send_mail")],
}


def resolver(servers: dict[str, list[dict[str, Any]]]) -> NameResolver:
    catalogue = Catalogue()
    catalogue.load(servers)
    catalogue.configure(list(servers), {})
    return NameResolver(catalogue.tools(), Discovery(catalogue, SearchIndex()).search_names)


@pytest.fixture(scope="module")
def names() -> NameResolver:
    return resolver(SERVERS)


@pytest.mark.parametrize(
    "more",
    [
        {},  # `undo` is `sheets_undo` spelt without its server's prefix
        {"vcs": [tool("undo_commit", "Undo the last commit")]},  # a word in three names: a fuzzy guess
    ],
)
def test_a_bare_name_that_tools_of_two_servers_fit_is_not_resolved(more: dict[str, Any]) -> None:
    # `undo_edit` of another server fits `undo` as well as `sheets_undo` (a word more, which no guess
    # could land on, since it edits): which one is meant, the name cannot say.
    names = resolver({**SERVERS, **more})
    result = names.resolve("undo")
    assert result.tool is None
    assert {"sheets_undo", "undo_edit"} <= set(result.suggestions[:3])
    assert names.resolve("sheets_undo").tool is not None  # the exact name still calls it


def test_a_bare_verb_that_tools_of_two_servers_have_is_not_resolved() -> None:
    browsers = {
        "kiosk": [tool("kiosk_tap", "Tap a point"), tool("kiosk_open_page")],
        "webdriver": [tool("browser_tap", "Tap an element"), tool("browser_scroll"), tool("browser_open")],
    }
    result = resolver(browsers).resolve("tap")  # `kiosk_tap` without its prefix, and `browser_tap`
    assert result.tool is None
    assert {"kiosk_tap", "browser_tap"} <= set(result.suggestions[:3])


@pytest.mark.parametrize(
    ("called", "key"),
    [
        ("lsit_trips", "rides:list_trips"),  # `list`: two letters swapped in a word of four
        ("sned_mail", "mail:send_mail"),
        ("get_tga", "tags:get_tag"),  # a read, though `drop_tag` is as near in letters
    ],
)
def test_two_letters_swapped_in_a_short_word_resolve(names: NameResolver, called: str, key: str) -> None:
    result = names.resolve(called)
    assert (result.tool.key if result.tool else None, result.how) == (key, "fuzzy")


@pytest.mark.parametrize(
    ("called", "why"),
    [
        ("get_tab", "a letter changed makes another real word"),
        ("mvoe_mail", "move_mail is destructive by annotation"),
        ("dorp_tag", "drop_tag destroys: a slip of its verb calls it no more than the verb would"),
    ],
)
def test_a_short_slip_never_lands_where_it_must_not(names: NameResolver, called: str, why: str) -> None:
    assert names.resolve(called).tool is None, why


SLIPS = {
    "tracker": [tool("get_ticket", "Get a ticket"), tool("delete_ticket", "Delete a ticket")],
    "helpdesk": [tool("helpdesk_get_ticket", "Get a helpdesk ticket"), tool("helpdesk_list_agents")],
    "vcs": [tool("close_branch", "Close a branch"), tool("read_log")],
    "ops": [tool("read_log", "Read the log")],
}


@pytest.mark.parametrize(
    ("called", "key"),
    [
        # one slip from `tracker:get_ticket` alone: `helpdesk_get_ticket` fits the call only with
        # the slip and its server's word, and would be no rival for the name spelt right
        ("get_tickett", "tracker:get_ticket"),
        ("get_tikcet", "tracker:get_ticket"),
        ("helpdesk_get_tcket", "helpdesk:helpdesk_get_ticket"),
    ],
)
def test_one_slip_from_one_name_resolves_as_that_name_would(called: str, key: str) -> None:
    result = resolver(SLIPS).resolve(called)
    assert (result.tool.key if result.tool else None, result.how) == (key, "fuzzy")


@pytest.mark.parametrize(
    ("called", "why"),
    [
        ("delete_tickett", "one slip from a tool that destroys"),
        ("read_lgo", "one slip from a name two servers have"),
        ("clone_branch", "a real verb is what the call says, not a slip of `close`"),
    ],
)
def test_one_slip_keeps_the_safety_rules(called: str, why: str) -> None:
    assert resolver(SLIPS).resolve(called).tool is None, why


def test_a_name_another_server_has_with_its_brand_inside_is_ambiguous() -> None:
    # `list_components` spells one library's `list-components`, and is another's
    # `list_shadcn_components` with the brand left out: which library is meant, it cannot say
    servers = {
        "antd": [tool("list-components"), tool("get-component-docs")],
        "shadcn-ui": [tool("list_shadcn_components"), tool("get_component_details")],
    }
    result = resolver(servers).resolve("list_components")
    assert result.tool is None
    assert {t.key for t in result.ambiguous} == {"antd:list-components", "shadcn-ui:list_shadcn_components"}
    # a word of a server's name that other servers' tools use too is no brand (`chart`)
    servers = {"antd": [tool("list-components")], "ui-kit": [tool("list_kit_items"), tool("list_components_ui")]}
    servers["other"] = [tool("ui_theme")]
    assert resolver(servers).resolve("list_components").tool is not None
