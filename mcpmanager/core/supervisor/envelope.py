"""What a 2026-07-28 server is told the client can do: the calling client's capabilities, per request.

In the 2026-07-28 era the client's capabilities travel in every request's `_meta` envelope, so a
server can refuse (-32021) or leave out a question the client could not answer. mcpmanager's own
session with the server declares everything it can relay (sampling, elicitation, roots), which is
right for its own requests (lists, listen streams: the merged lists serve every client) and wrong
for a client's: a request sent for a client carries that client's `sampling`, `elicitation` and
`roots` as it declared them, and `roots` as well where the server's entry configures roots
(mcpmanager answers those itself), and the extensions it declared that mcpmanager carries (those
its own session declares: MCP Apps, tasks), none other. The rest stay mcpmanager's own. (A call
mcpmanager makes a task of for a client without tasks adds the extension for that request alone:
`sdk_compat.send_raw`.)

The client behind a request is set for the duration of its sends (`calling`), which the session's
stamp and the fast lane's bytes both read. The envelope is built once per distinct capability set
and server session, and found again by the capabilities object (a handshake-era client's lasts
its connection) or, failing that, by their value (a 2026-07-28 client's are parsed per request).
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any

import mcp_types as types

RELAYED = frozenset({"sampling", "elicitation", "roots"})
_KEYED = set(RELAYED | {"extensions"})  # what tells one client's envelope from another's
_BOUND = 64  # distinct capability sets remembered per session (a handful in practice)

# The capabilities of the client a request is being sent for; None: mcpmanager's own request.
_CALLING: ContextVar[types.ClientCapabilities | None] = ContextVar("calling", default=None)


class calling:
    """Requests sent within are sent for a client that declared `capabilities` (None: for nobody,
    mcpmanager's own). A class, not a generator-made context: it is on every call's path."""

    __slots__ = ("_capabilities", "_token")
    _token: Token[types.ClientCapabilities | None]

    def __init__(self, capabilities: types.ClientCapabilities | None) -> None:
        self._capabilities = capabilities

    def __enter__(self) -> None:
        self._token = _CALLING.set(self._capabilities)

    def __exit__(self, *exc: object) -> None:
        _CALLING.reset(self._token)


def for_client(own: dict[str, Any], client: types.ClientCapabilities, roots_configured: bool) -> dict[str, Any]:
    """The envelope's capabilities for a request sent for `client`: its relayed capabilities as it
    declared them (roots: also where mcpmanager answers them from the config), its extensions that
    `own` declares too, the rest `own`."""
    capabilities = {key: value for key, value in own.items() if key not in _KEYED}
    capabilities.update(client.model_dump(by_alias=True, mode="json", exclude_none=True, include=set(RELAYED)))
    if roots_configured:
        capabilities["roots"] = own.get("roots") or {}
    carried = own.get("extensions") or {}
    extensions = {key: value for key, value in (client.extensions or {}).items() if key in carried}
    if extensions:
        capabilities["extensions"] = extensions
    return capabilities


class Envelopes:
    """One server session's envelopes per calling client's capability set (see the module)."""

    def __init__(self) -> None:
        self._own: object = None
        self._by_object: dict[int, tuple[types.ClientCapabilities, bool, dict[str, Any]]] = {}
        self._by_value: dict[str, dict[str, Any]] = {}

    def capabilities(self, own: dict[str, Any], roots_configured: bool) -> dict[str, Any] | None:
        """The envelope's capabilities for the client being called for now; None: keep `own`."""
        client = _CALLING.get()
        if client is None:
            return None
        return self._for(own, client, roots_configured)

    def _for(self, own: dict[str, Any], client: types.ClientCapabilities, roots_configured: bool) -> dict[str, Any]:
        if own is not self._own:  # a new session (or its declaration changed): start again
            self._own, self._by_object, self._by_value = own, {}, {}
        known = self._by_object.get(id(client))
        if known is not None and known[0] is client and known[1] is roots_configured:
            return known[2]
        value = client.model_dump_json(include=_KEYED, exclude_none=True, by_alias=True) + str(roots_configured)
        built = self._by_value.get(value)
        if built is None:
            if len(self._by_value) >= _BOUND:
                self._by_value.clear()
            built = self._by_value[value] = for_client(own, client, roots_configured)
        if len(self._by_object) >= _BOUND:
            self._by_object.clear()
        # The object is kept with it, so its id is not reused meanwhile.
        self._by_object[id(client)] = (client, roots_configured, built)
        return built
