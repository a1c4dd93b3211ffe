"""Code and regex programs that Python builds from the same text on every start-up, kept from
the last.

Importing pydantic and remedy's modules makes Python compile some 1,300 small sources at run
time (~100 kB): one per forward reference in a typing annotation (`typing.ForwardRef`: ~900,
most of them the TypedDicts of pydantic_core.core_schema), one per generated method of a
dataclass (`dataclasses._create_fn`: ~300) and of a namedtuple. Parsing and compiling them
was ~12% of the instructions of `remedy plan --example NAME --json` (callgrind). The code object depends
on nothing but the source text, its filename and mode, and the interpreter's bytecode: so
the console script (remedy.entry) installs a `compile` for `typing` and an `exec` / `eval`
for `dataclasses` / `collections` (their module globals, seen before the builtins) that take
the code from this cache, compiled exactly as the builtin would (no inherited `__future__`
flags: those modules have none), and a new source is compiled and saved at exit.

Regular expressions likewise: the ~140 that remedy, jinja2, pydantic and the stdlib compile
while remedy starts (~9% of the same command's instructions, in re's pure-Python parser
and compiler) become the same SRE program every time. `re._compiler.compile` is wrapped to keep
each pattern's program (the arguments re gives `_sre.compile`: flags, code, groups, group
names) and to hand a known pattern's program straight to `_sre.compile`, which checks the
code as it always does. The cache's name carries the SRE magic number too, and the byte order
and word size of the programs (kept as their bytes).

The cache is a remedy cache (remedy.cachefile): read only when this user owns it, it is
private and intact, never through a link; an entry of the wrong kind is compiled again. It
holds only what Python compiled from these modules' own generated text; its name carries
the interpreter's bytecode magic number, so another Python never reads it.
"""

from __future__ import annotations

import _sre
import builtins
import os
import sys
import types
from typing import Any

_KEEP = 8192  # entries; more (other remedy versions' sources) and only this run's are kept
_cache: dict[Any, Any] | None = None
_used: set[Any] = set()
_dirty = False
_installed: list[tuple[types.ModuleType, str, object]] = []  # (module, name, old) for uninstall
# which of the cache's files this process reads and writes (``install``): "" for every command
# line but the log-only `diagnose` ("log"), whose ~300 entries were ~7% of a 2.4 MB file that
# held plan's and the CLI's too (pydantic's ForwardRefs, typer, rich): reading, checking and
# unmarshalling the whole file was ~10-15 ms of that command's main process (perf-45)
_profile = ""


def _path() -> str:
    from importlib.util import MAGIC_NUMBER

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = (
        f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}-sre{_sre.MAGIC}"
        f"-{sys.byteorder[0]}{getattr(_sre, 'CODESIZE', 0)}"
    )
    part = f"-{_profile}" if _profile else ""
    return os.path.join(base, "remedy", f"startup-code-{tag}{part}.marshal")


def _entries() -> dict[Any, Any]:
    """The cache, loaded on first use; missing, foreign or damaged is empty."""
    global _cache
    if _cache is None:
        import marshal

        from remedy.cachefile import read_private

        body = read_private(_path())
        data: object = None
        if body is not None:
            try:
                data = marshal.loads(body)
            except Exception:  # a damaged cache is rebuilt, never a failure
                data = None
        _cache = data if isinstance(data, dict) else {}
    return _cache


def cached_compile(source: object, filename: str, mode: str) -> types.CodeType:
    """builtins.compile(source, filename, mode) without inherited flags; a str source's code
    comes from the cache when it was compiled before."""
    if type(source) is not str:
        return builtins.compile(source, filename, mode, dont_inherit=True)  # type: ignore[call-overload]
    global _dirty
    key = (mode, filename, source)
    cache = _entries()
    code = cache.get(key)
    if type(code) is not types.CodeType:
        code = builtins.compile(source, filename, mode, dont_inherit=True)
        cache[key] = code
        _dirty = True
    _used.add(key)
    return code


def _exec(source: object, globals: dict[str, Any], locals: Any = None) -> None:
    """exec() as dataclasses calls it (source text, explicit namespaces)."""
    if type(source) is str:
        source = cached_compile(source, "<string>", "exec")
    builtins.exec(source, globals, locals)  # type: ignore[arg-type]  # noqa: S102


def _eval(source: object, globals: dict[str, Any], locals: Any = None) -> Any:
    """eval() as collections.namedtuple calls it (source text, explicit globals)."""
    if type(source) is str:
        source = cached_compile(source, "<string>", "eval")
    return builtins.eval(source, globals, locals)  # type: ignore[arg-type]  # noqa: S307


