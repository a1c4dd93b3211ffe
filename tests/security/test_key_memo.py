"""Class 5: the cache keys' digests kept by the files' stat (remedy.knowledge.kbcache
``_hash_files``) never serve an edited file the digest of its old bytes.

The attacks: a same-size edit whose mtime is set back (`touch -d`, os.utime) to what the memo
recorded; a file rewritten within the same second it was hashed; a memo damaged or planted
where others can write. The control: an unchanged set is served from the memo without a read,
so the refusals are refusals and not misses.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from cache_env import xdg_cache_home

from remedy.knowledge import kbcache


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    d = tmp_path / "k"
    d.mkdir()
    for name, text in (("a.yaml", "rules: [one]\n"), ("b.yaml", "title: first\n")):
        (d / name).write_text(text)
    monkeypatch.setattr(kbcache, "_memo_cache", None)
    with xdg_cache_home(cache):
        yield d


def digest(d: Path) -> bytes | None:
    h = hashlib.sha256(b"versions")
    return kbcache._hash_files(h, [(b"K", kbcache._files(d))])


def fresh(d: Path) -> bytes | None:
    """The digest with no memo at all: every file read."""
    kept = kbcache._memo_cache
    kbcache._memo_cache = {}
    try:
        return digest(d)
    finally:
        kbcache._memo_cache = kept


def old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files just written count as old (the racy margin is what the last test checks)."""
    monkeypatch.setattr(kbcache, "_RACY_NS", -(10**18))


def test_control_an_unchanged_set_is_served_without_reading(
    files: Path, monkeypatch: pytest.MonkeyPatch
):
    old_enough(monkeypatch)
    first = digest(files)
    kbcache._memo_cache = None  # the next process: the memo read back from its file

    def no_read(self: Path) -> bytes:
        raise AssertionError(f"{self} read although its stat was unchanged")

    monkeypatch.setattr(Path, "read_bytes", no_read)
    assert digest(files) == first
    monkeypatch.undo()
    assert first == fresh(files)


def test_a_same_size_edit_with_its_mtime_set_back_is_hashed_again(
    files: Path, monkeypatch: pytest.MonkeyPatch
):
    old_enough(monkeypatch)
    first = digest(files)
    p = files / "b.yaml"
    st = p.stat()
    time.sleep(0.05)  # past the file system's timestamp tick (the margin the test turned off)
    p.write_text("title: FIRST\n")  # same size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime as the memo recorded it
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    kbcache._memo_cache = None
    got = digest(files)
    assert got != first, "the memo served the digest of the old bytes"
    assert got == fresh(files)


def test_a_file_replaced_by_a_rename_is_hashed_again(files: Path, monkeypatch: pytest.MonkeyPatch):
    old_enough(monkeypatch)
    first = digest(files)
    p = files / "a.yaml"
    st = p.stat()
    time.sleep(0.05)
    tmp = files.parent / "new.yaml"
    tmp.write_text("rules: [two]\n")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, p)
    kbcache._memo_cache = None
    assert digest(files) != first
    assert digest(files) == fresh(files)


def test_a_set_written_within_the_margin_is_not_remembered(files: Path):
    digest(files)  # the files were written just now: a later write could keep their stat
    assert kbcache._memo() == {}
    assert not list(Path(os.environ["XDG_CACHE_HOME"]).glob("remedy/keys-*"))


@pytest.mark.parametrize("how", ["damaged", "world-writable"])
def test_a_memo_that_is_not_trustworthy_is_not_used(
    files: Path, monkeypatch: pytest.MonkeyPatch, how: str
):
    old_enough(monkeypatch)
    first = digest(files)
    memo = Path(kbcache._memo_path())
    assert memo.is_file()
    # plant a wrong digest for the current stats, as its writer would
    import marshal

    from remedy.cachefile import write_private

    planted = {k: (v[0], b"\0" * 32) for k, v in kbcache._memo().items()}
    write_private(str(memo), marshal.dumps(planted))
    if how == "damaged":
        memo.write_bytes(memo.read_bytes()[:-3] + b"xyz")
    else:
        memo.chmod(0o666)
    kbcache._memo_cache = None
    assert digest(files) == first


def test_control_a_planted_memo_that_is_trustworthy_is_what_is_served(
    files: Path, monkeypatch: pytest.MonkeyPatch
):
    """Control for the test above: the same planted memo, ours and intact, is used (the
    refusals there are refusals, not misses)."""
    old_enough(monkeypatch)
    digest(files)
    import marshal

    from remedy.cachefile import write_private

    planted = {k: (v[0], b"\0" * 32) for k, v in kbcache._memo().items()}
    write_private(kbcache._memo_path(), marshal.dumps(planted))
    kbcache._memo_cache = None
    assert digest(files) == b"\0" * 32
