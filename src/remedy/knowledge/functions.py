"""The functions rule and action expressions may call.

They are mechanisms (compare versions, look up a release, list missing libraries); the facts
about CUDA they use come from knowledge/cuda-releases.yaml. Each takes plain values and never
raises on missing facts: it returns None or an empty value, so a rule's `when` can guard.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from remedy.knowledge.expr import is_undefined
from remedy.resolve import SYSTEMD_DEFAULT_PATH, item_counts, norm, toolkit_at

if TYPE_CHECKING:  # the tables are read, never built, here (remedy.knowledge.logview)
    from remedy.knowledge.schema import CudaTables, Release


def _roots_of(tk: dict[str, Any]) -> list[str]:
    return [tk["prefix"], *tk.get("aliases", ())]


def _odd_roots(tk: dict[str, Any]) -> list[bool]:
    """[True] for a toolkit with a root (prefix or alias) whose bin/nvcc does not normalize
    to its normalized root's (blanks around it, or nothing left once normalized)."""
    odd = any(r != r.strip() or not norm(r) for r in _roots_of(tk))
    return [True] if odd else []


_REL = re.compile(r"(\d+)\.(\d+)")


def _s(v: Any) -> str | None:
    if v is None or is_undefined(v):
        return None
    return str(v)


_VER: dict[str, Version | None] = {}


def ver(v: Any) -> Version | None:
    """A packaging Version from the leading digits of a string ('13.0.88+cu13' -> 13.0.88)."""
    if type(v) is str:  # rules compare the same few versions thousands of times
        hit = _VER.get(v, _VER)
        if hit is _VER:
            if len(_VER) > 4096:
                _VER.clear()
            hit = _VER[v] = _ver(v)
        return hit  # type: ignore[return-value]
    return _ver(v)


def _ver(v: Any) -> Version | None:
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


def _cudart_majors(tk: dict[str, Any]) -> set[int]:
    """The CUDA majors of the libcudart.so.N a toolkit ships."""
    out: set[int] = set()
    for names in (tk.get("libs") or {}).values():
        for n in names:
            m = re.fullmatch(r"libcudart\.so\.(\d+)", n)
            if m:
                out.add(int(m.group(1)))
    return out


def rel(v: Any) -> str | None:
    """'12.8.93' -> '12.8' (major.minor), None when it does not start with one."""
    s = _s(v)
    m = _REL.match(s) if s else None
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def cudart_release(v: Any) -> str | None:
    """12080 (CUDART_VERSION) -> '12.8', the release its headers belong to."""
    try:
        n = int(str(v))
    except (TypeError, ValueError):
        return None
    return f"{n // 1000}.{(n % 1000) // 10}"


def cudart_int(release: Any) -> int | None:
    """'12.8' -> 12080, the CUDART_VERSION a release's cuda_runtime_api.h defines."""
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


# torch.utils.cpp_extension._get_cuda_arch_flags (torch 2.14.1): named arches and the arch
# strings it accepts; anything else raises "Unknown CUDA arch (X) or GPU not supported".
_TORCH_NAMED_ARCHES = (
    ("Kepler+Tesla", "3.7"),
    ("Kepler", "3.5+PTX"),
    ("Maxwell+Tegra", "5.3"),
    ("Maxwell", "5.0;5.2+PTX"),
    ("Pascal", "6.0;6.1+PTX"),
    ("Volta+Tegra", "7.2"),
    ("Volta", "7.0+PTX"),
    ("Turing", "7.5+PTX"),
    ("Ampere+Tegra", "8.7"),
    ("Ampere", "8.0;8.6+PTX"),
    ("Ada", "8.9+PTX"),
    ("Hopper", "9.0+PTX"),
    ("Blackwell+Tegra", "11.0"),
    ("Blackwell", "10.0;10.3;12.0;12.1+PTX"),
    ("Rubin", "10.7+PTX"),
)
_TORCH_ARCHES = frozenset(
    [
        "3.5",
        "3.7",
        "5.0",
        "5.2",
        "5.3",
        "6.0",
        "6.1",
        "6.2",
        "7.0",
        "7.2",
        "7.5",
        "8.0",
        "8.6",
        "8.7",
        "8.9",
        "9.0",
        "9.0a",
        "10.0",
        "10.0a",
        "11.0",
        "11.0a",
        "10.3",
        "10.3a",
        "10.7",
        "10.7a",
        "12.0",
        "12.0a",
        "12.1",
        "12.1a",
    ]
)


def torch_arch_list_valid(value: Any) -> bool:
    """Whether torch's cpp_extension accepts TORCH_CUDA_ARCH_LIST as given: it splits on ' '
    and ';' after expanding named arches, and raises ValueError on any entry outside its list
    (no 'f' targets; torch 2.14.1's list)."""
    s = _s(value)
    if not s:
        return True
    s = s.replace(" ", ";")
    for name, archs in _TORCH_NAMED_ARCHES:
        s = s.replace(name, archs)
    return all(e.removesuffix("+PTX") in _TORCH_ARCHES for e in s.split(";"))


def arch_list_suffixed(value: Any) -> bool:
    """True when an arch list has an a/f entry (arch-specific: needs nvcc that knows it)."""
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


def dropin_name(var: Any, last: Any = False) -> str:
    """The name of remedy's drop-in for a variable (units.dropin.remedy_dropin_name, which
    facts also use to tell which drop-ins are read after it)."""
    from remedy.units.dropin import remedy_dropin_name

    return remedy_dropin_name(_s(var) or "env", bool(last))


def _is_remedy_dropin(name: str) -> bool:
    from remedy.units.dropin import REMEDY_DROPIN

    return bool(REMEDY_DROPIN.match(name))


def dropin_dir(unit: Any) -> str:
    """The directory of a system unit's drop-ins in /etc (where remedy writes its own)."""
    return f"/etc/systemd/system/{_s(unit)}.d"


def dropin_text(env: Any = None, unset: Any = None) -> str:
    """The text of remedy's drop-in that sets env and unsets names (units.dropin renders it)."""
    from remedy.units.dropin import render_dropin

    return render_dropin(dict(env or {}), list(unset or []))


