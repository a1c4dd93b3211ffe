"""remedy's state on a host: where it lives, and the agent that writes it durably.

State lives under the remote user's state directory (`$XDG_STATE_HOME` or
`~/.local/state`)/remedy, mode 0700, files 0600: `lock.json`, `runs/<id>/journal.jsonl`,
`runs/<id>/plan.json`, `runs/<id>/cp/<step>/` checkpoints.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remedy.errors import RemedyError, RunError
from remedy.fileread import json_loads
from remedy.transport import Transport
from remedy.trust import SH_LINKS, SH_TRUST

AGENT_SOURCE = (Path(__file__).parent / "agent.py").read_bytes()
AGENT_SHA256 = hashlib.sha256(AGENT_SOURCE).hexdigest()
AGENT_HASH = AGENT_SHA256[:12]


@dataclass
class HostState:
    transport: Transport
    state_dir: str = ""
    python: str = "python3"
    agent_path: str = ""

    async def setup(self, timeout: float = 30) -> None:
        """Find the state dir and a python3, and install the agent (once per version)."""
        # the state dir holds the agent remedy runs as root and the journals it trusts: no
        # link on the way another user could point elsewhere (checked before anything is
        # created or chmod'ed through it, and again after), its real path and every directory
        # above it ours (remedy.trust), made 0700; from then on remedy uses the real path,
        # so no link on the path as written is ever followed again
        script = (
            SH_TRUST + SH_LINKS + 'd="${XDG_STATE_HOME:-$HOME/.local/state}/remedy"; umask 077\n'
            'links_trusted "$d" && { mkdir -p "$d" || { WHY="$d cannot be created"; false; }; } && '
            'links_trusted "$d" && '
            'RPD=$(readlink -f -- "$d") && { [ -n "$RPD" ] || { WHY="$d cannot be resolved"; false; }; } && '
            'PD=${RPD%/*} && { [ -n "$PD" ] || PD=/; } && trusted "$PD" && '
            '_su=$(stat -c "%u %U" -- "$RPD") && '
            '{ [ "${_su%% *}" = "$ME" ] || { WHY="$RPD owned by ${_su#* } (uid ${_su%% *})"; '
            "false; }; } && "
            'chmod 700 -- "$RPD" && trusted "$RPD" || { echo "state directory $WHY" >&2; exit 1; }\n'
            'printf "%s\\n" "$RPD" && '
            # the agent runs as root: a python3 on PATH (root's PATH may start with a venv's
            # bin) only when `trusted`, by its checked real path; `-I`: nothing from the
            # working directory, PYTHON* or the user site
            "{ NOTE=; S=${REMEDY_SESSION_PATH:+$REMEDY_SESSION_PATH:}$PATH; "
            'for p in "$(PATH=$S; command -v python3)" "$(PATH=$S; command -v python)" '
            "/usr/bin/python3 /usr/local/bin/python3; do case $p in /*) ;; *) continue;; esac; "
            'trusted "$p" || { NOTE="$NOTE; $WHY"; continue; }; '
            "\"$RP\" -I -c 'import sys; print(sys.executable)' && exit 0; done; "
            'echo "MISSING$NOTE"; }'
        )
        r = await self.transport.run(script, timeout=timeout)
        lines = r.text().strip().splitlines()
        if r.exit_status != 0 or len(lines) < 2:
            raise RunError(
                f"cannot prepare remedy's state directory on {self.transport.host}: "
                f"{r.stderr.decode(errors='replace').strip()[:300]}"
            )
        self.state_dir, self.python = lines[0], lines[-1]
        if self.python.startswith("MISSING"):
            why = self.python.removeprefix("MISSING").strip("; ")
            raise RunError(
                f"{self.transport.host} has no python3 remedy may run as its host agent"
                + (f" (not executed: {why})" if why else "")
            )
        self.agent_path = f"{self.state_dir}/agent-{AGENT_HASH}.py"
        # the whole content, not its name or size: a put cut off by a kill -9 of remedy leaves
        # a truncated agent behind, and a same-size edit must never run as root
        if not await self._agent_ok(timeout):
            await self.transport.put(self.agent_path, AGENT_SOURCE, mode=0o600)
            if not await self._agent_ok(timeout):
                raise RunError(
                    f"remedy's host agent at {self.agent_path} on {self.transport.host} does "
                    "not match its sha256 after upload"
                )

    async def _agent_ok(self, timeout: float) -> bool:
        """The agent on the host has exactly AGENT_SOURCE's sha256 (checked by the host's own
        python3: hashlib is in every build)."""
        code = (
            "import hashlib,sys\n"
            "try:\n    d = open(sys.argv[1], 'rb').read()\nexcept OSError:\n    d = b''\n"
            "print(hashlib.sha256(d).hexdigest())"
        )
        r = await self.transport.run(
            [self.python, "-I", "-c", code, self.agent_path], timeout=timeout
        )
        return r.exit_status == 0 and r.text().strip() == AGENT_SHA256

    async def agent(
        self,
        *args: str,
        input: bytes | None = None,
        timeout: float = 300,
        ok_codes: tuple[int, ...] = (0,),
    ) -> tuple[int, dict[str, Any]]:
        r = await self.transport.run(
            [self.python, "-I", self.agent_path, *args], input=input, timeout=timeout
        )
        try:
            data = json_loads(r.text().strip().splitlines()[-1]) if r.stdout.strip() else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):  # a host that answers `[]` or `5`: no reply of the agent's
            raise RemedyError(
                f"host agent '{args[0]}' on {self.transport.host} answered with no JSON object: "
                f"{r.text().strip()[-200:]!r}"
            )
        if r.exit_status not in ok_codes:
            msg = data.get("error") or r.stderr.decode(errors="replace").strip()[-400:]
            raise RemedyError(f"host agent '{args[0]}' failed on {self.transport.host}: {msg}")
        return r.exit_status, data

    def run_dir(self, run_id: str) -> str:
        return f"{self.state_dir}/runs/{run_id}"

    def journal_path(self, run_id: str) -> str:
        return f"{self.run_dir(run_id)}/journal.jsonl"

    def cp_dir(self, run_id: str, step: int) -> str:
        return f"{self.run_dir(run_id)}/cp/{step}"
