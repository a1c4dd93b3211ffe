"""Which toolkit each consumer actually picks, by applying its lookup order to an environment.

The lookup orders are data (knowledge/components.yaml); this module is the small interpreter
that walks them over a facts snapshot. It works on plain dicts because the planner simulates
thousands of fact edits and pydantic copies would dominate the cost.
"""

from __future__ import annotations

import operator
import posixpath
from typing import Any

from remedy.record import FrozenRecord

# systemd's default PATH for services (systemd.exec(5), "Environment variables in spawned
# processes"): units do not inherit the login shell's PATH.
SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# Plain records (remedy.record), not dataclasses: why is said there.
class Pick(FrozenRecord):
    """tk: the toolkit facts, when the chosen path is a known prefix; path: the path the
    consumer takes as its toolkit root; how: "CUDA_HOME", "PATH (which nvcc)", "default
    /usr/local/cuda", "nothing found"."""

    _FIELDS = ("tk", "path", "how")  # a __dict__, no slots: pickle and copy restore it as-is

    def __init__(self, tk: dict[str, Any] | None, path: str | None, how: str) -> None:
        object.__setattr__(self, "tk", tk)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "how", how)


def norm(path: str) -> str:
    if type(path) is str:  # the planner normalizes the same few thousand paths again and again
        hit = _NORM.get(path)
        if hit is None:
            if len(_NORM) > 65536:
                _NORM.clear()
            hit = _NORM[path] = _norm(path)
        return hit
    return _norm(path)


_NORM: dict[str, str] = {}


def _norm(path: str) -> str:
    p = posixpath.normpath(path.strip()) if path and path.strip() else ""
    return p if p != "." else ""


_INDEX: dict[int, tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]] = {}
_INDEX_MAX = 256


def _roots(tk: dict[str, Any]) -> list[str]:
    return [tk["prefix"], *tk.get("aliases", ())]


