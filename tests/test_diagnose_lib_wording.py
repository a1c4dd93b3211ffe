"""A CUDA runtime library that could not be loaded is read from its name, not the loader's words.

Signature versioned-lib-load-failed takes any load-failure phrase next to a versioned library
name; field signal cuda-major-lib-unloadable-in-any-wording gives the line to
runtime-libs-match-cuda-major only when the provider table says exactly one CUDA major ships
that library (knowledge/providers.yaml). Why: each held-out round brought a loader wording
cuda-runtime-lib-not-found did not list yet (rounds 13, 18, 27, 33, 36); the library's CUDA
major was the fact in every one (bench/results/gen-mech-session34.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from remedy.diagnose import diagnose
from remedy.evidence import scan_lines, scan_path
from remedy.evidence.catalog import Catalog, default_catalog

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
ROWS = {r["file"]: r for r in yaml.safe_load((CORPUS / "index.yaml").read_text())["logs"]}
RULE = "runtime-libs-match-cuda-major"
SIGNAL = "cuda-major-lib-unloadable-in-any-wording"
# the wording-specific signature whose list each round extended; without it, only the field
# route can read these lines
WORDING_SIGNATURE = "cuda-runtime-lib-not-found"


def _catalog_without(*ids: str) -> Catalog:
    full = default_catalog()
    return Catalog(signatures=[s for s in full.signatures if s.id not in ids], path=full.path)


def _ranked(kb, lines: list[str], catalog: Catalog | None = None):
    res = scan_lines(lines, catalog=catalog)
    cat = catalog or default_catalog()
    wrappers = {s.id for s in cat.signatures if s.wrapper}
    return diagnose(kb, None, res.symptoms, wrappers=wrappers).hypotheses


# held-out rows (each was "unknown" for the knowledge frozen before its round) whose loader
# wording cuda-runtime-lib-not-found learned only after the miss
HELD_OUT_ROWS = [
    "runtime-libs-match-cuda-major/fd-20.log",  # round 13: a copy cut mid-message
    "runtime-libs-match-cuda-major/fd-22.log",  # round 13: ldd's '=> not found'
    "runtime-libs-match-cuda-major/fr-9.log",  # round 18: CTranslate2's 'is not found or ...'
    "runtime-libs-match-cuda-major/fzp-12.log",  # round 27: ONNX Runtime's 'which is missing'
    "runtime-libs-match-cuda-major/gag-2.log",  # round 33: ntldd's 'cublas64_13.dll => not found'
    "runtime-libs-match-cuda-major/gba-7.log",  # round 36: Windows' 'cannot proceed because'
]


@pytest.mark.parametrize("file", HELD_OUT_ROWS)
def test_corpus_rows_are_read_from_the_library_name_alone(kb, file):
    assert ROWS[file]["class"] == RULE
    cat = _catalog_without(WORDING_SIGNATURE)
    symptoms = scan_path(str(CORPUS / file), catalog=cat).symptoms
    wrappers = {s.id for s in cat.signatures if s.wrapper}
    hyps = diagnose(kb, None, symptoms, wrappers=wrappers).hypotheses
    assert [h.rule for h in hyps[:1]] == [RULE], [h.rule for h in hyps[:3]]
    assert any(m.startswith(SIGNAL) for m in hyps[0].matched_fields)


@pytest.mark.parametrize(
    "line",
    [
        # wordings no signature lists: the library's own CUDA major decides
        "warning: failed to load libnvrtc.so.13, falling back to the CPU kernels",
        "[engine] ERROR could not load cudart64_12.dll (code 126)",
        "Unable to load libcublasLt.so.12 -- GPU acceleration disabled",
        "fatal: libcudart.so.13 could not be found on this system",
    ],
)
def test_an_unknown_wording_of_a_cuda_major_library_names_the_rule(kb, line):
    hyps = _ranked(kb, [line])
    assert [h.rule for h in hyps[:1]] == [RULE]
    assert hyps[0].matched_fields and hyps[0].matched_fields[0].startswith(SIGNAL)


@pytest.mark.parametrize(
    "line",
    [
        # the driver's library: no CUDA runtime wheel provides it
        "warning: failed to load libcuda.so.1, falling back to the CPU kernels",
        # cuDNN is versioned by its own major, not CUDA's
        "warning: failed to load libcudnn_ops.so.9, falling back to the CPU kernels",
        # shipped alike by the CUDA 12 and 13 lines: a missing package, never a major skew
        "warning: failed to load libcurand.so.10, falling back to the CPU kernels",
        # a system library
        "warning: failed to load libnuma.so.1, falling back to the CPU kernels",
        # the CUDA library loaded; a symbol version it needs did not
        "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
        "(required by /usr/local/cuda/lib64/libcudart.so.12)",
        # no failure at all
        "loaded libcudart.so.12 from /usr/local/cuda/lib64",
    ],
)
def test_no_claim_where_the_name_says_no_single_cuda_major(kb, line):
    hyps = _ranked(kb, [line])
    assert all(not any(m.startswith(SIGNAL) for m in h.matched_fields) for h in hyps)
    assert RULE not in [h.rule for h in hyps]


def test_a_library_a_known_wording_names_is_not_counted_twice(kb):
    line = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"
    with_mech = _ranked(kb, [line])
    without = _ranked(kb, [line], catalog=_catalog_without("versioned-lib-load-failed"))
    assert with_mech[0].rule == RULE
    assert [(h.rule, h.score) for h in with_mech] == [(h.rule, h.score) for h in without]
    assert not any(m.startswith(SIGNAL) for h in with_mech for m in h.matched_fields)
