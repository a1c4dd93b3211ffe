"""remedy's unit parser against a REAL systemd 252 (PID 1 in a systemd-nspawn container).

One container (sandbox/sbx, scenario seed-chain-b, tier systemd) serves the whole module:
- 37 GENERATED units (seeded, deterministic) with tricky Environment= syntax, drop-ins in three
  directories and two prefix levels, templates, specifiers, EnvironmentFiles, resets and
  UnsetEnvironment, written in one tar, one daemon-reload, one `systemctl show` for all: the
  `Environment=` line remedy formats must equal systemd's byte for byte, DropInPaths must match,
  and the environment each unit's process really got (`env -0` of a oneshot) must equal
  remedy's effective environment;
- the seed 002 unit (sglang-k26.service): impact_unit() on the real host, the drop-in really
  written and daemon-reloaded, and `systemctl show -p Environment` compared with the preview.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from remedy.errors import InputError
from remedy.knowledge.loader import load_knowledge
from remedy.model import Facts
from remedy.transport import LocalTransport, SSHTransport, Transport
from remedy.units import impact_unit, load_unit, parse_show_environment, read_unit
from remedy.units.syntax import format_show_environment, split_show_list

pytestmark = pytest.mark.systemd

ROOT = Path(__file__).resolve().parents[1]
SBX = ROOT / "sandbox" / "sbx"
FIXTURES = ROOT / "tests" / "fixtures" / "units"
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
OUT = "/run/remedy-eq-out"
# variables systemd adds to every process itself (execute.c build_environment)
SYSTEMD_ADDED = {"INVOCATION_ID", "SYSTEMD_EXEC_PID", "JOURNAL_STREAM"}
CU13 = "/opt/sglang-venv/lib/python3.11/site-packages/nvidia/cu13"
APT13 = "/usr/local/cuda-13.0"


def _why_no_nspawn() -> str | None:
    if os.geteuid() != 0:
        return "needs root (systemd-nspawn, namespaces)"
    if not shutil.which("systemd-nspawn"):
        return "systemd-nspawn is not installed (apt-get install systemd-container)"
    return None


def _sbx_ready() -> bool:
    """sandbox/sbx's systemd tier is prepared (rootfs + seed-chain-b layers)."""
    if not SBX.exists() or os.environ.get("REMEDY_UNITS_OWN_CONTAINER"):
        return False
    doctor = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, check=False)
    try:
        d = json.loads(doctor.stdout or "{}")
    except json.JSONDecodeError:
        return False
    return bool(d.get("systemd_tier")) and d.get("layers", {}).get("seed-chain-b") == "ok"


class NsenterTransport(LocalTransport):
    """Commands run inside a container through nsenter into its PID 1 (no sshd needed)."""

    def __init__(self, pid: int, host: str) -> None:
        super().__init__(host=host)
        self.pid = pid

    async def run(self, argv_or_script, *, timeout, input=None, env=None):  # type: ignore[override]
        script = argv_or_script if isinstance(argv_or_script, str) else shlex.join(argv_or_script)
        argv = ["nsenter", "-t", str(self.pid), "-a", "--", "env", "-i", f"PATH={CLEAN_PATH}",
                "HOME=/root", "LANG=C.UTF-8", "/bin/sh", "-c", script]  # fmt: skip
        return await super().run(argv, timeout=timeout, input=input)


@dataclass
class Host:
    """One real systemd: an sbx tier-2 host (SSH) or remedy's own nspawn container (nsenter)."""

    name: str
    ssh_config: str | None = None
    pid: int | None = None

    def transport(self) -> Transport:
        if self.ssh_config:
            return SSHTransport(self.name, ssh_config=self.ssh_config)
        assert self.pid is not None
        return NsenterTransport(self.pid, self.name)

    def run(self, script: str, input: bytes | None = None, timeout: float = 120) -> bytes:
        async def go() -> bytes:
            t = self.transport()
            try:
                res = await t.run(script, timeout=timeout, input=input)
            finally:
                await t.close()
            if res.exit_status != 0:
                raise AssertionError(
                    f"{script[:200]!r} -> exit {res.exit_status}: {res.stderr.decode()[-2000:]}"
                )
            return res.stdout

        return asyncio.run(go())


