"""Which toolkit each consumer actually picks, by applying its lookup order to an environment.

The lookup orders are data (knowledge/components.yaml); this module is the small interpreter
that walks them over a facts snapshot. It works on plain dicts because the planner simulates
thousands of fact edits and pydantic copies would dominate the cost.
"""

from __future__ import annotations

import operator
import posixpath
from dataclasses import dataclass
from typing import Any

# systemd's default PATH for services (systemd.exec(5), "Environment variables in spawned
# processes"): units do not inherit the login shell's PATH.
SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Pick:
    tk: dict[str, Any] | None  # the toolkit facts, when the chosen path is a known prefix
    path: str | None  # the path the consumer takes as its toolkit root
    how: str  # "CUDA_HOME", "PATH (which nvcc)", "default /usr/local/cuda", "nothing found"


def norm(path: str) -> str:
    p = posixpath.normpath(path.strip()) if path and path.strip() else ""
    return p if p != "." else ""


_INDEX: dict[int, tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]] = {}
_INDEX_MAX = 256


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
        for root in [tk["prefix"], *tk.get("aliases", ())]:
            at.setdefault(norm(root), tk)
            if tk.get("nvcc_release"):
                bins.setdefault(norm(posixpath.join(root, "bin")), tk)
    if len(_INDEX) >= _INDEX_MAX:
        _INDEX.clear()
    _INDEX[id(toolkits)] = (snap, at, bins)
    return at, bins


def toolkit_at(facts: dict[str, Any], path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    p = norm(path)
    tk = _index(facts.get("toolkits", ()))[0].get(p)
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
    tk = _index(facts.get("toolkits", ()))[1].get(d)
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
