"""Tools' vectors on disk, by the hash of the text they were computed from.

A tool's vector depends on its text alone (`vectors`), so a catalogue that comes back after a
restart, or a server that lists the same tools again, costs a hash and a lookup instead of tokenizing
every description again. Unreadable or stale files are ignored: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
import zipfile
from pathlib import Path

import numpy as np

from mcpmanager.core.search.vectors import MODEL, Vector
from mcpmanager.core.system.atomic_write import write_atomic

logger = logging.getLogger(__name__)
_DIGEST = 16


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST).digest()


class VectorCache:
    """In memory always; on disk when given a path (`load` and `save`, both safe off the event loop)."""

    def __init__(self, path: Path | None = None, model: str = MODEL) -> None:
        self.path = path
        self.model = model  # what made the vectors: a cache made by other vectors is not used
        self._vectors: dict[bytes, Vector] = {}
        self._lock = threading.Lock()
        self._dirty = False
        self._loaded = False

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, key: bytes) -> Vector | None:
        return self._vectors.get(key)

    def put(self, key: bytes, vector: Vector) -> None:
        with self._lock:
            self._vectors[key] = vector
            self._dirty = True

    def retain(self, keys: set[bytes]) -> None:
        """Forget the vectors of texts no tool has any more (the file would only grow)."""
        with self._lock:
            gone = self._vectors.keys() - keys
            for key in gone:
                del self._vectors[key]
            self._dirty = self._dirty or bool(gone)

    def load(self) -> None:
        """Read the file once (later calls do nothing); vectors computed meanwhile are kept."""
        if self._loaded:
            return
        self._loaded = True
        if self.path is None or not self.path.exists():
            return
        try:
            # From bytes read whole: np.load leaves its file open when the file ends early (EOFError).
            with np.load(io.BytesIO(self.path.read_bytes()), allow_pickle=False) as data:
                if str(data["model"]) != self.model:
                    return
                keys, vectors = data["keys"], data["vectors"].astype(np.float32)
                if len(keys) != len(vectors):
                    raise ValueError(f"{len(keys)} keys for {len(vectors)} vectors")
        # A file cut short or garbled (it is written without waiting for the disk) is not a zip, or
        # ends early: it costs its vectors, computed again and written anew, nothing more.
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            logger.warning("ignoring the search vector cache %s: %s", self.path, exc)
            self._dirty = True  # written anew, even if nothing new is computed
            return
        with self._lock:
            for key, vector in zip(keys.tolist(), vectors, strict=True):
                self._vectors.setdefault(bytes(key), vector)

    def save(self) -> None:
        if self.path is None or not self._dirty:
            return
        with self._lock:
            keys = np.array(list(self._vectors), dtype=f"S{_DIGEST}")
            vectors = np.stack(list(self._vectors.values())) if self._vectors else np.zeros((0, 0))
            self._dirty = False
        buffer = io.BytesIO()
        np.savez(buffer, model=np.array(self.model), keys=keys, vectors=vectors.astype(np.float16))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, buffer.getvalue(), 0o600, durable=False)
        except OSError as exc:
            logger.warning("cannot write the search vector cache %s: %s", self.path, exc)
