"""Python environments: packages, torch's CUDA, pins, FlashInfer's CCCL, Triton's ptxas.

Nothing is imported: importing torch takes seconds and can fail in exactly the broken
environments we are asked about. dist-info METADATA, torch/version.py and directory
layout say the same thing in milliseconds. The interpreter is only run when its prefix has
no standard lib/python3*/site-packages (a pyenv shim, an odd layout).
"""

from __future__ import annotations

import functools
import re

from packaging.markers import InvalidMarker, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as PkgRequirement

from remedy.facts import parsers as p
from remedy.facts.sections import DEFAULT_TOKEN, Record, Section, group_records, split_sections
from remedy.model import PythonEnv, Requirement
from remedy.transport.quote import quote

SH_PY = r"""
py() {
  X=$1
  case $X in *"$NL"*|'') return;; esac
  if [ ! -e "$X" ]; then m py.begin "$X"; printf 'origin=%s\n' "$2"; m py.missing; m py.end; return; fi
  b=$(cd -P -- "${X%/*}" 2>/dev/null && pwd -P) || b=${X%/*}
  D=${b%/*}; [ -n "$D" ] || D=/
  S=
  for s in "$D"/lib/python3*/site-packages "$D"/lib/python3*/dist-packages "$D"/lib/python3/dist-packages "$D"/local/lib/python3*/dist-packages; do
    [ -d "$s" ] || continue
    case "$NL$S" in *"$NL$s$NL"*) ;; *) S="$S$s$NL";; esac
  done
  PU=
  if [ -z "$S" ] && [ -x "$X" ] && ! trusted "${X%/*}"; then
    PU=$WHY
  elif [ -z "$S" ] && [ -x "$X" ] && trusted "$X"; then
    O=$(to 10 "$X" -I -S -c 'import sys,site
print(sys.prefix)
for s in site.getsitepackages(): print(s)' 2>/dev/null)
    D=${O%%"$NL"*}; S=${O#*"$NL"}; [ "$S" = "$O" ] && S=
  fi
  R=$(cd -P -- "$D" 2>/dev/null && pwd -P)
  m py.begin "$X"
  printf 'origin=%s\nprefix=%s\n' "$2" "$D"
  m py.real "$R"
  [ -n "$PU" ] && m py.untrusted "$PU"
  case "$PYSEEN" in *"|$R|"*) m py.alias; m py.end; return;; esac
  PYSEEN="$PYSEEN|$R|"
  [ -f "$D/pyvenv.cfg" ] && { m py.cfg; cat -- "$D/pyvenv.cfg"; }
  IFS=$NL
  for s in $S; do
    IFS=$IFS0
    [ -d "$s" ] || continue
    m py.site "$s"
    grep -m2 -H -E '^(Name|Version): ' "$s"/*.dist-info/METADATA "$s"/*.egg-info/PKG-INFO 2>/dev/null
    [ -f "$s/torch/version.py" ] && { m py.torch; grep -E '^(__version__|cuda|git_version|hip)' "$s/torch/version.py"; }
    m py.req
    grep -H '^Requires-Dist: ' "$s"/torch-*.dist-info/METADATA "$s"/cuda_toolkit-*.dist-info/METADATA "$s"/sglang-*.dist-info/METADATA "$s"/flashinfer_python-*.dist-info/METADATA "$s"/sglang_kernel-*.dist-info/METADATA 2>/dev/null
    [ -d "$s/flashinfer/data/cccl/libcudacxx/include" ] && { m py.ficccl; printf '%s\n' "$s/flashinfer/data/cccl/libcudacxx/include"; }
    for t in ptxas ptxas-blackwell; do
      [ -f "$s/triton/backends/nvidia/bin/$t" ] || continue
      if trusted "$s/triton/backends/nvidia/bin/$t"; then m py.triton "$t"; to 10 "$RP" --version 2>&1
      else m py.triton.untrusted "$t" "$WHY"; fi
    done
    [ -d "$s/nvidia/cu13" ] && tk "$s/nvidia/cu13" pip-cu13 "$D" "python:$X"
    [ -d "$s/nvidia/cuda_nvcc" ] && tk "$s/nvidia/cuda_nvcc" pip-cu12 "$D" "python:$X"
  done
  IFS=$IFS0
  m py.end
}
"""