# --- field reports: facts the rules-<topic>.yaml rules need (tables cite their source) ---

_TARGET = re.compile(r"(?:compute_|sm_)?(\d+)(?:\.(\d+))?([af]?)(\+PTX)?$")


def parse_target(value: Any) -> tuple[int, int, str] | None:
    """'9.0a', '12.0f', 'sm_121a', 'compute_90a', '8.6+PTX' -> (major, minor, suffix)."""
    s = (_s(value) or "").strip()
    m = _TARGET.match(s)
    if not m:
        return None
    if m.group(2) is not None:
        return int(m.group(1)), int(m.group(2)), m.group(3)
    digits = m.group(1)
    if len(digits) < 2:
        return None
    return int(digits[:-1]), int(digits[-1]), m.group(3)


def arch_targets(value: Any) -> list[str]:
    """Entries of an arch-list variable (FlashInfer: spaces; torch: ';' or spaces), as 'M.mS'."""
    out = []
    for e in re.split(r"[ ;,]+", _s(value) or ""):
        t = parse_target(e)
        if t:
            out.append(f"{t[0]}.{t[1]}{t[2]}")
    return out


def major_of(version: Any) -> int | None:
    """'12.8.93' -> 12; None when it is no version."""
    v = ver(version)
    return v.major if v else None


def cuda_major_of(version: Any) -> int | None:
    """The CUDA major in a wheel's local version tag: '0.4.4+cu130' -> 13, '2.8.0+cu128' -> 12."""
    m = re.search(r"\+cu(\d{3,})", _s(version) or "")
    return int(m.group(1)[:-1]) if m else None


def unpinned(names: Any) -> dict[str, None]:
    """Package names without a version pin (pip picks the newest the index has)."""
    return dict.fromkeys(str(n) for n in (names or ()))


def with_flag(cmdline: Any, flag: str, value: Any = None) -> str:
    """`cmdline` with `flag` set to `value` (replaced if present, appended otherwise); a
    switch when value is None."""
    toks = (_s(cmdline) or "").split()
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == flag:
            i += 1 if value is None or (i + 1 < len(toks) and toks[i + 1].startswith("--")) else 2
            continue
        if t.startswith(flag + "="):
            i += 1
            continue
        out.append(t)
        i += 1
    out += [flag] if value is None else [flag, str(value)]
    return " ".join(out)


def exec_flag(cmdline: Any, *names: str) -> str | None:
    """The value of a flag in a command line ('--tp 8', '--tp=8'); '' for a bare switch."""
    toks = (_s(cmdline) or "").split()
    for i, t in enumerate(toks):
        for n in names:
            if t == n:
                nxt = toks[i + 1] if i + 1 < len(toks) else ""
                return "" if nxt.startswith("--") else nxt
            if t.startswith(n + "="):
                return t[len(n) + 1 :]
    return None


def path_expanded(value: Any) -> str | None:
    """A PATH as a shell would have meant it: a literal `$PATH` / `${PATH}` (systemd's
    Environment= and EnvironmentFile= never expand variables, systemd.exec(5)) replaced by
    systemd's default PATH, any other entry naming a variable dropped, duplicates removed.
    None when nothing is left."""
    out: list[str] = []
    for entry in (_s(value) or "").split(":"):
        parts = SYSTEMD_DEFAULT_PATH.split(":") if entry in ("$PATH", "${PATH}") else [entry]
        for d in parts:
            if d and "$" not in d and d not in out:
                out.append(d)
    return ":".join(out) or None


# JIT caches and where each consumer puts them (read in the sandbox venv's sources):
# FlashInfer 0.6.11.post1 flashinfer/jit/env.py: FLASHINFER_WORKSPACE_BASE or Path.home(), then
# .cache/flashinfer; tvm-ffi 0.1.9 python/tvm_ffi/cpp/extension.py (SGLang's jit_kernel):
# TVM_FFI_CACHE_DIR or ~/.cache/tvm-ffi; torch 2.14 torch/utils/cpp_extension.py
# _get_build_directory: TORCH_EXTENSIONS_DIR or user_cache_dir('torch_extensions')
# ($XDG_CACHE_HOME or ~/.cache). None of the first two reads XDG_CACHE_HOME.
JIT_CACHE_DIR = "/var/cache/remedy-jit"  # CacheDirectory=remedy-jit (systemd.exec(5))


def _unit_home(env: dict[str, Any], sandboxing: dict[str, Any], home: Any = None) -> str:
    """The home the unit's process sees: its HOME, else its User='s home from the host's
    user database (Service.user_home: systemd sets HOME from it, systemd.exec(5)), else
    root's for no User=, else the conventional /home/USER (the database was not read)."""
    user = str(sandboxing.get("User") or "").strip()
    if env.get("HOME"):
        return str(env["HOME"])
    if home:
        return str(home)
    return "/root" if user in ("", "root", "0") else f"/home/{user}"


def jit_caches(env: Any, sandboxing: Any = None, home: Any = None) -> dict[str, str]:
    """consumer -> the directory its JIT build writes, in this environment (home: the unit
    user's home from the user database, when read)."""
    env = dict(env or {})
    home = _unit_home(env, dict(sandboxing or {}), home)
    xdg = env.get("XDG_CACHE_HOME") or f"{home}/.cache"
    return {
        "flashinfer-jit": posixpath.join(
            env.get("FLASHINFER_WORKSPACE_BASE") or home, ".cache/flashinfer"
        ),
        "sglang-jit-kernel": env.get("TVM_FFI_CACHE_DIR") or f"{home}/.cache/tvm-ffi",
        "torch-cpp-extension": env.get("TORCH_EXTENSIONS_DIR") or f"{xdg}/torch_extensions",
    }


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/") or "/"
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


def _paths(value: Any) -> list[str]:
    """A `systemctl show` path list: space-separated, each maybe prefixed with - or +."""
    return [p.lstrip("-+") for p in str(value or "").split() if p.lstrip("-+").startswith("/")]


