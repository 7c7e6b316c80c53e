"""Options declared once: every settings field carries its check, its JSON key is its name in
camelCase, and loading and saving both follow the declaration (a new option needs no other code)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.options import default_of, json_key
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings

SECTIONS = {"proxy": ProxySettings, "supervisor": SupervisorSettings}
CHANGED: dict[str, Any] = {"mode": "direct", "port": 8765, "max_name_length": 40, "new_tools": "hold"}
CHANGED.update(ask_before="all", approval="deny", semantic_model="encoder")


def other_value(field: dataclasses.Field[Any]) -> Any:
    """A valid value that is not the default."""
    if field.name in CHANGED:
        return CHANGED[field.name]
    default = default_of(field)
    if isinstance(default, bool):
        return not default
    if isinstance(default, int | float):
        return default + 3
    return ["x"] if isinstance(default, list) else {"a": "b"}


@pytest.mark.parametrize("settings", [ToolSettings, ProxySettings, SupervisorSettings])
def test_every_option_has_a_check(settings: type[Any]) -> None:
    assert all(callable(f.metadata.get("check")) for f in dataclasses.fields(settings))


@pytest.mark.parametrize(("section", "settings"), SECTIONS.items())
def test_each_option_round_trips_under_its_camel_case_key(section: str, settings: type[Any]) -> None:
    for field in dataclasses.fields(settings):
        key, value = json_key(field.name), other_value(field)
        config = parse_config(json.dumps({section: {key: value}}), "test")
        assert getattr(getattr(config, section), field.name) == value, key
        assert config.to_document()[section] == {key: value}, key  # written back as read
        assert section not in Config().to_document(), key  # defaults are not written


def test_tool_settings_round_trip() -> None:
    entry = {json_key(f.name): other_value(f) for f in dataclasses.fields(ToolSettings)}
    assert list(entry) == ["alwaysOn", "aliases", "disabled", "params", "approval"]
    config = parse_config(json.dumps({"tools": {"s:t": entry}}), "test")
    assert config.tools["s:t"] == ToolSettings(True, ["x"], True, {"a": "b"}, "deny")
    assert config.to_document()["tools"] == {"s:t": entry}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"proxy": {"mode": "both"}}, "proxy.mode: expected 'discovery' or 'direct', got 'both'"),
        ({"proxy": {"port": 70000}}, "proxy.port: expected an integer 0..65535, got 70000"),
        ({"supervisor": {"crashLimit": 1.5}}, "supervisor.crashLimit: expected a positive integer, got 1.5"),
        ({"tools": {"s:t": {"aliases": ["a", 3]}}}, "tools.s:t.aliases[1]: expected a string, got number"),
    ],
)
def test_a_bad_value_names_its_option(document: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(json.dumps(document), "test")
    assert f"{error.value.key}: {error.value.reason}" == message
    assert str(error.value).startswith("test:1:")  # the file, line and column come first
