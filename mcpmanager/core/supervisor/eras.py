"""Which protocol era to speak to each server, and what each spoke last time (docs/protocol.md,
"Which era a server is spoken to in").

A stdio server is spoken to in the handshake era: the pipe is one connection already, and the
2026-07-28 era would put the client's version, identity, capabilities and log level on every request
for the server to check again (what a call costs the server, measured in docs/benchmarks.md).
Servers of either era before 2026-07-28 and dual-era servers (every SDK 2.x server) take the
handshake; a server that refuses it speaks only the 2026-07-28 era, and is remembered so
(`NO_HANDSHAKE`) and started with the probe from then on.

A remote server is sent the 2026-07-28 `server/discover` probe first (that era needs no session
and no stream beside the requests) and falls back to the handshake. A server built before that era
answers the probe with errors, and some write a screenful of them to stderr on every start, so a
healthy server looks broken in its pane. Once a remote server is known to speak only the handshake
era it is started with the handshake alone.

The memory is per server and per way of starting it (command, arguments, URL): a changed entry
starts afresh, and a server that refuses what it was remembered for (upgraded) is tried the other
way.
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
NO_HANDSHAKE = "2026-07-28 only"  # a stdio server that refused the handshake


def config_key(config: ServerConfig) -> str:
    """What identifies how a server is started (its environment's values are left out: secrets)."""
    if isinstance(config, StdioServerConfig):
        parts = [config.name, "stdio", config.command, *config.args, config.cwd or ""]
    else:
        parts = [config.name, config.transport, config.url]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:16]


class KnownEras:
    """Server → the era it last spoke (`HANDSHAKE`, `NO_HANDSHAKE` for a stdio server, or a
    2026-07-28-era version for a remote one), kept in a small file. Nothing in the file is needed: a
    missing or broken one means every server is started as if new."""

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

    def mode(self, config: ServerConfig) -> str:
        """How the SDK's client connects to it: "legacy" (the handshake alone) or "auto" (the probe
        first, the handshake if the probe is refused)."""
        known = self.era(config)
        if isinstance(config, StdioServerConfig):
            return "auto" if known == NO_HANDSHAKE else "legacy"
        return "legacy" if known == HANDSHAKE else "auto"

    def connected(self, config: ServerConfig, version: str | None, modern: bool) -> None:
        """It connected, speaking `version` (`modern`: of the 2026-07-28 era)."""
        if not modern:
            self.remember(config, HANDSHAKE)
        else:
            self.remember(config, NO_HANDSHAKE if isinstance(config, StdioServerConfig) else version)

    def refused(self, config: ServerConfig, mode: str) -> None:
        """It refused the handshake that `mode` "legacy" sent: a stdio server is probed from now on
        (`NO_HANDSHAKE`); a remote one remembered as handshake-only is probed again (upgraded?)."""
        if mode != "legacy":
            return
        self.remember(config, NO_HANDSHAKE if isinstance(config, StdioServerConfig) else None)

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
