"""The local bearer token's file: made once, 0600, read back; a damaged one (empty, not ASCII) is
replaced by a new token and said, never taken as "no token" and crashed on."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from mcpmanager.core.serve.bearer_token import ensure_token, read_token, token_path


def test_a_token_is_made_once_private_and_read_back(tmp_path: Path) -> None:
    token = ensure_token(tmp_path)
    assert len(token) >= 32 and ensure_token(tmp_path) == token == read_token(tmp_path)
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600


@pytest.mark.parametrize("damage", [b"", b"\n", b"\xff\xfe garbled"])
def test_a_damaged_token_file_is_replaced_and_said(
    tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    token_path(tmp_path).write_bytes(damage)
    with caplog.at_level(logging.WARNING):
        token = ensure_token(tmp_path)
    assert token and read_token(tmp_path) == token
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600
    assert any(str(token_path(tmp_path)) in r.getMessage() for r in caplog.records), caplog.text
