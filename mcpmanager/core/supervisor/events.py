"""What a downstream server tells the engine: its state changed, its tools changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


DownstreamEvent = StatusChanged | ToolsChanged
Listener = Callable[[DownstreamEvent], None]
