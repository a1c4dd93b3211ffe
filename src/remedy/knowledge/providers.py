"""Who provides a file: the generated provider table (knowledge/providers.yaml) and its lookup.

One rule covers every "file X not found" (a missing header, `cannot find -lX`, `libX.so.N:
cannot open shared object file`): the file is looked up in the table of the real package file
lists (scripts/gen_provider_table.py), for the toolkit line the server's torch pins, and the
package that ships it is proposed at the version that line's `cuda-toolkit` metapackage pins.
The table is data generated from the packages, never edited by hand.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from remedy.errors import KnowledgeError

# what a log may name as a missing file (anything else is not looked up, nor shown)
_SAFE = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+/-]{0,199}")

# The run-time table is plain objects built from the rows pydantic checked when the file was
# loaded (remedy.knowledge.providers_schema), and kept in a cache (``load_table``): a log
# that names a missing library reads it without importing pydantic (~30 ms).


class _Plain:
    """Fields in ``_FIELDS`` (keyword arguments), equality and repr over them."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def __init__(self, **kw: Any) -> None:
        for name in self._FIELDS:
            object.__setattr__(self, name, kw.pop(name))
        if kw:
            raise TypeError(f"{type(self).__name__}: unknown field {next(iter(kw))!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> Any:
        return _make, (type(self).__name__, tuple(getattr(self, n) for n in self._FIELDS))


def _make(name: str, values: tuple[Any, ...]) -> Any:
    """A plain object from its cached fields (the one name the cache may call)."""
    cls = _CLASSES[name]
    obj = cls.__new__(cls)
    for n, v in zip(cls._FIELDS, values, strict=True):
        object.__setattr__(obj, n, v)
    return obj


class Entry(_Plain):
    """One package that ships a file (built from the table when it is loaded)."""

    __slots__ = ("pip", "apt", "version")
    _FIELDS = ("pip", "apt", "version")
    pip: str | None
    apt: str | None
    version: str | None

    def __init__(self, pip: str | None = None, apt: str | None = None, version: str | None = None):
        super().__init__(pip=pip, apt=apt, version=version)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Entry is frozen: {name}")

    def __hash__(self) -> int:
        return hash((self.pip, self.apt, self.version))


class Package(_Plain):
    """A package's files (providers_schema.Package's fields)."""

    __slots__ = ("version", "source", "headers", "header_dirs", "libraries")
    _FIELDS = ("version", "source", "headers", "header_dirs", "libraries")
    version: str | None
    source: str | None
    headers: list[str]
    header_dirs: list[str]
    libraries: list[str]


class Files(_Plain):
    """The packages of a line (or of Debian), and file -> who ships it (filled by ``index``)."""

    __slots__ = ("packages", "headers", "header_dirs", "libraries")
    _FIELDS = ("packages", "headers", "header_dirs", "libraries")
    packages: dict[str, Package]
    headers: dict[str, list[Entry]]
    header_dirs: dict[str, list[Entry]]
    libraries: dict[str, list[Entry]]

    def index(self, manager: str) -> None:
        for name, pkg in self.packages.items():
            e = Entry(pip=name, version=pkg.version) if manager == "pip" else Entry(apt=name)
            for group in ("headers", "header_dirs", "libraries"):
                idx: dict[str, list[Entry]] = getattr(self, group)
                for f in getattr(pkg, group):
                    idx.setdefault(f, []).append(e)


class PipLine(Files):
    """One toolkit line's wheels, the cuda-toolkit version and the pins it makes."""

    __slots__ = ("cuda_toolkit", "pins", "pins_source")
    _FIELDS = (*Files._FIELDS, "cuda_toolkit", "pins", "pins_source")
    cuda_toolkit: str
    pins: dict[str, str]
    pins_source: str


class Table(_Plain):
    __slots__ = ("pip", "debian")
    _FIELDS = ("pip", "debian")
    pip: dict[str, PipLine]
    debian: Files


_CLASSES: dict[str, type[_Plain]] = {c.__name__: c for c in (Entry, Package, Files, PipLine, Table)}


def _files_of(checked: Any, cls: type[Files], **extra: Any) -> Any:
    """The plain Files (or PipLine) of a checked providers_schema.Files, not indexed yet."""
    pkgs = {
        name: Package(**{n: getattr(p, n) for n in Package._FIELDS})
        for name, p in checked.packages.items()
    }
    return cls(packages=pkgs, headers={}, header_dirs={}, libraries={}, **extra)


def _plain_table(checked: Any) -> Table:
    """The plain, indexed table of a providers_schema.Table that passed validation."""
    table = Table(
        pip={
            line: _files_of(
                f,
                PipLine,
                cuda_toolkit=f.cuda_toolkit,
                pins=dict(f.pins),
                pins_source=f.pins_source,
            )
            for line, f in checked.pip.items()
        },
        debian=_files_of(checked.debian, Files),
    )
    for line in table.pip.values():
        line.index("pip")
    table.debian.index("apt")
    return table


def table_path() -> Path:
    from remedy.knowledge.dirs import data_dirs

    return data_dirs()[0] / "providers.yaml"


# the table's form in its cache (change it with the classes above)
_FORMAT = "providers-plain-1"


def _key(path: str, text: str) -> bytes:
    """sha256 of the table's path and text, of this module's and its schema's source, and of
    the versions (remedy.knowledge.kbcache's)."""
    from remedy.knowledge.kbcache import _hash_files, _sources, _versions

    h = _versions(path, _FORMAT)
    h.update(text.encode("utf-8"))
    mods = ("knowledge/providers.py", "knowledge/providers_schema.py")
    return _hash_files(h, [(b"S", _sources(mods))]) or b""


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> Table:
    """The table at ``path``: from its cache (plain objects, kept like the knowledge base:
    remedy.knowledge.kbcache) when this same text was checked before; else parsed, checked by
    pydantic (providers_schema.Table), made plain and kept."""
    import sys

    from remedy.knowledge import kbcache
    from remedy.knowledge.yamlload import cached_parse

    def parse(text: str) -> Any:
        import yaml  # only when the parse cache does not have it (~13 ms)

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        k = _key(path, text)
        got = kbcache._load("providers", k, _ALLOWED) if k else None
        if type(got) is Table:
            return got
        from remedy.knowledge.providers_schema import Table as Checked

        # ~90 KB: parsed once, then read back from the YAML parse cache
        data = cached_parse(text, parse, kind="providers")
        table = _plain_table(Checked.model_validate(data))
    except (OSError, ValueError) as e:
        raise KnowledgeError(f"provider table: {e}", file=path) from e
    except Exception as e:
        yaml = sys.modules.get("yaml")
        if yaml is None or not isinstance(e, yaml.YAMLError):
            raise
        raise KnowledgeError(f"provider table: {e}", file=path) from e
    if k:
        kbcache._save("providers", k, table)
    return table


_ALLOWED = {__name__: frozenset({"_make"})}


def load_table(path: Path | None = None) -> Table | None:
    p = path or table_path()
    if not p.is_file():
        return None
    return _load(str(p), p.stat().st_mtime)


def safe_name(name: Any) -> str | None:
    """A file name from a log, if it looks like one (no spaces, quotes, `..`, leading `/`)."""
    s = str(name or "").strip()
    if not _SAFE.fullmatch(s) or ".." in s:
        return None
    return s


def missing_file(kind: str, value: str) -> str | None:
    """The file a fatal line names: header `X.h` as is, `-lX` as `libX.so`, a shared object
    as its soname."""
    v = safe_name(value)
    if not v:
        return None
    return f"lib{v}.so" if kind == "lib" else v


def _line_key(table: Table, line: str | None) -> str | None:
    if not line:
        return None
    if line in table.pip:
        return line
    # same major, the nearest line at or below (13.1 -> 13.0)
    try:
        want = Version(line)
    except InvalidVersion:
        return None
    best = None
    for k in table.pip:
        kv = Version(k)
        if kv.major == want.major and kv <= want and (best is None or kv > Version(best)):
            best = k
    return best


def line_of(py: dict[str, Any] | None) -> str | None:
    """The toolkit line of a Python env: the cuda-toolkit torch pins (13.0.3 -> 13.0), else
    torch's CUDA (torch.version.cuda)."""
    if not py:
        return None
    ct = str((py.get("packages") or {}).get("cuda-toolkit") or "")
    m = re.match(r"(\d+)\.(\d+)", ct) or re.match(r"(\d+)\.(\d+)", str(py.get("torch_cuda") or ""))
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _find(files: Files, name: str, py_version: str | None) -> list[Entry]:
    if name.startswith("lib") and ".so" in name or name.endswith(".a"):
        exact = files.libraries.get(name)
        if exact:
            return exact
        stem = name.split(".so")[0]
        out: list[Entry] = []
        for k, v in files.libraries.items():
            if k.startswith(stem + ".so") or k == stem + ".a":
                out.extend(e for e in v if e not in out)
        return out
    if name in files.headers:
        return files.headers[name]
    # <Python.h> lives under python3.X/ in Debian: the server's Python's first
    if "/" not in name:
        keys = [k for k in files.headers if k.endswith("/" + name)]
        if py_version:
            keys.sort(key=lambda k: not k.startswith(f"python{py_version}/"))
        if keys:
            return files.headers[keys[0]]
    for k in sorted(files.header_dirs, key=len, reverse=True):
        if name.startswith(k):
            return files.header_dirs[k]
    return []


def providers(py: dict[str, Any] | None, name: str, table: Table | None = None) -> list[Entry]:
    """Every package that ships `name` for the env's toolkit line: pip wheels first (at the
    line's pinned version), then Debian packages."""
    table = table or load_table()
    n = safe_name(name)
    if table is None or n is None:
        return []
    key = _line_key(table, line_of(py))
    pyv = (py or {}).get("python")
    memo = (id(table), key, n, pyv)
    hit = _PROVIDERS.get(memo)
    if hit is not None and hit[0] is table:  # the planner asks the same thousands of times
        return list(hit[1])
    out: list[Entry] = []
    if key:
        out.extend(_find(table.pip[key], n, pyv))
    out.extend(_find(table.debian, n, pyv))
    if len(_PROVIDERS) > 4096:
        _PROVIDERS.clear()
    _PROVIDERS[memo] = (table, tuple(out))
    return out


_PROVIDERS: dict[tuple[Any, ...], tuple[Table, tuple[Entry, ...]]] = {}


def unprovided(py: dict[str, Any] | None, names: Any) -> dict[str, str]:
    """file -> what would provide it, for each needed file whose providing package is not
    installed in the env (files no package is known to ship are left out: not this rule's)."""
    pkgs = (py or {}).get("packages") or {}
    out: dict[str, str] = {}
    for name in list(names or ()):
        provs = providers(py, name)
        if not provs:
            continue
        if any(p.pip and pkgs.get(p.pip) for p in provs):
            continue
        out[str(name)] = describe(provs)
    return out


def describe(provs: list[Entry]) -> str:
    pip = [f"pip {p.pip}=={p.version}" for p in provs if p.pip]
    apt = [f"apt {p.apt}" for p in provs if p.apt]
    return " or ".join(dict.fromkeys(pip[:1] + apt[:2]))


def pip_providers(py: dict[str, Any] | None, names: Any) -> list[str]:
    """The pip wheels that would provide the env's unprovided files (one per file)."""
    pkgs = (py or {}).get("packages") or {}
    out: list[str] = []
    for name in list(names or ()):
        provs = providers(py, name)
        if any(p.pip and pkgs.get(p.pip) for p in provs):
            continue
        first = next((p.pip for p in provs if p.pip), None)
        if first and first not in out:
            out.append(first)
    return out


def provider_version(py: dict[str, Any] | None, package: Any) -> str | None:
    """The version of a wheel that the env's toolkit line pins (cuda-toolkit's Requires-Dist)."""
    table = load_table()
    if table is None:
        return None
    key = _line_key(table, line_of(py))
    return table.pip[key].pins.get(str(package)) if key else None


def provided_files(py: dict[str, Any] | None, package: Any, names: Any) -> list[str]:
    """Which of `names` the wheel `package` ships for the env's line."""
    return [n for n in list(names or ()) if any(p.pip == package for p in providers(py, n))]
