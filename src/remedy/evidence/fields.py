"""Fields of matched lines, and evidence that depends on them (knowledge/field-signals.yaml).

Why: the same failure arrives in many shapes, and the same signature can point at different
causes depending on one field of the line: ``undefined symbol: __nvJitLink…`` is a library
search-path problem, ``undefined symbol: _ZN3c10…`` a torch ABI mismatch; ``cannot find -lcuda``
is Triton's launcher, ``-lcudart`` a JIT link. A signature says *what kind* of line it is; this
module normalises the fields of that line (arch, versions, consumer, missing file or library)
and applies field signals: data rows saying "this signature, with this field shape, is evidence
for that rule (and not for those)".

It only reads symptoms (matched lines); the scan engine (reader/scan/prefilter) is untouched.
"""

from __future__ import annotations

import os
import re
import shlex
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from remedy.errors import KnowledgeError
from remedy.evidence.plain import Plain, Source
from remedy.evidence.prefix import strip_prefixes
from remedy.knowledge.yamlload import line_of, load_yaml, validate_entry
from remedy.record import Record

if TYPE_CHECKING:
    from remedy.results import Symptom

_ARCH = re.compile(r"\b(?:sm|compute)_(?P<major>\d{1,2}?)(?P<minor>\d)(?P<suffix>[af]?)\b")
_CONSUMERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # flash_fwd_mla_kernel.h is FlashMLA's (deepseek-ai/FlashMLA), not flash-attn's
    (
        "flash-attn",
        re.compile(r"flash[_-]?attn|flash_fwd(?!_mla)|_C_flashattention|flash-attention"),
    ),
    ("xformers", re.compile(r"xformers")),
    ("flashinfer", re.compile(r"flashinfer")),
    ("sglang", re.compile(r"sgl[_-]kernel|sglang")),
    ("vllm", re.compile(r"vllm")),
    ("triton", re.compile(r"triton|cuda_utils|torch/_inductor")),
    ("llama.cpp", re.compile(r"ggml|llama[_.-]cpp")),
    ("torch", re.compile(r"\btorch\b|THCudaCheck|c10::|torch/csrc")),
)
_CC_KEYWORD = re.compile(r"(?:cc)?(?P<major>\d{1,2}?)(?P<minor>\d)(?P<suffix>)")
# ggml's 'CUDA arch <N>' is its GGML_CUDA_CC value, 100*major + 10*minor (750 = 7.5, 1200 = 12.0;
# ggml/src/ggml-cuda/common.cuh GGML_CUDA_CC_TURING 750, ggml_cuda_info().devices[id].cc)
_GGML_CUDA_CC = re.compile(r"(?P<major>\d{1,2})(?P<minor>\d)0(?P<suffix>)")
# A compute capability as error lines write it: 8.0, (7, 5), sm_86 / sm86 / SM90 / sm_100
_CC_VALUE = re.compile(
    r"(?<![\w.])\(?(?P<major>\d{1,2})(?:\.|, ?)(?P<minor>\d)\)?(?!\w|\.\d)"
    r"|\b[Ss][Mm]_?(?P<sm>\d{2,3})[af]?\b"
)
# ... that a line states as a requirement: after 'requires' / 'minimum' / 'at least' / '>=', or
# before 'or higher' / 'or newer' / 'or above' / 'and above' / '+'
_CC_FLOOR_BEFORE = re.compile(
    r"(?:requir\w*|minimum(?: required)?|at least|>=|≥|>)[^.;\d]{0,40}$", re.IGNORECASE
)
_CC_NEAR_WORD = re.compile(r"capabilit(?:y|ies)\b[^\d]{0,30}$", re.IGNORECASE)
_CC_NEAR_VERB = re.compile(
    r"\b(?:got|found|has|have|detected|current(?:ly)?|device is)\b[^\d]{0,12}$", re.IGNORECASE
)
# (tune-cc, round 63's kernel-arch-feature/gnh-1) also with the architecture's name in
# parentheses between: 'GPU compute capability 8.0 (Ampere) or higher is required' (kernl)
_CC_FLOOR_AFTER = re.compile(
    r"^\+|^\)?(?:\s*\([A-Z][a-z]+\))?\s*(?:or|and) (?:higher|newer|above|later)", re.IGNORECASE
)
# a number format a line says the GPU does not support, and the capability it first ran on
_FORMAT_FLOOR = (
    (re.compile(r"\b(?:bf16|bfloat16|BF16|BFloat16)\b"), (8, 0)),
    (re.compile(r"\b(?:fp8|FP8|float8\w*|e4m3\w*)\b"), (8, 9)),
)
_NOT_SUPPORTED = re.compile(
    r"not supported|does not support|doesn't support|unsupported|isn't supported", re.IGNORECASE
)


def _cc_of(m: re.Match[str]) -> tuple[int, int]:
    if m.group("sm"):
        sm = m.group("sm")
        return int(sm[:-1]), int(sm[-1])
    return int(m.group("major")), int(m.group("minor"))


def capability_shortfall(text: str) -> tuple[str, str] | None:
    """('yes', floor) when ``text`` states a minimum compute capability (or refuses a number
    format whose first architecture is known: bf16 sm_80, fp8 sm_89) and the device's own
    capability, and the device's is below it; ('no', floor) when it is not; ('unstated', floor)
    when it states the floor alone; None when it states no floor. The floor is 'M.m'.
    Why: every library words its arch gate its own way ('X requires compute capability >= 8.9
    (this device is sm86)', 'device ... reports compute capability 6.1; Y requires compute
    capability >= 8.0'); the two numbers, not the wording, say which side of the gate the GPU
    is on (a GPU below a kernel's floor is kernel-arch-feature; above a build's range is not)."""
    found = list(_CC_VALUE.finditer(text))
    if not found:
        return None
    floor: tuple[int, int] | None = None
    device: list[tuple[int, int]] = []
    for m in found:
        cc = _cc_of(m)
        before, after = text[max(0, m.start() - 60) : m.start()], text[m.end() : m.end() + 20]
        # a bare number is a capability only right after the word, or after 'got' / 'has' /
        # 'found' (not 'CUDA >= 12.8', 'NVRTC 12.8', 'torch 2.4')
        if not m.group("sm") and not (_CC_NEAR_WORD.search(before) or _CC_NEAR_VERB.search(before)):
            continue
        if floor is None and (_CC_FLOOR_BEFORE.search(before) or _CC_FLOOR_AFTER.search(after)):
            floor = cc
        else:
            device.append(cc)
    if floor is None and _NOT_SUPPORTED.search(text):
        for rx, cc in _FORMAT_FLOOR:
            if rx.search(text):
                floor = cc
                break
    if floor is None:
        return None
    if not device:
        # a refusal that states only the floor (tune-cc, round 63's kernel-arch-feature/gnh-1:
        # kernl's 'GPU compute capability 8.0 (Ampere) or higher is required to install kernl'):
        # the check ran against this GPU and refused it, so the GPU is below the floor, but the
        # line gives no number to compare: 'unstated', for a signal to weigh on its own terms
        return "unstated", f"{floor[0]}.{floor[1]}"
    return ("yes" if all(d < floor for d in device) else "no"), f"{floor[0]}.{floor[1]}"


_THREAD = re.compile(r"([\w.-]+/[\w.-]+)#\d+")


# the signature whose lines capability_shortfall reads (a compute capability in an error line)
CAPABILITY_SIGNATURE = "error-states-compute-capability"


def derived_fields(sym: Symptom) -> dict[str, str]:
    """Fields a line implies beyond its signature's groups (normalised, never overwriting)."""
    out: dict[str, str] = {}
    text = sym.text
    arch = sym.fields.get("arch") or ""
    # NVHPC names a target as a compute-capability keyword (-gpu=cc120), Maxine an engine by
    # its capability digits (AIGS_288x512_89_m0.engine): gpu_cc, not sm_120
    cc = _CC_KEYWORD.fullmatch(sym.fields.get("gpu_cc") or "")
    ggml = _GGML_CUDA_CC.fullmatch(sym.fields.get("gpu_arch") or "")
    m = _ARCH.search(arch) or cc or ggml or _ARCH.search(text)
    if m:
        out["arch_cc"] = f"{m.group('major')}.{m.group('minor')}"
        out["arch_suffix"] = m.group("suffix") or "plain"
        # the target as the version pairs read it (knowledge/version-pairs.yaml log_fields)
        key = "arch_suffixed" if m.group("suffix") else "arch_plain"
        out[key] = out["arch_cc"] + (m.group("suffix") or "")
    for name, rx in _CONSUMERS:
        if rx.search(text):
            out["consumer"] = name
            break
    lib = sym.fields.get("missing_lib") or sym.fields.get("shared_lib") or ""
    if lib:
        base = re.split(r"[\\/]", lib)[-1]
        base = dll_soname(base) or base
        # macOS names a library lib<name>[.<version>].dylib where Linux has lib<name>.so[.<version>]
        out["lib_name"] = re.sub(r"^lib|\.so.*$|(?:\.\d+)*\.dylib$", "", base)
        majors = soname_cuda_majors(base)
        if majors:
            out["lib_cuda_majors"] = ",".join(majors)
        toolkit = lib_in_cuda_toolkit(base)
        if toolkit is not None:
            out["lib_cuda_toolkit"] = "yes" if toolkit else "no"
    if "/bin/nvcc" in text:
        out.update(command_fields(text))
    if sym.signature == CAPABILITY_SIGNATURE:
        short = capability_shortfall(text)
        if short is not None:
            out["capability_short"], out["capability_floor"] = short
    model = sym.fields.get("gpu_model")
    if model:
        cc = gpu_model_cc(model)
        if cc:
            out["gpu_model_cc"] = cc
    symbol = sym.fields.get("api_symbol")
    if symbol:
        change = api_change(symbol, sym.fields.get("api_scope", ""))
        if change is not None:
            out["api_removed_in"] = change.removed_in
            out["api_replacement"] = change.replacement
            out["api_known_as"] = change.symbol
    else:
        out.update(_removed_link_symbol(sym.fields.get("symbol") or ""))
    header = sym.fields.get("missing_header")
    if header:
        gone = removed_header(header)
        if gone is not None:
            out["header_removed_in"] = gone.removed_in
            out["api_replacement"] = gone.replacement
            out["api_known_as"] = gone.header
    return {k: v for k, v in out.items() if k not in sym.fields}