def _index(toolkits: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(normalized prefix or alias → first toolkit, normalized bin dir → first toolkit with an
    nvcc) for one toolkit list, remembered while the list holds the same toolkit objects. The
    planner calls these lookups thousands of times on states that share one list; a linear
    scan normalizing every path made each lookup O(toolkits)."""
    snap = tuple(toolkits)
    hit = _INDEX.get(id(toolkits))
    if hit is not None and len(hit[0]) == len(snap) and all(map(operator.is_, hit[0], snap)):
        return hit[1], hit[2]
    at: dict[str, Any] = {}
    bins: dict[str, Any] = {}
    for tk in snap:
        for root in _roots(tk):
            at.setdefault(norm(root), tk)
            if tk.get("nvcc_release"):
                bins.setdefault(norm(posixpath.join(root, "bin")), tk)
    if len(_INDEX) >= _INDEX_MAX:
        _INDEX.clear()
    _INDEX[id(toolkits)] = (snap, at, bins)
    return at, bins


_ABSENT: Any = object()
_MAX_DEPTH = 16  # overlays before an index is built afresh (lookups walk the chain)


class _Overlay:
    """A toolkit index as changes over another one: ``at``/``bins`` map a key to its toolkit,
    or to None where a replaced toolkit no longer claims it. A root (``base`` None) holds the
    whole index and ``dups``, the keys several toolkits claim (first one wins)."""

    __slots__ = ("at", "bins", "base", "depth", "dups")

    def __init__(self, base: _Overlay | None) -> None:
        self.at: dict[str, Any] = {}
        self.bins: dict[str, Any] = {}
        self.base = base
        self.depth = base.depth + 1 if base is not None else 0
        self.dups: set[str] = set()

    def get(self, table: str, key: str) -> Any:
        node: _Overlay | None = self
        while node is not None:
            v = getattr(node, table).get(key, _ABSENT)
            if v is not _ABSENT:
                return v
            node = node.base
        return None

    def root(self) -> _Overlay:
        node = self
        while node.base is not None:
            node = node.base
        return node


def _keys(tk: dict[str, Any]) -> tuple[list[str], list[str]]:
    roots = _roots(tk)
    bins = [norm(posixpath.join(r, "bin")) for r in roots] if tk.get("nvcc_release") else []
    return [norm(r) for r in roots], bins


def _full(items: list[Any]) -> _Overlay:
    idx = _Overlay(None)
    twice = len({id(tk) for tk in items}) != len(items)  # one toolkit at two positions
    for tk in items:
        ats, bins = _keys(tk)
        for table, keys in ((idx.at, ats), (idx.bins, bins)):
            for k in keys:
                cur = table.setdefault(k, tk)
                if cur is not tk or twice:
                    idx.dups.add(k)
    return idx


def _derive(
    parent: _Overlay, old: list[Any], new: list[Any], changed: tuple[int, ...]
) -> _Overlay | None:
    """``new``'s index from ``parent`` (``old``'s): the toolkits at ``changed`` positions
    replaced or appended. None where that cannot be told without a full build (a key several
    toolkits claim, a position removed)."""
    if len(new) < len(old) or parent.depth >= _MAX_DEPTH:
        return None
    dups = parent.root().dups
    idx = _Overlay(parent)
    for i in sorted(set(changed)):
        was = old[i] if i < len(old) else None
        now = new[i]
        if was is now:
            continue
        if was is not None:
            for table, keys in zip(("at", "bins"), _keys(was), strict=True):
                for k in keys:
                    cur = idx.get(table, k)
                    if k in dups or (cur is not was and cur is not None):
                        return None
                    getattr(idx, table)[k] = None
        for table, keys in zip(("at", "bins"), _keys(now), strict=True):
            for k in keys:
                cur = idx.get(table, k)
                if cur is None:
                    getattr(idx, table)[k] = now
                elif cur is not now or k in dups:
                    return None
    return idx


class Frozen(list):  # type: ignore[type-arg]
    """A list that cannot change in place, for the planner's states: they share their lists,
    and what is derived from one (its toolkit index) stays true while it lives. Made from a
    parent list with some positions replaced or appended, its index is the parent's plus
    those few changes, not a rebuild over every toolkit (planning stays linear in them).
    Copies and pickles of it are plain lists."""

    __slots__ = ("_idx", "_parent", "_changed", "_counts")

    def __init__(
        self, items: Any = (), *, parent: Frozen | None = None, changed: tuple[int, ...] = ()
    ) -> None:
        super().__init__(items)
        self._idx: _Overlay | None = None
        self._parent = parent
        self._changed = changed
        self._counts: dict[str, dict[Any, int]] = {}

    def _refused(self, *_: Any, **__: Any) -> Any:
        raise TypeError("a planner state's list is shared: copy it to change it")

    append = extend = insert = pop = remove = clear = sort = reverse = _refused
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refused  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))

    def changed_since(self, ancestor: Any) -> set[int] | None:
        """The positions at which this list may hold another item than ``ancestor``, when it
        was made from it through Frozen lists (the other positions hold the same objects);
        None when it was not."""
        out: set[int] = set()
        node: Any = self
        for _ in range(64):
            if node is ancestor:
                return out
            if type(node) is not Frozen or node._parent is None:
                return None
            out.update(node._changed)
            node = node._parent
        return None

    def touched(self) -> None:
        """A toolkit of this list was changed in place while it was being built (one effect
        sets several fields): forget the index, derive it again from the parent's."""
        self._idx = None
        self._counts = {}

    def counts(self, name: str, fn: Any) -> dict[Any, int]:
        """How many items ``fn`` (a pure function of one item, named ``name``) gives each
        value for: the parent's counts, less the replaced items', plus the new ones'."""
        got = self._counts.get(name)
        if got is None:
            parent = self._parent
            if parent is not None and len(self) >= len(parent):
                got = dict(parent.counts(name, fn))
                for i in set(self._changed):
                    was = parent[i] if i < len(parent) else None
                    if was is self[i]:
                        continue
                    if was is not None:
                        for v in fn(was):
                            got[v] -= 1
                            if not got[v]:
                                del got[v]
                    for v in fn(self[i]):
                        got[v] = got.get(v, 0) + 1
            else:
                got = item_counts(list(self), name, fn)
            self._counts[name] = got
        return got

    def toolkit_index(self) -> _Overlay:
        if self._idx is None:
            idx = None
            if self._parent is not None:
                idx = _derive(self._parent.toolkit_index(), self._parent, self, self._changed)
            self._idx = idx if idx is not None else _full(self)
        return self._idx


def item_counts(items: Any, name: str, fn: Any) -> dict[Any, int]:
    """For each value ``fn`` gives for some item of ``items``, how many items give it. On a
    Frozen list (a planner state's) it is derived from the parent list's counts: an
    aggregate over every toolkit that each rule evaluation asks for stays O(changes)."""
    if type(items) is Frozen:
        return items.counts(name, fn)
    out: dict[Any, int] = {}
    for item in items:
        for v in fn(item):
            out[v] = out.get(v, 0) + 1
    return out


