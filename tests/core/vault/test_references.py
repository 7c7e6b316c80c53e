"""`${keyring:NAME}` references: found anywhere in a value, filled from a real keyring, and a missing
entry named with where it is referred to."""

from __future__ import annotations

import pytest

from mcpmanager.core.vault.references import MissingSecret, filled, filled_map, reference, referenced_names
from mcpmanager.core.vault.store import Vault


def test_references_are_found_anywhere_in_a_value() -> None:
    assert reference("github/TOKEN") == "${keyring:github/TOKEN}"
    assert referenced_names("Bearer ${keyring:a} and ${keyring:b/c}") == ["a", "b/c"]
    assert referenced_names("${keyring:}, ${keyring:has space}, $keyring:x, ${env:X}") == []


def test_values_are_filled_where_the_references_stand() -> None:
    vault = Vault()
    vault.set("a", "AAA")
    vault.set("b/c", "C$1\\")  # nothing in a secret is taken for a regex replacement
    assert filled("Bearer ${keyring:a}", vault, "header") == "Bearer AAA"
    assert filled("${keyring:a}${keyring:b/c}-${keyring:a}", vault, "x") == "AAAC$1\\-AAA"
    assert filled("no reference here", vault, "x") == "no reference here"
    assert filled_map({"K": "${keyring:a}", "L": "plain"}, vault, "env") == {"K": "AAA", "L": "plain"}


def test_a_missing_entry_says_which_and_how_to_store_it() -> None:
    with pytest.raises(MissingSecret) as caught:
        filled_map({"TOKEN": "${keyring:gone}"}, Vault(), "server 'x': env")
    assert str(caught.value) == (
        "server 'x': env TOKEN refers to keyring entry 'gone', which is not in the keyring "
        "(store it with `mcpmanager secrets set gone`)"
    )
