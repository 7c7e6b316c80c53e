"""Ready-to-call templates built from a tool's inputSchema.

A hit from discover_tools carries `{"tool_name": ..., "arguments": {...}}` with a placeholder for
every required argument, so a model fills in blanks instead of guessing names and shapes:
`<YYYY-MM-DD>` for dates, `0` for numbers, `false` for booleans, `<a|b|c>` for enums, `<field>` for
strings, required fields of nested objects one level deep. Optional parameters are listed by name.
"""

from __future__ import annotations

from typing import Any

_FORMATS = {
    "date": "<YYYY-MM-DD>",
    "date-time": "<YYYY-MM-DDTHH:MM:SSZ>",
    "time": "<HH:MM:SS>",
    "email": "<name@example.com>",
    "uri": "<https://…>",
    "url": "<https://…>",
}
_MAX_ENUM = 6


def _schema_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                for option in options:
                    if isinstance(option, dict) and option.get("type") not in (None, "null"):
                        return _schema_type(option)
    return kind if isinstance(kind, str) else None


def placeholder(name: str, schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict):
        return f"<{name}>"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        shown = "|".join(str(v) for v in enum[:_MAX_ENUM]) + ("|…" if len(enum) > _MAX_ENUM else "")
        return f"<{shown}>"
    if "const" in schema:
        return schema["const"]
    kind = _schema_type(schema)
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    if kind == "array":
        items = schema.get("items")
        return [placeholder(name.rstrip("s") or name, items, depth + 1)] if depth < 1 else []
    if kind == "object":
        return required_arguments(schema, depth + 1) if depth < 1 else {}
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    return f"<{name}>"


def required_arguments(schema: Any, depth: int = 0) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    names = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    return {name: placeholder(name, properties.get(name), depth) for name in names}


def optional_parameters(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = set(schema.get("required") or [])
    return [name for name in schema["properties"] if name not in required]


def call_template(exposed: str, schema: Any) -> dict[str, Any]:
    return {"tool_name": exposed, "arguments": required_arguments(schema)}
