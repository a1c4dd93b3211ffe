"""Expressions and templates of the knowledge files, evaluated in Jinja2's sandbox.

Rules, actions and messages are data; their conditions are Jinja2 expressions so that no
knowledge file can run Python. Everything is compiled once, at load time, so a typo is a
KnowledgeError naming file:line instead of a surprise during planning.
"""

from __future__ import annotations

import shlex
import types
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


# modules whose functions the knowledge's expressions are given (knowledge/functions.py)
_OWN_MODULES = frozenset(
    {"remedy.knowledge.functions", "remedy.knowledge.providers", "remedy.knowledge.skew"}
)
_PLAIN_CALLABLES = (types.FunctionType, types.MethodType)


# mapping types whose instances have no attributes but their type's (no instance __dict__,
# no __getattr__): name -> the attribute names; Sandbox.getattr looks anything else up as a key
_MAPPING_ATTRS: dict[type, frozenset[str]] = {dict: frozenset(dir(dict))}


def plain_mapping(cls: type) -> type:
    """Register a dict subclass whose instances carry no attributes of their own, so that
    ``obj.key`` in an expression goes straight to the key (as for a dict)."""
    if (
        not issubclass(cls, dict)
        or cls.__dictoffset__
        or cls.__getattribute__ is not dict.__getattribute__
        or hasattr(cls, "__getattr__")
    ):
        raise TypeError(f"{cls.__name__} has attributes of its own")
    _MAPPING_ATTRS[cls] = frozenset(dir(cls))
    return cls


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


ENV = make_env()


# Generating Python from ~500 templates costs seconds; the generated code only depends on the
# source and the Jinja2 and Python versions, so the code objects are cached on disk (marshal:
# kind and source -> code) and a later run only loads them. A cache that cannot be read or written
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
    # templates2: keyed by the source itself (templates-: by its sha256)
    return os.path.join(base, "remedy", f"templates2-{tag}.marshal")


def _load_code_cache() -> None:
    """Only a cache that is ours (remedy.cachefile: owner, mode, no link, sha256) and holds
    code objects (and name tuples) is loaded; anything else is rebuilt, never a crash."""
    global _CODE_LOADED, _CODE_DIRTY
    if _CODE_LOADED:
        return
    _CODE_LOADED = True
    import marshal
    import os
    import types

    from remedy.cachefile import read_private

    path = _cache_path()
    body = read_private(path)
    if body is None:
        _CODE_DIRTY = os.path.lexists(path)  # replaced by one of ours at save time
        return
    try:
        data = marshal.loads(body)
    except Exception:
        data = None
    if isinstance(data, dict):
        # only code and expression names (tuples of str) are kept; an entry of another kind
        # is dropped, not a reason to drop them all (the file is shared by every remedy here)
        good = {
            k: v
            for k, v in data.items()
            if isinstance(k, str)
            and (
                isinstance(v, types.CodeType)
                or (isinstance(v, (tuple, list)) and all(isinstance(x, str) for x in v))
            )
        }
        _CODE.update(good)
        if len(good) != len(data):
            _CODE_DIRTY = True
    else:
        _CODE_DIRTY = True


def save_code_cache() -> None:
    """Persist newly generated code (atomic; failures are harmless; never into a directory
    that is not ours)."""
    global _CODE_DIRTY
    if not _CODE_DIRTY:
        return
    import marshal

    from remedy.cachefile import write_private

    if write_private(_cache_path(), marshal.dumps(_CODE)):
        _CODE_DIRTY = False


def _from_cache(kind: str, src: str, make_node: Callable[[], Any]) -> types.CodeType:
    """The code Jinja2 generates for `src`, from the cache when possible (a syntax error is
    raised here, at load time). The key is the source itself: a sha256 per expression and per
    name set (~1,400 at each start) cost more than the dictionary's own hashing of the text."""
    global _CODE_DIRTY
    _load_code_cache()
    key = f"{kind}\0{src}"
    code = _CODE.get(key)
    if code is None:
        node = make_node()
        # the free names come from this same parse (free_names() then reads the cache)
        _CODE[_names_key(kind == "tmpl", src)] = _undeclared(node)
        code = compile(ENV.compile(node, raw=True), "<remedy knowledge>", "exec")
        _CODE[key] = code
        _CODE_DIRTY = True
    return code


