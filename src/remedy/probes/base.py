"""What every probe shares: the result type, and how a probe decides which toolkit, which
Python, which arch and which environment it runs with.

Why one context object: a probe must reproduce what the *consumer* would do on the host, so
those four choices follow the consumer's own rules (its toolkit lookup order from
knowledge/components.yaml, the workload's service environment, the GPU's arch), and every
probe must make them the same way, or a passing probe would prove nothing about the server.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from remedy.errors import CONNECTION_LOST, CommandTimeout, TransportError
from remedy.fileread import json_loads
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts, Symptom
from remedy.probes.scan import scan
from remedy.resolve import SYSTEMD_DEFAULT_PATH, pick_toolkit, workload_env, workload_python
from remedy.transport.base import CommandResult, Transport
from remedy.transport.quote import check_env_name, quote
from remedy.units.parse import has_glob
from remedy.units.shown import (
    SHOW_ENV_PROPS,
    glob_list_script,
    parse_shown_environment,
    service_environment,
)

TAIL_CHARS = 6000
RESULT_MARK = "REMEDY-RESULT "
SKIP_MARK = "REMEDY-SKIP "


@dataclass
class ProbeResult:
    """The verdict of one probe run. `skipped` says why it could not run here (no GPU, no
    FlashInfer in the env): a skipped probe is never ok."""

    probe: str
    ok: bool
    seconds: float
    detail: str
    output_tail: str
    symptoms: list[Symptom] = field(default_factory=list)
    skipped: str | None = None
    # the connection failed under the probe (not a timeout): the verdict says nothing about
    # the host, so `remedy run` stops as interrupted instead of blaming the step
    transport_error: str | None = None


class ProbeError(Exception):
    """A probe cannot even be set up (no GPU in the facts, no toolkit found): a failed result."""


class ProbeUntrusted(ProbeError):
    """The probe would run a binary or interpreter that someone other than root (or remedy's
    user) can change: it is not run, and the result is skipped with the reason."""


async def require_trusted(
    ctx: ProbeContext,
    paths: Sequence[str] = (),
    pythons: Sequence[str] = (),
    search_path: str | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Raise ProbeUntrusted unless every absolute path (and each interpreter's environment)
    passes remedy.trust's owner/mode check on the host. Bare names (`c++`, $CXX) are what the
    host finds on search_path (the step's PATH), checked the same way; without search_path
    they are not checked. env: the environment the code runs in; every location it names for
    code (PATH's dirs, where the trusted gcc finds `as` and `ld`; LD_PRELOAD; PYTHONPATH…)
    is checked too (remedy.trust.untrusted_env)."""
    from remedy.trust import GCC_PATH_NAMES, untrusted_env, untrusted_on_path, untrusted_reason

    await ctx.env()  # resolves ctx.run_as: whose files are as safe to run as root's
    as_uid = ctx.run_as.uid if ctx.run_as else None
    why = await untrusted_reason(
        ctx.transport,
        [p for p in paths if p.startswith("/")],
        pythons=[p for p in pythons if p.startswith("/")],
        as_uid=as_uid,
    )
    if not why and search_path is not None:
        # (and the `as` and `ld` a checked gcc then finds there: remedy.trust.GCC_PATH_NAMES)
        bare = [p for p in paths if "/" not in p]
        # and every other entry of its dirs: a build runs more by name (clang, make: redteam-27)
        why = await untrusted_on_path(
            ctx.transport, [*bare, *GCC_PATH_NAMES], search_path, as_uid=as_uid, every_entry=True
        )
    if not why and env is not None:
        why = await untrusted_env(ctx.transport, env, as_uid=as_uid)
    if why:
        raise ProbeUntrusted(why)


# --------------------------------------------------------------------------------------------
# whose privileges a probe runs with
# --------------------------------------------------------------------------------------------

# systemd's valid_user_group_name() (relaxed form): what a User=/Group= value may be
_ACCOUNT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,255}$")


@dataclass(frozen=True)
class RunAs:
    """The unit's User=/Group= resolved on the host: a probe of a service runs its code as
    the service does. Two reasons: the service user's own venv (pip's nvcc, FlashInfer) is
    code root must not run, but running it as that user hands nobody anything; and a build
    root can do (write a root-owned cache dir) proves nothing for a server that cannot."""

    user: str
    uid: int
    gid: int

    def argv(self) -> list[str]:
        """setpriv (util-linux) drops to the user with its groups; numbers only, so nothing
        read from the unit reaches the command line; no_new_privs: no setuid way back."""
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--init-groups",
            "--no-new-privs",
            "--",
        ]


