"""Version skew between two versioned parts, as ONE mechanism over a table of pairs.

Why: nvcc, cicc, ptxas, the cudart headers, the driver, torch's CUDA, Triton's ptxas and the
host compiler are each versioned, and a failure happens when two that must agree do not, in
whichever direction. Writing a rule per direction (and per wording of the error) does not
generalise; a pair of parts plus the agreement relation upstream publishes does. The pairs are
data (knowledge/version-pairs.yaml); the relations are the code below, each reading only the
upstream compatibility tables (cuda-releases.yaml: PTX ISA and minimum driver per release;
cuda-tables.yaml: minor-version-compatibility drivers, host_config.h gcc limits).

The same pair is checked from two kinds of evidence:

- host facts (planning): the pair's ``fact`` expressions read the recorded versions, and the
  pair becomes a rule whose ``when``/``holds`` call :func:`skew_known` / :func:`skew_holds`;
- a log alone (log-only diagnosis): versions the log's lines state (signature groups, version
  banners, the failing command; see ``log_fields``) are normalised and the same relation is
  evaluated: a violated pair is evidence for its rule, a pair the log shows agreeing is
  evidence against it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from packaging.version import Version

from remedy.knowledge.functions import parse_target, rel, ver
from remedy.record import FrozenRecord, Record

if TYPE_CHECKING:
    from remedy.knowledge.functions import Functions
    from remedy.knowledge.skew_schema import LogField, Pair

# How a version value is written: a CUDA release (12.8, 12.8.93, V12.8.93, cu128, 12080), a
# Linux driver version (550.54.14), a PTX ISA version (8.7) or a gcc version (13.2.0).
Kind = Literal["cuda", "driver", "ptx", "gcc", "arch", "std"]
Relation = Literal[
    "same-release",
    "same-major",
    "ptx-le",
    "driver-min",
    "driver-compat",
    "driver-jit",
    "max-gcc",
    "knows-arch",
    "std-ge",
]
RELATIONS: tuple[str, ...] = Relation.__args__  # type: ignore[attr-defined]


# -- normalising values --------------------------------------------------------------------

_CU_TAG = re.compile(r"\bcu(\d{2,3})\b|\+cu(\d{2,3})")


def as_release(value: Any, kind: str, fns: Functions) -> str | None:
    """A CUDA release 'M.m' from a value of ``kind`` (cuda/ptx); None when it cannot say."""
    s = str(value).strip() if value is not None else ""
    if not s:
        return None
    if kind == "ptx":
        isa = ver(s)
        if isa is None:
            return None
        for r in fns.releases:  # the first release whose PTX ISA is this one
            if Version(r.ptx_isa) >= isa:
                return r.release if Version(r.ptx_isa) == isa else None
        return None
    s = s.lstrip("Vv")
    m = _CU_TAG.search(s)
    if m:
        d = m.group(1) or m.group(2)
        return f"{int(d[:-1])}.{int(d[-1])}"
    if re.fullmatch(r"\d{4,5}", s):  # CUDART_VERSION / cudaDriverGetVersion: 12080, 11040
        n = int(s)
        return f"{n // 1000}.{(n % 1000) // 10}"
    return rel(s)


def as_ptx(value: Any, kind: str, fns: Functions) -> Version | None:
    if kind == "ptx":
        return ver(value)
    return fns.ptx_isa(as_release(value, kind, fns))


def _driver_release(fns: Functions, driver: Any) -> str | None:
    """The newest release whose minimum driver this driver meets (Table 3)."""
    d = ver(driver)
    best = None
    for r in fns.releases:
        m = ver(r.min_driver)
        if d is not None and m is not None and d >= m:
            best = r.release
    return best


# Plain records (remedy.record), not dataclasses: why is said there.
class Outcome(FrozenRecord):
    """A relation evaluated on two values: holds (or None: the tables cannot say), and why."""

    _FIELDS = ("holds", "why")  # a __dict__, no slots: pickle and copy restore it as-is

    def __init__(self, holds: bool | None, why: str) -> None:
        object.__setattr__(self, "holds", holds)
        object.__setattr__(self, "why", why)


def check(rel_: str, a: Any, ka: str, b: Any, kb: str, fns: Functions) -> Outcome:
    """Evaluate relation ``rel_`` between a (of kind ka) and b (of kind kb)."""
    if a in (None, "") or b in (None, ""):
        return Outcome(None, "a version is unknown")
    if rel_ in ("same-release", "same-major"):
        ra, rb = as_release(a, ka, fns), as_release(b, kb, fns)
        if not ra or not rb:
            return Outcome(None, "not a CUDA release")
        if rel_ == "same-major":
            return Outcome(ra.split(".")[0] == rb.split(".")[0], f"CUDA {ra} vs {rb} (major)")
        return Outcome(ra == rb, f"CUDA {ra} vs {rb}")
    if rel_ == "ptx-le":
        pa, pb = as_ptx(a, ka, fns), as_ptx(b, kb, fns)
        if pa is None or pb is None:
            return Outcome(None, "PTX ISA unknown")
        return Outcome(pa <= pb, f"PTX ISA {pa} produced, {pb} accepted")
    if rel_ in ("driver-min", "driver-compat", "driver-jit"):
        # a: the driver; b: the CUDA (or PTX) of the code it must run
        if ka == "ptx":  # the driver given by the PTX ISA its JIT accepts ('current version is')
            pa, pb = as_ptx(a, "ptx", fns), as_ptx(b, kb, fns)
            if pa is None or pb is None:
                return Outcome(None, "PTX ISA unknown")
            return Outcome(pa >= pb, f"driver JIT accepts PTX ISA {pa}, given {pb}")
        rb = as_release(b, kb, fns)
        if not rb:
            return Outcome(None, "not a CUDA release")
        if ka == "cuda":  # the driver given as the CUDA version it supports (nvidia-smi, torch)
            ra = as_release(a, "cuda", fns)
            if not ra:
                return Outcome(None, "driver CUDA unknown")
            if rel_ == "driver-compat":
                return Outcome(Version(ra).major >= Version(rb).major, f"driver CUDA {ra}, {rb}")
            return Outcome(Version(ra) >= Version(rb), f"driver supports CUDA {ra}, needs {rb}")
        need = fns.compat_driver(rb) if rel_ == "driver-compat" else fns.min_driver(rb)
        if need is None or ver(a) is None:
            return Outcome(None, f"no driver minimum for CUDA {rb}")
        return Outcome(ver(a) >= ver(need), f"driver {a}, CUDA {rb} needs >= {need}")  # type: ignore[operator]
    if rel_ == "max-gcc":
        rb = as_release(b, kb, fns)
        limit = fns.max_gcc_for(rb)
        va = ver(a)
        if limit is None or va is None:
            return Outcome(None, "no gcc limit known")
        return Outcome(va.major <= limit, f"gcc {va.major}, nvcc {rb} accepts <= {limit}")
    if rel_ == "knows-arch":
        # a: compute capabilities or targets (9.0, sm_90a, 'compute_120f 9.0a'); b: the
        # compiler's CUDA. Both directions: too new for that nvcc, or dropped by it.
        rb = as_release(b, kb, fns)
        if not rb:
            return Outcome(None, "not a CUDA release")
        have = Version(rb)
        bad: list[str] = []
        judged = False
        for t in _targets(a):
            p = parse_target(t)
            if p is None:
                continue
            judged = True
            need = fns.min_cuda_for_target(t)
            gone = fns.dropped_in(t)
            if need is None and (p[0], p[1]) > fns.newest_known_target():
                newest = fns.releases[-1].release
                if have <= Version(newest):
                    bad.append(f"{t} (newer than every target up to CUDA {newest})")
            elif need is not None and have < Version(need):
                bad.append(f"{t} (needs CUDA >= {need})")
            elif gone is not None and have >= Version(gone):
                bad.append(f"{t} (removed in CUDA {gone})")
        if not judged:
            return Outcome(None, "no target")
        if bad:
            return Outcome(False, f"nvcc {rb} cannot compile for " + ", ".join(bad))
        return Outcome(True, f"nvcc {rb} compiles for {a}")
    if rel_ == "std-ge":
        # a: the build's C++ dialect (-std=); b: the dialect the headers require, or the CUDA
        # release whose CCCL sets it (cuda-tables.yaml cccl_min_std)
        have = std_year(a)
        need = std_year(b) if kb == "std" else std_year(fns.cccl_min_std(as_release(b, kb, fns)))
        if have is None or need is None:
            return Outcome(None, "C++ dialect unknown")
        return Outcome(have >= need, f"-std {a} vs at least C++{need % 100:02d}")
    raise ValueError(f"unknown relation {rel_!r}")


_STD_YEARS = {
    "98": 1998,
    "03": 2003,
    "0x": 2011,
    "11": 2011,
    "1y": 2014,
    "14": 2014,
    "1z": 2017,
    "17": 2017,
    "2a": 2020,
    "20": 2020,
    "2b": 2023,
    "23": 2023,
    "26": 2026,
}


def std_year(v: Any) -> int | None:
    """'c++17', 'gnu++14', 'C++17', '17' -> 2017; None when it is no C++ dialect."""
    m = re.search(r"(?:c|gnu)\+\+\s?(\w\w)\b|^(\d\d)$", str(v or "").strip(), re.I)
    if not m:
        return None
    return _STD_YEARS.get((m.group(1) or m.group(2)).lower())


def _targets(v: Any) -> list[str]:
    """Targets in a value: one ('12.0', 'sm_90a'), a list, or a space/comma separated string."""
    items = v if isinstance(v, list | tuple) else re.split(r"[\s,;]+", str(v))
    return [str(i).strip() for i in items if str(i).strip()]


def expression_functions(fns: Functions) -> dict[str, Callable[..., Any]]:
    """skew_known / skew_holds for rule expressions (the pairs' generated when/holds)."""

    seen: dict[tuple[Any, ...], bool | None] = {}

    def holds(r: Any, a: Any, ka: Any, b: Any, kb: Any) -> bool | None:
        # check() is a function of its arguments and the tables: the planner asks the same
        # few questions thousands of times
        key = (str(r), _v(a), str(ka), _v(b), str(kb))
        if key not in seen:
            if len(seen) > 4096:
                seen.clear()
            seen[key] = check(*key, fns).holds
        return seen[key]

    def skew_known(r: Any, a: Any, ka: Any, b: Any, kb: Any) -> bool:
        """True when relation r can judge versions a/b (both known, the tables cover them)."""
        return holds(r, a, ka, b, kb) is not None

    def skew_holds(r: Any, a: Any, ka: Any, b: Any, kb: Any) -> bool:
        """True when versions a (kind ka) and b (kind kb) agree under relation r."""
        return bool(holds(r, a, ka, b, kb))

    return {"skew_known": skew_known, "skew_holds": skew_holds}


def _v(x: Any) -> str | None:
    from remedy.knowledge.functions import _s

    if isinstance(x, list | tuple):
        return " ".join(str(i) for i in x) or None
    return _s(x)


# -- log-only ----------------------------------------------------------------------------


class LogVersion(Record):  # plain, as Outcome
    _FIELDS = ("key", "kind", "value", "line")

    def __init__(self, key: str, kind: str, value: str, line: int) -> None:
        self.key = key
        self.kind = kind
        self.value = value
        self.line = line  # symptom index


def log_versions(
    fields_per_symptom: list[dict[str, str]],
    log_fields: list[LogField],
    signatures: list[str] | None = None,
) -> dict[str, LogVersion]:
    """The first value the log states for each normalised key (fields of every symptom, in
    order: the line the failure is on comes with its own values). ``signatures`` (the symptom
    ids, same order) lets a log field apply to one signature's group only."""
    by_field: dict[str, list[LogField]] = {}
    for lf in log_fields:
        by_field.setdefault(lf.field, []).append(lf)
    out: dict[str, LogVersion] = {}
    for i, f in enumerate(fields_per_symptom):
        sig = signatures[i] if signatures else None
        for name, value in f.items():
            for lf in by_field.get(name, ()):
                if lf.signature is not None and lf.signature != sig:
                    continue
                if value and lf.key not in out:
                    out[lf.key] = LogVersion(lf.key, lf.kind, value, i)
    return out


class PairVerdict(Record):  # plain, as Outcome
    _FIELDS = ("pair", "holds", "why", "lines")

    def __init__(self, pair: str, holds: bool, why: str, lines: tuple[int, int]) -> None:
        self.pair = pair
        self.holds = holds
        self.why = why
        self.lines = lines


def log_pairs(
    pairs: list[Pair], versions: dict[str, LogVersion], fns: Functions
) -> list[PairVerdict]:
    """Every pair whose two versions the log states, with the relation's verdict."""
    out = []
    for p in pairs:
        va = next((versions[k] for k in p.a.log if k in versions), None)
        vb = next((versions[k] for k in p.b.log if k in versions), None)
        if va is None or vb is None or va.line == vb.line and va.key == vb.key:
            continue
        o = check(p.agree, va.value, va.kind, vb.value, vb.kind, fns)
        if o.holds is None:
            continue
        out.append(PairVerdict(p.id, o.holds, o.why, (va.line, vb.line)))
    return out


# the schema of knowledge/version-pairs.yaml (pydantic) and its loader live in
# remedy.knowledge.skew_schema: a log-only diagnosis calls the functions above on the plain
# records of remedy.knowledge.logview and never imports it; these names are still found here
_SCHEMA = ("COMPONENT_PARTS", "LogField", "Pair", "Side", "load_pairs")


def __getattr__(name: str) -> Any:
    if name not in _SCHEMA:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from remedy.knowledge import skew_schema

    return getattr(skew_schema, name)