@contextlib.contextmanager
def _sbx_host(name: str) -> Iterator[Host]:
    import sandbox_hosts  # the suite's one way to start a host: retried once, then fail fast

    try:
        info = sandbox_hosts.up("seed-chain-b", name).rec
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield Host(name=name, ssh_config=info["ssh_config"])
    finally:
        sandbox_hosts.down(name)


@contextlib.contextmanager
def _own_container(name: str) -> Iterator[Host]:
    """systemd-nspawn -b on an overlay of sbx's cached rootfs, else of this machine's /.

    The fallback when the sandbox's systemd tier is not prepared: no debootstrap, no network,
    no sshd; commands go in with nsenter. Boots in a few seconds.
    """
    cached = sorted(SBX.parent.glob("cache/rootfs-*/usr/lib/systemd/systemd"))
    lower = os.environ.get("REMEDY_UNITS_LOWER") or (str(cached[-1].parents[3]) if cached else "/")
    if not Path(lower, "usr/lib/systemd/systemd").exists():
        pytest.skip(f"no systemd in {lower} to boot")
    base = Path(tempfile.mkdtemp(prefix=f"remedy-{name}-"))
    merged, upper, work = base / "merged", base / "upper", base / "work"
    for d in (merged, upper, work):
        d.mkdir()
    subprocess.run(["mount", "-t", "overlay", f"rmd-{name}", "-o",
                    f"lowerdir={lower},upperdir={upper},workdir={work}", str(merged)], check=True)  # fmt: skip
    (merged / "etc/machine-id").write_text(uuid.uuid4().hex + "\n")
    (merged / "etc/hostname").write_text(name + "\n")
    unit = merged / "etc/systemd/system/sglang-k26.service"
    unit.parent.mkdir(parents=True, exist_ok=True)
    unit.write_bytes((FIXTURES / "sglang-k26.service").read_bytes())
    log = open(base / "console.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        ["systemd-nspawn", "-q", "-D", str(merged), "-M", name, "--register=no", "--keep-unit",
         "--private-network", "--console=read-only", "--link-journal=no", "--resolv-conf=off",
         "--timezone=off", "-b"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        env={"PATH": CLEAN_PATH},
    )  # fmt: skip
    try:
        pid = None
        for _ in range(600):
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
            text = kids.read_text().split() if kids.exists() else []
            if text and Path(f"/proc/{text[0]}/root/run/systemd/private").exists():
                pid = int(text[0])
                break
            if proc.poll() is not None:
                pytest.fail(f"nspawn died: {(base / 'console.log').read_text()[-2000:]}")
            time.sleep(0.05)
        if pid is None:
            pytest.fail("the container's systemd did not come up in 30 s")
        h = Host(name=name, pid=pid)
        h.run("systemctl is-system-running --wait >/dev/null 2>&1 || true", timeout=60)
        yield h
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
        subprocess.run(["umount", "-l", str(merged)], check=False)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    reason = _why_no_nspawn()
    if reason:
        print(f"SKIP real-systemd tests: {reason}")
        pytest.skip(reason)
    name = f"units{os.getpid() % 100000}"
    cm = _sbx_host(name) if _sbx_ready() else _own_container(name)
    with cm as h:
        # the seed unit may start real JIT builds at boot: stop it, these tests only read it
        h.run(
            "systemctl stop sglang-k26.service || true; systemctl is-system-running --wait || true"
        )
        yield h


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------

NAMES = ["RV_A", "RV_B", "RV_C", "RV_D", "RV_E", "RV_F", "RV_G", "RV_H", "LANG", "PATH"]
SPECIFIERS = [
    "%%", "%n", "%N", "%p", "%P", "%i", "%I", "%j", "%J", "%f", "%h", "%u", "%U", "%g", "%G",
    "%t", "%S", "%C", "%L", "%E", "%T", "%V", "%d", "%H", "%l", "%m", "%b", "%v", "%a", "%o",
    "%w", "%W", "%y", "%Y", "%s",
]  # fmt: skip
PLAIN_CHARS = "abcXYZ019_-./:,+@~é日"
QUOTED_BITS = [
    " ", "  ", "x", "é", "日本", "$HOME", "${X}", "'", "=", ";", "#", "*", "?", "[a]", "!", "(",
    ")", "|", "&", "<", ">", "`", "\\\"", "\\\\", "\\x41", "\\101", "\\u00e9", "\\U0001F600",
    "\\s", "\\t", "\\n", "\\a", "%%", "\t",
]  # fmt: skip