def _lookup(toolkits: Any, table: str, key: str) -> Any:
    if type(toolkits) is Frozen:
        return toolkits.toolkit_index().get(table, key)
    return _index(toolkits)[0 if table == "at" else 1].get(key)


def toolkit_at(facts: dict[str, Any], path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    p = norm(path)
    tk = _lookup(facts.get("toolkits", ()), "at", p)
    # the index is keyed by the paths the toolkits had when it was built: confirm
    if tk is not None and (
        norm(tk["prefix"]) == p or any(norm(a) == p for a in tk.get("aliases", ()))
    ):
        return tk
    return _toolkit_at_scan(facts, p) if tk is not None else None


def _toolkit_at_scan(facts: dict[str, Any], p: str) -> dict[str, Any] | None:
    for tk in facts.get("toolkits", ()):
        if norm(tk["prefix"]) == p or any(norm(a) == p for a in tk.get("aliases", ())):
            return tk
    return None


def toolkit_with_bin(facts: dict[str, Any], bindir: str) -> dict[str, Any] | None:
    d = norm(bindir)
    tk = _lookup(facts.get("toolkits", ()), "bins", d)
    if tk is None:
        return None
    if tk.get("nvcc_release") and any(
        norm(posixpath.join(root, "bin")) == d for root in [tk["prefix"], *tk.get("aliases", ())]
    ):
        return tk
    for tk in facts.get("toolkits", ()):  # changed in place since indexed: scan
        if not tk.get("nvcc_release"):
            continue
        for root in [tk["prefix"], *tk.get("aliases", ())]:
            if norm(posixpath.join(root, "bin")) == d:
                return tk
    return None


def workload_env(facts: dict[str, Any]) -> dict[str, str]:
    """The environment the server runs under: its unit's, else the login shell's."""
    wl = facts.get("workload") or {}
    svc_name = wl.get("service")
    if svc_name:
        for svc in facts.get("services", ()):
            if svc["name"] == svc_name:
                env = dict(svc.get("environment") or {})
                env.update(svc.get("environment_files_env") or {})
                # a login shell in ExecStart reads the system profile files after both
                env.update(svc.get("exec_shell_env") or {})
                env.setdefault("PATH", SYSTEMD_DEFAULT_PATH)
                return env
    return dict(facts.get("shell_env") or {})


def set_workload_env(facts: dict[str, Any], var: str, value: str | None) -> None:
    wl = facts.get("workload") or {}
    svc_name = wl.get("service")
    target: dict[str, str] | None = None
    if svc_name:
        for svc in facts.get("services", ()):
            if svc["name"] == svc_name:
                target = svc.setdefault("environment", {})
    if target is None:
        target = facts.setdefault("shell_env", {})
    if value is None:
        target.pop(var, None)
    else:
        target[var] = value


def pick_toolkit(facts: dict[str, Any], lookup: list[str], env: dict[str, str]) -> Pick:
    for entry in lookup:
        kind, _, arg = entry.partition(":")
        if kind == "env":
            value = env.get(arg)
            if value:
                return Pick(toolkit_at(facts, value), value, arg)
        elif kind == "which":
            for d in (env.get("PATH") or "").split(":"):
                if not d:
                    continue
                tk = toolkit_with_bin(facts, d)
                if tk:
                    return Pick(tk, tk["prefix"], f"PATH (which {arg} → {norm(d)}/{arg})")
        elif kind == "default":
            tk = toolkit_at(facts, arg)
            if tk:
                return Pick(tk, arg, f"default {arg}")
    return Pick(None, None, "nothing found")


def workload_python(facts: dict[str, Any]) -> dict[str, Any] | None:
    wl = facts.get("workload") or {}
    want = wl.get("python")
    if not want and wl.get("service"):
        for svc in facts.get("services", ()):
            if svc["name"] == wl["service"]:
                want = svc.get("python")
    pys = facts.get("pythons", ())
    for py in pys:
        if want and norm(py["path"]) == norm(want):
            return py
    for py in pys:
        if "sglang" in py.get("packages", {}) or "flashinfer-python" in py.get("packages", {}):
            return py
    return pys[0] if pys else None
