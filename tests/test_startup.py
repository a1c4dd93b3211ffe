"""Start-up stays cheap (issue 18): what a command does not use is not imported, and what a
previous run computed from remedy's own files is reused, not recomputed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from redact_reference import reference_redact

from remedy.knowledge import expr


@pytest.fixture
def fresh_code_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The template/names cache of a new process, in a private cache dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(expr, "_CODE", {})
    monkeypatch.setattr(expr, "_CODE_LOADED", False)
    monkeypatch.setattr(expr, "_CODE_DIRTY", False)
    return tmp_path / "cache"


def test_expression_names_are_read_back_from_the_cache(
    fresh_code_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader checks every expression's free names; a later run reads them from the cache
    instead of parsing ~400 expressions again (and does not rewrite the cache each run)."""
    src = "toolkit.version >= min_version and q(x)"
    first = expr.free_names(src, template=False)
    assert first == {"toolkit", "min_version", "q", "x"}
    expr.save_code_cache()
    assert Path(expr._cache_path()).is_file()

    # a new process: nothing in memory, and parsing is not allowed
    monkeypatch.setattr(expr, "_CODE", {})
    monkeypatch.setattr(expr, "_CODE_LOADED", False)

    def no_parse(*_a: object, **_k: object) -> None:
        raise AssertionError("parsed again: the names were not taken from the cache")

    monkeypatch.setattr(expr, "_undeclared", no_parse)
    monkeypatch.setattr(expr, "_expression_node", no_parse)
    assert expr.free_names(src, template=False) == first
    assert not expr._CODE_DIRTY, "a cache read back whole must not be rewritten"


# --------------------------------------------------------------------------------------------
# what a command imports
# --------------------------------------------------------------------------------------------

_MODULES_AFTER = """
import contextlib, io, json, sys
sys.argv = ["remedy", *json.loads(sys.argv[1])]
out = io.StringIO()
code = 0
with contextlib.redirect_stdout(out):
    try:
        from remedy.entry import main
        main()
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "stdout": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def modules_after(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, set[str]]:
    """(exit code, stdout, modules loaded) of one `remedy ARGS` in a fresh interpreter."""
    r = subprocess.run(
        [sys.executable, "-c", _MODULES_AFTER, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.splitlines()[-1])
    return data["code"], data["stdout"], set(data["modules"])


# remedy/__init__.py's stand-in for pydantic's plugin loader (see the end of this file) is
# registered under pydantic's name without importing pydantic
_STAND_IN = "pydantic.plugin._loader"


def loaded(modules: set[str], *packages: str) -> set[str]:
    return {m for m in modules if (m.split(".")[0] in packages or m in packages) and m != _STAND_IN}


def test_importing_the_cli_loads_no_heavy_library() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, remedy.cli; print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    mods = set(json.loads(r.stdout))
    assert "remedy.cli" in mods  # control: the import happened
    heavy = ("pydantic", "jinja2", "yaml", "rich", "networkx", "asyncssh", "asyncio")
    assert loaded(mods, *heavy) == set()


def test_plan_as_json_loads_no_terminal_ssh_or_graph_code(tmp_path: Path) -> None:
    """`plan --example --json` prints JSON: no rich, no SSH/asyncio transport, no systemd unit
    reader or impact preview, no graph library."""
    code, out, mods = modules_after(
        "plan",
        "--example",
        "seed-sm120-pip-cu13",
        "--json",
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert code == 0 and json.loads(out)["steps"]  # control: a real plan was made
    assert {"pydantic", "jinja2", "remedy.planner.plan"} <= mods  # and it did the work
    assert loaded(mods, "rich", "asyncssh", "asyncio", "networkx", "cryptography") == set()
    assert "importlib.metadata" not in mods  # pydantic's plugin loader, plugins disabled
    assert {
        "remedy.transport.local",
        "remedy.transport.ssh",
        "remedy.units.host",
        "remedy.units.impact",
        "remedy.units.parse",
    }.isdisjoint(mods)


# --------------------------------------------------------------------------------------------
# --help without typer (remedy.helpcache)
# --------------------------------------------------------------------------------------------

_HELP_RUN = """
import json, sys
args, how = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["remedy", *args]
code = 0
try:
    if how == "typer":  # typer itself: the whole app built, no record involved
        from typer.main import get_command
        from remedy.cli import app
        get_command(app).main(args=args)
    else:  # the console script's path
        from remedy.entry import main
        main()
except SystemExit as e:
    code = e.code
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def help_run(args: list[str], how: str, cache: Path, **env: str) -> tuple[bytes, int, set[str]]:
    r = subprocess.run(
        [sys.executable, "-c", _HELP_RUN, json.dumps(args), how],
        capture_output=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
    )
    data = json.loads(r.stderr.decode().strip().splitlines()[-1])
    return r.stdout, data["code"], set(data["modules"])


