"""Why a server failed, in one line a person (or a model) can act on: how it exited, the protocol
error, and the last thing it wrote to stderr.

These texts go to clients, `status` and the window: each is masked by the server's log (its stderr
lines are already; an exception's text, such as a URL an HTTP library quotes, is not)."""

from __future__ import annotations

from mcp.shared.exceptions import MCPError

from mcpmanager.core.auth.provider import SignInNeeded
from mcpmanager.core.supervisor.lifecycle import State, Status
from mcpmanager.core.supervisor.process import ChildProcess
from mcpmanager.core.supervisor.stderr_log import StderrLog

_OURS = "[mcpmanager]"


def exit_reason(process: ChildProcess, log: StderrLog, when: str = "") -> str:
    reason = process.exit.describe() + when
    last = log.tail(1, stderr_only=True)
    if last and not last[0].startswith(_OURS):
        reason += f" — {last[0]}"
    return log.mask(reason)


def with_stderr(log: StderrLog, reason: str) -> str:
    last = [line for line in log.tail(5, stderr_only=True) if not line.startswith(_OURS)]
    return log.mask(f"{reason} — {last[-1]}" if last else reason)


def explain(exc: BaseException, process: ChildProcess | None, log: StderrLog, was_ready: bool) -> str:
    if process is not None and process.exited_on_its_own:
        return exit_reason(process, log, "" if was_ready else " before the handshake finished")
    exc = leaf(exc)
    if isinstance(exc, SignInNeeded):
        return str(exc)
    if isinstance(exc, MCPError):
        return with_stderr(log, f"protocol error: {exc}")
    return with_stderr(log, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def needs_sign_in(exc: BaseException) -> bool:
    """The server refused us until the user signs in (OAuth, `core/auth`)."""
    return isinstance(leaf(exc), SignInNeeded)


def unavailable_text(name: str, status: Status, log: StderrLog, detail: str | None = None) -> str:
    if status.state is State.NEEDS_SIGN_IN:
        return f"Server '{name}' needs you to sign in: {status.reason}."
    lines = [f"Server '{name}' is unavailable ({status.describe()})."]
    if detail:
        lines[0] = f"Server '{name}' is unavailable: {detail} ({status.describe()})."
    tail = [line for line in log.tail(8, stderr_only=True) if line.strip()]
    if tail:
        lines.append("Last stderr lines:")
        lines.extend(f"  {line}" for line in tail)
    return log.mask("\n".join(lines))


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