@dataclass
class Generated:
    files: dict[str, bytes] = field(default_factory=dict)
    units: list[str] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)  # must fail to start (missing env file)


def _plain(r: random.Random) -> str:
    return "".join(r.choice(PLAIN_CHARS) for _ in range(r.randint(0, 6)))


def _quoted_body(r: random.Random) -> str:
    bits = [r.choice(QUOTED_BITS + SPECIFIERS) for _ in range(r.randint(0, 5))]
    return "".join(bits)


def _word(r: random.Random) -> str:
    n = r.choice(NAMES[:8]) if r.random() < 0.9 else r.choice(NAMES)
    k = r.random()
    if k < 0.25:
        return f"{n}={_plain(r)}"
    if k < 0.45:
        return f'"{n}={_quoted_body(r)}"'
    if k < 0.55:
        body = _quoted_body(r).replace("'", "\\'")
        return f"'{n}={body}'"
    if k < 0.65:
        return f'{n}={_plain(r)}"{_quoted_body(r)}"{_plain(r)}'
    if k < 0.75:
        return f"{n}={r.choice(SPECIFIERS)}{_plain(r)}{r.choice(SPECIFIERS)}"
    if k < 0.8:
        return f"{n}="
    if k < 0.84:
        return r.choice(["1BAD=x", "NOEQ", "A-B=1", f"{n}=%z", f"{n}=\\xff", "=x"])
    return f'"{n}={_plain(r)} {_quoted_body(r)}"'


def _env_line(r: random.Random) -> list[str]:
    words = [_word(r) for _ in range(r.randint(1, 4))]
    seps = [r.choice([" ", "  ", "\t"]) for _ in words]
    text = "".join(w + s for w, s in zip(words, seps, strict=True)).rstrip()
    if r.random() < 0.06:
        text += r.choice([" RV_Z=\\q RV_Y=lost", ' "RV_Z=unbalanced'])
    lead = r.choice(["", "", " ", "\t"])
    line = f"{lead}Environment={text}"
    if r.random() < 0.12 and " " in text:
        cut = text.index(" ")
        first, rest = f"{lead}Environment={text[:cut]}", text[cut + 1 :]
        middle = (
            [r.choice(["# a comment inside a continuation", "; another"])]
            if r.random() < 0.5
            else []
        )
        return [first + " \\", *middle, "  " + rest]
    return [line]


def _noise(r: random.Random) -> list[str]:
    return r.choice(
        [
            ["# comment"],
            ["; comment"],
            [""],
            ["X-Remedy-Note=kept out"],
            ["FooBar=unknown key"],
            ["[X-Ext]", "Anything=goes", "[Service]"],
            ["[Bogus]", "Environment=RV_A=ignored-in-unknown-section", "[Service]"],
            ["no equals sign on this line"],
        ]
    )


def _service_body(r: random.Random, env_files: list[str], allow_reset: bool) -> list[str]:
    lines: list[str] = []
    for _ in range(r.randint(1, 5)):
        lines += _env_line(r)
        if r.random() < 0.3:
            lines += _noise(r)
        if allow_reset and r.random() < 0.1:
            lines.append("Environment=")
        if r.random() < 0.12:
            names = r.sample(NAMES[:8] + ["LANG"], r.randint(1, 2))
            if r.random() < 0.3:
                names.append(f"{r.choice(NAMES[:8])}={_plain(r)}")
            lines.append("UnsetEnvironment=" + " ".join(names))
    if r.random() < 0.05:
        lines.append("PassEnvironment=LANG")
    lines += [f"EnvironmentFile={e}" for e in env_files]
    return lines


