"""What an address needs before the endpoint listens on it, and the names the guard then accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpmanager.core.serve.exposure import Exposure, ExposureError, admission, check
from mcpmanager.core.serve.team_tokens import add_token
from tests.helpers.gateway import make_certificate


@pytest.fixture
def tls(tmp_path: Path) -> tuple[Path, Path]:
    return make_certificate(tmp_path / "tls", ["127.0.0.1", "gw.example"])


@pytest.fixture
def tokens(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.json"
    add_token(path, "alice")
    return path


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_needs_nothing_more(host: str) -> None:
    exposure = Exposure(host=host)
    assert exposure.loopback
    check(exposure)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "gw.example"])
def test_any_other_address_needs_tls_and_named_tokens(host: str, tls: tuple[Path, Path], tokens: Path) -> None:
    cert, key = tls
    assert not Exposure(host=host).loopback
    with pytest.raises(ExposureError, match=r"it needs TLS .* and named tokens"):
        check(Exposure(host=host, allow_hosts=("gw.example",)))
    with pytest.raises(ExposureError, match="it needs named tokens"):
        check(Exposure(host=host, tls_cert=cert, tls_key=key, allow_hosts=("gw.example",)))
    with pytest.raises(ExposureError, match="it needs TLS"):
        check(Exposure(host=host, tokens=tokens, allow_hosts=("gw.example",)))
    check(Exposure(host=host, tls_cert=cert, tls_key=key, tokens=tokens, allow_hosts=("gw.example",)))


def test_every_address_needs_the_names_it_is_reached_by(tls: tuple[Path, Path], tokens: Path) -> None:
    cert, key = tls
    with pytest.raises(ExposureError, match="--allow-host NAME"):
        check(Exposure(host="0.0.0.0", tls_cert=cert, tls_key=key, tokens=tokens))
    # A named address is its own name.
    check(Exposure(host="10.0.0.5", tls_cert=cert, tls_key=key, tokens=tokens))


def test_a_certificate_must_load_with_its_key(tmp_path: Path, tls: tuple[Path, Path]) -> None:
    cert, _ = tls
    with pytest.raises(ExposureError, match="needs both --tls-cert FILE and --tls-key FILE"):
        check(Exposure(tls_cert=cert))
    with pytest.raises(ExposureError, match="--tls-key: no such file"):
        check(Exposure(tls_cert=cert, tls_key=tmp_path / "missing.key"))
    other_cert, other_key = make_certificate(tmp_path / "other", ["127.0.0.1"])
    with pytest.raises(ExposureError, match=f"cannot load the TLS certificate {cert}"):
        check(Exposure(tls_cert=cert, tls_key=other_key))  # a key that is not this certificate's
    check(Exposure(tls_cert=other_cert, tls_key=other_key))


def test_an_empty_tokens_file_is_refused_at_start(tmp_path: Path, tls: tuple[Path, Path]) -> None:
    path = tmp_path / "empty.json"
    path.write_text('{"tokens": []}')
    with pytest.raises(ExposureError, match="has no tokens: nobody could connect"):
        check(Exposure(tokens=path))


def test_the_names_requests_may_be_sent_to(tls: tuple[Path, Path], tokens: Path) -> None:
    cert, key = tls
    local = admission(Exposure(), "t0ken")
    assert local.hosts == {"127.0.0.1", "localhost", "[::1]"}
    assert (local.who("t0ken"), local.who("other")) == ("local", None)
    gateway = Exposure(host="::", tls_cert=cert, tls_key=key, tokens=tokens, allow_hosts=("GW.example:8443",))
    assert admission(gateway, "t0ken").hosts == {"127.0.0.1", "localhost", "[::1]", "gw.example"}
    assert admission(gateway, "t0ken").who("t0ken") is None  # the runtime token is not a team token
    assert Exposure(host="fd00::5", tls_cert=cert, tls_key=key, tokens=tokens).url_host == "[fd00::5]"
    assert "[fd00::5]" in Exposure(host="fd00::5").host_names()
