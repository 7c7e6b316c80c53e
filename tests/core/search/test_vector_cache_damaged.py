"""A search vector cache that was cut short or garbled (a crash while it was written: it is written
without waiting for the disk) costs only its vectors: they are computed again, never an exception
that takes semantic search, or `mcpmanager search`, down with it on every start."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from mcpmanager.core.search.vector_cache import VectorCache, digest


def written(path: Path) -> bytes:
    cache = VectorCache(path, "m")
    cache.put(digest("a tool"), np.ones(4, dtype=np.float32))
    cache.put(digest("another"), np.zeros(4, dtype=np.float32))
    cache.save()
    return path.read_bytes()


def mismatched() -> bytes:
    buffer = io.BytesIO()
    keys = np.array([digest("a"), digest("b")], dtype="S16")
    np.savez(buffer, model=np.array("m"), keys=keys, vectors=np.zeros((1, 4), dtype=np.float16))
    return buffer.getvalue()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "mismatched"])
def test_a_damaged_vector_cache_is_ignored_and_written_anew(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "vectors.npz"
    whole = written(path)
    blob = {"truncated": whole[: len(whole) // 2], "garbage": b"PK\x03\x04garbage", "empty": b""}.get(damage)
    path.write_bytes(blob if blob is not None else mismatched())
    cache = VectorCache(path, "m")
    cache.load()
    assert len(cache) == 0
    cache.put(digest("a tool"), np.ones(4, dtype=np.float32))
    cache.save()
    again = VectorCache(path, "m")
    again.load()
    assert len(again) == 1
