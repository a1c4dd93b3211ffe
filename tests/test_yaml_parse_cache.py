"""The knowledge YAML parse cache (knowledge/yamlload.py) returns what a fresh parse returns,
follows edits, survives a corrupt cache file, and never hands out shared objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.errors import KnowledgeError
from remedy.knowledge import yamlload


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(yamlload, "_PARSED", None)
    return tmp_path / "cache"


def test_cached_equals_fresh_and_follows_edits(tmp_path: Path, cache_home: Path) -> None:
    p = tmp_path / "k.yaml"
    p.write_text("rules:\n  - id: a\n    when: 'x > 1'\n")
    first = yamlload.load_yaml(p)
    assert Path(yamlload._parse_cache_path()).is_file()
    yamlload._PARSED = None  # a new process: read from the file
    again = yamlload.load_yaml(p)
    assert again == first == yamlload.load_yaml_text(p.read_text(), str(p))
    assert yamlload.line_of(again["rules"][0], "when") == 3
    again["rules"].append("changed")  # callers may change what they get
    assert yamlload.load_yaml(p) == first
    p.write_text("rules:\n  - id: b\n")
    assert yamlload.load_yaml(p)["rules"][0]["id"] == "b"


def test_corrupt_cache_file_is_ignored(tmp_path: Path, cache_home: Path) -> None:
    p = tmp_path / "k.yaml"
    p.write_text("a: 1\n")
    yamlload.load_yaml(p)
    Path(yamlload._parse_cache_path()).write_bytes(b"\x00garbage")
    yamlload._PARSED = None
    assert yamlload.load_yaml(p)["a"] == 1


def test_errors_are_not_cached(tmp_path: Path, cache_home: Path) -> None:
    p = tmp_path / "k.yaml"
    p.write_text("a: 1\na: 2\n")
    for _ in range(2):
        with pytest.raises(KnowledgeError, match="duplicate key"):
            yamlload.load_yaml(p)


def test_timestamps_are_parsed_not_cached(tmp_path: Path, cache_home: Path) -> None:
    p = tmp_path / "k.yaml"
    p.write_text("when: 2026-12-02 01:00:00\n")
    assert yamlload.load_yaml(p)["when"].year == 2026
    assert yamlload.load_yaml(p)["when"].year == 2026


def _poisoned(tmp_path: Path, cache_home: Path) -> Path:
    """A cached parse whose entry for the file says something the file does not say."""
    p = tmp_path / "k.yaml"
    p.write_text("cmd: echo safe\n")
    yamlload.load_yaml(p)
    key = next(iter(yamlload._PARSED or {}))
    import hashlib
    import marshal

    from remedy.cachefile import MAGIC

    body = marshal.dumps({key: marshal.dumps({"cmd": "poisoned"})})
    cache = Path(yamlload._parse_cache_path())
    cache.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)
    yamlload._PARSED = None
    return p


def test_control_a_valid_cache_of_ours_is_used(tmp_path: Path, cache_home: Path) -> None:
    p = _poisoned(tmp_path, cache_home)
    assert yamlload.load_yaml(p)["cmd"] == "poisoned"  # so the refusals below are real


def test_cache_in_a_world_writable_dir_is_not_used(tmp_path: Path, cache_home: Path) -> None:
    p = _poisoned(tmp_path, cache_home)
    Path(yamlload._parse_cache_path()).parent.chmod(0o777)
    assert yamlload.load_yaml(p)["cmd"] == "echo safe"


def test_cache_writable_by_others_is_not_used(tmp_path: Path, cache_home: Path) -> None:
    p = _poisoned(tmp_path, cache_home)
    Path(yamlload._parse_cache_path()).chmod(0o666)
    assert yamlload.load_yaml(p)["cmd"] == "echo safe"


def test_a_plain_parse_is_cached_apart_from_the_line_marked_one(
    tmp_path: Path, cache_home: Path
) -> None:
    """cached_parse(kind=...) (the provider table) gives what its parse gives, fresh objects
    each time, and never the line-marked result load_yaml cached for the same text."""
    import yaml

    p = tmp_path / "t.yaml"
    text = "pip:\n  cu13:\n    files: [a, b]\n"
    p.write_text(text)
    marked = yamlload.load_yaml(p)
    assert yamlload.LINE_KEY in marked  # control: load_yaml marks lines
    calls: list[str] = []

    def parse(t: str) -> object:
        calls.append(t)
        return yaml.safe_load(t)

    first = yamlload.cached_parse(text, parse, kind="plain")
    assert first == yaml.safe_load(text) and yamlload.LINE_KEY not in first
    yamlload._PARSED = None  # a new process
    again = yamlload.cached_parse(text, parse, kind="plain")
    assert again == first and calls == [text]  # parsed once
    again["pip"] = None
    assert yamlload.cached_parse(text, parse, kind="plain") == first
    assert yamlload.load_yaml(p) == marked


def test_the_provider_table_is_the_same_from_the_cache(cache_home: Path) -> None:
    from remedy.knowledge import providers

    path = providers.table_path()
    providers._load.cache_clear()
    fresh = providers._load(str(path), path.stat().st_mtime)
    providers._load.cache_clear()
    yamlload._PARSED = None  # a new process: from the cache file
    cached = providers._load(str(path), path.stat().st_mtime)
    providers._load.cache_clear()
    assert cached == fresh and cached.pip and cached is not fresh
