"""Expressions and templates of the knowledge files, evaluated in Jinja2's sandbox.

Rules, actions and messages are data; their conditions are Jinja2 expressions so that no
knowledge file can run Python. Everything is compiled once, at load time, so a typo is a
KnowledgeError naming file:line instead of a surprise during planning.

Jinja2 itself is imported on first use (``env``, remedy.knowledge.sandbox): a log-only
``diagnose`` takes the compiled knowledge from its cache and renders only templates that are
plain text and names, so it never loads Jinja2 (~15 ms of its start-up).
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from typing import Any

from remedy.errors import KnowledgeError

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


_ENV: Any = None
_UNDEFINED: Any = None  # jinja2.Undefined once Jinja2 is loaded
# (jinja2.Undefined,) once env() is made; until then no expression has run, so none of its
# values can be Undefined (truthy and plain: the planner's inner loop, one isinstance each)
_UNDEFINED_T: tuple[type, ...] = ()


def env() -> Any:
    """The one sandboxed environment (remedy.knowledge.sandbox), made on first use."""
    global _ENV, _UNDEFINED_T
    if _ENV is None:
        import gc

        # Jinja2's ~20 modules are now loaded after the command's start-up, whose objects
        # remedy.startgc froze out of the collector's sight: frozen likewise (they live to the
        # end), else the collections they set off cost a `plan` ~1% more than before
        collecting = gc.isenabled()
        gc.disable()
        try:
            from jinja2 import Undefined

            from remedy.knowledge.sandbox import make_env

            _ENV = make_env()
            _UNDEFINED_T = (Undefined,)
        finally:
            if gc.get_freeze_count():
                gc.freeze()
            if collecting:
                gc.enable()
    return _ENV


def is_undefined(value: Any) -> bool:
    """``value`` is Jinja2's Undefined; without Jinja2 loaded, nothing can be one."""
    global _UNDEFINED
    u = _UNDEFINED
    if u is None:
        jinja2 = sys.modules.get("jinja2")
        if jinja2 is None:
            return False
        u = _UNDEFINED = jinja2.Undefined
    return isinstance(value, u)


_SANDBOX_NAMES = frozenset({"Sandbox", "make_env", "systemd_quote", "MAX_BUILT", "MAX_EXPONENT"})