def _env_file_content(r: random.Random) -> bytes:
    lines: list[str] = []
    for _ in range(r.randint(1, 6)):
        n = r.choice(NAMES[:8])
        lines.append(
            r.choice(
                [
                    f"{n}={_plain(r)}",
                    f'{n}="dq \\" \\\\ \\$ \\x {_plain(r)}"',
                    f"{n}='sq \" {_plain(r)}'",
                    f"export {n}=exported",
                    "# comment",
                    f"{n}=multi\\\nline",
                    f"  {n} = spaced   ",
                    f"{n}=trailing   ",
                    "NOEQ",
                    f"{n}=a 'b' \"c\"",
                    f"{n}=",
                ]
            )
        )
    return ("\n".join(lines) + ("\n" if r.random() < 0.8 else "")).encode()


DROPIN_DIRS = ["/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system"]
DROPIN_NAMES = ["10-a.conf", "20-b.conf", "50-remedy.conf", "override.conf", "zz.conf"]


def generate(seed: int = 2026, count: int = 32, instances: int = 4) -> Generated:
    """Deterministic units; nothing here knows the expected result: systemd decides."""
    r = random.Random(seed)
    g = Generated()
    header = ["[Unit]", "Description=remedy equivalence {n}", "", "[Service]", "Type=oneshot"]
    exec_lines = ["ExecStart=/usr/bin/env -0", f"StandardOutput=truncate:{OUT}/%n"]
    # shared prefix drop-ins: all remedy-*.service, all remedy-eq-*.service, the template
    g.files["/etc/systemd/system/remedy-.service.d/05-prefix.conf"] = (
        b"[Service]\nEnvironment=RV_PREFIX=etc RV_A=from-prefix\n"
    )
    g.files["/usr/lib/systemd/system/remedy-.service.d/05-prefix.conf"] = (
        b"[Service]\nEnvironment=RV_HIDDEN=must-not-appear\n"
    )
    g.files["/usr/lib/systemd/system/remedy-eq-.service.d/06-eq.conf"] = (
        b'[Service]\nEnvironment="RV_EQ=eq prefix %n"\n'
    )
    g.files["/etc/systemd/system/remedy-tpl@.service.d/07-tpl.conf"] = (
        b"[Service]\nEnvironment=RV_TPL=%i:%I:%f\n"
    )
    names = [f"remedy-eq-{i:02d}.service" for i in range(count)]
    names += [f"remedy-tpl@i{i}.service" for i in range(instances)]
    tpl_body = header + exec_lines + _service_body(r, [], allow_reset=False)
    g.files["/etc/systemd/system/remedy-tpl@.service"] = (
        "\n".join(tpl_body).replace("{n}", "%i") + "\n"
    ).encode()
    for idx, name in enumerate(names):
        env_files: list[str] = []
        if r.random() < 0.35:
            base = f"/etc/remedy-eq/{idx:02d}"
            kind = r.random()
            if kind < 0.4:
                g.files[base + ".env"] = _env_file_content(r)
                env_files.append(base + ".env")
            elif kind < 0.6:
                env_files.append(f"-{base}.missing")
            elif kind < 0.8:
                for part in ("a", "b"):
                    g.files[f"{base}-{part}.env"] = _env_file_content(r)
                env_files.append(f"{base}-*.env")
            else:
                g.files[base + ".env"] = _env_file_content(r)
                g.files[base + ".bad"] = b"RV_A=\xff\xfe\n"
                env_files += [f"-{base}.bad", base + ".env"]
        if name == names[5]:
            env_files.append("/etc/remedy-eq/required-but-missing.env")
            g.failing.add(name)
        if not name.startswith("remedy-tpl@"):
            where = r.choices(DROPIN_DIRS, weights=[7, 1, 2])[0]
            body = header + exec_lines + _service_body(r, env_files, allow_reset=False)
            g.files[f"{where}/{name}"] = ("\n".join(body).replace("{n}", name) + "\n").encode()
        elif env_files:
            g.files[f"/etc/systemd/system/{name}.d/00-envfile.conf"] = (
                "[Service]\n" + "\n".join(f"EnvironmentFile={e}" for e in env_files) + "\n"
            ).encode()
        for _ in range(r.choice([0, 1, 1, 2, 3])):
            d = r.choices(DROPIN_DIRS, weights=[5, 2, 3])[0]
            fn = r.choice(DROPIN_NAMES)
            body = ["[Service]", *_service_body(r, [], allow_reset=True)]
            g.files[f"{d}/{name}.d/{fn}"] = ("\n".join(body) + "\n").encode()
        g.units.append(name)
    return g


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _show_blocks(text: str) -> dict[str, dict[str, str]]:
    """`systemctl show` of several units: blocks separated by blank lines, keyed by Id."""
    units: dict[str, dict[str, str]] = {}
    for block in text.split("\n\n"):
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if "Id" in props:
            units[props["Id"]] = props
    return units