# Whose pins we keep, and on what (the planner must respect them: "keep the user's pins").
_PIN_SOURCES = {
    "torch": ("nvidia-", "cuda-toolkit", "triton"),
    "cuda-toolkit": ("nvidia-",),
    "sglang": (
        "torch",
        "flashinfer-",
        "sglang-kernel",
        "sgl-kernel",
        "apache-tvm-ffi",
        "nvidia-",
        "triton",
        "cuda-",
    ),
    "flashinfer-python": ("torch", "flashinfer-", "apache-tvm-ffi", "nvidia-", "cuda-"),
    "sglang-kernel": ("torch", "nvidia-"),
}


def py_call(interpreter: str, origin: str = "") -> str:
    """The shell line that probes one interpreter (needs SH_PY, SH_TK and the prelude)."""
    return f"py {quote(interpreter)} {quote(origin)}\n"


class PythonRecord(Record):
    """One `py.begin` .. `py.end` block."""

    TAG = "py"

    def __init__(self, interpreter: str) -> None:
        super().__init__(interpreter)
        self.interpreter = interpreter

    @property
    def missing(self) -> bool:
        return self.get("py.missing") is not None

    @property
    def prefix(self) -> str:
        return self.meta().get("prefix") or self.interpreter


def group_pythons(sections: list[Section]) -> list[PythonRecord]:
    """py.* sections into records; tk.* blocks nested inside are skipped here."""
    return group_records(sections, PythonRecord)


