"""A server edited in a form, made over the server as the file has it now.

The window's editor is filled from the server as it was when opened; meanwhile another program may
have changed it (`mcpmanager secrets move` put a keyring reference where the plain value was, an
editor added a variable). Saving the form as a whole would undo those changes, and put a moved
secret back in plain text. So a save keeps what the form changed and takes everything it left as it
was from the file now, key by key for the env and headers.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from mcpmanager.core.config.servers import ServerConfig


def rebase_server(base: ServerConfig, edited: ServerConfig, current: ServerConfig) -> ServerConfig:
    """`edited` (a form filled from `base`) over `current` (the server in the file now). A transport
    changed on either side: the form's server as it is (its fields do not line up with the file's)."""
    if not (type(base) is type(edited) is type(current)):
        return edited
    changes: dict[str, Any] = {}
    for item in fields(edited):
        if item.name == "name":  # the form's (a rename)
            continue
        was, now, theirs = (getattr(server, item.name) for server in (base, edited, current))
        if isinstance(was, dict) and isinstance(now, dict) and isinstance(theirs, dict):
            changes[item.name] = _rebase_mapping(was, now, theirs)
        else:
            changes[item.name] = theirs if now == was else now
    return replace(edited, **changes)


def _rebase_mapping(was: dict[str, str], now: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for key, value in theirs.items():
        if key in was and key not in now:
            continue  # removed in the form
        merged[key] = now[key] if key in now and (key not in was or now[key] != was[key]) else value
    for key, value in now.items():  # added or changed in the form, whatever the file did with it
        if key not in merged and (key not in was or was[key] != value):
            merged[key] = value
    return merged
