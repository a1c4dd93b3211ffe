"""Jinja2's sandbox as remedy runs the knowledge's expressions and templates in it.

A module of its own so that importing ``remedy.knowledge.expr`` does not import Jinja2 (~15
ms): a cached knowledge base holds compiled code, and a log-only ``diagnose`` renders only
templates that are plain text and names (``expr.KnowledgeTemplate``), so it never needs
Jinja2. ``expr.env()`` builds the one environment from here on first use.
"""

from __future__ import annotations

import shlex
from typing import Any

from jinja2 import Undefined
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from remedy.knowledge.expr import _MAPPING_ATTRS, _OWN_MODULES, _PLAIN_CALLABLES


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


# Bounds on what one template may build: Jinja2's sandbox stops attribute escapes and limits
# range(), but `'a' * 10**10` or `10 ** 10 ** 10` would still take all memory or CPU.
MAX_BUILT = 1_000_000  # items or characters one `*` may produce
MAX_EXPONENT = 4096


class Sandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox, stricter: an unsafe attribute (`__class__`, `__globals__`,
    `_TemplateReference__context`, ...) raises SecurityError at once instead of rendering as
    an empty Undefined, and `*` / `**` cannot build values that exhaust the host."""

    intercepted_binops = frozenset({"*", "**"})

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        raise SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe"
        )

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """remedy's own knowledge functions (a rule calls several per evaluation, the planner
        evaluates rules thousands of times) are called directly: they are safely callable
        and take no Jinja context, which is all SandboxedEnvironment.call and Context.call
        would find out about them. Anything else goes through those checks."""
        if type(obj) in _PLAIN_CALLABLES and getattr(obj, "__module__", None) in _OWN_MODULES:
            if kwargs:
                kwargs.pop("_block_vars", None)
                kwargs.pop("_loop_vars", None)
            try:
                return obj(*args, **kwargs)
            except StopIteration:
                return context.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception"
                )
        return super().call(context, obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``tk.nvcc_release`` on a plain dict (a fact) for a name that is no attribute of
        the dict's type: the key, or undefined, which is where the sandbox's getattr ends up
        after its attribute lookup fails (an exception per access, thousands per plan)."""
        names = _MAPPING_ATTRS.get(type(obj))
        if names is not None and attribute not in names:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, bytes, list, tuple))
                    and isinstance(n, int)
                    and len(seq) * n > MAX_BUILT
                ):
                    raise SecurityError(f"'*' would build more than {MAX_BUILT} items")
        if operator == "**" and isinstance(right, int) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent above {MAX_EXPONENT}")
        return super().call_binop(context, operator, left, right)


def make_env() -> ImmutableSandboxedEnvironment:
    env = Sandbox(autoescape=False, keep_trailing_newline=False)
    env.filters["q"] = _quote
    env.filters["systemd_quote"] = systemd_quote
    return env
