"""Host strings are data on a terminal and in markdown, never escape codes or markup.

Paths, unit names, log lines and error messages come from hosts other people write. On a
terminal an ANSI/OSC sequence in them can recolour, hide or rewrite what the operator reads
(or set the window title, or a hyperlink); in rich, `[bold]` or a stray `[/]` in them is
markup (the stray one raises MarkupError and used to abort a run report); in markdown, `|`,
backticks, `<script>` or a newline can break out of a table cell or code span. Every host string
goes through one of the functions here before it is shown.
"""

from __future__ import annotations

import re

from remedy.textchars import C0 as _C0
from remedy.textchars import CONTROLS as CONTROLS
from remedy.textchars import JSON_RAW as _JSON_RAW
from remedy.textchars import needs_escape as needs_escape

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def strip_controls(text: str, *, newlines: bool = True) -> str:
    """Remove control characters (escape sequences lose their ESC and become visible text);
    newlines=False also folds newlines to spaces (one table cell, one line)."""
    text = CONTROLS.sub("", text)
    return text if newlines else text.replace("\n", " ").replace("\t", " ")


def json_safe(text: str) -> str:
    """A JSON document with DEL, C1 and bidi controls written as \\uXXXX escapes: the same
    data, but `--json` read on a terminal cannot carry a one-byte CSI or reorder a line.
    Outside strings JSON is ASCII, so every such character is inside a string, where an
    escape means exactly that character."""
    if not _JSON_RAW.search(text):
        return text
    return _JSON_RAW.sub(lambda m: _u_escape(ord(m.group())), text)


def _u_escape(c: int) -> str:
    """JSON's escape of one character: beyond U+FFFF a surrogate pair (RFC 8259 section 7)."""
    if c > 0xFFFF:
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"


def file_safe(text: str) -> str:
    """Text of a file remedy writes (`--out` plan JSON, `--report` HTML/markdown, a playbook,
    also on stdout): `cat` of it on a terminal must do nothing but print. DEL, C1 and bidi
    controls become `\\uXXXX` (json_safe: the same data in JSON and in a YAML double-quoted
    string, visible text elsewhere); other C0 controls but newline and tab are removed (JSON
    never holds one raw; an HTML report held the host's ESC and BEL: OSC 52, ESC[2J)."""
    return _C0.sub("", json_safe(text))


def term(text: object) -> str:
    """A host string for rich markup: controls removed, `[` escaped."""
    from rich.markup import escape  # rich only where something is printed for a terminal

    return escape(strip_controls(str(text)))


def md(text: object) -> str:
    """A host string as markdown prose or a table cell: controls and newlines removed, every
    character markdown or HTML would act on backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", strip_controls(str(text), newlines=False))


def md_code(text: object) -> str:
    """A host string as an inline code span: fenced with more backticks than it holds, so a
    backtick in it cannot close the span (CommonMark 6.1); `|` escaped for table cells."""
    s = strip_controls(str(text), newlines=False)
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"


def md_block(text: object) -> tuple[str, str]:
    """(fence, body) for a fenced code block: the fence is longer than any backtick run in
    the body, so nothing in it can end the block."""
    s = strip_controls(str(text))
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    return "`" * max(3, run + 1), s


def fence_len(text: object) -> int:
    """Backticks a fence around text needs: one more than its longest run."""
    return max((len(m) for m in re.findall(r"`+", str(text))), default=0) + 1
