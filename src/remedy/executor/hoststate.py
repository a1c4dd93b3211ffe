"""remedy's state on a host: where it lives, and the agent that writes it durably.

State lives under the remote user's state directory (`$XDG_STATE_HOME` or
`~/.local/state`)/remedy, mode 0700, files 0600: `lock.json`, `runs/<id>/journal.jsonl`,
`runs/<id>/plan.json`, `runs/<id>/cp/<step>/` checkpoints.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remedy.errors import RemedyError, RunError
from remedy.transport import Transport
from remedy.transport.quote import join

AGENT_SOURCE = (Path(__file__).parent / "agent.py").read_bytes()
AGENT_HASH = hashlib.sha256(AGENT_SOURCE).hexdigest()[:12]


@dataclass
class HostState:
    transport: Transport
    state_dir: str = ""
    python: str = "python3"
    agent_path: str = ""

    async def setup(self, timeout: float = 30) -> None:
        """Find the state dir and a python3, and install the agent (once per version)."""
        script = (
            'd="${XDG_STATE_HOME:-$HOME/.local/state}/remedy"; umask 077; mkdir -p "$d" && '
            'chmod 700 "$d" && printf "%s\\n" "$d" && '
            "{ p=$(command -v python3 || command -v python) && "
            "\"$p\" -c 'import sys; print(sys.executable)' || echo MISSING; }"
        )
        r = await self.transport.run(script, timeout=timeout)
        lines = r.text().strip().splitlines()
        if r.exit_status != 0 or len(lines) < 2:
            raise RunError(
                f"cannot prepare remedy's state directory on {self.transport.host}: "
                f"{r.stderr.decode(errors='replace').strip()[:300]}"
            )
        self.state_dir, self.python = lines[0], lines[-1]
        if self.python == "MISSING":
            raise RunError(f"{self.transport.host} has no python3: remedy's host agent needs it")
        self.agent_path = f"{self.state_dir}/agent-{AGENT_HASH}.py"
        # the whole file, not just its name: a put cut off by a kill -9 of remedy leaves a
        # truncated agent behind (the host's `cat` sees EOF and renames what it got)
        check = await self.transport.run(
            f'[ "$(wc -c < {join([self.agent_path])} 2>/dev/null)" -eq {len(AGENT_SOURCE)} ]',
            timeout=timeout,
        )
        if check.exit_status != 0:
            await self.transport.put(self.agent_path, AGENT_SOURCE, mode=0o600)

    async def agent(
        self,
        *args: str,
        input: bytes | None = None,
        timeout: float = 300,
        ok_codes: tuple[int, ...] = (0,),
    ) -> tuple[int, dict[str, Any]]:
        r = await self.transport.run(
            [self.python, self.agent_path, *args], input=input, timeout=timeout
        )
        try:
            data = json.loads(r.text().strip().splitlines()[-1]) if r.stdout.strip() else {}
        except ValueError:
            data = {}
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