def read_only_reason(path: Any, sandboxing: Any, env: Any = None) -> str | None:
    """Why a unit's process cannot write `path` under its sandboxing (systemd.exec(5)), or None:
    ProtectHome=read-only|yes (/home, /root, /run/user), ProtectSystem=strict (all but /dev,
    /proc, /sys, and /tmp, /var/tmp with PrivateTmp=), =yes|full (/usr, /boot, /efi; /etc with
    full), ReadOnlyPaths=; unless ReadWritePaths= or a CacheDirectory=/StateDirectory= (the
    directory systemd makes writable, named in $CACHE_DIRECTORY/$STATE_DIRECTORY) holds it."""
    p = posixpath.normpath(str(path or ""))
    sb, env = dict(sandboxing or {}), dict(env or {})
    if not p.startswith("/"):
        return None
    rw = _paths(sb.get("ReadWritePaths"))
    rw += [f"/var/cache/{d}" for d in str(sb.get("CacheDirectory") or "").split()]
    rw += [f"/var/lib/{d}" for d in str(sb.get("StateDirectory") or "").split()]
    for var in ("CACHE_DIRECTORY", "STATE_DIRECTORY"):
        rw += [d for d in str(env.get(var) or "").split(":") if d.startswith("/")]
    if any(_under(p, d) for d in rw):
        return None
    home = str(sb.get("ProtectHome") or "no").lower()
    if home in ("read-only", "yes", "true", "1") and any(
        _under(p, d) for d in ("/home", "/root", "/run/user")
    ):
        return f"ProtectHome={sb['ProtectHome']}"
    system = str(sb.get("ProtectSystem") or "no").lower()
    if system == "strict":
        free = ["/dev", "/proc", "/sys"]
        if str(sb.get("PrivateTmp") or "no").lower() in ("yes", "true", "1"):
            free += ["/tmp", "/var/tmp"]
        if not any(_under(p, d) for d in free):
            return "ProtectSystem=strict"
    elif system in ("yes", "true", "1", "full"):
        ro = ["/usr", "/boot", "/efi"] + (["/etc"] if system == "full" else [])
        if any(_under(p, d) for d in ro):
            return f"ProtectSystem={sb['ProtectSystem']}"
    for d in _paths(sb.get("ReadOnlyPaths")):
        if _under(p, d):
            return f"ReadOnlyPaths={d}"
    return None


def provider_functions() -> dict[str, Callable[..., Any]]:
    """The provider table's lookups (knowledge/providers.yaml), for rules and actions: each
    imports remedy.knowledge.providers when first called. Every render context holds them
    (`diagnose --log` builds one for its hypotheses), and importing that module (its five
    pydantic models) cost ~2 ms of each such run that never calls one."""
    return {
        "unprovided_files": _unprovided_files,
        "pip_providers": _pip_providers,
        "provider_version": _provider_version,
        "provided_files": _provided_files,
    }


def _unprovided_files(*args: Any, **kwargs: Any) -> Any:
    """file -> what would provide it, for each needed file whose providing package is not
    installed in the env (files no package is known to ship are left out: not this rule's)."""
    from remedy.knowledge.providers import unprovided

    return unprovided(*args, **kwargs)


def _pip_providers(*args: Any, **kwargs: Any) -> Any:
    """The pip wheels that would provide the env's unprovided files (one per file)."""
    from remedy.knowledge.providers import pip_providers

    return pip_providers(*args, **kwargs)


def _provider_version(*args: Any, **kwargs: Any) -> Any:
    """The version of a wheel that the env's toolkit line pins (cuda-toolkit's Requires-Dist)."""
    from remedy.knowledge.providers import provider_version

    return provider_version(*args, **kwargs)


def _provided_files(*args: Any, **kwargs: Any) -> Any:
    """Which of `names` the wheel `package` ships for the env's line."""
    from remedy.knowledge.providers import provided_files

    return provided_files(*args, **kwargs)


# What a rule or action expression sees besides the functions: evaluate.base_context() (env,
# py, pkgs, gpu, gpus, facts, workload), consumer_context() (c, tk, tk_path, how) and, for
# message templates rendered without facts, diagnose's `partial`. The loader checks every
# expression's free names against these + Functions.names() (tests/test_knowledge.py keeps
# this list equal to what evaluate builds).
CONTEXT_NAMES = frozenset(
    {"env", "py", "pkgs", "gpu", "gpus", "facts", "workload", "c", "tk", "tk_path", "how"}
)
MESSAGE_NAMES = frozenset({"partial"})


