"""The engine's Windows job object, checked off Windows: the structures against winnt.h's layouts,
and the calls against a stand-in kernel32 reached through ctypes with the documented prototypes
(so arguments are marshalled as they would be: a struct by pointer, a NULL handle read as None)."""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcpmanager.core.system.process_groups import ProcessGroups
from mcpmanager.core.system.windows_job import (
    IO_COUNTERS,
    JOBOBJECT_BASIC_LIMIT_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    SIGNATURES,
    Kernel32,
    WindowsJob,
    declare,
    declare_structures,
)

LOGGER = "mcpmanager.core.system.windows_job"

# winnt.h, as Microsoft documents each structure: field → offset, then the size; x64, then x86.
BASIC_64 = {
    "PerProcessUserTimeLimit": 0,
    "PerJobUserTimeLimit": 8,
    "LimitFlags": 16,
    "MinimumWorkingSetSize": 24,
    "MaximumWorkingSetSize": 32,
    "ActiveProcessLimit": 40,
    "Affinity": 48,
    "PriorityClass": 56,
    "SchedulingClass": 60,
}
BASIC_32 = {
    "PerProcessUserTimeLimit": 0,
    "PerJobUserTimeLimit": 8,
    "LimitFlags": 16,
    "MinimumWorkingSetSize": 20,
    "MaximumWorkingSetSize": 24,
    "ActiveProcessLimit": 28,
    "Affinity": 32,
    "PriorityClass": 36,
    "SchedulingClass": 40,
}
IO_NAMES = [f"{kind}{count}" for count in ("OperationCount", "TransferCount") for kind in ("Read", "Write", "Other")]
IO = {name: 8 * i for i, name in enumerate(IO_NAMES)}  # six ULONGLONGs, on both
EXTENDED_64 = {
    "BasicLimitInformation": 0,
    "IoInfo": 64,
    "ProcessMemoryLimit": 112,
    "JobMemoryLimit": 120,
    "PeakProcessMemoryUsed": 128,
    "PeakJobMemoryUsed": 136,
}
EXTENDED_32 = {
    "BasicLimitInformation": 0,
    "IoInfo": 48,
    "ProcessMemoryLimit": 96,
    "JobMemoryLimit": 100,
    "PeakProcessMemoryUsed": 104,
    "PeakJobMemoryUsed": 108,
}

# The documented prototypes (restype, argtypes), by width: the stand-in is called through these.
HANDLE, BOOL, DWORD = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32
PROTOTYPES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "CreateJobObjectW": (HANDLE, (ctypes.c_void_p, ctypes.c_wchar_p)),
    "SetInformationJobObject": (BOOL, (HANDLE, ctypes.c_int, ctypes.c_void_p, DWORD)),
    "OpenProcess": (HANDLE, (DWORD, BOOL, DWORD)),
    "AssignProcessToJobObject": (BOOL, (HANDLE, HANDLE)),
    "CloseHandle": (BOOL, (HANDLE,)),
}
LIMIT_FLAGS_OFFSET = 16  # of the extended structure too: it opens with the basic one
EXTENDED_SIZE = 144 if ctypes.sizeof(ctypes.c_void_p) == 8 else 112


def offsets(structure: type[ctypes.Structure]) -> dict[str, int]:
    return {name: getattr(structure, name).offset for name, *_ in structure._fields_}


