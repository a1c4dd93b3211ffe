"""Start-up stays cheap (issue 18): what a command does not use is not imported, and what a
previous run computed from remedy's own files is reused, not recomputed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def loaded(modules: set[str], *packages: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in packages or m in packages}


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
    assert {
        "remedy.transport.local",
        "remedy.transport.ssh",
        "remedy.units.host",
        "remedy.units.impact",
        "remedy.units.parse",
    }.isdisjoint(mods)
