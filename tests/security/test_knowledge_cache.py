"""Class 5: the loaded knowledge base's cache (remedy.knowledge.kbcache) is used only when it
is ours, intact, current, and made of knowledge classes alone.

The attacks, for real: a cache whose pickle would run a command (the canary) when loaded, with
a correct key and sha256, in our own private directory (the unpickler must refuse it); the same
cache in a directory others can write, or owned by another user; a knowledge file edited after
the cache was written. The control: a cache we wrote ourselves, with a marked version, is what
the next process loads, so the refusals above are refusals and not misses.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cache_env import xdg_cache_home

from remedy.cachefile import MAGIC
from remedy.evidence import evcache
from remedy.knowledge import kbcache
from remedy.knowledge.loader import data_dirs, load_knowledge

NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]

_VERSION = """
from remedy.knowledge.loader import load_knowledge
kb = load_knowledge()
print(kb.version)
print(kb.rules["toolkit-links-cudart"].rule.title)
"""


def loaded(cache: Path, **env: str) -> tuple[str, str]:
    """(version, a rule's title) of the knowledge a new process loads."""
    r = subprocess.run(
        [sys.executable, "-c", _VERSION],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    version, title = r.stdout.splitlines()
    return version, title


def cache_path(cache: Path) -> Path:
    with xdg_cache_home(cache):
        return Path(kbcache.cache_path())


def write_cache(cache: Path, payload: bytes) -> Path:
    """A cache file exactly as remedy writes it (tag, current key, pickle; sha256), private."""
    key = kbcache.key(*data_dirs())
    assert key is not None
    body = kbcache._TAG + key + payload
    path = cache_path(cache)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    cache.chmod(0o700)
    path.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)
    path.chmod(0o600)
    return path


def marked_kb() -> bytes:
    """The real knowledge base, pickled as remedy does, its version marked."""
    load_knowledge.cache_clear()
    try:
        kb = load_knowledge()
        out = io.BytesIO()
        real = kb.version
        kb.version = "sha256:marked-by-the-test"
        try:
            kbcache._Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(kb)
        finally:
            kb.version = real
        return out.getvalue()
    finally:
        load_knowledge.cache_clear()


class _Evil:
    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.canary}",))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    home = tmp_path / "cache"
    home.mkdir(mode=0o700)
    return home


def test_control_our_own_cache_is_what_the_next_run_loads(cache: Path):
    write_cache(cache, marked_kb())
    version, _ = loaded(cache)
    assert version == "sha256:marked-by-the-test"


def test_a_cache_that_would_run_a_command_is_refused(cache: Path, tmp_path: Path):
    canary = tmp_path / "canary-knowledge-pickle"
    write_cache(cache, pickle.dumps(_Evil(canary)))
    version, _ = loaded(cache)
    assert not canary.exists(), "remedy unpickled a command from its knowledge cache"
    assert version.startswith("sha256:") and "marked" not in version
    # and the refused cache was replaced by a real one
    assert loaded(cache)[0] == version


