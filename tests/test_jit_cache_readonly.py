"""A hardened unit (ProtectHome=read-only, ProtectSystem=strict) whose JIT caches default to
the service user's home, read-only in the unit's mount namespace: FlashInfer's import stops at
"OSError: [Errno 30] Read-only file system: '/root/.cache'" (tvm-ffi's and torch's caches are
there too).

The fixtures are real: the facts and the journal of the sandbox host
sandbox/scenarios/service-jit-cache-readonly (tests/test_toolchain_sandbox.py test_j runs the
whole chain there). Before this change remedy collected no sandboxing directive of a unit and no
signature knew the line: the plan was `nothing-to-do` (exit 0, nothing unexplained) and `run`
said nothing-to-do (exit 10) with the unit failed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remedy.facts.services import SHOW, build_services
from remedy.inputs import scan_logs
from remedy.knowledge.functions import jit_caches, read_only_reason
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.operations import SetEnv
from remedy.planner.plan import make_plan

HERE = Path(__file__).parent / "fixtures" / "jitcache"
CACHE = "/var/cache/remedy-jit"


def facts() -> Facts:
    return Facts.model_validate(
        json.loads((HERE / "service-jit-cache-readonly.facts.json").read_text())
    )


def journal():
    return scan_logs([str(HERE / "sglang-k26-readonly-cache-journal.log")])[0]


def with_sandboxing(f: Facts, **sb: str) -> Facts:
    svc = f.services[0]
    return f.model_copy(update={"services": [svc.model_copy(update={"sandboxing": sb})]})


def test_a_read_only_home_cache_gets_a_cache_directory_drop_in():
    kb = load_knowledge()
    f = facts()
    assert f.services[0].sandboxing == {
        "ProtectHome": "read-only",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
    }
    plan = make_plan(kb, f, journal())
    assert plan.status == "ok" and plan.unexplained == []
    assert [s.action for s in plan.steps] == ["service-jit-cache-dir"]
    assert [x.rule for x in plan.findings] == ["jit-cache-writable"]
    op = plan.steps[0].operation
    assert op.scope == "dropin" and op.unit == "sglang-k26.service"
    assert op.cache_directory == "remedy-jit"
    assert op.set == {
        "CACHE_DIRECTORY": CACHE,
        "FLASHINFER_WORKSPACE_BASE": CACHE,
        "TVM_FFI_CACHE_DIR": f"{CACHE}/tvm-ffi",
        "TORCH_EXTENSIONS_DIR": f"{CACHE}/torch_extensions",
    }
    text = op.text()
    assert "\nCacheDirectory=remedy-jit\n" in text and text.startswith("# Managed by remedy")
    assert any("Read-only file system: '/root/.cache'" in a for a in plan.steps[0].addresses)


def test_without_sandboxing_the_rule_is_not_evaluated():
    kb = load_knowledge()
    plan = make_plan(kb, with_sandboxing(facts()))
    assert "jit-cache-writable" not in [x.rule for x in [*plan.findings, *plan.advice]]
    assert plan.steps == []


def test_a_read_write_path_over_the_cache_holds():
    kb = load_knowledge()
    f = with_sandboxing(facts(), ProtectHome="read-only", ReadWritePaths="-/root/.cache")
    plan = make_plan(kb, f)
    assert "jit-cache-writable" not in [x.rule for x in plan.findings]


@pytest.mark.parametrize(
    "path, sb, env, want",
    [
        ("/root/.cache/tvm-ffi", {"ProtectHome": "read-only"}, {}, "ProtectHome=read-only"),
        ("/home/u/.cache", {"ProtectHome": "yes"}, {}, "ProtectHome=yes"),
        ("/home/u/.cache", {"ProtectHome": "tmpfs"}, {}, None),
        ("/srv/c", {"ProtectSystem": "strict"}, {}, "ProtectSystem=strict"),
        ("/tmp/c", {"ProtectSystem": "strict"}, {}, "ProtectSystem=strict"),
        ("/tmp/c", {"ProtectSystem": "strict", "PrivateTmp": "yes"}, {}, None),
        ("/var/cache/x/fi", {"ProtectSystem": "strict", "CacheDirectory": "x"}, {}, None),
        ("/var/lib/s/fi", {"ProtectSystem": "strict", "StateDirectory": "s"}, {}, None),
        ("/var/cache/x", {"ProtectSystem": "strict"}, {"CACHE_DIRECTORY": "/var/cache/x"}, None),
        ("/usr/local/c", {"ProtectSystem": "full"}, {}, "ProtectSystem=full"),
        ("/etc/c", {"ProtectSystem": "yes"}, {}, None),
        ("/root/.cache", {"ReadOnlyPaths": "-/root"}, {}, "ReadOnlyPaths=/root"),
        ("/root/.cache", {"ProtectHome": "read-only", "ReadWritePaths": "/root/.cache"}, {}, None),
        ("/rootless/c", {"ProtectHome": "read-only"}, {}, None),  # a prefix, not a parent
        ("relative", {"ProtectSystem": "strict"}, {}, None),
    ],
)
def test_read_only_reason(path, sb, env, want):
    assert read_only_reason(path, sb, env) == want


def test_each_consumers_cache_as_its_source_reads_it():
    assert jit_caches({}, {}) == {
        "flashinfer-jit": "/root/.cache/flashinfer",
        "sglang-jit-kernel": "/root/.cache/tvm-ffi",
        "torch-cpp-extension": "/root/.cache/torch_extensions",
    }
    # XDG_CACHE_HOME moves torch's only; FlashInfer/tvm-ffi read their own variables
    got = jit_caches({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, {"User": "svc"})
    assert got == {
        "flashinfer-jit": "/h/.cache/flashinfer",
        "sglang-jit-kernel": "/h/.cache/tvm-ffi",
        "torch-cpp-extension": "/x/torch_extensions",
    }
    assert jit_caches({}, {"User": "sglang"})["sglang-jit-kernel"] == "/home/sglang/.cache/tvm-ffi"


def test_sandboxing_is_collected_from_systemctl_show():
    for p in ("ProtectHome", "ProtectSystem", "ReadWritePaths", "CacheDirectory", "MemoryMax"):
        assert f"-p {p}" in SHOW
    show = (
        "Id=sglang-k26.service\nLoadState=loaded\nExecStart={ path=/v/bin/python ; "
        "argv[]=/v/bin/python -m sglang.launch_server ; ignore_errors=no ; start_time=[n/a] }\n"
        "ProtectHome=read-only\nProtectSystem=strict\nPrivateTmp=no\nDynamicUser=no\n"
        "ReadWritePaths=-/srv/a /srv/b\nCacheDirectory=\nMemoryMax=17179869184\n"
        "MemoryHigh=infinity\nUser=sglang\n"
    )
    svc = build_services(show).services[0]
    assert svc.sandboxing == {
        "User": "sglang",
        "ProtectHome": "read-only",
        "ProtectSystem": "strict",
        "ReadWritePaths": "-/srv/a /srv/b",
        "MemoryMax": "17179869184",
    }


def test_hostile_unit_values_never_reach_a_command():
    """User=, ReadWritePaths= and the rest come from the host: they are compared as strings by
    the rule, never written. The drop-in holds remedy's own fixed values only."""
    kb = load_knowledge()
    evil = "x'; touch /tmp/pwned; echo '\n[Service]\nExecStartPre=/bin/sh -c id"
    f = with_sandboxing(
        facts(), ProtectHome="read-only", User=evil, ReadWritePaths=evil, CacheDirectory=evil
    )
    plan = make_plan(kb, f, journal())
    cmds = "\n".join(c for s in plan.steps for c in s.commands)
    assert "pwned" not in cmds and "ExecStartPre" not in cmds
    assert [s.action for s in plan.steps] == ["service-jit-cache-dir"]