def _dumps(raw: bytes) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for rec in raw.split(b"\x1e")[1:]:
        name, _, data = rec.partition(b"\n")
        env: dict[str, str] = {}
        for item in base64.b64decode(data.strip()).split(b"\0"):
            if item:
                k, _, v = item.decode("utf-8", "surrogateescape").partition("=")
                env[k] = v
        out[name.decode()] = env
    return out


def test_generator_is_deterministic_and_big_enough():
    a, b = generate(), generate()
    assert a.files == b.files and len(a.units) >= 31
    assert any("Environment=" in d.decode() for d in a.files.values())


@dataclass
class Real:
    shown: dict[str, dict[str, str]]  # systemctl show per unit
    dumps: dict[str, dict[str, str]]  # the environment each unit's process got
    base: dict[str, str]  # a unit with no settings: the manager's environment
    start_output: str


def _push_show_start(
    host: Host, files: dict[str, bytes], names: list[str], failing: set[str]
) -> Real:
    """One round trip: write all files, daemon-reload, show all, start all, collect env dumps."""
    files = dict(files)
    files["/etc/systemd/system/remedybase.service"] = (
        f"[Service]\nType=oneshot\nExecStart=/usr/bin/env -0\nStandardOutput=truncate:{OUT}/%n\n"
    ).encode()
    starts = " ".join(n for n in names if n not in failing) + " remedybase.service"
    script = (
        f"rm -rf {OUT}; mkdir -p {OUT} && tar -x -f - -C / && systemctl daemon-reload && "
        f"systemctl show --no-pager -p Id -p Environment -p DropInPaths -p LoadState "
        f"{' '.join(names)} && echo '\x1fSTART' && "
        f"(systemctl start {starts} 2>&1; echo rc=$?) && "
        + (
            f"(systemctl start {' '.join(sorted(failing))} 2>&1; echo failing-rc=$?) && "
            if failing
            else ""
        )
        + "echo '\x1fOUT' && "
        f'for f in {OUT}/*; do printf \'\\036%s\\n\' "${{f##*/}}"; base64 -w0 "$f"; echo; done'
    )
    raw = host.run(script, input=_tar(files), timeout=300)
    show_part, _, rest = raw.partition(b"\x1fSTART\n")
    start_part, _, out_part = rest.partition(b"\x1fOUT\n")
    dumps = _dumps(out_part)
    base = {k: v for k, v in dumps["remedybase.service"].items() if k not in SYSTEMD_ADDED}
    return Real(
        _show_blocks(show_part.decode("utf-8", "surrogateescape")), dumps, base, start_part.decode()
    )


def _read_all(host: Host, names: list[str]) -> dict[str, object]:
    """remedy's view of each unit, read over SSH the way `remedy impact --unit` reads it."""

    async def go() -> dict[str, object]:
        t = host.transport()
        try:

            async def one(n: str) -> object:
                try:
                    return load_unit(await read_unit(t, n))
                except InputError as e:
                    return e

            res = await asyncio.gather(*(one(n) for n in names))
        finally:
            await t.close()
        return dict(zip(names, res, strict=True))

    return asyncio.run(go())


