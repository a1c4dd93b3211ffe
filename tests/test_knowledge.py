"""knowledge/ and playbooks/ load cleanly; every mistake in them names its file and line."""

from __future__ import annotations

import os
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
            '    holds: "not missing_libs(tk, c.link.dirs, c.link.libs, c.link.any_dir)"',
            '    holds: "not missing_libs(tk, c.link.dirs, c.link.libs,"',
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
            '    scope: workload\n    subject: "py.path',
            '    scope: galaxy\n    subject: "py.path',
            "scope",
        ),
        (  # a typo in a function name: it used to load and silently never fire
            "knowledge/rules.yaml",
            '    holds: "not missing_libs(tk, c.link.dirs, c.link.libs, c.link.any_dir)"',
            '    holds: "not missing_libz(tk, c.link.dirs, c.link.libs, c.link.any_dir)"',
            "unknown name missing_libz",
        ),
        (  # a typo in a context variable, inside a message template
            "knowledge/rules.yaml",
            '    message: "{{ c.name }} links {% for d in c.link.dirs %}',
            '    message: "{{ cc.name }} links {% for d in c.link.dirs %}',
            "unknown name cc",
        ),
        (  # a version pair with a relation the code does not have
            "knowledge/version-pairs.yaml",
            "    agree: same-major",
            "    agree: same-minor",
            "agree",
        ),
        (  # a version pair whose fact expression does not compile
            "knowledge/version-pairs.yaml",
            "    b: {fact: py.torch_cuda, kind: cuda, log: [torch-cuda], part: torch}\n    agree: same-major",
            "    b: {fact: py.torch_cuda(, kind: cuda, log: [torch-cuda], part: torch}\n    agree: same-major",
            "bad expression",
        ),
        (  # a version pair naming a log key no log field gives
            "knowledge/version-pairs.yaml",
            "log: [torch-cuda], part: torch}\n    agree: same-major",
            "log: [torch-cudaa], part: torch}\n    agree: same-major",
            "log key 'torch-cudaa'",
        ),
        (  # an action's bind may use its own parameters, not a made-up one
            "playbooks/actions.yaml",
            '      prefix: "[tk.prefix]"',
            '      prefix: "[tk.prefix, prefixx]"',
            "unknown name prefixx",
        ),
        (
            "playbooks/probes.yaml",
            "  - id: launch-probe\n",
            "  - id: orphan-probe\n    title: t\n    level: compile\n    seconds: 1\n"
            "  - id: launch-probe\n",
            "probe 'orphan-probe' is used by no action",
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


def test_a_rule_without_a_source_is_refused_at_its_line(kcopy):
    rules = kcopy[0] / "rules.yaml"
    text = rules.read_text()
    start = text.index("  - id: toolkit-links-cudart")
    src = text.index("    source:", start)
    rules.write_text(text[:src] + text[text.index("\n", src) + 1 :])
    with pytest.raises(KnowledgeError, match="source: Field required") as ei:
        load(kcopy)
    assert ei.value.file == str(rules) and ei.value.line == text[:start].count("\n") + 1


def test_remedy_check_fails_with_file_and_line(kcopy):
    """`remedy check` on a knowledge directory with a typo: exit 2, file:line, no traceback."""
    import subprocess
    import sys

    rules = kcopy[0] / "rules.yaml"
    text = rules.read_text()
    rules.write_text(text.replace("not missing_libs(tk,", "not missing_libz(tk,", 1))
    line = text[: text.index("not missing_libs(tk,")].count("\n") + 1
    env = {
        **os.environ,
        "REMEDY_KNOWLEDGE_DIR": str(kcopy[0]),
        "REMEDY_PLAYBOOKS_DIR": str(kcopy[1]),
    }
    p = subprocess.run(
        [sys.executable, "-m", "remedy", "check"], capture_output=True, text=True, env=env
    )
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert f"{rules}:{line}" in p.stderr and "unknown name missing_libz" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    env.pop("REMEDY_KNOWLEDGE_DIR")
    ok = subprocess.run(
        [sys.executable, "-m", "remedy", "check"], capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0 and "OK" in ok.stdout, ok.stderr


def test_context_names_are_what_evaluation_provides(kb):
    """The loader's list of context names (CONTEXT_NAMES) is exactly what evaluate builds: a
    name added there without the loader knowing it would fail every rule that uses it."""
    from remedy.evaluate import base_context, consumer_context
    from remedy.knowledge.functions import CONTEXT_NAMES

    base = base_context(kb, {})
    ctx = consumer_context(kb, base, "flashinfer-jit", {})
    assert set(ctx) == CONTEXT_NAMES | kb.functions.names()


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


def test_an_evaluation_error_is_shown_in_plan_and_diagnose(kcopy):
    """A rule that loads but raises when evaluated (here: Version + int) is reported in the
    plan's and the diagnosis's JSON and terminal output, not silently dropped."""
    import json
    import subprocess
    import sys

    rules = kcopy[0] / "rules.yaml"
    old = 'holds: "not missing_libs(tk, c.link.dirs, c.link.libs, c.link.any_dir)"'
    rules.write_text(
        rules.read_text().replace(old, old[:-1] + ' + 1"', 1)  # loads: the names all exist
    )
    env = {
        **os.environ,
        "REMEDY_KNOWLEDGE_DIR": str(kcopy[0]),
        "REMEDY_PLAYBOOKS_DIR": str(kcopy[1]),
    }

    def remedy(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "remedy", *args], capture_output=True, text=True, env=env
        )

    ex = ("--example", "seed-sm120-system-cuda128")
    for cmd in ("plan", "diagnose"):
        out = json.loads(remedy(cmd, *ex, "--json").stdout)
        errs = out["evaluation_errors"]
        assert any(e.startswith("rule toolkit-links-cudart: TypeError") for e in errs), errs
        text = remedy(cmd, *ex)
        assert "Knowledge errors" in text.stdout and "toolkit-links-cudart" in text.stdout
    env.pop("REMEDY_KNOWLEDGE_DIR")
    assert json.loads(remedy("plan", *ex, "--json").stdout)["evaluation_errors"] == []
