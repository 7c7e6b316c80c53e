"""Which protocol era each server spoke last time, so it is probed once, not on every start.

A client that does not know a server's era first sends the 2026-07-28 `server/discover` probe and
falls back to the `initialize` handshake. A server built before that era answers the probe with
errors, and some write a screenful of them to stderr on every start (mcp-server-sqlite writes about
95 lines), so a healthy server looks broken in its pane. Once a server is known to speak only the
handshake era it is started with the handshake alone. The memory is per server and per way of
starting it (command, arguments, URL): a changed entry is probed again, and so is a server that
refuses the handshake it was remembered for (it was upgraded).
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig
from mcpmanager.core.system.atomic_write import write_atomic

logger = logging.getLogger(__name__)

HANDSHAKE = "handshake"


def config_key(config: ServerConfig) -> str:
    """What identifies how a server is started (its environment's values are left out: secrets)."""
    if isinstance(config, StdioServerConfig):
        parts = [config.name, "stdio", config.command, *config.args, config.cwd or ""]
    else:
        parts = [config.name, config.transport, config.url]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:16]


class KnownEras:
    """Server → the era it last spoke (`HANDSHAKE` or a 2026-07-28-era version), kept in a small
    file. Nothing in the file is needed: a missing or broken one means every server is probed."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: dict[str, str] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self._known = {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
            except (OSError, ValueError) as exc:
                logger.warning("ignoring %s: %s", path, exc)

    def era(self, config: ServerConfig) -> str | None:
        return self._known.get(config_key(config))

    def remember(self, config: ServerConfig, era: str | None) -> None:
        key = config_key(config)
        if self._known.get(key) == era:
            return
        if era is None:
            self._known.pop(key, None)
        else:
            self._known[key] = era
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(self.path, json.dumps(self._known, indent=1).encode(), 0o600)
            except OSError as exc:  # costs one probe next time, nothing more
                logger.warning("cannot write %s: %s", self.path, exc)
