"""The endpoint's bearer token: random, kept in the runtime directory in a file only the user can
read (0600), never logged. Made once and reused while the file exists, so a client that was given
it keeps working across engine restarts (the runtime directory itself goes at logout). A damaged
file (empty, not ASCII) is a token no client can present: it is replaced, and said."""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from pathlib import Path

TOKEN_FILE = "token"
_BYTES = 32

logger = logging.getLogger(__name__)


def token_path(runtime_dir: Path) -> Path:
    return runtime_dir / TOKEN_FILE


def read_token(runtime_dir: Path) -> str | None:
    """The token, or None when there is none (no engine has served HTTP since the last logout)."""
    try:
        text = token_path(runtime_dir).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def ensure_token(runtime_dir: Path) -> str:
    """The token, made now if there is none; the file is created 0600 (never world-readable, not even
    for a moment: O_EXCL with the mode, then a rename)."""
    existing = read_token(runtime_dir)
    if existing is not None:
        return existing
    runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(_BYTES)
    temporary = runtime_dir / f".{TOKEN_FILE}.{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
    finally:
        os.close(fd)
    try:
        os.link(temporary, token_path(runtime_dir))  # fails if another engine made one meanwhile
    except FileExistsError:
        if read_token(runtime_dir) is None:  # there, but damaged: the callers hold the engine lock
            logger.warning("the bearer token file %s is damaged (empty or not ASCII); a new token replaces it",
                           token_path(runtime_dir))  # fmt: skip
            os.replace(temporary, token_path(runtime_dir))
    finally:
        temporary.unlink(missing_ok=True)
    found = read_token(runtime_dir)
    assert found is not None
    return found


def matches(presented: str, token: str) -> bool:
    """Compare in constant time (no timing hint about how much of a guess was right)."""
    return hmac.compare_digest(presented.encode(), token.encode())