def _compare(
    real: Real, mine: dict[str, object], names: list[str], failing: set[str]
) -> tuple[list[str], int]:
    mismatches: list[str] = []
    compared = 0
    for n in names:
        shown = real.shown[n]
        assert shown["LoadState"] == "loaded", (n, shown)
        u = mine[n]
        if n in failing:
            assert isinstance(u, InputError) and "does not exist" in str(u), u
            continue
        assert not isinstance(u, Exception), (n, u)
        line = format_show_environment(u.environment)
        if line != "Environment=" + shown["Environment"]:
            mismatches.append(
                f"{n}: show\n  systemd: Environment={shown['Environment']}\n  remedy:  {line}"
            )
        if split_show_list(shown.get("DropInPaths", "")) != u.dropin_paths:
            mismatches.append(
                f"{n}: DropInPaths systemd={shown.get('DropInPaths')} remedy={u.dropin_paths}"
            )
        got = {k: v for k, v in real.dumps[n].items() if k not in SYSTEMD_ADDED}
        want = u.process_environment(real.base)
        if got != want:
            diff = {
                k: (got.get(k), want.get(k))
                for k in set(got) | set(want)
                if got.get(k) != want.get(k)
            }
            mismatches.append(f"{n}: process environment (systemd, remedy): {diff}")
        compared += 1
    return mismatches, compared


def test_generated_units_match_real_systemd(host: Host):
    g = generate()
    real = _push_show_start(host, g.files, g.units, g.failing)
    assert "rc=0" in real.start_output, real.start_output
    assert "failing-rc=0" not in real.start_output
    assert (
        "Failed to load environment files"
        in host.run(f"journalctl --no-pager -u {next(iter(g.failing))} || true").decode()
    )
    mine = _read_all(host, g.units)
    mismatches, compared = _compare(real, mine, g.units, g.failing)
    assert not mismatches, "\n".join(mismatches)
    assert compared >= 30


def test_fixture_table_matches_real_systemd(host: Host):
    """tests/fixtures/units/environment.yaml is not remedy's opinion: systemd agrees with it."""
    from test_units_parse import CASES, case_files, case_name

    exec_lines = (
        f"\n[Service]\nType=oneshot\nExecStart=/usr/bin/env -0\nStandardOutput=truncate:{OUT}/%n\n"
    )
    files: dict[str, bytes] = {}
    names: list[str] = []
    for case in CASES:
        uf = case_files(case, extra_unit_lines=exec_lines)
        files[uf.fragment.path] = uf.fragment.data
        for d in uf.dropins:
            files[d.path] = d.data
        for p, t in (case.get("dropins") or {}).items():
            files[p] = t.encode()
        for p, data in uf.env_files.items():
            if data is not None:
                files[p] = data
        names.append(case_name(case))
    real = _push_show_start(host, files, names, set())
    assert "rc=0" in real.start_output, real.start_output
    for case in CASES:
        n = case_name(case)
        shown = real.shown[n]["Environment"]
        assert parse_show_environment(shown) == case["environment"], (case["id"], shown)
        if "show" in case:
            assert "Environment=" + shown == case["show"], case["id"]
        got = {k: v for k, v in real.dumps[n].items() if k not in SYSTEMD_ADDED}
        assert got == {**real.base, **case.get("effective", case["environment"])}, case["id"]
        if "dropin_paths" in case:
            assert split_show_list(real.shown[n]["DropInPaths"]) == case["dropin_paths"]
    mine = _read_all(host, names)
    mismatches, compared = _compare(real, mine, names, set())
    assert not mismatches, "\n".join(mismatches)
    assert compared == len(CASES)


# --------------------------------------------------------------------------------------------
# One reader: facts and probes see the environment the process really got
# --------------------------------------------------------------------------------------------

TEMPLATE_ON_DISK = "remedy-sglang-tpl@.service"  # mentions sglang: facts' file scan finds it


