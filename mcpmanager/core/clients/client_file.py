"""A client's config file as install reads it: bytes, text, the JSON(C) document, its objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.json_edit import JsonText
from mcpmanager.core.config.json_text import KeyPath, json_kind


def read_file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"{path}: cannot read: {exc.strerror or exc}") from None


def decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")  # a byte-order mark stays a character, so it is written back
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path}: not UTF-8 text (bad byte at offset {exc.start}); not changed") from None


def parse(text: str | None, path: Path) -> dict[str, Any]:
    """The document (JSONC read as the clients read it); InstallError naming the place if it does not
    read or a servers section is not an object."""
    if text is None or not text.strip():
        return {}
    try:
        doc = JsonText(text, "  ").value()
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}; not changed") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a JSON object at the top level, got {json_kind(doc)}; not changed")
    return doc


def object_at(doc: dict[str, Any], path: KeyPath) -> dict[str, Any]:
    value: Any = doc
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def label(section: KeyPath, name: str) -> str:
    return f"{name} (project {section[1]})" if section[0] == "projects" else name
