"""Named tokens: digests only, revocation seen without a restart, a broken file refuses everyone."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpmanager.core.serve.team_tokens import TokenBook, TokensError, add_token, digest, read_entries, revoke_token


def test_a_token_is_kept_as_its_digest_and_known_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    alice = add_token(path, "alice")
    bob = add_token(path, "bob")
    assert alice != bob and len(alice) >= 40
    entries = read_entries(path)
    assert [(e.name, e.sha256) for e in entries] == [("alice", digest(alice)), ("bob", digest(bob))]
    assert alice not in path.read_text()
    book = TokenBook(path)
    assert (book.who(alice), book.who(bob), book.who("guess"), book.who("")) == ("alice", "bob", None, None)


def test_revoking_is_seen_by_a_running_book_from_the_next_check(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    alice, bob = add_token(path, "alice"), add_token(path, "bob")
    book = TokenBook(path)
    assert book.who(alice) == "alice"
    revoke_token(path, "alice")
    assert book.who(alice) is None
    assert book.who(bob) == "bob"
    carol = add_token(path, "carol")
    assert book.who(carol) == "carol"  # added ones too, without a restart


def test_an_edit_in_place_is_seen_too(tmp_path: Path) -> None:
    """Kubernetes swaps a mounted Secret by symlink, an editor may write in place: both are seen."""
    path = tmp_path / "tokens.json"
    alice = add_token(path, "alice")
    book = TokenBook(path)
    assert book.who(alice) == "alice"
    with path.open("r+") as file:  # same inode, new content
        file.seek(0)
        file.write(json.dumps({"tokens": []}))
        file.truncate()
    os.utime(path, ns=(1, 1))  # even with an mtime from the past: the size changed
    assert book.who(alice) is None


def test_a_broken_file_refuses_every_token_until_mended(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "tokens.json"
    alice = add_token(path, "alice")
    good = path.read_text()
    book = TokenBook(path)
    path.write_text(good[:-10])
    with caplog.at_level(logging.ERROR):
        assert book.who(alice) is None
    assert "every token is refused until it is mended" in caplog.text
    assert alice not in caplog.text
    path.write_text(good)
    assert book.who(alice) == "alice"
    path.unlink()
    assert book.who(alice) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "tokens.json:1:2: not JSON"),
        ("[]", 'expected {"tokens": [...]}'),
        ('{"tokens": [{"name": "a b", "sha256": "' + "0" * 64 + '"}]}', "tokens[0]: name must be"),
        ('{"tokens": [{"name": "a", "sha256": "xyz"}]}', "tokens[0] (a): sha256 must be 64 lowercase hex"),
        (
            '{"tokens": [{"name": "a", "sha256": "' + "0" * 64 + '"}, {"name": "a", "sha256": "' + "1" * 64 + '"}]}',
            "the name 'a' is there twice",
        ),
    ],
)
def test_a_broken_file_is_named_with_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(text)
    with pytest.raises(TokensError, match=None) as raised:
        read_entries(path)
    assert message in str(raised.value)


def test_names_and_duplicates_are_checked_when_adding(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    add_token(path, "alice@example.org")
    with pytest.raises(TokensError, match="already has a token"):
        add_token(path, "alice@example.org")
    with pytest.raises(TokensError, match="a token's name is letters"):
        add_token(path, "two words")
    with pytest.raises(TokensError, match=r"no token named 'bob' .*\(named: alice@example.org\)"):
        revoke_token(path, "bob")


def test_a_revoke_and_an_add_at_the_same_time_never_bring_the_revoked_back(tmp_path: Path) -> None:
    """Each edit reads, changes and writes the file: without the lock, the later write restored what
    the earlier one removed (seen in 11 of 30 runs before the lock)."""
    for round_ in range(30):
        path = tmp_path / f"tokens-{round_}.json"
        add_token(path, "alice")
        gate = threading.Barrier(2)
        threads = [
            threading.Thread(target=_at_once, args=(gate, revoke_token, path, "alice")),
            threading.Thread(target=_at_once, args=(gate, add_token, path, "carol")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [e.name for e in read_entries(path)] == ["carol"], round_


def test_a_file_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    with pytest.raises(TokensError, match=r"cannot change the tokens file /proc/no-such-folder/tokens\.json"):
        add_token(Path("/proc/no-such-folder/tokens.json"), "alice")


def _at_once(gate: threading.Barrier, edit: Callable[[Path, str], object], path: Path, name: str) -> None:
    gate.wait()
    edit(path, name)
