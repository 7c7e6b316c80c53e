"""`mcpmanager export --undo` on a file rewritten since the export: the result is checked against
the document it must be (the file now, without export's entries, with those it replaced back), so
an undo that cannot be done as text is refused with nothing written, never half done."""

from __future__ import annotations

import hashlib
import json
import tomllib
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from mcpmanager.core.clients import export as export_module
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.export_undo import apply_export_undo, list_records, plan_export_undo
from mcpmanager.core.vault.store import Vault
from tests.core.clients.test_export import config_of, export, home_with_every_client, section, target_of

MINE = {"command": "uvx", "args": ["mine"]}


class _IndentedLists(yaml.SafeDumper):
    """Lists one step in under their key (`key:\\n  - item`), where PyYAML writes them at its column."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _rewritten(path: Path, dumper: type[yaml.SafeDumper] = yaml.SafeDumper) -> dict[str, Any]:
    """The file rewritten at 2-space indentation, as Goose rewrites its own config.yaml."""
    doc = yaml.safe_load(path.read_text())
    path.write_text(yaml.dump(doc, Dumper=dumper, sort_keys=False, indent=2))
    return dict(doc)


@pytest.mark.parametrize(
    ("client", "name", "dumper"), [("goose", "slack", yaml.SafeDumper), ("continue", "fetch", _IndentedLists)]
)
def test_a_replaced_entry_comes_back_at_the_indentation_of_the_file_now(
    tmp_path: Path, client: str, name: str, dumper: type[yaml.SafeDumper]
) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    original = section(client, target.path.read_bytes())
    export(target, config_of({name: MINE}), replace_taken=True)
    rewritten = _rewritten(target.path, dumper)

    apply_export_undo(plan_export_undo(target))
    doc = yaml.safe_load(target.path.read_text())
    assert section(client, target.path.read_bytes()) == original  # its own entry again, none nested in another
    assert {k: v for k, v in doc.items() if k not in ("extensions", "mcpServers")} == {
        k: v for k, v in rewritten.items() if k not in ("extensions", "mcpServers")
    }


def test_a_section_now_in_flow_style_is_refused_with_nothing_written(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("goose", home)
    export(target, config_of({"clock": {"command": "uvx", "args": ["mcp-server-time"]}}))
    doc = yaml.safe_load(target.path.read_text())
    extensions = doc.pop("extensions")
    target.path.write_text(yaml.safe_dump(doc) + "extensions: " + json.dumps(extensions) + "\n")
    edited = target.path.read_bytes()

    with pytest.raises(InstallError, match=r"extensions\.clock: not written in block style any more; nothing undone"):
        plan_export_undo(target)
    assert target.path.read_bytes() == edited and len(list_records(target.path)) == 1


def test_codex_a_table_rewritten_inline_is_refused_not_left_behind(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("codex", home)
    export(target, config_of({"clock": {"command": "uvx", "args": ["mcp-server-time"]}}))
    text = target.path.read_text()
    table = '[mcp_servers.clock]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
    assert text.endswith(table)
    target.path.write_text(
        text.replace(table, '[mcp_servers]\nclock = { command = "uvx", args = ["mcp-server-time"] }\n')
    )
    assert tomllib.loads(target.path.read_text())["mcp_servers"]["clock"] == {
        "command": "uvx",
        "args": ["mcp-server-time"],
    }

    with pytest.raises(InstallError, match="cannot take its entries out of this file safely as text; nothing undone"):
        plan_export_undo(target)


def test_json_an_entry_written_twice_is_refused_not_left_behind(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("cursor", home)
    export(target, config_of({"clock": MINE}))
    text = target.path.read_text()
    target.path.write_text(text.replace('"mcpServers": {', '"mcpServers": {\n    "clock": {"command": "other"},', 1))

    with pytest.raises(InstallError, match=r"safely as text; nothing undone \(the file as it was before the export"):
        plan_export_undo(target)


class _ClockChange(datetime):
    """Two exports around the end of summer time in UTC+2/UTC+1: the second's local time is earlier."""

    instants: ClassVar[list[datetime]] = []
    zones: ClassVar[list[timezone]] = []

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        instant, zone = cls.instants.pop(0), cls.zones.pop(0)
        return instant.astimezone(tz) if tz is not None else instant.astimezone(zone).replace(tzinfo=None)


