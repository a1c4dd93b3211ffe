"""CUDA toolkit prefixes: nvcc/ptxas/cicc versions, CUDART_VERSION, CCCL, lib layout, wheels.

Everything here is cheap (~0.05 s a prefix, no compile; see toolchain-lab's probe_prefix.sh):
it is enough to predict PTX-ISA skew (cicc newer than ptxas), the CCCL compiler/headers
check (nvcc release vs CUDART_VERSION), missing `nv/target`, and `cannot find -lcudart`
(no lib64, no unversioned libcudart.so, no stub libcuda.so, nvcc.profile pointing at lib64).
"""

from __future__ import annotations

import re

from remedy.facts import parsers as p
from remedy.facts.sections import DEFAULT_TOKEN, Record, Section, group_records, split_sections
from remedy.fileread import json_loads
from remedy.model import CcclTree, Toolkit
from remedy.transport.quote import quote
from remedy.trust import SH_TRUST

# Relative paths probed in every prefix (`e` = exists, `L` = symlink and its target).
_FILES = (
    "bin/nvcc bin/ptxas bin/nvcc.profile nvvm/bin/cicc conda-meta "
    "include/cuda_runtime_api.h "
    "include/cccl/nv/target include/cccl/nv/detail/__target_macros "
    "include/nv/target include/nv/detail/__target_macros "
    "targets/x86_64-linux/include/cccl/nv/target "
    "targets/x86_64-linux/include/cccl/nv/detail/__target_macros "
    "targets/x86_64-linux/include/nv/target "
    "targets/x86_64-linux/include/nv/detail/__target_macros "
    "../cuda_cccl/include/nv/target ../cuda_cccl/include/nv/detail/__target_macros"
)
LIB_DIRS = (
    "lib",
    "lib64",
    "lib64/stubs",
    "lib/stubs",
    "targets/x86_64-linux/lib",
    "targets/x86_64-linux/lib/stubs",
    "targets/sbsa-linux/lib",
    "targets/sbsa-linux/lib/stubs",
    "lib/x86_64-linux-gnu",
    "../cuda_runtime/lib",
)
_HEADER_DIRS = (
    "include",
    "targets/x86_64-linux/include",
    "targets/sbsa-linux/include",
    "../cuda_runtime/include",
)
# (relative dir holding nv/target, as a consumer's include dir)
_CCCL_DIRS = (
    "include/cccl",
    "include",
    "targets/x86_64-linux/include/cccl",
    "targets/x86_64-linux/include",
    "../cuda_cccl/include",
)

