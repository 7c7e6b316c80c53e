"""The discovery meta-tools: what a client sees instead of hundreds of tools.

Descriptions are short on purpose: in discovery mode they ARE the resting context. Argument names
accept the variants models commonly produce (docs/architecture.md, the meta-tools' own arguments).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

DISCOVER = "discover_tools"
REGEX = "search_tools_regex"
SCHEMA = "get_tool_schema"
CALL = "call_tool"
NAMES = (DISCOVER, REGEX, SCHEMA, CALL)
# Clients with a tool search of their own (Claude Code) hide every MCP tool behind it unless the tool
# says to load it at once: the meta-tools, and the tools the user pinned, say so (docs/clients.md).
ALWAYS_LOAD = "anthropic/alwaysLoad"

_STRING = {"type": "string"}

META_TOOLS = [
    types.Tool(
        name=DISCOVER,
        description=(
            "Find tools for a task among all connected servers. Describe the need in full words "
            "(e.g. 'create an issue in a GitHub repository'). Returns the best tools with a ready "
            "call_tool template."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {**_STRING, "description": "The task, in plain words."},
                "limit": {"type": "integer", "description": "Max results (default 5)."},
            },
            "required": ["query"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=REGEX,
        description="Find tools whose name or description matches a regular expression (case-insensitive).",
        input_schema={
            "type": "object",
            "properties": {"pattern": _STRING, "limit": {"type": "integer", "description": "Default 10."}},
            "required": ["pattern"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=SCHEMA,
        description="Get a tool's full input schema (and output schema, annotations) before calling it.",
        input_schema={"type": "object", "properties": {"tool_name": _STRING}, "required": ["tool_name"]},
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=CALL,
        description="Call a tool found with discover_tools: its exact name and its arguments object.",
        input_schema={
            "type": "object",
            "properties": {"tool_name": _STRING, "arguments": {"type": "object"}},
            "required": ["tool_name"],
        },
    ),
]


def kept_loaded(tool: types.Tool) -> types.Tool:
    """`tool` with `_meta["anthropic/alwaysLoad"]: true` added to whatever `_meta` it carries."""
    return tool.model_copy(update={"meta": {**(tool.meta or {}), ALWAYS_LOAD: True}})


_VARIANTS = {
    "tool_name": ("tool_name", "toolName", "name", "tool", "tool_id", "toolname"),
    "arguments": ("arguments", "args", "params", "parameters", "input", "arguments_json"),
    "query": ("query", "q", "search", "text", "task"),
    "pattern": ("pattern", "regex", "query", "q"),
    "limit": ("limit", "k", "top_k", "max_results", "n"),
}


def argument(args: dict[str, Any] | None, canonical: str) -> Any:
    """The value of a meta-tool argument under its canonical name or a common variant."""
    for key in _VARIANTS[canonical]:
        if args and key in args:
            return args[key]
    return None


def tool_arguments(args: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """call_tool's `arguments`: an object, or a JSON text of one (models often stringify it)."""
    value = argument(args, "arguments")
    if value is None:
        return {}, None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return None, "'arguments' must be an object (got text that is not JSON)"
    if not isinstance(value, dict):
        return None, f"'arguments' must be an object, got {type(value).__name__}"
    return value, None


def limit_of(args: dict[str, Any] | None, default: int, maximum: int = 25) -> int:
    value = argument(args, "limit")
    try:
        number = int(value) if value is not None else default
    except (TypeError, ValueError):
        number = default
    return max(1, min(number, maximum))
