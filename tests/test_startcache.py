"""remedy.startcache: code compiled at start-up is reused from a private cache, unchanged."""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import typing
from pathlib import Path

import pytest

from remedy import startcache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fresh, installed cache under a private XDG_CACHE_HOME; uninstalled afterwards."""
    home = tmp_path / "xdg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setattr(startcache, "_cache", None)
    monkeypatch.setattr(startcache, "_used", set())
    monkeypatch.setattr(startcache, "_dirty", False)
    startcache.install()
    yield Path(startcache._path())
    startcache.uninstall()


def _reload() -> None:
    """As a new process would: the cache read again from disk."""
    startcache._cache = None
    startcache._used.clear()


def _make_dataclass() -> type:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: "list[str]"  # noqa: UP037 - a forward reference, compiled by typing at use
        z: int = 3

    return Point


def test_install_patches_and_uninstall_restores(cache: Path) -> None:
    assert typing.compile is startcache.cached_compile  # type: ignore[attr-defined]
    assert dataclasses.exec is startcache._exec  # type: ignore[attr-defined]
    assert collections.eval is startcache._eval  # type: ignore[attr-defined]
    startcache.uninstall()
    for mod, name in ((typing, "compile"), (dataclasses, "exec"), (collections, "eval")):
        assert name not in mod.__dict__
    startcache.install()  # the fixture's uninstall runs on an installed cache


def test_saved_code_is_reused_and_behaves_the_same(cache: Path) -> None:
    first = _make_dataclass()
    ref = typing.ForwardRef("dict[str, int] | None")
    startcache.save()
    assert cache.is_file() and (os.stat(cache).st_mode & 0o777) == 0o600
    keys = set(startcache._entries())
    assert ("eval", "<string>", "dict[str, int] | None") in keys
    _reload()
    second = _make_dataclass()
    assert startcache._dirty is False  # everything came from the cache
    p, q = first(1, ["a"]), second(1, ["a"])
    assert (p.x, p.y, p.z) == (q.x, q.y, q.z) and repr(p) == repr(q)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.x = 2  # type: ignore[misc]
    assert first.__init__.__annotations__ == second.__init__.__annotations__
    assert typing.ForwardRef("dict[str, int] | None").__forward_code__ == ref.__forward_code__
    Pair = collections.namedtuple("Pair", "a b")  # noqa: PYI024
    assert Pair(1, 2).b == 2


def test_no_future_flags_leak_into_generated_code(cache: Path) -> None:
    """remedy.startcache uses `from __future__ import annotations`; the code it compiles must
    not (a generated __init__ keeps the field's type as its annotation, not a string)."""
    for _ in range(2):
        cls = dataclasses.make_dataclass("P", [("x", int)])
        assert cls.__init__.__annotations__["x"] is int
        _reload()


def test_a_bad_entry_is_compiled_again(cache: Path) -> None:
    key = ("eval", "<string>", "1 + 1")
    startcache._entries()[key] = "not code"
    code = startcache.cached_compile("1 + 1", "<string>", "eval")
    assert eval(code) == 2  # noqa: S307
    assert startcache._dirty


def test_a_syntax_error_is_raised_and_not_cached(cache: Path) -> None:
    with pytest.raises(SyntaxError):
        typing.ForwardRef("1 +")
    assert not any(k[2] == "1 +" for k in startcache._entries())


def test_a_cache_others_can_write_is_ignored(cache: Path) -> None:
    _make_dataclass()
    startcache.save()
    os.chmod(cache, 0o666)
    _reload()
    assert startcache._entries() == {}


def test_nothing_new_writes_nothing(cache: Path) -> None:
    startcache.save()
    assert not cache.exists()


_PATTERNS = [
    (r"(?P<major>\d+)\.(?P<minor>\d+)(?:\.(\d+))?", 0),
    (r"^error: (.*?) at line \d+$", 0),
    (r"(?i)ptx\s+isa", 0),
    (r"[^\x00-\x7f]+|\bsm_(\d+)a?\b", 0),
    (rb"\x1b\[[0-9;]*m", 0),
    (r"a.b", 16),  # re.DOTALL as an int
]


def _fresh(pattern: str | bytes, flags: int) -> re.Pattern:
    """What re itself compiles, bypassing both caches."""
    startcache.uninstall()
    try:
        return re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]
    finally:
        startcache.install()


