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
from jinja2.exceptions import SecurityError
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


ENV = make_env()


# Generating Python from ~500 templates costs seconds; the generated code only depends on the
# source and the Jinja2 and Python versions, so the code objects are cached on disk (marshal:
# source hash -> code) and a later run only loads them. A cache that cannot be read or written
# is ignored; it holds nothing but what Jinja2 itself generated from remedy's own files.
_CODE: dict[str, Any] = {}
_CODE_DIRTY = False
_CODE_LOADED = False


def _cache_path() -> str:
    import os
    import sys

    import jinja2

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = f"jinja{jinja2.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(base, "remedy", f"templates-{tag}.marshal")


_CACHE_MAGIC = b"remedy-templates-1\n"


def _cache_file_ok(fd: int, path: str) -> bool:
    """The cache holds code remedy executes: only a file that this user owns, in a directory
    this user owns, neither writable by anyone else, is loaded."""
    import os
    import stat

    me = os.geteuid()
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != me or st.st_mode & 0o022:
        return False
    dst = os.stat(os.path.dirname(path))
    return dst.st_uid == me and not dst.st_mode & 0o022


def _load_code_cache() -> None:
    global _CODE_LOADED, _CODE_DIRTY
    if _CODE_LOADED:
        return
    _CODE_LOADED = True
    import hashlib
    import marshal
    import os
    import types

    path = _cache_path()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        if not _cache_file_ok(fd, path):
            _CODE_DIRTY = True  # rebuilt (and replaced by one of ours) at save time
            return
        with os.fdopen(os.dup(fd), "rb") as f:
            blob = f.read()
        n = len(_CACHE_MAGIC)
        head, digest, body = blob[:n], blob[n : n + 32], blob[n + 32 :]
        if head != _CACHE_MAGIC or hashlib.sha256(body).digest() != digest:
            _CODE_DIRTY = True
            return
        data = marshal.loads(body)
        if isinstance(data, dict) and all(
            isinstance(k, str) and isinstance(v, types.CodeType) for k, v in data.items()
        ):
            _CODE.update(data)
        else:
            _CODE_DIRTY = True
    except Exception:  # a corrupted cache is rebuilt, never a crash of `plan`
        _CODE_DIRTY = True
    finally:
        os.close(fd)


def save_code_cache() -> None:
    """Persist newly generated code (atomic; failures are harmless). The directory is made
    0700; a file or directory someone else owns is left alone (and never loaded)."""
    global _CODE_DIRTY
    if not _CODE_DIRTY:
        return
    import hashlib
    import marshal
    import os
    import tempfile

    path = _cache_path()
    try:
        d = os.path.dirname(path)
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022 or os.path.islink(d):
            return
        body = marshal.dumps(_CODE)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".templates-")
        with os.fdopen(fd, "wb") as f:
            f.write(_CACHE_MAGIC + hashlib.sha256(body).digest() + body)
        os.replace(tmp, path)
        _CODE_DIRTY = False
    except (OSError, ValueError):
        pass


def _from_cache(kind: str, src: str, make_node: Callable[[], Any]) -> Any:
    """A Template for `src`, from cached generated code when possible."""
    import hashlib

    from jinja2 import Template

    global _CODE_DIRTY
    _load_code_cache()
    key = hashlib.sha256(f"{kind}\0{src}".encode()).hexdigest()
    code = _CODE.get(key)
    if code is None:
        node = make_node()
        # the free names come from this same parse (free_names() then reads the cache)
        _CODE[_names_key(kind == "tmpl", src)] = _undeclared(node)
        code = compile(ENV.compile(node, raw=True), "<remedy knowledge>", "exec")
        _CODE[key] = code
        _CODE_DIRTY = True
    return Template.from_code(ENV, code, ENV.make_globals(None))


def _expression_node(src: str) -> Any:
    from jinja2 import nodes
    from jinja2.parser import Parser

    parser = Parser(ENV, src, state="variable")
    expr = parser.parse_expression()
    if not parser.stream.eos:
        raise TemplateSyntaxError(
            "chunk after expression", parser.stream.current.lineno, None, None
        )
    expr.set_environment(ENV)
    return nodes.Template([nodes.Assign(nodes.Name("result", "store"), expr, lineno=1)], lineno=1)


def free_names(src: str, *, template: bool) -> set[str]:
    """The names an expression (or template) reads from its context: jinja2.meta on the parsed
    source, less Jinja's own globals (range, dict, namespace...). Cached with the code."""
    global _CODE_DIRTY
    _load_code_cache()
    key = _names_key(template, src)
    names = _CODE.get(key)
    if not isinstance(names, list):
        names = _undeclared(ENV.parse(src) if template else _expression_node(src))
        _CODE[key] = names
        _CODE_DIRTY = True
    return set(names) - set(ENV.globals)


def _names_key(template: bool, src: str) -> str:
    import hashlib

    return hashlib.sha256(f"names\0{int(template)}\0{src}".encode()).hexdigest()


def _undeclared(node: Any) -> list[str]:
    from jinja2 import meta

    node.set_environment(ENV)
    return sorted(meta.find_undeclared_variables(node))


def compile_expr(src: str, *, file: str | None, line: int | None, what: str) -> Callable[..., Any]:
    from jinja2.environment import TemplateExpression

    try:
        tmpl = _from_cache("expr", src, lambda: _expression_node(src))
    except TemplateSyntaxError as exc:
        raise KnowledgeError(
            f"{what}: bad expression {src!r}: {exc.message}", file=file, line=line
        ) from None
    out = TemplateExpression(tmpl, False)
    # what it reads: evaluate.py skips rules whose names did not change; the loader checks them
    out.remedy_names = frozenset(free_names(src, template=False))  # type: ignore[attr-defined]
    return out


def compile_template(src: str, *, file: str | None, line: int | None, what: str):
    try:
        tmpl = _from_cache("tmpl", src, lambda: ENV.parse(src))
    except TemplateSyntaxError as exc:
        raise KnowledgeError(
            f"{what}: bad template {src!r}: {exc.message}", file=file, line=line
        ) from None
    tmpl.remedy_source = f"{file}:{line}: {what}" if file else what  # named in sandbox refusals
    return tmpl


def truthy(value: Any) -> bool:
    if isinstance(value, Undefined):
        return False
    return bool(value)


def plain(value: Any) -> Any:
    """Jinja's Undefined is falsy but not None; facts never hold Undefined."""
    if isinstance(value, Undefined):
        return None
    return value