def test_the_structures_have_the_x64_layout() -> None:
    assert ctypes.sizeof(ctypes.c_void_p) == 8  # (this machine's Python: the layout checked natively)
    assert offsets(JOBOBJECT_BASIC_LIMIT_INFORMATION) == BASIC_64
    assert ctypes.sizeof(JOBOBJECT_BASIC_LIMIT_INFORMATION) == 64
    assert offsets(IO_COUNTERS) == IO
    assert ctypes.sizeof(IO_COUNTERS) == 48
    assert offsets(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == EXTENDED_64
    assert ctypes.sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == 144


def test_the_structures_have_the_x86_layout_with_a_32_bit_size_t() -> None:
    # MSVC aligns a 64-bit integer to 8 on x86 too; so does this host, so the padding is modelled.
    assert ctypes.alignment(ctypes.c_int64) == 8
    basic, io, extended = declare_structures(ctypes.c_uint32)
    assert offsets(basic) == BASIC_32
    assert ctypes.sizeof(basic) == 48
    assert offsets(io) == IO
    assert ctypes.sizeof(io) == 48
    assert offsets(extended) == EXTENDED_32
    assert ctypes.sizeof(extended) == 112


def test_the_functions_are_declared_with_the_documented_prototypes() -> None:
    assert SIGNATURES == PROTOTYPES
    stand_in = SimpleNamespace(**{name: SimpleNamespace() for name in PROTOTYPES})
    declare(stand_in)
    for name, (restype, argtypes) in PROTOTYPES.items():
        function = getattr(stand_in, name)
        assert (function.restype, function.argtypes) == (restype, argtypes)


class FakeKernel32:
    """kernel32 as far as the job uses it: handles, a last error, and what each call was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.error = 0
        self._numbers = itertools.count(0x100, 4)
        self.open: set[int] = set()  # handles not closed yet
        self.closed: list[int] = []
        self.fail: dict[str, int] = {}  # function → the error code it fails with
        self.exited: set[int] = set()  # pids that name no process any more
        self.processes: dict[int, int] = {}  # process handle → its pid
        self.members: dict[int, list[int]] = {}  # job handle → the pids assigned to it
        self.limits: dict[int, int] = {}  # job handle → the LimitFlags it was given

    def _handle(self) -> int:
        handle = next(self._numbers)
        self.open.add(handle)
        return handle

    def _failed(self, name: str) -> bool:
        if name in self.fail:
            self.error = self.fail[name]
            return True
        return False

    def CreateJobObjectW(self, attributes: int | None, name: str | None) -> int | None:
        self.calls.append(("CreateJobObjectW", attributes, name))
        if self._failed("CreateJobObjectW"):
            return None
        job = self._handle()
        self.members[job] = []
        return job

    def SetInformationJobObject(self, job: int, info_class: int, info: int, length: int) -> int:
        # Read from the address as the kernel would, at winnt.h's offset (not through the module's class).
        flags = ctypes.c_uint32.from_address(info + LIMIT_FLAGS_OFFSET).value
        rest = bytes(ctypes.string_at(info, length))
        self.calls.append(("SetInformationJobObject", job, info_class, flags, length, rest))
        if self._failed("SetInformationJobObject"):
            return 0
        self.limits[job] = flags
        return 1

    def OpenProcess(self, access: int, inherit: int, pid: int) -> int | None:
        self.calls.append(("OpenProcess", access, inherit, pid))
        if pid in self.exited:
            self.error = 87  # ERROR_INVALID_PARAMETER
            return None
        if self._failed("OpenProcess"):
            return None
        process = self._handle()
        self.processes[process] = pid
        return process

    def AssignProcessToJobObject(self, job: int, process: int) -> int:
        self.calls.append(("AssignProcessToJobObject", job, process))
        if self._failed("AssignProcessToJobObject") or job not in self.open or process not in self.open:
            return 0
        self.members[job].append(self.processes[process])
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.calls.append(("CloseHandle", handle))
        self.error = 0 if handle in self.open else 6  # (every call sets the last error: it must be read first)
        if handle not in self.open:
            return 0
        self.open.discard(handle)
        self.closed.append(handle)
        return 1

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [call for call in self.calls if call[0] == name]


def through_ctypes(fake: FakeKernel32) -> Kernel32:
    """The stand-in as C functions of the documented prototypes, declared by the module."""
    functions = SimpleNamespace()
    keep = []  # (a callback must live as long as its function pointer)
    for name, (restype, argtypes) in PROTOTYPES.items():
        function = ctypes.CFUNCTYPE(restype, *argtypes)(getattr(fake, name))
        keep.append(function)
        setattr(functions, name, function)
    functions.keep = keep
    return declare(functions)


@pytest.fixture
def fake() -> FakeKernel32:
    return FakeKernel32()


@pytest.fixture
def job(fake: FakeKernel32) -> WindowsJob:
    return WindowsJob(through_ctypes(fake), error=lambda: fake.error)


def test_the_job_is_made_once_to_kill_on_close_and_each_server_is_put_in_it(
    fake: FakeKernel32, job: WindowsJob
) -> None:
    assert fake.calls == []  # (made with the first server, not before)
    assert job.assign(101) and job.assign(102)

    assert fake.named("CreateJobObjectW") == [("CreateJobObjectW", None, None)]  # not inheritable, unnamed
    (handle,) = fake.members
    ((_, on, info_class, flags, length, rest),) = fake.named("SetInformationJobObject")
    assert (on, info_class, flags, length) == (handle, 9, 0x2000, EXTENDED_SIZE)
    assert rest.count(0) == length - 1  # the one flag, and no other limit (0x2000 is one byte: 0x20)
    assert [call[1:] for call in fake.named("OpenProcess")] == [(0x101, 0, 101), (0x101, 0, 102)]
    assert fake.members == {handle: [101, 102]}
    # Each process handle closed once it is in the job; the job's own stays open, the engine's.
    assert [call[1] for call in fake.named("CloseHandle")] == list(fake.processes)
    assert fake.open == {handle}

    job.close()
    assert fake.open == set()
    assert fake.closed[-1] == handle
    job.close()  # (a second close has nothing to close)
    assert len(fake.named("CloseHandle")) == 3


def test_a_server_gone_before_it_is_opened_is_noted_and_the_next_is_put_in_the_job(
    fake: FakeKernel32, job: WindowsJob, caplog: pytest.LogCaptureFixture
) -> None:
    fake.exited.add(101)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert job.assign(101) is False
        assert job.assign(102) is True
    assert fake.named("AssignProcessToJobObject") == [("AssignProcessToJobObject", *fake.members, *fake.processes)]
    assert list(fake.members.values()) == [[102]]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "server process 101 exited before it could be put in the engine's job")
    ]


def test_a_server_that_cannot_be_opened_is_a_warning_with_the_error(
    fake: FakeKernel32, job: WindowsJob, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail["OpenProcess"] = 5  # ERROR_ACCESS_DENIED
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert job.assign(101) is False
    assert fake.named("AssignProcessToJobObject") == []
    ((level, message),) = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert level == "WARNING"
    assert message.startswith("cannot open server process 101 to put it in the engine's job: [WinError 5]")


def test_a_failed_assignment_is_logged_with_its_own_error_and_its_handle_closed(
    fake: FakeKernel32, job: WindowsJob, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail["AssignProcessToJobObject"] = 5
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert job.assign(101) is False
    (process,) = fake.processes
    assert process in fake.closed and process not in fake.open
    ((level, message),) = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert level == "WARNING"
    # The assignment's error, not what CloseHandle set after it.
    assert message == (
        "cannot put server process 101 in the engine's job; it will outlive a killed engine: [WinError 5]"
    )


def test_a_job_that_cannot_be_made_is_said_once_and_not_retried(
    fake: FakeKernel32, job: WindowsJob, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail["CreateJobObjectW"] = 1455  # ERROR_COMMITMENT_LIMIT
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert job.assign(101) is False
        assert job.assign(102) is False
    assert len(fake.named("CreateJobObjectW")) == 1
    assert fake.named("OpenProcess") == []
    ((level, message),) = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert (level, message) == (
        "WARNING",
        "cannot make a job object; servers will outlive a killed engine: [WinError 1455]",
    )


def test_a_job_whose_limit_cannot_be_set_is_closed_and_not_used(
    fake: FakeKernel32, job: WindowsJob, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail["SetInformationJobObject"] = 87
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert job.assign(101) is False
    (handle,) = fake.members
    assert fake.closed == [handle] and fake.open == set()
    assert fake.named("OpenProcess") == []
    assert [r.getMessage() for r in caplog.records] == [
        "cannot make a job object; servers will outlive a killed engine: [WinError 87]"
    ]
    job.close()  # (nothing to close: the job was never the engine's)
    assert fake.closed == [handle]


def test_off_windows_the_kernel_cannot_be_loaded_and_nothing_is_raised(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert WindowsJob().assign(os.getpid()) is False
    assert [r.getMessage() for r in caplog.records] == [
        "cannot make a job object; servers will outlive a killed engine: job objects exist only on Windows"
    ]


def test_the_record_puts_each_server_in_the_job_instead_of_starting_a_watchdog(
    tmp_path: Path, fake: FakeKernel32, job: WindowsJob
) -> None:
    started: list[Path] = []
    groups = ProcessGroups(tmp_path, lambda runtime: started.append(runtime), job=job)
    pid = os.getpid()  # (any number: only its record is written, and the stand-in opens it)
    groups.add(pid)
    assert started == []
    assert list(fake.members.values()) == [[pid]]
    assert groups.path is not None and groups.path.exists()  # (the record is kept as elsewhere)
    groups.remove(pid)
    groups.close()  # the engine's stop: the job's handle closed, ending what is left in it
    assert fake.open == set()


def test_elsewhere_the_record_starts_the_watchdog_and_makes_no_job(
    tmp_path: Path,
) -> None:
    started: list[Path] = []
    groups = ProcessGroups(tmp_path, lambda runtime: started.append(runtime))
    groups.add(os.getpid())
    assert started == [tmp_path]
    groups.remove(os.getpid())
