"""The JSON-RPC errors the spec gives a meaning of its own, which pass through mcpmanager as errors
(code, message and data as the server sent them) rather than becoming text for the model: invalid
params (SEP-2322's refused `requestState` among them), a capability the client did not declare
(-32021), a URL elicitation the client must complete first (-32042), and resource not found, whose
code changed between the eras (SEP-2164: -32002 in the handshake era, -32602 with `data.uri` in
2026-07-28)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

RESOURCE_NOT_FOUND = -32002  # the handshake era's code (retired in 2026-07-28)
PASSED = frozenset(
    {types.INVALID_PARAMS, types.MISSING_REQUIRED_CLIENT_CAPABILITY, types.URL_ELICITATION_REQUIRED, RESOURCE_NOT_FOUND}
)


class CannotAsk(MCPError):
    """mcpmanager's own refusal to put a server's question to the client (it did not declare what
    the question needs, it went away): about the server's question, not the client's request, so a
    tool call ends in text for the model whatever its code, as with a handshake-era server told
    the same refusal."""


def passes(exc: BaseException) -> bool:
    """Whether `exc` is an error the client gets as a JSON-RPC error (not as text)."""
    return isinstance(exc, MCPError) and exc.error.code in PASSED and not isinstance(exc, CannotAsk)


def resource_not_found(uri: str, version: str | None, message: str) -> MCPError:
    """mcpmanager's own resource-not-found, in the client's era, naming the URI in `data.uri`."""
    code = types.INVALID_PARAMS if version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND
    return MCPError(code, message, {"uri": uri})


def read_error_for(exc: MCPError, uri: str, version: str | None) -> MCPError:
    """A server's error on resources/read as the client's era writes it: a resource not found keeps
    its message and data, with the client's era's code and `data.uri` (added when missing). A -32602
    is taken for not-found only where the server said which URI (`data.uri`), as 2026-07-28 does."""
    error = exc.error
    data: Any = error.data
    named = isinstance(data, dict) and "uri" in data
    if error.code != RESOURCE_NOT_FOUND and not (error.code == types.INVALID_PARAMS and named):
        if error.code == types.INVALID_PARAMS and data is None:
            return MCPError(error.code, error.message, {"uri": uri})
        return exc
    code = types.INVALID_PARAMS if version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND
    if data is None:
        data = {"uri": uri}
    elif isinstance(data, dict) and "uri" not in data:
        data = {**data, "uri": uri}
    return MCPError(code, error.message, data)