def _help_paths() -> list[list[str]]:
    """The top level, every command, and every command of a command group (`knowledge`)."""
    from typer.main import get_command

    from remedy.cli import app

    group = get_command(app)
    paths: list[list[str]] = [[]]
    for name, cmd in group.commands.items():
        paths.append([name])
        paths += [[name, sub] for sub in getattr(cmd, "commands", {})]
    return paths


def test_every_help_page_replayed_is_the_one_typer_prints(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    paths = _help_paths()
    assert ["plan"] in paths and any(len(p) == 2 for p in paths)  # control: the walk is real
    for path in paths:
        args = [*path, "--help"]
        ref, code, _ = help_run(args, "typer", cache)
        assert code == 0 and ref.startswith(b"Usage: remedy"), (path, ref[:200])
        first, code1, mods1 = help_run(args, "entry", cache)
        second, code2, mods2 = help_run(args, "entry", cache)
        assert first == ref and code1 == 0 and "typer" in mods1, path
        assert second == ref and code2 == 0, path
        assert loaded(mods2, "typer", "click", "rich", "pydantic", "jinja2", "yaml") == set(), (
            path,
            "help was not replayed",
        )


def test_help_is_recorded_per_terminal_width(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    narrow, _, _ = help_run(["plan", "--help"], "typer", cache, COLUMNS="60")
    wide, _, _ = help_run(["plan", "--help"], "typer", cache, COLUMNS="200")
    assert narrow != wide  # control: the width matters
    for cols, ref in (("60", narrow), ("200", wide), ("60", narrow)):
        help_run(["plan", "--help"], "entry", cache, COLUMNS=cols)
        out, _, mods = help_run(["plan", "--help"], "entry", cache, COLUMNS=cols)
        assert out == ref and "typer" not in mods, cols


def test_a_failed_help_request_is_not_recorded(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for _ in range(2):
        out, code, mods = help_run(["no-such-command", "--help"], "entry", cache)
        assert code == 2 and "typer" in mods and out == b""


def test_a_record_is_dropped_when_a_source_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from remedy import helpcache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "cli.py"
    src.write_text("HELP = 'old'\n")
    argv = ["plan", "--help"]
    key = helpcache._key(argv)
    assert key is not None
    monkeypatch.setattr(helpcache, "_remedy_files", lambda: (str(src),))
    helpcache._store(key, b"Usage: recorded\n")
    assert helpcache.serve(argv)
    assert capfdbinary.readouterr().out == b"Usage: recorded\n"
    src.write_text("HELP = 'new'\n")
    assert not helpcache.serve(argv)
    assert capfdbinary.readouterr().out == b""


def test_a_record_in_a_directory_others_can_write_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from remedy import helpcache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "cli.py"
    src.write_text("x = 1\n")
    argv = ["--help"]
    monkeypatch.setattr(helpcache, "_remedy_files", lambda: (str(src),))
    helpcache._store(helpcache._key(argv) or "", b"Usage: planted\n")
    assert helpcache.serve(argv)  # control: ours, private: used
    capfdbinary.readouterr()
    Path(helpcache._path()).parent.chmod(0o777)
    assert not helpcache.serve(argv)
    assert capfdbinary.readouterr().out == b""


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--help"], True),
        (["plan", "--help"], True),
        (["knowledge", "rules", "--help"], True),
        ([], False),
        (["plan"], False),
        (["plan", "--example", "x", "--help"], False),
        (["--help", "plan"], False),
        (["-x", "--help"], False),
        (["../x", "--help"], False),
    ],
)
def test_only_a_bare_help_request_is_replayed(argv: list[str], expected: bool) -> None:
    from remedy.helpcache import help_only

    assert help_only(argv) is expected


# --------------------------------------------------------------------------------------------
# only the named command is built (remedy.clicommand)
# --------------------------------------------------------------------------------------------


def test_only_the_named_command_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.main import get_command

    from remedy.cli import app
    from remedy.clicommand import command_for

    full = get_command(app)
    assert len(full.commands) > 10  # control
    for name, sub in full.commands.items():
        one = command_for(app, [name, "--json"])
        assert list(one.commands) == [name]
        assert [p.opts for p in one.commands[name].params] == [p.opts for p in sub.params]
        assert [p.opts for p in one.params] == [p.opts for p in full.params]  # group options
    for argv in ([], ["--version"], ["nosuch"], ["pla"], ["--ssh-config", "x", "plan"]):
        assert list(command_for(app, argv).commands) == list(full.commands), argv
    monkeypatch.setenv("_REMEDY_COMPLETE", "bash_complete")
    assert list(command_for(app, ["plan"]).commands) == list(full.commands)


def test_errors_name_the_same_commands_as_before() -> None:
    """An unknown or misspelt command still gets click's message from the whole group."""
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "pla"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "Did you mean 'plan'?" in r.stderr


def test_facts_yaml_is_read_with_libyaml_and_gives_the_same_facts(tmp_path: Path) -> None:
    """Facts files and example metadata are parsed by libyaml's parser (a 2 KB facts file
    took ~7 ms in pure Python); the facts are those the pure-Python safe loader gives."""
    import yaml

    from remedy.inputs import EXAMPLES_DIR, load_facts_file
    from remedy.model import Facts
    from remedy.redact import redact_facts

    assert hasattr(yaml, "CSafeLoader")  # control: the fast parser is installed here
    for facts in sorted(EXAMPLES_DIR.glob("*/facts.yaml")):
        text = facts.read_text()
        pure = Facts.model_validate(yaml.load(text, Loader=yaml.SafeLoader))  # noqa: S506
        assert load_facts_file(facts).model_dump() == redact_facts(pure).model_dump(), facts


# --------------------------------------------------------------------------------------------
# the signature catalog: checked once per file, patterns compiled when used
# --------------------------------------------------------------------------------------------


def _fresh_catalog(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Any:
    from remedy.evidence import catalog
    from remedy.knowledge import yamlload

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(yamlload, "_PARSED", None)
    return catalog.load_catalog()


def test_a_catalog_checked_before_loads_lazily_and_matches_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remedy.evidence.matcher import LineMatcher

    checked = _fresh_catalog(monkeypatch, tmp_path / "cache")
    assert all(s._rx is not None for s in checked.signatures)  # control: compiled by the check
    lazy = _fresh_catalog(monkeypatch, tmp_path / "cache")
    assert all(s._rx is None for s in lazy.signatures)  # nothing compiled up front
    assert [s.as_dict() for s in lazy.signatures] == [s.as_dict() for s in checked.signatures]
    assert [s.near_needles for s in lazy.signatures] == [s.near_needles for s in checked.signatures]
    lines = [ex for s in checked.signatures for ex in s.examples]
    a, b = LineMatcher(checked), LineMatcher(lazy)
    matched = 0
    for n, text in enumerate(lines):
        got_a = [(m.sig.id, m.start, m.end, m.fields) for m in a.match(n, text, None)]
        got_b = [(m.sig.id, m.start, m.end, m.fields) for m in b.match(n, text, None)]
        assert got_a == got_b, text
        matched += bool(got_a)
    assert matched > len(lines) // 2  # control: the lines do match


def test_a_bad_signature_file_is_refused_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remedy.errors import KnowledgeError
    from remedy.evidence import catalog

    good = catalog.default_catalog_path().read_text()
    bad = tmp_path / "signatures.yaml"
    # the first signature's pattern made invalid: an unclosed group
    assert "\n  pattern: '" in good  # control: the mutation below applies
    bad.write_text(good.replace("\n  pattern: '", "\n  pattern: '(", 1))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for _ in range(2):
        with pytest.raises(KnowledgeError) as exc:
            catalog.load_catalog(bad)
        assert exc.value.file == str(bad) and exc.value.line


def test_a_validated_record_in_a_directory_others_can_write_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remedy.evidence import catalog

    _fresh_catalog(monkeypatch, tmp_path / "cache")
    assert Path(catalog._validated_path()).is_file()
    Path(catalog._validated_path()).parent.chmod(0o777)
    again = _fresh_catalog(monkeypatch, tmp_path / "cache")
    assert all(s._rx is not None for s in again.signatures)  # checked (and compiled) again


# --------------------------------------------------------------------------------------------
# pydantic's plugin loader with every plugin disabled (remedy/__init__.py)
# --------------------------------------------------------------------------------------------

_PLUGINS = """
import os, sys
import remedy, pydantic
class A(pydantic.BaseModel):
    x: int
A(x=1)
from pydantic.plugin import _loader
before = "importlib.metadata" in sys.modules
first = tuple(_loader.get_plugins())
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "none-of-them"  # plugins on: the real loader answers
second = type(_loader.get_plugins()).__name__
print(before, first, second, "importlib.metadata" in sys.modules, _loader._loading_plugins)
"""


def test_the_plugin_loader_stand_in_answers_as_pydantic_does() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _PLUGINS],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"},
    )
    assert r.returncode == 0, r.stderr
    # no metadata read while disabled; no plugins; then pydantic's own loader (a dict's values),
    # and any other name of the module is the real one's
    assert r.stdout.split() == ["False", "()", "dict_values", "True", "False"]


