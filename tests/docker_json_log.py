"""How Docker's json-file driver writes a log line (moby's jsonfilelog): shared by the tests
of the unwrapping (test_evidence_docker_json) and its fuzzing (test_fuzz_session33)."""

from __future__ import annotations


def moby_escape(s: str) -> str:
    """s as a JSON string body the way moby writes it: '<', '>', '&' and controls as \\u00XX."""
    out = []
    for ch in s:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ch in "<>&":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