def test_undo_takes_the_newest_export_across_a_clock_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_module, "datetime", _ClockChange)
    _ClockChange.instants = [datetime(2026, 10, 25, 0, 30, tzinfo=UTC), datetime(2026, 10, 25, 1, 10, tzinfo=UTC)]
    _ClockChange.zones = [timezone(timedelta(hours=2)), timezone(timedelta(hours=1))]
    home = home_with_every_client(tmp_path)
    target = target_of("cursor", home)
    export(target, config_of({"first": MINE}))
    export(target, config_of({"second": MINE}))

    apply_export_undo(plan_export_undo(target))
    servers = section("cursor", target.path.read_bytes())
    assert "first" in servers and "second" not in servers  # the second export is the one undone


def test_records_of_before_utc_stamps_are_still_read_newest_first(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    local = datetime(2026, 11, 1, 12, 0, 0).astimezone(UTC)  # a local stamp, as records were named before
    old = path.with_name(f"mcp.json.mcpmanager-export-{datetime(2026, 11, 1, 12, 0, 0):%Y%m%d-%H%M%S}.json")
    newer = path.with_name(f"mcp.json.mcpmanager-export-{local + timedelta(minutes=1):%Y%m%d-%H%M%S}Z.json")
    older = path.with_name(f"mcp.json.mcpmanager-export-{local - timedelta(minutes=1):%Y%m%d-%H%M%S}Z.json")
    for record in (old, newer, older):
        record.write_text("{}")
    assert list_records(path) == [newer, old, older]


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_names_yaml_reads_as_booleans_or_null_are_quoted(tmp_path: Path, client: str) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    names = ["true", "null", "yes", "On"]
    servers = {name: {"command": "run", "env": {"y": "1", "off": "2", "TRUE": "3"}} for name in names}
    export(target, config_of(servers))
    written = section(client, target.path.read_bytes())  # PyYAML: YAML 1.1, where `yes` and `on` are booleans too
    assert set(names) <= set(written)
    env = "envs" if client == "goose" else "env"
    assert all(written[name][env] == {"y": "1", "off": "2", "TRUE": "3"} for name in names)


GREETING = "open-sesame-4f9a2c"  # no secret's shape: only the keyring says it is one


def _plain_sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("client", ["cursor", "goose"])
def test_the_record_does_not_let_a_guess_of_a_secret_be_checked_and_undo_still_works(
    tmp_path: Path, client: str
) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    vault = Vault()
    vault.set("greeter", GREETING)
    servers = {"greeter": {"command": "greet", "env": {"GREETING": "${keyring:greeter}"}}, "clock": MINE}
    plan = export(target, config_of(servers), secrets_from=vault)
    assert GREETING in target.path.read_text()
    [record_path] = list_records(target.path)
    record = json.loads(record_path.read_text())
    assert GREETING not in record_path.read_text()
    for guess in (GREETING, "wrong-guess-0000"):  # an entry with the guess in it hashes to nothing recorded
        entry = json.loads(json.dumps(plan.written["greeter"]).replace(GREETING, guess))
        assert _plain_sha256(entry) not in record["written"].values()
    assert hashlib.sha256(target.path.read_bytes()).hexdigest() != record["after"]
    assert record["written"]["clock"] == _plain_sha256(plan.written["clock"])  # no secret: as before

    undo = plan_export_undo(target)
    assert undo.change.exact  # the file as export left it is still told apart
    target.path.write_text(target.path.read_text() + "\n")  # an edit elsewhere
    undo = plan_export_undo(target)
    assert not undo.change.exact and set(undo.change.moved) == {"greeter", "clock"}  # both still as written