def test_an_explicit_plugin_setting_gets_pydantic_s_own_loader() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, remedy; print('pydantic.plugin._loader' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYDANTIC_DISABLE_PLUGINS": "some-plugin"},
    )
    assert r.stdout.strip() == "False"


def _on_a_terminal(code: str, args: list[str], cache: Path) -> tuple[bytes, set[str]]:
    """stdout of `python -c code args` on a pseudo-terminal (what a person at one sees), and
    the modules it loaded."""
    import pty

    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(args), "typer" if "typer" in code else "x"],
            stdout=slave,
            stderr=subprocess.PIPE,
            env={**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "100"},
        )
        os.close(slave)
        slave = -1
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end closed
                break
            if not chunk:
                break
            out += chunk
        err = p.communicate(timeout=60)[1].decode()
        return out, set(json.loads(err.strip().splitlines()[-1])["modules"])
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)


def test_help_on_a_terminal_is_replayed_as_typer_prints_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ["plan", "--help"]
    ref, _ = _on_a_terminal(_HELP_RUN, args, cache)
    entry = _HELP_RUN.replace('how == "typer"', "False")
    first, _ = _on_a_terminal(entry, args, cache)
    second, mods = _on_a_terminal(entry, args, cache)
    assert ref.startswith(b"Usage: remedy plan")  # control: typer's page, on the terminal
    assert first == ref and second == ref and "typer" not in mods
    # and the record made on the terminal is the one used there: a pipe has its own
    piped, _, mods = help_run(args, "entry", cache, COLUMNS="100")
    assert "typer" in mods and piped.replace(b"\n", b"\r\n") == ref


