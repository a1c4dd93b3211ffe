"""`remedy diagnose --log F [--json]` run the console script's way (remedy.entry ->
remedy.fastcli, typer never loaded) prints, byte for byte, what the full CLI (remedy.cli.main,
typer) prints, with the same exit code: on every corpus log and on hostile inputs (binary,
invalid UTF-8, empty, a 10 MB single line, a missing file, a directory).

Why: the fast path is allowed its own loading (plain caches, no pydantic where it can); the
diagnosis and its rendering must stay the CLI's. The corpus is run in one process per way
(in-process runs, each with its own stdout/stderr buffers), the hostile inputs as real
processes of each way (the early scan, the process's own exit). And the part of the fast
path that is pydantic-free so far: the cached signature catalog and field signals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
CORPUS = Path(__file__).parent / "fixtures" / "corpus"

# argv lists on stdin (JSON); "fast" (remedy.fastcli.serve, as remedy.entry calls it) or
# "full" (remedy.cli.main) in sys.argv[1]; one JSON line of [code, stdout, stderr] per run
_BATCH = """
import io, json, sys
cases, how = json.loads(sys.stdin.read()), sys.argv[1]
real = sys.stdout
if how == "full":
    from remedy.cli import main
else:
    from remedy.fastcli import serve
results = []
for args in cases:
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    sys.argv = ["remedy", *args]
    code = None
    try:
        if how == "full":
            main()
        else:
            assert serve(args), args
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush(); sys.stderr.flush()
    results.append([code, out.getvalue().decode("utf-8", "replace"),
                    err.getvalue().decode("utf-8", "replace")])
sys.stdout = real
print(json.dumps({"results": results, "modules": sorted(sys.modules)}))
"""

# the console script's way, or the full CLI's, as a process of its own
_ONE = """
import sys
how = sys.argv.pop(1)
if how == "full":
    from remedy.cli import main
    main()
else:
    from remedy.entry import script
    script()
"""


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, "XDG_CACHE_HOME": str(cache), "COLUMNS": "100"}


def _batch(cases: list[list[str]], how: str, cache: Path) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", _BATCH, how],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=_env(cache),
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_every_corpus_log_prints_what_the_cli_prints(tmp_path: Path) -> None:
    logs = sorted(str(p) for p in CORPUS.rglob("*.log"))
    assert len(logs) > 1000  # control: the corpus is there
    # Every log as JSON (the whole diagnosis, field by field); the terminal report, which both
    # ways render with the same code from that diagnosis, on every third log (a third of the
    # corpus, every third log of each class folder; all of it doubled this test's minutes).
    json_cases = [["diagnose", "--log", p, "--json"] for p in logs]
    by_class: dict[str, list[str]] = {}
    for p in logs:
        by_class.setdefault(Path(p).parent.name, []).append(p)
    sample = [p for folder in by_class.values() for p in folder[::3]]
    cases = json_cases + [["diagnose", "--log", p] for p in sample]
    cache = tmp_path / "cache"
    _batch(cases[:1], "fast", cache)  # both ways share one cache: built once, before
    with ThreadPoolExecutor(2) as pool:  # the two ways side by side (separate processes)
        fast, full = pool.map(lambda how: _batch(cases, how, cache), ("fast", "full"))
    assert "typer" in full["modules"] and "typer" not in fast["modules"]  # control
    differ = [c for c, a, b in zip(cases, fast["results"], full["results"], strict=True) if a != b]
    assert differ == []
    # control: logs with and without a named cause, each as JSON and as the terminal report
    named = [bool(json.loads(r[1])["hypotheses"]) for r in fast["results"][: len(json_cases)]]
    assert any(named) and not all(named)
    assert all(r[0] == 0 and r[1] for r in fast["results"])
    terminal = {Path(c[2]).parent.name for c in cases[len(json_cases) :]}
    assert terminal == {Path(p).parent.name for p in logs}  # every class folder, both forms


def _hostile(tmp_path: Path) -> list[Path]:
    import random

    rnd = random.Random(40)
    made = {
        "binary.log": bytes(rnd.getrandbits(8) for _ in range(300_000)),
        "latin1.log": b"caf\xe9 error: ptxas fatal \xff\xfe\n" * 2000
        + b"RuntimeError: CUDA error: no kernel image is available\n",
        "empty.log": b"",
        "one-line.log": b"x" * (10 << 20),
        "one-line-error.log": b"y" * (10 << 20)
        + b' error: identifier "__nv_fp8_e4m3" is undefined\n',
    }
    out = []
    for name, body in made.items():
        p = tmp_path / name
        p.write_bytes(body)
        out.append(p)
    (tmp_path / "a-dir").mkdir()
    return [*out, tmp_path / "missing.log", tmp_path / "a-dir"]


@pytest.mark.parametrize("json_", [True, False])
def test_hostile_inputs_print_what_the_cli_prints(tmp_path: Path, json_: bool) -> None:
    cache = tmp_path / "cache"
    codes = set()
    for p in _hostile(tmp_path):
        args = ["diagnose", "--log", str(p), *(["--json"] if json_ else [])]
        got = [
            subprocess.run(
                [sys.executable, "-c", _ONE, how, *args],
                capture_output=True,
                env=_env(cache),
                timeout=300,
            )
            for how in ("fast", "full")
        ]
        fast, full = ((r.returncode, r.stdout, r.stderr) for r in got)
        assert fast == full, args
        codes.add(fast[0])
    assert {0, 2} <= codes  # control: diagnoses and input errors were both compared


_CACHED = """
import json, sys
from remedy.evidence import evcache
from remedy.evidence.catalog import default_catalog
from remedy.evidence.fields import default_signals_path

