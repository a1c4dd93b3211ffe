"""Class 5: remedy's own state is checked before it is used.

The attacks, for real: a compiled-template cache (code remedy executes) planted by another
user, whose code would create a canary; a corrupted cache; a same-size edit of the host agent
(the script remedy runs as root on every host); a state directory owned by someone else.
"""

from __future__ import annotations

import asyncio
import hashlib
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cache_env import xdg_cache_home

from remedy.cachefile import MAGIC
from remedy.errors import RunError
from remedy.executor.hoststate import AGENT_SHA256, AGENT_SOURCE, HostState
from remedy.knowledge import expr
from remedy.transport.local import LocalTransport

NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]


def remedy(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        cwd=REPO,
    )


def cache_file(cache_home: Path) -> Path:
    with xdg_cache_home(cache_home):
        return Path(expr._cache_path())


def poison(path: Path, canary: Path) -> None:
    """Replace every cached template with code that creates the canary when loaded."""
    blob = path.read_bytes()
    n = len(MAGIC)
    keys = marshal.loads(blob[n + 32 :]).keys()
    evil = compile(f"open({str(canary)!r}, 'w').close()", "<evil>", "exec")
    body = marshal.dumps(dict.fromkeys(keys, evil))
    path.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)


@pytest.fixture
def cache_home(tmp_path: Path) -> Path:
    home = tmp_path / "cache"
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(home)})
    assert r.returncode == 0, r.stderr
    assert cache_file(home).exists()
    # the loaded knowledge base's own cache (remedy.knowledge.kbcache, tested in
    # test_knowledge_cache.py) would spare the next run the template cache these tests poison
    for kept in (home / "remedy").glob("knowledge-*.pickle"):
        kept.unlink()
    return home


@pytest.mark.skipif(os.geteuid() != 0, reason="a file owned by another user needs root")
def test_template_cache_owned_by_another_user_is_not_loaded(cache_home: Path, tmp_path: Path):
    canary = tmp_path / "canary-cache"
    f = cache_file(cache_home)
    poison(f, canary)
    os.chown(f, NOBODY, NOBODY)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(cache_home)})
    assert r.returncode == 0, r.stderr
    assert not canary.exists(), "remedy executed a template cache another user owns"


def test_template_cache_in_a_world_writable_dir_is_not_loaded(cache_home: Path, tmp_path: Path):
    canary = tmp_path / "canary-cache-dir"
    f = cache_file(cache_home)
    poison(f, canary)
    f.parent.chmod(0o777)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(cache_home)})
    assert r.returncode == 0, r.stderr
    assert not canary.exists()


def test_control_our_own_cache_is_loaded(cache_home: Path, tmp_path: Path):
    """The poisoned cache, owned by us: it is loaded (the canary appears), so the two tests
    above fail without the owner/mode check."""
    canary = tmp_path / "canary-control"
    poison(cache_file(cache_home), canary)
    remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(cache_home)})
    assert canary.exists()


@pytest.mark.parametrize(
    "damage",
    [b"", b"\x00" * 100, b"garbage", MAGIC + b"\x00" * 32 + b"\xff\xfe"],
    ids=["empty", "zeros", "garbage", "bad-digest"],
)
def test_corrupted_template_cache_is_rebuilt(cache_home: Path, damage: bytes):
    f = cache_file(cache_home)
    f.write_bytes(damage)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(cache_home)})
    assert r.returncode == 0, r.stderr
    assert f.read_bytes().startswith(MAGIC) and len(f.read_bytes()) > 1000


def startup_cache_file(cache_home: Path) -> Path:
    """remedy.startcache's file (code typing/dataclasses/collections would compile)."""
    from remedy import startcache

    with xdg_cache_home(cache_home):
        return Path(startcache._path())


def poison_startup(path: Path, canary: Path) -> None:
    """Every cached dataclass method (exec mode: run with builtins) becomes code that creates
    the canary when run."""
    blob = path.read_bytes()
    n = len(MAGIC)
    data = marshal.loads(blob[n + 32 :])
    evil = compile(f"open({str(canary)!r}, 'w').close()", "<evil>", "exec")
    body = marshal.dumps({k: evil if k[0] == "exec" else v for k, v in data.items()})
    path.write_bytes(MAGIC + hashlib.sha256(body).digest() + body)


