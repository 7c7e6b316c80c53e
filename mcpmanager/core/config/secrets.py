"""Which values are secrets, and masking them: the one rule for every place a server's values are
kept or shown (its log and stderr pane, its command line, the editor, `status`, error texts, the
preview of a client's file).

A value is a secret when
- the name it is given names one: an environment variable, an HTTP header, a query parameter, a
  `--flag value` / `--flag=value` argument or a `KEY=value` whose words include token, key,
  secret, password, auth, … (`STRIPE_API_KEY`, `X-Api-Key`, `apiKey`, `PGPASSWORD`), unless its
  last word says it is only about one (`SSL_KEY_FILE`, `TOKEN_URL`, `AUTH_TYPE`);
- or it has the shape of a credential, wherever it appears: a provider's token (`sk_live_…`,
  `ghp_…`, `xoxb-…`, `sk-…`, `AKIA…`, `AIza…`, …), a JWT, what follows `Bearer`/`Basic`, the
  password of `scheme://user:password@`.
Everything else (PATH, HOME, LANG, a port, a file path) is shown as it is: masking harmless values
hides what a user needs to see and teaches them to ignore masks.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

T = TypeVar("T")

MASK = "***"
# A literal value shorter than this is not searched for in text: "1", "true" or "dev" under a
# secret-sounding name would mask ordinary words everywhere. Its name still masks it where the
# name stands next to it (`KEY=…`, `--token …`) and wherever the value is shown on its own.
MIN_LITERAL = 6

# Words that make a name a secret's, anywhere in the name.
_SECRET_WORDS = frozenset(
    {
        "token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "key",
        "apikey", "auth", "authorization", "cookie", "pat", "dsn", "signature", "sig", "bearer",
    }
)  # fmt: skip
# Abbreviations that are ordinary words too: only as the last word (`DB_PASS`, not `PASS_THROUGH`;
# `DB_PWD`, not the shell's `PWD`).
_LAST_WORDS = frozenset({"pass", "pwd"})
# One-word compounds (`PGPASSWORD`, `accesstoken`, `clientsecret`, `APIKEY`).
_ENDINGS = ("token", "secret", "password", "passwd", "apikey", "accesskey", "secretkey", "privatekey")
# A last word saying the name is about a secret, not one: where it is, what kind, how long it lives,
# what went wrong with it (`KeyError: 'name'` is a traceback, not a key).
_ABOUT = frozenset(
    {
        "file", "path", "dir", "folder", "sock", "socket", "url", "uri", "endpoint", "host", "port",
        "header", "id", "name", "type", "mode", "method", "scheme", "provider", "length", "size",
        "limit", "count", "ttl", "expiry", "expires", "timeout", "format", "version", "enabled",
        "required", "error", "errors", "exception", "warning",
    }
)  # fmt: skip

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")

# Credentials of known providers, by the shape of the whole token (not one example of it).
_PROVIDERS = "|".join(
    (
        r"[sr]k_(?:live|test)_[0-9A-Za-z]{10,}",  # Stripe secret and restricted keys
        r"whsec_[0-9A-Za-z]{16,}",  # Stripe webhook secrets
        r"gh[opsur]_[0-9A-Za-z]{20,}",  # GitHub tokens (personal, OAuth, app, refresh)
        r"github_pat_[0-9A-Za-z_]{20,}",  # GitHub fine-grained tokens
        r"glpat-[0-9A-Za-z_-]{20,}",  # GitLab
        r"xox[abeoprs]-[0-9A-Za-z-]{10,}",  # Slack bot, user, app… tokens
        r"xapp-[0-9A-Za-z-]{10,}",  # Slack app-level tokens
        r"sk-[0-9A-Za-z_-]{20,}",  # OpenAI, Anthropic (sk-ant-…) and the APIs that copied them
        r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key ids
        r"AIza[0-9A-Za-z_-]{30,}",  # Google API keys
        r"ya29\.[0-9A-Za-z_-]{20,}",  # Google OAuth access tokens
        r"hf_[0-9A-Za-z]{30,}",  # Hugging Face
        r"npm_[0-9A-Za-z]{30,}",  # npm
        r"pypi-[0-9A-Za-z_-]{40,}",  # PyPI
        r"SG\.[0-9A-Za-z_-]{16,}\.[0-9A-Za-z_-]{16,}",  # SendGrid
        r"eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*",  # a JWT: header.payload.signature
    )
)
_PROVIDER_TOKEN = re.compile(rf"(?<![0-9A-Za-z_])(?:{_PROVIDERS})")
# An Authorization value: the scheme stays readable, the credential goes.
# The credential is a token68 (RFC 9110: `=` only as padding), so `Bearer realm=…` is not one.
_SCHEME_CREDENTIAL = re.compile(
    r"(?<![0-9A-Za-z])(?:bearer|basic)\s+(?P<secret>[0-9A-Za-z._~+/-]{8,}=*)(?![0-9A-Za-z._~+/=-])", re.IGNORECASE
)
# `scheme://user:password@host`: the password goes; the user and host stay.
_URL_PASSWORD = re.compile(r"(?<![0-9A-Za-z+.-])[A-Za-z][0-9A-Za-z+.-]*://[^\s/?#@:]*:(?P<secret>[^\s/?#@]+)@")
# `NAME=value`, `NAME: value`, `"name": "value"`, `?name=value&`: the value of a secret's name. The
# value is matched in a lookahead so a match never swallows another (a URL holding `?key=`).
_VALUE = r"""(?P<value>"[^"\n]*"|'[^'\n]*'|(?:(?i:bearer|basic|token)[ \t]+)?[^\s'",;&<>(){}\[\]]+)"""
_NAMED = re.compile(rf"""(?<![0-9A-Za-z_.-])(?P<name>[A-Za-z_][0-9A-Za-z_.-]*)(?=['"]?[ \t]*[=:][ \t]*{_VALUE})""")
# `--flag value` and `--flag=value` (also Go's one-dash `-flag`).
_FLAG = re.compile(
    r"""(?<![0-9A-Za-z_.-])--?(?P<name>[A-Za-z][0-9A-Za-z_-]*)"""
    r"""(?=(?P<sep>=|[ \t]+)(?P<value>"[^"\n]*"|'[^'\n]*'|(?:(?i:bearer|basic|token)[ \t]+)?[^\s'"]+))"""
)
_SCHEME = re.compile(r"(?:bearer|basic|token)\s+", re.IGNORECASE)
# A reference to the keyring (`${keyring:NAME}`, maybe after a scheme) stands where a secret would: it
# is not one, and is shown as it is (the secret is filled in only when the server starts).
_REFERENCE = re.compile(r"(?:(?:bearer|basic|token)\s+)?\$\{keyring:[^}\s]+\}", re.IGNORECASE)


def is_reference(value: str) -> bool:
    return _REFERENCE.fullmatch(value) is not None


@functools.lru_cache(maxsize=4096)
def names_secret(name: str) -> bool:
    """Does `name` (of a variable, header, parameter or flag) say its value is a secret?"""
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    if not words or words[-1] in _ABOUT or words[0] == "no":  # `--no-auth` is a switch, not a pair
        return False
    if any(w in _SECRET_WORDS or (w.endswith(_ENDINGS) and w not in _ENDINGS) for w in words):
        return True
    return len(words) > 1 and words[-1] in _LAST_WORDS


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """Where the secrets of `text` are, by their shape or by the name next to them."""
    for match in _PROVIDER_TOKEN.finditer(text):
        yield match.span()
    # Each rule only where its mark is: a flooding server's lines are masked one by one.
    lowered = text.lower()
    for match in _SCHEME_CREDENTIAL.finditer(text) if "bearer" in lowered or "basic" in lowered else ():
        secret = match["secret"]
        if len(secret) >= 16 or not secret.isalpha():  # "Bearer authentication" is prose, not a token
            yield match.span("secret")
    for match in _URL_PASSWORD.finditer(text) if "://" in text else ():
        yield match.span("secret")
    for match in _NAMED.finditer(text) if "=" in text or ":" in text else ():
        # `auth: Authorization: Bearer …`: a value that ends in ":" is the next name, not a value.
        if names_secret(match["name"]) and not match["value"].endswith(":") and not _refers(text, match):
            yield _value_span(match.start("value"), match["value"])
    for match in _FLAG.finditer(text) if "-" in text else ():
        spaced = match["sep"] != "="
        if names_secret(match["name"]) and not (spaced and match["value"].startswith("-")) and not _refers(text, match):
            yield _value_span(match.start("value"), match["value"])


def _refers(text: str, match: re.Match[str]) -> bool:
    """The value is a reference to the keyring (`TOKEN=${keyring:x}`): no secret there."""
    start = match.start("value")
    scheme = _SCHEME.match(text, start)
    return text.startswith("${keyring:", scheme.end() if scheme else start)


def _value_span(start: int, value: str) -> tuple[int, int]:
    """The secret part of a value: inside its quotes, after its `Bearer `."""
    end = start + len(value)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        start, end = start + 1, end - 1
        value = value[1:-1]
    scheme = _SCHEME.match(value)
    return (start + scheme.end(), end) if scheme and scheme.end() < len(value) else (start, end)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def secrets_in(text: str) -> set[str]:
    """The secrets `text` shows by the rule (shapes, and values next to a secret's name)."""
    return {part for start, end in _merged(_spans(text)) if (part := text[start:end]) != MASK}


def has_secret(text: str) -> bool:
    return bool(secrets_in(text))


def entry_is_secret(name: str, value: str) -> bool:
    """A name/value entry (env variable, header) whose value must be masked where it is shown."""
    return names_secret(name) or has_secret(value)


def _with_credential(value: str) -> set[str]:
    """A secret value, and the credential in it when it carries a scheme (`Bearer <credential>`)."""
    found = {value}
    scheme = _SCHEME.match(value)
    if scheme and scheme.end() < len(value):
        found.add(value[scheme.end() :])
    return found


_ARG_FLAG = re.compile(r"--?(?P<name>[A-Za-z][0-9A-Za-z_-]*)")
_ARG_ASSIGNMENT = re.compile(r"(?P<head>(?:--?)?(?P<name>[A-Za-z_][0-9A-Za-z_.-]*)=)(?P<value>.+)", re.DOTALL)


def _secret_flag(arg: str) -> bool:
    """`--api-key`, `-token`: an argument whose next argument is a secret."""
    flag = _ARG_FLAG.fullmatch(arg)
    return flag is not None and names_secret(flag["name"])


def _assigned_secret(arg: str) -> re.Match[str] | None:
    """`--api-key=VALUE`, `API_KEY=VALUE`: an argument holding a secret after its `=`, whole."""
    found = _ARG_ASSIGNMENT.fullmatch(arg)
    return found if found is not None and names_secret(found["name"]) else None


def argument_secrets(args: Sequence[str]) -> set[str]:
    """Secrets among a command's arguments: the argument after a secret's flag (`--api-key VALUE`),
    the value of `--flag=value` and `KEY=value`, and whatever the rule finds in any of them."""
    found: set[str] = set()
    for i, arg in enumerate(args):
        found |= secrets_in(arg)
        if assigned := _assigned_secret(arg):
            found |= _with_credential(assigned["value"])
        if _secret_flag(arg) and i + 1 < len(args) and not args[i + 1].startswith("-"):
            found |= _with_credential(args[i + 1])
    return {value for value in found if not is_reference(value)}


def config_secrets(
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    url: str | None = None,
) -> set[str]:
    """The literal secret values of a server's settings: values of env variables and headers that
    name a secret, secrets among its arguments, and whatever has a secret's shape."""
    found: set[str] = set()
    for name, value in (*(env or {}).items(), *(headers or {}).items()):
        if names_secret(name):
            found |= _with_credential(value)
        found |= secrets_in(value)
    found |= argument_secrets(args)
    if url:
        found |= secrets_in(url)
    return {value for value in found if value and value != MASK and not is_reference(value)}


class Masker:
    """Masks the secrets of text by the rule, and these literal values wherever they appear (also
    JSON-escaped or percent-encoded, as a server or a file may print them)."""

    def __init__(self, literals: Iterable[str] = ()) -> None:
        forms = set()
        for value in literals:
            if len(value) >= MIN_LITERAL:
                forms |= {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
                forms |= {quote(value), quote(value, safe="")}
        # Longest first: a value that contains another is masked whole.
        ordered = sorted(forms, key=len, reverse=True)
        self._literals = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        spans = list(_spans(text))
        if self._literals is not None:
            spans += (match.span() for match in self._literals.finditer(text))
        if not spans:
            return text
        parts: list[str] = []
        last = 0
        for start, end in _merged(spans):
            parts += (text[last:start], MASK)
            last = end
        parts.append(text[last:])
        return "".join(parts)


_BY_RULE = Masker()


def mask(text: str) -> str:
    """`text` with its secrets masked by the rule alone (no literal values known)."""
    return _BY_RULE(text)


def mask_arguments(args: Sequence[str], masker: Masker = _BY_RULE) -> list[str]:
    """The arguments to show: the one after a secret's flag and the value of a secret's `--flag=`
    or `KEY=` masked whole, the others by `masker`."""
    shown: list[str] = []
    for i, arg in enumerate(args):
        if arg and i and _secret_flag(args[i - 1]) and not arg.startswith("-") and not is_reference(arg):
            shown.append(MASK)
        elif assigned := _assigned_secret(arg):
            shown.append(arg if is_reference(assigned["value"]) else assigned["head"] + MASK)
        else:
            shown.append(masker(arg))
    return shown


def mask_strings(value: T) -> T:
    """A JSON-like value with every string in it masked by the rule (keys are names: kept)."""
    found: Any = value
    if isinstance(value, str):
        found = mask(value)
    elif isinstance(value, dict):
        found = {key: mask_strings(item) for key, item in value.items()}
    elif isinstance(value, list):
        found = [mask_strings(item) for item in value]
    return found  # type: ignore[no-any-return]


class MaskingFormatter(logging.Formatter):
    """Log records masked by the rule, tracebacks included: an HTTP library's error quotes the URL
    it failed on, query token and all."""

    def format(self, record: logging.LogRecord) -> str:
        return mask(super().format(record))
