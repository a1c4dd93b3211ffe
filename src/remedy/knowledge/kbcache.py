"""The loaded knowledge base, kept from the last run whose knowledge files were the same
(and likewise the signature catalog with its prefilter literal sets, and the checked field
signals: ``catalog_key`` / ``signals_key`` below say what keys each).

Why: loading knowledge/ and playbooks/ (YAML from the parse cache, ~430 entries validated by
pydantic, ~580 expressions and templates compiled from the code cache, every cross-reference
checked) was ~20-30 ms of each `remedy diagnose` / `plan`, all of it recomputing the same
objects from the same bytes. A run that loaded them whole pickles the result; the next run
whose key matches takes it from here instead (~5 ms). A run after any change pays the ordinary
load plus the pickling (~7 ms) once.

The key is a sha256 of what decides the result: every regular file directly in the two
directories (names and bytes: the loader reads most, and providers.yaml names the functions
an expression may call), the directories' paths (Knowledge names its files), the source of
the modules that build and define it (remedy/knowledge/*.py, remedy/model/*.py, the operations
an action may name), and the versions of Python, pydantic, Jinja2 and PyYAML. Any change: the
ordinary load, and a new cache. Only a load that passed every check is ever written.

Trust: the file goes through remedy.cachefile (read only when this user owns it and its
directory, neither writable by others, not through a link, sha256 intact), like the template
code cache whose code remedy already runs. On top of that, unpickling may name nothing but
the classes the knowledge is made of (``_ALLOWED``): a body that reaches for anything else
(os.system, builtins.eval, a remedy class that acts) is refused and the knowledge is loaded the
ordinary way. Compiled expressions are kept as marshalled code, turned into code only when
first evaluated (remedy.knowledge.expr._template_of), as the template cache's are.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import sys
from pathlib import Path
from typing import Any

_TAG = b"remedy-knowledge-1\0"
# under src/remedy/: every module the load validates with (the operations' parameter schemas
# live in each operations module, not only the registry)
_SOURCES = ("knowledge", "model", "operations")


def cache_path(kind: str = "knowledge") -> str:
    """One file per kind and remedy install (keyed by its path): two checkouts do not take
    turns."""
    import zlib

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    here = zlib.crc32(os.path.dirname(os.path.dirname(os.path.abspath(__file__))).encode())
    v = sys.version_info
    return os.path.join(base, "remedy", f"{kind}-{here:08x}-py{v[0]}{v[1]}.pickle")


def _files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.is_file())
    except OSError:
        return []


def _versions(*extra: str) -> Any:
    import hashlib

    from remedy import __version__
    from remedy.knowledge.yamlload import _yaml_version

    return hashlib.sha256(
        "\0".join((sys.version, __version__, _pydantic_version(), _yaml_version(), *extra)).encode()
    )


def _pydantic_version() -> str:
    """pydantic.VERSION, read from its version.py when pydantic is not imported yet: a cache
    of plain data (the signature catalog) is read without importing pydantic (~30 ms)."""
    mod = sys.modules.get("pydantic.version")
    if mod is not None:
        return str(mod.VERSION)
    import re
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("pydantic")
    origin = spec.origin if spec is not None else None
    try:
        with open(os.path.join(os.path.dirname(origin or ""), "version.py"), encoding="utf-8") as f:
            m = re.search(r"^VERSION = ['\"]([^'\"]+)['\"]", f.read(), re.M)
    except (OSError, UnicodeDecodeError):
        m = None
    if m:
        return m.group(1)
    import pydantic  # not found where it is imported from: ask it

    return str(pydantic.VERSION)


def _hash_files(h: Any, groups: list[tuple[bytes, list[Path]]]) -> bytes | None:
    """``h`` (the versions and whatever else the key covers) updated with each file's group,
    name, length and bytes; its digest. The same files as a recent run found them, stat for
    stat, give that run's digest without being read again (``_STAT_MEMO``)."""
    try:
        stats = tuple((g, str(p), *_stat_key(p)) for g, files in groups for p in files)
    except OSError:
        return None
    head = h.digest()
    memo = _memo()
    got = memo.get(head)
    if type(got) is tuple and len(got) == 2 and got[0] == stats and type(got[1]) is bytes:
        return got[1]
    try:
        for group, files in groups:
            for p in files:
                body = p.read_bytes()
                h.update(b"%s%s\0%d\0" % (group, p.name.encode(), len(body)) + body)
    except OSError:
        return None
    digest: bytes = h.digest()
    _remember(head, stats, digest)
    return digest


