"""systemd's string rules, ported from systemd 252 so remedy reads a value exactly as PID 1 does.

Why a port and not a regex: the value a service sees depends on details no ad-hoc parser gets
right: quotes may open mid-word (`A="b c"d` is `A=b cd`), backslash escapes work inside single
quotes too, `\\x`/octal escapes produce raw bytes that must then be valid UTF-8, an invalid escape
drops the REST of an `Environment=` line (not just the word), and `systemctl show` re-quotes
values its own way. Each function names the systemd function it mirrors
(src/basic/extract-word.c, escape.c, env-util.c, utf8.c, fileio.c of v252).
"""

from __future__ import annotations

from collections.abc import Mapping

WHITESPACE = " \t\n\r"
COMMENTS = "#;"
# escape.h: characters after which shell_maybe_quote() quotes, and the ones it backslash-escapes
SHELL_NEED_ESCAPE = '"\\`$'
SHELL_NEED_QUOTES = SHELL_NEED_ESCAPE + "*?[" + "'()<>|&;!"
LONG_LINE_MAX = 1024 * 1024  # conf-parser.h: longest logical line systemd accepts
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_HEX = "0123456789abcdefABCDEF"


class WordError(ValueError):
    """extract_first_word() returned -EINVAL: an unknown escape or unbalanced quotes."""


# --------------------------------------------------------------------------------------------
# UTF-8 and names (utf8.c, env-util.c)
# --------------------------------------------------------------------------------------------


def unichar_is_valid(ch: int) -> bool:
    """utf8.c unichar_is_valid(): no surrogates, no U+FDD0..FDEF, no U+xxFFFE/FFFF."""
    if ch >= 0x110000 or (ch & 0xFFFFF800) == 0xD800:
        return False
    if 0xFDD0 <= ch <= 0xFDEF:
        return False
    return (ch & 0xFFFE) != 0xFFFE


def utf8_decode(data: bytes) -> str | None:
    """The text if systemd's utf8_is_valid() accepts the bytes, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(ord(c) >= 0xFDD0 and not unichar_is_valid(ord(c)) for c in text):
        return None
    return text


def env_name_is_valid(name: str) -> bool:
    """env-util.c env_name_is_valid(): bash's character set, not starting with a digit."""
    return bool(name) and not name[0].isdigit() and all(c in _NAME_CHARS for c in name)


def env_assignment_is_valid(assignment: str) -> bool:
    """env-util.c env_assignment_is_valid(): NAME=VALUE with a valid name (values may hold NL)."""
    name, eq, _ = assignment.partition("=")
    return bool(eq) and env_name_is_valid(name)


# --------------------------------------------------------------------------------------------
# Escapes and words (escape.c cunescape_one, extract-word.c extract_first_word)
# --------------------------------------------------------------------------------------------

_SIMPLE_ESCAPES = {
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "n": b"\n",
    "r": b"\r",
    "t": b"\t",
    "v": b"\v",
    "\\": b"\\",
    '"': b'"',
    "'": b"'",
    "s": b" ",
}


def _hexval(text: str, start: int, count: int) -> int | None:
    digits = text[start : start + count]
    if len(digits) != count or any(c not in _HEX for c in digits):
        return None
    return int(digits, 16)


def cunescape_one(text: str, pos: int) -> tuple[bytes, int]:
    """Decode the escape whose letter is text[pos]; returns (bytes, chars consumed).

    Raises WordError where systemd returns -EINVAL (unknown letter, NUL, bad digits).
    """
    c = text[pos] if pos < len(text) else ""
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], 1
    if c == "x":
        v = _hexval(text, pos + 1, 2)
        if v is None or v == 0:
            raise WordError("bad \\x escape")
        return bytes([v]), 3
    if c in ("u", "U"):
        n = 4 if c == "u" else 8
        v = _hexval(text, pos + 1, n)
        if v is None or v == 0 or (c == "U" and not unichar_is_valid(v)):
            raise WordError(f"bad \\{c} escape")
        if v >= 0x110000:
            raise WordError("bad \\U escape")
        return chr(v).encode("utf-8", "surrogatepass"), n + 1
    if c and c in "01234567":
        digits = text[pos : pos + 3]
        if len(digits) != 3 or any(d not in "01234567" for d in digits):
            raise WordError("bad octal escape")
        v = int(digits, 8)
        if v == 0 or v > 255:
            raise WordError("bad octal escape")
        return bytes([v]), 3
    raise WordError(f"unknown escape \\{c}")