def _python_version(rec: PythonRecord, sites: list[str]) -> str | None:
    cfg = rec.get("py.cfg")
    if cfg:
        kv = p.parse_pyvenv_cfg(cfg.body)
        for k in ("version_info", "version"):
            m = re.match(r"(\d+)\.(\d+)", kv.get(k, ""))
            if m:
                return f"{m.group(1)}.{m.group(2)}"
    for s in sites:
        m = re.search(r"/python(\d+)\.(\d+)/", s + "/")
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    m = re.search(r"python(\d+)\.(\d+)$", rec.interpreter)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _marker_env(python: str | None) -> dict[str, str]:
    v = python or "3.12"
    return {
        "python_version": v,
        "python_full_version": v + ".0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


# Parsing a Requires-Dist line and evaluating its marker is most of the controller's CPU for a
# host (torch + cuda-toolkit + sglang list ~100 lines each, ~40 ms a host). A fleet's hosts carry
# the same wheels, so both are remembered by their text: the second host onward pays nothing.
@functools.lru_cache(maxsize=8192)
def _requirement(text: str) -> PkgRequirement | None:
    try:
        return PkgRequirement(text)
    except InvalidRequirement:
        return None


@functools.lru_cache(maxsize=16384)
def _applies_text(text: str, python: str | None, extras: frozenset[str]) -> bool:
    req = _requirement(text)
    return req is not None and _applies(req, _marker_env(python), set(extras))


def _applies(req: PkgRequirement, env: dict[str, str], extras: set[str]) -> bool:
    if req.marker is None:
        return True
    try:
        if req.marker.evaluate(env):
            return True
        return any(req.marker.evaluate({**env, "extra": e}) for e in extras)
    except (UndefinedEnvironmentName, InvalidMarker, ValueError):
        return False


_REQ_LINE = re.compile(r"^(.*?)([^/]+)-([^/-]+)\.dist-info/METADATA:Requires-Dist: (.*)$")
_REQ_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _may_pin(by: str, text: str) -> bool:
    """False only when parse_requirements would certainly drop the line as a pin: its dist is
    not a pin source, it has no `==`, or its name is not one the source's pins are kept for.
    (Cheap text checks; anything unsure is parsed.)"""
    targets = _PIN_SOURCES.get(by)
    if not targets or "==" not in text:
        return False
    m = _REQ_NAME.match(text)
    if not m:
        return True
    name = p.normalize_name(m.group(1))
    return any(name == t or (t.endswith("-") and name.startswith(t)) for t in targets)


def parse_requirements(
    req_grep: str, packages: dict[str, str], python: str | None
) -> list[Requirement]:
    """`==` pins from Requires-Dist of torch / cuda-toolkit / sglang / flashinfer.

    Markers are evaluated for Linux x86_64; cuda-toolkit's pins sit behind extras, which
    count when an installed package asks for them (torch requires cuda-toolkit[cudart,..]).
    Only lines that can matter are parsed: those asking for extras (`[`), and those that
    can be a kept pin (`_may_pin`).
    """
    return [
        Requirement(by=f"{by} {packages.get(by, '?')}", package=name, spec=spec)
        for by, name, spec in _pins(req_grep or "", python)
    ]


@functools.lru_cache(maxsize=256)
def _pins(req_grep: str, python: str | None) -> tuple[tuple[str, str, str], ...]:
    """(by, package, spec) of parse_requirements, remembered by the grep's text: hosts of a
    fleet built from one image answer with the same text."""
    lines: list[tuple[str, str]] = []  # (by dist name, requirement text)
    for line in req_grep.splitlines():
        m = _REQ_LINE.match(line)
        if m:
            lines.append((p.normalize_name(m.group(2)), m.group(4).strip()))
    wanted_extras: dict[str, set[str]] = {}
    for _by, text in lines:
        if "[" not in text:
            continue  # asks for no extras (they are written `name[extra,...]`)
        req = _requirement(text)
        if req is not None and req.extras and _applies_text(text, python, frozenset()):
            wanted_extras.setdefault(p.normalize_name(req.name), set()).update(req.extras)
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for by, text in lines:
        if not _may_pin(by, text):
            continue
        req = _requirement(text)
        if req is None:
            continue
        targets = _PIN_SOURCES[by]
        name = p.normalize_name(req.name)
        if not any(name == t or (t.endswith("-") and name.startswith(t)) for t in targets):
            continue
        specs = list(req.specifier)
        if not specs or not all(s.operator in ("==", "===") for s in specs):
            continue
        if not _applies_text(text, python, frozenset(wanted_extras.get(by, ()))):
            continue
        key = (by, name, str(req.specifier))
        if key in seen:
            continue
        seen.add(key)
        out.append(key)
    return tuple(out)


def build_python(rec: PythonRecord) -> PythonEnv:
    """One probe block -> PythonEnv (never raises on odd output)."""
    sites = [s.arg for s in rec.sections if s.name == "py.site"]
    packages: dict[str, str] = {}
    req_text: list[str] = []
    torch_cuda: str | None = None
    fi_cccl: str | None = None
    triton: dict[str, str] = {}
    for s in rec.sections:
        if s.name == "py.site":
            for k, v in p.packages_from_metadata(s.body).items():
                packages.setdefault(k, v)
        elif s.name == "py.torch" and torch_cuda is None:
            _, torch_cuda = p.parse_torch_version_py(s.body)
        elif s.name == "py.req":
            req_text.append(s.body)
        elif s.name == "py.ficccl" and fi_cccl is None:
            fi_cccl = s.body.strip() or None
        elif s.name == "py.triton":
            rel = p.parse_tool_version(s.body).release
            triton.setdefault(s.arg, rel or "unknown")
    python = _python_version(rec, sites)
    return PythonEnv(
        path=rec.prefix,
        python=python,
        packages=dict(sorted(packages.items())),
        torch_cuda=torch_cuda,
        requirements=parse_requirements("".join(req_text), packages, python),
        flashinfer_cccl=fi_cccl,
        triton_ptxas=triton,
    )


class PythonEnvCollector:
    """`py INTERPRETER ORIGIN` -> PythonEnv (plus pip toolkits, collected by ToolkitCollector)."""

    name = "python"
    library = SH_PY

    def command(self, interpreter: str, origin: str = "") -> str:
        return py_call(interpreter, origin)

    def parse(self, stdout: str, token: str = DEFAULT_TOKEN) -> list[PythonEnv]:
        recs = group_pythons(split_sections(stdout, token))
        return [build_python(r) for r in recs if not r.is_alias and not r.missing]
