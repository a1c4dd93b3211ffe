"""Expressions and templates of the knowledge files, evaluated in Jinja2's sandbox.

Rules, actions and messages are data; their conditions are Jinja2 expressions so that no
knowledge file can run Python. Everything is compiled once, at load time, so a typo is a
KnowledgeError naming file:line instead of a surprise during planning.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from jinja2 import TemplateSyntaxError, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from remedy.errors import KnowledgeError


def _quote(value: Any) -> str:
    if value is None or isinstance(value, Undefined):
        value = ""
    return shlex.quote(str(value))


def systemd_quote(value: Any) -> str:
    """One Environment= word as systemd reads it: double-quoted, C escapes, %% for %."""
    s = "" if value is None or isinstance(value, Undefined) else str(value)
    if "\n" in s or "\r" in s:
        raise ValueError("a systemd Environment= value cannot contain a newline")
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{s}"'


def make_env() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(autoescape=False, keep_trailing_newline=False)
    env.filters["q"] = _quote
    env.filters["systemd_quote"] = systemd_quote
    return env


ENV = make_env()


def compile_expr(src: str, *, file: str | None, line: int | None, what: str) -> Callable[..., Any]:
    try:
        return ENV.compile_expression(src, undefined_to_none=False)
    except TemplateSyntaxError as exc:
        raise KnowledgeError(f"{what}: bad expression {src!r}: {exc.message}", file=file,
                             line=line) from None


def compile_template(src: str, *, file: str | None, line: int | None, what: str):
    try:
        return ENV.from_string(src)
    except TemplateSyntaxError as exc:
        raise KnowledgeError(f"{what}: bad template {src!r}: {exc.message}", file=file,
                             line=line) from None


def truthy(value: Any) -> bool:
    if isinstance(value, Undefined):
        return False
    return bool(value)


def plain(value: Any) -> Any:
    """Jinja's Undefined is falsy but not None; facts never hold Undefined."""
    if isinstance(value, Undefined):
        return None
    return value
