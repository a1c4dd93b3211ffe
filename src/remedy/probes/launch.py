"""launch-probe: start the real server and decide from its log, as soon as the log decides.

How it starts the server
  * a systemd unit (params["unit"], else facts.workload.service): `systemctl restart UNIT`,
    then `journalctl -f -o cat` of THIS invocation only (scripts/launch_unit.sh), so the old
    instance's shutdown lines never count. The unit is left running (it is the service).
  * a command (params["command"], else facts.workload.launch; str for `sh -c` or an argv
    list): run under `env -i` + the workload's environment (scripts/launch_cmd.sh prints the pid, then execs it); the log is its
    stdout+stderr. The server is stopped (SIGTERM, then the stream is closed) once decided,
    unless params["keep_running"].

How it decides (never by sleeping a fixed time)
  * every line goes through the signature scanner (remedy.evidence); the FIRST fatal symptom
    (severity fatal, or an SGLang line that means the launch is dying: "Capture cuda graph
    failed", "Scheduler hit an exception", a child's sigquit/exit code, a failed warmup) decides
    "failed". Lines a benign "Ignore import error" wraps never decide. The next lines that are
    already coming (at most GRACE_S seconds or GRACE_LINES lines) are still read so the result
    carries the whole chain (the nv/detail line after the capture line), then it stops.
  * "The server is fired up and ready to roll!" then GET /health == 200 decides "ok" (the URL:
    params["health_url"], else the "Uvicorn running on http://H:P" line, else --port of the
    command / ExecStart, else port 30000). /health is retried at most HEALTH_TRIES times.
  * the stream ending (command exited) or the unit leaving "active"/"activating" decides
    "failed" with the exit status.

The timeout is a budget, extended while a build is in progress, never a kill switch for one
  * `timeout` (default 600 s) is the base budget. A progress line (ninja "[n/m]", "Capture cuda
    graph", "Capturing batches", "Compiling num tokens", weights/KV-cache steps) pushes the
    deadline to at least now + extend_s (params["extend_s"], default 120 s).
  * when the deadline comes with no decision, the host's /proc is read: if a compiler (ninja,
    nvcc, cicc, ptxas, cc1plus, ld, ...) runs under the server's process tree and has used CPU
    since the last look (or is new), the deadline is extended by extend_s again. A JIT build is
    silent in SGLang's log (FlashInfer's 74 s build inside capture printed nothing), so this
    check, not the log, is what keeps a long cold build alive. Only a stalled or absent build
    lets the budget run out; then the verdict is "no readiness within N s".
  * params["max_s"], when the caller sets one, is an absolute ceiling.

Serving, not only starting (params["generate"]: true for one greedy request, a JSON body, or a
list of bodies): after /health, each body is POSTed to /generate (params["generate_url"], else
next to /health) on the host, one after the other. These requests are also the pre-warm: the
first non-greedy request JIT-builds FlashInfer's sampling module (87-106 s cold on an H200), so
the same rule holds as for the launch: the answer is awaited for extend_s, and for as long
after that as a compiler under the server makes progress; the server's log is still watched, and
a fatal signature or the server exiting decides "failed" at once. A request is answered when the
status is 200 and the body is JSON with `output_ids` or `text`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from remedy.errors import CONNECTION_LOST, CommandTimeout, TransportError
from remedy.fileread import json_loads
from remedy.model import Symptom
from remedy.probes.base import (
    HostDir,
    ProbeContext,
    ProbeResult,
    env_argv,
    tail,
    with_private_home,
)
from remedy.probes.scan import scan
from remedy.resolve import SYSTEMD_DEFAULT_PATH

READY_LINE = "The server is fired up and ready to roll!"
DEATH = {
    "capture-cuda-graph-failed",
    "scheduler-exception",
    "sglang-child-sigquit",
    "sglang-child-exit-code",
    "warmup-failed",
    "sglang-sigterm-received",
}
BENIGN = {"sglang-optional-import-ignored"}
PROGRESS = re.compile(
    r"\[\d+/\d+\]|Capture cuda graph|Capture CUDA graph|Capturing batches|Capturing num tokens"
    r"|Compiling num tokens|Capture piecewise|Load weight (?:begin|end)|Init torch distributed"
    r"|KV Cache is allocated|Memory pool end|Compiling a graph"
)


def unit_dead_rx(unit: str) -> re.Pattern[str]:
    """systemd's own journal lines (INVOCATION_ID-tagged, `-o cat`) saying the unit's main
    process is gone; anchored, so a server line that merely contains the words never counts."""
    u = re.escape(unit)
    return re.compile(
        rf"^{u}: (?:Main process exited, code=|Failed with result '|Deactivated successfully)"
        r"|^Stopped .*\.$"
    )


UVICORN = re.compile(r"Uvicorn running on (https?)://([^:/\s]+):(\d+)")
COMPILERS = {
    "ninja", "nvcc", "cicc", "ptxas", "cc1plus", "cc1", "c++", "g++", "gcc", "cc", "ld",
    "ld.bfd", "ld.gold", "collect2", "cudafe++", "fatbinary", "nvlink", "as",
}  # fmt: skip
GRACE_S = 3.0
GRACE_LINES = 200
HEALTH_TRIES = 5
IDLE_TICK_S = 15.0
CONTEXT_LINES = 20
FOREVER = 30 * 86400.0
GREEDY = {
    "input_ids": [1, 450, 4996, 17354, 1701],
    "sampling_params": {"max_new_tokens": 16, "temperature": 0},
}  # token ids work with and without --skip-tokenizer-init
CLIENT_S = 4 * 3600.0  # the client never gives up first: the probe's deadline decides


def generate_requests(value: object) -> list[dict]:
    """params["generate"] -> the request bodies (true: one greedy request)."""
    if value is True:
        return [GREEDY]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v if isinstance(v, dict) else GREEDY for v in value]
    return []


def answered(text: str) -> tuple[str, str]:
    """The helper's output -> (status, what the body says); status "200" and a JSON body with
    output_ids/text is an answer."""
    m = re.search(r"REMEDY-HTTP (\d+)(.*)", text)
    status = m.group(1) if m else "none"
    body = text.split("REMEDY-BODY ", 1)[1].strip() if "REMEDY-BODY " in text else ""
    if status != "200":
        why = (m.group(2).strip() if m else text.strip()[-200:]) or body[:200]
        return status, why
    try:
        data = json_loads(body)
    except ValueError:
        return "bad-body", f"200 but not JSON: {body[:200]}"
    first = data[0] if isinstance(data, list) and data else data
    if not isinstance(first, dict) or not ("output_ids" in first or "text" in first):
        return "bad-body", f"200 without output_ids/text: {body[:200]}"
    n = len(first.get("output_ids") or [])
    return "200", f"{n} output ids" if n else f"text {str(first.get('text'))[:60]!r}"


@dataclass
class Watch:
    """What the log (and the host) said so far."""

    lines: list[str] = field(default_factory=list)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=CONTEXT_LINES))
    pid: int = 0
    url: str | None = None
    ready_at: float | None = None
    fatal: Symptom | None = None
    fatal_line: int = 0
    extensions: list[str] = field(default_factory=list)
    progress_lines: int = 0
    cpu: dict[int, int] = field(default_factory=dict)
    error: str | None = None
    exit_status: int | None = None
    lost: str | None = None  # the connection dropped under the probe: no verdict on the host


def parse_stat(text: str) -> dict[int, tuple[int, str, int]]:
    """`cat /proc/[0-9]*/stat` -> {pid: (ppid, comm, utime+stime ticks)}."""
    out: dict[int, tuple[int, str, int]] = {}
    for line in text.splitlines():
        lp, rp = line.find("("), line.rfind(")")
        if lp < 0 or rp < lp:
            continue
        try:
            pid = int(line[:lp].strip())
            rest = line[rp + 2 :].split()
            ppid = int(rest[1])
            ticks = int(rest[11]) + int(rest[12])
        except (ValueError, IndexError):
            continue
        out[pid] = (ppid, line[lp + 1 : rp], ticks)
    return out


def compilers_under(
    procs: dict[int, tuple[int, str, int]], root: int
) -> dict[int, tuple[str, int]]:
    """Compiler processes in root's tree (the whole host when root is unknown)."""
    if root and root in procs:
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        tree, todo = set(), [root]
        while todo:
            p = todo.pop()
            if p not in tree:
                tree.add(p)
                todo.extend(children.get(p, ()))
    else:
        tree = set(procs)
    return {p: (procs[p][1], procs[p][2]) for p in tree if procs[p][1] in COMPILERS}


