"""Message families behind held-out round 17's misses (tune-i), as a table.

Why: a fix written from one miss must cover the upstream message in every wording it is printed
in, and must not claim lines it should not. Each row is a log (real recorded text, or the
upstream format string filled as the emitter fills it, cited in knowledge/signatures.yaml) and
the class log-only diagnosis must rank first, or None where no class may be named (or, for a
negative row, the class that must NOT be ranked at all).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

# (log lines, class ranked first or None for "no class", classes that must not be ranked at all)
CASES: list[tuple[list[str], str | None, list[str]]] = [
    # --- GCC's cv-qualified / typedef wording of a removed cudaDeviceProp member (fo-9) ---
    (
        [
            "/src/cuda_info.cpp:427:43: error: ‘const struct cudaDeviceProp’ has no member"
            " named ‘clockRate’"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "dev.c:12:9: error: ‘cudaDeviceProp’ {aka ‘struct cudaDeviceProp’} has no member"
            " named ‘kernelExecTimeoutEnabled’"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    (
        [
            "smoke.cpp:34:17: error: ‘volatile struct cudaDeviceProp’ has no member named"
            " ‘computeMode’; did you mean ‘computeMode_’?"
        ],
        "toolkit-major-keeps-project-api",
        [],
    ),
    # a member the table does not list is the project's own: no class
    (
        ["a.cpp:3:5: error: ‘const struct Foo’ has no member named ‘clockRate’"],
        None,
        [],
    ),
    (
        ["a.cpp:3:5: error: ‘const struct cudaDeviceProp’ has no member named ‘totalGlobalMem2’"],
        None,
        [],
    ),
    # --- glibc's 'undefined symbol:' with the symbol wrapped or cut (fn-4) ---
    (
        ["flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol:"],
        "extensions-match-torch-abi",
        [],
    ),
    (
        [
            "ImportError: /venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: ",
            "_ZN3c104cuda9SetDeviceEi",
        ],
        "extensions-match-torch-abi",
        [],
    ),
    # the loader's own word, not a line that mentions it in prose
    (["the undefined symbol: check in our CI"], None, []),
    (["libcufile.so.0: undefined symbol: shm_open"], None, ["extensions-match-torch-abi"]),
]


def _ranked(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    symptoms, _, wrappers = scan_logs([log])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    return [h.rule for h in d.hypotheses if h.source == "rules"]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    ranked = _ranked(tmp_path, lines)
    if first is None:
        assert ranked == [] or never, ranked
    else:
        assert ranked and ranked[0] == first, ranked
    assert not set(ranked) & set(never), ranked