@pytest.mark.parametrize("bad", ["../x", "a b", "/var/cache/x", "x\nExecStartPre=id", ""])
def test_cache_directory_is_a_slug(bad):
    with pytest.raises(ValueError):
        SetEnv(scope="dropin", unit="a.service", name="n", set={"A": "1"}, cache_directory=bad)


def test_cache_directory_only_in_a_drop_in():
    with pytest.raises(ValueError):
        SetEnv(scope="profile", name="n", set={"A": "1"}, cache_directory="remedy-jit")


def test_strict_without_private_tmp_moves_tmpdir_too():
    """ProtectSystem=strict without PrivateTmp=: /tmp is read-only as well (Python's "No usable
    temporary directory found", real in sandbox/scenarios/service-jit-cache-strict): TMPDIR goes
    under the CacheDirectory= too. With PrivateTmp= (the recorded host) it is left alone."""
    kb = load_knowledge()
    plan = make_plan(kb, with_sandboxing(facts(), ProtectSystem="strict"), journal())
    assert plan.steps[0].operation.set["TMPDIR"] == CACHE
    assert "TMPDIR" not in make_plan(kb, facts(), journal()).steps[0].operation.set


def test_a_read_only_tmp_line_is_a_symptom(tmp_path):
    log = tmp_path / "j.log"
    log.write_text(
        "FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', '/']\n"
    )
    assert "tmpdir-unusable" in {s.signature for s in scan_logs([str(log)])[0]}


