"""Start-up stays cheap (issue 18): what a command does not use is not imported, and what a
previous run computed from remedy's own files is reused, not recomputed."""

from __future__ import annotations

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
