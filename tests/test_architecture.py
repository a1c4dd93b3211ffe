"""The import rules of docs/ARCHITECTURE.md, enforced: each package imports only the packages
below it (the table there and MAY_IMPORT here are the same; change both, saying why)."""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "remedy"

FOUNDATION = {
    "errors", "model", "results", "outcomes", "fileread", "planfile", "cachefile", "dirfd",
    "syspath", "childenv",
}  # fmt: skip
BASE = FOUNDATION | {"redact", "resolve", "interrupts"}
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    # model.Source.short() reads results.source_short: one citation line for both Sources
    "model": {"errors", "results"},
    # the plain Symptom/SuspiciousLine/Hypothesis/Diagnosis a scan and a diagnosis make (model's
    # pydantic classes of those names are their schema): model's layer, importable where it is
    "results": set(),
    "outcomes": {"errors"},
    "fileread": {"errors", "dirfd"},
    "cachefile": {"dirfd"},
    "dirfd": set(),
    "syspath": set(),
    # the inherited environment less another user's places: every local child's (transport,
    # the log reader's grep/wc)
    "childenv": {"fileread"},
    # pydantic's default-factory check for list/dict/set, put in before pydantic loads
    "pydanticfix": set(),
    # the console script's start-up code cache (put in by entry)
    "startcache": {"cachefile"},
    "planfile": {"errors", "model", "fileread"},
    "redact": {"errors", "model"},
    "textchars": set(),
    # the plain records' equality/repr (remedy.record): model's layer, importable where it is
    "record": set(),
    "resolve": {"errors", "model"},
    "interrupts": {"errors", "model"},
    "transport": {"errors", "syspath", "fileread", "childenv"},
    "trust": {"errors", "model", "transport", "childenv"},
    # units/dropin.py: systemd-analyze verify runs in a private temp dir (fileread.private_tempdir)
    "units": {"errors", "model", "fileread", "resolve", "transport", "syspath"},
    "knowledge": {"errors", "model", "fileread", "cachefile", "resolve", "units", "operations"},
    "evidence": {"errors", "model", "fileread", "cachefile", "knowledge", "syspath", "childenv"},
    "evaluate": {"errors", "model", "resolve", "knowledge"},
    "facts": {"errors", "model", "fileread", "redact", "transport", "trust", "units"},
    # knowledge: the examples' YAML goes through the knowledge's parse cache (yamlload)
    "inputs": {"errors", "model", "fileread", "redact", "evidence", "knowledge"},
    "scope": {"errors", "model", "evaluate", "units"},
    # typed operations: a step's change as validated parameters, rendered to commands,
    # rollback and Ansible tasks (operations/verify.py checks saved plans: application level)
    "operations": {"errors", "model", "units", "transport", "trust", "textchars"},
    "operations/verify.py": {"errors", "model", "operations", "planner"},
    "confirm": {"errors", "model", "interrupts", "report", "redact"},
    "diagnose": {"errors", "model", "resolve", "knowledge", "evidence", "evaluate"},
    "impact": {"errors", "model", "resolve", "knowledge", "evidence", "evaluate"},
    "units/impact.py": {
        "errors",
        "model",
        "resolve",
        "knowledge",
        "evaluate",
        "impact",
        "units",
        "transport",
        "report",
    },  # fmt: skip
    "planner": {
        "errors",
        "model",
        "redact",
        "resolve",
        "knowledge",
        "evaluate",
        "diagnose",
        "scope",
        "operations",
    },  # fmt: skip
    "probes": {
        "errors",
        "model",
        "fileread",
        "resolve",
        "transport",
        "trust",
        "units",
        "knowledge",
        "evidence",
    },  # fmt: skip
    "report": {
        "errors",
        "model",
        "fileread",
        "redact",
        "planfile",
        "knowledge",
        "impact",
        "textchars",
    },
    "executor": BASE | {"transport", "trust", "knowledge", "evaluate", "planner", "scope"},
    "export": BASE
    | {"transport", "units", "knowledge", "evaluate", "scope", "planner", "probes", "executor"}
    | {"operations", "trust"},
}
for _room in MAY_IMPORT.values():  # results and record are in model's layer (see above)
    if "model" in _room:
        _room.update({"results", "record"})