# $1 user, $2 group (may be empty): "uid gid" of them, "nosetpriv", or nothing (no such user)
_RESOLVE_ACCOUNT = (
    "command -v setpriv >/dev/null 2>&1 || { echo nosetpriv; exit 0; }; "
    'u=$(id -u -- "$1" 2>/dev/null) || exit 0; '
    'if [ -n "$2" ]; then g=$(getent group -- "$2" | cut -d: -f3); '
    'else g=$(id -g -- "$1" 2>/dev/null); fi; '
    '[ -n "$g" ] && printf "%s %s\\n" "$u" "$g"'
)


async def read_unit_account(transport: Transport, unit: str) -> tuple[RunAs | None, str]:
    """(RunAs, "") for a unit with a static User= other than root, else (None, why the probe
    runs as root: no User=, DynamicUser=, no such user, no setpriv on the host)."""
    r = await transport.run(
        ["systemctl", "show", "--no-pager", "-pUser", "-pGroup", "-pDynamicUser", "--", unit],
        timeout=30,
    )
    if r.exit_status != 0:
        return None, f"systemctl show {unit} -p User exited {r.exit_status}"
    props = dict(line.partition("=")[::2] for line in r.text().splitlines())
    user, group = props.get("User", "").strip(), props.get("Group", "").strip()
    if not user or user in ("root", "0"):
        return None, ""
    if props.get("DynamicUser", "").strip() == "yes":
        return None, f"{unit} has DynamicUser=yes (no fixed account to run as)"
    if not _ACCOUNT.match(user) or (group and not _ACCOUNT.match(group)):
        return None, f"{unit}'s User=/Group= is no account name"
    got = await transport.run(["sh", "-c", _RESOLVE_ACCOUNT, "sh", user, group], timeout=30)
    words = got.text().split()
    if words == ["nosetpriv"]:
        return None, f"no setpriv on the host to run as {unit}'s User={user}"
    if len(words) != 2 or not all(w.isdigit() for w in words):
        return None, f"{unit}'s User={user} (Group={group or '-'}) is no account on the host"
    uid, gid = int(words[0]), int(words[1])
    if uid == 0:
        return None, ""
    return RunAs(user, uid, gid), ""


# --------------------------------------------------------------------------------------------
# arch
# --------------------------------------------------------------------------------------------

_ARCH = re.compile(r"^(?:sm_|compute_)?(\d+)(?:\.(\d+))?([af]?)$")


@dataclass(frozen=True)
class Arch:
    """One GPU architecture, spelled the way each consumer wants it."""

    major: int
    minor: int
    suffix: str = ""  # "" unless the caller pinned one ("12.0f", "sm_120a")

    @classmethod
    def parse(cls, text: str) -> Arch:
        """ "12.0", "12.0a", "sm_120a", "compute_90a", "120", "9.0" -> Arch."""
        m = _ARCH.match(text.strip())
        if not m:
            raise ProbeError(f"cannot read an arch from {text!r} (use e.g. 12.0 or sm_120a)")
        major_s, minor_s, suffix = m.groups()
        if minor_s is None:  # "120" / "sm_120a": the last digit is the minor
            if len(major_s) < 2:
                raise ProbeError(f"cannot read an arch from {text!r}")
            major_s, minor_s = major_s[:-1], major_s[-1]
        return cls(int(major_s), int(minor_s), suffix)

    @property
    def nvcc(self) -> str:
        """-arch for nvcc probes: the arch-specific variant ('a') from SM 9.0 on, as kernels
        for Hopper/Blackwell are built (sm_90a, sm_120a)."""
        suffix = self.suffix or ("a" if self.major >= 9 else "")
        return f"sm_{self.major}{self.minor}{suffix}"

    @property
    def dotted(self) -> str:
        """FLASHINFER_CUDA_ARCH_LIST / TORCH_CUDA_ARCH_LIST form: "12.0". Without a suffix
        FlashInfer applies its own (and its CUDA-version gate); a pinned one bypasses both."""
        return f"{self.major}.{self.minor}{self.suffix}"


# --------------------------------------------------------------------------------------------
# the context
# --------------------------------------------------------------------------------------------

# Each probe's natural consumer: whose flags/lookup it reproduces when the caller names none.
DEFAULT_CONSUMER = {
    "preprocess-probe": "tvm-ffi",
    "sglang-jit-build": "sglang-jit-kernel",
    "torch-ext-build": "torch-cpp-extension",
}


