"""Fuzzing every parser of outside input: recorded real files, mutated, plus plain random data.

Targets: the log reader and signature scan (evidence/), the knowledge and playbook loaders
(yamlload, loader, schema, the signature catalog), the unit parser (units/) and every fact
parser (facts/). Each case must end without a crash (only remedy's own errors, with a message,
where the target may refuse input at all), within CASE_SECONDS (a SIGALRM aborts a hang) and
under CASE_PEAK_BYTES of Python allocations (tracemalloc peak, sampled: see TRACE_EVERY).

The number of cases comes from the hypothesis profile (tests/conftest.py): `ci` by default,
REMEDY_FUZZ=long for 10,000+ per target (bench/reliability.py). With REMEDY_FUZZ_COUNTS=FILE
the cases run per target are written to FILE as JSON at the end of the module.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import io
import json
import os
import signal
import tarfile
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_facts_fixtures import PARSERS, fixture_files

from remedy.errors import KnowledgeError, RemedyError
from remedy.evidence.catalog import load_catalog
from remedy.evidence.scan import scan_lines, scan_path
from remedy.facts.collect import collect_facts
from remedy.facts.sections import DEFAULT_TOKEN
from remedy.knowledge import schema
from remedy.knowledge.loader import load_knowledge
from remedy.knowledge.yamlload import load_yaml, validate_entry
from remedy.transport import CommandResult, ScriptedTransport
from remedy.units.host import _parse_records
from remedy.units.parse import SourceFile, UnitFiles, load_unit
from remedy.units.specifiers import expand, unit_name_path_unescape, unit_name_unescape
from remedy.units.syntax import parse_show_environment

from conftest import session_tmp

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
CASE_SECONDS = 5.0  # generous for a loaded 2-core CI box; a hang is minutes, not seconds
CASE_PEAK_BYTES = 256 * 2**20  # inputs are at most ~100 KiB; a parse never needs 256 MiB
# tracemalloc triples the cost of a case, so the peak is measured on every TRACE_EVERY-th case
# of each target (the first included); bench/reliability.py also runs the long profile under
# RLIMIT_AS, so a runaway allocation in any case ends in MemoryError, a failure.
TRACE_EVERY = 8
COUNTS: Counter[str] = Counter()


class Hang(Exception):
    """Raised by SIGALRM inside a case that ran past CASE_SECONDS."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"a case ran past {CASE_SECONDS}s")


def bounded(
    target: str, fn: Callable[[], Any], *, may_refuse: bool = True, count: bool = True
) -> Any:
    """Run one case under the time and memory bounds; remedy's own errors are fine when the
    target may refuse its input, anything else fails the case. `count`: a new input (not a
    second look at the same one)."""
    COUNTS[target] += count
    traced = count and COUNTS[target] % TRACE_EVERY == 1
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    if traced:
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        return fn()
    except RemedyError as exc:
        if not may_refuse:
            raise
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return exc
    finally:
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] if traced else 0
        if traced:
            tracemalloc.stop()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        assert elapsed < CASE_SECONDS, f"{target}: a case took {elapsed:.1f}s"
        assert peak < CASE_PEAK_BYTES, f"{target}: a case allocated {peak >> 20} MiB"


@pytest.fixture(scope="module", autouse=True)
def _write_counts() -> Iterator[None]:
    yield
    out = os.environ.get("REMEDY_FUZZ_COUNTS")
    if out:
        Path(out).write_text(json.dumps(dict(sorted(COUNTS.items())), indent=1) + "\n")


# ---- inputs: real recorded files, mutated ----------------------------------------------------

NASTY = [
    b"\0",
    b"\xff\xfe",
    b"\r\n",
    b"\n\n\n",
    b"%",
    b"%i%n%%%",
    b"\\",
    b'"',
    b"'",
    b"`",
    b"$(",
    b"${X}",
    b"\t",
    b"\x1b[31m",
    "é😀".encode(),
    b"=" * 3,
    b"[Service]\n",
    b"{{ x }}",
    b"{%",
    b"- ",
    b": ",
    b"!!python/object:os.system",
    b"&a *a",
    b"\xe2\x80",
    b"#",
    b";",
    b"A" * 5000,
    DEFAULT_TOKEN.encode() + b" ",
    b"\n" + DEFAULT_TOKEN.encode() + b" end\n",
]


def _read(paths: list[Path]) -> list[bytes]:
    return [p.read_bytes() for p in paths if p.is_file()]


