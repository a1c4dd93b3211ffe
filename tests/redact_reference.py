"""remedy.redact as it was before its passes were limited to where they can match: every pass
over the whole text, _sub_values searching from every position. The differential tests
(test_startup, test_redact) hold the fast redaction to the same output."""

from __future__ import annotations


def reference_redact(text: str) -> str:
    """remedy.redact._redact_text as it was: every pass over every text."""
    from remedy import redact as r

    text = r._URL_CRED.sub(lambda m: m["scheme"] + r.REDACTED + "@", text)
    text = r._AUTH.sub(lambda m: m[0] if m["cred"] == r.REDACTED else m["head"] + r.REDACTED, text)
    text = r._BEARER.sub(
        lambda m: m[0] if m["cred"] == r.REDACTED else m["head"] + r.REDACTED, text
    )
    text = r._sub_values(
        r._ASSIGN,
        text,
        lambda m: r.is_secret_name(m["name"]) and not m["name"].lower().endswith("authorization"),
    )
    text = r._sub_values(r._FLAG, text, lambda m: r.is_secret_name(m["name"]))
    return r._TOKENS.sub(r.REDACTED, text)