@pytest.mark.parametrize(("pattern", "flags"), _PATTERNS)
def test_a_regex_from_the_cache_is_the_one_re_builds(
    cache: Path, pattern: str | bytes, flags: int
) -> None:
    want = _fresh(pattern, flags)
    first = re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]
    startcache.save()
    _reload()
    second = re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]
    assert ("re", pattern, flags) in startcache._used  # control: this one came from the cache
    assert not startcache._dirty
    sample = "12.8.1 error: x at line 3 PTX  ISA sm_120a é\x1b[1m a\nb"
    text = sample.encode() if isinstance(pattern, bytes) else sample
    for got in (first, second):
        assert (got.pattern, got.flags, got.groups, got.groupindex) == (
            want.pattern,
            want.flags,
            want.groups,
            want.groupindex,
        )
        assert [m.span() for m in got.finditer(text)] == [m.span() for m in want.finditer(text)]
        assert [m.groups() for m in got.finditer(text)] == [m.groups() for m in want.finditer(text)]


def test_a_damaged_regex_program_is_built_again(cache: Path) -> None:
    key = ("re", r"ab+c", 0)
    startcache._entries()[key] = (32, [1, 2, 3], 0, {}, (None,))  # not a valid SRE program
    assert re._compiler.compile(r"ab+c", 0).fullmatch("abbc")  # type: ignore[attr-defined]
    assert startcache._dirty


def test_a_bad_pattern_raises_as_re_does(cache: Path) -> None:
    with pytest.raises(re.error):
        re._compiler.compile(r"(unclosed", 0)  # type: ignore[attr-defined]
    assert ("re", r"(unclosed", 0) not in startcache._entries()


def test_other_re_internals_fall_back_to_res_own_compile(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Python's re whose private steps differ: the pattern is re's own, uncached."""

    import _sre

    class OtherSre:
        MAGIC = _sre.MAGIC

        @staticmethod
        def compile(*_a: object) -> None:
            raise TypeError("this _sre.compile takes other arguments")

    monkeypatch.setattr(startcache, "_sre", OtherSre)
    pat = re._compiler.compile(r"x(y+)z", 0)  # type: ignore[attr-defined]
    assert pat is not None and pat.fullmatch("xyyz")
    assert ("re", r"x(y+)z", 0) not in startcache._entries()


def test_a_regex_program_is_kept_as_its_words_bytes(cache: Path) -> None:
    """The program is stored as the bytes of its words (one string, not ~250 ints) and made
    the same list again when used; an entry saved before, as a list of ints, is still taken."""
    import _sre

    pattern = r"(?P<v>\d+)\.(\d)+ error"
    key = ("re", pattern, 0)
    want = _fresh(pattern, 0)
    re._compiler.compile(pattern, 0)  # type: ignore[attr-defined]
    flags, code, groups, gi, ig = startcache._entries()[key]
    assert type(code) is bytes and len(code) % _sre.CODESIZE == 0
    startcache.save()
    for entry in (None, (flags, memoryview(code).cast("I").tolist(), groups, gi, ig)):
        _reload()
        if entry is not None:  # the shape saved before: a list of ints
            startcache._entries()[key] = entry
        got = re._compiler.compile(pattern, 0)  # type: ignore[attr-defined]
        assert key in startcache._used and not startcache._dirty  # control: from the cache
        assert (got.groups, got.groupindex) == (want.groups, want.groupindex)
        for text in ("x 12.8 error", "1.22 error 3.4 error", "no"):
            assert [m.groups() for m in got.finditer(text)] == [
                m.groups() for m in want.finditer(text)
            ]