def _enc(c: str) -> bytes:
    return c.encode("utf-8", "surrogateescape")


def extract_first_word(
    text: str, pos: int | None, *, relax_escapes: bool = False
) -> tuple[bytes | None, int | None]:
    """One word with EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE (the flags Environment= and ExecStart= use).

    Returns (word, next position); (None, None) at the end. The word is bytes because escapes
    produce raw bytes; the caller decides whether they are valid UTF-8. relax_escapes is
    EXTRACT_UNESCAPE_RELAX (keep unknown escapes verbatim), which only ExecStart= retries with.
    """
    if pos is None:
        return None, None
    n = len(text)
    while pos < n and text[pos] in WHITESPACE:
        pos += 1
    if pos >= n:
        return None, None
    out = bytearray()
    quote = ""
    backslash = False
    while True:
        c = text[pos] if pos < n else ""
        if backslash:
            if not c:
                if relax_escapes and not quote:
                    out += b"\\"
                    return bytes(out), None
                raise WordError("trailing backslash")
            try:
                val, used = cunescape_one(text, pos)
            except WordError:
                if not relax_escapes:
                    raise
                out += b"\\" + _enc(c)
            else:
                out += val
                pos += used - 1
            backslash = False
        elif quote:
            while True:
                c = text[pos] if pos < n else ""
                if not c:
                    raise WordError("unbalanced quoting")
                if c == quote:
                    quote = ""
                    break
                if c == "\\":
                    backslash = True
                    break
                out += _enc(c)
                pos += 1
        else:
            while True:
                c = text[pos] if pos < n else ""
                if not c:
                    return bytes(out), None
                if c in "'\"":
                    quote = c
                    break
                if c == "\\":
                    backslash = True
                    break
                if c in WHITESPACE:
                    while pos < n and text[pos] in WHITESPACE:
                        pos += 1
                    return bytes(out), (pos if pos < n else None)
                out += _enc(c)
                pos += 1
        pos += 1


# --------------------------------------------------------------------------------------------
# Lines (fileio.c read_line_full)
# --------------------------------------------------------------------------------------------


def split_lines(data: bytes) -> list[bytes]:
    """Lines as systemd's read_line() cuts them: \\n, \\r, \\r\\n, \\n\\r and NUL all end one."""
    lines: list[bytes] = []
    cur = bytearray()
    prev = 0  # bitmask of EOL markers seen right before: 1 NUL, 2 LF, 4 CR
    pending = False
    for b in data:
        eol = 2 if b == 0x0A else 4 if b == 0x0D else 1 if b == 0 else 0
        if pending and ((prev & 1) or eol == 0 or (prev & eol)):
            lines.append(bytes(cur))
            cur.clear()
            prev = 0
            pending = False
        if eol:
            prev |= eol
            pending = True
        else:
            cur.append(b)
    if pending or cur:
        lines.append(bytes(cur))
    return lines


# --------------------------------------------------------------------------------------------
# systemctl show quoting (escape.c shell_maybe_quote, bus-print-properties.c)
# --------------------------------------------------------------------------------------------

_CESCAPE = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
    "'": "\\'",
}


def _is_cc(c: str) -> bool:
    return ord(c) < 32 or ord(c) == 127


def shell_maybe_quote(s: str) -> str:
    """escape.c shell_maybe_quote(s, 0): how `systemctl show` prints one string of a list."""
    i = next(
        (j for j, c in enumerate(s) if _is_cc(c) or c in WHITESPACE or c in SHELL_NEED_QUOTES),
        -1,
    )
    if i < 0:
        return s
    out = ['"', s[:i]]
    for c in s[i:]:
        if _is_cc(c):
            out.append(_CESCAPE.get(c) or f"\\{ord(c):03o}")
        elif c == "\\" or c in SHELL_NEED_ESCAPE:
            out.append("\\" + c)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def format_show_environment(env: Mapping[str, str], *, prefix: bool = True) -> str:
    """The line `systemctl show -p Environment` prints for this environment list."""
    body = " ".join(shell_maybe_quote(f"{k}={v}") for k, v in env.items())
    return ("Environment=" + body) if prefix else body