def health_url(ctx: ProbeContext, watch: Watch) -> str:
    if ctx.params.get("health_url"):
        return str(ctx.params["health_url"])
    if watch.url:
        return watch.url
    command = ctx.params.get("command") or getattr(ctx.facts.workload, "launch", None)
    text = " ".join(command) if isinstance(command, list) else str(command or "")
    for svc in ctx.facts.services:
        if svc.name == (ctx.params.get("unit") or ctx.facts.workload.service):
            text += " " + (svc.exec_start or "")
    m = re.search(r"--port[= ](\d+)", text)
    return f"http://127.0.0.1:{m.group(1) if m else 30000}/health"


class LaunchProbe:
    """One launch, watched until the log decides (see the module docstring)."""

    def __init__(self, ctx: ProbeContext) -> None:
        self.ctx = ctx
        self.t = ctx.transport
        wl = ctx.facts.workload
        self.unit: str | None = ctx.params.get("unit") or (
            None if ctx.params.get("command") else wl.service
        )
        # params command, else the workload's own launch command (facts.workload.launch)
        self.command: str | list[str] | None = ctx.params.get("command") or (
            None if self.unit else getattr(wl, "launch", None)
        )
        self.extend_s = float(ctx.params.get("extend_s") or 120.0)
        self.max_s = float(ctx.params["max_s"]) if ctx.params.get("max_s") else None
        self.w = Watch()
        self._client: str | None = None  # _client_python's answer ("" : none)
        self.source = f"launch-probe on {self.t.host}"
        self.unit_dead = unit_dead_rx(self.unit or "")

    async def run(self) -> ProbeResult:
        ctx = self.ctx
        command = self.command
        if not self.unit and not command:
            return self.result(
                False,
                "launch-probe needs a server to start: a systemd unit (workload.service "
                "or params unit) or a command (workload.launch or params command)",
            )
        files = ["http_get.py", "launch_unit.sh" if self.unit else "launch_cmd.sh"]
        async with HostDir(self.t, files) as hd:
            self.hd = hd
            if self.unit:
                argv = ["sh", hd.join("launch_unit.sh"), self.unit]
            else:
                env = with_private_home(await ctx.env(), hd.path)
                cmd = (
                    ["sh", "-c", command] if isinstance(command, str) else [str(a) for a in command]
                )
                argv = env_argv(env, ["sh", hd.join("launch_cmd.sh"), *cmd])
            stream = self.t.stream(argv, timeout=FOREVER)
            queue: asyncio.Queue[str | None] = asyncio.Queue()
            pump = asyncio.create_task(self._pump(stream, queue))
            try:
                ok, detail = await self._watch(queue)
                requests = generate_requests(ctx.params.get("generate"))
                if ok and requests:
                    ok, said = await self._generate(queue, requests)
                    detail += said
                if self.unit is None and not ctx.params.get("keep_running"):
                    await self._stop(queue)
            finally:
                pump.cancel()
                with contextlib.suppress(BaseException):
                    await pump
                with contextlib.suppress(BaseException):
                    await stream.aclose()  # type: ignore[attr-defined]
        return self.result(ok, detail)

    # ---- the stream ----------------------------------------------------------------------
    async def _pump(self, stream: AsyncIterator[bytes], queue: asyncio.Queue[str | None]) -> None:
        """Lines from the host into a queue, so waiting with a deadline never cancels the
        stream itself (cancelling it would kill the server)."""
        try:
            async for raw in stream:
                for part in raw.decode("utf-8", "replace").rstrip("\n").split("\r"):
                    if part.strip():
                        await queue.put(part)
        except CommandTimeout as e:
            self.w.error = str(e)
        except TransportError as e:
            self.w.error = f"lost the log stream: {e}"
            if isinstance(e, CONNECTION_LOST):
                self.w.lost = str(e)
        finally:
            self.w.exit_status = getattr(stream, "exit_status", None)
            await queue.put(None)

    async def _watch(self, queue: asyncio.Queue[str | None]) -> tuple[bool, str]:
        start = time.monotonic()
        deadline = start + self.ctx.timeout
        ceiling = start + self.max_s if self.max_s else None
        last_line = time.monotonic()
        while True:
            now = time.monotonic()
            if ceiling and now >= ceiling:
                return False, f"no decision within the caller's ceiling max_s={self.max_s:g} s"
            wait = max(min(deadline - now, IDLE_TICK_S), 0.0)
            if ceiling:
                wait = min(wait, max(ceiling - now, 0.0))
            try:
                line = await asyncio.wait_for(queue.get(), wait) if wait > 0 else queue.get_nowait()
            except (asyncio.TimeoutError, TimeoutError, asyncio.QueueEmpty):
                line = ""
            if line is None:  # the stream ended
                return False, self._ended()
            if line:
                last_line = time.monotonic()
                verdict = await self._line(line)
                if verdict is not None:
                    if not verdict[0]:
                        await self._grace(queue)
                    return verdict
                if PROGRESS.search(line):
                    self.w.progress_lines += 1
                    deadline = max(deadline, time.monotonic() + self.extend_s)
                continue
            # no line for a while: is the unit still alive? is the budget spent?
            if self.unit and time.monotonic() - last_line >= IDLE_TICK_S:
                state = await self._unit_state()
                if state and state not in ("active", "activating", "reloading"):
                    await self._grace(queue)
                    return False, f"{self.unit} is {state} before the readiness line"
            if time.monotonic() >= deadline:
                building = await self._building()
                elapsed = time.monotonic() - start
                if building:
                    deadline = time.monotonic() + self.extend_s
                    self.w.extensions.append(f"{elapsed:.0f} s: {building}")
                    continue
                return False, (
                    f"no readiness line and no fatal signature within {elapsed:.0f} s "
                    f"(budget {self.ctx.timeout:g} s, extended {len(self.w.extensions)}x), and no "
                    "build in progress under the server"
                )

    async def _line(self, line: str) -> tuple[bool, str] | None:
        w = self.w
        w.lines.append(line)
        w.recent.append(line)
        if line.startswith("REMEDY-LAUNCH-PID "):
            with contextlib.suppress(ValueError):
                w.pid = int(line.split()[1])
            return None
        if line.startswith("REMEDY-LAUNCH-ERROR "):
            said = [ln.strip() for ln in w.lines[:-1] if not ln.startswith("REMEDY-")][-2:]
            why = line[len("REMEDY-LAUNCH-ERROR ") :]
            return False, why + (": " + " ".join(said) if said else "")
        m = UVICORN.search(line)
        if m:
            host = "127.0.0.1" if m.group(2) in ("0.0.0.0", "::", "[::]") else m.group(2)
            w.url = f"{m.group(1)}://{host}:{m.group(3)}/health"
        if self.unit and self.unit_dead.search(line) and w.ready_at is None:
            return False, f"{self.unit} stopped before the readiness line: {line.strip()[:300]}"
        syms = [s for s in scan(list(w.recent), self.source) if s.line == len(w.recent)]
        if not any(s.signature in BENIGN for s in syms):
            for s in syms:
                if s.severity == "fatal" or s.signature in DEATH:
                    w.fatal, w.fatal_line = s, len(w.lines)
                    return (
                        False,
                        f"fatal signature {s.signature} at log line {len(w.lines)}: {s.text.strip()[:300]}",
                    )
        if READY_LINE in line:
            w.ready_at = time.monotonic()
            return await self._health()
        return None

    async def _grace(self, queue: asyncio.Queue[str | None]) -> None:
        """After the decision, read what is already coming (bounded) to complete the chain;
        systemd's own line that the unit's process exited ends it early."""
        end = time.monotonic() + GRACE_S
        for _ in range(GRACE_LINES):
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                line = await asyncio.wait_for(queue.get(), left)
            except (asyncio.TimeoutError, TimeoutError):
                return
            if line is None:
                await queue.put(None)
                return
            self.w.lines.append(line)
            if self.unit and self.unit_dead.search(line):
                return

    def _ended(self) -> str:
        w = self.w
        if w.error:
            return w.error
        st = "" if w.exit_status is None else f" (exit status {w.exit_status})"
        last = next((ln for ln in reversed(w.lines) if not ln.startswith("REMEDY-")), "")
        return f"the server exited{st} before the readiness line; last line: {last.strip()[:300]}"

    # ---- host checks ---------------------------------------------------------------------
    async def _client_python(self) -> str | None:
        """The interpreter that runs http_get.py (as remedy's user, root): the workload's
        Python when remedy.trust passes it (its venv is root's), else the host's python3 on
        systemd's default PATH when that passes, else None. A service user's venv is never
        run as root just to send a GET."""
        if self._client is not None:
            return self._client or None
        from remedy.trust import untrusted_on_path, untrusted_reason

        py = self.ctx.python()
        if py.startswith("/") and not await untrusted_reason(self.t, [], pythons=[py]):
            self._client = py
            return py
        found = await self.t.run(
            ["sh", "-c", "PATH=$1; command -v python3", "sh", SYSTEMD_DEFAULT_PATH], timeout=30
        )
        sys_py = found.text().strip()
        if (
            found.exit_status == 0
            and sys_py.startswith("/")
            and "\n" not in sys_py
            and not await untrusted_on_path(self.t, ["python3"], SYSTEMD_DEFAULT_PATH)
        ):
            self._client = sys_py
            return sys_py
        self._client = ""
        return None

    async def _health(self) -> tuple[bool, str]:
        url = health_url(self.ctx, self.w)
        statuses: list[str] = []
        py = await self._client_python()
        if py is None:
            return False, f"readiness line seen, but no trusted Python to GET {url} with"
        for i in range(HEALTH_TRIES):
            r = await self.t.run([py, self.hd.join("http_get.py"), url, "10"], timeout=30)
            m = re.search(r"REMEDY-HTTP (\d+)", r.text())
            status = m.group(1) if m else f"no answer (exit {r.exit_status})"
            statuses.append(status)
            if status == "200":
                return True, self._ready_detail(url)
            if i < HEALTH_TRIES - 1:
                await asyncio.sleep(1.0)
        return False, f"readiness line seen but GET {url} answered {', '.join(statuses)}"

    async def _generate(
        self, queue: asyncio.Queue[str | None], requests: list[dict]
    ) -> tuple[bool, str]:
        """POST each body to /generate; wait while the server builds, fail on its death."""
        url = self.ctx.params.get("generate_url") or (
            health_url(self.ctx, self.w).rsplit("/health", 1)[0] + "/generate"
        )
        py = await self._client_python()
        if py is None:
            return False, f"; no trusted Python to POST {url} with"
        said: list[str] = []
        for i, body in enumerate(requests, 1):
            t0 = time.monotonic()
            argv = [py, self.hd.join("http_get.py"), url, f"{CLIENT_S:g}", json.dumps(body)]
            task = asyncio.create_task(self.t.run(argv, timeout=CLIENT_S + 60))
            deadline = t0 + self.extend_s
            try:
                while not task.done():
                    while not queue.empty():
                        line = queue.get_nowait()
                        if line is None:
                            await queue.put(None)
                            return (
                                False,
                                f"; the server died during POST {url} #{i}: {self._ended()}",
                            )
                        verdict = await self._line(line)
                        if verdict is not None and not verdict[0]:
                            await self._grace(queue)
                            return False, f"; during POST {url} #{i}: {verdict[1]}"
                    await asyncio.wait({task}, timeout=1.0)
                    if not task.done() and time.monotonic() >= deadline:
                        building = await self._building()
                        if not building:
                            return False, (
                                f"; POST {url} #{i} got no answer within "
                                f"{time.monotonic() - t0:.0f} s and no build in progress"
                            )
                        deadline = time.monotonic() + self.extend_s
                        self.w.extensions.append(
                            f"/generate #{i} {time.monotonic() - t0:.0f} s: {building}"
                        )
                r = task.result()
            except TransportError as e:
                if isinstance(e, CONNECTION_LOST):
                    self.w.lost = str(e)
                return False, f"; POST {url} #{i}: {e}"
            finally:
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
            status, what = answered(r.text())
            took = time.monotonic() - t0
            waited = [e for e in self.w.extensions if e.startswith(f"/generate #{i} ")]
            if waited:
                what += f"; waited on a build {len(waited)}x: {waited[-1]}"
            if status != "200":
                why = await self._fatal_within_grace(queue)
                return False, (
                    f"; POST {url} #{i} answered {status} after {took:.1f} s: {what}"
                    + (f"; the server's log: {why}" if why else "")
                )
            said.append(f"#{i} 200 in {took:.1f} s ({what})")
        return True, f"; POST {url} " + ", ".join(said)

    async def _fatal_within_grace(self, queue: asyncio.Queue[str | None]) -> str:
        """A request that failed because the server is dying: its log says why a moment later."""
        end = time.monotonic() + GRACE_S
        while (left := end - time.monotonic()) > 0:
            try:
                line = await asyncio.wait_for(queue.get(), left)
            except (asyncio.TimeoutError, TimeoutError):
                return ""
            if line is None:
                await queue.put(None)
                return self._ended()
            verdict = await self._line(line)
            if verdict is not None and not verdict[0]:
                await self._grace(queue)
                return verdict[1]
        return ""

    def _ready_detail(self, url: str) -> str:
        w = self.w
        took = (w.ready_at or time.monotonic()) - self.ctx.started
        ext = ""
        if took > self.ctx.timeout and w.progress_lines:
            ext += f"; past the {self.ctx.timeout:g} s budget on {w.progress_lines} progress lines"
        if w.extensions:
            ext += (
                f"; budget extended {len(w.extensions)}x by running compilers "
                f"({'; '.join(w.extensions)})"
            )
        return f"ready in {took:.1f} s: readiness line, then GET {url} = 200{ext}"

    async def _building(self) -> str:
        """'' when no compiler makes progress under the server; else what is building."""
        root = self.w.pid
        if self.unit:
            with contextlib.suppress(TransportError):
                r = await self.t.run(
                    ["systemctl", "show", "-p", "MainPID", "--value", "--", self.unit], timeout=30
                )
                with contextlib.suppress(ValueError):
                    root = int(r.text().strip() or 0) or root
        try:
            r = await self.t.run("cat /proc/[0-9]*/stat 2>/dev/null; true", timeout=30)
        except TransportError:
            return ""
        comps = compilers_under(parse_stat(r.text()), root)
        moving = [
            f"{comm}[{pid}]"
            for pid, (comm, ticks) in sorted(comps.items())
            if pid not in self.w.cpu or ticks > self.w.cpu[pid]
        ]
        self.w.cpu = {pid: ticks for pid, (_, ticks) in comps.items()}
        return ("build in progress: " + ", ".join(moving[:6])) if moving else ""

    async def _unit_state(self) -> str | None:
        try:
            r = await self.t.run(["systemctl", "is-active", "--", self.unit or ""], timeout=30)
        except TransportError:
            return None
        return r.text().strip() or None

    async def _stop(self, queue: asyncio.Queue[str | None]) -> None:
        """Stop a server this probe started: SIGTERM to its pid, wait (bounded) for the stream
        to end; closing the stream afterwards kills whatever is left of its process group."""
        if not self.w.pid or self.w.exit_status is not None:
            return
        with contextlib.suppress(TransportError):
            await self.t.run(["kill", "-TERM", str(self.w.pid)], timeout=30)
        end = time.monotonic() + 15.0
        while (left := end - time.monotonic()) > 0:
            try:
                line = await asyncio.wait_for(queue.get(), left)
            except (asyncio.TimeoutError, TimeoutError):
                return
            if line is None:
                return

    # ---- the result ----------------------------------------------------------------------
    def result(self, ok: bool, detail: str) -> ProbeResult:
        lines = self.w.lines
        symptoms = [s for s in scan([ln for ln in lines], self.source)]
        text = "\n".join(lines)
        return ProbeResult(
            probe=self.ctx.probe,
            ok=ok,
            seconds=round(time.monotonic() - self.ctx.started, 3),
            detail=detail,
            output_tail=tail(text),
            symptoms=symptoms,
            transport_error=None if ok or self.w.fatal else self.w.lost,
        )


async def launch_probe(ctx: ProbeContext) -> ProbeResult:
    return await LaunchProbe(ctx).run()