# The key's digest of a set of files, by their stat (as git's index keeps a file's hash by its
# stat): reading and hashing the ~60 files the knowledge, the catalog and the signals depend
# on (~1.5 MB) was ~5 ms of each `diagnose` / `plan`, for the same bytes nearly every time.
# A file's stat here is its device, inode, size, mode, mtime and ctime (ns): a write changes
# mtime and ctime; `touch -d` / utime can set mtime back but not ctime, which only the system
# clock moving back (root) makes repeat; a file replaced by a rename has another inode or a
# new ctime. A set is remembered only when every file in it is older than ``_RACY_NS`` at the
# time it was hashed (git's "racily clean" case): a write within the file system's timestamp
# tick after the hash would otherwise leave the same stat on other bytes; such a set is hashed
# again on each run until it is that old. Limits: a file system whose clock runs more than
# ``_RACY_NS`` behind this host's (a network file system's server) narrows that margin; a
# file edited and its ctime made to repeat (the clock set back) is served the old digest.
# The memo is a remedy cache (remedy.cachefile: ours, private, intact, no link), a marshal of
# plain data, and names only digests: the caches it leads to still hold their own key.
_STAT_MEMO = "keys"
_RACY_NS = 2_000_000_000
_MEMO_KEEP = 32  # sets (one per key kind and knowledge/catalog location in use)
_memo_cache: dict[bytes, Any] | None = None


def _stat_key(p: Path) -> tuple[int, ...]:
    st = os.stat(p)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def _memo_path() -> str:
    return cache_path(_STAT_MEMO)[: -len(".pickle")] + ".marshal"


def _memo() -> dict[bytes, Any]:
    """The memo of this install, read once per process; missing or damaged is empty."""
    global _memo_cache
    if _memo_cache is None:
        import marshal

        from remedy.cachefile import read_private

        body = read_private(_memo_path())
        data: Any = None
        if body is not None:
            try:
                data = marshal.loads(body)
            except Exception:  # damaged: rebuilt
                data = None
        _memo_cache = data if type(data) is dict else {}
    return _memo_cache


def _remember(head: bytes, stats: tuple[Any, ...], digest: bytes) -> None:
    """Keep ``digest`` for these stats, unless a file in the set is too recent to tell a
    later write within its timestamp tick (``_RACY_NS``)."""
    import time

    if stats and max(max(s[-1], s[-2]) for s in stats) >= time.time_ns() - _RACY_NS:
        return
    memo = _memo()
    memo.pop(head, None)
    memo[head] = (stats, digest)
    while len(memo) > _MEMO_KEEP:
        memo.pop(next(iter(memo)))
    import marshal

    from remedy.cachefile import write_private

    write_private(_memo_path(), marshal.dumps(memo))


def _sources(names: tuple[str, ...]) -> list[Path]:
    pkg = Path(__file__).resolve().parent.parent
    out: list[Path] = []
    for name in names:
        p = pkg / name
        out += sorted(p.glob("*.py")) if p.is_dir() else [p]
    return out


def key(kdir: Path, pdir: Path) -> bytes | None:
    """sha256 of everything the loaded knowledge depends on (module doc); None when a file
    cannot be read (the ordinary load then reports it)."""
    jinja = _jinja_source()
    if jinja is None:
        return None
    h = _versions(str(kdir), str(pdir))
    groups = [(b"S", _sources(_SOURCES) + [jinja]), (b"K", _files(kdir)), (b"P", _files(pdir))]
    return _hash_files(h, groups)


def _jinja_source() -> Path | None:
    """Jinja2's ``__init__.py``, which sets its ``__version__``: hashed into the key in place
    of the version, since importing Jinja2 (~15 ms) is what a cached load avoids
    (remedy.knowledge.expr)."""
    import importlib.util

    spec = importlib.util.find_spec("jinja2")
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin else None


def _models(*modules: Any) -> dict[str, frozenset[str]]:
    """Per module, the names of the pydantic models it defines."""
    from pydantic import BaseModel

    return {
        mod.__name__: frozenset(
            n
            for n, v in vars(mod).items()
            if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == mod.__name__
        )
        for mod in modules
    }


