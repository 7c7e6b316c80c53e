"""Merged lists are paged to clients with opaque cursors; a client that follows them sees each item
once, and a cursor that was never handed out is refused."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy.passthrough import page_of


def test_following_the_cursors_yields_every_item_once() -> None:
    items = list(range(1234))
    seen: list[int] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = page_of(items, cursor, size=500)
        seen += page
        pages += 1
        if cursor is None:
            break
    assert seen == items and pages == 3


def test_a_short_list_is_one_page_without_a_cursor() -> None:
    assert page_of(["a", "b"], None) == (["a", "b"], None)
    assert page_of([], None) == ([], None)


@pytest.mark.parametrize("cursor", ["abc", "-1", "99"])
def test_a_cursor_never_handed_out_is_refused(cursor: str) -> None:
    with pytest.raises(MCPError, match="Invalid cursor"):
        page_of(list(range(10)), cursor, size=5)
