"""The provider table on real missing-file errors (tests/fixtures/logs/verdict/missing-files,
recorded with a real nvcc/g++/ld/dynamic loader: RECORDED.md), the generator's zip reader, and
the plan that one rule + the table give for a log (table: fixtures/providers/cases.yaml)."""

from __future__ import annotations

import http.server
import os
import re
import sys
import threading
import zipfile
from pathlib import Path

import pytest
import yaml

from remedy.inputs import scan_logs
from remedy.knowledge import providers as pv
from remedy.model import Facts
from remedy.planner.plan import make_plan
from remedy.planner.verdict import failed_operation, missing_files

from conftest import FIXTURES, base_facts, patched

ROOT = Path(__file__).resolve().parents[1]
LOGS = FIXTURES / "logs" / "verdict"
CASES = yaml.safe_load((FIXTURES / "providers" / "cases.yaml").read_text())["cases"]
WHEELS = Path(os.environ.get("SBX_CACHE", ROOT / "sandbox" / "cache")) / "wheels"


def _py(line: str) -> dict:
    """A Python env of a toolkit line, as facts have it (torch's CUDA, cuda-toolkit's pin)."""
    table = pv.load_table()
    assert table is not None
    return {
        "path": "/opt/venv",
        "python": "3.11",
        "torch_cuda": line,
        "packages": {"torch": "2.14.1", "cuda-toolkit": table.pip[line].cuda_toolkit},
    }


@pytest.mark.parametrize("case", CASES, ids=[f"{c['log']}:{c['file']}" for c in CASES])
def test_real_missing_file_error_is_looked_up(case):
    symptoms, _, _ = scan_logs([str(LOGS / case["log"])])
    needed = missing_files(symptoms)
    assert case["file"] in needed, (needed, [s.signature for s in symptoms])
    provs = pv.providers(_py(case["line"]), case["file"])
    pips = [p.pip for p in provs if p.pip]
    apts = [p.apt for p in provs if p.apt]
    assert pips[:1] == ([case["pip"]] if case.get("pip") else []), provs
    for a in case.get("apt", []):
        assert a in apts, provs
    if case.get("pip"):
        # the version is the one the line's cuda-toolkit pins: every entry agrees with it
        want = pv.provider_version(_py(case["line"]), case["pip"])
        assert want and all(p.version == want for p in provs if p.pip == case["pip"])


def test_versions_are_cuda_toolkit_pins_of_torch():
    """torch 2.14.1+cu130 pins cuda-toolkit==13.0.3: the table's 13.0 versions must be that
    wheel's Requires-Dist pins (read here from the real wheel, independently of the script)."""
    whl = sorted(WHEELS.glob("cuda_toolkit-13.0.3*.whl"))
    if not whl:
        pytest.skip(f"no cuda_toolkit-13.0.3 wheel in {WHEELS}")
    with zipfile.ZipFile(whl[0]) as z:
        meta = next(z.read(n).decode() for n in z.namelist() if n.endswith("METADATA"))
    pins = dict(re.findall(r"Requires-Dist: ([\w.-]+)==([\d.]+?)\.\*;[^\n]*extra == 'all'", meta))
    table = pv.load_table()
    assert table is not None and table.pip["13.0"].pins == pins
    py = _py("13.0")
    for name in ("nvidia-cublas", "nvidia-curand", "nvidia-cusparse", "nvidia-cuda-nvrtc"):
        assert pv.provider_version(py, name) == pins[name]


def test_every_file_of_a_local_wheel_is_in_the_table():
    """The table is the wheels' own file lists: each header and library of the cached
    nvidia-curand wheel maps back to it."""
    whl = sorted(WHEELS.glob("nvidia_curand-10.4.0.35-*.whl"))
    if not whl:
        pytest.skip(f"no nvidia-curand wheel in {WHEELS}")
    with zipfile.ZipFile(whl[0]) as z:
        names = z.namelist()
    py = _py("13.0")
    heads = [n.split("/include/", 1)[1] for n in names if "/include/" in n]
    libs = [n.rsplit("/", 1)[1] for n in names if "/lib/" in n and ".so" in n]
    assert heads and libs
    for f in heads + libs:
        assert "nvidia-curand" in [p.pip for p in pv.providers(py, f)], f


