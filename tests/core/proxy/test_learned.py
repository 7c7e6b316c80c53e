"""The store of what was learned from use: bounded, written atomically, read back after a restart,
forgotten on request; and the suggestions it gives for always-on tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.settings import ToolSettings
from mcpmanager.core.proxy import learned
from mcpmanager.core.proxy.learned import LearnedStore
from mcpmanager.core.proxy.suggestions import always_on_suggestions
from mcpmanager.core.proxy.token_count import tool_tokens
from mcpmanager.core.system import atomic_write


def test_a_pair_is_counted_and_kept_with_only_the_query_and_the_tool(tmp_path: Path) -> None:
    store = LearnedStore(tmp_path / "learned.json")
    store.record("  refund   a buyer ", "shop:refund_payment", now=10.0, place=3)
    store.record("Refund a buyer", "shop:refund_payment", now=20.0)  # the same query, spelt otherwise

    (entry,) = store.entries()
    assert (entry.query, entry.tool, entry.count, entry.last, entry.place) == (
        "Refund a buyer",
        "shop:refund_payment",
        2,
        20.0,
        1,
    )
    on_disk = json.loads((tmp_path / "learned.json").read_text(encoding="utf-8"))
    assert set(on_disk["learned"][0]) == {"query", "tool", "count", "last", "place"}  # nothing else
    assert (tmp_path / "learned.json").stat().st_mode & 0o777 == 0o600


def test_what_was_learned_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "learned.json"
    first = LearnedStore(path)
    first.record("scale the web service", "cloud:scale_service", now=1.0)
    first.record("scale the web service", "cloud:scale_service", now=2.0)
    first.record("who follows this ticket", "desk:list_watchers", now=3.0)

    again = LearnedStore(path)
    again.load()

    assert [(e.query, e.tool, e.count) for e in again.entries()] == [
        ("who follows this ticket", "desk:list_watchers", 1),
        ("scale the web service", "cloud:scale_service", 2),
    ]


def test_the_store_is_bounded_and_drops_the_least_recently_used(tmp_path: Path) -> None:
    store = LearnedStore(tmp_path / "learned.json", limit=3)
    for number in range(5):
        store.record(f"query {number}", "s:t", now=float(number))
    store.record("query 2", "s:t", now=9.0)  # used again: it stays

    assert sorted(e.query for e in store.entries()) == ["query 2", "query 3", "query 4"]
    reloaded = LearnedStore(tmp_path / "learned.json", limit=3)
    reloaded.load()
    assert len(reloaded) == 3


def test_a_long_query_is_kept_shortened(tmp_path: Path) -> None:
    store = LearnedStore()
    store.record("word " * 400, "s:t")
    assert len(store.entries()[0].query) <= learned.MAX_QUERY_CHARS


def test_forget_one_a_tool_or_all_and_the_file_follows(tmp_path: Path) -> None:
    path = tmp_path / "learned.json"
    store = LearnedStore(path)
    store.record("a", "s:one")
    store.record("b", "s:one")
    store.record("c", "s:two")
    changes: list[None] = []
    store.changed.connect(changes.append)

    assert store.forget("A", "s:one")  # the query as shown, whatever its case
    assert not store.forget("a", "s:one")
    assert [e.query for e in _reloaded(path).entries()] == ["c", "b"]
    assert store.forget_tool("s:one") == 1
    store.forget_all()

    assert len(store) == 0 and len(_reloaded(path)) == 0
    assert len(changes) == 3


def test_a_broken_file_costs_only_what_was_learned(tmp_path: Path) -> None:
    path = tmp_path / "learned.json"
    path.write_text("{not json", encoding="utf-8")
    store = LearnedStore(path)
    store.load()
    assert len(store) == 0
    store.record("q", "s:t")
    assert len(_reloaded(path)) == 1


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "learned.json"
    store = LearnedStore(path)
    store.record("first", "s:t")
    before = path.read_bytes()

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(learned, "write_atomic", full_disk)
    store.record("second", "s:t")  # logged, kept in memory

    assert path.read_bytes() == before
    assert len(store) == 2
    assert not [p for p in tmp_path.iterdir() if p.name != "learned.json"]  # no temporary file left


async def test_on_the_event_loop_a_burst_of_uses_is_written_once_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(learned, "SAVE_DELAY", 0.05)
    writes: list[int] = []
    real = atomic_write.write_atomic

    def counting(path: Path, data: bytes, mode: int, durable: bool = True) -> None:
        writes.append(len(data))
        real(path, data, mode, durable)

    monkeypatch.setattr(learned, "write_atomic", counting)
    path = tmp_path / "learned.json"
    store = LearnedStore(path)
    for number in range(10):
        store.record(f"query {number}", "s:t")
    assert writes == [] and not path.exists()  # the call did not wait for the disk
    for _ in range(100):
        if path.exists():
            break
        await asyncio.sleep(0.01)
    assert len(writes) == 1 and len(_reloaded(path)) == 10


def _reloaded(path: Path) -> LearnedStore:
    store = LearnedStore(path)
    store.load()
    return store


def _catalogue(always_on: set[str] = frozenset()) -> Catalogue:  # type: ignore[assignment]
    catalogue = Catalogue()
    settings = {f"shop:{name}": ToolSettings(always_on=True) for name in always_on}
    catalogue.configure(["shop"], settings)
    catalogue.set_tools(
        "shop",
        [
            {"name": "refund_payment", "description": "Refund a payment.", "inputSchema": {"type": "object"}},
            {"name": "list_orders", "description": "List orders. " * 20, "inputSchema": {"type": "object"}},
            {"name": "ship_order", "description": "Ship an order.", "inputSchema": {"type": "object"}},
        ],
    )
    return catalogue


def test_tools_called_often_through_discovery_are_suggested_with_their_price() -> None:
    store = LearnedStore()
    for query in ("refund the buyer", "give the money back", "refund order 7"):
        store.record(query, "shop:refund_payment")
    for _ in range(4):
        store.record("all my orders", "shop:list_orders")
    store.record("ship it", "shop:ship_order")  # once: not worth its context
    store.record("x", "gone:tool")  # a tool no longer in the catalogue
    store.record("x2", "gone:tool")
    store.record("x3", "gone:tool")
    catalogue = _catalogue()

    suggested = always_on_suggestions(catalogue, store)

    assert [(s.tool.name, s.calls) for s in suggested] == [("list_orders", 4), ("refund_payment", 3)]
    refund = catalogue.find("shop", "refund_payment")
    assert refund is not None and suggested[1].tokens == tool_tokens(refund.exposed_spec())
    assert suggested[0].describe()["tokens"] > suggested[1].tokens  # its long description costs more


def test_a_tool_already_always_on_is_not_suggested() -> None:
    store = LearnedStore()
    for query in ("a", "b", "c"):
        store.record(query, "shop:refund_payment")
    assert always_on_suggestions(_catalogue({"refund_payment"}), store) == []
