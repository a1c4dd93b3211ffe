"""The functions rule and action expressions may call.

They are mechanisms (compare versions, look up a release, list missing libraries); the facts
about CUDA they use come from knowledge/cuda-releases.yaml. Each takes plain values and never
raises on missing facts: it returns None or an empty value, so a rule's `when` can guard.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from jinja2 import Undefined
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from remedy.knowledge.schema import Release
from remedy.resolve import norm, toolkit_at

_REL = re.compile(r"(\d+)\.(\d+)")


def _s(v: Any) -> str | None:
    if v is None or isinstance(v, Undefined):
        return None
    return str(v)


def ver(v: Any) -> Version | None:
    s = _s(v)
    if not s:
        return None
    m = re.match(r"\d+(\.\d+)*", s.strip())
    if not m:
        return None
    try:
        return Version(m.group(0))
    except InvalidVersion:
        return None


def rel(v: Any) -> str | None:
    s = _s(v)
    m = _REL.match(s) if s else None
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def cudart_release(v: Any) -> str | None:
    try:
        n = int(str(v))
    except (TypeError, ValueError):
        return None
    return f"{n // 1000}.{(n % 1000) // 10}"


def cudart_int(release: Any) -> int | None:
    r = rel(release)
    if not r:
        return None
    major, minor = (int(x) for x in r.split("."))
    return major * 1000 + minor * 10


def arch_list_entries(value: Any) -> list[str]:
    s = _s(value) or ""
    return s.split(" ") if s else []


def arch_list_valid(value: Any) -> bool:
    """FlashInfer splits on one space and needs major.minor[suffix] in each entry."""
    entries = arch_list_entries(value)
    return bool(entries) and all(re.fullmatch(r"\d+\.\d+[af]?", e) for e in entries)


def arch_list_suffixed(value: Any) -> bool:
    return any(re.fullmatch(r"\d+\.\d+[af]", e) for e in arch_list_entries(value))


def arch_list_covers(value: Any, cap: Any) -> bool:
    """True if some entry can run on a GPU of compute capability `cap`.

    An 'a' cubin runs only on exactly its CC; a plain or 'f' cubin runs on the same major with
    an equal or higher minor (Blackwell compatibility guide).
    """
    c = rel(cap)
    if not c:
        return False
    cmaj, cmin = (int(x) for x in c.split("."))
    for e in re.split(r"[ ;,]+", _s(value) or ""):
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", e.strip())
        if not m:
            continue
        maj, mnr, sfx = int(m.group(1)), int(m.group(2)), m.group(3)
        if m.group(4) and (maj, mnr) <= (cmaj, cmin):  # +PTX JITs forward
            return True
        if sfx == "a" and (maj, mnr) == (cmaj, cmin):
            return True
        if sfx != "a" and maj == cmaj and mnr <= cmin:
            return True
    return False


def dropin_name(var: Any) -> str:
    """One drop-in per variable remedy manages, so steps (and their rollbacks) stay apart."""
    return f"50-remedy-{(_s(var) or 'env').lower().replace('_', '-')}.conf"


def dropin_text(env: Any = None, unset: Any = None) -> str:
    from remedy.units.dropin import render_dropin

    return render_dropin(dict(env or {}), list(unset or []))


class Functions:
    """Expression functions bound to one knowledge base and one facts snapshot."""

    def __init__(self, releases: list[Release], components: dict[str, Any]) -> None:
        self.releases = sorted(releases, key=lambda r: Version(r.release))
        self.by_release = {r.release: r for r in self.releases}
        self.components = components

    # -- static tables ------------------------------------------------------------------
    def ptx_isa(self, release: Any) -> Version | None:
        r = self.by_release.get(rel(release) or "")
        return Version(r.ptx_isa) if r else None

    def min_cuda_for(self, cap: Any) -> str | None:
        c = rel(cap)
        if not c:
            return None
        for r in self.releases:
            if any(t.rstrip("af") == c for t in r.targets):
                return r.release
        # Older architectures predate the table: any supported toolkit compiles for them.
        return None

    def min_driver(self, release: Any) -> str | None:
        r = self.by_release.get(rel(release) or "")
        return r.min_driver if r else None

    def wheel(self, release: Any, name: str) -> str | None:
        r = self.by_release.get(rel(release) or "")
        return r.wheels.get(name) if r else None

    def release_wheels(self, release: Any) -> dict[str, str]:
        r = self.by_release.get(rel(release) or "")
        return dict(r.wheels) if r else {}

    def apt_packages(self, release: Any) -> list[str]:
        r = self.by_release.get(rel(release) or "")
        return list(r.apt) if r else []

    # -- bound to a facts snapshot --------------------------------------------------------
    def bind(self, facts: dict[str, Any], env: dict[str, str]) -> dict[str, Callable[..., Any]]:
        def tk_at(path: Any) -> dict[str, Any] | None:
            return toolkit_at(facts, _s(path))

        def missing_libs(tk: Any, dirs: Any, libs: Any, any_dir: Any = False) -> list[str]:
            if not tk:
                return []
            have = {norm(d): set(names) for d, names in (tk.get("libs") or {}).items()}
            missing = []
            for lib in libs or []:
                fname = f"lib{lib}.so"
                found = [fname in have.get(norm(d), set()) for d in dirs or []]
                if any_dir:
                    # torch: lib64 when the dir exists, else lib
                    first = next((d for d in dirs if norm(d) in have), None)
                    ok = first is not None and fname in have[norm(first)]
                else:
                    ok = any(found)
                if not ok:
                    missing.append(f"lib{lib}.so")
            return missing

        def nvcc_owner(path: Any) -> dict[str, Any] | None:
            p = norm(_s(path) or "")
            for tk in facts.get("toolkits", ()):
                for root in [tk["prefix"], *tk.get("aliases", ())]:
                    if norm(posixpath.join(root, "bin", "nvcc")) == p:
                        return tk
            return None

        def unmet_requirements(py: Any) -> list[str]:
            if not py:
                return []
            out = []
            pkgs = py.get("packages") or {}
            for req in py.get("requirements") or []:
                have = pkgs.get(req["package"])
                try:
                    spec = SpecifierSet(req["spec"])
                except InvalidSpecifier:
                    continue
                if have is None or not spec.contains(have, prereleases=True):
                    out.append(
                        f"{req['by']} requires {req['package']}{req['spec']}, "
                        f"found {have or 'nothing'}"
                    )
            return out

        def releases_of(tk: Any) -> list[str]:
            """Candidate releases to align a split toolkit on: the ones its parts already have."""
            if not tk:
                return []
            cands = [
                rel(tk.get("nvcc_release")),
                cudart_release(tk.get("cudart_version")),
                rel(tk.get("cicc_release")),
            ]
            out: list[str] = []
            for c in cands:
                if c and c not in out and self.by_release.get(c) and self.by_release[c].wheels:
                    out.append(c)
            return out

        def aligned_pip(tk: Any, release: Any) -> dict[str, str]:
            wheels = self.release_wheels(release)
            names = ["nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime"]
            if tk and "nvidia-cuda-cccl" in (tk.get("pip") or {}):
                names.append("nvidia-cuda-cccl")
            return {n: wheels[n] for n in names if n in wheels}

        def merged(a: Any, b: Any) -> dict[str, Any]:
            return {**(a or {}), **(b or {})}

        def cudart_soname(tk: Any) -> str:
            for names in (tk or {}).get("libs", {}).values():
                for n in names:
                    if re.fullmatch(r"libcudart\.so\.\d+", n):
                        return n
            major = (rel((tk or {}).get("nvcc_release")) or "13.0").split(".")[0]
            return f"libcudart.so.{major}"

        def fixed_layout(tk: Any) -> dict[str, list[str]]:
            libs = {k: list(v) for k, v in ((tk or {}).get("libs") or {}).items()}
            base = libs.get("lib", [])
            if "libcudart.so" not in base:
                base = [*base, "libcudart.so"]
            libs["lib"] = base
            libs["lib64"] = list(base)
            libs["lib/stubs"] = ["libcuda.so"]
            libs["lib64/stubs"] = ["libcuda.so"]
            return libs

        def system_toolkit(release: Any) -> dict[str, Any]:
            r = rel(release)
            return {
                "prefix": f"/usr/local/cuda-{r}",
                "kind": "system",
                "nvcc_version": None,
                "nvcc_release": r,
                "ptxas_release": r,
                "cicc_release": r,
                "cudart_version": cudart_int(r),
                "cccl": {"present": True, "nv_target": True, "nv_detail": True,
                         "include_dir": "include/cccl"},
                "libs": {"lib64": ["libcudart.so", f"libcudart.so.{r.split('.')[0]}"],
                         "lib64/stubs": ["libcuda.so"]},
                "nvcc_profile_libdir": "lib64",
                "pip": {},
                "python": None,
                "stand_in": None,
                "aliases": [],
                "note": "predicted: installed by remedy",
            }

        def pip_prefix(python: Any) -> str | None:
            py = next((p for p in facts.get("pythons", ()) if p["path"] == _s(python)), None)
            if not py:
                return None
            ver_ = py.get("python") or "3"
            return f"{py['path']}/lib/python{ver_}/site-packages/nvidia/cu13"

        def pip_toolkit(python: Any, release: Any) -> dict[str, Any]:
            r = rel(release)
            prefix = pip_prefix(python) or f"{python}/nvidia/cu13"
            existing = toolkit_at(facts, prefix) or {}
            libs = dict(existing.get("libs") or {"lib": [f"libcudart.so.{r.split('.')[0]}"]})
            wheels = self.release_wheels(r)
            pip = {k: v for k, v in wheels.items() if k != "nvidia-cuda-cccl"}
            return {
                "prefix": prefix,
                "kind": "pip-cu13",
                "nvcc_version": wheels.get("nvidia-cuda-nvcc"),
                "nvcc_release": r,
                "ptxas_release": r,
                "cicc_release": r,
                "cudart_version": cudart_int(r),
                "cccl": {"present": False, "nv_target": False, "nv_detail": False,
                         "include_dir": None},
                "libs": libs,
                "nvcc_profile_libdir": "lib",
                "pip": pip,
                "python": _s(python),
                "stand_in": None,
                "aliases": [],
                "note": "predicted: installed by remedy",
            }

        def needed_release(gpu: Any) -> str:
            """The oldest release that passes every gate for this GPU and the server's torch."""
            need = Version("12.0")
            if gpu:
                m = self.min_cuda_for(gpu.get("compute_cap"))
                if m:
                    need = max(need, Version(m))
                if str(gpu.get("compute_cap", "")).startswith("12."):
                    need = max(need, Version("12.9"))
            return str(need)

        def toolkit_choices() -> list[str]:
            """Prefixes CUDA_HOME could point at: toolkits with an nvcc, then installable ones."""
            out = [tk["prefix"] for tk in facts.get("toolkits", ()) if tk.get("nvcc_release")]
            from remedy.resolve import workload_python

            py = workload_python(facts)
            torch_major = rel((py or {}).get("torch_cuda"))
            gpus = facts.get("gpus") or []
            need = Version(needed_release(gpus[0] if gpus else None))
            for r in self.releases:
                if Version(r.release) < need:
                    continue
                if torch_major and r.release.split(".")[0] != torch_major.split(".")[0]:
                    continue
                if r.apt and all(p in facts.get("apt_candidates", ()) for p in r.apt[:1]):
                    p = f"/usr/local/cuda-{r.release}"
                    if p not in out:
                        out.append(p)
                if r.wheels and py:
                    p = pip_prefix(py["path"])
                    tk = toolkit_at(facts, p)
                    if p and (not tk or not tk.get("nvcc_release")) and p not in out:
                        out.append(p)
                    break
            return out

        def apt_release_of(prefix: Any) -> str | None:
            m = re.fullmatch(r"/usr/local/cuda-(\d+\.\d+)", norm(_s(prefix) or ""))
            if m and self.apt_packages(m.group(1)):
                return m.group(1)
            return None

        def pip_release_of(prefix: Any) -> str | None:
            p = _s(prefix) or ""
            if not p.endswith("/nvidia/cu13"):
                return None
            from remedy.resolve import workload_python

            py = workload_python(facts)
            torch_rel = rel((py or {}).get("torch_cuda"))
            gpus = facts.get("gpus") or []
            need = Version(needed_release(gpus[0] if gpus else None))
            for r in self.releases:
                if r.wheels and Version(r.release) >= need and (
                    not torch_rel or r.release.split(".")[0] == torch_rel.split(".")[0]
                ):
                    return r.release
            return None

        def fi_cuda_version(tk: Any, py: Any) -> str | None:
            """FlashInfer's get_cuda_version: nvcc of its toolkit, else torch.version.cuda."""
            if tk and tk.get("nvcc_release"):
                return tk["nvcc_release"]
            return (py or {}).get("torch_cuda")

        def triton_ptxas_for(py: Any, env_: Any, gpu: Any) -> str | None:
            if not py or not gpu:
                return None
            cap = ver(gpu.get("compute_cap"))
            blackwell = cap is not None and cap >= Version("10.0")
            var = "TRITON_PTXAS_BLACKWELL_PATH" if blackwell else "TRITON_PTXAS_PATH"
            override = (env_ or {}).get(var)
            if override:
                owner = nvcc_owner(posixpath.join(posixpath.dirname(override), "nvcc"))
                if owner:
                    return owner.get("ptxas_release")
            key = "ptxas-blackwell" if blackwell else "ptxas"
            return (py.get("triton_ptxas") or {}).get(key)

        def ptxas_choices(gpu: Any) -> list[str]:
            need = ver(self.min_cuda_for((gpu or {}).get("compute_cap"))) or Version("0")
            return [
                posixpath.join(tk["prefix"], "bin", "ptxas")
                for tk in facts.get("toolkits", ())
                if ver(tk.get("ptxas_release")) and ver(tk.get("ptxas_release")) >= need
            ]

        def invalid_effect(component: Any, path: Any) -> str:
            p = _s(path) or ""
            cls = "not_a_directory" if p.startswith("/dev/") else "nonexistent"
            err = self.invalid_errors.get((str(component), cls))
            return (err or "its first build fails").replace("<v>", p)

        return {
            "tk_at": tk_at,
            "missing_libs": missing_libs,
            "nvcc_owner": nvcc_owner,
            "unmet_requirements": unmet_requirements,
            "releases_of": releases_of,
            "aligned_pip": aligned_pip,
            "merged": merged,
            "cudart_soname": cudart_soname,
            "fixed_layout": fixed_layout,
            "system_toolkit": system_toolkit,
            "pip_toolkit": pip_toolkit,
            "toolkit_choices": toolkit_choices,
            "apt_release_of": apt_release_of,
            "pip_release_of": pip_release_of,
            "fi_cuda_version": fi_cuda_version,
            "triton_ptxas_for": triton_ptxas_for,
            "ptxas_choices": ptxas_choices,
            "invalid_effect": invalid_effect,
        }

    invalid_errors: dict[tuple[str, str], str] = {}

    def statics(self) -> dict[str, Callable[..., Any]]:
        return {
            "dropin_dir": lambda unit: f"/etc/systemd/system/{_s(unit)}.d",
            "dropin_name": dropin_name,
            "dropin_text": dropin_text,
            "ver": ver,
            "rel": rel,
            "cudart_release": cudart_release,
            "cudart_int": cudart_int,
            "arch_list_valid": arch_list_valid,
            "arch_list_suffixed": arch_list_suffixed,
            "arch_list_covers": arch_list_covers,
            "ptx_isa": self.ptx_isa,
            "min_cuda_for": self.min_cuda_for,
            "min_driver": self.min_driver,
            "wheel": self.wheel,
            "release_wheels": self.release_wheels,
            "apt_packages": self.apt_packages,
        }
