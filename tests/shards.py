"""A pytest plugin: split one selection of the suite into shards by file, balanced by time.

scripts/test runs the whole suite as three pytest processes side by side, each with its
share of the host tests (mostly waiting on SSH, boots and compilers) and of the log reading
(CPU), so that they end together. REMEDY_SHARD=NAME:K/N
keeps the files of shard K of N: every shard of NAME sees the same selection (the same -m),
so every file lands in exactly one shard. Files go to the least loaded shard, heaviest first,
by the seconds tests/shard_times.json records for NAME (a file it does not know counts as
DEFAULT_S). A whole file stays in one process: its module fixtures (booted hosts, a corpus
read once) are not paid twice.

REMEDY_FILE_TIMES=PATH writes each file's seconds in this run (setup, call and teardown of
its tests) to PATH as JSON, which `scripts/shard_times.py` merges into tests/shard_times.json.
Loaded by tests/conftest.py (pytest_plugins)."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

TIMES = Path(__file__).with_name("shard_times.json")
DEFAULT_S = 20.0
_SPEC = re.compile(r"^(?P<name>[a-z0-9-]+):(?P<k>[0-9]+)/(?P<n>[0-9]+)$")
_spent: dict[str, float] = defaultdict(float)


def parse(spec: str) -> tuple[str, int, int]:
    m = _SPEC.match(spec)
    if not m or not 1 <= int(m["k"]) <= int(m["n"]):
        raise pytest.UsageError(f"REMEDY_SHARD={spec!r}: expected NAME:K/N with 1 <= K <= N")
    return m["name"], int(m["k"]), int(m["n"])


def assign(files: list[str], weights: dict[str, float], n: int) -> dict[str, int]:
    """File -> shard (1..n): longest first onto the least loaded (ties: lower shard)."""
    load = [0.0] * n
    out: dict[str, int] = {}
    for f in sorted(files, key=lambda f: (-weights.get(f, DEFAULT_S), f)):
        i = min(range(n), key=lambda j: (load[j], j))
        out[f] = i + 1
        load[i] += weights.get(f, DEFAULT_S)
    return out


def _weights(name: str) -> dict[str, float]:
    try:
        table = json.loads(TIMES.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in table.get(name, {}).items()}


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = os.environ.get("REMEDY_SHARD")
    if not spec:
        return
    name, k, n = parse(spec)
    files = sorted({item.nodeid.split("::", 1)[0] for item in items})
    where = assign(files, _weights(name), n)
    keep = [i for i in items if where[i.nodeid.split("::", 1)[0]] == k]
    drop = [i for i in items if where[i.nodeid.split("::", 1)[0]] != k]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _spent[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("REMEDY_FILE_TIMES")
    if path and _spent:
        Path(path).write_text(json.dumps({f: round(s, 1) for f, s in sorted(_spent.items())}))
