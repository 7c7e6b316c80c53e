"""Tool results built by mcpmanager itself: failures a model can act on, and answers with text.

Execution failures are `isError` results, never bare protocol errors: a model reads the text and
tries again (a "did you mean", a server's state and its last stderr lines). The supervisor, the
router and the meta-tools all answer this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def text_result(text: str, structured: dict[str, Any]) -> types.CallToolResult:
    """An answer as text for the model and as `structuredContent` for a program."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def first_line(result: Mapping[str, Any]) -> str | None:
    """The first line of a result's text (as sent: a dict), for the activity log of a failed call."""
    for content in result.get("content") or ():
        text = content.get("text") if isinstance(content, Mapping) and content.get("type") == "text" else None
        if isinstance(text, str) and text.strip():
            return text.strip().splitlines()[0][:300]
    return None
