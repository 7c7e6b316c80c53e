"""Where the HTTP endpoint listens and what that requires: this machine only, or a team gateway.

On loopback (the default) the endpoint is for this user's own clients: plain HTTP, the runtime
directory's one token. Any other address serves other machines, so it is refused at start unless
it has TLS (a certificate and its key) and named tokens (`team_tokens`): a token sent in clear
over a network is a token given away, and one shared token cannot be taken back from one person.
An address that listens everywhere (`0.0.0.0`, `::`) also needs the names clients reach it by
(`--allow-host`): the Host check is what stops DNS rebinding, and "every name" would switch it off.
"""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from mcpmanager.core.serve.guard import LOOPBACK_HOSTS, Admission, host_name, local_admission
from mcpmanager.core.serve.team_tokens import TokenBook, TokensError, read_entries

WILDCARDS = ("0.0.0.0", "::", "")


class ExposureError(Exception):
    """The endpoint cannot listen as asked; the message says why and what to add."""


@dataclass(frozen=True)
class Exposure:
    host: str = "127.0.0.1"
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tokens: Path | None = None  # the named tokens' file; None: the runtime directory's one token
    allow_hosts: tuple[str, ...] = ()
    stateless: bool = False  # any replica answers any request (no sessions kept between requests)

    @property
    def loopback(self) -> bool:
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def url_host(self) -> str:
        """The host part of the endpoint's URL: the address, or the first allowed name for a wildcard."""
        if self.host in WILDCARDS:
            return self.allow_hosts[0] if self.allow_hosts else "127.0.0.1"
        return f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host

    def host_names(self) -> frozenset[str]:
        """The names requests may be sent to (Host and Origin): loopback, the address, the allowed."""
        names = set(LOOPBACK_HOSTS)
        if self.host not in WILDCARDS:
            names.add(host_name(self.url_host))
        names.update(host_name(name) for name in self.allow_hosts)
        return frozenset(names)


LOCAL = Exposure()  # this machine's clients: 127.0.0.1, the runtime directory's token


def check(exposure: Exposure) -> None:
    """Refuse, with the reason and the fix, what must not start: ExposureError."""
    where = exposure.host or "every address"
    if (exposure.tls_cert is None) != (exposure.tls_key is None):
        raise ExposureError("TLS needs both --tls-cert FILE and --tls-key FILE")
    if not exposure.loopback:
        missing = []
        if not exposure.tls:
            missing.append("TLS (--tls-cert FILE --tls-key FILE; tokens must not cross a network in clear)")
        if exposure.tokens is None:
            missing.append("named tokens (--tokens FILE; make them with `mcpmanager tokens add NAME --file FILE`)")
        if missing:
            raise ExposureError(f"--host {where} serves other machines, so it needs " + " and ".join(missing))
        if exposure.host in WILDCARDS and not exposure.allow_hosts:
            raise ExposureError(
                f"--host {where} listens on every address: name the host names clients use with --allow-host NAME"
            )
    if exposure.tls:
        ssl_context(exposure)
    if exposure.tokens is not None:
        try:
            entries = read_entries(exposure.tokens)
        except TokensError as exc:
            raise ExposureError(str(exc)) from None
        if not entries:
            raise ExposureError(
                f"the tokens file {exposure.tokens} has no tokens: nobody could connect "
                f"(add one with `mcpmanager tokens add NAME --file {exposure.tokens}`)"
            )


def ssl_context(exposure: Exposure) -> ssl.SSLContext:
    """The server's TLS context; ExposureError naming the file when the pair does not load."""
    assert exposure.tls_cert is not None and exposure.tls_key is not None
    for label, path in (("--tls-cert", exposure.tls_cert), ("--tls-key", exposure.tls_key)):
        if not path.is_file():
            raise ExposureError(f"{label}: no such file: {path}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(exposure.tls_cert, exposure.tls_key)
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
        raise ExposureError(
            f"cannot load the TLS certificate {exposure.tls_cert} with its key {exposure.tls_key}: {reason}"
            " (a PEM certificate and its own private key?)"
        ) from None
    return context


def admission(exposure: Exposure, local_token: str) -> Admission:
    """Who gets in: named tokens from the file when there is one, else the runtime directory's token."""
    if exposure.tokens is None:
        local = local_admission(local_token)
        return Admission(exposure.host_names(), local.who, local.missing, local.misdirected, named=False)
    try:
        book = TokenBook(exposure.tokens)
    except TokensError as exc:
        raise ExposureError(str(exc)) from None
    hosts = exposure.host_names()
    # Loopback names stay valid Hosts (a probe or a tunnel on the machine itself), but a web page on
    # a developer's own localhost is not one of the gateway's pages.
    pages = frozenset(hosts - set(LOOPBACK_HOSTS)) if not exposure.loopback else hosts
    missing = "mcpmanager needs a bearer token (ask whoever runs this gateway for one)"
    return Admission(hosts, book.who, missing, origins=pages)
