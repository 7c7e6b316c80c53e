"""Which era each server is spoken to in (`eras`): stdio servers the handshake, unless one refused
it; remote servers the probe, unless one is known to speak only the handshake; kept across engines."""

from __future__ import annotations

from pathlib import Path

from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig
from mcpmanager.core.supervisor.eras import HANDSHAKE, NO_HANDSHAKE, KnownEras

STDIO = StdioServerConfig(name="files", command="files-server", args=["--root", "/srv"])
REMOTE = HttpServerConfig(name="tickets", url="https://tickets.example/mcp")


def test_a_new_stdio_server_gets_the_handshake_and_a_new_remote_one_the_probe(tmp_path: Path) -> None:
    eras = KnownEras(tmp_path / "eras.json")
    assert eras.mode(STDIO) == "legacy"
    assert eras.mode(REMOTE) == "auto"


def test_a_stdio_server_that_refused_the_handshake_is_probed_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "eras.json"
    eras = KnownEras(path)
    eras.refused(STDIO, "legacy")
    assert eras.mode(STDIO) == "auto"
    eras.connected(STDIO, "2026-07-28", modern=True)  # the probe's answer keeps it probed
    assert KnownEras(path).mode(STDIO) == "auto"  # and a new engine reads it so
    assert KnownEras(path).era(STDIO) == NO_HANDSHAKE


def test_a_stdio_server_that_takes_the_handshake_again_gets_it_again(tmp_path: Path) -> None:
    eras = KnownEras(tmp_path / "eras.json")
    eras.refused(STDIO, "legacy")
    eras.connected(STDIO, "2025-11-25", modern=False)  # probed, it fell back: it takes the handshake
    assert eras.mode(STDIO) == "legacy"


def test_what_an_older_engine_remembered_of_a_dual_era_stdio_server_gives_it_the_handshake(tmp_path: Path) -> None:
    # Engines before this rule remembered the version a probed stdio server answered with.
    path = tmp_path / "eras.json"
    older = KnownEras(path)
    older.remember(STDIO, "2026-07-28")
    assert KnownEras(path).mode(STDIO) == "legacy"


def test_a_remote_server_known_to_speak_only_the_handshake_is_not_probed_until_it_refuses_it(tmp_path: Path) -> None:
    eras = KnownEras(tmp_path / "eras.json")
    eras.connected(REMOTE, "2025-06-18", modern=False)
    assert eras.mode(REMOTE) == "legacy"
    eras.refused(REMOTE, "legacy")  # upgraded: probed on the next attempt
    assert eras.mode(REMOTE) == "auto"
    eras.connected(REMOTE, "2026-07-28", modern=True)
    assert eras.mode(REMOTE) == "auto" and eras.era(REMOTE) == "2026-07-28"


def test_a_refused_probe_changes_nothing(tmp_path: Path) -> None:
    eras = KnownEras(tmp_path / "eras.json")
    for config in (STDIO, REMOTE):
        before = eras.mode(config)
        eras.refused(config, "auto")  # (the probe falls back by itself; an error here is the server's)
        assert eras.mode(config) == before


def test_the_memory_is_per_way_of_starting(tmp_path: Path) -> None:
    eras = KnownEras(tmp_path / "eras.json")
    eras.refused(STDIO, "legacy")
    moved: ServerConfig = StdioServerConfig(name="files", command="files-server", args=["--root", "/data"])
    assert eras.mode(moved) == "legacy"
    assert eras.era(STDIO) == NO_HANDSHAKE != HANDSHAKE
