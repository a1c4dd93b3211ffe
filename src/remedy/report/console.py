"""The terminal console: rich, with every secret redacted before it is drawn.

Redacting only the bytes rich writes is not enough: styles put escape codes inside a
`NAME=value` pair (`[bold]HF_TOKEN[/]=...`) and wrapping folds a long URL with credentials
over two lines, so no pattern sees it whole. Text is therefore redacted as rich builds it
(after markup, before wrapping), and the written output once more with escape codes taken
out of the match (defence in depth: a renderable built some other way).
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.errors import MarkupError
from rich.segment import Segment
from rich.text import Text

from remedy.redact import redact_text
from remedy.report.safe import CONTROLS as _CONTROL_CHAR
from remedy.report.safe import strip_controls

# SGR colours and OSC 8 hyperlinks: what rich writes between characters
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def redact_rich_text(text: Text) -> Text:
    """The same Text, or a plain copy in its base style when something had to go."""
    plain = text.plain
    clean = redact_text(plain)
    if clean == plain:
        return text
    return Text(clean, style=text.style, justify=text.justify, no_wrap=text.no_wrap)


def redact_terminal(text: str) -> str:
    """Written output: redacted as is, or, when escape codes split a secret, without them."""
    text = redact_text(text)
    if "\x1b" not in text:
        return text
    plain = _ANSI.sub("", text)
    clean = redact_text(plain)
    return text if clean == plain else clean


class RedactingStream:
    """A text stream that redacts what is written."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(redact_terminal(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class RedactingConsole(Console):
    """rich's Console; strings and Text are redacted before layout (see the module doc)."""

    def on_broken_pipe(self) -> None:
        """`remedy plan | head`: rich exited 1 (which means "findings") without a word when
        the reader of stdout left; remedy's code for that is 141 (128 + SIGPIPE), as for
        its JSON (remedy.commands.exit_reader_left)."""
        import contextlib
        import os
        import sys

        self.quiet = True
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(141)

    def render_str(self, text: str, **kw: Any) -> Text:
        # no control character reaches the terminal (our own markup never holds one), and a
        # markup error in a string that escaped escaping is shown as text, never raised:
        # a report must always be printed
        text = strip_controls(text)
        try:
            rendered = super().render_str(text, **kw)
        except MarkupError:
            rendered = super().render_str(text, **{**kw, "markup": False})
        return redact_rich_text(rendered)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Any:
        # every segment of text, whatever built it (a Text of a log line, a table cell, a
        # renderable of ours), loses its control characters here: render_str alone missed
        # the Text objects built without markup. rich's own control segments (cursor moves
        # of a live display) carry `control` and are kept.
        if isinstance(renderable, Text):
            renderable = redact_rich_text(renderable)
        for seg in super().render(renderable, options):
            if seg.control is None and _CONTROL_CHAR.search(seg.text):
                seg = Segment(strip_controls(seg.text), seg.style)
            if seg.style is not None and seg.style.link:
                # remedy's own output has no hyperlinks: one can only come from host text
                # (`[link=…]` that escaped escaping), and would hide where it points
                seg = Segment(seg.text, seg.style.update_link(None), seg.control)
            yield seg


def terminal_console(stream: Any) -> Console:
    """COLUMNS=0 (some CI runners and `env -i` wrappers set it) made rich lay out at width
    0: every command printed nothing and exited 0. A width under 1 is taken as 80."""
    import os
    import re

    cols = os.environ.get("COLUMNS", "")
    width = 80 if re.fullmatch(r"[0-9]+", cols) and int(cols) < 1 else None
    # rich takes COLUMNS/LINES when str.isdigit(), then int() raises on `²` (exit 70): such a
    # value is left out of what rich sees, as if unset (the terminal's own size)
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "LINES") or not v.isdigit() or re.fullmatch(r"[0-9]+", v)
    }
    return RedactingConsole(
        file=RedactingStream(stream),
        highlight=False,
        soft_wrap=False,
        width=width,
        _environ=environ,
    )