# --------------------------------------------------------------------------------------------
# plain `plan` / `diagnose` without typer (remedy.fastcli)
# --------------------------------------------------------------------------------------------

_CLI_RUN = """
import atexit, json, sys
args, how = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["remedy", *args]

def _modules() -> None:
    sys.stderr.flush()
    sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)) + "\\n")

atexit.register(_modules)
if how == "typer":  # the CLI itself: typer parses, as before remedy.fastcli
    from remedy.cli import main
else:  # the console script's path
    from remedy.entry import main
main()
"""

LOGS = Path(__file__).parent / "fixtures" / "logs"


def cli_run(args: list[str], how: str, cache: Path) -> tuple[int, bytes, str, set[str]]:
    """(exit code, stdout, stderr, modules loaded) of `remedy ARGS` run one way or the other."""
    r = subprocess.run(
        [sys.executable, "-c", _CLI_RUN, json.dumps(args), how],
        capture_output=True,
        timeout=180,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "100"},
    )
    err, _, mods = r.stderr.decode().rpartition("\n@@")
    return r.returncode, r.stdout, err, set(json.loads(mods))


def _fast_cases(tmp_path: Path) -> list[list[str]]:
    facts = tmp_path / "facts.json"
    from remedy.inputs import get_example, load_facts_file

    f = load_facts_file(get_example("seed-sm120-system-cuda128").facts_path)
    facts.write_text(f.model_dump_json())
    logs = sorted(str(p) for p in LOGS.glob("*.log"))
    assert len(logs) >= 4  # control: there are logs to read
    return [
        ["plan", "--example", "seed-sm120-pip-cu13", "--json"],
        ["plan", "--json", "-e", "seed-sm120-system-cuda128"],
        ["plan", "--example=seed-sm120-system-cuda128", "--log", logs[0], "--json"],
        ["plan", "--facts", str(facts), "-l", logs[1], "--log", logs[2], "--json"],
        ["plan", "--example", "seed-sm120-pip-cu13"],  # the terminal report (to a pipe)
        ["diagnose", "--log", logs[0], "--log", logs[3], "--json"],
        ["diagnose", "--example", "seed-sm120-system-cuda128", "--json"],
        ["diagnose", "--facts", str(facts), "--log", logs[2]],
        *(["diagnose", "--log", p, "--json"] for p in logs[4:10]),
        # errors: the same message and exit code
        ["plan", "--example", "no-such-example", "--json"],
        ["plan", "--json"],
        ["plan"],
        ["plan", "--facts", str(tmp_path / "missing.json"), "--json"],
        ["plan", "--example", "seed-sm120-pip-cu13", "--facts", str(facts)],
        ["diagnose", "--json"],
        ["diagnose", "--log", str(tmp_path / "missing.log"), "--json"],
    ]


def test_plain_plan_and_diagnose_print_what_the_cli_prints(tmp_path: Path) -> None:
    """Byte for byte, stdout and stderr, and the exit code: remedy.fastcli runs the CLI's own
    command bodies (remedy.commands) without typer."""
    cache = tmp_path / "cache"
    codes = set()
    for args in _fast_cases(tmp_path):
        want = cli_run(args, "typer", cache)
        got = cli_run(args, "entry", cache)
        assert "typer" in want[3]  # control: the reference went through typer
        assert "typer" not in got[3], args
        assert got[:3] == want[:3], args
        codes.add(got[0])
    assert {0, 1, 2} <= codes  # control: plans, findings and errors were all compared


def _big_log(tmp_path: Path) -> Path:
    """A log past the size the scan workers take (seed003 between heartbeat lines)."""
    from remedy.evidence import fastscan

    log = tmp_path / "big.log"
    body = (LOGS / "seed003_capture_nv_detail.log").read_bytes()
    filler = b"".join(b"%d worker heartbeat ok\n" % i for i in range(4000))
    with log.open("wb") as f:
        while f.tell() < fastscan.MIN_BYTES + (1 << 20):
            f.write(filler + body)
    return log


