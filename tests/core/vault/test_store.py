"""The vault over a real keyring: the test's own keyrings.alt file backend (tests/conftest.py), and a
backend that fails the way a locked Secret Service does."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest

from mcpmanager.core.vault.store import SERVICE, Vault, VaultError
from tests.helpers.vaults import LockedKeyring, keyring_file


def test_set_get_delete_round_trip_in_the_file(private_keyring: Path) -> None:
    vault = Vault()
    assert vault.get("github") is None
    vault.set("github", "value-with-üñí and spaces")
    assert vault.get("github") == "value-with-üñí and spaces"
    assert keyring.get_password(SERVICE, "github") == "value-with-üñí and spaces"  # under mcpmanager's service
    assert keyring_file(private_keyring).is_file()
    assert vault.delete("github") is True
    assert vault.get("github") is None
    assert vault.delete("github") is False


def test_describe_names_the_fallback_file_and_says_it_is_not_encrypted(private_keyring: Path) -> None:
    vault = Vault()
    described = vault.describe()
    assert described.startswith("keyrings.alt.file.PlaintextKeyring: the file ")
    assert str(keyring_file(private_keyring)) in described and described.endswith("not encrypted")
    assert vault.unencrypted_file()


def test_a_failing_keyring_is_a_vault_error_naming_the_entry_not_the_value() -> None:
    vault = Vault(LockedKeyring())
    with pytest.raises(
        VaultError, match=r"cannot read 'github' from the keyring \(.*LockedKeyring\): the collection is locked"
    ):
        vault.get("github")
    with pytest.raises(VaultError) as caught:
        vault.set("github", "the-secret-value")
    assert "the-secret-value" not in str(caught.value)
    with pytest.raises(VaultError, match="cannot remove 'github'"):
        vault.delete("github")
    assert not vault.unencrypted_file()
    with pytest.raises(VaultError, match="needs a name"):
        Vault().set("", "x")
