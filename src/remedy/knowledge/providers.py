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
from pydantic import BaseModel, ConfigDict, Field

from remedy.errors import KnowledgeError

# what a log may name as a missing file (anything else is not looked up, nor shown)
_SAFE = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+/-]{0,199}")


class Entry(BaseModel):
    """One package that ships a file (built from the table when it is loaded)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    pip: str | None = None
    apt: str | None = None
    version: str | None = None


class Package(BaseModel):
    """A package's files as its own file list has them: headers by their path under
    include/, deep header trees by their top two dirs, libraries by file name."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    version: str | None = None
    source: str | None = None
    headers: list[str] = Field(default_factory=list)
    header_dirs: list[str] = Field(default_factory=list)
    libraries: list[str] = Field(default_factory=list)


class Files(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    packages: dict[str, Package] = Field(default_factory=dict)
    # file -> who ships it (filled from `packages`)
    headers: dict[str, list[Entry]] = Field(default_factory=dict, exclude=True)
    header_dirs: dict[str, list[Entry]] = Field(default_factory=dict, exclude=True)
    libraries: dict[str, list[Entry]] = Field(default_factory=dict, exclude=True)

    def index(self, manager: str) -> None:
        for name, pkg in self.packages.items():
            e = Entry(pip=name, version=pkg.version) if manager == "pip" else Entry(apt=name)
            for group in ("headers", "header_dirs", "libraries"):
                idx: dict[str, list[Entry]] = getattr(self, group)
                for f in getattr(pkg, group):
                    idx.setdefault(f, []).append(e)


class PipLine(Files):
    cuda_toolkit: str
    pins: dict[str, str] = Field(default_factory=dict)
    pins_source: str


class Table(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    pip: dict[str, PipLine]
    debian: Files


def table_path() -> Path:
    from remedy.knowledge.dirs import data_dirs

    return data_dirs()[0] / "providers.yaml"


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> Table:
    import sys

    from remedy.knowledge.yamlload import cached_parse

    def parse(text: str) -> Any:
        import yaml  # only when the parse cache does not have it (~13 ms)

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader

    try:
        with open(path, encoding="utf-8") as f:
            # ~90 KB: parsed once, then read back from the YAML parse cache
            data = cached_parse(f.read(), parse, kind="providers")
        table = Table.model_validate(data)
    except (OSError, ValueError) as e:
        raise KnowledgeError(f"provider table: {e}", file=path) from e
    except Exception as e:
        yaml = sys.modules.get("yaml")
        if yaml is None or not isinstance(e, yaml.YAMLError):
            raise
        raise KnowledgeError(f"provider table: {e}", file=path) from e
    for line in table.pip.values():
        line.index("pip")
    table.debian.index("apt")
    return table


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
