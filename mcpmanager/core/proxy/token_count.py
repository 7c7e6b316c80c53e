"""Context cost in tokens, estimated as UTF-8 bytes / 4 (close to what tokenizers give for JSON).

The figures a user weighs: what a client's tools/list costs now (the resting context), what it would
cost with every tool exposed directly, and what each tool costs on its own.
"""

from __future__ import annotations

import json
from typing import Any


def tokens_of(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text.encode()) // 4


def tool_tokens(spec: dict[str, Any]) -> int:
    """One tool as a client receives it in tools/list."""
    return tokens_of(spec)
