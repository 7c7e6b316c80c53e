"""What a downstream server tells the engine: its state, its tools and its other lists changed, a
resource it serves was updated, it logged a message, a task of its changed status."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types import LoggingLevel

from mcpmanager.core.supervisor.lifecycle import Status

ToolDict = dict[str, Any]


@dataclass(frozen=True)
class StatusChanged:
    server: str
    status: Status


@dataclass(frozen=True)
class ToolsChanged:
    server: str
    tools: list[ToolDict]


@dataclass(frozen=True)
class OffersChanged:
    """Its prompts, resources and resource templates (each as listed; empty when not offered)."""

    server: str
    prompts: list[ToolDict]
    resources: list[ToolDict]
    templates: list[ToolDict]


@dataclass(frozen=True)
class ResourceUpdated:
    server: str
    uri: str


@dataclass(frozen=True)
class ServerMessage:
    """A `notifications/message` the server sent (MCP logging), as the SDK parsed it."""

    server: str
    level: LoggingLevel
    logger: str | None
    data: Any


@dataclass(frozen=True)
class TaskStatus:
    """A task's status the server announced (`task_calls.Snapshot`, under the server's task id)."""

    server: str
    snapshot: dict[str, Any]


DownstreamEvent = StatusChanged | ToolsChanged | OffersChanged | ResourceUpdated | ServerMessage | TaskStatus
Listener = Callable[[DownstreamEvent], None]
