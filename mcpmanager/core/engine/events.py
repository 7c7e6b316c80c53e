"""What the engine tells its front ends, besides the servers' own events and the calls it routes."""

from __future__ import annotations

from dataclasses import dataclass

from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.core.supervisor.events import DownstreamEvent


@dataclass(frozen=True)
class CatalogueChanged:
    tool_count: int


@dataclass(frozen=True)
class ConfigRejected:
    reason: str


@dataclass(frozen=True)
class ConfigApplied:
    """A changed config is in effect: servers may have come, gone or been replaced."""

    servers: tuple[str, ...]


@dataclass(frozen=True)
class PinsChanged:
    """The pins file was read again (an approval, a repair, a reset): held tools and whether the
    file is damaged may have changed."""

    damaged: str | None


EngineEvent = DownstreamEvent | CatalogueChanged | ConfigRejected | ConfigApplied | PinsChanged | CallRecord
