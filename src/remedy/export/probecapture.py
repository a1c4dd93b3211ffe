"""What a probe would run on a host, captured without a host.

Why capture rather than re-implement: an exported playbook must verify a fix exactly as
`remedy run` does (the consumer's toolkit lookup, flags, link line, interpreter, arch and
environment). remedy's probes already decide all of that on the controller and then do three
things on the host: make a private dir, put their scripts there, run one command. Running the
probe against a ScriptedTransport that records those three things gives the files and the argv
to ship with Ansible. A probe that needs anything else from the host (a launch that streams a
log, a lookup the facts do not answer) cannot be captured and is reported as such.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from remedy.model import Facts
from remedy.transport.base import CommandResult
from remedy.transport.scripted import ScriptedCall, ScriptedTransport

# the probe command's shape (probes/base.py env_argv + `cd "$1" && shift && exec "$@"`)
_PROBE_RUNNER = 'cd "$1" && shift && exec "$@" 2>&1'


@dataclass
class CapturedProbe:
    probe: str
    consumer: str | None
    workdir: str
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # path -> (data, mode)
    argv: list[str] = field(default_factory=list)
    # remedy.trust's owner/mode checks the probe makes before it runs a host binary: the
    # playbook runs them first on the host, so an untrusted nvcc is refused there too
    trust_checks: list[list[str]] = field(default_factory=list)


class NotCapturable(Exception):
    """The probe needs the host for more than its private dir and one command."""


def capture_probe(
    probe: str,
    facts: Facts,
    workdir: str,
    *,
    params: dict[str, Any] | None = None,
    consumer: str | None = None,
) -> CapturedProbe:
    """Run `probe` against a recording transport whose private dir is `workdir`."""
    from remedy.probes import run_probe
    from remedy.trust import SH_TRUST

    cap = CapturedProbe(probe, consumer, workdir)
    unexpected: list[str] = []

    def handler(call: ScriptedCall) -> CommandResult:
        script, argv = call.script, call.argv or []
        if script is not None and "mktemp -d" in script:
            return CommandResult(0, workdir.encode(), b"", 0.0)
        if argv[:2] == ["rm", "-rf"]:
            return CommandResult(0, b"", b"", 0.0)
        if argv[:2] == ["sh", "-c"] and len(argv) > 2 and argv[2].startswith(SH_TRUST):
            cap.trust_checks.append(list(argv))
            return CommandResult(0, b"", b"", 0.0)
        if argv[:1] == ["systemctl"]:
            # a unit's environment is re-read on the host by `remedy run`; here the predicted
            # facts (the plan's steps applied) stand in for it: probes fall back to them
            return CommandResult(1, b"", b"not read at export time", 0.0)
        if _PROBE_RUNNER in argv and not cap.argv:
            cap.argv = list(argv)
            ok = {"steps": [{"name": "captured", "rc": 0, "seconds": 0}]}
            return CommandResult(0, b"REMEDY-RESULT " + json.dumps(ok).encode() + b"\n", b"", 0.0)
        unexpected.append(call.text[:200])
        return CommandResult(1, b"", b"not available at export time", 0.0)

    t = ScriptedTransport(handler, host="export")
    res = asyncio.run(run_probe(probe, t, facts, params=params, consumer=consumer, timeout=3600))
    if unexpected:
        raise NotCapturable(f"{probe} asks the host more than one command ({unexpected[0]})")
    if not cap.argv:
        raise NotCapturable(f"{probe}: {res.detail or 'runs nothing on the host'}")
    cap.files = {p: (d, t.modes.get(p, 0o600)) for p, d in t.files.items()}
    return cap
