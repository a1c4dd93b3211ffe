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
    text = _URL_CRED.sub(lambda m: m["scheme"] + REDACTED + "@", text)
    text = _AUTH.sub(lambda m: m[0] if m["cred"] == REDACTED else m["head"] + REDACTED, text)
    text = _BEARER.sub(lambda m: m[0] if m["cred"] == REDACTED else m["head"] + REDACTED, text)
    text = _sub_values(
        _ASSIGN,
        text,
        lambda m: is_secret_name(m["name"]) and not m["name"].lower().endswith("authorization"),
    )
    text = _sub_values(_FLAG, text, lambda m: is_secret_name(m["name"]))
    return _TOKENS.sub(REDACTED, text)


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
