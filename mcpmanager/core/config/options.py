"""Settings declared once: each option is a dataclass field that carries its check.

The JSON key is the field's name in camelCase (`start_timeout` → `startTimeout`), the default is the
field's default, and the check turns a JSON value into the typed one or says why it cannot. Loading
(`load`) and writing the document (`document`) both walk the fields, so an option is added in one
place. The checks raise `Invalid`; the loader adds the file, the key path and the line and column.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from mcpmanager.core.config.json_text import KeyPath, json_kind
from mcpmanager.core.config.modes import MODES, Mode, is_mode

T = TypeVar("T")
Check = Callable[[Any], Any]


class Invalid(ValueError):
    """A value its check refuses: `reason`, and where inside the value (`at`, for an item of a list)."""

    def __init__(self, reason: str, at: KeyPath = ()) -> None:
        super().__init__(reason)
        self.reason, self.at = reason, at


def option(default: Any = dataclasses.MISSING, check: Check = lambda v: v, *, factory: Any = None) -> Any:
    """A settings field: its default (or `factory` for a list or dict) and its check."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"check": check})
    return dataclasses.field(default=default, metadata={"check": check})


def json_key(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def read_options(cls: type[T], section: Mapping[str, Any], path: KeyPath, fail: Callable[[KeyPath, str], Any]) -> T:
    """`cls` from a JSON object: each option present is checked, the others keep their defaults."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        key = json_key(field.name)
        if key in section:
            try:
                values[field.name] = field.metadata["check"](section[key])
            except Invalid as exc:
                fail((*path, key, *exc.at), exc.reason)
    return cls(**values)


def options_of(settings: Any) -> list[tuple[str, Any, Any]]:
    """(JSON key, value, default) of every option of a settings object, in declaration order."""
    return [
        (json_key(field.name), getattr(settings, field.name), default_of(field))
        for field in dataclasses.fields(settings)
    ]


# The checks ---------------------------------------------------------------------------------------


def string(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"expected a string, got {json_kind(value)}")
    return value


def nonempty(value: Any) -> str:
    if not string(value):
        raise Invalid("must not be empty")
    return str(value)


def string_or_null(value: Any) -> str | None:
    return None if value is None else string(value)


def obj(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"expected an object, got {json_kind(value)}")
    return value


def strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise Invalid(f"expected an array of strings, got {json_kind(value)}")
    return [_at(i, string, item) for i, item in enumerate(value)]


def roots(value: Any) -> list[str] | None:
    """A server's roots: folders (paths) or file:// URIs, the only roots MCP has; null: the clients'."""
    if value is None:
        return None
    found = strings(value)
    for n, entry in enumerate(found):
        if "://" in entry and not entry.startswith("file://"):
            raise Invalid(f"a root is a folder or a file:// URI, not {entry!r}", (n,))
    return found


def string_map(value: Any) -> dict[str, str]:
    return {key: _at(key, string, item) for key, item in obj(value).items()}


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"expected true or false, got {json_kind(value)}")
    return value


def positive(value: Any) -> float:
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise Invalid(f"expected a positive number, got {_show(value)}")
    return float(value)


def positive_or_null(value: Any) -> float | None:
    return None if value is None else positive(value)


def count(value: Any) -> int:
    if not (_is_number(value) and isinstance(value, int) and value > 0):
        raise Invalid(f"expected a positive integer, got {_show(value)}")
    return value


def integer(low: int, high: int) -> Check:
    def check(value: Any) -> int:
        if not (_is_number(value) and isinstance(value, int) and low <= value <= high):
            raise Invalid(f"expected an integer {low}..{high}, got {_show(value)}")
        return value

    return check


def mode(value: Any) -> Mode:
    if is_mode(value):
        return value
    got = repr(value) if isinstance(value, str) else json_kind(value)
    raise Invalid(f"expected {' or '.join(repr(m) for m in MODES)}, got {got}")


def one_of(*choices: str) -> Check:
    """One of these strings (a setting with a few named values)."""

    def check(value: Any) -> str:
        if isinstance(value, str) and value in choices:
            return value
        got = repr(value) if isinstance(value, str) else json_kind(value)
        raise Invalid(f"expected {' or '.join(map(repr, choices))}, got {got}")

    return check


def _at(where: str | int, check: Callable[[Any], T], value: Any) -> T:
    try:
        return check(value)
    except Invalid as exc:
        raise Invalid(exc.reason, (where, *exc.at)) from None


def _show(value: Any) -> str:
    """A number as written (ranges are about the value); anything else by its type."""
    return json.dumps(value) if _is_number(value) else json_kind(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