SH_TK = r"""
tk() {
  case $1 in *"$NL"*|'') return;; esac
  m tk.begin "$1"
  printf 'kind=%s\npython=%s\norigin=%s\n' "$2" "$3" "$4"
  if [ ! -e "$1" ]; then m tk.missing; m tk.end; return; fi
  if [ ! -d "$1" ]; then m tk.notdir; m tk.end; return; fi
  R=$(cd -P -- "$1" 2>/dev/null && pwd -P)
  m tk.real "$R"
  case "$TKSEEN" in *"|$R|"*) m tk.alias; m tk.end; return;; esac
  TKSEEN="$TKSEEN|$R|"
  P=$1; UT=
  m tk.files
  for f in @FILES@; do
    [ -L "$P/$f" ] && printf 'L %s\t%s\n' "$f" "$(readlink -- "$P/$f")"
    [ -e "$P/$f" ] && printf 'e %s\n' "$f"
  done
  for d in @LIBDIRS@; do
    [ -d "$P/$d" ] || continue
    [ -L "$P/$d" ] && printf 'L %s\t%s\n' "$d" "$(readlink -- "$P/$d")"
    printf 'd %s\n' "$d"
    for f in "$P/$d"/libcudart.so "$P/$d"/libcudart.so.* "$P/$d"/libcuda.so; do
      [ -e "$f" ] && printf 'e %s/%s\n' "$d" "${f##*/}"
    done
  done
  for d in "$P"/targets/*-linux; do [ -d "$d" ] && printf 't %s\n' "${d##*/}"; done
  m tk.cudart
  for h in @HDIRS@; do
    if [ -f "$P/$h/cuda_runtime_api.h" ]; then
      printf '%s\n' "$h"; grep -m1 '^#define CUDART_VERSION' "$P/$h/cuda_runtime_api.h"; break
    fi
  done
  if [ -f "$P/bin/nvcc" ]; then
    if [ "$(head -c 2 -- "$P/bin/nvcc" 2>/dev/null)" = '#!' ]; then
      m tk.nvcc.script; head -n 40 -- "$P/bin/nvcc"
    fi
    if trusted "$P/bin/nvcc"; then m tk.nvcc; to 10 "$RP" --version 2>&1; m tk.nvcc.rc $?
    else m tk.nvcc.untrusted "$WHY"; UT=1; fi
  fi
  if [ -f "$P/bin/ptxas" ]; then
    if trusted "$P/bin/ptxas"; then m tk.ptxas; to 10 "$RP" --version 2>&1; m tk.ptxas.rc $?
    else m tk.ptxas.untrusted "$WHY"; UT=1; fi
  fi
  if [ -n "$UT" ]; then
    [ -f "$P/version.json" ] && { m tk.version.json; head -c 65536 -- "$P/version.json"; }
    [ -f "$P/version.txt" ] && { m tk.version.txt; head -c 4096 -- "$P/version.txt"; }
  fi
  UT=
  for c in nvvm/bin/cicc lib/nvidia-cuda-toolkit/bin/cicc; do
    if [ -f "$P/$c" ]; then
      m tk.cicc "$c"
      grep -a -o -m1 'cuda_[0-9][0-9]*\.[0-9][0-9]*\.r[0-9.]*/compiler\.[0-9]*' "$P/$c" | head -n1
      break
    fi
  done
  [ -f "$P/bin/nvcc.profile" ] && { m tk.profile; grep -E '^(TOP|LIBRARIES|INCLUDES|SYSTEM_INCLUDES)' "$P/bin/nvcc.profile"; }
  m tk.pip
  grep -m2 -H -E '^(Name|Version): ' "$P"/dist-info/*.dist-info/METADATA "$P"/../../nvidia_*.dist-info/METADATA "$P"/../../cuda_toolkit-*.dist-info/METADATA 2>/dev/null
  m tk.end
}
has_cuda() {
  [ -e "$1/bin/nvcc" ] || [ -e "$1/bin/ptxas" ] || [ -e "$1/include/cuda_runtime_api.h" ] || [ -e "$1/targets/x86_64-linux/include/cuda_runtime_api.h" ]
}
"""
SH_TK = SH_TRUST + (
    SH_TK.replace("@FILES@", _FILES)
    .replace("@LIBDIRS@", " ".join(LIB_DIRS))
    .replace("@HDIRS@", " ".join(_HEADER_DIRS))
)


def tk_call(prefix: str, kind: str = "", python: str = "", origin: str = "") -> str:
    """The shell line that probes one prefix (needs SH_TK and the batch prelude)."""
    return f"tk {quote(prefix)} {quote(kind)} {quote(python)} {quote(origin)}\n"


class ToolkitRecord(Record):
    """One `tk.begin` .. `tk.end` block, before it becomes a Toolkit."""

    TAG = "tk"

    def __init__(self, prefix: str) -> None:
        super().__init__(prefix)
        self.prefix = prefix

    @property
    def origin(self) -> str:
        return self.meta().get("origin", "")


def _files(body: str) -> tuple[set[str], dict[str, str], set[str], list[str]]:
    exists: set[str] = set()
    links: dict[str, str] = {}
    dirs: set[str] = set()
    targets: list[str] = []
    for line in body.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "e":
            exists.add(rest)
        elif tag == "L":
            src, _, dst = rest.partition("\t")
            links[src] = dst
        elif tag == "d":
            dirs.add(rest)
        elif tag == "t":
            targets.append(rest)
    return exists, links, dirs, targets


def _kind(prefix: str, hint: str, exists: set[str], stand_in: bool) -> str:
    if stand_in:
        return "stand-in"
    if hint in ("pip-cu13", "pip-cu12", "conda", "system"):
        return hint
    tail = prefix.rstrip("/")
    if tail.endswith("/nvidia/cu13"):
        return "pip-cu13"
    if tail.endswith("/nvidia/cuda_nvcc"):
        return "pip-cu12"
    if "conda-meta" in exists:
        return "conda"
    if "bin/nvcc" in exists or "include/cuda_runtime_api.h" in exists:
        return "system"
    return "unknown"


