"""The child process of a stdio server, owned by us: pid, exit code, live stderr, stop ladder.

The SDK's `stdio_client` hides the pid and the exit code and wants stderr as a file. We spawn the
child ourselves in a new session (its own process group, so grandchildren from `npx`/`uvx` are
reachable), pump stdin/stdout as MCP messages and stderr into a `StderrLog`, and stop the whole group
with the ladder: close stdin → wait → SIGTERM the group → wait → SIGKILL the group.

`ChildProcess.transport()` is an SDK `Transport`, so `mcp.Client` drives the session over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.sdk_compat import TransportStreams
from mcpmanager.core.supervisor.output import Output, feed_from
from mcpmanager.core.supervisor.raw_calls import RawCalls
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.system.command_path import prepare_spawn
from mcpmanager.core.system.line_framer import Overlong, blank
from mcpmanager.core.system.lines import json_line, parse_line, to_message
from mcpmanager.core.system.process_groups import ProcessGroups

_CHUNK = 65536
_POLL = 0.05
# The environment a child inherits from us, beyond what its config sets: enough for a shell-like
# start (PATH for npx/uvx, HOME for caches, locale for decoding) without leaking everything.
_INHERITED = (
    "HOME", "LOGNAME", "USER", "PATH", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "NODE_PATH",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "PATHEXT", "TEMP", "TMP",
)  # fmt: skip


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _INHERITED and not v.startswith("()")}
    env.update(extra)
    return env


@dataclass(frozen=True)
class Exit:
    """How a child ended, as text a person can act on (qutebrowser's ProcessOutcome, in spirit)."""

    code: int | None

    def describe(self) -> str:
        if self.code is None:
            return "closed its output (still running)"
        if self.code < 0:
            try:
                name = signal.Signals(-self.code).name
            except ValueError:
                name = f"signal {-self.code}"
            return f"killed by {name}"
        return f"exited {self.code}"


class SpawnError(Exception):
    """The command could not be started at all; `permanent` when retrying cannot help."""

    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


def _not_found(command: str, cwd: str | None) -> str:
    if cwd and not os.path.isdir(cwd):
        return f"working directory not found: {cwd}"
    return f"command not found: {command}"


class ChildProcess:
    def __init__(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None,
        log: StderrLog,
        grace: float = 2.0,
        groups: ProcessGroups | None = None,
    ) -> None:
        """`groups`: the engine's record of live process groups (see `process_groups`)."""
        self.groups = groups
        self.command = command
        self.args = list(args)
        self.env = dict(env)
        self.cwd = cwd
        self.log = log
        self.grace = grace
        self._process: anyio.abc.Process | None = None
        self.exited = anyio.Event()
        self.exited_on_its_own = False  # it ended before we began stopping it: a crash, not our stop
        self.stdout_noise = 0  # non-protocol lines a server printed on stdout
        # Its stdout (our session) ended: a crash is known from here, before the exit is reaped.
        self.closed = anyio.Event()
        self.stderr_closed = anyio.Event()
        # Tool calls sent as bytes beside the session (`raw_calls`); one lock keeps messages whole.
        self._stdin: anyio.abc.ByteSendStream | None = None
        self._stdin_writer: asyncio.StreamWriter | None = None  # asyncio's writer under it, found once
        # Its stdout, parsed as it is read (`output`); the loop's reading of it, where it reads it.
        self._output = Output(self._parse)
        self._reading: asyncio.ReadTransport | None = None
        self._writing = asyncio.Lock()  # asyncio's: taking a free one does not yield to the loop
        self.raw = RawCalls(self._write_raw)
        self._fed_session = False  # a message went to the session since the last raw answer

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def exit(self) -> Exit:
        return Exit(self._process.returncode if self._process else None)

    async def start(self) -> None:
        try:
            # Resolve like the user's shell (a GUI lacks its PATH; Windows needs PATHEXT and cmd.exe)
            # and give the child that PATH too, so `npx` finds `node`.
            target, env = prepare_spawn(self.command, self.args, child_environment(self.env), self.cwd)
            await anyio.lowlevel.checkpoint_if_cancelled()  # stopped already: spawn nothing
            # Its stdout: a pipe of our own where the loop can read one (`output`), else asyncio's.
            ours, stdout = os.pipe() if os.name == "posix" else (None, subprocess.PIPE)
            # Shielded: a stop arriving mid-spawn would cancel asyncio's own clean-up of the half-made
            # transport (anyio delivers the cancel again into its wait for the killed child), and the
            # child would never be reaped: "subprocess N is still running" long after, in whatever
            # test or loop came next. Spawning takes milliseconds; the stop then lands in
            # `transport()`, whose clean-up runs the stop ladder on the process.
            with anyio.CancelScope(shield=True):
                try:
                    process = await anyio.open_process(
                        target,
                        stdin=subprocess.PIPE,
                        stdout=stdout,
                        stderr=subprocess.PIPE,
                        env=env,
                        cwd=self.cwd,
                        start_new_session=True,
                    )
                except BaseException:
                    if ours is not None:
                        os.close(ours)
                    raise
                finally:
                    if ours is not None:
                        os.close(stdout)  # (the child's end: ours reads EOF once the child's copy closes)
                self._process = process
                if ours is not None:
                    try:
                        self._reading = await self._read_output(ours)
                    except BaseException:
                        await self.stop()  # (the child runs: it must not be left behind)
                        raise
        except FileNotFoundError as exc:
            raise SpawnError(_not_found(self.command, self.cwd), permanent=True) from exc
        except PermissionError as exc:
            raise SpawnError(f"permission denied: {self.command}", permanent=True) from exc
        except OSError as exc:
            raise SpawnError(f"cannot start {self.command}: {exc.strerror or exc}", permanent=False) from exc
        except ValueError as exc:  # an argument no command line can carry (NUL, a line break for cmd.exe)
            raise SpawnError(f"cannot start {self.command}: {exc}", permanent=True) from exc
        if self.groups is not None:
            self.groups.add(process.pid)
        self.log.note(f"started pid {process.pid}: {self.command} {' '.join(self.args)}".rstrip())

    @contextlib.asynccontextmanager
    async def transport(self) -> AsyncIterator[TransportStreams]:
        """Pump the running child's pipes as MCP messages for as long as the context is open."""
        process = self._process
        assert process is not None and process.stdin and process.stderr
        to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        self._stdin = process.stdin
        self._stdin_writer = _asyncio_writer(process.stdin)
        async with anyio.create_task_group() as tg:
            if self._reading is None:  # (the loop cannot read the pipe itself: asyncio's stream)
                assert process.stdout is not None
                tg.start_soon(feed_from, self._output, process.stdout)
            tg.start_soon(self._pump_stdout, self._output, to_session)
            tg.start_soon(self._pump_stdin, process.stdin, from_session)
            tg.start_soon(self._pump_stderr, process.stderr)
            tg.start_soon(self._watch_exit, process)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await self.stop()
                    for stream in (read_stream, write_stream):
                        await stream.aclose()
                tg.cancel_scope.cancel()

    async def stop(self) -> None:
        """The stop ladder over the whole process group; safe to call twice or after an exit."""
        process = self._process
        if process is None:
            return
        if self.closed.is_set() and process.returncode is None:
            await self._wait(process, 0.5)  # stdout closed: it is exiting; let it be reaped first
        if process.returncode is not None and not self.exited.is_set():
            self.exited_on_its_own = True
        self.exited.set()
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        if not await self._wait(process, self.grace):
            self._signal_group(process.pid, signal.SIGTERM)
            if not await self._wait(process, self.grace):
                self._signal_group(process.pid, signal.SIGKILL)
                await self._wait(process, self.grace)
        # The leader is gone; grandchildren that stayed behind in its group must not be orphaned.
        if self._group_alive(process.pid):
            self._signal_group(process.pid, signal.SIGTERM)
            deadline = anyio.current_time() + self.grace
            while self._group_alive(process.pid) and anyio.current_time() < deadline:
                await anyio.sleep(_POLL)
            self._signal_group(process.pid, signal.SIGKILL)
        if self.groups is not None:
            self.groups.remove(process.pid)
        # Close the asyncio subprocess transport or it warns at GC while a descendant held a pipe.
        with contextlib.suppress(Exception):
            await process.aclose()
        if self._reading is not None:
            self._reading.close()  # (its output ends here, if a descendant still holds the pipe)

    @staticmethod
    async def _wait(process: anyio.abc.Process, timeout: float) -> bool:
        # Poll returncode rather than process.wait(): that also waits for pipe EOF, and a grandchild
        # holding the pipes would make an exited server look hung.
        with anyio.move_on_after(timeout):
            while process.returncode is None:
                await anyio.sleep(_POLL)
        return process.returncode is not None

    @staticmethod
    def _signal_group(pid: int, sig: signal.Signals) -> None:
        if sys.platform == "win32":  # pragma: no cover - no process groups there
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)

    @staticmethod
    def _group_alive(pid: int) -> bool:
        if sys.platform == "win32":  # pragma: no cover
            return False
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def _watch_exit(self, process: anyio.abc.Process) -> None:
        while process.returncode is None:
            await anyio.sleep(_POLL)
        if not self.exited.is_set():
            self.exited_on_its_own = True
            self.exited.set()

    async def _read_output(self, fd: int) -> asyncio.ReadTransport:
        """The loop reading our end of the child's stdout into `_output`."""
        pipe = os.fdopen(fd, "rb", buffering=0)
        try:
            reading, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: self._output, pipe)
        except BaseException:
            pipe.close()
            raise
        return reading

    async def _pump_stdout(self, output: Output, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """Hand the session its messages from the server's output, in order (`output` parses them)."""
        try:
            async with sink:
                with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    while True:
                        await sink.send(await output.next())
        finally:
            self.raw.close()  # no answer comes any more
        self.closed.set()

    def _parse(self, line: bytes | Overlong) -> SessionMessage | None:
        """The session's message on `line`; None for a blank line, noise, or an answer `raw` took."""
        if isinstance(line, Overlong) or blank(line):  # (no cap here: never Overlong)
            return None
        try:  # the bytes as they are: a decoded, stripped copy of a 50 MiB line costs two more
            parsed = parse_line(line)
            if self.raw.claims(parsed, self._fed_session):
                self._fed_session = False
                return None
            message = SessionMessage(to_message(parsed))
            self._fed_session = True
            return message
        except ValueError:
            text = line.decode("utf-8", "replace").strip()
            # Some servers log to stdout. Feeding that to the session would fail it; keeping it in
            # the stderr pane instead tells the user what the server said and keeps the session.
            self.stdout_noise += 1
            self.log.add([f"[stdout, not MCP] {text}"])
            return None

    async def _pump_stdin(
        self, stdin: anyio.abc.ByteSendStream, source: MemoryObjectReceiveStream[SessionMessage]
    ) -> None:
        async with source:
            try:
                async for message in source:
                    async with self._writing:
                        for piece in json_line(message.message):
                            await stdin.send(piece)  # type: ignore[arg-type]  # a memoryview is what it writes
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return

    def raw_lane(self) -> RawCalls | None:
        """`raw`, while the pipes it needs are open (a transport of our own pipes is running)."""
        return self.raw if self._stdin is not None and not self.raw.closed else None

    async def _write_raw(self, line: bytes) -> None:
        stdin = self._stdin
        if stdin is None:
            raise OSError("the server's input is not open")
        async with self._writing:
            writer = self._stdin_writer
            if writer is None:
                await stdin.send(line)
                return
            # asyncio's own writer: anyio's `send` yields to the loop after every write (a checkpoint),
            # one more turn of the loop for every call (docs/benchmarks.md).
            if writer.is_closing():
                raise anyio.BrokenResourceError("the server's input is closed")
            try:
                writer.write(line)
                await writer.drain()  # (returns at once unless the pipe is full)
            except (ConnectionResetError, BrokenPipeError, RuntimeError) as exc:  # (as anyio's `send` maps them)
                raise anyio.BrokenResourceError from exc

    async def _pump_stderr(self, stderr: anyio.abc.ByteReceiveStream) -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                self.log.feed(await stderr.receive(_CHUNK))
        self.log.finish()
        self.stderr_closed.set()


def _asyncio_writer(stdin: anyio.abc.ByteSendStream) -> asyncio.StreamWriter | None:
    """The asyncio writer under anyio's stream wrapper (its `_stream`, named in
    tests/core/supervisor/test_raw_write.py, so that an anyio that moves it fails there), else None."""
    writer = getattr(stdin, "_stream", None)
    return writer if isinstance(writer, asyncio.StreamWriter) else None


Spawner = Callable[[StdioServerConfig, StderrLog, float], ChildProcess]


def spawn_child(
    config: StdioServerConfig, log: StderrLog, grace: float, groups: ProcessGroups | None = None
) -> ChildProcess:
    """The child process of a stdio server (not started yet); `grace` is each step of the stop ladder;
    `groups` records its process group while it lives."""
    return ChildProcess(config.command, config.args, config.env, config.cwd, log, grace=grace, groups=groups)
