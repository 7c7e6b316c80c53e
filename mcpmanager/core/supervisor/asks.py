"""Requests a server sends to its client (sampling, elicitation, roots), and its log messages: who
answers them, who hears them.

mcpmanager is every server's client, but it cannot answer these itself: a person or a model at the
far end must. The supervisor hands each one to an `UpstreamAsks` (the proxy's, which finds the
client the server is working for); this room only defines the seam and a refusal for when nobody
is there.
"""

from __future__ import annotations

from typing import Protocol

import mcp_types as types

SampleAnswer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData


class UpstreamAsks(Protocol):
    async def sample(self, server: str, params: types.CreateMessageRequestParams) -> SampleAnswer: ...

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData: ...

    async def roots(self, server: str) -> types.ListRootsResult | types.ErrorData: ...

    async def log(self, server: str, message: types.LoggingMessageNotificationParams) -> None:
        """Pass a log message on. Awaited before the server's next message is handled, so a message
        logged during a call reaches the caller before the call's result does."""


class NobodyUpstream:
    """Answers for a server that runs with no proxy in front (the CLI's one-off listings)."""

    async def sample(self, server: str, params: types.CreateMessageRequestParams) -> SampleAnswer:
        return _refused(server, "sampling")

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        return _refused(server, "elicitation")

    async def roots(self, server: str) -> types.ListRootsResult | types.ErrorData:
        return types.ListRootsResult(roots=[])

    async def log(self, server: str, message: types.LoggingMessageNotificationParams) -> None:
        return None


def _refused(server: str, what: str) -> types.ErrorData:
    return types.ErrorData(
        code=types.INVALID_REQUEST, message=f"mcpmanager has no client to ask for {what} ({server})."
    )