def _template_of(code: types.CodeType | bytes) -> Any:
    """Jinja2's Template for generated code (its module run, its globals); bytes: the code
    marshalled, as a cached knowledge base keeps it (remedy.knowledge.kbcache)."""
    from jinja2 import Template

    if type(code) is bytes:
        import marshal

        code = marshal.loads(code)
        if type(code) is not types.CodeType:
            raise KnowledgeError("the knowledge cache holds something that is not code")
    return Template.from_code(ENV, code, ENV.make_globals(None))


class KnowledgeTemplate:
    """A compiled knowledge template (a message, a title, a command). Jinja2's Template is made
    from the code when first rendered: a command renders a few of the ~230 (making each was
    ~1% of a `plan` start-up)."""

    __slots__ = ("_code", "_template", "remedy_source")

    def __init__(self, code: types.CodeType, source: str) -> None:
        self._code = code
        self._template: Any = None
        self.remedy_source = source  # named in sandbox refusals

    def render(self, *args: Any, **kwargs: Any) -> str:
        t = self._template
        if t is None:
            t = self._template = _template_of(self._code)
        return t.render(*args, **kwargs)


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
    if not isinstance(names, (tuple, list)):
        names = _undeclared(ENV.parse(src) if template else _expression_node(src))
        _CODE[key] = names
        _CODE_DIRTY = True
    return set(names) - set(ENV.globals)


def _names_key(template: bool, src: str) -> str:
    return f"names\0{int(template)}\0{src}"


def _undeclared(node: Any) -> tuple[str, ...]:
    from jinja2 import meta

    node.set_environment(ENV)
    return tuple(sorted(meta.find_undeclared_variables(node)))


class Expression:
    """A compiled knowledge expression, called with keyword arguments (a rule's context).

    Like jinja2's TemplateExpression, but the context it builds holds only the names the
    expression reads (``remedy_names``, plus Jinja's globals): the rule contexts carry some
    seventy functions and values, and copying all of them into a new Context on every call
    was most of what the planner spent evaluating rules."""

    __slots__ = ("_code", "_template", "_reads", "_globals", "remedy_names")

    def __init__(self, code: types.CodeType, names: frozenset[str]) -> None:
        self._code = code
        self._template: Any = None  # made on the first evaluation (many never run)
        self.remedy_names = names
        self._reads = tuple(sorted(names | set(ENV.globals)))
        self._globals: dict[str, Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.run(dict(*args, **kwargs) if args else kwargs)

    def run(self, ctx: dict[str, Any]) -> Any:
        """The expression's value over ``ctx`` (read, never changed)."""
        tmpl = self._template
        if tmpl is None:
            tmpl = self._template = _template_of(self._code)
        if self._globals is None:
            self._globals = dict(tmpl.globals)
        parent = dict(self._globals)
        for n in self._reads:
            if n in ctx:
                parent[n] = ctx[n]
        context = ENV.context_class(ENV, parent, tmpl.name, tmpl.blocks, globals=self._globals)
        for _ in tmpl.root_render_func(context):
            pass
        return context.vars["result"]


def call(expr: Any, ctx: dict[str, Any]) -> Any:
    """``expr(**ctx)`` without copying ``ctx`` into keyword arguments."""
    return expr.run(ctx) if type(expr) is Expression else expr(**ctx)


def compile_expr(src: str, *, file: str | None, line: int | None, what: str) -> Callable[..., Any]:
    try:
        code = _from_cache("expr", src, lambda: _expression_node(src))
    except TemplateSyntaxError as exc:
        raise KnowledgeError(
            f"{what}: bad expression {src!r}: {exc.message}", file=file, line=line
        ) from None
    # what it reads: evaluate.py skips rules whose names did not change; the loader checks them
    return Expression(code, frozenset(free_names(src, template=False)))


def compile_template(
    src: str, *, file: str | None, line: int | None, what: str
) -> KnowledgeTemplate:
    try:
        code = _from_cache("tmpl", src, lambda: ENV.parse(src))
    except TemplateSyntaxError as exc:
        raise KnowledgeError(
            f"{what}: bad template {src!r}: {exc.message}", file=file, line=line
        ) from None
    return KnowledgeTemplate(code, f"{file}:{line}: {what}" if file else what)


def truthy(value: Any) -> bool:
    if isinstance(value, Undefined):
        return False
    return bool(value)


def plain(value: Any) -> Any:
    """Jinja's Undefined is falsy but not None; facts never hold Undefined."""
    if isinstance(value, Undefined):
        return None
    return value
