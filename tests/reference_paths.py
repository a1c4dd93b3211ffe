"""The fact-collection code that the fast path replaced, kept verbatim as test references.

Issue 18 (facts from a fleet) rewrote hot spots without changing a single fact: the shell
`trusted` walk (one `stat` per directory level), the SVCPY pipeline (run even without units),
the GPU query (in line) and parse_requirements (every Requires-Dist line parsed and
evaluated). The tests run
these beside the new code on the same inputs (real trees, real sandbox hosts, recorded and
real METADATA) and require the same answers.
"""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as PkgRequirement

from remedy.facts import parsers as p
from remedy.facts.pythons import _PIN_SOURCES, _applies, _marker_env
from remedy.model import Requirement

REFERENCE_TRUSTED = r"""
ME=$(id -u 2>/dev/null) || ME=0
trusted() {
  WHY=; RP=
  _tr=$(readlink -f -- "$1" 2>/dev/null)
  [ -n "$_tr" ] || { WHY="$1 cannot be resolved"; return 1; }
  RP=$_tr
  while :; do
    _ts=$(stat -c '%u %a %U' -- "$_tr" 2>/dev/null) || { WHY="$_tr cannot be checked (no stat)"; return 1; }
    _tu=${_ts%% *}; _ta=${_ts#* }; _tn=${_ta#* }; _ta=${_ta%% *}
    if [ "$_tu" != 0 ] && [ "$_tu" != "$ME" ]; then WHY="$_tr owned by $_tn (uid $_tu)"; return 1; fi
    if [ $(( 0$_ta & 022 )) -ne 0 ]; then
      if ! { [ -d "$_tr" ] && [ "$_tu" = 0 ] && [ $(( 0$_ta & 01000 )) -ne 0 ]; }; then
        WHY="$_tr writable by group or others (mode $_ta)"; return 1
      fi
    fi
    [ "$_tr" = / ] && return 0
    _tr=${_tr%/*}; [ -n "$_tr" ] || _tr=/
  done
}
"""

# the GPU query as it was: in line, nvidia-smi from PATH unchecked
REFERENCE_GPU = (
    "if command -v nvidia-smi >/dev/null 2>&1; then\n"
    "  m gpu; to 20 nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total "
    "--format=csv,noheader 2>&1; m gpu.rc $?\n"
    "else m gpu.absent; fi\n"
)

# the host basics as they were: every compiler on PATH run unchecked (h200's host/ fixture was
# recorded with this and cannot be re-recorded; the new script prints the same where they are
# root's, which test_facts_fixtures checks on this machine)
REFERENCE_HOST = (
    "m host.os; cat /etc/os-release 2>/dev/null\n"
    "m host.uname; uname -srm 2>/dev/null\n"
    "m host.cpus; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null\n"
    "m host.mem; grep -m1 '^MemTotal:' /proc/meminfo 2>/dev/null\n"
    "m host.cc\n"
    "for c in gcc g++ cc c++ clang; do\n"
    "  command -v $c >/dev/null 2>&1 && printf '%s\\t%s\\n' $c "
    '"$($c -dumpfullversion -dumpversion 2>/dev/null | head -n1)"\n'
    "done\n"
    "m host.who; printf 'HOME=%s\\nUSER=%s\\nSHELL=%s\\n' \"${HOME-}\" "
    '"$(id -un 2>/dev/null)" "${SHELL-}"\n'
)

REFERENCE_SVCPY = (
    "SVCPY=$(printf '%s\\n' \"${SVC-}\" | grep '^ExecStart=' | grep -i sglang | "
    "grep -o '/[^ ;\"]*/bin/python[0-9.]*' | sort -u)\n"
)


def reference_parse_requirements(
    req_grep: str, packages: dict[str, str], python: str | None
) -> list[Requirement]:
    """parse_requirements as it was: every line parsed, every marker evaluated."""
    lines: list[tuple[str, str]] = []
    for line in (req_grep or "").splitlines():
        m = re.match(r"^(.*?)([^/]+)-([^/-]+)\.dist-info/METADATA:Requires-Dist: (.*)$", line)
        if m:
            lines.append((p.normalize_name(m.group(2)), m.group(4).strip()))
    parsed: list[tuple[str, PkgRequirement]] = []
    for by, text in lines:
        try:
            parsed.append((by, PkgRequirement(text)))
        except InvalidRequirement:
            continue
    env = _marker_env(python)
    wanted_extras: dict[str, set[str]] = {}
    for _by, req in parsed:
        if _applies(req, env, set()) and req.extras:
            wanted_extras.setdefault(p.normalize_name(req.name), set()).update(req.extras)
    out: list[Requirement] = []
    seen: set[tuple[str, str, str]] = set()
    for by, req in parsed:
        targets = _PIN_SOURCES.get(by)
        if not targets:
            continue
        name = p.normalize_name(req.name)
        if not any(name == t or (t.endswith("-") and name.startswith(t)) for t in targets):
            continue
        specs = list(req.specifier)
        if not specs or not all(s.operator in ("==", "===") for s in specs):
            continue
        if not _applies(req, env, wanted_extras.get(by, set())):
            continue
        version = packages.get(by, "?")
        spec = str(req.specifier)
        key = (by, name, spec)
        if key in seen:
            continue
        seen.add(key)
        out.append(Requirement(by=f"{by} {version}", package=name, spec=spec))
    return out