@cache
def _gpu_models() -> tuple[tuple[re.Pattern[str], str], ...]:
    from remedy.evidence.catalog import knowledge_dir

    try:
        rows = _gpu_model_rows(knowledge_dir() / "cuda-tables.yaml")
        return tuple((re.compile(model), cc) for model, cc in rows)
    except (KnowledgeError, OSError, KeyError, TypeError, AttributeError, re.error):
        return ()


def _gpu_model_rows(p: Path) -> tuple[tuple[str, str], ...]:
    """The gpu_models rows of the tables file ``p`` as (model, cc) strings, or as the last run
    that read these same bytes kept them (remedy.evidence.evcache): not through the YAML
    parse cache, which holds every knowledge file's parse."""
    from remedy.evidence import evcache

    k = evcache.gpu_models_key(p)
    kept = evcache.load_gpu_models(k) if k is not None else None
    if kept is not None:
        return kept
    data = load_yaml(p)
    entries = ((data or {}).get("gpu_models") or {}).get("entries") or []
    rows = tuple((str(r["model"]), str(r["cc"])) for r in entries)
    if k is not None:
        evcache.save_gpu_models(k, rows)
    return rows


@cache
def gpu_model_cc(model: str) -> str | None:
    """The compute capability of a GPU model as a log names it ('RTX 5060 Ti', 'P40'), from
    knowledge/cuda-tables.yaml gpu_models (NVIDIA's CUDA GPUs table); None when the name is
    not there or is ambiguous."""
    name = " ".join(model.split())
    for rx, cc in _gpu_models():
        if rx.fullmatch(name):
            return cc
    return None


_SONAME = re.compile(r"lib[\w+-]+\.so\.\d+(?:\.\d+)*")

# Windows names of the CUDA libraries: <name>64_<major>.dll (cublasLt64_12.dll, cudnn64_9.dll),
# CUDA 10/11's cudart64_<major><minor>.dll (cudart64_110.dll, cudart64_101.dll), NVRTC's and
# nvJitLink's <name>[64]_<major><minor>_0.dll (nvrtc64_120_0.dll, nvJitLink_120_0.dll)
_DLL = re.compile(
    r"(?P<name>cudart|cublas|cublasLt|cufft|cufftw|curand|cusolver|cusolverMg|cusparse|nvrtc"
    r"|nvJitLink|cudnn(?:_\w+?)?|npp\w+?|nvjpeg)(?:64)?_(?P<ver>\d{1,3})(?:_\d+)?\.dll",
    re.IGNORECASE,
)
_DLL_NAMES = {
    n.lower(): n
    for n in (
        "cudart",
        "cublas",
        "cublasLt",
        "cufft",
        "cufftw",
        "curand",
        "cusolver",
        "cusolverMg",
        "cusparse",
        "nvrtc",
        "nvJitLink",
        "nvjpeg",
    )
}


def dll_soname(name: str) -> str | None:
    """The Linux soname of a CUDA library's Windows DLL name (cublasLt64_12.dll ->
    libcublasLt.so.12, nvrtc64_120_0.dll -> libnvrtc.so.12, cudart64_110.dll ->
    libcudart.so.11), so that a DLL a Windows loader could not find gives the same lib_name
    and lib_cuda_majors fields as the soname a Linux loader reports. Why: the number in a DLL
    name is the library's own major, exactly what the soname carries (the CUDA toolkit's
    bin/ on Windows holds cublasLt64_12.dll where lib64/ holds libcublasLt.so.12); a three-digit
    number is CUDA 10/11's <major><minor> (cudart64_101.dll) or NVRTC's (nvrtc64_112_0.dll),
    whose soname the provider table keys by the major. None for any other name."""
    m = _DLL.fullmatch(name)
    if not m:
        return None
    lib = m.group("name")
    lib = _DLL_NAMES.get(lib.lower(), lib)
    ver = m.group("ver")
    major = ver[:-1] if len(ver) == 3 else ver
    return f"lib{lib}.so.{int(major)}"


@cache
def soname_cuda_majors(soname: str) -> tuple[str, ...]:
    """The CUDA majors whose pip lines ship this exact soname, from the generated provider table
    (knowledge/providers.yaml: the nvidia-* wheels' own file lists). Why: a soname's number is
    the library's own major, the CUDA major only for some (libcudart.so.13, libcublas.so.13);
    libcurand.so.10 and libcusparse.so.12 are shipped alike by the CUDA 12 and 13 lines, so a
    missing one says nothing of a CUDA-major skew. Empty when the table does not list it."""
    if not _SONAME.fullmatch(soname):
        return ()
    from remedy.evidence.catalog import knowledge_dir
    from remedy.knowledge.providers import load_table

    try:
        # the evidence layer's knowledge dir, as for the signals (not the loader: no Jinja import)
        table = load_table(knowledge_dir() / "providers.yaml")
    except KnowledgeError:
        return ()
    if table is None:
        return ()
    majors = {line.split(".")[0] for line, files in table.pip.items() if soname in files.libraries}
    return tuple(sorted(majors, key=int))


# auditwheel's vendored copy of a library: lib<name>-<8 hex>.so.N (libnvrtc-b51b459d.so.12)
_LIB_STEM = re.compile(r"^lib|(?:-[0-9a-f]{8})?\.so(?:\.[\w.]*)?$|(?:\.\d+)*\.dylib$")


def _lib_stem(name: str) -> str:
    return _LIB_STEM.sub("", name)


@cache
def _toolkit_lib_stems() -> frozenset[str] | None:
    from remedy.evidence.catalog import knowledge_dir
    from remedy.knowledge.providers import load_table

    try:
        table = load_table(knowledge_dir() / "providers.yaml")
    except KnowledgeError:
        return None
    if table is None:
        return None
    names = [f for line in table.pip.values() for f in line.libraries]
    dev = table.debian.packages.get("nvidia-cuda-dev")
    names += dev.libraries if dev is not None else []
    return frozenset(_lib_stem(n) for n in names if ".so" in n)


def lib_in_cuda_toolkit(name: str) -> bool | None:
    """Whether a library a loader could not find is one of the CUDA Toolkit's, by its name at
    any version (libcublasLt.so.11 and libcudart.so.10.1 as much as libcudart.so.13), from the
    generated provider table: the libraries of every nvidia-* wheel a CUDA line's cuda-toolkit
    metapackage pins, and of Debian's nvidia-cuda-dev. Why: only a toolkit library's soname
    can say which CUDA major a package was built for; libnuma.so.1, libgomp.so.1,
    libstdc++.so.6, libssl.so.3 or libmpi.so.40 are versioned by their own ABI and come from
    the distribution or another package, whatever CUDA is installed. None when the table
    cannot be read or the name is not a shared library's."""
    if ".so" not in name:
        return None
    stems = _toolkit_lib_stems()
    if stems is None:
        return None
    return _lib_stem(name) in stems


# tune-bd: and NVRTC's C API (nvrtcGetNVVM, gone from CUDA 13's libnvrtc)
_C_API_SYMBOL = re.compile(r"(?:cu|nvrtc)[A-Za-z]\w*")


def _removed_link_symbol(symbol: str) -> dict[str, str]:
    """A linker's unresolved C symbol that a toolkit major removed (an object or static library
    built against the old headers, linked with the new libcudart: CUDA 13's libcudart.so.13
    exports no cudaThread* function). Only C API names (cuX/cudaX, unmangled) and only rows
    the table marks removed: a changed signature keeps its C symbol, so it never fails a link."""
    # a symbol quoted by the caller's own error text (a Rust DlSym debug string ends in '"')
    symbol = symbol.strip("\"'`’")
    if not _C_API_SYMBOL.fullmatch(symbol):
        return {}
    change = api_change(symbol)
    if change is None or change.change != "removed":
        return {}
    return {
        "api_removed_in": change.removed_in,
        "api_replacement": change.replacement,
        "api_known_as": change.symbol,
    }


# -- CUDA APIs a major release removed (knowledge/cuda-api-changes.yaml) ----------------------
# A compiler line names a symbol; whether it is one CUDA 13 / CCCL 3 / cuda-bindings 13 removed
# is data (the table cites its sources), never a list in code.


# The rows at run time are plain objects (remedy.evidence.plain) built from the entries
# pydantic checked (remedy.evidence.fields_schema).


class ApiChange(Plain):
    """One row of knowledge/cuda-api-changes.yaml."""

    __slots__ = ("symbol", "removed_in", "library", "change", "kind", "replacement", "source")
    _FIELDS = ("symbol", "removed_in", "library", "change", "kind", "replacement", "source")
    _DEFAULTS = {"kind": None}
    symbol: str
    removed_in: str
    library: str
    change: str  # removed, signature, include (no longer brought in by the other headers)
    kind: str | None  # function, type
    replacement: str
    source: str


