"""`collector_paused`: no collection while a process's big imports run, the collector as it was
after, and what they left frozen (so no later collection scans it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from mcpmanager.core.system.collector import collector_paused


@pytest.fixture(autouse=True)
def collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # (this process's objects go back to being collected)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_paused_inside_and_what_was_loaded_is_frozen_after() -> None:
    gc.enable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
        loaded = [object() for _ in range(10)]
    assert gc.isenabled()
    assert gc.get_freeze_count() > len(loaded)


def test_a_collector_that_was_off_stays_off_and_a_failed_import_still_ends_the_pause() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(ImportError), collector_paused():
        import mcpmanager.no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert gc.isenabled()