@dataclass
class ProbeContext:
    """Everything a probe needs, resolved once from facts + params."""

    probe: str
    transport: Transport
    facts: Facts
    params: dict[str, Any]
    consumer: str
    arch_arg: str | None
    timeout: float
    started: float = field(default_factory=time.monotonic)
    _env: dict[str, str] | None = None
    _fd: dict[str, Any] | None = None
    env_note: str = ""
    # the unit's User= (set by env()): the probe's code runs as it (None: as remedy's user)
    run_as: RunAs | None = None
    run_as_note: str = ""

    @property
    def fd(self) -> dict[str, Any]:
        """The facts as the plain dict the resolve functions take (dumped once)."""
        if self._fd is None:
            self._fd = self.facts.model_dump()
        return self._fd

    def left(self, floor: float = 5.0) -> float:
        """Seconds left of the probe's budget (at least `floor`, so cleanup can still run)."""
        return max(self.timeout - (time.monotonic() - self.started), floor)

    # ---- toolkit ----------------------------------------------------------------------------
    def toolkit(self) -> tuple[str, str]:
        """(prefix, how it was chosen): params["prefix"] (the action's subject), else the
        toolkit the consumer itself picks under the workload's environment. The prefix gives
        the include and link dirs; which nvcc runs is `nvcc()` (an override such as
        FLASHINFER_NVCC changes the compiler, not $CUDA_HOME/include or lib64)."""
        if self.params.get("prefix"):
            return str(self.params["prefix"]), "params prefix (the step's subject)"
        kb = load_knowledge()
        comp = kb.components.get(self.consumer)
        if comp is None:
            raise ProbeError(f"unknown consumer {self.consumer!r}")
        lookup = comp.toolkit_lookup or kb.components["flashinfer-jit"].toolkit_lookup
        env = self.env_from_facts()
        fd = self.fd
        pick = pick_toolkit(fd, lookup, env)
        if not pick.path:
            raise ProbeError(
                f"{self.consumer} finds no CUDA toolkit under the workload's environment "
                f"(lookup {', '.join(lookup)}): pass params prefix"
            )
        return pick.path, f"{self.consumer} picks it by {pick.how}"

    def nvcc(self, prefix: str) -> str:
        """The nvcc the consumer runs: its override variable (FLASHINFER_NVCC) or prefix/bin."""
        kb = load_knowledge()
        comp = kb.components.get(self.consumer)
        env = self.env_from_facts()
        if (
            not self.params.get("prefix")
            and comp is not None
            and comp.nvcc_override
            and env.get(comp.nvcc_override)
        ):
            return env[comp.nvcc_override]
        return posixpath.join(prefix, "bin", "nvcc")

    # ---- python -----------------------------------------------------------------------------
    def python(self) -> str:
        """The workload's interpreter: params["python"] (an executable or a venv prefix), else
        the workload's Python env from facts, else python3 from PATH."""
        want = self.params.get("python")
        if not want:
            py = workload_python(self.fd)
            # else the interpreter the workload names, though facts did not list it
            want = py["path"] if py else (self.fd.get("workload") or {}).get("python")
        if not want:
            return "python3"
        want = str(want)
        if re.search(r"/python[0-9.]*$", want):
            return want
        return posixpath.join(want, "bin", "python")

    # ---- arch -------------------------------------------------------------------------------
    def arch(self) -> Arch:
        """The `arch` argument, else the first GPU in the facts, else a clear error."""
        if self.arch_arg:
            return Arch.parse(self.arch_arg)
        if self.facts.gpus:
            return Arch.parse(self.facts.gpus[0].compute_cap)
        raise ProbeError("no GPU in the facts: pass arch (e.g. arch='12.0')")

    def arch_or_none(self) -> Arch | None:
        try:
            return self.arch()
        except ProbeError:
            return None

    # ---- environment ------------------------------------------------------------------------
    def env_from_facts(self) -> dict[str, str]:
        env = workload_env(self.fd)
        env.update({k: str(v) for k, v in (self.params.get("env") or {}).items()})
        return env

    async def env(self, *, reread: bool = True) -> dict[str, str]:
        """The workload's environment, as the server gets it.

        For a systemd workload it is re-read on the host (`systemctl show -p Environment
        -p EnvironmentFiles UNIT` + the files; files override Environment=, as in systemd)
        because the step being proved may just have changed a drop-in; facts are the fallback
        when systemctl cannot answer. params["env"] is applied on top.
        """
        if self._env is not None:
            return dict(self._env)
        env = workload_env(self.fd)
        unit = self.facts.workload.service
        self.env_note = "the login shell's environment (facts)" if not unit else ""
        if unit and reread:
            try:
                env, self.env_note = await read_unit_env(self.transport, unit)
                self.run_as, self.run_as_note = await read_unit_account(self.transport, unit)
                if self.run_as:
                    self.env_note += f", run as its User={self.run_as.user}"
            except (ProbeError, TransportError) as e:
                if isinstance(e, CONNECTION_LOST):
                    raise  # no verdict without the host: the caller stops as interrupted
                self.env_note = f"{unit}'s environment from facts ({e})"
        elif unit:
            self.env_note = f"{unit}'s environment from facts"
        env.update({k: str(v) for k, v in (self.params.get("env") or {}).items()})
        self._env = env
        return dict(env)

    def as_workload(self, argv: list[str]) -> list[str]:
        """argv run with the workload's privileges: under the unit's User= when it has one."""
        return [*self.run_as.argv(), *argv] if self.run_as else list(argv)


