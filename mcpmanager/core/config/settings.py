"""mcpmanager's own sections of the config file: `tools`, `proxy` and `supervisor`.

Each option is declared once, here, with its default and its check (see `options`); the JSON keys
are the field names in camelCase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcpmanager.core.config.modes import DEFAULT_MODE, Mode
from mcpmanager.core.config.options import count, flag, integer, mode, one_of, option, positive, string_map, strings

NewTools = Literal["allow", "hold"]  # a tool new to a server whose tools are pinned: served, or held for review
Approval = Literal["allow", "ask", "deny"]  # a tool's calls: forwarded, asked first, refused (core/proxy/approval.py)
AskBefore = Literal["destructive", "all", "never"]  # which tools without an `approval` of their own are asked for
SemanticModel = Literal["static", "encoder"]  # search's semantic side: static vectors, or the sentence encoder


@dataclass(frozen=True)
class ToolSettings:
    """Settings of one tool, keyed `server:original_name` in `Config.tools`."""

    always_on: bool = option(False, flag)
    aliases: list[str] = option(check=strings, factory=list)
    disabled: bool = option(False, flag)
    params: dict[str, str] = option(check=string_map, factory=dict)  # argument a model may pass → declared name
    approval: Approval | None = option(None, one_of("allow", "ask", "deny"))  # None: by `proxy.askBefore`


@dataclass(frozen=True)
class ProxySettings:
    mode: Mode = option(DEFAULT_MODE, mode)
    port: int = option(0, integer(0, 65535))  # 0: any free port
    max_name_length: int = option(64, integer(16, 128))
    new_tools: NewTools = option("allow", one_of("allow", "hold"))  # see core/catalogue/pins.py
    ask_before: AskBefore = option("destructive", one_of("destructive", "all", "never"))  # calls asked first
    approval_timeout: float = option(120.0, positive)  # seconds an asked call waits for an answer
    semantic_search: bool = option(True, flag)  # fuse BM25F with the shipped static vectors (search.md)
    semantic_model: SemanticModel = option("static", one_of("static", "encoder"))  # "encoder": ~9 ms a query
    learn_from_use: bool = option(True, flag)  # lift tools for queries like those that led to them (discovery.md)


@dataclass(frozen=True)
class SupervisorSettings:
    """Seconds unless named otherwise."""

    start_timeout: float = option(30.0, positive)
    call_timeout: float = option(300.0, positive)
    task_timeout: float = option(3600.0, positive)  # a task mcpmanager runs for a client that has none
    starting_wait: float = option(30.0, positive)
    backoff_initial: float = option(1.0, positive)
    backoff_max: float = option(60.0, positive)
    crash_limit: int = option(5, count)
    crash_window: float = option(60.0, positive)
    healthy_after: float = option(300.0, positive)
    stop_grace: float = option(2.0, positive)
    log_max_bytes: int = option(1048576, count)
    ring_lines: int = option(2000, count)


def is_tool_key(key: str) -> bool:
    """A `tools` key names a server and one of its tools: `server:tool`."""
    server, _, tool = key.partition(":")
    return bool(server and tool)
