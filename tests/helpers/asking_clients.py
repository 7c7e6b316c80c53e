"""Real clients reaching mcpmanager each way a client can: `serve --stdio` (an engine of its own),
`serve --http` (a shared engine, with the bearer token) and `connect` (the stdio bridge launched the
way a client launches it, to that same running engine); and what those clients answer when a server
asks them something (sampling, elicitation, roots) or logs to them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from tests.helpers.clients import bridge_env, http_client, text_of
from tests.helpers.engines import home_token, wait_for
from tests.helpers.serving import LISTENING, spawn_serve_http

TRANSPORTS = ["stdio", "http", "connect"]
ERAS = ["legacy", "auto"]  # the SDK Client's handshake era and, since mcpmanager serves it, 2026-07-28
NEGOTIATED = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@dataclass(frozen=True)
class Proxy:
    """Where a module's clients reach mcpmanager: `config` for `serve --stdio` (each such client starts
    an engine of its own), and one `serve --http` engine under `home`, which `connect` reaches too."""

    config: Path
    home: Path
    url: str
    token: str


@contextmanager
def http_engine(config: Path, home: Path) -> Iterator[Proxy]:
    """`mcpmanager serve --http --port 0 --mode direct` under MCPMANAGER_HOME=home, until the block ends."""
    home.mkdir(parents=True, exist_ok=True)
    errlog = home / "serve-http-stderr.log"
    process = spawn_serve_http(config, home, errlog)  # blocking waits here: module fixtures have no loop
    try:
        deadline = time.monotonic() + 30
        while not (found := LISTENING.search(errlog.read_text())) and process.poll() is None:
            assert time.monotonic() < deadline, f"serve --http did not listen:\n{errlog.read_text()}"
            time.sleep(0.05)
        assert found, f"serve --http exited {process.returncode}:\n{errlog.read_text()}"
        yield Proxy(config, home, found.group(2), home_token(home))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


@asynccontextmanager
async def proxy_client(
    proxy: Proxy, transport: str, era: str, stdio_home: Path, **options: Any
) -> AsyncIterator[Client]:
    """The SDK's Client (with `options`: callbacks, log_level, client_info...) through `transport`, in
    `era`, in direct mode. `stdio_home` is the home of the engine `serve --stdio` starts for it."""
    if transport == "http":
        async with http_client(f"{proxy.url}/direct", proxy.token, era, **options) as client:
            assert client.protocol_version == NEGOTIATED[era]
            yield client
        return
    if transport == "stdio":
        stdio_home.mkdir(parents=True, exist_ok=True)
        command = ["-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(proxy.config)]
        params = StdioServerParameters(
            command=sys.executable, args=command, env={"MCPMANAGER_HOME": str(stdio_home), "PYTHONUNBUFFERED": "1"}
        )
        errlog_path = stdio_home / "serve-stderr.log"
    elif transport == "connect":
        command = ["-m", "mcpmanager", "connect", "--mode", "direct", "--no-start"]
        params = StdioServerParameters(command=sys.executable, args=command, env=bridge_env(proxy.home))
        errlog_path = proxy.home / "connect-stderr.log"
    else:
        raise ValueError(f"unknown transport {transport!r}")
    with errlog_path.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, cache=None, **options) as client:
            assert client.protocol_version == NEGOTIATED[era]  # the client's own era, end to end
            yield client


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def wait_for_tools(client: Client, wanted: set[str]) -> None:
    """Until every tool in `wanted` is listed (servers start with the engine; nothing is cached)."""

    async def listed() -> bool:
        return wanted <= await tool_names(client)

    await wait_for(listed, timeout=30)


async def outcome(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """What a call came to, as one comparable line: its text, marked when it is an error result, or
    the protocol error the client raised instead of returning a result."""
    try:
        result = await client.call_tool(tool, arguments)
    except MCPError as exc:
        return f"raised MCPError: {exc}"
    return f"error: {text_of(result)}" if result.is_error else text_of(result)


class Answering:
    """A client's side of what servers ask: a model that answers samples, a person who fills in
    forms and follows links, a workspace with roots; and the log messages it hears. Records all."""

    def __init__(self, roots: list[str] | None = None) -> None:
        self.root_uris = roots or []
        self.samples: list[types.CreateMessageRequestParams] = []
        self.prompts: list[str] = []  # what the model was asked, one entry per sampling request
        self.forms: list[types.ElicitRequestFormParams] = []
        self.links: list[types.ElicitRequestURLParams] = []
        self.roots_asked = 0
        self.logs: list[types.LoggingMessageNotificationParams] = []

    @staticmethod
    def reply_to(prompt: str) -> str:
        return f"the model's answer to {prompt!r}"

    FORM: ClassVar[dict[str, str]] = {"username": "ada", "email": "ada@example.com"}

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.samples.append(params)
        [message] = params.messages
        asked = message.content.text if isinstance(message.content, types.TextContent) else repr(message.content)
        self.prompts.append(asked)
        reply = types.TextContent(text=self.reply_to(asked))
        return types.CreateMessageResult(role="assistant", content=reply, model="test-model")

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            self.links.append(params)
            return types.ElicitResult(action="accept")
        self.forms.append(params)
        return types.ElicitResult(action="accept", content=dict(self.FORM))

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in self.root_uris])  # type: ignore[arg-type]

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def callbacks(self, *, sampling: bool = True) -> dict[str, Any]:
        """The Client's callbacks; declaring a capability is having its callback (`sampling=False`:
        a client that did not declare sampling)."""
        options: dict[str, Any] = {
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.list_roots,
            "logging_callback": self.log,
        }
        if sampling:
            options["sampling_callback"] = self.sample
        return options