def _stand_in_summary(script: str) -> str:
    """What a script nvcc is: its own first comment, then what it execs or the release its
    banner claims (`script (#!/bin/sh): STAND-IN for nvcc 12.8 ...; prints release 12.8`)."""
    lines = script.splitlines()
    shebang = lines[0].strip() if lines and lines[0].startswith("#!") else "#!?"
    comment = next(
        (ln.lstrip("#").strip() for ln in lines[1:6] if ln.startswith("#") and ln.strip("# ")),
        "",
    )
    code = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    execs = [ln for ln in code if ln.startswith("exec ") or " exec " in ln]
    rel = p.parse_tool_version(script).release
    what = (
        f"execs {execs[0][5:] if execs[0].startswith('exec ') else execs[0]}"
        if execs
        else (f"prints a release {rel} banner" if rel else "; ".join(code[:2]))
    )
    head = f"script ({shebang})" + (f": {comment}" if comment else "")
    return f"{head}; {what}" if comment else f"{head}: {what}"[:300]


def build_toolkit(rec: ToolkitRecord) -> Toolkit:
    """Turn one probe block into a Toolkit (never raises on odd output)."""
    meta = rec.meta()
    notes: list[str] = []
    if rec.get("tk.missing"):
        return Toolkit(
            prefix=rec.prefix,
            kind="unknown",
            python=meta.get("python") or None,
            note=_join_note(meta, "does not exist"),
        )
    if rec.get("tk.notdir"):
        return Toolkit(
            prefix=rec.prefix,
            kind="unknown",
            python=meta.get("python") or None,
            note=_join_note(meta, "not a directory"),
        )
    files = rec.get("tk.files")
    exists, links, dirs, targets = _files(files.body if files else "")

    # libs: only libcudart.so, libcudart.so.N and libcuda.so count, per existing dir
    libs: dict[str, list[str]] = {}
    for d in LIB_DIRS:
        if d not in dirs:
            continue
        names = sorted(
            f.rsplit("/", 1)[1]
            for f in exists
            if f.startswith(d + "/") and f.count("/") == d.count("/") + 1
        )
        keep = [
            n
            for n in names
            if n in ("libcudart.so", "libcuda.so")
            or (n.startswith("libcudart.so.") and n[len("libcudart.so.") :].isdigit())
        ]
        libs[d] = keep
    for d, target in links.items():
        if d in dirs:
            notes.append(f"{d} -> {target}")

    # CCCL: the first include dir holding nv/target, and whether nv/detail is complete there
    cccl = CcclTree()
    for inc in _CCCL_DIRS:
        t = f"{inc}/nv/target" in exists
        det = f"{inc}/nv/detail/__target_macros" in exists
        if t or det:
            cccl = CcclTree(present=t and det, nv_target=t, nv_detail=det, include_dir=inc)
            break

    cudart = None
    s = rec.get("tk.cudart")
    if s:
        cudart = p.parse_cudart_version(s.body)

    stand_in = None
    s = rec.get("tk.nvcc.script")
    if s is not None:
        stand_in = _stand_in_summary(s.body)

    nv = p.ToolVersion()
    s = rec.get("tk.nvcc")
    if s is not None:
        nv = p.parse_tool_version(s.body)
        rc = rec.get("tk.nvcc.rc")
        if rc and rc.arg.strip() not in ("0", "") and nv.release is None:
            notes.append(f"nvcc --version failed (exit {rc.arg.strip()}): {_first(s.body)}")
    px = p.ToolVersion()
    s = rec.get("tk.ptxas")
    if s is not None:
        px = p.parse_tool_version(s.body)
        if px.release is None:
            notes.append(f"ptxas --version gave no release: {_first(s.body)}")
    # untrusted binaries were not run: their release comes from files read as data
    for tool in ("nvcc", "ptxas"):
        s = rec.get(f"tk.{tool}.untrusted")
        if s is None:
            continue
        ver, src = _version_without_running(rec)
        rel = ".".join(ver.split(".")[:2]) if ver else None
        notes.append(
            f"{tool} not executed: {s.arg or 'untrusted'}"
            + (f"; release {rel} read from {src}" if rel else "; release unknown")
        )
        if tool == "nvcc" and nv.release is None:
            nv = p.ToolVersion(release=rel, version=ver)
        elif tool == "ptxas" and px.release is None:
            px = p.ToolVersion(release=rel, version=ver)
    cicc = None
    s = rec.get("tk.cicc")
    if s is not None:
        cicc = p.cicc_release(p.parse_cicc_build(s.body))
        if cicc is None:
            notes.append(f"no build string found in {s.arg or 'cicc'}")

    profile_libdir = None
    s = rec.get("tk.profile")
    if s is not None:
        tdir = next((f"targets/{t}" for t in targets), None)
        profile_libdir = p.parse_nvcc_profile_libdir(s.body, tdir)

    pip: dict[str, str] = {}
    s = rec.get("tk.pip")
    if s is not None:
        for name, version in sorted(p.parse_metadata_grep(s.body).values()):
            n = p.normalize_name(name)
            if n.startswith("nvidia-") or n == "cuda-toolkit":
                pip.setdefault(n, version)

    return Toolkit(
        prefix=rec.prefix,
        kind=_kind(rec.prefix, meta.get("kind", ""), exists, stand_in is not None),  # type: ignore[arg-type]
        nvcc_version=nv.version,
        nvcc_release=nv.release,
        ptxas_release=px.release,
        cicc_release=cicc,
        cudart_version=cudart,
        cccl=cccl,
        libs=libs,
        nvcc_profile_libdir=profile_libdir,
        pip=pip,
        python=meta.get("python") or owning_env(rec.prefix),
        stand_in=stand_in,
        note=_join_note(meta, *notes),
    )


