"""CUDA APIs a major release removed (knowledge/cuda-api-changes.yaml) and the class they name.

Why: a build of code written for CUDA 12 fails under CUDA 13 / CCCL 3 / cuda-bindings 13 by
naming a symbol the new release no longer has. The table says which; these tests drive every
row through the wording a compiler prints for it (recorded from nvcc 13.0.88 and gcc 12.2 in
tests/fixtures/templates/cuda13/), and check that a symbol in no table names no cause.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from remedy.diagnose import diagnose
from remedy.errors import KnowledgeError
from remedy.evidence import scan_lines
from remedy.evidence.fields import (
    api_change,
    derived_fields,
    load_api_changes,
    load_api_families,
    load_removed_headers,
    removed_header,
)
from remedy.knowledge.loader import load_knowledge

CLASS = "toolkit-major-keeps-project-api"
TABLE = Path(__file__).resolve().parents[1] / "knowledge" / "cuda-api-changes.yaml"
ROWS = yaml.safe_load(TABLE.read_text())["changes"]


def line_for(row: dict) -> str:
    """The line a compiler (or Python) prints for a use of the row's symbol it does not have
    (the wordings recorded in tests/fixtures/templates/cuda13/)."""
    symbol = row["symbol"]
    if symbol.startswith("cuda."):
        module, name = symbol.split(".", 1)
        return f"ImportError: cannot import name '{name}' from '{module}' (unknown location)"
    if "::" in symbol:
        scope, name = symbol.split("::", 1)
        kind = "class" if scope.startswith("cuda") else "namespace"
        return f'k.cu(5): error: {kind} "{scope}" has no member "{name}"'
    if row.get("kind") == "function":  # gcc names the callee whose parameters changed
        return f"k.c:2:40: error: too few arguments to function '{symbol}'"
    if row.get("kind") == "type":  # the new parameter type the old call does not pass
        return f"k.cpp:2:9: error: could not convert 'dev' from 'int' to '{symbol}'"
    if symbol.islower():  # a class template (texture<...>)
        return f"k.cu(1): error: {symbol} is not a template"
    return f'k.cu(12): error: identifier "{symbol}" is undefined'


def _top(line: str) -> list[str]:
    res = scan_lines([line])
    d = diagnose(load_knowledge(), None, res.symptoms)
    return [h.rule for h in d.hypotheses]


@pytest.mark.parametrize("row", ROWS, ids=[r["symbol"] for r in ROWS])
def test_every_row_names_the_class_from_its_compiler_line(row: dict) -> None:
    line = line_for(row)
    syms = [s for s in scan_lines([line]).symptoms if s.signature == "cuda-api-not-in-toolkit"]
    assert syms, line
    f = derived_fields(syms[0])
    assert f["api_removed_in"] == row["removed_in"] and f["api_known_as"] == row["symbol"]
    assert _top(line)[:1] == [CLASS], line


@pytest.mark.parametrize(
    "line",
    [
        'own.cu(2): error: namespace "cub" has no member "MyReduceOp"',  # the project's own
        'k.cu(5): error: class "cudaDeviceProp" has no member "multiProcessorCount"',  # kept
        "k.cpp:3:5: error: 'Max' was not declared in this scope",  # no namespace: not cub's
        "ModuleNotFoundError: No module named 'cuda'",  # cuda-python not installed at all
        # a Thrust name newer than the toolkit (CCCL 3.1's thrust::default_init, absent from
        # CUDA 13.0.88's CCCL 3.0.1 here): too old a toolkit, no removal. (thrust::distance, the
        # earlier entry, is a table row since tune-bz: CCCL 3.2 stopped including its header)
        'k.cu(7): error: namespace "thrust" has no member "default_init"',
        "k.cpp:9:3: error: no matching function for call to 'cudaMemcpyAsync'",  # unchanged API
    ],
)
def test_a_symbol_in_no_table_names_no_cause(line: str) -> None:
    assert CLASS not in _top(line), line


def test_table_rows_cite_a_declared_source_and_a_later_major() -> None:
    table = load_api_changes()
    assert len(table) == len(ROWS)
    for row in table.values():
        assert int(row.removed_in.split(".")[0]) >= 12, row
        assert (row.kind is not None) == (row.change == "signature"), row
    assert api_change("Max", "cub") is table["cub::Max"]
    assert api_change("Max") is None


def test_a_row_citing_an_undeclared_source_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "sources: {a: {doc: x}}\n"
        "changes:\n"
        "  - {symbol: 'cub::Max', removed_in: '13.0', library: CCCL, change: removed,"
        " replacement: x, source: b}\n"
    )
    with pytest.raises(KnowledgeError, match="unknown source"):
        load_api_changes(p)


# -- families: a name shape a major removed as a whole (CUDA 13's unversioned PFN_cuX aliases) --

HEADER = Path("/usr/local/cuda/include/cudaTypedefs.h")
FAMILY_LINES = [  # the wordings recorded in tests/fixtures/templates/cuda13/pfn-unversioned-*.log
    'k.cu(3): error: identifier "{name}" is undefined',
    "k.cpp:3:1: error: ‘{name}’ does not name a type; did you mean ‘{name}_v12000’?",
]


@pytest.mark.parametrize("name", ["PFN_cuTensorMapEncodeTiled", "PFN_cuTensorMapEncodeIm2col"])
@pytest.mark.parametrize("shape", FAMILY_LINES)
def test_an_unversioned_pfn_alias_names_the_class(name: str, shape: str) -> None:
    line = shape.format(name=name)
    syms = [s for s in scan_lines([line]).symptoms if s.signature == "cuda-api-not-in-toolkit"]
    assert syms, line
    f = derived_fields(syms[0])
    assert f["api_removed_in"] == "13.0" and f["api_known_as"] == name
    assert name in f["api_replacement"]
    assert _top(line)[:1] == [CLASS], line


@pytest.mark.parametrize(
    "name",
    [
        "PFN_cuTensorMapEncodeTiled_v12000",  # versioned: CUDA 13 still declares it
        "PFN_cuTensorMapEncodeTiled_v13000",  # versioned, never declared: not this family
        "PFN_cuMemcpyAsync_v7000_ptsz",  # per-thread-stream form of a versioned name
        "PFN_cuStreamGetCaptureInfo_v2",  # carries a version suffix of its own
        "PFN_myOwnCallback",  # a project's own PFN_ name, not a driver entry point
    ],
)
def test_a_name_outside_the_family_names_no_cause(name: str) -> None:
    assert api_change(name) is None
    assert CLASS not in _top(f'k.cu(3): error: identifier "{name}" is undefined')


def test_a_scoped_name_never_matches_a_family() -> None:
    assert api_change("PFN_cuTensorMapEncodeTiled", "cutlass") is None


@pytest.mark.skipif(not HEADER.is_file(), reason="no CUDA toolkit headers on this host")
def test_the_family_agrees_with_the_installed_cuda13_header() -> None:
    """Every PFN_ typedef the installed header declares is outside the family (it compiles),
    and the unversioned base of each is inside it (CUDA 13 declares no alias)."""
    text = HEADER.read_text()
    major = re.search(r"CUDA_VERSION (\d+)", (HEADER.parent / "cuda.h").read_text())
    if not major or int(major.group(1)) < 13000:
        pytest.skip("the installed toolkit is older than CUDA 13")
    declared = set(re.findall(r"\*\s*(PFN_cu\w+)\)", text))
    assert declared
    for name in declared:
        assert api_change(name) is None, name
        base = re.sub(r"_v\d+(?:_pt(?:ds|sz))?$", "", name)
        if base not in declared:
            assert api_change(base) is not None, base


def test_a_family_citing_an_undeclared_source_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "sources: {a: {doc: x}}\n"
        "changes: []\n"
        "families:\n"
        "  - {family: 'PFN_cu*', pattern: '^PFN_cu\\w+$', removed_in: '13.0', library: x,"
        " change: removed, replacement: x, source: b}\n"
    )
    with pytest.raises(KnowledgeError, match="unknown source"):
        load_api_families(p)


# -- headers: a CCCL header the toolkit's own CCCL deleted on purpose (tune-an, round 41's gci-1) --

HEADERS = yaml.safe_load(TABLE.read_text())["headers"]
HEADER_LINES = [  # gcc/nvcc (recorded: tests/fixtures/templates/cccl/removed-header-*.log), clang, MSVC
    "vendor/config.hpp:88:10: fatal error: {h}: No such file or directory",
    "/src/kernels.cu:12:10: fatal error: '{h}' file not found",
    "C:\\src\\config.hpp(88): fatal error C1083: Cannot open include file: '{h}': No such file or directory",
]


@pytest.mark.parametrize("shape", HEADER_LINES)
@pytest.mark.parametrize("row", HEADERS, ids=[r["header"] for r in HEADERS])
def test_every_removed_header_names_the_class_not_an_incomplete_cccl(row: dict, shape: str) -> None:
    line = shape.format(h=row["header"])
    syms = [s for s in scan_lines([line]).symptoms if s.signature == "missing-header"]
    assert syms, line
    f = derived_fields(syms[0])
    assert f["header_removed_in"] == row["removed_in"] and f["api_known_as"] == row["header"]
    top = _top(line)
    assert top[:1] == [CLASS] and "cccl-complete" not in top, (line, top)


@pytest.mark.parametrize(
    "line",
    [
        # a header CCCL 3.0 still ships, missing from a host compiler's path (the include/cccl move)
        "neg.cpp:1:10: fatal error: cub/iterator/tex_obj_input_iterator.cuh: No such file or directory",
        # a removed header included by an old CUB umbrella header: a mixed (12.6 over 12.8) tree
        "/usr/local/cuda-12.8/include/cub/cub.cuh:108:10: fatal error: "
        "cub/iterator/tex_ref_input_iterator.cuh: No such file or directory",
    ],
)
def test_a_present_header_or_a_mixed_tree_stays_cccl_complete(line: str) -> None:
    assert _top(line)[:1] == ["cccl-complete"], line


def test_removed_header_reads_the_cccl_prefix_and_nothing_else() -> None:
    assert removed_header("cccl/thrust/optional.h") is not None
    assert removed_header("<thrust/optional.h>") is not None
    assert removed_header("thrust/optional.hpp") is None
    assert removed_header("nv/target") is None


CCCL_DIR = Path("/usr/local/cuda/include/cccl")


@pytest.mark.skipif(not CCCL_DIR.is_dir(), reason="no CUDA 13 toolkit CCCL here")
def test_no_listed_header_is_shipped_by_the_installed_cuda13_cccl() -> None:
    """Every row's header is gone from the CCCL 3.0.1 of the CUDA 13.0 here (each row's
    removed_in is 13.0 or earlier), and the headers the rows point to as replacements exist."""
    for row in HEADERS:
        assert not (CCCL_DIR / row["header"]).exists(), row["header"]
    for kept in ("cub/iterator/tex_obj_input_iterator.cuh", "thrust/iterator/counting_iterator.h"):
        assert (CCCL_DIR / kept).exists(), kept


def test_a_header_row_citing_an_undeclared_source_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "sources: {a: {doc: x}}\n"
        "changes: []\n"
        "headers:\n"
        "  - {header: 'cub/x.cuh', removed_in: '13.0', library: x, replacement: x, source: b}\n"
    )
    with pytest.raises(KnowledgeError, match="unknown source"):
        load_removed_headers(p)
