"""knowledge/ and playbooks/ load cleanly; every mistake in them names its file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from remedy.errors import KnowledgeError
from remedy.knowledge.graph import build_graph, downstream, to_dot, to_graphml, to_json
from remedy.knowledge.loader import load_knowledge

from conftest import ROOT


@pytest.fixture
def kcopy(tmp_path: Path) -> tuple[Path, Path]:
    k, p = tmp_path / "knowledge", tmp_path / "playbooks"
    shutil.copytree(ROOT / "knowledge", k)
    shutil.copytree(ROOT / "playbooks", p)
    return k, p


def load(kp: tuple[Path, Path]):
    load_knowledge.cache_clear()
    try:
        return load_knowledge(str(kp[0]), str(kp[1]))
    finally:
        load_knowledge.cache_clear()


def test_shipped_knowledge_loads(kb):
    assert len(kb.rules) >= 15 and len(kb.actions) >= 10
    for cr in kb.rules.values():
        src = cr.rule.source
        assert src.repo or src.doc or src.note, f"rule {cr.rule.id} cites no source"
    consumers = {c.id for c in kb.consumers()}
    assert {"flashinfer-jit", "sglang-jit-kernel", "torch-cpp-extension", "triton"} <= consumers


def test_required_variables_are_known(kb):
    need = {
        "CUDA_HOME",
        "CUDA_PATH",
        "PATH",
        "LD_LIBRARY_PATH",
        "LIBRARY_PATH",
        "CPATH",
        "CC",
        "CXX",
        "MAX_JOBS",
        "FLASHINFER_CUDA_ARCH_LIST",
        "FLASHINFER_NVCC",
        "FLASHINFER_EXTRA_CUDAFLAGS",
        "FLASHINFER_WORKSPACE_BASE",
        "TVM_FFI_CUDA_ARCH_LIST",
        "TORCH_CUDA_ARCH_LIST",
        "TRITON_PTXAS_PATH",
        "TRITON_PTXAS_BLACKWELL_PATH",
    }
    assert need <= set(kb.variables)
    for v in kb.variables.values():
        for edge in v.consumers:
            assert edge.how and edge.source is not None, (v.name, edge.component)


def test_rules_reference_existing_signatures(kb):
    if not kb.signature_ids:
        pytest.skip("signatures.yaml not present")
    for cr in kb.rules.values():
        assert set(cr.rule.predicts) <= kb.signature_ids


@pytest.mark.parametrize(
    ("file", "old", "new", "needle"),
    [
        (
            "knowledge/rules.yaml",
            '    holds: "ptx_isa(tk.cicc_release) <= ptx_isa(tk.ptxas_release)"',
            '    holds: "ptx_isa(tk.cicc_release) <="',
            "bad expression",
        ),
        (
            "knowledge/rules.yaml",
            "    repairs: [pip-install-cccl]",
            "    repairs: [no-such-action]",
            "unknown action 'no-such-action'",
        ),
        (
            "knowledge/rules.yaml",
            "    scope: workload\n    subject: \"'driver'\"",
            "    scope: galaxy\n    subject: \"'driver'\"",
            "scope",
        ),
        ("knowledge/components.yaml", "  - id: ptxas\n", "  - id: ptxas\n    bogus: 1\n", "bogus"),
        ("playbooks/actions.yaml", "    probe: link-probe", "    probe: no-probe", "unknown probe"),
        (
            "knowledge/variables.yaml",
            "  - name: CUDA_PATH\n    kind: dir",
            "  - name: CUDA_PATH\n    kind: [dir",
            "invalid YAML",
        ),
        (
            "knowledge/cuda-releases.yaml",
            '  - {release: "12.1", ptx_isa: "8.1", min_driver: "530.30.02"}',
            '  - {release: "12.1", min_driver: "530.30.02"}',
            "ptx_isa",
        ),
    ],
)
def test_mistakes_name_file_and_line(kcopy, file, old, new, needle):
    path = kcopy[0].parent / file
    text = path.read_text()
    assert old in text, f"fixture drifted: {old!r} not in {file}"
    path.write_text(text.replace(old, new, 1))
    expected_line = text[: text.index(old)].count("\n") + 1
    with pytest.raises(KnowledgeError) as ei:
        load(kcopy)
    msg = str(ei.value)
    assert str(path) in msg and needle in msg
    assert ei.value.line is not None
    assert abs(ei.value.line - expected_line) <= 3, (ei.value.line, expected_line, msg)


def test_duplicate_ids_are_refused(kcopy):
    path = kcopy[0] / "components.yaml"
    path.write_text(path.read_text().replace("  - id: cicc\n", "  - id: nvcc\n", 1))
    with pytest.raises(KnowledgeError, match="duplicate component 'nvcc'"):
        load(kcopy)


def test_knowledge_never_executes_code(kcopy):
    path = kcopy[0] / "components.yaml"
    path.write_text("components: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(KnowledgeError, match="invalid YAML"):
        load(kcopy)


def test_graph_blast_radius_of_cuda_home(kb):
    g = build_graph(kb)
    reach = downstream(g, "env:CUDA_HOME")
    assert {"flashinfer-jit", "sglang-jit-kernel", "torch-cpp-extension"} <= set(reach)
    assert "cuda-graph-capture" in reach and "sglang-server" in reach
    assert "triton" not in [
        m for _, m, d in g.out_edges("env:CUDA_HOME", data=True) if d["type"] == "read_by"
    ]
    assert to_dot(g).startswith("digraph remedy {")
    assert "<graphml" in to_graphml(g)
    assert '"nodes"' in to_json(g)