_NVCC_DISTS = ("nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc-cu13")


def _version_without_running(rec: ToolkitRecord) -> tuple[str | None, str]:
    """nvcc's full version (`12.8.93`) from version.json, version.txt or the wheel's
    METADATA: what can be known about an untrusted toolkit without executing any of it."""
    s = rec.get("tk.version.json")
    if s is not None:
        try:
            data = json_loads(s.body)
            v = data.get("cuda_nvcc", {}).get("version") or data.get("cuda", {}).get("version")
            if isinstance(v, str) and re.fullmatch(r"\d+\.\d+(\.\d+)*", v):
                return v, "version.json"
        except (ValueError, AttributeError):
            pass
    s = rec.get("tk.version.txt")
    if s is not None:
        m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)?)", s.body)
        if m:
            return m.group(1), "version.txt"
    s = rec.get("tk.pip")
    if s is not None:
        found = {p.normalize_name(n): v for n, v in p.parse_metadata_grep(s.body).values()}
        for name in _NVCC_DISTS:
            v = found.get(name)
            if v and re.match(r"\d+\.\d+", v):
                return v, f"{name} METADATA"
    return None, ""


WHEEL_DIR = re.compile(r"^(/.+?)/lib/python3\.\d+/site-packages/nvidia/cu1\d$")


def owning_env(prefix: str) -> str | None:
    """The Python environment a pip wheel dir lies in, when the prefix was reached by name
    (CUDA_HOME=<venv>/lib/python3.X/site-packages/nvidia/cu13) rather than through that env:
    its pip is the one that can align the wheels."""
    m = WHEEL_DIR.match(prefix.rstrip("/"))
    return m.group(1) if m else None


def _first(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")[:200]


def _join_note(meta: dict[str, str], *notes: str) -> str | None:
    parts = [n for n in notes if n]
    origin = meta.get("origin")
    if origin:
        parts.insert(0, f"found via {origin}")
    return "; ".join(parts) or None


def group_toolkits(sections: list[Section]) -> list[ToolkitRecord]:
    """Collect tk.* sections into records (other sections may be interleaved)."""
    return group_records(sections, ToolkitRecord)


class ToolkitCollector:
    """`tk PREFIX KIND PYTHON ORIGIN` -> Toolkit."""

    name = "toolkit"
    library = SH_TK

    def command(self, prefix: str, kind: str = "", python: str = "", origin: str = "") -> str:
        return tk_call(prefix, kind, python, origin)

    def parse(self, stdout: str, token: str = DEFAULT_TOKEN) -> list[Toolkit]:
        return build_toolkits(split_sections(stdout, token))


def build_toolkits(
    sections: list[Section], by_real: dict[str, Toolkit] | None = None
) -> list[Toolkit]:
    """The new toolkits of a batch: one per real directory, other names in `aliases`.

    by_real (real path -> Toolkit) holds toolkits from earlier batches; a name that leads to
    one of them is added to its aliases in place instead of making a new entry. The prefix is
    the real path, so /usr/local/cuda -> cuda-13.0 gives prefix /usr/local/cuda-13.0 with
    alias /usr/local/cuda.
    """
    seen = by_real if by_real is not None else {}
    new: list[Toolkit] = []
    for rec in group_toolkits(sections):
        real = rec.real
        if real and real in seen:
            tk = seen[real]
            if rec.prefix != tk.prefix and rec.prefix not in tk.aliases:
                tk.aliases.append(rec.prefix)
            continue
        tk = build_toolkit(rec)
        if real:
            if rec.prefix != real:
                tk.aliases.append(rec.prefix)
                tk.prefix = real
            seen[real] = tk
        new.append(tk)
    return new