class Functions:
    """Expression functions bound to one knowledge base and one facts snapshot."""

    def __init__(
        self, releases: list[Release], components: dict[str, Any], tables: CudaTables
    ) -> None:
        self.tables = tables
        self.releases = sorted(releases, key=lambda r: Version(r.release))
        self.by_release = {r.release: r for r in self.releases}
        self.components = components

    # -- static tables ------------------------------------------------------------------
    def compat_driver(self, release: Any) -> str | None:
        """The oldest driver that runs any release of this release's CUDA major (minor version
        compatibility; cuda-tables.yaml compat_drivers)."""
        r = rel(release)
        if not r:
            return None
        major = int(r.split(".")[0])
        return next(
            (e.driver for e in self.tables.compat_drivers.entries if e.major == major), None
        )

    def max_gcc_for(self, release: Any) -> int | None:
        """The newest gcc major the nvcc of this release accepts (cuda-tables.yaml max_gcc)."""
        v = ver(release)
        if v is None:
            return None
        best = None
        for e in self.tables.max_gcc.entries:
            if v >= Version(e.from_):
                best = e.gcc
        return best

    def min_arch_for(self, pkgs: Any) -> tuple[str, str, str] | None:
        """The strictest minimum GPU arch among installed packages: (arch, package, source)."""
        best = None
        for e in self.tables.min_arch:
            if pkgs and e.package in pkgs and (best is None or Version(e.arch) > Version(best[0])):
                best = (e.arch, e.package, e.says)
        return best

    def ptx_isa(self, release: Any) -> Version | None:
        """The PTX ISA a release's cicc emits and its ptxas accepts at most."""
        r = self.by_release.get(rel(release) or "")
        return Version(r.ptx_isa) if r else None

    def min_cuda_for(self, cap: Any) -> str | None:
        """The first CUDA release whose compiler targets this compute capability."""
        if type(cap) is str:
            memo = self.__dict__.setdefault("_min_cuda", {})
            if cap not in memo:
                memo[cap] = self._min_cuda_for(cap)
            return memo[cap]
        return self._min_cuda_for(cap)

    def _min_cuda_for(self, cap: Any) -> str | None:
        c = rel(cap)
        if not c:
            return None
        for r in self.releases:
            if any(t.rstrip("af") == c for t in r.targets):
                return r.release
        # Older architectures predate the table: any supported toolkit compiles for them.
        return None

    def min_cuda_for_target(self, target: Any) -> str | None:
        """The oldest release whose compiler knows a target, suffix included ('9.0a' needs 12.0,
        '12.0f' 12.9); None for targets older than the table."""
        t = parse_target(target)
        if not t:
            return None
        maj, mnr, sfx = t
        name = f"{maj}.{mnr}{sfx}"
        for r in self.releases:
            if name in r.targets:
                return r.release
        base = self.min_cuda_for(f"{maj}.{mnr}")
        floor = {"a": "12.0", "f": "12.9"}.get(sfx)
        if floor and (base is None or Version(base) < Version(floor)):
            return floor
        return base

    def cccl_min_std(self, release: Any) -> str | None:
        """The oldest C++ dialect the CCCL of this CUDA release accepts (cuda-tables.yaml)."""
        v = ver(release)
        if v is None or self.tables.cccl_min_std is None:
            return None
        best = None
        for e in self.tables.cccl_min_std.entries:
            if v >= Version(e.from_):
                best = e.std
        return best

    def dropped_in(self, target: Any) -> str | None:
        """The first release whose nvcc no longer compiles for this target (cuda-tables.yaml
        dropped_targets), None when every release since it appeared still does."""
        t = parse_target(target)
        if not t or self.tables.dropped_targets is None:
            return None
        name = f"{t[0]}.{t[1]}"
        for e in self.tables.dropped_targets.entries:
            if name in e.targets:
                return e.release
        return None

    def newest_known_target(self) -> tuple[int, int]:
        """The newest compute capability any release in the table targets."""
        best = (0, 0)
        for r in self.releases:
            for t in r.targets:
                p = parse_target(t)
                if p and (p[0], p[1]) > best:
                    best = (p[0], p[1])
        return best

    def min_driver(self, release: Any) -> str | None:
        """The Linux driver a release's runtime needs (cuda-releases.yaml)."""
        r = self.by_release.get(rel(release) or "")
        return r.min_driver if r else None

    def wheel(self, release: Any, name: str) -> str | None:
        """The version of one wheel of a release's consistent set, None when unknown."""
        r = self.by_release.get(rel(release) or "")
        return r.wheels.get(name) if r else None

    def release_wheels(self, release: Any) -> dict[str, str]:
        """The pip wheel versions that make one consistent toolkit of this release."""
        r = self.by_release.get(rel(release) or "")
        return dict(r.wheels) if r else {}

    def apt_packages(self, release: Any) -> list[str]:
        """The apt packages that install this release's nvcc, cudart headers and CCCL."""
        r = self.by_release.get(rel(release) or "")
        return list(r.apt) if r else []

    # -- bound to a facts snapshot --------------------------------------------------------
    def bind(self, facts: dict[str, Any], env: dict[str, str]) -> dict[str, Callable[..., Any]]:
        def tk_at(path: Any) -> dict[str, Any] | None:
            """The toolkit whose prefix (or an alias) is this path, None when none is."""
            return toolkit_at(facts, _s(path))

        def missing_libs(tk: Any, dirs: Any, libs: Any, any_dir: Any = False) -> list[str]:
            """The lib<name>.so files of a link line (-l<name>) not found in the toolkit's link dirs."""
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
            """The toolkit whose bin/nvcc is this path (aliases too), None when none is."""
            p = norm(_s(path) or "")
            toolkits = facts.get("toolkits", ())
            bindir, name = posixpath.split(p)
            root, bin_ = posixpath.split(bindir)
            if (
                name == "nvcc"
                and bin_ == "bin"
                and root
                and norm(root) == root
                and not item_counts(toolkits, "odd_roots", _odd_roots)
            ):
                # every root r is plain (no surrounding blanks, not empty once normalized), so
                # r/bin/nvcc normalizes to norm(r)/bin/nvcc: the owner is the first toolkit
                # whose normalized root is `root`, which the toolkit index knows (a scan of
                # every toolkit for each lookup made planning quadratic in them)
                tk = toolkit_at(facts, root)
                if tk is None or any(
                    norm(posixpath.join(r, "bin", "nvcc")) == p for r in _roots_of(tk)
                ):
                    return tk
            for tk in toolkits:
                for root in [tk["prefix"], *tk.get("aliases", ())]:
                    if norm(posixpath.join(root, "bin", "nvcc")) == p:
                        return tk
            return None

        def unmet_requirements(py: Any, prefixes: Any = None) -> list[str]:
            """Requirements of installed packages that no longer hold (pip check), optionally
            only those on packages whose names start with one of `prefixes`."""
            if not py:
                return []
            out = []
            pkgs = py.get("packages") or {}
            for req in py.get("requirements") or []:
                if prefixes and not any(req["package"].startswith(p) for p in prefixes):
                    continue
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

        def _parts(tk: Any) -> list[tuple[str | None, str]]:
            """(release of a part, the wheel that ships it) for a split pip toolkit."""
            return [
                (rel(tk.get("nvcc_release")), "nvidia-cuda-nvcc"),
                (rel(tk.get("ptxas_release")), "nvidia-cuda-nvcc"),
                (rel(tk.get("cicc_release")), "nvidia-nvvm"),
                (cudart_release(tk.get("cudart_version")), "nvidia-cuda-runtime"),
            ]

        def releases_of(tk: Any) -> list[str]:
            """Releases a split toolkit can be aligned on by reinstalling only its wheels: every
            part not already at that release must come from a wheel the prefix has."""
            if not tk:
                return []
            pip = tk.get("pip") or {}
            out: list[str] = []
            for cand, _ in _parts(tk):
                if not cand or cand in out:
                    continue
                r = self.by_release.get(cand)
                if not r or not r.wheels:
                    continue
                if all(
                    part == cand or part is None or (wh in pip and wh in r.wheels)
                    for part, wh in _parts(tk)
                ):
                    out.append(cand)
            return out

        def aligned_pip(tk: Any, release: Any) -> dict[str, str]:
            """The wheels to (re)install so that every wheel of the prefix is at `release`."""
            wheels = self.release_wheels(release)
            pip = (tk or {}).get("pip") or {}
            names = self.tables.toolkit_wheels.names
            return {n: wheels[n] for n in names if n in pip and n in wheels and pip[n] != wheels[n]}

        def merged(a: Any, b: Any) -> dict[str, Any]:
            """Two mappings merged (b wins): builds a toolkit's new pip set in an effect."""
            return {**(a or {}), **(b or {})}

        def cudart_soname(tk: Any) -> str:
            """The libcudart soname a toolkit ships (libcudart.so.N): what a fixed layout links."""
            for names in (tk or {}).get("libs", {}).values():
                for n in names:
                    if re.fullmatch(r"libcudart\.so\.\d+", n):
                        return n
            major = (rel((tk or {}).get("nvcc_release")) or "13.0").split(".")[0]
            return f"libcudart.so.{major}"

        def fixed_layout(tk: Any) -> dict[str, list[str]]:
            """A toolkit's libs after the layout fix: lib and lib64 both hold libcudart.so, stubs hold libcuda.so."""
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
            """The toolkit an apt install of this release makes under /usr/local (predicted facts)."""
            r = rel(release)
            return {
                "prefix": f"/usr/local/cuda-{r}",
                "kind": "system",
                "nvcc_version": None,
                "nvcc_release": r,
                "ptxas_release": r,
                "cicc_release": r,
                "cudart_version": cudart_int(r),
                "cccl": {
                    "present": True,
                    "nv_target": True,
                    "nv_detail": True,
                    "include_dir": "include/cccl",
                },
                "libs": {
                    "lib64": ["libcudart.so", f"libcudart.so.{r.split('.')[0]}"],
                    "lib64/stubs": ["libcuda.so"],
                },
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
            """The toolkit a pip install of this release's wheels makes in a venv (predicted facts)."""
            r = rel(release)
            prefix = pip_prefix(python) or f"{python}/nvidia/cu13"
            existing = toolkit_at(facts, prefix) or {}
            libs = dict(existing.get("libs") or {"lib": [f"libcudart.so.{r.split('.')[0]}"]})
            wheels = self.release_wheels(r)
            pip = dict(wheels)
            # release_wheels() includes nvidia-cuda-cccl where the release has it, and the
            # install installs it: the prefix then has CCCL (predicting none made the planner
            # add a second, redundant pip-install-cccl step)
            cccl = "nvidia-cuda-cccl" in pip
            return {
                "prefix": prefix,
                "kind": "pip-cu13",
                "nvcc_version": wheels.get("nvidia-cuda-nvcc"),
                "nvcc_release": r,
                "ptxas_release": r,
                "cicc_release": r,
                "cudart_version": cudart_int(r),
                "cccl": {
                    "present": cccl,
                    "nv_target": cccl,
                    "nv_detail": cccl,
                    "include_dir": "include/cccl" if cccl else None,
                },
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
            """The release of an apt toolkit prefix (/usr/local/cuda-X.Y) remedy can install."""
            m = re.fullmatch(r"/usr/local/cuda-(\d+\.\d+)", norm(_s(prefix) or ""))
            if m and self.apt_packages(m.group(1)):
                return m.group(1)
            return None

        def pip_release_of(prefix: Any) -> str | None:
            """The release a pip cu13 toolkit prefix can be aligned to (torch's CUDA, else the GPU's)."""
            p = _s(prefix) or ""
            if not p.endswith("/nvidia/cu13"):
                return None
            from remedy.resolve import workload_python

            py = workload_python(facts)
            torch_rel = rel((py or {}).get("torch_cuda"))
            gpus = facts.get("gpus") or []
            need = Version(needed_release(gpus[0] if gpus else None))
            for r in self.releases:
                if (
                    r.wheels
                    and Version(r.release) >= need
                    and (not torch_rel or r.release.split(".")[0] == torch_rel.split(".")[0])
                ):
                    return r.release
            return None

        def fi_cuda_version(tk: Any, py: Any) -> str | None:
            """FlashInfer's get_cuda_version: nvcc of its toolkit, else torch.version.cuda."""
            if tk and tk.get("nvcc_release"):
                return tk["nvcc_release"]
            return (py or {}).get("torch_cuda")

        def triton_ptxas_for(py: Any, env_: Any, gpu: Any) -> str | None:
            """The ptxas Triton will run for this GPU: its override variable's, else the bundled one."""
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
            """ptxas binaries on the host new enough for the GPU (candidates for TRITON_PTXAS_PATH)."""
            need = ver(self.min_cuda_for((gpu or {}).get("compute_cap"))) or Version("0")
            return [
                posixpath.join(tk["prefix"], "bin", "ptxas")
                for tk in facts.get("toolkits", ())
                if ver(tk.get("ptxas_release")) and ver(tk.get("ptxas_release")) >= need
            ]

        def invalid_effect(component: Any, path: Any) -> str:
            """How a consumer fails when CUDA_HOME is this path (from variables.yaml), for messages."""
            p = _s(path) or ""
            cls = "not_a_directory" if p.startswith("/dev/") else "nonexistent"
            err = self.invalid_errors.get((str(component), cls))
            return (err or "its first build fails").replace("<v>", p)

        def unit_envfile_sets(var: Any) -> bool:
            """Whether an EnvironmentFile= of the workload's unit sets this variable (which
            then overrides every Environment= line, a drop-in's too: systemd.exec(5))."""
            unit = (facts.get("workload") or {}).get("service")
            for svc in facts.get("services", ()) if unit else ():
                if svc.get("name") == unit:
                    return _s(var) in (svc.get("environment_files_env") or {})
            return False

        def unit_later_dropin(var: Any) -> bool:
            """Whether a drop-in of the workload's unit, not remedy's own, is parsed after
            remedy's drop-in for this variable (systemd.unit(5): every drop-in directory's
            .conf files in one lexicographic order of their names; a later Environment= of
            the variable wins, systemctl edit's override.conf included). remedy does not read
            its text: its drop-in is then named to be parsed after every one (SetEnv.last,
            dropin_name(var, True)), and its EnvironmentFile overrides whatever Environment=
            a drop-in sorting later still sets (systemd.exec(5)); read last, that file also
            comes after an EnvironmentFile= the later drop-in names (test_o;
            sandbox/scenarios/service-dropin-later-cuda-home)."""
            unit = (facts.get("workload") or {}).get("service")
            mine, last = dropin_name(var), dropin_name(var, True)
            for svc in facts.get("services", ()) if unit else ():
                if svc.get("name") == unit:
                    names = [posixpath.basename(str(p)) for p in svc.get("drop_ins") or ()]
                    # an earlier run's zz-remedy drop-in for it: written again, never left
                    # to override a new 50-remedy one
                    return last in names or any(
                        n > mine and not _is_remedy_dropin(n) for n in names
                    )
            return False

        def unit_sandboxing() -> dict[str, str]:
            """The workload's unit's sandboxing directives (Service.sandboxing); {} else."""
            unit = (facts.get("workload") or {}).get("service")
            for svc in facts.get("services", ()) if unit else ():
                if svc.get("name") == unit:
                    return dict(svc.get("sandboxing") or {})
            return {}

        def unit_memory_max_mib() -> int | None:
            """The workload's unit's MemoryMax= in MiB (systemctl show gives bytes; infinity
            is not recorded): the cgroup limit its builds are OOM-killed at."""
            v = str(unit_sandboxing().get("MemoryMax") or "").strip()
            return int(v) // 1048576 if v.isdigit() else None

        def mem_limit_mib() -> int | None:
            """The memory the workload's builds may use: the host's, or its unit's MemoryMax=
            when lower (systemd.resource-control(5)); None when neither is known."""
            vals = [m for m in (facts.get("memory_mib"), unit_memory_max_mib()) if m]
            return min(vals) if vals else None

        def jit_cache_read_only(env: Any) -> str | None:
            """The first JIT cache of the workload's consumers that its unit cannot write
            ('DIR (consumer, ProtectHome=read-only)'), None when every one is writable."""
            sb = unit_sandboxing()
            if not sb:
                return None
            consumers = (facts.get("workload") or {}).get("consumers") or ()
            unit = (facts.get("workload") or {}).get("service")
            svc = next((x for x in facts.get("services", ()) if x.get("name") == unit), {})
            for consumer, d in jit_caches(env, sb, svc.get("user_home")).items():
                if consumers and consumer not in consumers:
                    continue
                why = read_only_reason(d, sb, env)
                if why:
                    return f"{d} ({consumer}, {why})"
            tmp = str((env or {}).get("TMPDIR") or "/tmp")
            why = read_only_reason(tmp, sb, env)
            return f"{tmp} (the builds' temporary files, {why})" if why else None

        def jit_cache_env(env: Any) -> dict[str, str]:
            """What remedy's drop-in sets for a unit whose JIT caches are read-only: the
            consumers' cache variables under its CacheDirectory=, and TMPDIR there too when
            the unit's temporary directory is read-only as well (ProtectSystem=strict without
            PrivateTmp=: nvcc's and Python's temporary files, "No usable temporary directory")."""
            out = {
                "CACHE_DIRECTORY": JIT_CACHE_DIR,
                "FLASHINFER_WORKSPACE_BASE": JIT_CACHE_DIR,
                "TVM_FFI_CACHE_DIR": f"{JIT_CACHE_DIR}/tvm-ffi",
                "TORCH_EXTENSIONS_DIR": f"{JIT_CACHE_DIR}/torch_extensions",
            }
            tmp = str((env or {}).get("TMPDIR") or "/tmp")
            if read_only_reason(tmp, unit_sandboxing(), env):
                out["TMPDIR"] = JIT_CACHE_DIR
            return out

        return {
            **self.bind_field(facts),
            "unit_envfile_sets": unit_envfile_sets,
            "unit_later_dropin": unit_later_dropin,
            "unit_sandboxing": unit_sandboxing,
            "unit_memory_max_mib": unit_memory_max_mib,
            "mem_limit_mib": mem_limit_mib,
            "jit_cache_read_only": jit_cache_read_only,
            "jit_cache_env": jit_cache_env,
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

    # -- field reports (knowledge/rules-<topic>.yaml) ----------------------------------
    def statics_field(self) -> dict[str, Callable[..., Any]]:
        return {
            "min_cuda_for_target": self.min_cuda_for_target,
            "dropped_in": self.dropped_in,
            "compat_driver": self.compat_driver,
            "max_gcc_for": self.max_gcc_for,
            "major_of": major_of,
            "arch_targets": arch_targets,
            "min_arch_for": self.min_arch_for,
            "exec_flag": exec_flag,
            "with_flag": with_flag,
            "unpinned": unpinned,
            "path_expanded": path_expanded,
        }

    def bind_field(self, facts: dict[str, Any]) -> dict[str, Callable[..., Any]]:
        """Functions over one snapshot for the field-report rules. Each returns None / empty when a
        fact is missing, so rules guard with `when`."""

        def observed(key: Any) -> str | None:
            """A fact recorded as a note 'observed: KEY=VALUE' (by a probe, or by a person who
            ran a rule's confirm_with command); the last one wins. Stands in for typed fields
            the collectors do not read yet (python_h, jit_cache)."""
            val = None
            for n in facts.get("notes") or ():
                m = re.fullmatch(r"\s*observed:\s*([\w.-]+)\s*=\s*(.*?)\s*", str(n))
                if m and m.group(1) == _s(key):
                    val = m.group(2)
            return val

        def server_cmdline() -> str | None:
            """The server's ExecStart (its unit's), None for a server launched from a shell."""
            wl = facts.get("workload") or {}
            for svc in facts.get("services", ()):
                if svc.get("name") == wl.get("service"):
                    return svc.get("exec_start")
            return None

        def tp_size() -> int:
            """The server's tensor-parallel size from its command line (--tp/--tp-size), 1 by default."""
            v = exec_flag(server_cmdline(), "--tp", "--tp-size", "--tensor-parallel-size")
            return int(v) if v and v.isdigit() else 1

        def runtime_majors(py: Any) -> list[int]:
            """CUDA majors whose runtime libraries the Python env can load: torch's own, the
            nvidia-*-cuNN wheels, cu13-style unsuffixed nvidia-cuda-runtime, toolkits' libcudart."""
            out: set[int] = set()
            if py and major_of(py.get("torch_cuda")):
                out.add(major_of(py.get("torch_cuda")))  # type: ignore[arg-type]
            for name, v in ((py or {}).get("packages") or {}).items():
                m = re.fullmatch(r"nvidia-cuda-(?:runtime|nvrtc)(?:-cu(\d+))?", name)
                if m:
                    out.add(int(m.group(1)) if m.group(1) else (major_of(v) or 0))
            out.update(item_counts(facts.get("toolkits", ()), "cudart_majors", _cudart_majors))
            return sorted(x for x in out if x)

        def foreign_cuda_packages(py: Any) -> dict[str, int]:
            """Packages built for a CUDA major (local tag +cuNNN) no runtime here provides."""
            have = set(runtime_majors(py))
            out = {}
            for name, v in ((py or {}).get("packages") or {}).items():
                m = cuda_major_of(v)
                if m and name != "torch" and m not in have:
                    out[name] = m
            return out

        def torch_pins(py: Any) -> list[dict[str, str]]:
            """Requirements other packages put on torch (Requires-Dist), unmet ones first."""
            if not py:
                return []
            have = (py.get("packages") or {}).get("torch")
            out = []
            for req in py.get("requirements") or []:
                if req.get("package") != "torch":
                    continue
                try:
                    ok = have is not None and SpecifierSet(req["spec"]).contains(
                        have, prereleases=True
                    )
                except InvalidSpecifier:
                    continue
                out.append({**req, "ok": ok})
            return sorted(out, key=lambda r: r["ok"])

        def torch_pin_version(py: Any) -> str | None:
            """The torch version a violated requirement pins (==X), None when nothing pins it."""
            for r in torch_pins(py):
                m = re.fullmatch(r"\s*===?\s*([\w.+]+)\s*", r["spec"])
                if not r["ok"] and m:
                    return m.group(1)
            return None

        def jit_jobs(env_: Any) -> int | None:
            """ninja's parallelism for a JIT build: MAX_JOBS, else ninja's default (nproc + 2)."""
            mj = (env_ or {}).get("MAX_JOBS")
            if mj and str(mj).isdigit():
                return int(mj)
            cpus = facts.get("cpus")
            return cpus + 2 if cpus else None

        def capture_headroom_mib(gpu: Any) -> int | None:
            """GPU memory SGLang leaves outside its static pool (--mem-fraction-static)."""
            frac = exec_flag(server_cmdline(), "--mem-fraction-static")
            mem = (gpu or {}).get("memory_mib")
            try:
                return int((1.0 - float(frac)) * mem) if frac and mem else None
            except ValueError:
                return None

        def host_gcc(c: Any, env_: Any) -> str | None:
            """Version of the host compiler nvcc runs for consumer `c`: NVCC_CCBIN, else CC
            for consumers that pass -ccbin $CC (FlashInfer, torch), else gcc on PATH."""
            comps = facts.get("host_compilers") or {}
            env_ = env_ or {}
            cid = (c or {}).get("id")
            for var in (
                ("NVCC_CCBIN", "CC")
                if cid in ("flashinfer-jit", "torch-cpp-extension")
                else ("NVCC_CCBIN",)
            ):
                if env_.get(var):
                    return comps.get(posixpath.basename(env_[var]))
            return comps.get("gcc")

        def gcc_choices(release: Any) -> list[str]:
            """Host gccs on the machine that this release's nvcc accepts, as /usr/bin paths."""
            limit = self.max_gcc_for(release)
            return [
                f"/usr/bin/{name}"
                for name, v in sorted((facts.get("host_compilers") or {}).items())
                if name.startswith("gcc") and limit and major_of(v) and major_of(v) <= limit
            ]  # type: ignore[operator]

        def ptxas_for_driver(gpu: Any) -> list[str]:
            """ptxas binaries on the host whose cubins this GPU's driver loads."""
            drv = ver((gpu or {}).get("driver"))
            need = ver(self.min_cuda_for((gpu or {}).get("compute_cap"))) or Version("0")
            out = []
            for tk in facts.get("toolkits", ()):
                r = tk.get("ptxas_release")
                cd = ver(self.compat_driver(r))
                if drv and cd and drv >= cd and ver(r) and ver(r) >= need:
                    out.append(posixpath.join(tk["prefix"], "bin", "ptxas"))
            return out

        def fi_targets(gpu: Any, env_: Any) -> list[str]:
            """FlashInfer's target archs: FLASHINFER_CUDA_ARCH_LIST, else the GPU normalised
            as compilation_context._normalize_cuda_arch does (9.x -> a, 10.x/11.x -> a,
            12.0 -> f, 12.x -> a)."""
            lst = (env_ or {}).get("FLASHINFER_CUDA_ARCH_LIST")
            if lst:
                return arch_targets(lst)
            t = parse_target((gpu or {}).get("compute_cap"))
            if not t:
                return []
            maj, mnr, _ = t
            sfx = "" if maj < 9 else ("f" if (maj, mnr) == (12, 0) else "a")
            return [f"{maj}.{mnr}{sfx}"]

        def targets_unknown_to(targets: Any, release: Any) -> list[str]:
            """The targets of an arch list that this release's nvcc does not know yet, or no
            longer compiles for (cuda-tables.yaml dropped_targets)."""
            r = ver(release)
            out = []
            for t in targets or []:
                need = ver(self.min_cuda_for_target(t))
                gone = ver(self.dropped_in(t))
                if r and ((need and need > r) or (gone and r >= gone)):
                    out.append(t)
            return out

        def plain_targets_for(targets: Any, cap: Any) -> list[str]:
            """Entries that cover a GPU of major >= 10 only through a plain (unsuffixed)
            target: arch-specific instructions (FP4 cvt, block-scaled mma) are missing there."""
            c = parse_target(cap)
            if not c or c[0] < 10:
                return []
            cover = [t for t in targets or [] if arch_list_covers(t, cap)]
            if any(t.endswith(("a", "f")) for t in cover):
                return []
            return cover

        def nccl_wheel(py: Any) -> tuple[str, str] | None:
            """(name, version) of the NCCL wheel in a Python env, None without one."""
            for name, v in sorted(((py or {}).get("packages") or {}).items()):
                if re.fullmatch(r"nvidia-nccl(?:-cu\d+)?", name):
                    return name, v
            return None

        def better_toolkits(tk: Any) -> list[str]:
            """Other toolkits on the host whose nvcc is newer than `tk`'s."""
            mine = ver((tk or {}).get("nvcc_release"))
            return [
                t["prefix"]
                for t in facts.get("toolkits", ())
                if t.get("prefix") != (tk or {}).get("prefix")
                and ver(t.get("nvcc_release"))
                and (mine is None or ver(t.get("nvcc_release")) > mine)
            ]  # type: ignore[operator]

        def no_p2p_gpus() -> list[str]:
            """GPUs without peer-to-peer between cards: GeForce boards (NVIDIA disables P2P on
            them; sgl-project/sglang#4814 on RTX 4090)."""
            return [
                g.get("name", "")
                for g in facts.get("gpus", ())
                if "GeForce" in (g.get("name") or "")
            ]

        def nccl_major(py: Any) -> int | None:
            """The CUDA major of the NCCL wheel in a Python env (-cuNN suffix), None without one."""
            w = nccl_wheel(py)
            if not w:
                return None
            m = re.search(r"-cu(\d+)$", w[0])
            return int(m.group(1)) if m else None

        def aligned_flashinfer(pkgs_: Any) -> dict[str, str]:
            """flashinfer-cubin / flashinfer-jit-cache at flashinfer-python's version (the
            jit-cache keeps its +cuXYZ tag)."""
            pkgs_ = pkgs_ or {}
            want = _s(pkgs_.get("flashinfer-python"))
            out: dict[str, str] = {}
            if not want:
                return out
            if pkgs_.get("flashinfer-cubin"):
                out["flashinfer-cubin"] = want
            jc = _s(pkgs_.get("flashinfer-jit-cache"))
            if jc:
                out["flashinfer-jit-cache"] = want.split("+")[0] + (
                    "+" + jc.split("+", 1)[1] if "+" in jc else ""
                )
            return out

        def runtime_wheels_for(major: Any) -> dict[str, str]:
            """The pip wheels that bring libcudart/libnvrtc of a CUDA major (cu13 dropped the
            -cuNN suffix)."""
            m = int(major) if str(major).isdigit() else None
            if m is None:
                return {}
            if m >= 13:
                return {"nvidia-cuda-runtime": f"{m}.0", "nvidia-cuda-nvrtc": f"{m}.0"}
            return {f"nvidia-cuda-runtime-cu{m}": f"{m}.0", f"nvidia-cuda-nvrtc-cu{m}": f"{m}.0"}

        return {
            "better_toolkits": better_toolkits,
            "no_p2p_gpus": no_p2p_gpus,
            "nccl_major": nccl_major,
            "aligned_flashinfer": aligned_flashinfer,
            "runtime_wheels_for": runtime_wheels_for,
            "observed": observed,
            "server_cmdline": server_cmdline,
            "tp_size": tp_size,
            "runtime_majors": runtime_majors,
            "foreign_cuda_packages": foreign_cuda_packages,
            "torch_pins": torch_pins,
            "torch_pin_version": torch_pin_version,
            "jit_jobs": jit_jobs,
            "capture_headroom_mib": capture_headroom_mib,
            "host_gcc": host_gcc,
            "gcc_choices": gcc_choices,
            "ptxas_for_driver": ptxas_for_driver,
            "fi_targets": fi_targets,
            "targets_unknown_to": targets_unknown_to,
            "plain_targets_for": plain_targets_for,
            "nccl_wheel": nccl_wheel,
        }

    def bound_names(self) -> frozenset[str]:
        """The names of the functions bound to a facts snapshot (bind())."""
        cached = self.__dict__.get("_bound_names")
        if cached is None:
            cached = self.__dict__["_bound_names"] = frozenset(self.bind({}, {}))
        return cached

    def _skew_functions(self) -> dict[str, Callable[..., Any]]:
        """skew_known/skew_holds: the one version-pair relation (knowledge/version-pairs.yaml)."""
        from remedy.knowledge.skew import expression_functions

        return expression_functions(self)

    def names(self) -> set[str]:
        """Every function name an expression may call (the registry)."""
        return set(self.statics()) | set(self.bind({}, {}))

    def statics(self) -> dict[str, Callable[..., Any]]:
        """The functions that read no facts (the same dict every call: do not change it)."""
        cached = self.__dict__.get("_statics")
        if cached is None:
            cached = self.__dict__["_statics"] = self._statics()
        return cached

    def _statics(self) -> dict[str, Callable[..., Any]]:
        return {
            **self.statics_field(),
            "dropin_dir": dropin_dir,
            "dropin_name": dropin_name,
            "dropin_text": dropin_text,
            "ver": ver,
            "rel": rel,
            "cudart_release": cudart_release,
            "cudart_int": cudart_int,
            "arch_list_valid": arch_list_valid,
            "torch_arch_list_valid": torch_arch_list_valid,
            "arch_list_suffixed": arch_list_suffixed,
            "arch_list_covers": arch_list_covers,
            "ptx_isa": self.ptx_isa,
            "min_cuda_for": self.min_cuda_for,
            "min_driver": self.min_driver,
            "cccl_min_std": self.cccl_min_std,
            "wheel": self.wheel,
            "release_wheels": self.release_wheels,
            "apt_packages": self.apt_packages,
            **provider_functions(),
            **self._skew_functions(),
        }
