"""Terminal text that is never cut: what a user must read or copy survives any width.

rich crops a line at the console width and folds a word longer than the width in two (a
path split over lines cannot be found or pasted). Here a path, command or value is one
unbroken line (`whole`: the terminal folds it visually, a copy is whole), and prose wraps at
spaces only (`Prose`): a word longer than the line stays in one piece. Print both with
``soft_wrap=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

_WORD = re.compile(r"\S+\s*")


def whole(text: str, style: str = "", indent: int = 0) -> Text:
    """A line that is never wrapped, folded or cropped (print with soft_wrap=True)."""
    return Text(" " * indent + text, style=style, no_wrap=True, overflow="ignore")


def _offsets(plain: str, width: int) -> Iterator[int]:
    """Where lines start when wrapping at spaces only (never inside a word)."""
    start = 0
    for m in _WORD.finditer(plain):
        if m.start() > start and len(plain[start : m.start() + len(m.group().rstrip())]) > width:
            yield m.start()
            start = m.start()


class Prose:
    """Wrapped at spaces, indented; a word longer than the line is left whole."""

    def __init__(self, text: str | Text, indent: int = 0, style: str = "") -> None:
        self.text = Text(text, style=style) if isinstance(text, str) else text
        self.indent = indent

    @classmethod
    def markup(cls, markup: str, indent: int = 0) -> Prose:
        return cls(Text.from_markup(markup), indent)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(20, options.max_width - self.indent)
        for para in self.text.split("\n"):
            for piece in para.divide(list(_offsets(para.plain, width))):
                piece.rstrip()
                line = Text(" " * self.indent) + piece
                line.no_wrap, line.overflow = True, "ignore"
                yield line