class ApiFamily(Plain):
    """One row of the table's ``families:``: a name shape a major release removed as a whole
    (CUDA 13's cudaTypedefs.h has no unversioned ``PFN_cuX`` alias at all), so one row covers
    every member instead of a list that misses the next one a log names."""

    __slots__ = ("family", "pattern", "removed_in", "library", "change", "replacement", "source")
    _FIELDS = ("family", "pattern", "removed_in", "library", "change", "replacement", "source")
    family: str
    pattern: str
    removed_in: str
    library: str
    change: str  # removed
    replacement: str
    source: str


def _cited_rows(
    entries: list[Any], model: str, key: str, what: str, file: str, sources: dict[str, Any]
) -> dict[str, Any]:
    """One table of knowledge/cuda-api-changes.yaml: each row valid (``model``: its plain
    class here, checked by the entry class of that name + "Entry" in fields_schema), citing a
    listed source, its key once (errors name file and line)."""
    from remedy.evidence import fields_schema

    out: dict[str, Any] = {}
    for entry in entries:
        checked = validate_entry(getattr(fields_schema, model + "Entry"), entry, file, what=what)
        row = globals()[model].of(checked)
        name = getattr(row, key)
        if row.source not in sources:
            raise KnowledgeError(
                f"{name}: unknown source {row.source!r}", file=file, line=line_of(entry)
            )
        if name in out:
            raise KnowledgeError(f"duplicate {key} {name!r}", file=file, line=line_of(entry))
        out[name] = row
    return out


def default_api_changes_path() -> Path:
    from remedy.evidence.catalog import knowledge_dir

    return knowledge_dir() / "cuda-api-changes.yaml"


def _kept_part(p: Path, part: str, check: Callable[[Path], Any]) -> Any:
    """``check(p)`` (one part of the CUDA API table, checked: its errors raised as they are),
    or that part as a run that checked these same bytes kept it (remedy.evidence.evcache)."""
    from remedy.evidence import evcache

    k = evcache.api_table_key(p)
    kept = evcache.load_api_table(k) if k is not None else None
    if kept is not None and part in kept:
        return kept[part]
    rows = check(p)
    if k is not None:
        evcache.save_api_table(k, {**(kept or {}), part: rows})
    return rows


@cache
def load_api_changes(path: Path | None = None) -> dict[str, ApiChange]:
    """The table keyed by symbol; every row's source must be one of its ``sources``."""
    p = path if path is not None else default_api_changes_path()
    if not p.is_file():
        return {}
    return _kept_part(p, "changes", _check_api_changes)  # type: ignore[no-any-return]


def _check_api_changes(p: Path) -> dict[str, ApiChange]:
    file = str(p)
    data: Any = load_yaml(p)
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list):
        raise KnowledgeError("top level must hold a 'changes:' list", file=file, line=1)
    sources = data.get("sources") or {}
    return _cited_rows(data["changes"], "ApiChange", "symbol", "CUDA API change", file, sources)


@cache
def load_api_families(path: Path | None = None) -> tuple[ApiFamily, ...]:
    """The table's ``families:`` (optional); every row's source must be one of its ``sources``."""
    p = path if path is not None else default_api_changes_path()
    if not p.is_file():
        return ()
    return _kept_part(p, "families", _check_api_families)  # type: ignore[no-any-return]


def _check_api_families(p: Path) -> tuple[ApiFamily, ...]:
    file = str(p)
    data: Any = load_yaml(p)
    sources = (data.get("sources") or {}) if isinstance(data, dict) else {}
    from remedy.evidence.fields_schema import ApiFamilyEntry

    out: list[ApiFamily] = []
    for entry in (data.get("families") or []) if isinstance(data, dict) else []:
        row = ApiFamily.of(validate_entry(ApiFamilyEntry, entry, file, what="CUDA API family"))
        if row.source not in sources:
            raise KnowledgeError(
                f"{row.family}: unknown source {row.source!r}", file=file, line=line_of(entry)
            )
        out.append(row)
    return tuple(out)


class RemovedHeader(Plain):
    """One row of the table's ``headers:``: a header a toolkit's bundled CCCL deleted on
    purpose, so a 'No such file' for it is the project's use of a removed API, not a CCCL tree
    missing files (which a CCCL wheel or include path would fix)."""

    __slots__ = ("header", "removed_in", "library", "replacement", "source")
    _FIELDS = ("header", "removed_in", "library", "replacement", "source")
    header: str
    removed_in: str
    library: str
    replacement: str
    source: str


@cache
def load_removed_headers(path: Path | None = None) -> dict[str, RemovedHeader]:
    """The table's ``headers:`` (optional) keyed by header; every row's source must be one of
    its ``sources``."""
    p = path if path is not None else default_api_changes_path()
    if not p.is_file():
        return {}
    return _kept_part(p, "headers", _check_removed_headers)  # type: ignore[no-any-return]


def _check_removed_headers(p: Path) -> dict[str, RemovedHeader]:
    file = str(p)
    data: Any = load_yaml(p)
    sources = (data.get("sources") or {}) if isinstance(data, dict) else {}
    entries = (data.get("headers") or []) if isinstance(data, dict) else []
    return _cited_rows(entries, "RemovedHeader", "header", "removed CUDA header", file, sources)


def removed_header(header: str) -> RemovedHeader | None:
    """The table row for a header a compiler could not open, as the #include named it; the
    toolkit's include/cccl/ prefix (CUDA 13's layout) and a Windows separator read the same."""
    name = header.strip("<>\"'").replace("\\", "/")
    name = re.sub(r"^(?:\./)?(?:cccl/)?", "", name)
    return load_removed_headers().get(name)


def api_change(symbol: str, scope: str = "") -> ApiChange | None:
    """The table row for a symbol a line names, qualified by its namespace, struct or module
    when the line gives one (``cub::Max``, ``cudaDeviceProp::clockRate``, ``cuda.cudart``);
    an unscoped symbol no row lists may still match a family's name shape."""
    table = load_api_changes()
    keys = [f"{scope}::{symbol}", f"{scope}.{symbol}"] if scope else [symbol]
    row = next((table[k] for k in keys if k in table), None)
    if row is not None or scope:
        return row
    fam = next((f for f in load_api_families() if re.fullmatch(f.pattern, symbol)), None)
    if fam is None:
        return None
    return ApiChange(
        symbol=symbol,
        removed_in=fam.removed_in,
        library=fam.library,
        change=fam.change,
        replacement=fam.replacement.replace("{symbol}", symbol),
        source=fam.source,
    )


# -- the failing command -------------------------------------------------------------------
# torch cpp_extension, FlashInfer/tvm-ffi JIT and setuptools echo the nvcc command they run
# (ninja prints it under 'FAILED: target'; -v and setuptools print it before running it); CMake
# runs nvcc by its full path too. The command says which nvcc, which host compiler, which
# targets, which C++ standard: the versions the version pairs compare, read from the log.

_NVCC_CMD = re.compile(r"(?:^|[\s\]'\"=\[;&|(])(?P<nvcc>[^\s'\"=:\[\];&|()]*/bin/nvcc)\s+-")
_CUDA_VER_IN_PATH = re.compile(r"/cuda[-_]?(\d{1,2}\.\d)(?:\.\d+)?(?:/|$)")
_TGT = re.compile(r"\b(?:sm|compute|lto)_(\d{1,2}?)(\d)([af]?)\b")
_HOST_CC = re.compile(
    r"(?:^|/)(?:[\w.-]+-)?(?P<cc>gcc|g\+\+|clang\+\+|clang|c\+\+)(?:-(?P<ver>\d+)(?:\.\d+)*)?$"
)
_STD = re.compile(r"^-{1,2}std[=]?(c\+\+\w+|gnu\+\+\w+)$")


def command_fields(text: str) -> dict[str, str]:
    """Fields of an nvcc command line: the nvcc and the CUDA release its path (or the toolkit
    include dir it passes) names, the host compiler (-ccbin) and its version when its name
    says it (gcc-13), the targets (-gencode/-arch/--generate-code: one plain target is the
    GPU's, several or a/f-suffixed ones an arch list), -std=, and -D_GLIBCXX_USE_CXX11_ABI.
    Only what the command states."""
    m = _NVCC_CMD.search(text)
    if not m:
        return {}
    cmd = text[m.start("nvcc") :]
    try:
        argv = shlex.split(cmd)
    except ValueError:  # an unbalanced quote in a cut line: split on blanks
        argv = cmd.split()
    if not argv:
        return {}
    out: dict[str, str] = {"cmd_compiler": "nvcc", "cmd_nvcc": argv[0]}
    home = argv[0][: -len("/bin/nvcc")]
    out["cmd_cuda_home"] = home or "/"
    includes: list[str] = []
    targets: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        key, eq, val = arg.partition("=")
        if arg in ("-I", "-isystem") and nxt:
            includes.append(nxt)
            i += 1
        elif arg.startswith("-I") and len(arg) > 2:
            includes.append(arg[2:])
        elif key in ("-ccbin", "--compiler-bindir"):
            ccbin = val if eq else nxt
            i += 0 if eq else 1
            out["cmd_ccbin"] = ccbin
            hm = _HOST_CC.search(ccbin)
            if hm and hm.group("ver") and hm.group("cc") in ("gcc", "g++"):
                out["cmd_host_gcc"] = hm.group("ver")
        elif key in ("-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code"):
            spec = val if eq else nxt
            i += 0 if eq else 1
            targets += [f"{a}.{b}{c}" for a, b, c in _TGT.findall(spec)]
        elif _STD.match(arg):
            out["cmd_std"] = _STD.match(arg).group(1)  # type: ignore[union-attr]
        elif key == "-D_GLIBCXX_USE_CXX11_ABI" and eq:
            out["cmd_cxx11_abi"] = val
        i += 1
    vm = _CUDA_VER_IN_PATH.search(home + "/")
    if not vm:
        vm = next((x for x in (_CUDA_VER_IN_PATH.search(d + "/") for d in includes) if x), None)
    if vm:
        out["cmd_nvcc_cuda"] = vm.group(1)
    if includes:
        out["cmd_includes"] = " ".join(includes)
    # one plain target is the GPU's own arch (torch cpp_extension _get_cuda_arch_flags builds
    # for the visible GPU when TORCH_CUDA_ARCH_LIST is unset); several targets, or an a/f
    # suffixed one, come from an arch list (TORCH_CUDA_ARCH_LIST, FlashInfer's, a package's)
    uniq = list(dict.fromkeys(targets))
    if len(uniq) == 1 and uniq[0][-1].isdigit():
        out["cmd_targets_plain"] = uniq[0]
    elif uniq:
        out["cmd_targets_list"] = " ".join(uniq)
    return out