# shell_maybe_quote() also backslash-escapes ` and $ (SHELL_NEED_ESCAPE): undo those too
_UNESCAPE_SHOW = {**_SIMPLE_ESCAPES, "`": b"`", "$": b"$"}


def split_show_list(text: str) -> list[str]:
    """One `systemctl show` string-list value (Environment=, DropInPaths=, Names=, …) -> items.

    The inverse of shell_maybe_quote() per item: items are space separated; an item that
    needed quoting is in double quotes with `\\ " ` $` backslash-escaped and control bytes
    C-escaped (\\n, \\ooo, \\xNN). systemd < 240 printed items unquoted, so a quote may also
    open mid-item. Raises ValueError for an unterminated quote or an unknown escape: that is
    not systemctl's output.
    """
    items: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        buf = bytearray()
        quoted = False
        while i < n and (quoted or text[i] != " "):
            c = text[i]
            if c == '"':
                quoted = not quoted
                i += 1
                continue
            if c == "\\" and quoted:
                nxt = text[i + 1 : i + 2]
                if nxt in _UNESCAPE_SHOW and nxt:
                    buf += _UNESCAPE_SHOW[nxt]
                    i += 2
                    continue
                hexv = _hexval(text, i + 2, 2) if nxt == "x" else None
                if hexv is not None:
                    buf.append(hexv)
                    i += 4
                    continue
                digits = text[i + 1 : i + 4]
                if len(digits) == 3 and all(d in "01234567" for d in digits):
                    buf.append(int(digits, 8) & 0xFF)
                    i += 4
                    continue
                raise ValueError(f"unknown escape in systemctl show output: {text!r}")
            buf += _enc(c)
            i += 1
        if quoted:
            raise ValueError(f"unterminated quote in systemctl show output: {text!r}")
        items.append(buf.decode("utf-8", "replace"))
    return items


def parse_show_environment(text: str) -> dict[str, str]:
    """`Environment=A=1 "B=x y" C=\\"q\\"` (or just the part after `=`) -> {"A": "1", ...}.

    The inverse of format_show_environment(), built on split_show_list(). An item without
    `=` is a piece of the previous value that old systemd (< 240, unquoted) split at a space:
    it is glued back. Later duplicates win, as in systemd's own list.
    """
    line = text.strip("\n")
    if "\n" in line:
        raise ValueError("parse_show_environment() takes one line")
    if line.startswith("Environment="):
        line = line[len("Environment=") :]
    env: dict[str, str] = {}
    last: str | None = None
    for item in split_show_list(line):
        name, eq, value = item.partition("=")
        if eq and env_name_is_valid(name):
            env.pop(name, None)
            env[name] = value
            last = name
        elif last is not None:
            env[last] += " " + item
        else:
            raise ValueError(f"not NAME=VALUE in systemctl show output: {item!r}")
    return env


# --------------------------------------------------------------------------------------------
# Writing values back (the inverse of extract_first_word + specifier expansion)
# --------------------------------------------------------------------------------------------


def quote_assignment(name: str, value: str) -> str:
    """`"NAME=value"` such that systemd reads back exactly NAME=value from Environment=.

    Inside double quotes only `\\` and `"` need escaping for extract_first_word(); `%` must be
    doubled because specifiers are expanded after unquoting. `$` stays as is: Environment=
    does no variable expansion. Raises ValueError for what cannot be written faithfully.
    """
    if not env_name_is_valid(name):
        raise ValueError(
            f"{name!r} is not a valid environment variable name "
            "(letters, digits and _, not starting with a digit)"
        )
    for c in value:
        if c in "\n\r":
            raise ValueError(
                f"the value of {name} contains a newline; remedy writes one Environment= "
                "line per variable and refuses multi-line values"
            )
        if _is_cc(c) and c != "\t":
            raise ValueError(f"the value of {name} contains the control character {c!r}")
    if utf8_decode(value.encode("utf-8", "surrogatepass")) is None:
        raise ValueError(f"the value of {name} is not valid UTF-8 as systemd checks it")
    body = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    line = f'"{body}"'
    if len(line) > LONG_LINE_MAX - 32:
        raise ValueError(f"the value of {name} is longer than systemd's line limit (1 MiB)")
    return line