@pytest.mark.parametrize("how", ["world-writable dir", "other owner", "control: ours"])
def test_startup_code_cache_is_run_only_when_ours(cache_home: Path, tmp_path: Path, how: str):
    f = startup_cache_file(cache_home)
    assert f.is_file()  # the console script's run in the fixture wrote it
    canary = tmp_path / "canary-startup"
    poison_startup(f, canary)
    if how == "world-writable dir":
        f.parent.chmod(0o777)
    elif how == "other owner":
        if os.geteuid() != 0:
            pytest.skip("a file owned by another user needs root")
        os.chown(f, NOBODY, NOBODY)
    r = remedy("plan", "--example", "seed-sm120-pip-cu13", env={"XDG_CACHE_HOME": str(cache_home)})
    if how.startswith("control"):  # the check is what stops the tests above
        assert canary.exists()
        return
    assert r.returncode == 0, r.stderr
    assert not canary.exists(), f"remedy ran start-up code from a cache in a {how}"


def _local_state(tmp_path: Path) -> LocalTransport:
    tmp_path.chmod(0o755)
    return LocalTransport(
        "local", env={"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "st")}
    )


def test_same_size_edit_of_the_host_agent_is_not_executed(tmp_path: Path):
    canary = tmp_path / "canary-agent"
    t = _local_state(tmp_path)
    hs = HostState(t)
    asyncio.run(hs.setup())
    path = Path(hs.agent_path)
    # an edit of exactly the same size: the module docstring becomes code making the canary
    evil = f"import os; open({str(canary)!r}, 'w').close()\n".encode()
    a = AGENT_SOURCE.index(b'"""')
    b = AGENT_SOURCE.index(b'"""', a + 3) + 3
    edited = AGENT_SOURCE[:a] + evil + b"#" * (b - a - len(evil)) + AGENT_SOURCE[b:]
    path.write_bytes(edited)
    assert path.stat().st_size == len(AGENT_SOURCE)
    hs2 = HostState(t)
    asyncio.run(hs2.setup())
    asyncio.run(hs2.agent("lock-read", hs2.state_dir))
    assert not canary.exists(), "remedy ran a host agent someone edited"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == AGENT_SHA256


@pytest.mark.skipif(os.geteuid() != 0, reason="a directory owned by another user needs root")
def test_state_dir_owned_by_another_user_is_refused(tmp_path: Path):
    t = _local_state(tmp_path)
    st = tmp_path / "st" / "remedy"
    st.mkdir(parents=True)
    os.chown(st, NOBODY, NOBODY)
    with pytest.raises(RunError, match="owned by nobody"):
        asyncio.run(HostState(t).setup())


# ---- over SSH, on a sandbox host ----------------------------------------------------------


@pytest.fixture
def host():
    from sandbox_hosts import host_for_test

    yield from host_for_test("healthy", "tho")


async def _edit_agent_over_ssh(h) -> tuple[str, str]:
    from remedy.transport import open_transport

    t = open_transport(h.name, ssh_config=h.cfg, connect_timeout=20.0)
    try:
        hs = HostState(t)
        await hs.setup()
        a = AGENT_SOURCE.index(b'"""')
        b = AGENT_SOURCE.index(b'"""', a + 3) + 3
        evil = b"open('/canary-agent', 'w').close()\n"
        edited = AGENT_SOURCE[:a] + evil + b"#" * (b - a - len(evil)) + AGENT_SOURCE[b:]
        assert len(edited) == len(AGENT_SOURCE)
        await t.put(hs.agent_path, edited, mode=0o600)
        hs2 = HostState(t)
        await hs2.setup()
        await hs2.agent("lock-read", hs2.state_dir)
        canary = (await t.run("ls /canary-agent 2>/dev/null; true", timeout=30)).text()
        code = (
            "import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())"
        )
        digest = (await t.run(["python3", "-c", code, hs2.agent_path], timeout=30)).text()
        return canary, digest.strip()
    finally:
        await t.close()


@pytest.mark.sandbox
def test_same_size_agent_edit_on_a_host_is_replaced_before_it_runs(host):
    canary, digest = asyncio.run(_edit_agent_over_ssh(host))
    assert canary.strip() == "", "the edited agent ran as root on the host"
    assert digest == AGENT_SHA256