def test_diagnose_of_a_big_log_imports_no_tempfile(tmp_path: Path) -> None:
    """`diagnose --log` of a log the scan workers read (Hyperscan, started early): their
    spools are unnamed files opened without tempfile, whose import (shutil, bz2, lzma) was
    ~3.5 ms of the main process (main: tempfile and shutil were imported by every such run);
    the same output as a run that had imported tempfile first (spools made by tempfile)."""
    pytest.importorskip("hyperscan")

    cache = tmp_path / "cache"
    log = _big_log(tmp_path)
    args = ["diagnose", "--log", str(log), "--json"]
    first = cli_run(args, "entry", cache)  # writes the caches the early start reads
    code, out, err, mods = cli_run(args, "entry", cache)
    assert (code, out, err) == first[:3] and json.loads(out)["symptoms"]
    assert "remedy.evidence.fastscan" in mods  # control: the scan workers read it
    assert loaded(mods, "tempfile", "shutil") == set()
    r = subprocess.run(
        [sys.executable, "-c", "import tempfile; " + _CLI_RUN, json.dumps(args), "entry"],
        capture_output=True,
        timeout=180,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "100"},
    )
    assert (r.returncode, r.stdout) == (code, out)


def test_diagnose_of_a_big_log_imports_no_dataclasses_and_reads_its_own_code_cache(
    tmp_path: Path,
) -> None:
    """`diagnose --log` (Hyperscan, started early): its records are plain classes, so
    dataclasses (inspect, ast, dis: ~7-9 ms) is not imported, and remedy.startcache reads a file
    of its own (the shared one held plan's pydantic and typer code too: ~10-15 ms to read,
    check and unmarshal). The output is the one the CLI (typer) prints."""
    pytest.importorskip("hyperscan")

    cache = tmp_path / "cache"
    log = _big_log(tmp_path)
    args = ["diagnose", "--log", str(log), "--json"]
    first = cli_run(args, "entry", cache)  # writes the caches the early start reads
    code, out, err, mods = cli_run(args, "entry", cache)
    assert (code, out, err) == first[:3] and json.loads(out)["symptoms"]
    assert "remedy.evidence.fastscan" in mods and "remedy.evaluate" in mods  # control
    assert loaded(mods, "dataclasses", "inspect") == set()
    files = sorted(p.name for p in (cache / "remedy").glob("startup-code-*"))
    assert len(files) == 1 and files[0].endswith("-log.marshal"), files
    want = cli_run(args, "typer", cache)
    assert want[:2] == (code, out)
    assert "dataclasses" in want[3]  # control: the CLI's path imports it, as before


@pytest.mark.parametrize(
    ("argv", "profile"),
    [
        (["diagnose", "--log", "a.log", "--json"], "log"),
        (["diagnose", "-l", "a.log", "--log=b.log"], "log"),
        (["diagnose", "--log", "a.log", "--facts", "f.yaml"], ""),
        (["diagnose", "-e", "x", "--log", "a.log"], ""),
        (["diagnose", "--log", "a.log", "--host", "h"], ""),
        (["diagnose", "--help"], ""),
        (["plan", "--example", "x", "--json"], ""),
        ([], ""),
    ],
)
def test_only_a_log_only_diagnose_gets_the_log_code_cache(argv: list[str], profile: str) -> None:
    from remedy.entry import _code_profile

    assert _code_profile(argv) == profile


