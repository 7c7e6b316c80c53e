"""What tool poisoning looks like, found in a definition's text before a model reads it.

A model reads a tool's, prompt's or resource template's text (name, description, the schema's
property names, descriptions, defaults and enums, recursively; a prompt's arguments; a URI template)
as instructions. A poisoned definition tells it to hand a secret over, to keep quiet, or to change
another server's tools, and hides that from the person approving. `scan` is run when an item is first
seen or changes; a finding holds the item with its reason shown. Pure: text in, findings out.

Rules are categories that benign definitions have no reason to contain (measured on the published
servers' definitions in the test data):

- `invisible-unicode`: format characters a reader cannot see (zero-width space, joiners outside an
  emoji sequence, word joiner, soft hyphen, BOM, Hangul fillers, variation selectors outside an
  emoji, and the tag characters U+E0000–E007F, which spell ASCII the model reads and no font
  draws: "ASCII smuggling"; the reason spells out what they hide). Descriptions are written for a
  person to read; a character nobody sees is there for the model.
- `bidi-control`: bidirectional embeddings, overrides and isolates (U+202A–E, U+2066–9) and marks
  (U+200E/F, U+061C): they make a text display in another order than the model reads it.
- `terminal-escape`: ESC/CSI sequences and other C0/C1 control characters (a lone carriage return,
  backspace): a terminal that prints the description runs them, and they can hide or overwrite text
  (Trail of Bits showed instructions hidden by ANSI colour and cursor codes).
- `hidden-padding`: a run of blank lines or spaces long enough to push the rest of a text out of a
  window that shows its first lines.
- `base64-blob`: a long run of base64 (mixed case and digits, not a word, path or URL): an encoded
  payload a reviewer cannot read but a model can decode.
- `hidden-instructions`: text addressed to the model rather than describing the tool: orders to
  disregard its instructions or the user ("ignore all previous instructions", "you are now", "act
  as the administrator"; not when the phrase stands in quotes, as a scanner names it), to keep
  something from the user ("do not tell the user", "without informing the user", "between us"),
  claims that the user's approval is not needed ("pre-approved", "never need to ask for
  confirmation"), markup posing as higher authority (`<IMPORTANT>`, `<SYSTEM>`, `[ADMIN]`, an HTML
  comment), orders to put the conversation, the system prompt, environment variables, credentials or
  personal data into a parameter or a request, and commands to prepend to every command run, to
  pipe a download into a shell or to wipe the home folder. A parameter is a quoted name, a name
  followed by "parameter", "field", "argument"…, or one of the item's own parameter names.
- `secret-path`: a file of secrets (SSH private keys, cloud credentials, MCP client configs,
  `/etc/shadow`) with a verb that reads or sends it in the same sentence, not negated ("never
  read"); a place that also holds other things (`.env`, `~/.ssh`, shell history, the keychain) only
  with a verb that sends it or puts it in a parameter (a dotenv tool loads `.env`). `.pub`,
  `known_hosts`, `~/.ssh/config` hold no secret. A key manager may name `~/.ssh`; it has no reason
  to ask for a private key's contents.
- `tool-shadowing`: text that sets the behaviour of other tools ("when this tool is available, the
  send_email tool must…", "side effect on the also present …", "all emails must be sent to …"):
  one server rewriting another's tools.
- `exfil-url`: a URL that carries data out: a request-capture or tunnel host (webhook.site,
  requestbin, ngrok, interactsh, …) or a query or path with a placeholder for a secret or for
  content ("?key={api_key}", "&d=<conversation>", "${AWS_SECRET}"). Placeholders for ids, names and
  paths (a template's `{owner}/{repo}`) are what templates are for and do not count.

What it does not do: read other languages, decode and re-scan base64 or tag characters, or judge
intent. The wording rules are patterns of phrase categories: they miss paraphrases they do not
cover (about half of new poisoned wordings, tests/data/poisoning/README.md); the character,
encoding and URL rules do not depend on wording. A finding is a reason for a person to look, and
the person decides (approving records the definition).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, Literal

Kind = Literal["tool", "prompt", "template", "resource"]
SNIPPET = 80  # characters of context a reason quotes
MAX_TEXT = 32_768  # characters of one text the rules read (a description is rarely a tenth of it)


@dataclasses.dataclass(frozen=True)
class Finding:
    code: str  # a rule's short name, e.g. "invisible-unicode"
    where: str  # which text: "description", "inputSchema.properties.path.description", …
    reason: str  # what a person reads: the rule and the offending snippet, invisible characters escaped

    def describe(self) -> dict[str, str]:
        return dataclasses.asdict(self)


# Showing text --------------------------------------------------------------------------------------


def escaped(text: str) -> str:
    """The text with every character a person cannot see written as an escape (`\\u200b`,
    `\\x1b`, `\\U000e0041`, `\\n`), so a window shows what is there."""
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t":
            out.append("\\n" if ch == "\n" else "\\t")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif unicodedata.category(ch) in ("Cf", "Co", "Cn", "Zl", "Zp") or _is_invisible(ch):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def snippet(text: str, start: int, end: int) -> str:
    """The match with some context, trimmed to about `SNIPPET` characters, escaped, quoted."""
    pad = max(0, (SNIPPET - (end - start)) // 2)
    lo, hi = max(0, start - pad), min(len(text), end + pad)
    if end - start > SNIPPET:
        lo, hi = start, start + SNIPPET
    shown = escaped(text[lo:hi])
    if len(shown) > 2 * SNIPPET:  # escapes are long: keep the reason short enough to read
        cut = shown.rfind("\\", 2 * SNIPPET - 10, 2 * SNIPPET)  # not inside an escape
        shown, hi = shown[: cut if cut > 0 else 2 * SNIPPET], len(text) + 1
    return f'"{"…" if lo > 0 else ""}{shown}{"…" if hi < len(text) else ""}"'


def _found(code: str, where: str, why: str, text: str, start: int, end: int) -> Finding:
    return Finding(code, where, f"{why}: {snippet(text, start, end)}")


# Characters ----------------------------------------------------------------------------------------

BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
TAGS = range(0xE0000, 0xE0080)
INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u180e")  # fillers drawn as nothing
ESC_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?|\x9b[0-?]*[ -/]*[@-~]")


def _is_invisible(ch: str) -> bool:
    code = ord(ch)
    return ch in INVISIBLE_EXTRA or code in TAGS or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def _pictographic(ch: str) -> bool:
    """A symbol an emoji sequence may join or vary (✔, ⚠, 👩): ZWJ and VS16 belong there."""
    return unicodedata.category(ch) == "So" or ord(ch) >= 0x1F000 or ch in "#*0123456789"


def _characters(where: str, text: str) -> Iterator[Finding]:
    hidden: list[int] = []
    bidi: list[int] = []
    tags: list[str] = []
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch in BIDI:
            bidi.append(i)
        elif code in TAGS:
            hidden.append(i)
            if 0xE0020 <= code <= 0xE007E:
                tags.append(chr(code - 0xE0000))
        elif ch in "\u200d\ufe0f" and i > 0 and _pictographic(text[i - 1]):
            continue  # 👩‍💻, ⚠️: an emoji sequence
        elif ch == "\u200d" and i + 1 < len(text) and _pictographic(text[i + 1]):
            continue
        elif (unicodedata.category(ch) == "Cf" and ch not in BIDI) or _is_invisible(ch):
            hidden.append(i)
    if hidden:
        names = sorted({escaped(text[i]) for i in hidden})
        spelled = f'; the tag characters spell "{escaped("".join(tags))[:SNIPPET]}"' if tags else ""
        why = f"{len(hidden)} invisible character(s) ({', '.join(names[:6])}){spelled}"
        yield _found("invisible-unicode", where, why, text, hidden[0], hidden[0] + 1)
    if bidi:
        names = sorted({escaped(text[i]) for i in bidi})
        why = f"{len(bidi)} bidirectional control character(s) ({', '.join(names)}), which reorder what is shown"
        yield _found("bidi-control", where, why, text, bidi[0], bidi[0] + 1)
    escape = ESC_SEQUENCE.search(text)
    control = re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9a\x9c-\x9f]|\r(?!\n)", text)
    first = min((m for m in (escape, control) if m), key=lambda m: m.start(), default=None)
    if first:
        what = "a terminal escape sequence" if escape and first is escape else "a control character"
        why = f"{what}, which a terminal acts on (it can hide or overwrite text)"
        yield _found("terminal-escape", where, why, text, first.start(), first.end())
    padding = re.search(r"(?:[ \t]*\n){25,}|[ \t\u00a0]{200,}", text)
    if padding and text[padding.end() :].strip():
        run = padding.group().count("\n") or len(padding.group())
        why = f"{run} blank lines or spaces push what follows out of view"
        yield _found("hidden-padding", where, why, text, padding.end(), padding.end() + 40)


# Words ---------------------------------------------------------------------------------------------


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.VERBOSE)


W = r"(?:[\w'’-]+[\s,]+)"  # one word and the space after it
NOT = r"(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|without|no\s+need\s+to|avoid)"
USER = r"(?:the\s+|your\s+)?(?:user|human|person|operator|owner|requester)s?\b"
SECRET_NOUN = r"""(?:ssh\s+(?:private\s+)?keys?|private\s+keys?|api[\s_-]?keys?|access[\s_-]?tokens?|
    auth(?:entication)?\s+tokens?|bearer\s+tokens?|secret\s+keys?|secrets|credentials|passwords?|passphrases?|
    session\s+cookies?|cookies|seed\s+phrases?|mnemonic|environment\s+variables?|env\s+vars?|\.env\b|
    (?:system|hidden|internal|developer)\s+(?:prompt|instructions|message)s?|(?-i:\b[A-Z][A-Z0-9]*_(?:API_KEY|KEY|TOKEN|SECRET|PASSWORD)\b)|
    (?:user'?s|their)\s+(?:\w+\s+)?(?:email\s+address|phone\s+numbers?|home\s+address|location|contacts|saved\s+logins)|
    (?:all\s+)?(?:future|incoming|new)\s+(?:messages|emails)|(?:conversation|chat|message)\s+(?:history|log|transcript)s?|
    (?:entire|full|whole|complete)\s+(?:conversation|chat|dialog(?:ue)?|context)|
    (?:last|recent|previous|prior|earlier)\s+(?:\w+\s+)?messages|messages\s+(?:of|in|from)\s+this\s+(?:chat|conversation))"""
PARAMETER = r"""(?:(?:the\s+)?[`'"‘“]?[\w.-]+[`'"’”]?\s+(?:parameter|argument|field|param|property|input|value)\b|
    (?:the\s+)?[`'"‘“][\w.-]+[`'"’”])"""

TRANSFER = r"""(?:pass|put|include|insert|send|append|attach|add|provide|supply|embed|concatenate|copy|paste|forward|
    upload|post|leak|transmit|exfiltrate|share)"""

INSTRUCTION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "an order to disregard the model's instructions",
        _rx(r"""\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*
            (?:previous|prior|above|earlier|preceding|other|existing|original|system|safety|security|
            developer|user'?s?)\s+(?:instructions?|prompts?|rules|directions|guidelines|guardrails|
            policies|messages|constraints|context)\b|
            \b(?:ignore|disregard|forget)\s+(?:everything|anything|all|whatever)\s+(?:else\s+)?(?:you\s+(?:were|have\s+been|are)\s+
            (?:told|given|instructed)|(?:said|written|stated)\s+(?:before|above|earlier))"""),
    ),
    (
        "an order that resets the model's role",
        _rx(r"""\b(?:you\s+are\s+now\s+(?:a|an|in|the)\b|from\s+now\s+on\b|
            act\s+as\s+(?:an?\s+|the\s+)?(?:system\s+)?(?:administrator|admin|root|superuser|system)\b|new\s+(?:system\s+)?
            instructions\s*:|(?:enter|enable|activate)\s+(?:developer|debug|god|admin|jailbreak)\s+mode)"""),
    ),
    (
        "an order to keep something from the user",
        _rx(rf"""\b(?:{NOT}\s+{W}{{0,2}}?(?:tell|inform|notify|alert|warn|bother)\w*\s+{USER}(?!\s*(?:'s|’s)\b)|
            {NOT}\s+(?:mention|reveal|disclose|say|explain|admit)\w*\s+(?:(?:this|that|it|anything)\s+)?to\s+{USER}|
            {NOT}\s+(?:mention|reveal|disclose|show|say|tell|report|explain)\w*\s+(?:this|that|it|these|anything|any\s+of\s+this)
            \b(?!\s+(?:field|value|parameter|option|flag|setting))|
            {USER}\s+{W}{{0,4}}?(?:must|should|need|needs|may|can)\s+(?:not|never)\s+(?:to\s+)?(?:know|see|notice|learn|
            find\s+out|be\s+told|be\s+(?:made\s+)?aware|become\s+aware)|{NOT}\s+let\s+{USER}\s+(?:know|see|notice)|
            \bbetween\s+(?:us|ourselves)\b|
            (?:hide|conceal)\s+(?:this|it|that|these|the\s+\w+)\s+from\s+{USER}|
            (?:keep|treat)\s+(?:this|it|these)\s+(?:\w+\s+)?(?:a\s+)?(?:secret|hidden|confidential|to\s+yourself)\b)"""),
    ),
    (
        "a claim that the user's approval is not needed",
        _rx(rf"""\b(?:{USER}\s+(?:has|have)\s+(?:already\s+)?(?:pre-?)?(?:approved|authori[sz]ed|consented)|
            (?:is|are|been)\s+pre-?(?:approved|authori[sz]ed)|
            (?:never|no|don'?t|do\s+not)\s+(?:\w+\s+)?need\s+(?:to\s+)?(?:ask\s+(?:{USER}\s+)?(?:for\s+)?(?:confirmation|approval|permission)|
            ask\s+{USER}|confirm\b|check\s+with\s+{USER}|get\s+(?:confirmation|approval|permission))|
            authori[sz]ed\s+to\s+\w+\s+(?:any|all|every)\b)"""),
    ),
    (
        "markup posing as a higher authority",
        _rx(r"""<\s*/?\s*(?:important|system|instructions?|admin|secret|hidden|critical|override|
            system[_-]?prompt|assistant[_-]?instructions?)\s*>|\[\s*(?:system|admin|instructions?)\s*\]|
            <!--\W{0,200}\w"""),
    ),
    (
        "an order to put secrets or the conversation into a call",
        _rx(rf"""\b(?:{TRANSFER}|encode)\w*\s+{W}{{0,6}}?{SECRET_NOUN}
            [^.\n]{{0,80}}?\b(?:as|in|into|to|inside|within|via)\s+(?:{PARAMETER}|(?:this|the|a)\s+(?:tool|url|request|call)|https?://)|
            \b(?:read|collect|gather|extract|dump|fetch|get|retrieve|list|print|output|reveal|repeat|write)\w*\s+
            {W}{{0,4}}?{SECRET_NOUN}[^.\n]{{0,120}}?\b{TRANSFER}\w*\b|
            \b(?:print|output|reveal|repeat|write|dump)\w*\s+{W}{{0,4}}?{SECRET_NOUN}[^.\n]{{0,40}}?\b(?:as|in|into)\s+{PARAMETER}|
            \b(?:with|containing|including)\s+{W}{{0,3}}?{SECRET_NOUN}[^.\n]{{0,30}}?\s(?:as|in|for)\s+{PARAMETER}|
            {SECRET_NOUN}[^.\n]{{0,40}}?\b(?:goes|go|ends?\s+up|is\s+put|are\s+put|placed)\s+(?:in|into)\s+{PARAMETER}|
            \bcall\w*\s+[`'"]?\w+[`'"]?\s+[^.\n]{{0,40}}?\bwith\s+{W}{{0,4}}?{SECRET_NOUN}|
            \b(?:set|fill|populate)\w*\s+{W}{{0,4}}?(?:to|with)\s+(?:the\s+)?(?:(?:values?|contents?)\s+of\s+)?
            (?:all\s+|the\s+|your\s+)?{SECRET_NOUN}"""),
    ),
    (
        "a command to add to every command, or a download piped into a shell",
        _rx(r"""\b(?:prepend|append|prefix|insert|inject|add|run|execute)\w*\s+[^.\n]{0,60}?\b(?:before|to|in|with)\s+
            (?:every|each|all|any)\s+(?:\w+\s+)?(?:shell\s+|terminal\s+)?(?:commands?|invocations?|scripts?)\b|
            \b(?:curl|wget)\b[^\n|]{0,120}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|
            \b(?:rm\s+-(?:rf|fr)|chmod\s+-R\s+[0-7]{3,4}|chown\s+-R\s+\S+)\s+(?:~|/(?:\s|$|;)|\$HOME)"""),
    ),
)
QUOTED_OK = frozenset(INSTRUCTION_RULES[i][0] for i in (0, 1))  # a scanner may quote "ignore previous instructions"

SHADOW_RULES: tuple[re.Pattern[str], ...] = (
    _rx(r"""\bwhen(?:ever)?\s+this\s+(?:tool|server|function|plugin|extension)\s+is\s+(?:available|present|loaded|
        installed|enabled|connected|active)\b"""),
    _rx(r"""\bside[\s-]effects?\s+on\s+(?:the\s+|any\s+|all\s+|other\s+)*(?:also\s+)?(?:present\s+|available\s+)?
        [`'"]?\w+[`'"]?\s+(?:tools?|servers?|functions?)|\balso\s+(?:present|available|installed|loaded)\s+[`'"]?\w+"""),
    _rx(r"""\b(?:the\s+)?[`'"]?\w+[`'"]?\s+(?:tool|function)(?:\s+(?:of|from|on|in)\s+(?:the\s+)?\w+\s+server)?\s+
        (?:must|should|shall|has\s+to)\s+[^.\n]{0,40}?\b(?:send|forward|route|redirect|cc|bcc|use|copy|include)\b
        [^.\n]{0,60}?(?:@|https?://|\ball\b)"""),
    _rx(r"""\b(?:all|every|any)\s+(?:other\s+)?(?:emails?|messages?|payments?|transfers?|invoices?|funds)\b[^.\n]{0,40}?
        (?:must|should|shall|has\s+to|have\s+to)\s+(?:always\s+)?(?:also\s+)?(?:be\s+)?(?:sent|forwarded|routed|
        redirected|cc'?d|bcc'?d|copied|addressed|paid)\s+(?:to|via)\b"""),
    _rx(r"""\b(?:instead\s+of|rather\s+than|never\s+use)\s+(?:the\s+)?(?:other\s+)?[`'"]?[\w']+[`'"]?\s+(?:tool|server)
        \b[^.\n]{0,60}?\b(?:always|must)\b"""),
)

# Files whose contents are secrets: naming one with a verb that reads it is enough.
SECRET_FILE = _rx(r"""\.ssh[/\\](?!config\b|known_hosts\b|authorized_keys\b)(?![\w.-]*\.pub\b)[\w.-]+|
    \bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws[/\\]credentials\b|\.(?:azure|gnupg)[/\\][\w./-]*|
    \.kube[/\\]config\b|\.docker[/\\]config\.json\b|\.config[/\\]gcloud\b[\w./-]*|\.(?:netrc|git-credentials|pgpass)\b|
    \bmcp\.json\b|claude_desktop_config\.json|/etc/(?:shadow|sudoers)\b|\bwallet\.dat\b|\bLogin\s+Data\b|
    \bcookies\.sqlite\b|\bprivate[_-]?key\.pem\b""")
# Places that hold secrets among other things (a dotenv tool loads `.env`): only sending them counts.
SECRET_PLACE = _rx(r"""(?:~|\$HOME|%USERPROFILE%)[/\\]\.ssh\b(?![/\\][\w.-])|(?<![\w-])\.env(?:\.\w+)?\b(?![-\w])|
    \.(?:npmrc|pypirc|bash_history|zsh_history)\b|\bkeychain\b|/etc/passwd\b|\bcredentials\.json\b|\.pem\b""")
SEND = rf"""(?:{TRANSFER}|dump)(?:s|es|ed|ing)?\b|\bcontents?\s+of\b|\b(?:its|their|the\s+file'?s?)\s+contents?\b|
    \b(?:into|in|as)\s+{PARAMETER}"""
READ = rf"(?:read|cat|print|output)(?:s|ing)?\b|{SEND}"
READ_RX, SEND_RX = _rx(rf"\b(?:{READ})"), _rx(rf"\b(?:{SEND})")
NEGATION = _rx(r"\b(?:never|not|no|without|don'?t|doesn'?t|cannot|won'?t)\b[^.\n]{0,25}$")

EXFIL_HOST = _rx(r"""\b(?:webhook\.site|[\w-]{0,63}requestbin\.\w+|pipedream\.net|
    [\w-]{1,63}\.ngrok(?:-free)?\.(?:io|app|dev)|ngrok\.io|burpcollaborator\.net|oastify\.com|interact\.sh|
    [\w-]{0,63}\.oast\.\w+|beeceptor\.com|hookbin\.com|
    requestcatcher\.com|canarytokens\.\w+|trycloudflare\.com|serveo\.net|localtunnel\.me|[\w-]{1,63}\.loca\.lt|
    postb\.in|ptsv2\.com|webhook\.cool|requestrepo\.com|dnslog\.cn|ceye\.io)\b""")
URL = re.compile(r"""(?:https?|wss?|ftp)://[^\s"'`<>)\]]*(?:<[^>\s]{1,40}>[^\s"'`)\]]*)*""", re.IGNORECASE)
PLACEHOLDER = re.compile(
    r"\$\{([^}]{1,60})\}|\{\{?([^{}]{1,60})\}?\}|<([^<>\s]{1,40})>|\[([A-Z_]{2,40})\]|\$([A-Z_][A-Z0-9_]{2,40})"
)
# Placeholder names (split at `_`, `-` and camelCase) that stand for a secret, or for what was said.
SECRET_TOKEN = re.compile(
    r"(?:api|access|private|secret|auth|session|bearer|refresh)?(?:key|token|secret|password|passwd|pwd|credentials?|"
    r"cookies?|session|ssh|rsa|env|environment|auth|bearer|history|conversation|transcript|prompt)"
)
CONTENT_TOKEN = re.compile(r"chat|conversation|history|memory|context|summary|clipboard|contents|transcript")
ID_TOKEN = re.compile(r"ids?|names?|slug|type|count|number|index|page|size|limit|format")


def _tokens(name: str) -> list[str]:
    return [t.lower() for t in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]


def _sensitive(name: str, in_query: bool) -> bool:
    tokens = _tokens(name)
    if not tokens or ID_TOKEN.fullmatch(tokens[-1]):
        return False  # {token_id}, {key_name}: which one, not the thing itself
    return any(SECRET_TOKEN.fullmatch(t) or (in_query and CONTENT_TOKEN.fullmatch(t)) for t in tokens)


BASE64 = re.compile(r"(?<![\w+/=.-])[A-Za-z0-9+/]{48,}={0,2}(?![\w+/=.-])|(?<![\w=.-])[A-Za-z0-9_-]{64,}(?![\w=.-])")


def _marked(text: str, parameters: tuple[str, ...]) -> tuple[str, list[int]]:
    """The text with the item's own parameter names quoted where they stand bare ("as the genre" →
    "as the `genre`"), so the rules that look for a parameter see one; and, for each index of it, the
    index in the text (a reason quotes the text as it is)."""
    names = [n for n in parameters if len(n) > 2 and re.fullmatch(r"[\w.-]+", n)]
    if not names:
        return text, list(range(len(text) + 1))
    bare = re.compile(
        rf"(?<![`'\"‘“\w.-])(?:{'|'.join(re.escape(n) for n in sorted(names, key=len, reverse=True))})(?![`'\"’”\w-])"
    )
    view, origin, last = "", list[int](), 0
    for m in bare.finditer(text):
        view += f"{text[last : m.start()]}`{m.group()}`"
        origin += [*range(last, m.start()), m.start(), *range(m.start(), m.end()), m.end()]
        last = m.end()
    return view + text[last:], origin + list(range(last, len(text) + 1))


def _instructions(where: str, text: str, parameters: tuple[str, ...]) -> Iterator[Finding]:
    view, origin = _marked(text, parameters)

    def quote(m: re.Match[str]) -> str:
        return snippet(text, origin[m.start()], origin[m.end()])

    for label, rule in INSTRUCTION_RULES:
        for m in rule.finditer(view):
            if label in QUOTED_OK and _quoted(view, m.start(), m.end()):
                continue  # named, not said: "detects phrases such as 'ignore previous instructions'"
            yield Finding("hidden-instructions", where, f"{label}: {quote(m)}")
            break
    for rule in SHADOW_RULES:
        if shadow := rule.search(view):
            yield Finding("tool-shadowing", where, f"text that sets other tools' behaviour: {quote(shadow)}")
            break
    for pattern, verbs in ((SECRET_FILE, READ_RX), (SECRET_PLACE, SEND_RX)):
        hit = next((m for m in pattern.finditer(view) if _verb_near(verbs, view, m.start(), m.end())), None)
        if hit is not None:
            reason = f"a place that holds secrets, with a verb that reads or sends it: {quote(hit)}"
            yield Finding("secret-path", where, reason)
            return


def _quoted(text: str, start: int, end: int) -> bool:
    before, after = text[max(0, start - 2) : start], text[end : end + 2]
    return any(q in before for q in "'\"‘“`") and any(q in after for q in "'\"’”`")


def _verb_near(verbs: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """A verb in the same sentence as the path (within 120 characters), not negated ("never reads")."""
    lo = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start), start - 120, -1) + 1
    hi = min(x for x in (text.find(". ", end), text.find("\n", end), end + 120, len(text)) if x >= 0)
    for verb in verbs.finditer(text, lo, hi):
        if not NEGATION.search(text[max(lo, verb.start() - 40) : verb.start()]):
            return True
    return False


def _urls(where: str, text: str) -> Iterator[Finding]:
    if m := EXFIL_HOST.search(text):
        why = "a request-capture or tunnel host, which keeps what is sent to it"
        yield _found("exfil-url", where, why, text, m.start(), m.end())
        return
    for m in URL.finditer(text):
        rest = m.group().split("://", 1)[1]
        path, _, query = rest.partition("?")
        path = path[path.find("/") :] if "/" in path else ""
        for part, in_query in ((path, False), (query, True)):
            for p in PLACEHOLDER.finditer(part):
                name = next(g for g in p.groups() if g)
                if _sensitive(name, in_query):
                    why = f"a URL with a placeholder for a secret or content ({escaped(name)}), carrying it out"
                    yield _found("exfil-url", where, why, text, m.start(), m.end())
                    return


def _base64(where: str, text: str) -> Iterator[Finding]:
    for m in BASE64.finditer(text):
        blob = m.group()
        classes = sum(bool(re.search(c, blob)) for c in ("[a-z]", "[A-Z]", "[0-9]"))
        if classes == 3 and not re.search(r"[a-z]{2,}[A-Z][a-z]+[A-Z][a-z]+[A-Z]", blob[:30]) and _varied(blob):
            why = f"a {len(blob)}-character base64 run, an encoded payload nobody can read at a glance"
            yield _found("base64-blob", where, why, text, m.start(), min(m.end(), m.start() + 40))
            return


def _varied(blob: str) -> bool:
    """Encoded bytes switch case and digits often; a long identifier (camelCase words) does not."""
    switches = sum(1 for a, b in itertools.pairwise(blob) if a.isdigit() != b.isdigit() or a.isupper() != b.isupper())
    return switches >= len(blob) // 4


def scan_text(where: str, text: str, prose: bool = True, parameters: tuple[str, ...] = ()) -> list[Finding]:
    """Findings in one text; `prose` (descriptions, defaults) also gets the wording rules, which know
    the item's `parameters` (so "pass it as the genre" names the `genre` property)."""
    oversized = len(text) > MAX_TEXT
    if oversized:  # (the rules' cost grows with a text's length: what lies past this is not read)
        text = text[:MAX_TEXT]
    found = [*_characters(where, text), *_base64(where, text), *_urls(where, text)]
    if prose:
        found += _instructions(where, text, parameters)
    if oversized:
        reason = f"a text of more than {MAX_TEXT:,} characters, read only that far: what follows is unchecked"
        found.append(Finding("oversized-text", where, reason))
    return found


# Definitions ---------------------------------------------------------------------------------------


def texts(kind: Kind, item: Mapping[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(where, text, prose) for every text of an item a model reads."""
    for key in ("name", "title", "description"):
        if isinstance(item.get(key), str):
            yield key, item[key], key != "name"
    if kind == "tool":
        for key in ("inputSchema", "outputSchema"):
            if isinstance(item.get(key), Mapping):
                yield from _schema(key, item[key])
        annotations = item.get("annotations")
        if isinstance(annotations, Mapping) and isinstance(annotations.get("title"), str):
            yield "annotations.title", annotations["title"], True
    elif kind == "prompt":
        for i, arg in enumerate(item.get("arguments") or []):
            if isinstance(arg, Mapping):
                label = f"arguments.{arg.get('name', i)}"
                for key in ("name", "title", "description"):
                    if isinstance(arg.get(key), str):
                        yield f"{label}.{key}", arg[key], key != "name"
    else:
        for key in ("uriTemplate", "uri", "mimeType"):
            if isinstance(item.get(key), str):
                yield key, item[key], False


def _schema(where: str, node: Any, depth: int = 0) -> Iterator[tuple[str, str, bool]]:
    if depth > 32 or not isinstance(node, Mapping):
        return
    for key in ("title", "description", "default", "const", "enum", "examples"):
        values = node.get(key)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str):
                yield f"{where}.{key}", value, True
    for key in ("properties", "patternProperties", "$defs", "definitions"):
        children = node.get(key)
        if isinstance(children, Mapping):
            for name, child in children.items():
                yield f"{where}.{key}.{name}", str(name), False
                yield from _schema(f"{where}.{key}.{name}", child, depth + 1)
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        yield from _schema(f"{where}.{key}", node.get(key), depth + 1)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, child in enumerate(node.get(key) or [] if isinstance(node.get(key), list) else []):
            yield from _schema(f"{where}.{key}.{i}", child, depth + 1)


def scan(kind: Kind, item: Mapping[str, Any]) -> list[Finding]:
    """Every finding in a tool, prompt, resource or resource template; [] when it looks clean."""
    fields = list(texts(kind, item))
    parameters = tuple(sorted({text for where, text, _ in fields if _is_parameter(where)}))
    return [finding for where, text, prose in fields for finding in scan_text(where, text, prose, parameters)]


def _is_parameter(where: str) -> bool:
    parts = where.split(".")
    return (len(parts) >= 2 and parts[-2] == "properties") or (parts[0] == "arguments" and parts[-1] == "name")


def summary(findings: list[Finding]) -> str:
    """One line for a refusal or a status list: the codes and the first reason."""
    if not findings:
        return ""
    codes = ", ".join(dict.fromkeys(f.code for f in findings))
    return f"looks like tool poisoning ({codes}): {findings[0].reason} (in {findings[0].where})"