def test_generator_reads_a_zip_central_directory_over_http_ranges():
    """scripts/gen_provider_table.py reads wheels' file lists with Range requests only: the
    names it gets equal zipfile's for the same wheel, served here over HTTP."""
    whl = sorted(WHEELS.glob("nvidia_cuda_nvrtc-13.0.88-*.whl"))
    if not whl:
        pytest.skip(f"no nvidia-cuda-nvrtc wheel in {WHEELS}")
    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_provider_table as gen

    handler = type(
        "H",
        (http.server.SimpleHTTPRequestHandler,),
        {"log_message": lambda *a: None},
    )
    ranged = []

    class RangeHandler(handler):  # type: ignore[misc,valid-type]
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(whl[0].parent), **k)

        def do_GET(self):  # noqa: N802 - http.server's name
            rng = self.headers.get("Range", "")
            ranged.append(rng)
            data = whl[0].read_bytes()
            m = re.fullmatch(r"bytes=(-?\d+)-?(\d*)", rng)
            assert m, f"a full download was asked for: {rng!r}"
            if m.group(1).startswith("-"):
                part = data[int(m.group(1)) :]
            else:
                part = data[int(m.group(1)) : int(m.group(2)) + 1]
            self.send_response(206)
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.write(part)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        names = gen.remote_zip_names(f"http://127.0.0.1:{srv.server_port}/{whl[0].name}")
    finally:
        srv.shutdown()
    with zipfile.ZipFile(whl[0]) as z:
        assert names == z.namelist()
    assert len(ranged) == 2


def test_plan_installs_the_wheel_at_the_pin_and_says_which_line_it_addresses(kb):
    """The real torch extension failure (nvml.h, included by torch's c10/cuda/driver_api.h):
    one step, the wheel at cuda-toolkit 13.0.3's pin, found by its effect, addressing the
    fatal line; the failed operation is that build with that header."""
    facts = patched(base_facts("pip"), {"pythons.0.packages.cuda-toolkit": "13.0.3.0"})
    symptoms, _, wrappers = scan_logs([str(LOGS / "torch-ext-nvml-missing.log")])
    plan = make_plan(kb, Facts.model_validate(facts), symptoms, wrappers=wrappers)
    step = next(s for s in plan.steps if s.action == "pip-install-provider")
    assert step.params["package"] == "nvidia-nvml-dev"
    assert (
        "nvidia-nvml-dev==" + pv.provider_version(facts["pythons"][0], "nvidia-nvml-dev")
        in (step.commands[0])
    )
    assert step.found_by_effect
    assert not any("pip-install-provider" in r.rule.repairs for r in kb.rules.values())
    assert any("fatal error: nvml.h" in a for a in step.addresses)
    assert not any("nvml.h" in u for u in plan.unexplained)
    op = plan.failed_operation
    assert (
        op and op.probe == "torch-ext-build" and op.params["headers"] == ["c10/cuda/driver_api.h"]
    )


def test_without_effect_search_that_plan_does_not_exist(kb, monkeypatch):
    """The action is no rule's listed repair: only its declared effect finds it."""
    from remedy.planner.provider import FactsProvider

    monkeypatch.setattr(FactsProvider, "by_effect", lambda self, state, v, **kw: iter(()))
    facts = patched(base_facts("pip"), {"workload.missing_files": ["nvml.h"]})
    plan = make_plan(kb, Facts.model_validate(facts))
    assert not any(s.action == "pip-install-provider" for s in plan.steps)
    assert any(u.startswith("needed-files-provided") for u in plan.unresolved)


def test_a_file_no_package_ships_stays_unexplained(kb):
    """cutlass/cutlass.h: the table knows no package for it, so no finding explains the
    line, the plan says so at its top and its status is not ok."""
    log = LOGS / "torch-ext-cutlass-missing.log"
    symptoms, _, wrappers = scan_logs([str(log)])
    facts = Facts.model_validate(base_facts("h200"))
    plan = make_plan(kb, facts, symptoms, wrappers=wrappers)
    assert plan.unexplained and "cutlass/cutlass.h" in plan.unexplained[0]
    assert plan.status == "unexplained"
    assert failed_operation(symptoms) is not None


def test_names_from_a_log_are_never_taken_as_paths():
    assert pv.safe_name("../../etc/passwd") is None
    assert pv.safe_name("/etc/shadow") is None
    assert pv.safe_name("x.h; rm -rf /") is None
    assert pv.missing_file("lib", "cublas") == "libcublas.so"
