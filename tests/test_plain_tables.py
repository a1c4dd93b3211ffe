"""The provider table (knowledge/providers.yaml) and the CUDA API table
(knowledge/cuda-api-changes.yaml) are checked by pydantic when their bytes are first read
(remedy.knowledge.providers_schema, remedy.evidence.fields_schema) and kept as plain rows in
a cache: read back, they equal the freshly checked table, neither pydantic nor the schema is
imported, and a file that fails the check raises its error (file and line) on every run,
never cached. Why: a log naming a missing library or a removed CUDA API imported pydantic
(~30 ms) for tables whose validation had long been done (issue 18)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from remedy.errors import KnowledgeError
from remedy.evidence import fields
from remedy.knowledge import providers, yamlload

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(yamlload, "_PARSED", None)
    return tmp_path / "cache"


def _clear() -> None:
    providers._load.cache_clear()
    providers._PROVIDERS.clear()
    for fn in (fields.load_api_changes, fields.load_api_families, fields.load_removed_headers):
        fn.cache_clear()


def _answers(table: providers.Table) -> list:
    names = sorted({f for line in [*table.pip.values(), table.debian] for f in line.libraries})
    names = names[::5] + ["Python.h", "cuda_runtime.h", "cub/cub.cuh", "libfoo.so.1"]
    out = []
    for line in (*table.pip, "13.1", None):
        py = {"python": "3.11", "torch_cuda": line, "packages": {}} if line else None
        out += [
            [(e.pip, e.apt, e.version) for e in providers.providers(py, n, table)] for n in names
        ]
    return out


def test_the_cached_provider_table_is_the_checked_one(cache_home: Path) -> None:
    _clear()
    path = providers.table_path()
    fresh = providers.load_table(path)
    assert fresh is not None and Path(cache_home, "remedy").is_dir()
    fresh_answers = _answers(fresh)
    _clear()
    cached = providers.load_table(path)
    assert cached == fresh and cached is not fresh
    assert _answers(cached) == fresh_answers and any(fresh_answers)
    _clear()


def _run(code: str, cache: Path) -> list:
    env = {**os.environ, "PYTHONPATH": SRC, "XDG_CACHE_HOME": str(cache)}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


_READ = """
import json, sys
from remedy.evidence import fields
got = [fields.soname_cuda_majors("libcudart.so.12"), fields.lib_in_cuda_toolkit("libcublas.so.12"),
       fields.api_change("cudaThreadSynchronize") is not None,
       fields.removed_header("thrust/system/cuda/experimental/pinned_allocator.h") is not None,
       len(fields.load_api_families())]
print(json.dumps([got, sorted(m for m in sys.modules if m.startswith(("pydantic",
    "remedy.knowledge.providers_schema", "remedy.evidence.fields_schema"))
    and m != "pydantic.plugin._loader")]))