def mutated(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """A seed with up to 8 edits: insert nasty or random bytes, delete, duplicate, splice in a
    piece of another seed, truncate, flip a byte. (Memoized: building a composite strategy
    costs more than a case.)"""
    return _mutated(tuple(seeds))


@functools.cache
def _mutated(seeds: tuple[bytes, ...]) -> st.SearchStrategy[bytes]:

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(seeds)))
        for op in draw(st.lists(st.integers(0, 6), max_size=8)):
            n = len(data)
            i = draw(st.integers(0, n))
            j = draw(st.integers(i, min(n, i + 4096)))
            if op == 0:
                data[i:i] = draw(st.sampled_from(NASTY))
            elif op == 1:
                data[i:i] = draw(st.binary(max_size=40))
            elif op == 2:
                del data[i:j]
            elif op == 3:
                data[i:i] = data[i:j]
            elif op == 4:
                other = draw(st.sampled_from(seeds))
                k = draw(st.integers(0, len(other)))
                data[i:i] = other[k : k + draw(st.integers(0, 2000))]
            elif op == 5:
                del data[i:]
            elif n:
                data[min(i, n - 1)] = draw(st.integers(0, 255))
        return bytes(data)

    return build()


@functools.cache
def _inputs(seeds: tuple[bytes, ...]) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(list(seeds)), mutated(list(seeds)), st.binary(max_size=300))


