"""A unit's sandboxing directives (User=, ReadWritePaths=, CacheDirectory=, MemoryMax= ...) come
from the host's `systemctl show`: they are data the rules compare, never a command, a path remedy
writes or deletes, or an unquoted value. The JIT cache remedy gives a hardened unit is its own
fixed /var/cache/remedy-jit (CacheDirectory=remedy-jit, a slug), never a path the host named."""

from __future__ import annotations

import json
from pathlib import Path

from remedy.facts.services import build_services
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.planner.plan import make_plan

FIX = Path(__file__).parents[1] / "fixtures"
EVIL = "/tmp/x'; touch /tmp/pwned; echo '"


def test_hostile_show_values_are_kept_as_data_and_never_reach_a_command():
    show = (
        "Id=sglang-k26.service\nLoadState=loaded\nExecStart={ path=/v/bin/python ; "
        "argv[]=/v/bin/python -m sglang.launch_server ; ignore_errors=no ; start_time=[n/a] }\n"
        f"ProtectHome=read-only\nUser={EVIL}\nReadWritePaths={EVIL}\nCacheDirectory={EVIL}\n"
        f"MemoryMax=$(reboot)\n"
    )
    sb = build_services(show).services[0].sandboxing
    assert sb["User"] == EVIL and sb["MemoryMax"] == "$(reboot)"
    d = json.loads((FIX / "jitcache" / "service-jit-cache-readonly.facts.json").read_text())
    d["services"][0]["sandboxing"] = sb
    f = Facts.model_validate(d)
    log = scan_logs([str(FIX / "jitcache" / "sglang-k26-readonly-cache-journal.log")])[0]
    plan = make_plan(load_knowledge(), f, log)
    assert [s.action for s in plan.steps] == ["service-jit-cache-dir"]
    cmds = "\n".join(c for s in plan.steps for c in s.commands)
    touched = [t.target for s in plan.steps for t in s.touches]
    assert "pwned" not in cmds and "reboot" not in cmds and "/tmp/x" not in cmds
    assert all(t.startswith("/etc/systemd/system/sglang-k26.service.d/") or t.endswith(".service")
               for t in touched), touched  # fmt: skip
    assert "CacheDirectory=remedy-jit\n" in cmds