def _env_diff(who: str, n: str, real: Real, env: dict[str, str]) -> list[str]:
    """Where `env` (what remedy says the unit sets) disagrees with the process's environment.

    A variable the unit does not set comes from the manager (or PassEnvironment=), so it must
    equal the manager's own value."""
    got = {k: v for k, v in real.dumps[n].items() if k not in SYSTEMD_ADDED}
    bad = {
        k: (got.get(k), env.get(k, "<from manager>"))
        for k in set(got) | set(env)
        if (env[k] != got.get(k) if k in env else got[k] != real.base.get(k))
    }
    return [f"{who} {n} (systemd, remedy): {bad}"] if bad else []


def _table_files() -> tuple[dict[str, bytes], list[str]]:
    from test_units_parse import CASES, case_files, case_name

    exec_lines = (
        f"\n[Service]\nType=oneshot\nExecStart=/usr/bin/env -0\nStandardOutput=truncate:{OUT}/%n\n"
    )
    files: dict[str, bytes] = {}
    names: list[str] = []
    for case in CASES:
        uf = case_files(case, extra_unit_lines=exec_lines)
        files[uf.fragment.path] = uf.fragment.data
        for d in uf.dropins:
            files[d.path] = d.data
        for p, data in uf.env_files.items():
            if data is not None:
                files[p] = data
        names.append(case_name(case))
    return files, names


def test_facts_and_probes_read_the_environment_systemd_gives(host: Host):
    """facts (one batched collection) and probes (systemctl show + files) use units/' one
    reader: for the generated units and the table, Environment= + EnvironmentFile= (globs,
    `-`, quotes, continuations) - UnsetEnvironment= equals what each process got. A template
    unit file on disk (systemctl show rejects its name) no longer loses the other units."""
    from remedy.facts import collect_facts
    from remedy.probes.base import read_unit_env
    from remedy.resolve import SYSTEMD_DEFAULT_PATH

    g = generate()
    files, table = _table_files()
    files.update(g.files)
    files[f"/etc/systemd/system/{TEMPLATE_ON_DISK}"] = (
        b"[Service]\nType=oneshot\nExecStart=/bin/echo sglang %i\n"
    )
    names = g.units + table
    real = _push_show_start(host, files, names, g.failing)
    assert "rc=0" in real.start_output, real.start_output

    async def go() -> tuple[Facts, dict[str, dict[str, str]]]:
        t = host.transport()
        try:
            facts = await collect_facts(t, services=names + [TEMPLATE_ON_DISK], timeout=240)
            probed = {}
            for n in names:
                if n not in g.failing:
                    probed[n] = (await read_unit_env(t, n))[0]
            return facts, probed
        finally:
            await t.close()

    facts, probed = asyncio.run(go())
    by_name = {s.name: s for s in facts.services}
    mismatches: list[str] = []
    for n in names:
        if n in g.failing:
            assert any(n in x and "missing or unreadable" in x for x in facts.notes), n
            continue
        assert n in by_name, (n, facts.notes[:5])
        svc = by_name[n]
        mismatches += _env_diff("facts", n, real, {**svc.environment, **svc.environment_files_env})
        env = probed[n]
        if "PATH" not in real.dumps[n] and env.get("PATH") == SYSTEMD_DEFAULT_PATH:
            env.pop("PATH")  # probes run commands: systemd's default PATH where none is left
        mismatches += _env_diff("probes", n, real, env)
    assert not mismatches, "\n".join(mismatches)
    assert any(TEMPLATE_ON_DISK in x and "template unit" in x for x in facts.notes)
    assert len(names) - len(g.failing) >= 50


# --------------------------------------------------------------------------------------------
# Seed 002 on the real host
# --------------------------------------------------------------------------------------------


