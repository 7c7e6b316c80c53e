"""`${keyring:NAME}` in a config value: the secret stays in the keyring, the config keeps the name.

A reference may stand anywhere in an env value, a header value or an argument (`Bearer
${keyring:github}`); it is replaced when the server is started, so the secret is never in the config,
the document mcpmanager saves, or the catalogue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from mcpmanager.core.vault.store import Vault, VaultError

REFERENCE = re.compile(r"\$\{keyring:(?P<name>[^}\s]+)\}")


def reference(name: str) -> str:
    """The text that refers to keyring entry `name`."""
    return "${keyring:" + name + "}"


def referenced_names(value: str) -> list[str]:
    return [match["name"] for match in REFERENCE.finditer(value)]


class MissingSecret(VaultError):
    """A reference to an entry the keyring does not hold: only the user can fix it (no retry helps)."""


def filled(value: str, vault: Vault, where: str) -> str:
    """`value` with each reference replaced by its secret; `where` names the value in an error."""
    return filled_by(value, vault.get, where)


def filled_by(value: str, lookup: Callable[[str], str | None], where: str) -> str:
    """`filled`, with the secrets from `lookup` (a vault's `get`, or a memo of it)."""
    if "${keyring:" not in value:
        return value

    def secret(match: re.Match[str]) -> str:
        found = lookup(match["name"])
        if found is None:
            raise MissingSecret(
                f"{where} refers to keyring entry '{match['name']}', which is not in the keyring "
                f"(store it with `mcpmanager secrets set {match['name']}`)"
            )
        return found

    return REFERENCE.sub(secret, value)


def filled_map(values: Mapping[str, str], vault: Vault, where: str) -> dict[str, str]:
    return {key: filled(value, vault, f"{where} {key}") for key, value in values.items()}
