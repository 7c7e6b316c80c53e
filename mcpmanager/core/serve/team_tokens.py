"""A team gateway's named tokens: one per person, revocable, kept in a file as SHA-256 digests only.

The file (JSON, mode 0600, written atomically):

    {"tokens": [{"name": "alice", "sha256": "<hex digest>", "created": "2026-11-26T09:00:00Z"}]}

Only digests are stored: a copy of the file (a backup, a Kubernetes Secret read by too many people)
grants nothing, and a token is shown once, when it is made. A token is 32 random bytes, so a plain
SHA-256 is enough (nothing to brute-force; a password hash would only slow every request).

Revoking is removing the entry. The engine notices without a restart: before checking a request it
looks at the file's identity (device, inode, size, mtime, ctime: one `stat`) and reads it again when
it changed,
so a revocation holds from the next request on every replica that sees the file (a request, not a
stream: an event stream or a call already running when the token was revoked goes on until it
ends). Edits take a lock beside the file (`.NAME.lock`), so a revoke and an add at the same time
cannot undo each other. A file that has
become unreadable or broken refuses every token until it is mended (keeping the last good copy
would keep a token valid that the edit meant to revoke).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcpmanager.core.system.atomic_write import write_atomic
from mcpmanager.core.system.file_lock import FileLock

logger = logging.getLogger(__name__)

_BYTES = 32
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class TokensError(Exception):
    """The tokens file cannot be used: unreadable, broken, or a name that is wrong; the message says which."""


@dataclass(frozen=True)
class Entry:
    name: str
    sha256: str
    created: str


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def read_entries(path: Path) -> list[Entry]:
    """The file's entries; TokensError naming the file and what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TokensError(
            f"tokens file not found: {path} (make one with `mcpmanager tokens add NAME --file {path}`)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TokensError(f"cannot read the tokens file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TokensError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    items = document.get("tokens") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise TokensError(f'{path}: expected {{"tokens": [...]}}')
    entries: list[Entry] = []
    for i, item in enumerate(items):
        entries.append(_entry(path, i, item))
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise TokensError(f"{path}: the name {twice[0]!r} is there twice (one token per name)")
    return entries


def _entry(path: Path, i: int, item: Any) -> Entry:
    where = f"{path}: tokens[{i}]"
    if not isinstance(item, dict):
        raise TokensError(f"{where}: expected an object with name and sha256")
    name, value = item.get("name"), item.get("sha256")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise TokensError(f"{where}: name must be letters, digits, '.', '_', '@' or '-' (up to 64)")
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise TokensError(f"{where} ({name}): sha256 must be 64 lowercase hex digits")
    created = item.get("created")
    return Entry(name, value, created if isinstance(created, str) else "")


def _write(path: Path, entries: list[Entry]) -> None:
    items = [{"name": e.name, "sha256": e.sha256, "created": e.created} for e in entries]
    data = (json.dumps({"tokens": items}, indent=2) + "\n").encode()
    try:
        write_atomic(path, data, 0o600)
    except OSError as exc:
        raise TokensError(f"cannot write the tokens file {path}: {exc.strerror or exc}") from None


@contextmanager
def _editing(path: Path) -> Iterator[None]:
    """Held while the file is read, changed and written: two edits at once (a revoke and an add)
    would otherwise each write what they read, and the later one would bring a revoked token back."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(path.parent, f".{path.name}.lock")
        lock.acquire(blocking=True)
    except OSError as exc:
        raise TokensError(f"cannot change the tokens file {path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        lock.release()


def add_token(path: Path, name: str) -> str:
    """A new token for `name`, stored as its digest; the token itself is returned once, never kept."""
    if not NAME.fullmatch(name):
        raise TokensError(f"{name!r}: a token's name is letters, digits, '.', '_', '@' or '-' (up to 64)")
    with _editing(path):
        entries = read_entries(path) if path.exists() else []
        if any(e.name == name for e in entries):
            raise TokensError(f"{name!r} already has a token in {path}; revoke it first to make a new one")
        token = secrets.token_urlsafe(_BYTES)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        _write(path, [*entries, Entry(name, digest(token), stamp)])
    return token


def revoke_token(path: Path, name: str) -> None:
    with _editing(path):
        entries = read_entries(path)
        kept = [e for e in entries if e.name != name]
        if len(kept) == len(entries):
            known = ", ".join(e.name for e in entries) or "none"
            raise TokensError(f"no token named {name!r} in {path} (named: {known})")
        _write(path, kept)


class TokenBook:
    """Checks presented tokens against the file, reading it again whenever it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, ...] | None = None
        self._digests: dict[str, str] = {}  # digest → name
        self._broken: str | None = None
        self.entries()  # fail at start, with the file's own message, rather than on the first request

    def entries(self) -> list[Entry]:
        """The entries as they are now (TokensError when the file is unusable)."""
        entries = read_entries(self.path)
        self._digests = {e.sha256: e.name for e in entries}
        return entries

    def _refresh(self) -> None:
        try:
            st = os.stat(self.path)
            identity: tuple[int, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            identity = None
        if identity == self._seen and identity is not None:
            return
        self._seen = identity
        try:
            self.entries()
            if self._broken is not None:
                logger.warning("the tokens file is usable again (%d tokens)", len(self._digests))
            self._broken = None
        except TokensError as exc:
            self._digests = {}
            if str(exc) != self._broken:
                logger.error("%s; every token is refused until it is mended", exc)
            self._broken = str(exc)

    def who(self, presented: str) -> str | None:
        """The name whose token this is, or None. Compared digest to digest in constant time."""
        self._refresh()
        wanted = digest(presented)
        found = None
        for stored, name in self._digests.items():
            if hmac.compare_digest(stored, wanted):
                found = name
        return found
