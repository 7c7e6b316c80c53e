"""A server's config with its `${keyring:NAME}` references filled, at the moment it is started.

Filling happens at each start, never at load: the secret then lives only in the child's environment
or arguments (or the request headers) and in the server's masker, never in the config mcpmanager
holds, saves, advertises or caches. A changed keyring entry is taken at the next start.

The filled values are secrets whatever their names say (`GREETING=${keyring:x}`): the server's log
is told them before the process starts, so its stderr, its pane, the errors quoting it and the
reasons in `status` show them masked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import anyio.to_thread

from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.vault.references import filled_by
from mcpmanager.core.vault.store import Vault


@dataclass(frozen=True)
class Filled:
    config: ServerConfig
    secrets: tuple[str, ...]  # the values that came from the keyring


def has_references(config: ServerConfig) -> bool:
    if isinstance(config, HttpServerConfig):
        values = [config.url, *config.headers.values(), (config.oauth and config.oauth.client_secret) or ""]
    else:
        values = [*config.args, *config.env.values()]
    return any("${keyring:" in value for value in values)


def fill(config: ServerConfig, vault: Vault) -> Filled:
    """`config` with every reference in its env values, arguments, header values, URL and OAuth
    client secret filled.
    Raises `VaultError` (`MissingSecret` for an entry that is not there), naming the entry and where
    it is referred to, never a value. Blocks: async code calls `filled_for_start`."""
    found: dict[str, str | None] = {}

    def lookup(name: str) -> str | None:
        if name not in found:  # one keyring read per entry, however often it is referred to
            found[name] = vault.get(name)
        return found[name]

    where = f"server '{config.name}':"
    if isinstance(config, HttpServerConfig):
        headers = {key: filled_by(value, lookup, f"{where} header {key}") for key, value in config.headers.items()}
        config = replace(config, url=filled_by(config.url, lookup, f"{where} the URL"), headers=headers)
        oauth = config.oauth
        if oauth is not None and oauth.client_secret:  # a pre-registered OAuth client's secret
            secret = filled_by(oauth.client_secret, lookup, f"{where} oauth clientSecret")
            config = replace(config, oauth=replace(oauth, client_secret=secret))
    else:
        env = {key: filled_by(value, lookup, f"{where} env {key}") for key, value in config.env.items()}
        args = [filled_by(arg, lookup, f"{where} argument {number}") for number, arg in enumerate(config.args, 1)]
        config = replace(config, env=env, args=args)
    return Filled(config, tuple(value for value in found.values() if value))


def filled_server(config: ServerConfig, vault: Vault) -> ServerConfig:
    """`config` with its references filled (see `fill`)."""
    return fill(config, vault).config


async def filled_for_start(config: ServerConfig, log: StderrLog, vault: Vault | None = None) -> ServerConfig:
    """`config` filled for starting it, its secrets added to `log`'s masker first. The keyring is read
    in a worker thread (a D-Bus round trip, maybe an unlock prompt); a config with no reference never
    touches the keyring."""
    if not has_references(config):
        return config
    done = await anyio.to_thread.run_sync(fill, config, vault or Vault())
    log.also_mask(done.secrets)
    return done.config