async def read_unit_env(transport: Transport, unit: str) -> tuple[dict[str, str], str]:
    """A unit's environment as systemd hands it to the service (PATH defaults to systemd's)."""
    r = await transport.run(
        ["systemctl", "show", "--no-pager", *(f"-p{p}" for p in SHOW_ENV_PROPS), "--", unit],
        timeout=30,
    )
    if r.exit_status != 0:
        raise ProbeError(
            f"systemctl show {unit} exited {r.exit_status}: {r.stderr.decode(errors='replace')[-200:]}"
        )
    props: dict[str, list[str]] = {}
    for line in r.text().splitlines():
        key, _, value = line.partition("=")
        if key in SHOW_ENV_PROPS and (value.strip() or key == "Environment"):
            props.setdefault(key, []).append(value)
    shown = parse_shown_environment(props)
    files: dict[str, bytes | None] = {}
    globs: dict[str, list[str]] = {}
    for ref in shown.files:
        paths = [ref.path]
        if has_glob(ref.path):
            listing = await transport.run(glob_list_script(ref.path), timeout=30)
            paths = globs[ref.path] = [p for p in listing.text().splitlines() if p]
        for p in paths:
            try:
                files[p] = await transport.get(p)
            except (OSError, TransportError):
                files[p] = None  # systemd refuses to start without it unless '-': launch shows
    env = service_environment(unit, shown, files, globs).effective
    env.setdefault("PATH", SYSTEMD_DEFAULT_PATH)
    note = f"{unit}'s environment (systemctl show on the host"
    note += f" + {len(shown.files)} EnvironmentFile(s))" if shown.files else ")"
    return env, note


# --------------------------------------------------------------------------------------------
# host work
# --------------------------------------------------------------------------------------------


def script(name: str) -> bytes:
    """A file of src/remedy/probes/scripts, as bytes."""
    return resources.files("remedy.probes").joinpath("scripts", name).read_bytes()


class HostDir:
    """A private temp dir on the host (`mktemp -d`, mode 700) with the probe's scripts put in
    it; removed on exit whatever happened, so a probe leaves nothing behind.

    For a probe run as a unit's User= (``owner``), ``hand_over`` gives the dir to that user
    just before its code runs. After that remedy writes nothing into it (``put`` refuses):
    the user could have put a link where the next file goes."""

    def __init__(
        self, transport: Transport, files: Sequence[str] = (), owner: RunAs | None = None
    ) -> None:
        self.t = transport
        self.files = list(files)
        self.path = ""
        self.owner = owner
        self.handed = False

    async def __aenter__(self) -> HostDir:
        # a dir handed to a unit's user goes in /tmp: root's own TMPDIR may be closed to it.
        # TMPDIR (inherited by `run --local`, the session's over SSH) only when `trusted`
        # takes the new dir by its real path: a directory another user owns or may write in
        # let them rename root's 0700 dir away and put theirs, whose launch_unit.sh/steps.py
        # root then ran (tests/security/test_probe_tmpdir.py); else /tmp, checked the same way
        from remedy.trust import SH_TRUST

        base = "/tmp" if self.owner else "${TMPDIR:-/tmp}"
        r = await self.t.run(
            SH_TRUST
            + f'for b in "{base}" /tmp; do\n'
            + '  d=$(mktemp -d "$b/remedy-probe.XXXXXXXX") || continue\n'
            + '  if trusted "$d"; then printf %s "$RP"; exit 0; fi\n'
            + '  printf \'%s: %s\\n\' "$d" "$WHY" >&2; rm -rf -- "$d"\n'
            + "done\nexit 1\n",
            timeout=30,
        )
        path = r.text().strip()
        if r.exit_status != 0 or not path.startswith("/"):
            raise ProbeError(
                "no private temp dir on the host (mktemp -d in TMPDIR or /tmp, one only root "
                f"can change): {r.stderr.decode(errors='replace')[-300:]}"
            )
        self.path = path
        for name in self.files:
            mode = 0o700 if name.endswith((".sh", ".py")) else 0o600
            await self.t.put(self.join(name), script(name), mode=mode)
        return self

    def join(self, name: str) -> str:
        return posixpath.join(self.path, name)

    async def put(self, name: str, data: bytes, mode: int = 0o600) -> str:
        """Write a file into the dir (only before ``hand_over``); its path."""
        if self.handed:
            raise ProbeError(f"{self.path} belongs to {self.owner.user if self.owner else '?'} now")
        path = self.join(name)
        await self.t.put(path, data, mode=mode)
        return path

    async def hand_over(self) -> None:
        """chown the dir and what remedy put in it to ``owner`` (once; no owner: nothing).
        Safe as root: until now only root could enter the dir, and chown -R does not follow
        links."""
        if self.owner is None or self.handed:
            return
        r = await self.t.run(
            ["chown", "-R", "--", f"{self.owner.uid}:{self.owner.gid}", self.path], timeout=30
        )
        if r.exit_status != 0:
            raise ProbeError(
                f"cannot give {self.path} to {self.owner.user}: "
                f"{r.stderr.decode(errors='replace')[-200:]}"
            )
        self.handed = True

    async def __aexit__(self, *exc: object) -> None:
        if self.path:
            with contextlib.suppress(TransportError):
                await self.t.run(["rm", "-rf", "--", self.path], timeout=60)