@pytest.mark.parametrize("how", ["world-writable dir", "other owner"])
def test_a_cache_others_could_write_is_not_loaded(cache: Path, how: str):
    path = write_cache(cache, marked_kb())
    if how == "world-writable dir":
        path.parent.chmod(0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("a file owned by another user needs root")
        os.chown(path, NOBODY, NOBODY)
    version, _ = loaded(cache)
    assert "marked" not in version, f"remedy loaded a knowledge cache in a {how}"


def test_an_edited_knowledge_file_is_loaded_again(cache: Path, tmp_path: Path):
    """The key covers the files' bytes: an edit after the cache was written is seen."""
    kdir, _ = data_dirs()
    mine = tmp_path / "knowledge"
    shutil.copytree(kdir, mine)
    env = {"REMEDY_KNOWLEDGE_DIR": str(mine)}
    first_version, title = loaded(cache, **env)
    assert title and list((cache / "remedy").glob("knowledge-*.pickle"))
    again = loaded(cache, **env)
    assert again == (first_version, title)  # the cache: the same knowledge
    rules = next(p for p in mine.glob("*.yaml") if f"title: {title}" in p.read_text())
    rules.write_text(rules.read_text().replace(f"title: {title}", f"title: {title} (edited)", 1))
    version, edited = loaded(cache, **env)
    assert edited == f"{title} (edited)" and version != first_version


def test_warm_load_equals_the_fresh_one(cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Every part of the knowledge base comes back as the loader built it."""
    import marshal

    from remedy.knowledge import loader

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    load_knowledge.cache_clear()
    fresh = load_knowledge()
    load_knowledge.cache_clear()
    monkeypatch.setattr(loader, "_load_fresh", lambda *_a: pytest.fail("not from the cache"))
    try:
        warm = load_knowledge()
    finally:
        load_knowledge.cache_clear()
    assert warm is not fresh
    for name in ("components", "variables", "probes", "releases", "pairs", "log_fields"):
        assert getattr(warm, name) == getattr(fresh, name), name
    assert (warm.signature_ids, warm.files, warm.version) == (
        fresh.signature_ids,
        fresh.files,
        fresh.version,
    )

    def code(x: object) -> object:
        c = getattr(x, "_code", None)
        return c if isinstance(c, bytes) else marshal.dumps(c) if c is not None else x

    def shape(r: object) -> object:
        if isinstance(r, (list, tuple)):
            return [type(r).__name__, *(shape(x) for x in r)]
        if isinstance(r, dict):
            return {k: shape(v) for k, v in r.items()}
        if hasattr(r, "__dataclass_fields__"):
            return {k: shape(getattr(r, k)) for k in r.__dataclass_fields__}
        if hasattr(r, "remedy_names"):
            return ("expr", code(r), sorted(r.remedy_names))
        if hasattr(r, "remedy_source"):
            return ("tmpl", code(r), r.remedy_source)
        return r

    assert shape(warm.rules) == shape(fresh.rules)
    assert shape(warm.actions) == shape(fresh.actions)
    assert warm.functions.names() == fresh.functions.names()
    assert vars(warm.functions).keys() <= vars(fresh.functions).keys()


# --------------------------------------------------------------------------------------------
# the signature catalog and its literal sets (remedy.evidence.catalog._kept_catalog)
# --------------------------------------------------------------------------------------------

_CATALOG = """
from remedy.evidence.catalog import default_catalog
from remedy.evidence.prefilter import engine_patterns, literals
cat = default_catalog()
print(len(cat.signatures), cat.signatures[0].title)
print(len(literals(cat)), len(engine_patterns(cat)))
"""


def catalog_seen(cache: Path) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", _CATALOG],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def write_catalog_cache(cache: Path, payload: bytes) -> Path:
    from remedy.evidence.catalog import default_catalog_path

    key = evcache.catalog_key(default_catalog_path().resolve())
    assert key is not None
    body = kbcache._TAG + key + payload
    with xdg_cache_home(cache):
        path = Path(kbcache.cache_path("catalog"))
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)
    path.chmod(0o600)
    return path


def marked_catalog() -> bytes:
    from remedy.evidence.catalog import load_catalog
    from remedy.evidence.prefilter import engine_patterns, literals

    cat = load_catalog()
    value = (cat, literals(cat), engine_patterns(cat))
    cat.signatures[0].title = "marked by the test"
    out = io.BytesIO()
    kbcache._Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()


def test_control_our_own_catalog_cache_is_used(cache: Path):
    write_catalog_cache(cache, marked_catalog())
    assert catalog_seen(cache)[0].endswith(" marked by the test")


@pytest.mark.parametrize("how", ["a command", "world-writable dir"])
def test_a_catalog_cache_that_is_not_trustworthy_is_refused(cache: Path, tmp_path: Path, how: str):
    canary = tmp_path / "canary-catalog-pickle"
    if how == "a command":
        write_catalog_cache(cache, pickle.dumps(_Evil(canary)))
    else:
        write_catalog_cache(cache, marked_catalog()).parent.chmod(0o777)
    seen = catalog_seen(cache)
    assert not canary.exists(), "remedy unpickled a command from its catalog cache"
    assert "marked" not in seen[0]
    if how == "a command":  # replaced by a real cache, which the next run takes
        assert catalog_seen(cache) == seen


def test_warm_catalog_equals_the_fresh_one(cache: Path, monkeypatch: pytest.MonkeyPatch):
    from remedy.evidence import catalog, prefilter

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    catalog._DEFAULT.clear()
    fresh = catalog.default_catalog()
    lits, patterns = prefilter.literals(fresh), prefilter.engine_patterns(fresh)
    catalog._DEFAULT.clear()
    monkeypatch.setattr(catalog, "load_catalog", lambda *_a: pytest.fail("not from the cache"))
    try:
        warm = catalog.default_catalog()
    finally:
        catalog._DEFAULT.clear()
    assert warm is not fresh and warm.as_dict() == fresh.as_dict()
    for a, b in zip(warm.signatures, fresh.signatures, strict=True):
        assert (a.line, a.near_needles, a.rx.pattern) == (b.line, b.near_needles, b.rx.pattern)
        assert (a.gate_rx and a.gate_rx.pattern) == (b.gate_rx and b.gate_rx.pattern)
    assert (prefilter.literals(warm), prefilter.engine_patterns(warm)) == (lits, patterns)
    # and what the cache holds is what prefilter computes from the catalog itself
    assert (
        prefilter.reduce_literals(
            {n for s in warm.signatures for n in (*s.needles, *s.near_needles)}
        )
        == lits
    )


# --------------------------------------------------------------------------------------------
# the field signals `diagnose` ranks with (remedy.diagnose._kept_signals)
# --------------------------------------------------------------------------------------------


def test_warm_signals_equal_the_fresh_ones_and_a_command_is_refused(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from remedy import diagnose
    from remedy.evidence import fields
    from remedy.evidence.catalog import default_catalog

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    kb, ids = load_knowledge(), default_catalog().ids()
    path = fields.default_signals_path()
    fresh = fields.load_signals(path, rules=kb.rules, signatures=ids)
    assert diagnose._kept_signals(kb, ids) == fresh  # cold: loaded, and kept
    monkeypatch.setattr(diagnose, "load_signals", lambda *_a, **_k: pytest.fail("not kept"))
    warm = diagnose._kept_signals(kb, ids)
    assert warm == fresh and warm is not fresh

    # the same key, a pickle that would run a command: refused, the file loaded again
    canary = tmp_path / "canary-signals-pickle"
    k = evcache.signals_key(path, list(kb.rules), ids)
    assert k is not None
    body = kbcache._TAG + k + pickle.dumps(_Evil(canary))
    Path(kbcache.cache_path("signals")).write_bytes(MAGIC + hashlib.sha256(body).digest() + body)
    assert evcache.load_signals(k) is None and not canary.exists()
    # another rule set is another key: a kept list is never checked against other rules
    assert evcache.signals_key(path, list(kb.rules)[1:], ids) != k


# --------------------------------------------------------------------------------------------
# the log-only view of the knowledge `diagnose --log` reads (remedy.knowledge.logview)
# --------------------------------------------------------------------------------------------


def test_a_log_view_cache_that_would_run_a_command_is_refused(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from remedy.knowledge import logview

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    load_knowledge.cache_clear()
    try:
        made = logview.load_log_view()  # cold: made from the knowledge, and kept
        path = Path(kbcache.cache_path("logview"))
        assert path.is_file()  # control: this is the file the next run reads
        key = kbcache.key(*data_dirs())
        assert key is not None
        k = logview._FORMAT.encode() + b"\0" + key
        canary = tmp_path / "canary-logview-pickle"
        body = kbcache._TAG + k + pickle.dumps(_Evil(canary))
        path.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)
        again = logview.load_log_view()  # refused: made again from the knowledge
        assert not canary.exists(), "remedy unpickled a command from its log view cache"
        assert type(again) is logview.LogView and again is not made
        assert list(again.rules) == list(made.rules)
        monkeypatch.setattr(logview, "log_view", lambda _kb: pytest.fail("not from the cache"))
        assert list(logview.load_log_view().rules) == list(made.rules)  # kept again, and read
    finally:
        load_knowledge.cache_clear()