"""


def test_cached_tables_are_read_without_pydantic(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, mods_first = _run(_READ, cache)  # checks the tables, keeps them
    again, mods = _run(_READ, cache)
    assert again == first and mods == []
    assert first[0] and first[1] is True and first[2] and first[4]  # control: rows were found
    assert "pydantic" in mods_first  # control: an empty cache checks through pydantic


def test_a_provider_table_that_fails_its_check_is_never_kept(tmp_path: Path, cache_home) -> None:
    _clear()
    bad = tmp_path / "providers.yaml"
    bad.write_text("pip:\n  '13.0': {packages: {}}\ndebian: {packages: {}}\n")  # no cuda_toolkit
    for _ in range(2):
        _clear()
        with pytest.raises(KnowledgeError) as e:
            providers.load_table(bad)
        assert e.value.file == str(bad) and "cuda_toolkit" in str(e.value)
    _clear()


def test_a_bad_api_table_part_raises_on_every_run_the_good_parts_are_kept(
    tmp_path: Path, cache_home: Path
) -> None:
    p = tmp_path / "cuda-api-changes.yaml"
    p.write_text(
        "sources:\n  s: {doc: x}\n"
        "changes:\n  - {symbol: cudaThreadExit, removed_in: '13.0', library: cudart,"
        " change: removed, replacement: cudaDeviceReset, source: s}\n"
        "families:\n  - {family: PFN, pattern: 'PFN_cu\\\\w+', removed_in: 'x13',"
        " library: cudart, change: removed, replacement: y, source: s}\n"
    )
    for _ in range(2):  # the second run has the good part from the cache
        _clear()
        assert list(fields.load_api_changes(p)) == ["cudaThreadExit"]
        with pytest.raises(KnowledgeError) as e:
            fields.load_api_families(p)
        assert e.value.file == str(p) and e.value.line == 6 and "removed_in" in str(e.value)
    _clear()


def test_a_provider_cache_that_names_anything_else_is_refused(cache_home: Path) -> None:
    """The table's cache is unpickled with one callable allowed (providers._make): a body under
    the right key that reaches for os.system is refused, and the table is checked again."""
    import pickle

    from remedy.knowledge import kbcache

    _clear()
    path = providers.table_path()
    fresh = providers.load_table(path)
    k = providers._key(str(path), path.read_text(encoding="utf-8"))
    cache = Path(kbcache.cache_path("providers"))
    from remedy.cachefile import read_private, write_private

    body = read_private(str(cache))
    assert body is not None and body.startswith(kbcache._TAG + k)  # control: what is kept

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + str(cache_home / "pwned"),))

    write_private(str(cache), kbcache._TAG + k + pickle.dumps(Evil()))
    _clear()
    again = providers.load_table(path)
    assert again == fresh and not (cache_home / "pwned").exists()
    _clear()


def _gpu_rows() -> tuple:
    fields._gpu_models.cache_clear()
    fields.gpu_model_cc.cache_clear()
    return tuple((rx.pattern, cc) for rx, cc in fields._gpu_models())


def test_the_gpu_model_table_is_kept_apart_from_the_yaml_parse_cache(cache_home: Path) -> None:
    """knowledge/cuda-tables.yaml's gpu_models rows (what a log's GPU names are looked up in)
    are kept as plain string pairs (remedy.evidence.evcache): read back, they equal the rows
    parsed from the file, without the YAML parse cache (every knowledge file's parse, ~3 MB,
    read and unmarshalled by each `diagnose --log` for this one table: ~7 ms)."""
    fresh = _gpu_rows()
    assert len(fresh) > 10 and ("GB10", "12.1") in fresh  # control: the rows were parsed
    yamlload._PARSED = None  # the next process: nothing loaded yet
    kept = _gpu_rows()
    assert kept == fresh and yamlload._PARSED is None  # the parse cache was never read
    assert fields.gpu_model_cc("RTX 5060 Ti") == "12.0"
    fields._gpu_models.cache_clear()


def test_a_gpu_model_cache_that_names_anything_else_is_refused(cache_home: Path) -> None:
    """The table's cache unpickles no class at all: a body under the right key that reaches for
    os.system is refused, and the rows are read from the file again."""
    import pickle

    from remedy.cachefile import read_private, write_private
    from remedy.evidence import evcache
    from remedy.evidence.catalog import knowledge_dir
    from remedy.knowledge import kbcache

    fresh = _gpu_rows()
    k = evcache.gpu_models_key(knowledge_dir() / "cuda-tables.yaml")
    cache = Path(kbcache.cache_path("gpu-models"))
    body = read_private(str(cache))
    assert k is not None and body is not None and body.startswith(kbcache._TAG + k)  # control

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + str(cache_home / "pwned"),))

    write_private(str(cache), kbcache._TAG + k + pickle.dumps(Evil()))
    assert _gpu_rows() == fresh and not (cache_home / "pwned").exists()
    write_private(str(cache), kbcache._TAG + k + pickle.dumps(((1, "12.0"),)))  # wrong shape
    assert _gpu_rows() == fresh
    fields._gpu_models.cache_clear()