cat = default_catalog()
rules = json.loads(sys.argv[1])
k = evcache.signals_key(default_signals_path(), rules, cat.ids())
signals = evcache.load_signals(k)
print(json.dumps([len(cat), signals is not None and len(signals), "pydantic" in sys.modules]))
"""


def test_the_cached_catalog_and_signals_are_read_without_pydantic(tmp_path: Path) -> None:
    """The signature catalog and the field signals are plain objects in their caches
    (remedy.evidence.plain): read back, neither pydantic nor the schema classes are imported.
    Control: with no cache, the YAML is validated, through pydantic."""
    env = _env(tmp_path / "cache")
    warm = (
        "import json\n"
        "from remedy.diagnose import default_signals\n"
        "from remedy.knowledge.loader import load_knowledge\n"
        "kb = load_knowledge()\n"
        "assert default_signals(kb)\n"
        "print(json.dumps(list(kb.rules)))\n"
    )
    first = subprocess.run(
        [sys.executable, "-c", warm], capture_output=True, text=True, env=env, timeout=300
    )
    assert first.returncode == 0, first.stderr[-2000:]
    rules = first.stdout.strip()

    def cached(cache: Path) -> list:
        r = subprocess.run(
            [sys.executable, "-c", _CACHED, rules],
            capture_output=True,
            text=True,
            env=_env(cache),
            timeout=300,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout)

    n, signals, pydantic = cached(tmp_path / "cache")
    assert n > 100 and signals and signals > 10 and not pydantic
    assert cached(tmp_path / "empty")[2]  # control: no cache, so the YAML was validated


_MODULES = """
import json, sys
from remedy.entry import main
sys.argv = ["remedy", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
top = ("pydantic", "pydantic_core", "typer")
# the tables a log may need: the provider table, the CUDA API table's parts (read or not)
pv, f = sys.modules.get("remedy.knowledge.providers"), sys.modules.get("remedy.evidence.fields")
tables = [name for name, fn in (("providers", pv and pv._load),
                                ("api-changes", f and f.load_api_changes),
                                ("api-headers", f and f.load_removed_headers))
          if fn and fn.cache_info().currsize]
# remedy/__init__.py puts a stand-in for pydantic.plugin._loader in sys.modules (not pydantic's)
print(json.dumps([sorted(m for m in sys.modules if m.split(".")[0] in top
                         and m != "pydantic.plugin._loader"), tables]), file=sys.stderr)
"""


@pytest.mark.parametrize("json_", [True, False])
def test_the_fast_path_imports_no_pydantic(tmp_path: Path, json_: bool) -> None:
    """`remedy diagnose --log F [--json]` the console script's way, warm caches, on a log with
    a named cause and one without, and on logs that read the provider table (a missing
    library's CUDA majors, whether it is a toolkit library) and the CUDA API table (a removed
    API, a removed header): neither pydantic nor typer is imported (issue 18).
    Controls: those logs did read their table; a diagnosis with facts (--example) imports
    pydantic through the same entry."""
    logs = {
        CORPUS / "arch-specific-target" / "1.log": [],
        next((CORPUS / "unknown").glob("*.log")): [],
        CORPUS / "container-driver-satisfies-image" / "gds-7.log": ["providers"],
        CORPUS / "driver-supports-build-cuda" / "4.log": ["providers"],
        CORPUS / "host-compiler-supported" / "fh-2.log": ["api-changes"],
        CORPUS / "cccl-complete" / "2.log": ["api-headers"],
    }
    cache = tmp_path / "cache"

    def modules(*args: str) -> tuple[list[str], str, list[str]]:
        argv = ["diagnose", *args, *(["--json"] if json_ else [])]
        r = subprocess.run(
            [sys.executable, "-c", _MODULES, *argv],
            capture_output=True,
            text=True,
            env=_env(cache),
            timeout=300,
        )
        mods, tables = json.loads(r.stderr.strip().splitlines()[-1])
        return mods, r.stdout, tables

    for log, needs in logs.items():
        modules("--log", str(log))  # writes the caches
        mods, out, tables = modules("--log", str(log))
        assert out and mods == [], (log, mods)
        assert set(needs) <= set(tables), (log, tables)  # control: the table was read
    mods, out, _ = modules("--example", "seed-sm120-system-cuda128")
    assert out and "pydantic" in mods  # control