def test_the_units_users_home_comes_from_the_user_database():
    """User=sglang made by `useradd --system --home-dir /var/lib/sglang` under
    ProtectHome=read-only: its caches are in /var/lib/sglang, which ProtectHome= does not
    cover (tests/test_toolchain_sandbox.py test_m: the unit builds and is ready). Before this
    change remedy guessed /home/sglang, read-only: a CacheDirectory= step for a healthy unit.
    The home is read with `getent passwd` (by name or uid); unread, the guess stays."""
    from remedy.facts.sections import Section, section_text
    from remedy.facts.services import ServicesCollector, parse_passwd

    c = ServicesCollector(["sglang-k26.service"])
    assert 'getent passwd -- "$u"' in c.command()
    show = (
        "Id=sglang-k26.service\nLoadState=loaded\nExecStart={ path=/v/bin/python ; "
        "argv[]=/v/bin/python -m sglang.launch_server ; ignore_errors=no }\n"
        "ProtectHome=read-only\nUser=sglang\n"
    )
    passwd = "sglang\tsglang:x:999:997::/var/lib/sglang:/usr/sbin/nologin\n"
    out = section_text(
        [
            Section("svc.boot", "", "systemd\n"),
            Section("svc.show", "", show),
            Section("svc.rc", "0", ""),
            Section("svc.passwd", "", passwd),
        ]
    )
    svc = c.parse(out).services[0]
    assert svc.user_home == "/var/lib/sglang"
    assert parse_passwd("999\tsglang:x:999:997::/var/lib/sglang:/bin/false\nbad\tx:y\n") == {
        "999": "/var/lib/sglang"
    }
    assert parse_passwd("u\tu:x:1:1::relative:/bin/sh\n") == {}

    kb = load_knowledge()
    sb = {"User": "sglang", "ProtectHome": "read-only"}
    f = with_sandboxing(facts(), **sb)
    guessed = make_plan(kb, f)  # the home not read: /home/sglang, read-only
    assert [s.action for s in guessed.steps] == ["service-jit-cache-dir"]
    f = f.model_copy(
        update={"services": [f.services[0].model_copy(update={"user_home": "/var/lib/sglang"})]}
    )
    plan = make_plan(kb, f)
    assert "jit-cache-writable" not in [x.rule for x in plan.findings] and plan.steps == []
    assert jit_caches({}, sb, "/var/lib/sglang")["flashinfer-jit"] == (
        "/var/lib/sglang/.cache/flashinfer"
    )
    # ProtectSystem=strict makes /var/lib read-only too: the rule still finds it
    strict = {**sb, "ProtectSystem": "strict"}
    assert read_only_reason(jit_caches({}, strict, "/var/lib/sglang")["flashinfer-jit"], strict)