def test_the_plain_records_compare_and_print_as_the_dataclasses_did() -> None:
    """The records that were dataclasses: equal by fields and class, unhashable unless frozen,
    the frozen ones refuse assignment and hash by fields, repr as before, pickle and copy."""
    import copy
    import pickle

    from remedy.evaluate import Evaluation, Violation
    from remedy.evidence.fields import SignalResult
    from remedy.knowledge.skew import LogVersion, Outcome, PairVerdict
    from remedy.resolve import Pick

    v = Violation("r", "s", ["c"], {"k": 1}, True, "error")
    assert v == Violation("r", "s", ["c"], {"k": 1}, True, "error")
    assert v != Violation("r", "s", ["c"], {"k": 1}, True, "warning")
    assert repr(v) == "Violation(rule='r', subject='s', consumers=['c'], ctx={'k': 1}, " + (
        "hard=True, severity='error')"
    )
    with pytest.raises(TypeError):
        hash(v)
    e = Evaluation([v])
    assert (e.errors, e.picks, e.outcomes, e.facts) == ([], {}, {}, None)
    assert Evaluation([]).errors is not Evaluation([]).errors  # a fresh default each
    assert e == Evaluation([v]) and e != Evaluation([])
    o = Outcome(True, "why")
    assert o == Outcome(True, "why") and hash(o) == hash(Outcome(True, "why"))
    assert repr(o) == "Outcome(holds=True, why='why')"
    with pytest.raises(AttributeError):
        o.why = "other"  # type: ignore[misc]
    p = Pick(None, "/usr/local/cuda", "CUDA_HOME")
    assert pickle.loads(pickle.dumps(p)) == p and copy.deepcopy(p) == p
    assert repr(p) == "Pick(tk=None, path='/usr/local/cuda', how='CUDA_HOME')"
    with pytest.raises(AttributeError):
        p.path = "/x"  # type: ignore[misc]
    assert LogVersion("k", "n", "1", 0) == LogVersion("k", "n", "1", 0)
    assert PairVerdict("p", True, "w", (1, 2)) != PairVerdict("p", False, "w", (1, 2))
    r = SignalResult()
    r.bonus["x"] += 1.0
    r.lines["x"].add(3)
    assert r != SignalResult() and SignalResult() == SignalResult()
    assert v != ("r", "s", ["c"], {"k": 1}, True, "error")  # another class is never equal


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--version"],
        ["plan", "--help"],
        ["plan", "--example"],
        ["plan", "--example", "--json"],
        ["plan", "--example", ""],
        ["plan", "--example=", "--json"],
        ["plan", "-eNAME"],
        ["plan", "-e=NAME"],
        ["plan", "--json=yes", "-e", "x"],
        ["plan", "-e", "a", "-e", "b"],
        ["plan", "--json", "--json", "-e", "a"],
        ["plan", "-e", "a", "--markdown"],
        ["plan", "-e", "a", "--host", "h"],
        ["plan", "-e", "a", "--", "x"],
        ["plan", "-e", "a", "extra"],
        ["diagnose", "--log", "-"],
        ["diagnose", "--log", "-x.log"],
        ["--ssh-config", "c", "plan", "-e", "a"],
        ["run", "-e", "a"],
        ["PLAN", "-e", "a"],
    ],
)
def test_anything_but_a_plain_command_line_goes_to_typer(argv: list[str]) -> None:
    from remedy.fastcli import parse

    assert parse(argv) is None


def test_a_plain_command_line_is_parsed_as_click_would() -> None:
    from remedy.fastcli import parse

    assert parse(["diagnose", "-l", "a.log", "--json", "--log=b.log", "-f", "h.json"]) == (
        "diagnose",
        {
            "example": None,
            "facts": Path("h.json"),
            "log": [Path("a.log"), Path("b.log")],
            "json_": True,
        },
    )
    assert parse(["plan", "--example=x=y"]) == (
        "plan",
        {"example": "x=y", "facts": None, "log": None, "json_": False},
    )


def test_shell_completion_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    from remedy.fastcli import parse

    monkeypatch.setenv("_REMEDY_COMPLETE", "bash_complete")
    assert parse(["plan", "-e", "a"]) is None


# --------------------------------------------------------------------------------------------
# redaction's passes run only where they could match (remedy.redact)
# --------------------------------------------------------------------------------------------


def _hostile_texts(n: int) -> list[str]:
    import random

    rnd = random.Random(18)
    parts = [
        "HF_TOKEN",
        "hf_token",
        "Api-Key",
        "api.key",
        "x.PASSWORD.y",
        "PGPASSWORD",
        "pass",
        "bypass",
        "passes",
        "TOKENIZERS",
        "SSH_AUTH_SOCK",
        "KEY_FILE",
        "--token",
        "-password",
        "---key",
        "--api-key",
        "--tok.en",
        "Authorization",
        "AUTHORIZATION",
        "authorızation",
        "Bearer",
        "bearer",
        "BEARER",
        "beaRer",
        "İ",
        "ı",
        "ſ",
        "\u212a",
        "hf_" + "a" * 24,
        "ghp_" + "B" * 22,
        "sk-" + "c" * 21,
        "AKIA" + "D" * 16,
        "xoxb-" + "1" * 12,
        "ey",
        "https://",
        "user:pw@",
        "@",
        "://",
        "=",
        ": ",
        '="',
        '\\"',
        '"',
        "'",
        " ",
        "\t",
        "\n",
        ",",
        ";",
        "}",
        "]",
        "\\",
        ".",
        "-",
        "_",
        "value",
        "s3cret",
        "<redacted>",
        "→",
        "é",
        "日本",
        "cookie",
        "CREDENTIALS",
        "auth",
        "x",
        "9",
        "{",
        "[",
    ]
    out = []
    for _ in range(n):
        out.append("".join(rnd.choice(parts) for _ in range(rnd.randrange(1, 14))))
    return out