def inputs(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """Mostly mutated seeds, some plain random bytes."""
    return _inputs(tuple(seeds))


def as_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


LOGS = _read(
    sorted((FIX / "logs").glob("*.log"))
    + sorted((FIX / "corpus").glob("*/*.log"))
    + sorted((FIX / "gpu").glob("*.log"))
)
KNOWLEDGE = {p.name: p for p in sorted((ROOT / "knowledge").glob("*.yaml"))}
PLAYBOOKS = {p.name: p for p in sorted((ROOT / "playbooks").glob("*.yaml"))}
YAML_SEEDS = _read([*KNOWLEDGE.values(), *PLAYBOOKS.values(), FIX / "signature_cases.yaml"])
UNIT_CASES = yaml.safe_load((FIX / "units" / "environment.yaml").read_text())
UNIT_SEEDS = [(FIX / "units" / "sglang-k26.service").read_bytes()] + [
    c["unit"].encode() for c in UNIT_CASES if isinstance(c.get("unit"), str)
]
ENV_FILE_SEEDS = [
    t.encode()
    for c in UNIT_CASES
    for t in (c.get("env_files") or {}).values()
    if isinstance(t, str)
] or [b"A=1\n"]
FACT_FIXTURES: dict[str, list[dict[str, Any]]] = {}
for _f in fixture_files():
    FACT_FIXTURES.setdefault(_f.parent.name, []).append(json.loads(_f.read_text()))
HOSTS = [json.loads(p.read_text()) for p in sorted((FIX / "facts" / "hosts").glob("*.json"))]


# ---- evidence: the log reader and the signature scan -----------------------------------------


# found by the long profile: a path token of a few thousand characters before an include error
# made the signatures' optional leading path groups backtrack from every offset (9,000 chars:
# 6.7 s; 18,000: 24 s); they now start only at a token's start (0.01 s)
LONG_TOKEN = (
    b"Exception: Capture cuda graph failed: ninja exited with status 1\nFAILED: cuda_0.o \n"
    b"/root/venv/lib/python3.12/site-packages/nvidia/cu13/bin\x8a" + b"A" * 18000
    + b"/../include/nv/target:243:10: fatal error: nv/detail/__target_macros: No such fi"
)  # fmt: skip


@given(data=inputs(LOGS))
@example(data=b"\n")
@example(data=LONG_TOKEN)
def test_fuzz_evidence_scan_lines(data: bytes) -> None:
    bounded("evidence.scan_lines", lambda: scan_lines([data], source="fuzz"))


@given(data=inputs(LOGS))
@example(data=b"")
@example(data=b"\0\0\0")
def test_fuzz_evidence_scan_path(data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    fd, name = tempfile.mkstemp(dir=tmp_path_factory.getbasetemp(), suffix=".log")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        bounded("evidence.scan_path", lambda: scan_path(name))
    finally:
        os.unlink(name)


SIGNATURES = (ROOT / "knowledge" / "signatures.yaml").read_bytes()


@given(data=mutated([SIGNATURES]))
def test_fuzz_signature_catalog(data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.getbasetemp() / "signatures.yaml"
    path.write_bytes(data)
    res = bounded("evidence.catalog", lambda: load_catalog(path))
    if isinstance(res, RemedyError):
        assert isinstance(res, KnowledgeError) and str(path) in str(res), res
    else:  # a catalog that loads scans real logs without crashing
        bounded(
            "evidence.catalog",
            lambda: scan_lines([LOGS[0]], catalog=res),
            may_refuse=False,
            count=False,
        )


# ---- knowledge and playbooks -----------------------------------------------------------------

MODELS = {
    "components.yaml": ("components", schema.Component),
    "variables.yaml": ("variables", schema.Variable),
    "cuda-releases.yaml": ("releases", schema.Release),
    "rules.yaml": ("rules", schema.Rule),
    **{f.name: ("rules", schema.Rule) for f in (ROOT / "knowledge").glob("rules-*.yaml")},
    "actions.yaml": ("actions", schema.Action),
    **{
        f.name: ("actions", schema.Action)
        for f in (ROOT / "playbooks").glob("*.yaml")
        if f.name not in ("actions.yaml", "probes.yaml")
    },
    "probes.yaml": ("probes", schema.Probe),
}


def _yaml_and_schema(path: Path) -> None:
    doc = load_yaml(path)
    if isinstance(doc, dict):
        for key, model in {k: m for k, m in MODELS.values()}.items():
            for entry in doc.get(key) or [] if isinstance(doc.get(key), list) else []:
                validate_entry(model, entry, str(path))


@given(data=inputs(YAML_SEEDS))
@example(data=b"!!python/object/apply:os.system ['touch /tmp/remedy-pwned']")
@example(data=b"a: &a [*a, *a]\n")
def test_fuzz_yaml_and_schema(data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz.yaml"
    path.write_bytes(data)
    res = bounded("knowledge.yaml+schema", lambda: _yaml_and_schema(path))
    if isinstance(res, RemedyError):
        assert isinstance(res, KnowledgeError) and str(path) in str(res), res


@pytest.fixture(scope="module")
def kb_copy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("kb")
    k, p = base / "knowledge", base / "playbooks"
    k.mkdir()
    p.mkdir()
    for src, dst in ((KNOWLEDGE, k), (PLAYBOOKS, p)):
        for name, path in src.items():
            (dst / name).write_bytes(path.read_bytes())
    return k, p


_ALL_KB = {
    **{n: ("k", p) for n, p in KNOWLEDGE.items()},
    **{n: ("p", p) for n, p in PLAYBOOKS.items()},
}


@st.composite
def kb_case(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(_ALL_KB)))
    return name, draw(mutated([_ALL_KB[name][1].read_bytes()]))


@given(case=kb_case())
def test_fuzz_knowledge_loader(case: tuple[str, bytes], kb_copy: tuple[Path, Path]) -> None:
    """One file of a copy of knowledge/ + playbooks/ is mutated, the whole base is loaded."""
    name, data = case
    where, orig = _ALL_KB[name]
    target = (kb_copy[0] if where == "k" else kb_copy[1]) / name
    target.write_bytes(data)
    try:
        res = bounded("knowledge.loader", lambda: load_knowledge(str(kb_copy[0]), str(kb_copy[1])))
    finally:
        target.write_bytes(orig.read_bytes())
    if isinstance(res, RemedyError):
        assert isinstance(res, KnowledgeError), res


# ---- systemd units ---------------------------------------------------------------------------


@given(
    frag=inputs(UNIT_SEEDS),
    dropin=st.one_of(st.none(), inputs(UNIT_SEEDS)),
    env=inputs(ENV_FILE_SEEDS),
    optional=st.booleans(),
)
def test_fuzz_unit_parser(frag: bytes, dropin: bytes | None, env: bytes, optional: bool) -> None:
    dash = "-" if optional else ""
    frag = frag + f"\n[Service]\nEnvironmentFile={dash}/etc/fx.env\n".encode()
    files = UnitFiles(
        name="fx.service",
        fragment=SourceFile("/etc/systemd/system/fx.service", frag),
        dropins=[SourceFile("/etc/systemd/system/fx.service.d/z.conf", dropin)] if dropin else [],
        env_files={"/etc/fx.env": env},
    )
    bounded("units.load_unit", lambda: load_unit(files))
    lenient = lambda: load_unit(files, strict_env_files=False)  # noqa: E731
    bounded("units.load_unit", lenient, may_refuse=False, count=False)


def _refused(fn: Callable[[], Any]) -> None:
    """These helpers refuse bad words with ValueError (SpecifierError: systemd drops the word;
    parse_show_environment: not systemctl's output); their callers turn that into diagnostics."""
    try:
        fn()
    except ValueError as exc:
        assert str(exc)


@given(data=inputs(UNIT_SEEDS + [b"Environment=A=1 B=two\\ words", b"%n %i %h/x %%"]))
@example(data=b"=\x80")  # unit_name_unescape() re-encoded a host byte strictly: UnicodeEncodeError
def test_fuzz_unit_words(data: bytes) -> None:
    def run() -> None:
        text = as_text(data)
        _refused(lambda: parse_show_environment(text))
        for unit in ("a@b.service", "x.service", f"a@{text[:200]}.service"):
            _refused(lambda u=unit: expand(data[:2000], u, fragment_path="/etc/systemd/system/x"))
        _refused(lambda: unit_name_unescape(text[:2000]))
        _refused(lambda: unit_name_path_unescape(text[:2000]))

    bounded("units.words", run, may_refuse=False)


def _tar_record() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        body = (FIX / "units" / "sglang-k26.service").read_bytes()
        info = tarfile.TarInfo("etc/systemd/system/x.service")
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
    return b"T " + base64.b64encode(buf.getvalue()) + b"\n"


@given(data=inputs([b"F L2V0Yy94 QT0xCg==\n", b"S 0 QT0x\nB 1\nX L2Jpbi9zaA==\n", _tar_record()]))
@example(data=b"T")  # an empty/garbled tar record escaped as tarfile.ReadError
def test_fuzz_unit_host_records(data: bytes) -> None:
    bounded("units.host_records", lambda: _parse_records(data, ""))


# ---- facts -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(FACT_FIXTURES))
@given(data=st.data())
def test_fuzz_fact_parsers(kind: str, data: st.DataObject) -> None:
    """Every facts parser on mutated recordings of its own kind (each kind its own target, so
    the long profile gives each the full count): facts parsers never raise (bad output becomes
    notes), so no error is allowed at all."""
    fixtures = FACT_FIXTURES[kind]
    fx = dict(data.draw(st.sampled_from(fixtures)))
    seeds = [f["output"].encode("utf-8", "surrogateescape") for f in fixtures]
    fx["output"] = as_text(data.draw(inputs(seeds)))
    bounded(f"facts.{kind}", lambda: PARSERS[kind](fx), may_refuse=False)


@st.composite
def host_case(draw: st.DrawFn) -> tuple[dict[str, Any], list[bytes], list[bytes]]:
    fx = draw(st.sampled_from(HOSTS))
    outs = [r["output"].encode() for r in fx["rounds"]]
    replies = [draw(mutated([o])) for o in outs]
    extra = draw(st.lists(mutated(outs), min_size=3, max_size=3))
    return fx, replies, extra


def _nul_in_a_path() -> tuple[dict[str, Any], list[bytes], list[bytes]]:
    fx = HOSTS[0]
    outs = [r["output"].encode() for r in fx["rounds"]]
    outs[-1] = outs[-1].replace(b"py.real /usr", b"py.real /u\x00sr")
    # a CUDA_HOME round 1 did not probe: the follow-up script runs, with what was seen
    outs[0] = outs[0].replace(b"SHELL=/bin/bash\x00", b"SHELL=/bin/bash\x00CUDA_HOME=/opt/c\x00")
    return fx, outs, [b""] * 3


@given(case=host_case())
@example(case=_nul_in_a_path())  # a NUL in a reply reached quote() in the follow-up: ValueError
def test_fuzz_collect_facts(case: tuple[dict[str, Any], list[bytes], list[bytes]]) -> None:
    """A whole collection replayed with mutated replies (a reply to an unknown follow-up script
    is a mutated reply of another round): collect_facts degrades to notes."""
    fx, replies, extra = case
    spare = iter(extra * 4)

    def handler(call: Any) -> CommandResult:
        for r, out in zip(fx["rounds"], replies, strict=True):
            if r["command"] == call.script:
                return CommandResult(r["exit_status"], out, b"", 0.0)
        return CommandResult(0, next(spare, b""), b"", 0.0)

    t = ScriptedTransport(handler, host=fx["host"])
    bounded(
        "facts.collect",
        lambda: asyncio.run(
            collect_facts(t, services=fx.get("services"), timeout=30, token=DEFAULT_TOKEN)
        ),
    )


# ---- the command line ------------------------------------------------------------------------

# Options that would reach a host or this machine's units (SSH, systemd) stay out; every other
# option of every read-only command is drawn, for any command, with valid, hostile and missing
# values. A short-option cluster (`-Hx`) or a long one from random text could name a forbidden
# option, so random tokens never start with "-".
CLI_COMMANDS = ["examples", "plan", "diagnose", "impact", "graph", "schema", "export", "check"]
CLI_FLAGS = ["--json", "--markdown", "--explain", "--fail-on-breakage", "--help", "-h", "--"]
CLI_FILE_OPTIONS = ["--facts", "-f", "--log", "-l"]
CLI_VALUE_OPTIONS = [
    "--example", "-e", "--format", "--set", "--unset", "--unit", "--service", "--launch",
    "--verify", "--hosts", "--out", "-o",
]  # fmt: skip
CLI_EXAMPLES = ["seed-sm120-pip-cu13", "seed-sm120-system-cuda128", "nope", ""]


@functools.cache
def _cli_files() -> dict[str, Path]:
    """Inputs on disk: real ones, a saved plan, a mutated copy of each, odd paths."""
    d = session_tmp("remedy-fuzz-cli-")  # one set for the session, removed with it
    real = {
        "facts": ROOT / "src" / "remedy" / "examples" / "seed-sm120-pip-cu13" / "facts.yaml",
        "log": FIX / "logs" / "lab_f2_cccl_ctk_mismatch.log",
    }
    from remedy.cli import main

    with pytest.raises(SystemExit):
        main(["plan", "--example", "seed-sm120-pip-cu13", "--out", str(d / "plan.json")])
    real["plan"] = d / "plan.json"
    return real | {"dir": d}


@st.composite
def cli_argv(draw: st.DrawFn) -> list[str]:
    files = _cli_files()
    out_dir = files["dir"]
    junk = st.text(max_size=30).map(lambda s: "x" + s[1:] if s.startswith("-") else s)

    def path() -> str:
        k = draw(st.sampled_from(["facts", "log", "plan", "mutant", "odd"]))
        if k == "mutant":
            src = files[draw(st.sampled_from(["facts", "log", "plan"]))].read_bytes()
            p = out_dir / f"m{draw(st.integers(0, 7))}"
            p.write_bytes(draw(mutated([src])))
            return str(p)
        if k == "odd":
            return draw(
                st.sampled_from(
                    [
                        "/dev/null",
                        "/dev/zero",
                        "/nonexistent/x",
                        str(out_dir),
                        "/proc/self/status",
                        "",
                    ]
                )
            )
        return str(files[k])

    argv = [draw(st.sampled_from(CLI_COMMANDS + ["", "nope"]))]
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            argv.append(draw(st.sampled_from(CLI_FLAGS)))
        elif kind == 1:
            argv += [draw(st.sampled_from(CLI_FILE_OPTIONS)), path()]
        elif kind == 2:
            opt = draw(st.sampled_from(CLI_VALUE_OPTIONS))
            if opt in ("--out", "-o"):
                val = draw(st.sampled_from([str(out_dir / "o.out"), str(out_dir), "/dev/full"]))
            elif opt in ("--example", "-e"):
                val = draw(st.sampled_from(CLI_EXAMPLES))
            elif opt == "--set":
                var = draw(st.sampled_from(["CUDA_HOME", "PATH", "MAX_JOBS", "X"]))
                val = f"{var}={draw(junk)}"
            else:
                val = draw(junk)
            argv += [opt, val] if draw(st.booleans()) or not argv else [opt]
        elif kind == 3:
            argv.append(path())
        else:
            argv.append(draw(junk))
    return argv


@settings(max_examples=max(100, settings.default.max_examples // 5))
@given(argv=cli_argv())
@example(argv=["plan", "--bogus"])  # typer's vendored click: main imported click, a traceback
@example(argv=["graph", "--out", "/dev/full"])
@example(argv=["plan", "--facts", "/dev/zero"])  # read for ever (the long profile found it)
@example(argv=["export", "/dev/zero"])
def test_fuzz_cli_arguments(argv: list[str]) -> None:
    """Random command lines of the read-only commands (in-process `remedy.cli.main`): every
    one ends with a documented exit code and, when it refuses, a message; never a traceback
    or an internal error (70)."""
    from remedy.cli import main

    out, err = io.StringIO(), io.StringIO()
    work = _cli_files()["dir"]  # made (a real plan) before the clock starts

    def call() -> int:
        # in the session's own dir: an --out whose value is random text writes there, not
        # into the checkout (files named `--hosts` and `-o` were committed that way)
        here = os.getcwd()
        os.chdir(work)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main(argv)
                except SystemExit as exc:
                    c = exc.code
                    return c if isinstance(c, int) else (0 if c is None else 2)
            return 0
        finally:
            os.chdir(here)

    code = bounded("cli.argv", call, may_refuse=False)
    text = err.getvalue()
    assert code in (0, 1, 2, 3, 10), (argv, code, text[-1500:])
    assert "Traceback" not in text, (argv, text[-1500:])
    if code == 2:
        assert text.strip(), (argv, "exit 2 without a message")