def _re_compile(p: Any, flags: int = 0) -> Any:
    """re._compiler.compile (a str or bytes pattern): the program from the cache when this
    pattern and flags were compiled before, else built as re builds it, and kept."""
    orig = _RE_ORIG[0]
    if type(p) not in (str, bytes) or type(flags) is not int or flags & _RE_DEBUG:
        return orig(p, flags)
    global _dirty
    key = ("re", p, flags)
    cache = _entries()
    hit = cache.get(key)
    if type(hit) is tuple and len(hit) == 5:
        try:
            flags_, code, groups, groupindex, indexgroup = hit
            if type(code) is bytes:  # the program's words (_code_bytes)
                code = memoryview(code).cast(_WORD).tolist()
            pattern = _sre.compile(p, flags_, code, groups, groupindex, indexgroup)
        except Exception:  # noqa: S110 - a bad entry: built again below
            pass
        else:
            _used.add(key)
            return pattern
    try:  # re's own steps (3.11-3.13); another layout of re's internals: re's compile, uncached
        from re import _compiler, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(p, flags)
        code = _compiler._code(parsed, flags)
        groupindex = parsed.state.groupdict
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        args = (
            flags | parsed.state.flags,
            code,
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        pattern = _sre.compile(p, *args)
    except re_error:
        raise  # a bad pattern: the caller gets re's own error, as without the cache
    except Exception:
        return orig(p, flags)
    # plain ints: re's opcodes are an int subclass, which marshal does not hold
    cache[key] = (int(args[0]), _code_bytes(code), int(args[2]), dict(groupindex), args[4])
    _used.add(key)
    _dirty = True
    return pattern


# An SRE program is a list of machine words (_sre.CODESIZE bytes each): kept as their bytes,
# it is one string in the cache instead of ~250 ints, and marshal reads the ~420 programs in
# a quarter of the time (~1.3 ms of each start-up); only a program used is made a list again.
_WORD = "I"  # memoryview's format for one unsigned int: 4 bytes on remedy's platforms


def _code_bytes(code: list[int]) -> bytes | list[int]:
    """The program as its words' bytes (native order: the cache's name carries the byte
    order and the word size), or as plain ints where the word is not an unsigned int."""
    import array

    if getattr(_sre, "CODESIZE", 0) != array.array(_WORD).itemsize:
        return [int(c) for c in code]
    return array.array(_WORD, code).tobytes()


_RE_ORIG: list[Any] = []
re_error: type[Exception] = Exception  # re.error, set by install()
_RE_DEBUG = 128  # re.DEBUG: printed by re's own compile, never cached


def install(profile: str = "") -> None:
    """Route typing's, dataclasses' and collections' run-time compiles through the cache, and
    save what was new at exit. Once per process; `uninstall` undoes it. ``profile``: the
    command line's kind (``_profile``), which names the file; a name of letters only."""
    global _profile
    if _installed:
        return
    if _cache is None:  # the file is chosen before its first read, never switched after
        _profile = profile if profile.isalpha() and profile.isascii() else ""
    import atexit
    import collections
    import typing

    routes: list[tuple[types.ModuleType, str, Any]] = [
        (typing, "compile", cached_compile),
        (collections, "eval", _eval),
    ]
    # the log-only `diagnose` defines no dataclass (its modules' records are plain classes):
    # importing dataclasses (and inspect, ast, dis) only to route it was ~7 ms of it; a
    # dataclass made there after all is compiled as without the cache
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None and _profile != "log":
        import dataclasses
    if dataclasses is not None:
        routes.insert(1, (dataclasses, "exec", _exec))
    for module, name, fn in routes:
        _installed.append((module, name, module.__dict__.get(name, _MISSING)))
        setattr(module, name, fn)
    compiler = sys.modules.get("re._compiler")
    if compiler is None:  # Python 3.10: sre_compile, left as it is
        import re

        compiler = getattr(re, "_compiler", None)
    if compiler is not None and getattr(compiler, "compile", None) is not None:
        global re_error
        import re as _re

        re_error = _re.error
        _RE_ORIG[:] = [compiler.compile]
        _installed.append((compiler, "compile", compiler.compile))
        compiler.compile = _re_compile
    atexit.register(save)


_MISSING = object()


def uninstall() -> None:
    """The modules' own functions (the builtins, re's compile) again (tests)."""
    import atexit

    while _installed:
        module, name, old = _installed.pop()
        if old is _MISSING:
            module.__dict__.pop(name, None)
        else:
            setattr(module, name, old)
    atexit.unregister(save)


def save() -> None:
    """Write the cache when this run compiled something new (failures are harmless)."""
    global _dirty
    if not _dirty or _cache is None:
        return
    import marshal

    from remedy.cachefile import write_private

    keep = _cache
    if len(keep) > _KEEP:
        keep = {k: v for k, v in keep.items() if k in _used}
    try:
        body = marshal.dumps(keep)
    except ValueError:  # not marshallable: nothing saved
        return
    if write_private(_path(), body):
        _dirty = False