def test_redaction_gives_what_every_pass_over_every_text_gave(tmp_path: Path) -> None:
    from remedy.redact import _redact_text

    texts = _hostile_texts(6000)
    for p in sorted(LOGS.glob("*.log")):
        texts += p.read_text(errors="replace").splitlines()
    for ex in ("seed-sm120-pip-cu13", "seed-sm120-system-cuda128"):
        code, out, _ = modules_after(
            "plan", "--example", ex, "--json", env={"XDG_CACHE_HOME": str(tmp_path / "c")}
        )[:3]
        texts.append(out)
    changed = 0
    for t in texts:
        want = reference_redact(t)
        assert _redact_text(t) == want, t
        changed += want != t
    assert changed > 500  # control: many of them did hold secrets


def test_only_the_listed_characters_case_fold_onto_ascii_letters() -> None:
    """remedy.redact skips a case-insensitive pass by looking for the lowercase word; that is
    exact only if no other character matches an ASCII letter under re.IGNORECASE."""
    import re

    from remedy.redact import _FOLDS_TO_ASCII

    letter = re.compile("(?i)[a-z]")
    found = {chr(c) for c in range(128, 0x110000) if letter.fullmatch(chr(c))}
    assert found == set(_FOLDS_TO_ASCII)


# --------------------------------------------------------------------------------------------
# pydantic's default-factory check for list/dict/set (remedy.pydanticfix)
# --------------------------------------------------------------------------------------------


def test_default_factory_check_answers_as_pydantic_does() -> None:
    import pydantic
    from pydantic._internal import _fields, _generate_schema

    import remedy.pydanticfix as fix

    patched = _fields.takes_validated_data_argument
    orig = patched.__wrapped__  # control: the stand-in is in place, in both modules
    assert _generate_schema.takes_validated_data_argument is patched
    for factory in fix.NO_DATA:
        assert orig(factory) is False and patched(factory) is False

    def with_data(data: dict) -> int:
        return len(data)

    for factory in (with_data, lambda: 1, lambda d: d, int, fix.NO_DATA.__class__):
        assert patched(factory) == orig(factory)
    assert patched(with_data) is True  # control: a factory that takes the data is still seen

    class M(pydantic.BaseModel):
        a: list[int] = pydantic.Field(default_factory=list)
        n: int = pydantic.Field(default_factory=with_data)

    assert M().a == [] and M().a is not M().a and M(a=[1]).n == 1