def fields_of(sym: Symptom) -> dict[str, str]:
    """The symptom's fields plus derived ones, plus ``text`` (the line) for shape matches.

    ``text`` starts at the message: its indentation is the paste's layout (a log quoted as an
    indented code block in an issue), not its wording; a ``where: {text: '^RuntimeError: ...'}``
    missed the same line four spaces in (deco-bj, bench/decorations.py 'indent')."""
    out = dict(sym.fields)
    out.update(derived_fields(sym))
    out["text"] = sym.text.lstrip()
    return out


class Signal(Plain):
    """One row of knowledge/field-signals.yaml (checked by fields_schema.SignalEntry)."""

    __slots__ = (
        "id",
        "rule",
        "signature",
        "where",
        "with_",
        "without",
        "unless",
        "weight",
        "excludes",
        "source",
    )
    _FIELDS = __slots__
    _DEFAULTS = {
        "where": {},
        "with_": [],
        "without": [],
        "unless": [],
        "weight": 1.0,
        "excludes": [],
    }
    id: str
    rule: str
    signature: str
    where: dict[str, str]
    with_: list[str]  # `with:` in the file
    without: list[str]
    # other signals (ids) that confirm what this line's signature claims: this signal applies
    # only when none of them matched in the log (a line's credit is withdrawn while the field
    # that would confirm it is absent)
    unless: list[str]
    # negative: the line is weaker evidence for the rule when a precondition is not shown
    weight: float
    excludes: list[str]
    source: Source

    @classmethod
    def _nested(cls) -> dict[str, type[Plain]]:
        return {"source": Source}

    def learned_from(self, repo: str) -> bool:
        """True when it cites a thread of ``repo`` and nothing upstream (code or docs): it was
        learned from that repository's threads, so leave-one-repository-out drops it."""
        if self.source.repo or self.source.doc or self.source.path:
            return False
        return repo in _THREAD.findall(self.source.thread or "")


# Plain records (remedy.record), not dataclasses: why is said there.
class SignalResult(Record):
    """What the signals say about one log."""

    _FIELDS = ("bonus", "excluded", "not_theirs", "matched", "lines")

    def __init__(
        self,
        bonus: dict[str, float] | None = None,
        excluded: set[tuple[str, int]] | None = None,
        not_theirs: set[tuple[str, int]] | None = None,
        matched: dict[str, list[str]] | None = None,
        lines: dict[str, set[int]] | None = None,
    ) -> None:
        self.bonus: dict[str, float] = defaultdict(float) if bonus is None else bonus
        # (rule, symptom index): this symptom must not count for this rule
        self.excluded: set[tuple[str, int]] = set() if excluded is None else excluded
        # the part of ``excluded`` a signal of ANOTHER rule made: the line is that rule's, not
        # this one's, so a version pair read from it is no evidence for this one either (a
        # signal that excludes its own rule withdraws only the bare line: the pair may give
        # it back)
        self.not_theirs: set[tuple[str, int]] = set() if not_theirs is None else not_theirs
        # rule -> "signal-id: field=value" that matched (for the report)
        self.matched: dict[str, list[str]] = defaultdict(list) if matched is None else matched
        self.lines: dict[str, set[int]] = defaultdict(set) if lines is None else lines


def default_signals_path() -> Path:
    from remedy.evidence.catalog import knowledge_dir

    return knowledge_dir() / "field-signals.yaml"


def load_signals(
    path: str | Path | None = None,
    *,
    rules: Iterable[str] | None = None,
    signatures: Iterable[str] | None = None,
    exclude_repo: str | None = None,
) -> list[Signal]:
    """Load and validate the signals (file:line errors); ``exclude_repo`` drops signals learned
    only from that repository's threads (leave-one-repository-out)."""
    p = Path(path) if path is not None else default_signals_path()
    if not p.is_file():
        return []
    file = str(p)
    data: Any = load_yaml(p)
    if not isinstance(data, dict) or not isinstance(data.get("signals"), list):
        raise KnowledgeError(
            "top level must be a mapping with a 'signals:' list", file=file, line=1
        )
    known_rules = set(rules) if rules is not None else None
    known_sigs = set(signatures) if signatures is not None else None
    out: list[Signal] = []
    seen: set[str] = set()
    from remedy.evidence.fields_schema import SignalEntry

    for entry in data["signals"]:
        sig = Signal.of(validate_entry(SignalEntry, entry, file, what="signal"))
        line = line_of(entry)
        if sig.id in seen:
            raise KnowledgeError(f"duplicate signal id {sig.id!r}", file=file, line=line)
        seen.add(sig.id)
        for rid in [sig.rule, *sig.excludes]:
            if known_rules is not None and rid not in known_rules:
                raise KnowledgeError(
                    f"signal {sig.id!r}: unknown rule {rid!r}", file=file, line=line
                )
        for sid in [sig.signature, *sig.with_, *sig.without]:
            if known_sigs is not None and sid not in known_sigs:
                raise KnowledgeError(
                    f"signal {sig.id!r}: unknown signature {sid!r}", file=file, line=line
                )
        if exclude_repo and sig.learned_from(exclude_repo):
            continue
        out.append(sig)
    for entry in data["signals"]:
        for uid in entry.get("unless") or []:
            if uid not in seen:
                raise KnowledgeError(
                    f"signal {entry.get('id')!r}: unknown signal {uid!r} in unless",
                    file=file,
                    line=line_of(entry),
                )
    return out


def apply_signals(
    signals: list[Signal],
    symptoms: list[Symptom],
    views: list[dict[str, str]] | None = None,
) -> SignalResult:
    """Each signal counts once per log (its weight), on the first symptom that satisfies it;
    its ``excludes`` hold for every symptom that satisfies it. ``views``: the fields of each
    symptom when the caller has more than the line (the command under a ninja FAILED: line)."""
    res = SignalResult()
    present = {s.signature for s in symptoms}
    if views is None:
        views = [fields_of(s) for s in symptoms]
    hits: set[str] = set()
    # signals with ``unless`` last: they read which confirming signals matched
    for sig in sorted(signals, key=lambda g: bool(g.unless)):
        if any(w not in present for w in sig.with_) or any(w in present for w in sig.without):
            continue
        if any(u in hits for u in sig.unless):
            continue
        hit = False
        for i, s in enumerate(symptoms):
            if s.signature != sig.signature:
                continue
            f = views[i]
            if all(re.search(rx, f.get(key, "")) for key, rx in sig.where.items()):
                for other in sig.excludes:
                    res.excluded.add((other, i))
                    if other != sig.rule:
                        res.not_theirs.add((other, i))
                res.lines[sig.rule].add(i)
                if not hit:
                    hits.add(sig.id)
                    res.bonus[sig.rule] += sig.weight
                    shown = ", ".join(f"{k}={f.get(k, '')[:60]}" for k in sig.where if k != "text")
                    res.matched[sig.rule].append(sig.id + (f" ({shown})" if shown else ""))
                    hit = True
    return res


# ninja prints the failing command on the line after 'FAILED: <target>'. That line is not a
# scanner candidate (the prefilter keeps plain nvcc lines out, by design), so the command is
# read back from the log file here, once per FAILED block, only for logs small enough to read
# again (a log pasted into a thread, a build log; never a multi-GiB journal).
FAILED_SIGNATURE = "ninja-failed-target"
REREAD_MAX_BYTES = 32 * 1024 * 1024
_MAX_LINE = 64 * 1024


def symptom_views(symptoms: list[Symptom]) -> list[dict[str, str]]:
    """fields_of every symptom, with the command under each ninja FAILED: line merged in (and
    the other context read back around a line: nvcc and link commands, torch's range warning)."""
    views = [fields_of(s) for s in symptoms]
    for i, cmd in failing_commands(symptoms).items():
        views[i] = {**cmd, **views[i]}
    for i, cmd in preceding_commands(symptoms).items():
        views[i] = {**cmd, **views[i]}
    for i, cmd in preceding_link_commands(symptoms).items():
        views[i] = {**cmd, **views[i]}
    for i, rng in range_contexts(symptoms).items():
        views[i] = {**rng, **views[i]}
    for i, chk in check_contexts(symptoms).items():
        views[i] = {**chk, **views[i]}
    for i, frm in frame_contexts(symptoms).items():
        views[i] = {**frm, **views[i]}
    for i, mod in inductor_module_contexts(symptoms).items():
        views[i] = {**mod, **views[i]}
    for i, listed in listing_contexts(symptoms).items():
        views[i] = {**listed, **views[i]}
    return with_log_nvcc(with_log_gpu(views))


_RELEASE = re.compile(r"(\d+)\.(\d+)")