def env_argv(env: dict[str, str], argv: Sequence[str]) -> list[str]:
    """`env -i NAME=value ... argv`: the command sees exactly the workload's environment, not
    the SSH login's (a service gets no login environment). Names are validated; values are
    one argv word each, quoted by the transport."""
    words = ["env", "-i"]
    for k, v in env.items():
        words.append(f"{check_env_name(k)}={v}")
    return [*words, *argv]


def with_private_home(env: dict[str, str], home: str) -> dict[str, str]:
    """PATH and HOME always set (a unit has neither unless it says so); HOME in the temp dir
    keeps caches the tools write under ~ (.cache/flashinfer, .triton) out of the real home."""
    out = dict(env)
    out.setdefault("PATH", SYSTEMD_DEFAULT_PATH)
    out.setdefault("HOME", home)
    return out


def output_of(r: CommandResult) -> str:
    text = r.stdout.decode("utf-8", "replace")
    err = r.stderr.decode("utf-8", "replace")
    if err:
        text = text + ("" if not text or text.endswith("\n") else "\n") + err
    return text


def tail(text: str, n: int = TAIL_CHARS) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def result_json(text: str) -> dict[str, Any]:
    """The last REMEDY-RESULT line of a script's output ({} when there is none)."""
    for line in reversed(text.splitlines()):
        if line.startswith(RESULT_MARK):
            try:
                data = json_loads(line[len(RESULT_MARK) :])
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def skip_reason(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(SKIP_MARK):
            return line[len(SKIP_MARK) :].strip()
    return None


def symptoms_of(text: str, source: str) -> list[Symptom]:
    """Symptoms of a probe's output; the REMEDY-RESULT summary line is ours, not the tool's,
    so it is blanked (kept as an empty line so line numbers still match the output)."""
    lines = ["" if ln.startswith(RESULT_MARK) else ln for ln in text.splitlines()]
    return scan(lines, source)


ERROR_TIERS = (
    r"fatal\s*:|fatal error|#error|cannot find -l|requires CUDA|No such file|Not a directory"
    r"|not found|undefined reference|no kernel image|CUDA_ERROR|cudaError",
    r"error:|Error:|Exception",
    r"FAILED|failed",
)


def first_error_line(text: str) -> str:
    """The most telling line of a failure, for the one-line detail: the first line of the
    strongest tier (a compiler's fatal line beats the Python exception that wraps it)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("REMEDY-", "File ", "nvcc warning"))]
    for pat in ERROR_TIERS:
        for ln in lines:
            if re.search(pat, ln):
                return ln[:300]
    return lines[-1][:300] if lines else ""


def timeout_result(ctx: ProbeContext, e: CommandTimeout, out: str = "") -> ProbeResult:
    return ProbeResult(
        probe=ctx.probe,
        ok=False,
        seconds=round(time.monotonic() - ctx.started, 3),
        detail=f"timed out: {e}",
        output_tail=tail(out),
        symptoms=symptoms_of(out, f"{ctx.probe} on {ctx.transport.host}") if out else [],
    )


def q(value: str) -> str:
    """Shell-quote one value (for the few script strings built here)."""
    return quote(value)
