"""The loaded knowledge base, kept from the last run whose knowledge files were the same.

Why: loading knowledge/ and playbooks/ (YAML from the parse cache, ~430 entries validated by
pydantic, ~580 expressions and templates compiled from the code cache, every cross-reference
checked) was ~20-30 ms of each `remedy diagnose` / `plan`, all of it recomputing the same
objects from the same bytes. A run that loaded them whole pickles the result; the next run
whose key matches takes it from here instead (~5 ms).

The key is a sha256 of what decides the result: every regular file directly in the two
directories (names and bytes: the loader reads most, and providers.yaml names the functions
an expression may call), the directories' paths (Knowledge names its files), the source of
the modules that build and define it (remedy/knowledge/*.py, remedy/model.py, the operations
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
import sys
from pathlib import Path
from typing import Any

_TAG = b"remedy-knowledge-1\0"
_SOURCES = ("knowledge", "model.py", "operations/__init__.py")  # under src/remedy/


def cache_path() -> str:
    """One file per remedy install (keyed by its path): two checkouts do not take turns."""
    import zlib

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    here = zlib.crc32(os.path.dirname(os.path.dirname(os.path.abspath(__file__))).encode())
    v = sys.version_info
    return os.path.join(base, "remedy", f"knowledge-{here:08x}-py{v[0]}{v[1]}.pickle")


def _files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.is_file())
    except OSError:
        return []


def key(kdir: Path, pdir: Path) -> bytes | None:
    """sha256 of everything the loaded knowledge depends on (module doc); None when a file
    cannot be read (the ordinary load then reports it)."""
    import hashlib

    import jinja2
    import pydantic

    from remedy.knowledge.yamlload import _yaml_version

    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(
        "\0".join(
            (
                sys.version,
                pydantic.VERSION,
                jinja2.__version__,
                _yaml_version(),
                str(kdir),
                str(pdir),
            )
        ).encode()
    )
    srcs: list[Path] = []
    for name in _SOURCES:
        p = pkg / name
        srcs += sorted(p.glob("*.py")) if p.is_dir() else [p]
    try:
        for group, files in ((b"S", srcs), (b"K", _files(kdir)), (b"P", _files(pdir))):
            for p in files:
                body = p.read_bytes()
                h.update(b"%s%s\0%d\0" % (group, p.name.encode(), len(body)) + body)
    except OSError:
        return None
    return h.digest()


# what a cached knowledge base is made of: (module, class names); nothing else is unpickled
_ALLOWED: dict[str, frozenset[str]] = {}


def _allowed() -> dict[str, frozenset[str]]:
    """Per module, the names a cache may name: the pydantic models of the knowledge schema,
    the loader's compiled records, the compiled expressions, and this module's rebuilders."""
    if not _ALLOWED:
        from pydantic import BaseModel

        from remedy import model
        from remedy.knowledge import schema, skew

        for mod in (schema, skew, model):
            _ALLOWED[mod.__name__] = frozenset(
                n
                for n, v in vars(mod).items()
                if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == mod.__name__
            )
        _ALLOWED["remedy.knowledge.loader"] = frozenset(
            {"Knowledge", "CompiledRule", "CompiledAction", "CompiledBefore"}
        )
        _ALLOWED[__name__] = frozenset({"_expression", "_template", "_functions"})
    return _ALLOWED


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name not in _allowed().get(module, ()):
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a knowledge base")
        return super().find_class(module, name)


def _expression(code: bytes, names: frozenset[str]) -> Any:
    from remedy.knowledge.expr import Expression

    return Expression(code, names)  # type: ignore[arg-type]  # unmarshalled when first run


def _template(code: bytes, source: str) -> Any:
    from remedy.knowledge.expr import KnowledgeTemplate

    return KnowledgeTemplate(code, source)  # type: ignore[arg-type]


def _functions(state: dict[str, Any]) -> Any:
    from remedy.knowledge.functions import Functions

    fns = Functions.__new__(Functions)
    fns.__dict__.update(state)
    return fns


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        import marshal

        from remedy.knowledge.expr import Expression, KnowledgeTemplate
        from remedy.knowledge.functions import Functions

        t = type(obj)
        if t is Expression:
            return _expression, (marshal.dumps(obj._code), obj.remedy_names)
        if t is KnowledgeTemplate:
            return _template, (marshal.dumps(obj._code), obj.remedy_source)
        if t is Functions:  # its memos (`_statics`, ...) are rebuilt on first use
            return _functions, ({k: v for k, v in vars(obj).items() if not k.startswith("_")},)
        return NotImplemented


def load(k: bytes) -> Any | None:
    """The knowledge base cached under key ``k``, or None (missing, stale, foreign, damaged,
    or naming anything but knowledge classes)."""
    from remedy.cachefile import read_private

    body = read_private(cache_path())
    if body is None or not body.startswith(_TAG + k):
        return None
    try:
        kb = _Unpickler(io.BytesIO(body[len(_TAG) + len(k) :])).load()
    except Exception:  # a refused name, a class that changed shape: the ordinary load
        return None
    from remedy.knowledge.loader import Knowledge

    return kb if type(kb) is Knowledge else None


def save(k: bytes, kb: Any) -> None:
    """Keep ``kb`` (just loaded and checked) under key ``k``; failures are harmless."""
    from remedy.cachefile import write_private

    out = io.BytesIO()
    try:
        _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(kb)
    except Exception:  # something not picklable: no cache, as before
        return
    write_private(cache_path(), _TAG + k + out.getvalue())
