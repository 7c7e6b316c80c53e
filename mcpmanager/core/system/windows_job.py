"""Windows: one job object per engine, so that the kernel ends its servers when the engine ends.

Windows has no process groups, and no watchdog here (`watchdog`). Instead the engine creates, with
its first stdio server, a job object limited with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, and puts
each server in it as it is spawned (`ProcessGroups.add`). A process started by a member joins the
job too (breakaway is not allowed), so `npx` and `uvx` grandchildren are in it. The engine holds the
only handle to the job: it is created without a security descriptor, so it is not inheritable and
no server holds a copy. When that handle closes, the kernel terminates every process in the job;
it closes when the engine's process ends, however it ends (`kill`, a crash, the window killed), and
at a clean stop the engine closes it itself, after the stop ladder (`close`), so that grandchildren
which outlived their server go then too.

The race: a server is put in the job only after it has started (asyncio's subprocess cannot create
a process suspended, `CREATE_SUSPENDED`, to assign it before it runs). A child the server starts in
the moment between its spawn and its assignment is not in the job, and outlives a killed engine.
The pid names our child while we assign it: asyncio's `Popen` holds the process's handle, and
Windows does not reuse the number of a process that has an open handle.

Nested jobs (a server in the job of the terminal or client that started the engine) need Windows 8
or later. What cannot be done is logged, never raised into the spawn path: the server then runs as
it would without the job. The kernel is a parameter (`kernel32`), so the calls are checked off
Windows against a stand-in (tests/core/system/test_windows_job.py).
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable
from typing import Any, Protocol, cast

logger = logging.getLogger(__name__)

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9  # JobObjectExtendedLimitInformation (JOBOBJECTINFOCLASS)
PROCESS_TERMINATE = 0x0001
PROCESS_SET_QUOTA = 0x0100
ACCESS = PROCESS_SET_QUOTA | PROCESS_TERMINATE  # what AssignProcessToJobObject needs of a process
ERROR_INVALID_PARAMETER = 87  # OpenProcess of a pid that names no process (it exited and was reaped)

# Windows types by their width (ctypes.wintypes does not import everywhere, and adds nothing here).
DWORD = ctypes.c_uint32
BOOL = ctypes.c_int
HANDLE = ctypes.c_void_p
LPVOID = ctypes.c_void_p
LPCWSTR = ctypes.c_wchar_p
LARGE_INTEGER = ctypes.c_int64
ULONGLONG = ctypes.c_uint64

Layouts = tuple[type[ctypes.Structure], type[ctypes.Structure], type[ctypes.Structure]]


def declare_structures(size_t: type[ctypes.c_uint32] | type[ctypes.c_uint64] | type[ctypes.c_size_t]) -> Layouts:
    """JOBOBJECT_BASIC_LIMIT_INFORMATION, IO_COUNTERS and JOBOBJECT_EXTENDED_LIMIT_INFORMATION as
    winnt.h declares them, with SIZE_T and ULONG_PTR of the width `size_t` (the process's own:
    `ctypes.c_size_t`; a fixed width lets the other layout be checked). ctypes pads as MSVC does."""

    class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
        _fields_ = (
            ("PerProcessUserTimeLimit", LARGE_INTEGER),
            ("PerJobUserTimeLimit", LARGE_INTEGER),
            ("LimitFlags", DWORD),
            ("MinimumWorkingSetSize", size_t),
            ("MaximumWorkingSetSize", size_t),
            ("ActiveProcessLimit", DWORD),
            ("Affinity", size_t),  # ULONG_PTR
            ("PriorityClass", DWORD),
            ("SchedulingClass", DWORD),
        )

    class IO_COUNTERS(ctypes.Structure):
        _fields_ = (
            ("ReadOperationCount", ULONGLONG),
            ("WriteOperationCount", ULONGLONG),
            ("OtherOperationCount", ULONGLONG),
            ("ReadTransferCount", ULONGLONG),
            ("WriteTransferCount", ULONGLONG),
            ("OtherTransferCount", ULONGLONG),
        )

    class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
        _fields_ = (
            ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
            ("IoInfo", IO_COUNTERS),
            ("ProcessMemoryLimit", size_t),
            ("JobMemoryLimit", size_t),
            ("PeakProcessMemoryUsed", size_t),
            ("PeakJobMemoryUsed", size_t),
        )

    return JOBOBJECT_BASIC_LIMIT_INFORMATION, IO_COUNTERS, JOBOBJECT_EXTENDED_LIMIT_INFORMATION


JOBOBJECT_BASIC_LIMIT_INFORMATION, IO_COUNTERS, JOBOBJECT_EXTENDED_LIMIT_INFORMATION = declare_structures(
    ctypes.c_size_t
)

# Each function's result and arguments (restype, argtypes); a HANDLE result of NULL reads as None.
SIGNATURES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "CreateJobObjectW": (HANDLE, (LPVOID, LPCWSTR)),  # security attributes, name
    "SetInformationJobObject": (BOOL, (HANDLE, ctypes.c_int, LPVOID, DWORD)),  # job, class, info, length
    "OpenProcess": (HANDLE, (DWORD, BOOL, DWORD)),  # access, inherit handle, pid
    "AssignProcessToJobObject": (BOOL, (HANDLE, HANDLE)),
    "CloseHandle": (BOOL, (HANDLE,)),
}


class Kernel32(Protocol):
    """The kernel32 functions the job uses, declared by `SIGNATURES`."""

    def CreateJobObjectW(self, attributes: Any, name: str | None, /) -> int | None: ...
    def SetInformationJobObject(self, job: int, info_class: int, info: Any, length: int, /) -> int: ...
    def OpenProcess(self, access: int, inherit: bool, pid: int, /) -> int | None: ...
    def AssignProcessToJobObject(self, job: int, process: int, /) -> int: ...
    def CloseHandle(self, handle: int, /) -> int: ...


def declare(dll: Any) -> Kernel32:
    """Give each function of `dll` its result and argument types."""
    for name, (restype, argtypes) in SIGNATURES.items():
        function = getattr(dll, name)
        function.restype = restype
        function.argtypes = argtypes
    return cast(Kernel32, dll)


def load_kernel32() -> Kernel32:
    """kernel32, with the error of each call kept for `last_error` (OSError off Windows)."""
    if sys.platform != "win32":
        raise OSError("job objects exist only on Windows")
    return declare(ctypes.WinDLL("kernel32", use_last_error=True))


def last_error() -> int:
    """The Windows error code of the last kernel32 call made through ctypes on this thread."""
    if sys.platform == "win32":
        return ctypes.get_last_error()
    return 0


def win_error(code: int) -> OSError:
    """The OSError for a Windows error code, with its message where Windows can give one."""
    if sys.platform == "win32":
        return ctypes.WinError(code)
    return OSError(f"[WinError {code}]")


class WindowsJob:
    """The engine's job object, created with the first process put in it; `close` ends what is left.

    `kernel32` and `error` stand for the kernel and its last error (loaded on first use: Windows)."""

    def __init__(self, kernel32: Kernel32 | None = None, error: Callable[[], int] = last_error) -> None:
        self._kernel32 = kernel32
        self._error = error
        self._handle: int | None = None
        self._failed = False  # the job could not be made: said once, not retried for every server

    def assign(self, pid: int) -> bool:
        """Put the process `pid`, and what it starts from now on, in the job; False (logged) when it
        cannot be: the process then outlives a killed engine."""
        try:
            kernel32, job = self._job()
        except OSError as exc:
            if not self._failed:
                logger.warning("cannot make a job object; servers will outlive a killed engine: %s", exc)
            self._failed = True
            return False
        process = kernel32.OpenProcess(ACCESS, False, pid)
        if not process:
            code = self._error()
            if code == ERROR_INVALID_PARAMETER:  # (gone already: nothing of it to end)
                logger.info("server process %d exited before it could be put in the engine's job", pid)
            else:
                logger.warning("cannot open server process %d to put it in the engine's job: %s", pid, win_error(code))
            return False
        try:
            if not kernel32.AssignProcessToJobObject(job, process):
                code = self._error()  # (read before CloseHandle sets it again)
                logger.warning(
                    "cannot put server process %d in the engine's job; it will outlive a killed engine: %s",
                    pid,
                    win_error(code),
                )
                return False
        finally:
            kernel32.CloseHandle(process)
        return True

    def close(self) -> None:
        """Close the engine's handle to the job: the kernel terminates every process still in it."""
        if self._handle is not None and self._kernel32 is not None:
            handle, self._handle = self._handle, None
            if not self._kernel32.CloseHandle(handle):
                logger.warning("cannot close the engine's job object: %s", win_error(self._error()))

    def _job(self) -> tuple[Kernel32, int]:
        """kernel32 and the job's handle, made on first use; OSError when it cannot be made."""
        if self._failed:
            raise OSError("the job object could not be made")
        if self._kernel32 is None:
            self._kernel32 = load_kernel32()
        kernel32 = self._kernel32
        if self._handle is not None:
            return kernel32, self._handle
        job = kernel32.CreateJobObjectW(None, None)  # (no security attributes: the handle is not inherited)
        if not job:
            raise win_error(self._error())
        info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        set_ok = kernel32.SetInformationJobObject(
            job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(info), ctypes.sizeof(info)
        )
        if not set_ok:
            error = win_error(self._error())
            kernel32.CloseHandle(job)  # (a job that would not end its processes is of no use)
            raise error
        self._handle = job
        return kernel32, job