def _seed_facts() -> Facts:
    """The seed 002 host's facts (built-in example) moved to the sandbox's paths, plus the two
    cu13 toolkits a fix can point at: the venv's pip tree (pip layout: lib/, no lib64/) and the
    apt toolkit seed 002 finally installed (cuda-nvcc-13-0, /usr/local/cuda-13.0)."""
    text = (ROOT / "src/remedy/examples/seed-sm120-system-cuda128/facts.yaml").read_text()
    text = text.replace("/root/venv_sglang211", "/opt/sglang-venv").replace(
        "python3.12", "python3.11"
    )
    d = yaml.safe_load(text)
    d["toolkits"] = [t for t in d["toolkits"] if not t["prefix"].endswith("nvidia/cu13")]
    full = {
        "nvcc_release": "13.0",
        "ptxas_release": "13.0",
        "cicc_release": "13.0",
        "cudart_version": 13000,
        "cccl": {
            "present": True,
            "nv_target": True,
            "nv_detail": True,
            "include_dir": "include/cccl",
        },
    }
    d["toolkits"].append(
        {"prefix": CU13, "kind": "pip-cu13", "python": "/opt/sglang-venv", "nvcc_version": "13.0.88",
         "libs": {"lib": ["libcudart.so.13"]}, "nvcc_profile_libdir": "lib64", **full}
    )  # fmt: skip
    d["toolkits"].append(
        {"prefix": APT13, "kind": "system", "nvcc_version": "13.0.88", "nvcc_profile_libdir": "lib64",
         "libs": {"lib64": ["libcudart.so", "libcudart.so.13"], "lib64/stubs": ["libcuda.so"]}, **full}
    )  # fmt: skip
    return Facts.model_validate(d)


def _impact(host: Host, changes: dict[str, str | None]):
    async def go():
        t = host.transport()
        try:
            return await impact_unit(
                t, load_knowledge(), "sglang-k26.service", changes, _seed_facts()
            )
        finally:
            await t.close()

    return asyncio.run(go())


def test_seed_002_dev_null_is_predicted_to_break_jit_consumers(host: Host):
    imp = _impact(host, {"CUDA_HOME": "/dev/null"})
    assert imp.python == "/opt/sglang-venv"
    assert imp.effective_before["OMP_NUM_THREADS"] == "8"
    assert imp.effective_before["PATH"].startswith("/usr/local/cuda-12.8/bin:")
    assert {"sglang-jit-kernel", "flashinfer-jit", "torch-cpp-extension"} <= set(imp.breaks)
    errors = {c.component: c.error for c in imp.impact.consumers if c.breaks}
    assert "/dev/null/bin/nvcc" in errors["sglang-jit-kernel"]
    assert "NotADirectoryError" in errors["flashinfer-jit"]
    assert "/dev/null/include" in errors["torch-cpp-extension"]
    assert not imp.ok


def test_seed_002_pip_cu13_prefix_predicts_the_next_link_of_the_chain(host: Host):
    # the sandbox's own record: CUDA_HOME=<pip cu13 tree> -> "cannot find -lcudart" (no lib64)
    imp = _impact(host, {"CUDA_HOME": CU13})
    rules = {f.rule for f in imp.impact.new_findings}
    assert "toolkit-links-cudart" in rules
    assert "sglang-jit-kernel" in imp.breaks and not imp.ok


def test_seed_002_good_fix_preview_equals_systemd_after_write(host: Host):
    imp = _impact(host, {"CUDA_HOME": APT13})
    assert imp.breaks == [] and imp.ok, imp.warnings
    assert {f.rule for f in imp.impact.fixed_findings} >= {"flashinfer-sm12x-gate"}
    assert imp.dropin.verify is not None and imp.dropin.verify.ran and imp.dropin.verify.ok
    assert imp.restart[0] == "systemctl daemon-reload"
    # write exactly the previewed file, as remedy run will, and ask systemd
    d = imp.dropin
    out = host.run(
        f"mkdir -p {os.path.dirname(d.path)} && cat > {d.path} && systemctl daemon-reload && "
        "systemctl show --no-pager -p Environment -p DropInPaths sglang-k26.service",
        input=d.content.encode(),
    ).decode()
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert "Environment=" + props["Environment"] == imp.show_after
    assert parse_show_environment(props["Environment"]) == imp.environment_after
    assert props["DropInPaths"] == d.path
    assert imp.environment_after["CUDA_HOME"] == APT13
    assert imp.environment_after["OMP_NUM_THREADS"] == "8"
    # a second preview of the same change, now on the changed host, is a no-op
    again = _impact(host, {"CUDA_HOME": APT13})
    assert again.dropin.noop and again.restart == [] and again.changes[0].before == APT13
    host.run(f"rm -f {d.path} && systemctl daemon-reload")
