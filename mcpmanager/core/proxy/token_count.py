"""Context cost in tokens, estimated as UTF-8 bytes / 4 (close to what tokenizers give for JSON).

The figures a user weighs: what a client's tools/list costs now (the resting context), what it would
cost with every tool exposed directly, and what each tool costs on its own. A tool's `_meta` is left
out: it is for the client, which does not show it to the model (Claude Code sends the model a tool's
name, description and input schema).
"""

from __future__ import annotations

import json
from typing import Any


def tokens_of(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text.encode()) // 4


def tool_tokens(spec: dict[str, Any]) -> int:
    """One tool as a client receives it in tools/list."""
    return tokens_of(_for_model(spec))


def tools_tokens(specs: list[dict[str, Any]]) -> int:
    """A tools/list's tools."""
    return tokens_of([_for_model(spec) for spec in specs])


def _for_model(spec: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in spec.items() if key != "_meta"}
