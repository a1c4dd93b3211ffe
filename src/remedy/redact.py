"""Secrets never leave the host: one redaction used at every boundary.

Inference hosts carry HF_TOKEN, API keys and package-index URLs with credentials in their
environment, and remedy reads that environment (login shell, units, EnvironmentFiles). Nothing
in remedy needs those values, so they are replaced by REDACTED where facts are collected, and
again wherever text leaves remedy: plans, reports (terminal, markdown, JSON), the run log, the
host journal and error messages (a command's output can echo a secret remedy never saw).
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

_SECRET_WORDS = {
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "KEY",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "COOKIE",
    "AUTH",
    "AUTHTOKEN",
}
# words that make a name look secret but whose values are paths or flags, not secrets
_NOT_SECRET_SUFFIX = ("_SOCK", "_FILE", "_PATH", "_DIR")
# secret wherever they appear in a name (DBPASSWORD, MYSQL_ROOT_PASSWORD_HASH, PGPASSWORD)
_SECRET_INFIX = ("PASSWORD", "PASSWD", "SECRET", "APIKEY", "AUTHORIZATION")

# scheme://user:password@host (any scheme; the user part alone is no secret but is dropped too)
_URL_CRED = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<cred>[^/\s@'\"]+)@")
# NAME=value, NAME: value, "NAME": "value", 'NAME'='value' in free text (env dumps, JSON, YAML,
# unit files); the name is judged by is_secret_name
_VALUE = r"""(?:\\"(?P<jq>(?:(?!\\").)*)\\"|"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>[^']*)'|(?P<bare>(?:[^\s'",;}\]\\]|\\.)+))"""
_ASSIGN = re.compile(
    r"""(?P<lead>(?<![A-Za-z0-9_.-])(?P<q>\\?["']?))(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"""
    r"""(?:\\?["'])?"""
    r"(?P<sep>[ \t]*(?:=|:)[ \t]*)" + _VALUE
)
# --api-key X, --token=X, -password X (a command line, an ExecStart)
_FLAG = re.compile(
    r"(?P<flag>(?<![A-Za-z0-9_-])--?(?P<name>[A-Za-z][A-Za-z0-9_-]*))(?P<sep>=|[ \t]+)(?!-)"
    + _VALUE
)
# Authorization: Bearer X / Basic X (an HTTP header in a curl line, a log, an ExecStart)
_AUTH = re.compile(
    r"(?i)(?P<head>\b(?:proxy-)?authorization\b(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?"
    r"(?:(?:bearer|basic|token|digest|negotiate)[ \t]+)?)(?P<cred>[^\s\"',;\\]+)"
)
_BEARER = re.compile(r"(?i)(?P<head>\bbearer[ \t]+)(?P<cred>[A-Za-z0-9._~+/=-]{8,})")
# well-known token shapes, wherever they appear
_TOKENS = re.compile(
    r"\b(hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,})\b"
)


def is_secret_name(name: str) -> bool:
    """HF_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, DB_PASSWORD, PGPASSWORD, api-key,
    HTTP_AUTH: yes. TIKTOKEN_CACHE_DIR, TOKENIZERS_PARALLELISM, SSH_AUTH_SOCK, KEY_FILE: no
    (whole `_`/`-`/`.`-separated words, plus PASSWORD/SECRET anywhere; a name ending in
    _SOCK/_FILE/_PATH/_DIR holds a location)."""
    hit = _SECRET_NAME.get(name)  # a big host's facts repeat the same few hundred keys
    if hit is None:
        if len(_SECRET_NAME) > 8192:
            _SECRET_NAME.clear()
        hit = _SECRET_NAME[name] = _is_secret_name(name)
    return hit


_SECRET_NAME: dict[str, bool] = {}


def _is_secret_name(name: str) -> bool:
    upper = re.sub(r"[-.]", "_", name.upper())
    if upper.endswith(_NOT_SECRET_SUFFIX):
        return False
    if any(w in upper for w in _SECRET_INFIX):
        return True
    return any(w in _SECRET_WORDS for w in upper.split("_"))


def _value_sub(m: re.Match[str]) -> str:
    """Keep the value's quoting, replace its content."""
    if m["jq"] is not None:  # a quoted value inside a JSON string: \"…\"
        v, q = m["jq"], '\\"'
    elif m["dq"] is not None:
        v, q = m["dq"], '"'
    elif m["sq"] is not None:
        v, q = m["sq"], "'"
    else:
        v, q = m["bare"], ""
    if v in ("", REDACTED):
        return m[0]
    group = {'"': "dq", "'": "sq", "": "bare"}.get(q, "jq")
    start = m.start(group)
    if (
        not q
        and m.groupdict().get("q") == '"'
        and m.string[m.end("name") : m.start("sep")] == '"'
        and ":" in m["sep"]
    ):
        # a JSON member's bare value ("TOKEN": 0, true, null): a quoted string keeps it JSON
        return m[0][: start - m.start()] + '"' + REDACTED + '"'
    return m[0][: start - m.start()] + REDACTED + q


def _sub_values(pat: re.Pattern[str], text: str, secret: Any) -> str:
    """Like pat.sub, but a match whose name is not secret consumes only up to its separator:
    its value (`"b": "x HF_TOKEN=…"`) is scanned again for secrets inside it."""
    out: list[str] = []
    pos = 0
    while True:
        m = pat.search(text, pos)
        if m is None:
            out.append(text[pos:])
            return "".join(out)
        if secret(m):
            out.append(text[pos : m.start()] + _value_sub(m))
            pos = m.end()
        else:
            out.append(text[pos : m.end("sep")])
            pos = m.end("sep")


def redact_text(text: str) -> str:
    """Credentials in URLs, secret-named assignments (shell, JSON, YAML), secret-named
    command-line flags, Authorization headers and known token shapes in free text."""
    if not text:
        return text
    if len(text) > 200:
        return _redact_text(text)
    hit = _REDACTED_TEXT.get(text)  # versions, paths, names: short and repeated
    if hit is None:
        if len(_REDACTED_TEXT) > 16384:
            _REDACTED_TEXT.clear()
        hit = _REDACTED_TEXT[text] = _redact_text(text)
    return hit


_REDACTED_TEXT: dict[str, str] = {}


def _redact_text(text: str) -> str:
    # Each pass runs only where its pattern could match (what it must contain): a 30 KB plan
    # went through all six in ~15 ms, most of it in the NAME=value pass stopping at every
    # JSON key. A skipped pass is one that would have changed nothing.
    low = _ascii_lower(text)
    if "://" in text and "@" in text and _URL_HINT.search(text):
        text, low = _pass(text, low, _URL_CRED, lambda m: m["scheme"] + REDACTED + "@")
    if _contains(text, low, "authorization", _AUTH_HINT):
        text, low = _pass(
            text, low, _AUTH, lambda m: m[0] if m["cred"] == REDACTED else m["head"] + REDACTED
        )
    if _contains(text, low, "bearer", _BEARER_HINT):
        text, low = _pass(
            text, low, _BEARER, lambda m: m[0] if m["cred"] == REDACTED else m["head"] + REDACTED
        )
    if _may_name_secret(text, low):
        assigned = _sub_secret_values(
            _ASSIGN,
            text,
            lambda m: is_secret_name(m["name"]) and not m["name"].lower().endswith("authorization"),
            _starts(text, low, _NAME_CHARS),
            "name",
            2,
        )
        if assigned != text:
            text, low = assigned, _ascii_lower(assigned)
        text = _sub_secret_values(
            _FLAG,
            text,
            lambda m: is_secret_name(m["name"]),
            _starts(text, low, _FLAG_CHARS),
            "flag",
            0,
        )
    if any(t in text for t in ("hf_", "sk-", "AKIA", "xox")) or (
        "gh" in text and _GH_HINT.search(text)
    ):
        text = _TOKENS.sub(REDACTED, text)
    return text


def _pass(text: str, low: str | None, pat: re.Pattern[str], repl: Any) -> tuple[str, str | None]:
    new = pat.sub(repl, text)
    return (new, low) if new == text else (new, _ascii_lower(new))


# The only characters re's IGNORECASE matches to an ASCII letter besides the letters
# themselves (U+0130 U+0131 U+017F U+212A; tests/test_startup.py checks this against the
# running Python's re). Without them, a case-insensitive pattern of ASCII letters matches
# where the text with its letters lowered holds the lowercase word.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def _ascii_lower(text: str) -> str | None:
    """`text` lowered, character for character (positions kept), when its ASCII letters are
    the only characters that case-fold onto ASCII letters; else None (use the regexes)."""
    if text.isascii():
        return text.lower()
    if any(c in text for c in _FOLDS_TO_ASCII):
        return None
    low = text.lower()
    return low if len(low) == len(text) else None


def _contains(text: str, low: str | None, word: str, hint: re.Pattern[str]) -> bool:
    """Whether `text` holds `word` in any case, as the (?i) pattern `hint` would find it."""
    return word in low if low is not None else hint.search(text) is not None


# what _AUTH and _BEARER cannot match without (same flags as theirs), and a _TOKENS shape
_AUTH_HINT = re.compile(r"(?i)authorization")
_BEARER_HINT = re.compile(r"(?i)bearer")
_GH_HINT = re.compile(r"gh[pousr]_")
# what _URL_CRED cannot match without: '://' then its credential and '@'. A diagnosis quotes
# documentation URLs (https://docs.nvidia.com/...) and holds an '@' somewhere; searched from
# the '://' only, this skips a ~3 ms pass over a ~90 KB one that would change nothing
_URL_HINT = re.compile(r"://[^/\s@'\"]+@")
# every secret name (is_secret_name) contains one of these, in any case: each word of
# _SECRET_WORDS and _SECRET_INFIX does
_FRAGMENTS = ("token", "secret", "pass", "key", "credential", "cookie", "auth")
_FRAGMENT = re.compile("(?i)" + "|".join(_FRAGMENTS))
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _fragments_at(text: str, low: str | None) -> list[int]:
    """Where a fragment starts in `text` (every place; more where `low` is None)."""
    if low is None:
        return [m.start() for m in _FRAGMENT.finditer(text)]
    out = []
    for f in _FRAGMENTS:
        i = low.find(f)
        while i >= 0:
            out.append(i)
            i = low.find(f, i + 1)
    return out


def _may_name_secret(text: str, low: str | None) -> bool:
    """Whether _ASSIGN or _FLAG could find a secret name in `text`. An _ASSIGN name is a
    whole run of [A-Za-z0-9_.-] (its lookbehind and what must follow it end it there); a
    _FLAG name is one '.'-separated piece of such a run less one or two leading dashes.
    A secret name contains a fragment, so only the runs around a fragment are judged; when
    none of their candidate names is secret, both passes would change nothing."""
    seen: set[str] = set()
    for at in _fragments_at(text, low):
        start = end = at
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
        run = text[start:end]
        if run in seen:
            continue
        seen.add(run)
        if is_secret_name(run):
            return True
        for piece in run.split("."):
            if any(is_secret_name(piece[k:]) for k in (0, 1, 2)):
                return True
    return False


_FLAG_CHARS = _NAME_CHARS - {"."}


def _starts(text: str, low: str | None, chars: frozenset[str]) -> list[int]:
    """Where each run of ``chars`` around a fragment starts, in text order: where a match
    naming it has its name (_ASSIGN, after a lead of up to two characters: a backslash and
    a quote) or its dashes (_FLAG)."""
    runs: set[int] = set()
    for at in _fragments_at(text, low):
        start = at
        while start > 0 and text[start - 1] in chars:
            start -= 1
        runs.add(start)
    return sorted(runs)


def _sub_secret_values(
    pat: re.Pattern[str], text: str, secret: Any, starts: list[int], group: str, lead: int
) -> str:
    """``_sub_values`` (the same text out), matching ``pat`` only where a match's ``group``
    starts at one of ``starts``: a secret name holds a fragment and is a whole run of its
    pattern's name characters, so a match elsewhere names nothing secret; and such a match
    only skips its lead, name and separator, where no match can start, so leaving it out
    moves no later match. The ~2,000 JSON keys of a diagnosis are then never searched from
    (~25 ms of a ~90 KB one)."""
    out: list[str] = []
    pos = 0
    for s in starts:
        for at in range(max(pos, s - lead), s + 1):
            m = pat.match(text, at)
            if m is None or m.start(group) != s:
                continue  # no match here, or one naming another run (``p=`` before ``KEY=``)
            if secret(m):
                out.append(text[pos : m.start()] + _value_sub(m))
                pos = m.end()
            break
    out.append(text[pos:])
    return "".join(out)


def redact_value(name: str, value: str) -> str:
    """One environment value: all of it for a secret name, else only what looks secret."""
    if is_secret_name(name) and value:
        return REDACTED
    return redact_text(value)


def redact_env(env: dict[str, str]) -> list[str]:
    """Redact an environment in place; returns the names whose value changed (sorted)."""
    changed = []
    for k, v in env.items():
        new = redact_value(k, v)
        if new != v:
            env[k] = new
            changed.append(k)
    return sorted(changed)


def redact_facts(facts: Any) -> Any:
    """A Facts model with every secret redacted: done where facts are made or loaded, before
    anything digests them, so a saved plan's digest is over what the file shows."""
    data = facts.model_dump(mode="json")
    clean = redact_obj(data)
    if clean == data:
        return facts
    return type(facts).model_validate(clean)


def redact_obj(obj: Any) -> Any:
    """A JSON-like structure (a plan, a report, a journal record) with every string redacted
    and the values of secret-named string keys replaced."""
    if isinstance(obj, dict):
        return {
            k: (
                REDACTED
                if isinstance(k, str) and isinstance(v, str) and v and is_secret_name(k)
                else redact_obj(v)
            )
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v) for v in obj)
    if isinstance(obj, str):
        return redact_text(obj)
    return obj
