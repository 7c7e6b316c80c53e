"""The catalogue a command works on: a JSON dump of tools (`--catalogue FILE`) or the configured
servers' cached tools, with the config's tool settings (aliases, parameter aliases, disabled) applied.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.system.paths import Paths

if TYPE_CHECKING:
    from mcpmanager.core.catalogue.catalogue import Catalogue


class BadInput(Exception):
    """Exit status 2 with this one-line reason."""


def load_settings(path: Path | None) -> Config:
    if path is not None and not path.exists():
        raise BadInput(f"config file not found: {path}")
    return load_config(Paths.resolve(config_file=path).config_file)


def command_catalogue(catalogue_path: Path | None, config_path: Path | None, config: Config) -> Catalogue:
    """`--catalogue FILE` when given, else the configured servers' cached tools."""
    if catalogue_path is not None:
        return catalogue_from_file(catalogue_path, config)
    return cached_catalogue(config_path, config)


def catalogue_from_file(path: Path, config: Config) -> Catalogue:
    """A JSON list of `{"server", "name", "description", "inputSchema", ...}`, checked tool by tool."""
    try:
        tools = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise BadInput(f"cannot read the catalogue {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(tools, list):
        raise BadInput(f"{path}: expected a JSON list of tools")
    from mcpmanager.core.catalogue.catalogue import Catalogue  # the SDK's types: only for search and resolve

    by_server: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    for number, tool in enumerate(tools):
        where = f"{path}: tool #{number}"
        if not isinstance(tool, dict):
            raise BadInput(f"{where}: expected an object")
        for field in ("server", "name"):
            if not isinstance(tool.get(field), str) or not tool[field]:
                raise BadInput(f"{where}: '{field}' must be a non-empty string")
        pair = (tool["server"], tool["name"])
        if pair in seen:
            raise BadInput(f"{where}: tool '{pair[1]}' of server '{pair[0]}' is listed twice")
        seen.add(pair)
        by_server.setdefault(tool["server"], []).append(tool)
    catalogue = Catalogue(None, config.proxy.max_name_length)
    catalogue.load(by_server)
    catalogue.configure(list(by_server), config.tools)
    return catalogue


def cached_catalogue(config_path: Path | None, config: Config) -> Catalogue:
    """The enabled servers' tools as the last run cached them."""
    from mcpmanager.core.catalogue.catalogue import Catalogue

    cache = Paths.resolve(config_file=config_path).cache_dir / "catalogue.json"
    catalogue = Catalogue(cache, config.proxy.max_name_length)
    catalogue.configure([server.name for server in config.enabled_servers()], config.tools)
    if not catalogue.tools():
        raise BadInput(
            f"no cached tools of enabled servers in {cache}: start mcpmanager once, or pass --catalogue FILE"
        )
    return catalogue