def _allowed_knowledge() -> dict[str, frozenset[str]]:
    """What a knowledge base is made of: the pydantic models of the knowledge schema, the
    loader's compiled records, the compiled expressions (this module's rebuilders)."""
    from remedy import model
    from remedy.knowledge import schema, skew_schema

    return {
        **_models(schema, skew_schema, model),
        "remedy.knowledge.loader": frozenset(
            {"Knowledge", "CompiledRule", "CompiledAction", "CompiledBefore"}
        ),
        __name__: frozenset({"_expression", "_template", "_functions"}),
    }


class _Unpickler(pickle.Unpickler):
    """Unpickles only the names ``allowed`` lists: anything else ends the load."""

    def __init__(self, body: bytes, allowed: dict[str, frozenset[str]]) -> None:
        super().__init__(io.BytesIO(body))
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        if name not in self.allowed.get(module, ()):
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in this cache")
        return super().find_class(module, name)


def _expression(code: bytes, names: frozenset[str]) -> Any:
    from remedy.knowledge.expr import Expression

    return Expression(code, names)  # type: ignore[arg-type]  # unmarshalled when first run


def _template(code: bytes, source: str, parts: list[str] | None = None) -> Any:
    from remedy.knowledge.expr import KnowledgeTemplate

    if type(parts) is not list or len(parts) % 2 != 1 or any(type(p) is not str for p in parts):
        parts = None  # not [text, name, ..., text]: Jinja2 renders it
    return KnowledgeTemplate(code, source, parts)  # type: ignore[arg-type]


def _functions(state: dict[str, Any]) -> Any:
    from remedy.knowledge.functions import Functions

    fns = Functions.__new__(Functions)
    fns.__dict__.update(state)
    return fns


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:

        from remedy.knowledge.expr import Expression, KnowledgeTemplate
        from remedy.knowledge.functions import Functions

        t = type(obj)
        if t is re.Pattern:  # a signature's compiled pattern: compiled again on first use
            return _no_regex, ()
        if t is Expression:
            return _expression, (_marshalled(obj._code), obj.remedy_names)
        if t is KnowledgeTemplate:
            return _template, (_marshalled(obj._code), obj.remedy_source, obj.remedy_parts)
        if t is Functions:  # its memos (`_statics`, ...) are rebuilt on first use
            return _functions, ({k: v for k, v in vars(obj).items() if not k.startswith("_")},)
        return NotImplemented


def _marshalled(code: Any) -> bytes:
    """The code of an expression or template, marshalled: one read from a cache and never
    run is still the marshalled bytes (remedy.knowledge.expr), kept as they are (marshalled
    again, it read back as bytes, "not code", in a cache made from a cached knowledge base:
    remedy.knowledge.logview)."""
    import marshal

    return code if type(code) is bytes else marshal.dumps(code)


def _load(kind: str, k: bytes, allowed: dict[str, frozenset[str]]) -> Any | None:
    from remedy.cachefile import read_private

    body = read_private(cache_path(kind))
    if body is None or not body.startswith(_TAG + k):
        return None
    try:
        return _Unpickler(body[len(_TAG) + len(k) :], allowed).load()
    except Exception:  # a refused name, a class that changed shape: the ordinary load
        return None


def _save(kind: str, k: bytes, obj: Any) -> None:
    from remedy.cachefile import write_private

    out = io.BytesIO()
    try:
        _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception:  # something not picklable: no cache, as before
        return
    write_private(cache_path(kind), _TAG + k + out.getvalue())


def load(k: bytes) -> Any | None:
    """The knowledge base cached under key ``k``, or None (missing, stale, foreign, damaged,
    or naming anything but knowledge classes)."""
    from remedy.knowledge.loader import Knowledge

    kb = _load("knowledge", k, _allowed_knowledge())
    return kb if type(kb) is Knowledge else None


def save(k: bytes, kb: Any) -> None:
    """Keep ``kb`` (just loaded and checked) under key ``k``; failures are harmless."""
    _save("knowledge", k, kb)


def _no_regex() -> None:
    """A compiled pattern's place in a cached object: compiled again when first used."""
    return None
