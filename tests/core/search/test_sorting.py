"""The fast stable sort against numpy's own stable argsort."""

from __future__ import annotations

import numpy as np
import pytest

from mcpmanager.core.search.sorting import stable_sort


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("limit", [None, 1000])  # 1000: the composite key would not fit, the fallback
def test_the_same_order_as_a_stable_argsort(dtype: type[np.integer], limit: int | None) -> None:
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 50, 5000).astype(dtype)  # many equal keys: their order is the point
    expected = np.argsort(keys, kind="stable")
    ordered, order = stable_sort(keys, 50) if limit is None else stable_sort(keys, 50, limit=limit)
    assert order.tolist() == expected.tolist()
    assert ordered.tolist() == keys[expected].tolist()
    assert order.dtype == ordered.dtype == np.int64


def test_no_keys() -> None:
    ordered, order = stable_sort(np.zeros(0, dtype=np.int64), 0)
    assert len(ordered) == len(order) == 0
