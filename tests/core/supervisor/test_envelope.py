"""The capabilities a 2026-07-28 server is told per request (`envelope`): the caller's relayed ones
as declared, its extensions that mcpmanager carries, the rest mcpmanager's own, roots where the
entry configures them; built once per capability set; and `protocol_errors`' era rules for
resource-not-found."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from mcpmanager.core.supervisor.envelope import Envelopes, calling, for_client
from mcpmanager.core.supervisor.protocol_errors import RESOURCE_NOT_FOUND, passes, read_error_for, resource_not_found

OWN: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "extensions": {"x": {}},
}
FORMS = types.ClientCapabilities(elicitation=types.ElicitationCapability(form=types.FormElicitationCapability()))


def test_the_callers_relayed_capabilities_replace_mcpmanagers_own() -> None:
    assert for_client(OWN, FORMS, roots_configured=False) == {"elicitation": {"form": {}}}
    assert for_client(OWN, types.ClientCapabilities(), roots_configured=True) == {"roots": {"listChanged": True}}
    sampling = types.ClientCapabilities(sampling=types.SamplingCapability(tools=types.SamplingToolsCapability()))
    assert for_client(OWN, sampling, roots_configured=False)["sampling"] == {"tools": {}}


def test_the_callers_extensions_go_on_where_mcpmanager_carries_them() -> None:
    host = types.ClientCapabilities(extensions={"x": {"v": 1}, "unknown.example/ext": {}})
    assert for_client(OWN, host, roots_configured=False) == {"extensions": {"x": {"v": 1}}}  # as the caller declared


def test_an_envelope_is_built_once_per_capability_set() -> None:
    envelopes = Envelopes()
    assert envelopes.capabilities(OWN, False) is None  # nobody calling: mcpmanager's own request
    with calling(FORMS):
        first = envelopes.capabilities(OWN, False)
        assert envelopes.capabilities(OWN, False) is first  # the same object: found by it
    same_value = FORMS.model_copy(deep=True)
    with calling(same_value):
        assert envelopes.capabilities(OWN, False) is first  # an equal set: found by value
        assert envelopes.capabilities(OWN, True) is not first  # configured roots: another set
    with calling(types.ClientCapabilities()):
        assert envelopes.capabilities(OWN, False) == {}
    with calling(types.ClientCapabilities(extensions={"x": {}})):  # extensions tell sets apart too
        assert envelopes.capabilities(OWN, False) == {"extensions": {"x": {}}}
    with calling(FORMS):
        assert envelopes.capabilities(dict(OWN), False) is not first  # a new session starts again
        with calling(None):
            assert envelopes.capabilities(OWN, False) is None


def test_a_resource_not_found_has_the_clients_eras_code_and_data_uri() -> None:
    own = resource_not_found("a://b", "2025-11-25", "nope")
    assert (own.error.code, own.error.data) == (RESOURCE_NOT_FOUND, {"uri": "a://b"})
    assert resource_not_found("a://b", "2026-07-28", "nope").error.code == types.INVALID_PARAMS
    old_server = MCPError(RESOURCE_NOT_FOUND, "missing")
    for_modern = read_error_for(old_server, "a://b", "2026-07-28")
    assert (for_modern.error.code, for_modern.error.message, for_modern.error.data) == (
        -32602,
        "missing",
        {"uri": "a://b"},
    )
    new_server = MCPError(types.INVALID_PARAMS, "missing", {"uri": "a://b", "more": 1})
    for_old = read_error_for(new_server, "a://b", "2025-11-25")
    assert (for_old.error.code, for_old.error.data) == (RESOURCE_NOT_FOUND, {"uri": "a://b", "more": 1})
    unnamed = read_error_for(MCPError(types.INVALID_PARAMS, "bad uri"), "a://b", "2025-11-25")
    assert (unnamed.error.code, unnamed.error.data) == (types.INVALID_PARAMS, {"uri": "a://b"})  # not known a miss
    other = MCPError(types.INTERNAL_ERROR, "down")
    assert read_error_for(other, "a://b", "2026-07-28") is other


def test_the_errors_that_pass_as_errors() -> None:
    for code in (-32602, -32021, -32042, -32002):
        assert passes(MCPError(code, "x"))
    for code in (-32603, -32601, -32600, 0):
        assert not passes(MCPError(code, "x"))
    assert not passes(ValueError("x"))