def __getattr__(name: str) -> Any:
    """``ENV`` and the sandbox's names, as before they moved (remedy.knowledge.sandbox)."""
    if name == "ENV":
        return env()
    if name in _SANDBOX_NAMES:
        from remedy.knowledge import sandbox

        return getattr(sandbox, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        code = compile(env().compile(node, raw=True), "<remedy knowledge>", "exec")
        _CODE[key] = code
        _CODE_DIRTY = True
    return code


def _template_of(code: types.CodeType | bytes) -> Any:
    """Jinja2's Template for generated code (its module run, its globals); bytes: the code
    marshalled, as a cached knowledge base keeps it (remedy.knowledge.kbcache)."""
    e = env()  # first: it imports Jinja2 with the collector paused
    from jinja2 import Template

    if type(code) is bytes:
        import marshal

        code = marshal.loads(code)
        if type(code) is not types.CodeType:
            raise KnowledgeError("the knowledge cache holds something that is not code")
    return Template.from_code(e, code, e.make_globals(None))


# `{{ name }}` as Jinja2 reads it: any spaces or tabs inside the braces, a bare name
_NAME_TAG = re.compile(r"\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\}\}")
# names Jinja2 does not look up in the context: constants, and the ones its code generator
# binds itself (the template's reference, a macro's or a loop's own names)
_NOT_LOOKUPS = frozenset(
    {"true", "false", "none", "True", "False", "None"}
    | {"self", "super", "caller", "varargs", "kwargs", "loop"}
)


def plain_parts(text: str) -> list[str] | None:
    """A template made only of text and ``{{ name }}`` tags, as [text, name, text, ..., text],
    with what Jinja2 does to such a source done (``keep_trailing_newline=False``: one final
    newline dropped); None for anything else (other tags, a brace in the text, ``\\r``, which
    Jinja2 would turn into ``\\n``)."""
    if "\r" in text:
        return None
    if text.endswith("\n"):
        text = text[:-1]
    parts = _NAME_TAG.split(text)
    if any("{" in t or "}" in t for t in parts[0::2]) or any(
        n in _NOT_LOOKUPS for n in parts[1::2]
    ):
        return None
    return parts


class KnowledgeTemplate:
    """A compiled knowledge template (a message, a title, a command). Jinja2's Template is made
    from the code when first rendered: a command renders a few of the ~230 (making each was
    ~1% of a `plan` start-up).

    A template of plain text and ``{{ name }}`` tags (``plain_parts``) whose names are all
    strings in the context is rendered here, without Jinja2: Jinja2 would print each such
    value as ``str`` does (no autoescape, no finalize; a name is looked up, never called or
    traversed, so the sandbox has nothing to check). Any other value, or a name missing, goes
    to Jinja2. Why: a log-only ``diagnose`` renders the confirming facts of its hypotheses,
    nearly all plain text, and would import Jinja2 (~15 ms) for them alone."""

    __slots__ = ("_code", "_template", "remedy_source", "remedy_parts")

    def __init__(self, code: types.CodeType, source: str, parts: list[str] | None = None) -> None:
        self._code = code
        self._template: Any = None
        self.remedy_source = source  # named in sandbox refusals
        self.remedy_parts = parts  # plain_parts of its source (None: Jinja2 renders it)

    def render(self, *args: Any, **kwargs: Any) -> str:
        if not args:
            parts = self.remedy_parts
            if parts is not None:
                out = parts[:]
                for i in range(1, len(out), 2):
                    value = kwargs.get(out[i])
                    if type(value) is not str:
                        break
                    out[i] = value
                else:
                    return "".join(out)
        t = self._template
        if t is None:
            t = self._template = _template_of(self._code)
        return t.render(*args, **kwargs)


def _expression_node(src: str) -> Any:
    from jinja2 import TemplateSyntaxError, nodes
    from jinja2.parser import Parser

    parser = Parser(env(), src, state="variable")
    expr = parser.parse_expression()
    if not parser.stream.eos:
        raise TemplateSyntaxError(
            "chunk after expression", parser.stream.current.lineno, None, None
        )
    expr.set_environment(env())
    return nodes.Template([nodes.Assign(nodes.Name("result", "store"), expr, lineno=1)], lineno=1)


def free_names(src: str, *, template: bool) -> set[str]:
    """The names an expression (or template) reads from its context: jinja2.meta on the parsed
    source, less Jinja's own globals (range, dict, namespace...). Cached with the code."""
    global _CODE_DIRTY
    _load_code_cache()
    key = _names_key(template, src)
    names = _CODE.get(key)
    if not isinstance(names, (tuple, list)):
        names = _undeclared(env().parse(src) if template else _expression_node(src))
        _CODE[key] = names
        _CODE_DIRTY = True
    return set(names) - set(env().globals)


def _names_key(template: bool, src: str) -> str:
    return f"names\0{int(template)}\0{src}"


def _undeclared(node: Any) -> tuple[str, ...]:
    from jinja2 import meta

    node.set_environment(env())
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
        self._reads: tuple[str, ...] | None = None  # with Jinja's globals: on the first run
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
        reads = self._reads
        if reads is None:
            reads = self._reads = tuple(sorted(self.remedy_names | set(tmpl.environment.globals)))
        parent = dict(self._globals)
        for n in reads:
            if n in ctx:
                parent[n] = ctx[n]
        e = tmpl.environment
        context = e.context_class(e, parent, tmpl.name, tmpl.blocks, globals=self._globals)
        for _ in tmpl.root_render_func(context):
            pass
        return context.vars["result"]


def call(expr: Any, ctx: dict[str, Any]) -> Any:
    """``expr(**ctx)`` without copying ``ctx`` into keyword arguments."""
    return expr.run(ctx) if type(expr) is Expression else expr(**ctx)


def compile_expr(src: str, *, file: str | None, line: int | None, what: str) -> Callable[..., Any]:
    from jinja2 import TemplateSyntaxError

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
    from jinja2 import TemplateSyntaxError

    try:
        code = _from_cache("tmpl", src, lambda: env().parse(src))
    except TemplateSyntaxError as exc:
        raise KnowledgeError(
            f"{what}: bad template {src!r}: {exc.message}", file=file, line=line
        ) from None
    return KnowledgeTemplate(code, f"{file}:{line}: {what}" if file else what, plain_parts(src))


def truthy(value: Any) -> bool:
    if isinstance(value, _UNDEFINED_T):
        return False
    return bool(value)


def plain(value: Any) -> Any:
    """Jinja's Undefined is falsy but not None; facts never hold Undefined."""
    if isinstance(value, _UNDEFINED_T):
        return None
    return value