def with_log_nvcc(views: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each view that names a target arch (``arch_cc``) gains ``log_nvcc_release``: the newest
    nvcc release another line of the log states (``nvcc_release``: 'nvcc --version', CMake's
    compiler identification, collect_env).
    Why: a refused target at or below sm_72 reads as one the nvcc RETIRED only when that nvcc
    is newer than the target; an nvcc older than the target (release 7.5 refusing compute_61)
    never knew it, so the refusal says nothing about a stale arch list (tune-cv;
    knowledge/field-signals.yaml target-newer-than-log-nvcc-*)."""
    releases = [
        ".".join(m.groups())
        for v in views
        if "arch_cc" not in v and (m := _RELEASE.match(v.get("nvcc_release", "")))
    ]
    newest = max(releases, key=_cc_tuple, default=None)
    if newest is None:
        return views
    for v in views:
        if v.get("arch_cc") and "nvcc_release" not in v:
            v["log_nvcc_release"] = newest
    return views


def with_log_gpu(views: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each view that names a target arch (``arch_cc``) gains ``target_vs_log_gpu``: 'same'
    when a GPU the log names elsewhere (``gpu_model_cc``: nvidia-smi, collect_env, torch's
    device name) has that compute capability, 'other' when it names GPUs and none has it; a
    view with an architecture-family floor (``min_gpu``: 'Ampere GPUs or newer') gains
    ``log_gpu_vs_floor``: 'above' when every named GPU meets it, else 'below'.
    Why: a refused or missing arch is the GPU's own, or an entry of a build's arch list, and a
    gate refusing a GPU that meets its stated floor is a build that does not know the GPU;
    the line alone rarely says which, the GPU named beside it does (tune-az)."""
    gpus = {v["gpu_model_cc"] for v in views if v.get("gpu_model_cc")}
    if not gpus:
        return views
    for v in views:
        cc = v.get("arch_cc")
        if cc and "gpu_model_cc" not in v:
            v["target_vs_log_gpu"] = "same" if cc in gpus else "other"
        floor = _ARCH_FAMILY_FLOOR.get(v.get("min_gpu", ""))
        if floor:
            ok = all(_cc_tuple(g) >= floor for g in gpus)
            v["log_gpu_vs_floor"] = "above" if ok else "below"
    return views


# The driver a log states (nvidia-smi's header, collect_env, Warp's banner: fields
# driver_version, then driver_cuda) against the CUDA a binary in it was built with, per
# consumer: a prebuilt binary's own banner (Warp's 'CUDA Toolkit X', field binary_cuda).
# tune-ce (session 42). torch's CUDA is not a consumer here: its own 35 line beside a driver
# that covers torch's CUDA is an extension's (the version pair driver-supports-cuda weighs it).
DRIVER_FIT_FIELDS = {
    "driver_fit_binary": ("binary_cuda",),
}
DRIVER_FIT_SIGNATURE = "driver-too-old"


def with_stated_driver_fit(
    views: list[dict[str, str]],
    signatures: list[str],
    judge: Callable[[str, str, str, str], bool | None],
) -> list[dict[str, str]]:
    """Each driver-too-old view gains, per consumer of DRIVER_FIT_FIELDS whose build CUDA the
    log states, ``driver_fit_<consumer>``: 'meets' when the driver the log states meets that
    CUDA's own minimum (relation driver-min, release notes Table 3), 'compat' when it meets
    only its major's minor-version-compatibility minimum (driver-compat, Table 2), 'below'
    when it meets neither (``judge(relation, driver, driver_kind, cuda)``; None: the tables
    cannot say). Why: cudaErrorInsufficientDriver (35) says "old or absent"; a log that prints
    both the driver and the build's CUDA decides which (tune-ce): a driver that meets it was
    never too old for that build, one below it is the old driver the line names."""
    driver: tuple[str, str] | None = None
    for v in views:  # the exact branch first (nvidia-smi's header states both)
        if v.get("driver_version"):
            driver = (v["driver_version"], "driver")
            break
    if driver is None:
        for v in views:
            # torch's 'found version N' on the 35 line itself is the driver torch read
            if v.get("driver_cuda"):
                driver = (v["driver_cuda"], "cuda")
                break
    if driver is None:
        return views
    fit: dict[str, str] = {}
    for out, names in DRIVER_FIT_FIELDS.items():
        cudas = [v[n] for v in views for n in names if v.get(n)]
        if not cudas:
            continue
        full = [judge("driver-min", driver[0], driver[1], c) for c in cudas]
        compat = [judge("driver-compat", driver[0], driver[1], c) for c in cudas]
        if all(x is True for x in full):
            fit[out] = "meets"
        elif all(x is True for x in compat):
            fit[out] = "compat"
        elif any(x is False for x in compat):
            fit[out] = "below"
    for v, sig in zip(views, signatures, strict=True):
        if sig == DRIVER_FIT_SIGNATURE:
            for k, val in fit.items():
                v.setdefault(k, val)
    return views


# the first compute capability of each architecture family a gate names ('only supports
# Ampere GPUs or newer'): NVIDIA's CUDA GPUs table
_ARCH_FAMILY_FLOOR = {
    "Volta": (7, 0),
    "Turing": (7, 5),
    "Ampere": (8, 0),
    "Ada": (8, 9),
    "Hopper": (9, 0),
    "Blackwell": (10, 0),
}


def _cc_tuple(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


def _line_text(raw: bytes) -> str:
    """A line read back from the log, as the scan saw it (a CRI prefix stripped, a Docker
    json-file record unwrapped, colour codes and collectors' prefixes taken off:
    remedy.evidence.prefix.strip_prefixes). With only the record unwrapped, a neighbour in
    GNU grep's or GCC's colours ('ESC[01;31mESC[Kerror') hid its fields (deco-bj)."""
    return strip_prefixes(raw[:_MAX_LINE].decode("utf-8", "replace").rstrip("\r\n"))[0]


def _reread(source: str) -> BinaryIO | None:
    """The log a symptom came from, read again: exactly the file the scan checked under that
    name (remedy.evidence.reader.open_checked), never what the name leads to now (its writer
    may have swapped it for a link to a file only root can read); None when that is gone, was
    never checked, or is too large to read again."""
    from remedy.evidence.reader import open_checked

    fd = open_checked(source)
    if fd is None:
        return None
    if os.fstat(fd).st_size > REREAD_MAX_BYTES:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def failing_commands(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each ninja FAILED line -> the fields of the nvcc command below it."""
    want: dict[str, dict[int, int]] = {}  # source -> {line after FAILED: symptom index}
    for i, s in enumerate(symptoms):
        if s.signature == FAILED_SIGNATURE and "/bin/nvcc" not in s.text:
            want.setdefault(s.source, {})[s.line + 1] = i
    out: dict[int, dict[str, str]] = {}
    for source, lines in want.items():
        try:
            f = _reread(source)
            if f is None:
                continue
            last = max(lines)
            with f:
                for n, raw in enumerate(f, 1):
                    if n in lines:
                        text = _line_text(raw).strip()
                        fields = command_fields(text)
                        if fields:
                            out[lines[n]] = fields
                    if n >= last:
                        break
        except OSError:
            continue
    return out


# setuptools (build_ext spawn), CMake (try-compile and make VERBOSE=1), make and torch's
# non-ninja cpp_extension path echo the nvcc command on the line(s) before nvcc's own fatal
# line, with no ninja 'FAILED:' wrapper; the targets that command passed say whether the
# rejected target came from an arch list or from the GPU (one plain target). Read back only
# for nvcc's own fatal lines (signatures of component nvcc), a few lines up.
LOOKBACK = 12
KILLED_SIGNATURE = "process-killed"
# the start of an nvcc invocation: a path ending in /bin/nvcc or a bare nvcc, then an option
_NVCC_START = re.compile(
    r"(?:^|[\s'\"=\[;&|(])(?:[^\s'\"=:\[\];&|()]*/bin/)?nvcc(?:\.exe)?['\"]?\s+-"
)
# box drawing and pipes some tools (rich, conda-build, CI log viewers) put before wrapped lines
_WRAP_PREFIX = re.compile(r"^\s*(?:[\u2502\u2503|]\s?)+\s?")


def _joined_command(lines: list[str]) -> str:
    """The command of ``lines`` (its first line starts it). Lines cut at a fixed width (the
    first line and every continuation but the last about as long as each other, a terminal's
    width) are joined without a separator; shell continuations ('\\') with one; anything
    else is not the command's."""
    first, rest = lines[0], [_WRAP_PREFIX.sub("", x) for x in lines[1:]]
    widths = {len(x) for x in rest[:-1]}
    if len(rest) >= 2 and len(widths) == 1:
        width = widths.pop()
        if width >= 60 and abs(len(first) - width) <= 16:
            return first + "".join(rest)
    out = first
    for x in lines[1:]:
        if not out.rstrip().endswith("\\"):
            break
        out = out.rstrip()[:-1].rstrip() + " " + x.strip()
    return out


def preceding_commands(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each nvcc fatal line (or a shell's 'Killed') with no command of its own
    -> the fields of the nvcc command echoed at most LOOKBACK lines before it (same file)."""
    want: dict[str, dict[int, int]] = {}  # source -> {fatal line number: symptom index}
    for i, s in enumerate(symptoms):
        # tune-ae: also a shell's bare 'Killed' (process-killed): an nvcc command echoed just
        # before it (ninja's FAILED block, setuptools' spawn, make VERBOSE=1) is what was killed
        nvcc_line = s.component == "nvcc" or s.signature == KILLED_SIGNATURE
        if nvcc_line and "/bin/nvcc" not in s.text and s.line > 1:
            want.setdefault(s.source, {})[s.line] = i
    out: dict[int, dict[str, str]] = {}
    for source, fatal in want.items():
        try:
            f = _reread(source)
            if f is None:
                continue
            last = max(fatal)
            window: deque[str] = deque(maxlen=LOOKBACK)
            with f:
                for n, raw in enumerate(f, 1):
                    if n in fatal:
                        fields = _command_before(list(window))
                        if fields:
                            out[fatal[n]] = fields
                    if n >= last:
                        break
                    window.append(_line_text(raw).rstrip("\r\n"))
        except OSError:
            continue
    return out


# tune-ad: the linker's 'cannot find -l<lib>' says which library, not where the command looked.
# Builds echo the link command on the line(s) before it (ninja's '[n/N] cmd' and the line under
# 'FAILED:', setuptools' spawn, make): its -L dirs say whether any CUDA library directory was
# searched at all (GNU ld searches the -L dirs, then its default ones).
LINK_SIGNATURE = "ld-cannot-find-lib"
_CUDA_LIBDIR = re.compile(r"cuda|nvidia|/lib64(?:/|$)|/targets/")


def link_command_fields(text: str, lib: str) -> dict[str, str]:
    """Fields of a link command line that passes ``-l<lib>``: its -L directories and whether
    one of them is a CUDA library directory (a toolkit's lib64/lib/targets, an nvidia-* wheel's
    lib). Empty when the line does not pass ``-l<lib>``."""
    if f"-l{lib}" not in text:  # (shlex is pure Python: a line is split only when it may pass it)
        return {}
    try:
        argv = shlex.split(text)
    except ValueError:  # an unbalanced quote in a cut line: split on blanks
        argv = text.split()
    if f"-l{lib}" not in argv:
        return {}
    dirs: list[str] = []
    for k, arg in enumerate(argv):
        if arg == "-L" and k + 1 < len(argv):
            dirs.append(argv[k + 1])
        elif arg.startswith("-L") and len(arg) > 2:
            dirs.append(arg[2:])
    out = {"cmd_link_cuda_libdir": "yes" if any(_CUDA_LIBDIR.search(d) for d in dirs) else "no"}
    if dirs:
        out["cmd_link_dirs"] = " ".join(dirs)
    return out


# characters of a log's lines handed to shlex.split by preceding_link_commands, at most: a log
# another user wrote padded 50 'cannot find -l' lines and the 12 before each to 64 KB of words
# holding every -l as text (~35 ms of pure-Python splitting a line, ~20 s a 4 MB log;
# tests/security/test_link_command_lookback.py); real link lines are a few KB
LINK_SPLIT_BUDGET = 1 << 20


def preceding_link_commands(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each 'cannot find -l<lib>' line -> the fields of the last line at most
    LOOKBACK lines before it (same file) that passes that -l<lib> (LINK_SPLIT_BUDGET
    characters split at most per log)."""
    want: dict[str, dict[int, tuple[int, str]]] = {}  # source -> {line: (index, lib)}
    for i, s in enumerate(symptoms):
        lib = s.fields.get("missing_lib") or ""
        if s.signature == LINK_SIGNATURE and lib and s.line > 1:
            want.setdefault(s.source, {})[s.line] = (i, lib)
    out: dict[int, dict[str, str]] = {}
    for source, lines in want.items():
        try:
            f = _reread(source)
            if f is None:
                continue
            last = max(lines)
            window: deque[str] = deque(maxlen=LOOKBACK)
            budget = LINK_SPLIT_BUDGET
            with f:
                for n, raw in enumerate(f, 1):
                    if n in lines:
                        i, lib = lines[n]
                        for prev in reversed(window):
                            if f"-l{lib}" not in prev:
                                continue
                            budget -= len(prev)
                            if budget < 0:
                                break
                            fields = link_command_fields(prev, lib)
                            if fields:
                                out[i] = fields
                                break
                    if n >= last:
                        break
                    window.append(_line_text(raw).rstrip("\r\n"))
        except OSError:
            continue
    return out


def _command_before(window: list[str]) -> dict[str, str]:
    """Fields of the last nvcc command that starts in ``window`` (the lines before a fatal)."""
    for k in range(len(window) - 1, -1, -1):
        m = _NVCC_START.search(window[k])
        if not m:
            continue
        text = _joined_command(window[k:])[m.start() :].lstrip(" '\"=[;&|(")
        if not text.startswith("/") and "/bin/nvcc" not in text.split(None, 1)[0]:
            # a bare or relative nvcc: command_fields reads the path form
            text = "/bin/" + text[text.index("nvcc") :] if "nvcc" in text else text
        fields = command_fields(text)
        if fields.get("cmd_cuda_home") == "/" and not window[k][m.start() :].lstrip(
            " '\"=[;&|("
        ).startswith("/"):
            fields.pop("cmd_cuda_home", None)
            fields["cmd_nvcc"] = "nvcc"
        return fields
    return {}


# tune-ae: torch 2.5-2.9's _check_capability warning is one format string over three lines
# ('Found GPU%d %s which is of cuda capability %d.%d.' / 'Minimum and Maximum cuda capability
# supported by this version of PyTorch is' / '(%d.%d) - (%d.%d)'), which posts reflow onto one
# or two, with blank lines between. The signature matches the middle line; the GPU's compute
# capability and the wheel's range are read back from the lines around it (same file), so a
# field signal can tell a GPU above the newest minor of a major the wheel has (12.1 on a
# (8.0) - (12.0) wheel: its sm_120 cubins run there) from a GPU of a major it lacks.
RANGE_SIGNATURE = "torch-gpu-cc-outside-range"
RANGE_AROUND = 4
_RANGE_WARNING = re.compile(
    r"which is of cuda capability (\d{1,2})\.(\d)\.?\s+Minimum and Maximum cuda capability"
    r" supported by this version of PyTorch\s+is\s*\((\d{1,2})\.(\d)\)\s*-\s*\((\d{1,2})\.(\d)\)"
)


def range_fields(text: str) -> dict[str, str]:
    """gpu_cc, wheel_min_cc, wheel_max_cc and cc_above_max_same_major ('yes'/'no') of the
    range warning in ``text`` (its lines joined by spaces); {} when it is not all there."""
    m = _RANGE_WARNING.search(text)
    if not m:
        return {}
    gmaj, gmin, lmaj, lmin, hmaj, hmin = (int(x) for x in m.groups())
    above = gmaj == hmaj and gmin > hmin
    return {
        "gpu_cc": f"{gmaj}.{gmin}",
        "wheel_min_cc": f"{lmaj}.{lmin}",
        "wheel_max_cc": f"{hmaj}.{hmin}",
        "cc_above_max_same_major": "yes" if above else "no",
    }


# JAX's CUDA plugin check (jax_plugins/cuda/__init__.py _check_cuda_versions._make_msg):
# 'Outdated {name} installation found.\nVersion JAX was built against: {build_version}\n
# Minimum supported: {min_supported}\nInstalled version: {runtime_version}\n{req_str}', the
# req_str line being what jax-cuda-lib-outdated matches; the numbers sit on the lines above it
JAX_OUTDATED_SIGNATURE = "jax-cuda-lib-outdated"
JAX_OUTDATED_BEFORE = 4
_JAX_BUILT = re.compile(r"Version JAX was built against: (\d+)")
_JAX_INSTALLED = re.compile(r"Installed version: (\d+)")


def jax_version_fields(text: str) -> dict[str, str]:
    """jax_build_version, jax_installed_version and jax_installed_below_build ('yes'/'no') of
    JAX's outdated-library report in ``text`` (its lines joined); {} when a number is absent.
    'no': the library loaded is the one the plugin was built against or newer, and only JAX's
    own floor ('Minimum supported') refuses it: no older copy was found first."""
    b, i = _JAX_BUILT.search(text), _JAX_INSTALLED.search(text)
    if not b or not i:
        return {}
    below = int(i.group(1)) < int(b.group(1))
    return {
        "jax_build_version": b.group(1),
        "jax_installed_version": i.group(1),
        "jax_installed_below_build": "yes" if below else "no",
    }


def range_contexts(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each torch range-warning line -> range_fields of the non-blank lines
    at most RANGE_AROUND lines before and after it (same file); and of each JAX outdated-library
    line -> jax_version_fields of the JAX_OUTDATED_BEFORE lines above it and itself."""
    out = _contexts(symptoms, RANGE_SIGNATURE, RANGE_AROUND, RANGE_AROUND, range_fields)
    # the report's head line ('... Outdated X installation found.') has its numbers below it,
    # its last line ('The local installation ...') above it: each reads its own report only
    n = JAX_OUTDATED_BEFORE
    head = _contexts(symptoms, JAX_OUTDATED_SIGNATURE, 0, n, jax_version_fields, _is_jax_head)
    tail = _contexts(
        symptoms, JAX_OUTDATED_SIGNATURE, n, 0, jax_version_fields, lambda s: not _is_jax_head(s)
    )
    for i, f in (head | tail).items():
        out[i] = {**out.get(i, {}), **f}
    return out


# A line is a later failure when the scan's own heuristics rate it an error statement: an
# exception line, a compiler/linker diagnostic, a 'fatal' (remedy.evidence.suspicious
# base_score >= LATER_ERROR_SCORE; an 'error word' line, a traceback frame, a wrapper score less)
LATER_ERROR_SCORE = 5.0


def short_log_lines(source: str, max_lines: int) -> list[str] | None:
    """The lines of the log ``source`` (read again, as the scan saw them) when it has at most
    ``max_lines`` lines of at most 512 bytes on average; None for a longer log or one that is
    gone."""
    f = _reread(source)
    if f is None:
        return None
    try:
        with f:
            raw = f.readlines(max_lines * 512)
            if len(raw) > max_lines or f.read(1):
                return None
    except OSError:
        return None
    return [_line_text(r) for r in raw]


def error_lines_after(source: str, line: int, skip: set[int]) -> list[int]:
    """Lines below ``line`` of the log ``source`` (read again: small logs only) that state a
    failure, leaving out the ``skip`` lines (the matched ones: the caller judges those by
    their signature)."""
    from remedy.evidence.suspicious import base_score, is_error_looking

    f = _reread(source)
    if f is None:
        return []
    out: list[int] = []
    try:
        with f:
            for n, raw in enumerate(f, 1):
                if n <= line or n in skip:
                    continue
                text = _line_text(raw).strip()
                if text and is_error_looking(text) and base_score(text)[0] >= LATER_ERROR_SCORE:
                    out.append(n)
    except OSError:
        return []
    return out


# c10's CUDA check (c10/cuda/CUDAException.cpp c10_cuda_check_implementation: 'CUDA error: '
# + cudaGetErrorString, then c10/cuda/CUDAMiscFunctions.cpp get_cuda_check_suffix / get_cuda_error_help:
# 'Search for `cudaErrorX' in https://docs.nvidia.com/cuda/cuda-runtime-api/...', 'CUDA kernel
# errors might be asynchronously reported at some other API call ...', 'Compile with
# `TORCH_USE_CUDA_DSA` ...'; raised as c10::AcceleratorError, torch.AcceleratorError in Python,
# since torch 2.8). The suffix follows the error on the next lines, or on the same line when a
# post reflows it. A package's own check prints its own form instead (ggml's 'current device:',
# ONNX Runtime's 'CUDA error cudaErrorX:', faiss, flashinfer's 'failed with error code').
CHECK_SIGNATURES = frozenset({"no-kernel-image"})
CHECK_AFTER = 3
_C10_CHECK = re.compile(
    r"CUDA kernel errors might be asynchronously reported|TORCH_USE_CUDA_DSA"
    r"|torch\.AcceleratorError: CUDA error: |Search for `cuda\w+' in https://docs\.nvidia\.com/cuda/"
)


def check_fields(text: str) -> dict[str, str]:
    """cuda_check 'c10' when ``text`` carries c10's CUDA-check message form; {} otherwise."""
    return {"cuda_check": "c10"} if _C10_CHECK.search(text) else {}


# tune-ed (round 94's hwe-1): a C++ exception's stack ('Exception raised from ... (most recent
# call first):', then 'frame #N: <symbol> + 0x.. (0x.. in <library>)', c10/util/Backtrace.cpp)
# names the binary the throwing code lives in. frame #0 is c10::Error's constructor: in a torch
# install that is torch's own libc10 (or c10.dll); any other library there carries a copy of
# libtorch built into it (a prebuilt program that bundles its own, e.g. dorado's
# libdorado_torch_lib.so), which no torch wheel swap changes.
FRAME_LIB_AFTER = 20
_FIRST_CXX_FRAME = re.compile(r"\bframe #0: [^\n]*?\(0x[0-9a-fA-F]+ in (?P<path>[^()\n]+?)\)")


def frame_lib_fields(text: str) -> dict[str, str]:
    """first_frame_lib: the file name of the library of 'frame #0' of a c10 stack in ``text``."""
    m = _FIRST_CXX_FRAME.search(text)
    if not m:
        return {}
    name = re.split(r"[\\/]", m.group("path").strip())[-1]
    return {"first_frame_lib": name} if name else {}


# tune-ed (round 94's hvo-1): glibc's LD_DEBUG=libs trace (elf/dl-load.c, elf/dl-object.c)
# prints, for each DT_NEEDED the loader resolves, 'file=<lib> [<ns>];  needed by <object>
# [<ns>]', then 'find library=<lib> [<ns>]; searching', one ' search path=<dirs>\t\t(<source>)'
# (LD_LIBRARY_PATH, 'RUNPATH from file <object>', 'system search path') or ' search
# cache=/etc/ld.so.cache' per search list, ' trying file=<path>' per candidate, and 'file=<lib>
# [<ns>];  generating link map' once one opened: the last candidate tried is the one loaded,
# found through the last search list named above it.
LDDEBUG_SIGNATURE = "ld-debug-library-needed-by"
LDDEBUG_AFTER = 24
_LD_NEEDED = re.compile(r"\bfile=(?P<lib>[^\s\[\]]+) \[\d+\];\s+needed by ")
_LD_STEP = re.compile(
    r"\bsearch path=\S*\s+\((?P<src>[^)]+)\)|\bsearch (?P<cache>cache)=\S+|\btrying file=(?P<file>\S+)"
)


def ld_search_fields(text: str) -> dict[str, str]:
    """ld_resolved_path / ld_resolved_via: where an LD_DEBUG trace in ``text`` found the
    library its first 'needed by' line asks for, and through which search list."""
    m = _LD_NEEDED.search(text)
    if not m:
        return {}
    rest = text[m.end() :]
    nxt = _LD_NEEDED.search(rest)
    if nxt:
        rest = rest[: nxt.start()]
    done = re.search(
        r"\bfile=" + re.escape(m.group("lib")) + r" \[\d+\];\s+generating link map", rest
    )
    if not done:
        return {}
    via, path = "", ""
    for step in _LD_STEP.finditer(rest[: done.start()]):
        if step.group("src") or step.group("cache"):
            via = (step.group("src") or step.group("cache")).strip()
        elif step.group("file"):
            path = step.group("file")
    return {"ld_resolved_path": path, "ld_resolved_via": via} if path and via else {}


def check_contexts(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each CHECK_SIGNATURES line -> check_fields of it and the CHECK_AFTER
    non-blank lines below it (same file): which library's error check printed the CUDA error;
    and the library of the first frame of the stack below it (FRAME_LIB_AFTER lines)."""
    out: dict[int, dict[str, str]] = {}
    for sig in sorted(CHECK_SIGNATURES):
        out |= _contexts(symptoms, sig, 0, CHECK_AFTER, check_fields)
        for i, f in _contexts(symptoms, sig, 0, FRAME_LIB_AFTER, frame_lib_fields).items():
            out[i] = {**out.get(i, {}), **f}
    for i, f in _contexts(symptoms, LDDEBUG_SIGNATURE, 0, LDDEBUG_AFTER, ld_search_fields).items():
        out[i] = {**out.get(i, {}), **f}
    spawned = _contexts(symptoms, SPAWN_SIGNATURE, SPAWN_AROUND, SPAWN_AROUND, spawn_fields)
    for i, f in spawned.items():
        out[i] = {**out.get(i, {}), **f}
    return out


# setuptools' report of a compiler it spawned that failed (distutils spawn / _msvccompiler
# and unixccompiler re-raising DistutilsExecError as CompileError: "command '<path>' failed
# with exit code N", older "... exit status N"): the nvcc that rejected an arch was run by a
# Python build_ext (torch.utils.cpp_extension's BuildExtension), whose default target is the
# visible GPU's arch when TORCH_CUDA_ARCH_LIST is unset. Read around the rejected-arch line
# (a post may quote the two in either order).
SPAWN_SIGNATURE = "nvcc-unsupported-arch"
SPAWN_AROUND = 3
_SETUPTOOLS_NVCC = re.compile(
    r"\bcommand '[^'\n]*\bnvcc(?:\.exe)?' failed with exit (?:code|status) \d"
)


def spawn_fields(text: str) -> dict[str, str]:
    """build_spawn 'setuptools' when ``text`` holds setuptools' failed-nvcc report."""
    return {"build_spawn": "setuptools"} if _SETUPTOOLS_NVCC.search(text) else {}


# tune-ba (round 48's gdc-1): a 'No such file or directory: ninja' says nothing of where ninja
# is, but the traceback above it says which Python raised it: a frame in
# <prefix>/lib/pythonX.Y/site-packages/<package>/ (Windows: <prefix>\\Lib\\site-packages\\) names
# the environment and the package that ran ninja. Whether that package's install brought pip's
# ninja into <prefix>/bin, and which prefixes are on every PATH, is knowledge (the field signal
# ninja-missing-under-package-that-installs-ninja), not code.
# tune-bf (round 31's null fzl-2): a library missing under torch's own import frame is read
# the same way (field signal torch-bundled-library-missing-at-torch-import)
# tune-ee (round 94's null hvv-1): Triton's 'device kernel image is invalid' with no frame
# above it (field signal bare-triton-invalid-kernel-image-names-no-driver)
FRAME_SIGNATURES = frozenset(
    {"ninja-missing", "shared-lib-not-found", "triton-invalid-kernel-image"}
)
FRAMES_BEFORE = 40
_SITE_FRAME = re.compile(
    r'File "(?P<prefix>[^"]+?)[\\/][Ll]ib[\\/](?:python\d+(?:\.\d+)?[\\/])?'
    r"(?:site|dist)-packages[\\/](?P<pkg>[A-Za-z_]\w*)[\\/]"
)


def frame_fields(text: str) -> dict[str, str]:
    """frame_packages: the 'package@prefix' of each traceback frame in ``text`` that lies in a
    Python environment's site-packages (in order, each once; the prefix with '/' separators)."""
    seen: list[str] = []
    for m in _SITE_FRAME.finditer(text):
        item = m.group("pkg") + "@" + m.group("prefix").replace("\\", "/")
        if item not in seen:
            seen.append(item)
    return {"frame_packages": ",".join(seen)} if seen else {}


def frame_contexts(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each FRAME_SIGNATURES line -> frame_fields of it, else of the
    FRAMES_BEFORE lines above it (same file): the environment the failing Python ran from;
    with frame_files of the lines from FRAMES_BEFORE above to FRAMES_AFTER below."""
    out: dict[int, dict[str, str]] = {}
    for sig in sorted(FRAME_SIGNATURES):
        out |= _contexts(symptoms, sig, FRAMES_BEFORE, 0, frame_fields)
        for i, f in _contexts(
            symptoms, sig, FRAMES_BEFORE, FRAMES_AFTER, frame_file_fields
        ).items():
            out[i] = {**f, **out.get(i, {})}
    return out


# tune-if (session 50, after round 95's jit-ninja-on-path/hwj-1): some tools print the message
# first and the traceback under it (ComfyUI's 'Error occurred when executing NODE:', the
# message, then the frames), and the frames that say which Python ran need not lie in
# site-packages (an application's own files beside a bundled interpreter). frame_files: every
# traceback frame's file (before or after the line, '/' separators), read by knowledge.
FRAMES_AFTER = 20
_FRAME_FILE = re.compile(r'File "(?P<path>[^"]+)", line \d+')


def frame_file_fields(text: str) -> dict[str, str]:
    """frame_files: the file of each traceback frame in ``text`` (in order, each once; '/'
    separators)."""
    seen: list[str] = []
    for m in _FRAME_FILE.finditer(text):
        path = m.group("path").replace("\\", "/")
        if path not in seen:
            seen.append(path)
    return {"frame_files": ",".join(seen)} if seen else {}


# tune-br (round 27-28's null fzr-7, pytorch/pytorch#141744): Inductor's generated module
# defines each kernel at module level ('<name> = async_compile.triton(\'triton_\', \'\'\'...'),
# and its triton_meta pins the compiling GPU (DeviceProperties cc). In a torch.compile run that
# module is exec'd from Inductor's code cache, whose file is named by the code hash
# (torch/_inductor/codecache.py: code_hash -> 'c' + 51 lowercase base32 characters, get_path
# -> <cache_dir>/<key[1:3]>/<key>.py); a module under any other name is a saved copy (a
# TORCH_COMPILE_DEBUG output_code.py, a file passed to someone else) run on its own, whose
# kernels target the GPU it was generated on, not necessarily this one.
INDUCTOR_MODULE_SIGNATURES = frozenset({"triton-invalid-kernel-image"})
_INDUCTOR_MODULE_FRAME = re.compile(
    r'File "(?P<path>[^"]+)", line \d+, in <module> \w+ = async_compile\.triton\('
)
_INDUCTOR_CACHE_FILE = re.compile(r"(?:^|[\\/])c[a-z2-7]{51}\.py$")


def inductor_module_fields(text: str) -> dict[str, str]:
    """inductor_module 'cache' or 'saved' for the last Inductor module frame in ``text``."""
    paths = [m.group("path") for m in _INDUCTOR_MODULE_FRAME.finditer(text)]
    if not paths:
        return {}
    cached = _INDUCTOR_CACHE_FILE.search(paths[-1])
    return {"inductor_module": "cache" if cached else "saved"}


def inductor_module_contexts(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each INDUCTOR_MODULE_SIGNATURES line -> inductor_module_fields of the
    FRAMES_BEFORE lines above it (same file)."""
    out: dict[int, dict[str, str]] = {}
    for sig in sorted(INDUCTOR_MODULE_SIGNATURES):
        out |= _contexts(symptoms, sig, FRAMES_BEFORE, 0, inductor_module_fields)
    return out


def _is_jax_head(s: Symptom) -> bool:
    return "Outdated" in s.text


def _contexts(
    symptoms: list[Symptom],
    signature: str,
    before: int,
    after: int,
    read: Callable[[str], dict[str, str]],
    only: Callable[[Symptom], bool] = lambda s: True,
) -> dict[int, dict[str, str]]:
    """symptom index of each ``signature`` line (that ``only`` keeps) -> ``read`` of its line,
    else of the non-blank lines from ``before`` lines above it to ``after`` below it (same
    file), joined."""
    mine = [i for i, s in enumerate(symptoms) if s.signature == signature and only(s)]
    want: dict[str, dict[int, int]] = {}  # source -> {line: symptom index}
    for i in mine:
        want.setdefault(symptoms[i].source, {})[symptoms[i].line] = i
    # the line itself first (a warning reflowed onto one line; a log read from stdin)
    out = {i: f for i in mine if (f := read(symptoms[i].text))}
    for source, at in want.items():
        lines = _lines_near(source, at, before, after)
        if lines is None:
            continue
        for line, i in at.items():
            around = (lines.get(n, "").strip() for n in range(line - before, line + after + 1))
            fields = read(" ".join(t for t in around if t))
            if fields and i not in out:
                out[i] = fields
    return out


def _lines_near(source: str, at: Iterable[int], before: int, after: int) -> dict[int, str] | None:
    """Line number -> text of ``source``'s lines from ``before`` above to ``after`` below each
    line of ``at``, read again up to the last of them; None when it cannot be read again."""
    try:
        f = _reread(source)
        if f is None:
            return None
        keep = {n for line in at for n in range(line - before, line + after + 1)}
        last = max(keep)
        lines: dict[int, str] = {}
        with f:
            for n, raw in enumerate(f, 1):
                if n in keep:
                    lines[n] = _line_text(raw)
                if n >= last:
                    break
        return lines
    except OSError:
        return None


# tune-ax (after round 49's null gdk-8, ollama/ollama#602: 'error while loading shared
# libraries: libcudart.so.12: cannot open shared object file', then the poster's 'ls -al' of
# the runner's directory holding libcudart.so.12.0): a post often shows, next to the loader's
# line, the files the user found (ls, ls -l, find, ldconfig -p, ldd's resolved lines). A file
# of the missing library at the SAME soname major (libcudart.so.12.0 for libcudart.so.12) says
# that major's library is installed: the loader's search or the soname link is what failed,
# not a package built for another CUDA major nor a package left uninstalled. Only other
# majors (libcudart.so.11.0 for libcudart.so.12) confirm the mismatch.
LISTING_SIGNATURES = frozenset(
    {"cuda-runtime-lib-not-found", "shared-lib-not-found", "versioned-lib-load-failed"}
)
LISTING_AROUND = 12
_SONAME = re.compile(r"^lib([\w+-]+)\.so\.(\d+)(?:\.\d+)*$")
# a line stating a failure is no listing (the loader's own line, ldd's '=> not found')
_NOT_LISTING = re.compile(
    r"not found|cannot open|[Nn]o such file|[Ee]rror|[Ff]ail|[Uu]nable|[Cc]ould not|[Mm]issing"
)
# ls -l's mode column; ldconfig -p's '(libc6,x86-64) => path'; ldd's resolved 'name => path (0x'
_LS_LONG = re.compile(r"^[-lbcdps][-rwxsStT]{9}[.+@]?\s")
_RESOLVED = re.compile(r"^\S+\s+(?:\([^)]*\)\s+)?=>\s+(\S+)")
_FILE_TOKEN = re.compile(r"^(?:\S*/)?[\w.+-]+$")


def listed_files(line: str) -> list[str]:
    """Basenames of the shared libraries a listing line shows (ls, ls -l, find, ldconfig -p,
    ldd's resolved form); [] for any other line."""
    text = line.strip()
    if not text or _NOT_LISTING.search(text):
        return []
    if _LS_LONG.match(text):
        words = text.split()
        if "->" in words:  # a link: its own name (the last word before the arrow)
            words = words[: words.index("->")]
        names = words[-1:]
    elif m := _RESOLVED.match(text):
        names = [m.group(1)]
    else:
        # find's one path a line; ls's names one a line or in columns padded by 2+ blanks
        # (prose that names a file, 'Make sure that libX.so.12 is installed', is no listing)
        names = re.split(r"\s{2,}|\t", text)
        if not all(_FILE_TOKEN.match(n) for n in names):
            return []
    return [re.split(r"[\\/]", n)[-1] for n in names if ".so." in n]


def listing_fields(soname: str, lines: list[str]) -> dict[str, str]:
    """lib_listed 'same-major' when ``lines`` list a file of ``soname``'s library at its major
    (libcudart.so.12.0 for libcudart.so.12), 'other-major' when they list it only at other
    majors; {} when they list none (or ``soname`` carries no major)."""
    want = _SONAME.match(soname)
    if not want:
        return {}
    seen: set[str] = set()
    for line in lines:
        for name in listed_files(line):
            m = _SONAME.match(name)
            if m and m.group(1) == want.group(1):
                seen.add(m.group(2))
    if not seen:
        return {}
    return {"lib_listed": "same-major" if want.group(2) in seen else "other-major"}


def listing_contexts(symptoms: list[Symptom]) -> dict[int, dict[str, str]]:
    """symptom index of each library-not-found line -> listing_fields of the other lines at
    most LISTING_AROUND lines above and below it (same file)."""
    # source -> {line: [(index, soname)]}: several signatures match one loader line
    want: dict[str, dict[int, list[tuple[int, str]]]] = {}
    for i, s in enumerate(symptoms):
        lib = re.split(r"[\\/]", s.fields.get("shared_lib") or "")[-1]
        if s.signature in LISTING_SIGNATURES and _SONAME.match(lib):
            want.setdefault(s.source, {}).setdefault(s.line, []).append((i, lib))
    out: dict[int, dict[str, str]] = {}
    for source, at in want.items():
        lines = _lines_near(source, at, LISTING_AROUND, LISTING_AROUND)
        if lines is None:
            continue
        for line, found in at.items():
            around = [
                lines[n]
                for n in range(line - LISTING_AROUND, line + LISTING_AROUND + 1)
                if n != line and n in lines
            ]
            for i, lib in found:
                fields = listing_fields(lib, around)
                if fields:
                    out[i] = fields
    return out