def test_pydantic_imported_first_is_patched_when_remedy_is_imported() -> None:
    code = (
        "import pydantic._internal._fields as f, remedy.pydanticfix as p; p.install(); "
        "print(f.takes_validated_data_argument.__wrapped__.__name__)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "takes_validated_data_argument", r.stderr


# --------------------------------------------------------------------------------------------
# actions' operations checked once per file version (remedy.knowledge.loader)
# --------------------------------------------------------------------------------------------

_LOAD_KB = """
import json, sys
from remedy.knowledge.loader import load_knowledge
kb = load_knowledge()
ops = {k: a.operation[0] for k, a in kb.actions.items() if a.operation}
print(json.dumps({"ops": ops, "imported": "remedy.operations" in sys.modules}))
"""


def _load_kb(cache: Path, **env: str) -> tuple[dict[str, str], bool, str]:
    """One load in a new process, the loaded knowledge base's cache removed first
    (remedy.knowledge.kbcache: a hit checks nothing), so only the operations record decides."""
    for kept in (cache / "remedy").glob("knowledge-*.pickle"):
        kept.unlink()
    r = subprocess.run(
        [sys.executable, "-c", _LOAD_KB],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
    )
    if r.returncode:
        return {}, False, r.stderr
    data = json.loads(r.stdout)
    return data["ops"], data["imported"], r.stderr


def test_operations_are_checked_again_only_when_a_file_changes(tmp_path: Path) -> None:
    from remedy.knowledge.loader import data_dirs

    cache = tmp_path / "cache"
    first, imported, _ = _load_kb(cache)
    assert imported and len(first) > 10  # control: checked (remedy.operations loaded)
    again, imported, _ = _load_kb(cache)
    assert again == first and not imported  # the same files: not checked again

    # a copy of the playbooks with one action's operation misspelt is checked, and refused
    kdir, pdir = data_dirs()
    mine = tmp_path / "playbooks"
    shutil.copytree(pdir, mine)
    victim = next(p for p in sorted(mine.glob("*.yaml")) if "op: pip-install" in p.read_text())
    victim.write_text(victim.read_text().replace("op: pip-install", "op: pip-instal", 1))
    ops, _, err = _load_kb(cache, REMEDY_PLAYBOOKS_DIR=str(mine))
    assert not ops and "pip-instal" in err and victim.name in err


def test_an_operations_record_others_could_write_is_not_used(tmp_path: Path) -> None:
    from remedy.knowledge import loader

    cache = tmp_path / "cache"
    _load_kb(cache)
    rec = cache / "remedy" / Path(loader._ops_record_path()).name
    assert rec.is_file()  # control: the record was written
    rec.parent.chmod(0o777)
    _, imported, _ = _load_kb(cache)
    assert imported  # checked again: the record was not trusted
    rec.parent.chmod(0o700)
    body = bytearray(rec.read_bytes())
    body[-3] ^= 1  # damaged (or edited) after it was written: its sha256 no longer matches
    rec.write_bytes(bytes(body))
    _, imported, _ = _load_kb(cache)
    assert imported


# --------------------------------------------------------------------------------------------
# every example prints the same through remedy.fastcli as through typer
# --------------------------------------------------------------------------------------------


def _example_cases() -> list[list[str]]:
    from remedy.inputs import examples

    names = sorted(examples())
    assert len(names) >= 2  # control: examples found
    return [
        [cmd, "--example", name, *form]
        for name in names
        for cmd in ("plan", "diagnose")
        for form in (["--json"], [])
    ]


def test_every_example_prints_the_same_through_the_fast_path(tmp_path: Path) -> None:
    """Every built-in example, plan and diagnose, --json and the terminal report: the console
    script's path (remedy.fastcli; the collector paused through start-up, remedy.startgc)
    prints what typer's CLI prints (the collector on throughout), byte for byte, with the
    same exit code."""
    cache = tmp_path / "cache"
    for args in _example_cases():
        want = cli_run(args, "typer", cache)
        got = cli_run(args, "entry", cache)
        assert "typer" in want[3] and "typer" not in got[3], args  # control: two paths
        assert got[:3] == want[:3], args
        assert want[1].strip(), args  # control: something was printed


_GC_SEEN = """
import gc, json, sys
sys.argv = ["remedy", *json.loads(sys.argv[1])]
import remedy.planner.plan as planner
seen = {}
real = planner.make_plan
def make_plan(*a, **k):
    seen.update(enabled=gc.isenabled(), frozen=gc.get_freeze_count())
    return real(*a, **k)
planner.make_plan = make_plan
how = sys.argv[2]
if how == "typer":
    from remedy.cli import main
else:
    from remedy.entry import main
try:
    main()
finally:
    sys.stderr.write("\\n@@" + json.dumps(seen) + "\\n")
"""


@pytest.mark.parametrize("how", ["entry", "typer"])
def test_the_collector_is_on_when_a_command_s_work_starts(how: str, tmp_path: Path) -> None:
    """remedy.startgc: the collector is paused for start-up only; the planner runs with it on
    (a big plan's memory stays bounded), whichever path the command line took."""
    r = subprocess.run(
        [sys.executable, "-c", _GC_SEEN, json.dumps(["plan", "-e", "seed-sm120-pip-cu13"]), how],
        capture_output=True,
        timeout=180,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    seen = json.loads(r.stderr.decode().rpartition("\n@@")[2])
    assert seen["enabled"] is True, r.stderr.decode()[-2000:]
    if how == "entry":  # what start-up built was frozen before the collector came back
        assert seen["frozen"] > 1000


def test_resume_leaves_a_collector_it_did_not_pause_alone() -> None:
    """In-process callers (tests, remedy as a library) never paused it: resume changes
    nothing for them; pause then resume turns it back on."""
    import gc

    from remedy import startgc

    was = gc.isenabled()
    try:
        gc.disable()
        startgc.resume()
        assert not gc.isenabled()  # not ours to turn on
        gc.enable()
        startgc.pause()
        assert not gc.isenabled()
        startgc.resume()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_a_plan_s_learned_hint_is_what_it_was_without_reading_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With hints off (no model) learned_hint answers none without ranking or reading the log,
    as the full computation did; with a model the log text is read and ranked as before."""
    from remedy import diagnose
    from remedy.evidence import learned
    from remedy.inputs import scan_logs
    from remedy.knowledge.loader import load_knowledge

    kb = load_knowledge()
    monkeypatch.delenv(learned.ENV_HINTS, raising=False)
    monkeypatch.delenv(learned.ENV_MODEL, raising=False)
    logs = sorted(LOGS.glob("*.log"))[:6]
    assert logs  # control
    for log in logs:
        symptoms, _, wrappers = scan_logs([log])
        text = log.read_text(errors="replace")
        full = (
            []
            if not text or diagnose.hypotheses_from_log(kb, symptoms, wrappers)
            else diagnose.learned_hypotheses(kb, symptoms, text)
        )

        def unread() -> str:
            raise AssertionError("the log was read with no model to rank it against")

        assert diagnose.learned_hint(kb, symptoms, wrappers, unread) == full == []

    # hints on: the callable is called (the log is ranked as before)
    monkeypatch.setenv(learned.ENV_HINTS, "1")
    calls: list[int] = []

    def text_of() -> str:
        calls.append(1)
        return ""

    assert learned.load_model() is not None  # control: the committed model is used
    assert diagnose.learned_hint(kb, [], set(), text_of) == []
    assert calls == [1]