# The imports against the layers, and why (both lazy, inside functions; debt to pay down):
# model.Step validates its `operation` through the operations registry when a plan is read, so a
# saved plan's steps are typed operations from the moment they are parsed; operations read two
# pure tables of knowledge (the drop-in file name, the provider table) while knowledge's loader
# checks each action's `operation:` against the operations registry.
EXCEPTIONS = {("model", "operations"), ("operations", "knowledge")}
# the command line and what only it uses (argument checks, help text, `remedy knowledge`), and
# fleet: they may import anything below them
TOP = {
    "cli",
    "entry",
    "__main__",
    "fleet",
    "__init__",
    "argcheck",
    "helptext",
    "helpcache",
    "clicommand",
    "knowledge_cli",
    # the plan/diagnose bodies the CLI calls, and the plain forms of both run without typer
    "commands",
    "fastcli",
    # the collector paused while the console script starts (entry), resumed by the commands
    "startgc",
}


def _room(path: Path) -> str:
    rel = path.relative_to(SRC)
    if rel.as_posix() in ("units/impact.py", "operations/verify.py"):
        return rel.as_posix()
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


@contextmanager
def _no_gc_inside_compile() -> Iterator[None]:
    """Garbage left by earlier tests (an asyncio subprocess transport whose loop has closed)
    must not be collected inside compile(): its __del__ raises, which CPython 3.11 reports as
    SystemError "AST constructor recursion depth mismatch". Collect it once, outside, and keep
    the collector off while parsing (a full collection per file cost a minute in a process
    holding the whole suite)."""
    if not gc.isenabled():
        yield
        return
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _imports(path: Path) -> set[str]:
    """remedy.* packages/modules a file imports (at top level or inside a function)."""
    out: set[str] = set()
    with _no_gc_inside_compile():
        tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "remedy":
                continue
            if len(parts) > 1:
                out.add(parts[1])
            else:  # from remedy import x
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "remedy" and len(parts) > 1:
                    out.add(parts[1])
    return out


@cache
def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    with _no_gc_inside_compile():  # one collection for all files
        for f in SRC.rglob("*.py"):
            if "scripts" in f.relative_to(SRC).parts or "examples" in f.relative_to(SRC).parts:
                continue
            room = _room(f)
            own = room.split("/")[0] if room.endswith(".py") else room
            edges.setdefault(room, set()).update(
                i
                for i in _imports(f)
                if i not in (own, "__version__") and (room, i) not in EXCEPTIONS
            )
    return edges


def test_every_package_is_in_the_table():
    rooms = set(_edges())
    assert rooms - TOP <= set(MAY_IMPORT), sorted(rooms - TOP - set(MAY_IMPORT))


def test_packages_import_only_what_architecture_md_allows():
    bad = {
        room: sorted(targets - MAY_IMPORT[room])
        for room, targets in _edges().items()
        if room in MAY_IMPORT and targets - MAY_IMPORT[room]
    }
    assert not bad, f"imports against docs/ARCHITECTURE.md: {bad}"


def test_the_table_has_no_cycle():
    """The allowed imports form layers: no package may (even indirectly) import itself."""
    graph = {k: {t for t in v if t in MAY_IMPORT} for k, v in MAY_IMPORT.items()}

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(graph.get(n, ()))
        return seen

    assert not [k for k in graph if k in reach(k)]


def test_the_search_knows_no_domain():
    """planner/search.py is resolvelib-like: it imports nothing of remedy."""
    assert _imports(SRC / "planner" / "search.py") == set()


def test_architecture_md_names_every_package():
    doc = (SRC.parents[1] / "docs" / "ARCHITECTURE.md").read_text()
    for room in MAY_IMPORT:
        name = room if room.endswith(".py") else room
        assert f"`{name}" in doc, room
