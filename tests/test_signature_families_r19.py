"""Message families behind held-out round 19's misses ft-1 and ft-7 (tune-m), as a table.

Why: a fix written from one miss must cover the upstream message in every wording it reaches a
log in (recorded compiler output, and the same line retyped or copied with typographic quotes
into an issue) and must not claim lines it should not. Each row is a log and the class log-only
diagnosis must rank first, or None where no class may be named, and the classes that must NOT be
ranked at all. Sources: knowledge/signatures.yaml (cuda-api-not-in-toolkit,
ptxas-feature-needs-arch-target, ptxas-feature-absent-on-arch) and knowledge/cuda-api-changes.yaml
(the CCCL 3.0 migration guide's removed cub:: names).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from family_table import check_family

API = "toolkit-major-keeps-project-api"
ARCH = "arch-specific-target"

# (log lines, class ranked first or None for "no class", classes that must not be ranked at all)
CASES: list[tuple[list[str], str | None, list[str]]] = [
    # --- EDG's 'has no member' for a CUB name CCCL 3.0 removed (ft-1), recorded with nvcc
    # 13.0.88 against CCCL 3.0.1, then as retyped into issues with a mangled closing quote
    (['r.cu(2): error: namespace "cub" has no member "Max"'], API, []),
    (['编不过，error: namespace "cub" has no member "Max\''], API, []),
    (['k.cu(7): error: namespace "cub" has no member "Min’'], API, []),
    (['r_LaneMaskLt.cu(2): error: namespace "cub" has no member "LaneMaskLt"'], API, []),
    (['r_WARP_BALLOT.cu(2): error: namespace "cub" has no member "WARP_BALLOT"'], API, []),
    (['r_CTA_SYNC_AND.cu(2): error: namespace "cub" has no member "CTA_SYNC_AND"'], API, []),
    (['r_GridBarrier.cu(2): error: namespace "cub" has no member "GridBarrier"'], API, []),
    # a CUB name CCCL 3.0 keeps, and a project's own namespace, are no removed CUDA API
    (['error: namespace "cub" has no member "DeviceReduce\''], None, [API]),
    (['src/a.cu(12): error: namespace "mylib" has no member "Max\''], None, [API]),
    # --- ptxas' block-scaled mma on a plain target (ft-7): recorded with ptxas 13.0.88 for
    # sm_121 (the same PTX assembles for sm_121a), then with the typographic quotes of an issue
    (
        [
            "ptxas /tmp/bs.ptx, line 11; error   : Instruction 'mma with block scale' not"
            " supported on .target 'sm_121'",
            "ptxas /tmp/bs.ptx, line 11; error   : Feature '.kind::mxf4' not supported on"
            " .target 'sm_121'",
            "ptxas fatal   : Ptx assembly aborted due to errors",
        ],
        ARCH,
        [],
    ),
    (
        [
            "ptxas /tmp/tmpxft_00009a8f_00000000-7_mmq-instance-mxfp4.ptx, line 1008; error :"
            " Instruction ‘mma with block scale’ not supported on .target ‘sm_121’"
        ],
        ARCH,
        [],
    ),
    (
        [
            "ptxas /tmp/x.ptx, line 9; error   : Feature ‘.block_scale’ not supported on .target ‘sm_120’"
        ],
        ARCH,
        [],
    ),
    # an arch-specific target that still lacks the feature: no arch-list change helps
    (
        [
            "ptxas /tmp/x.ptx, line 9; error   : Feature ‘tcgen05’ not supported on .target ‘sm_120a’"
        ],
        None,
        [ARCH],
    ),
    (
        [
            "ptxas /tmp/x.ptx, line 9; error   : Feature 'tcgen05' not supported on .target 'sm_120a'"
        ],
        None,
        [ARCH],
    ),
]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    check_family(tmp_path, lines, first, never)
