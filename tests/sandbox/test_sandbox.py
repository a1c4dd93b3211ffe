"""Tests of the sandbox itself (sandbox/sbx): real hosts, real sshd, real toolchain defects.

Needs root, /usr/sbin/sshd and `scripts/setup-sandbox.sh` having run; otherwise every test is
skipped with the reason. Hosts are named t<pid>-..., so parallel sessions on this machine don't
collide, and every host this module starts is torn down (fixture finalizer + atexit).
The JIT builds of the scenarios (FlashInfer, SGLang) are marked slow (10-60 s each).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SBX = REPO / "sandbox" / "sbx"
SCENARIOS = REPO / "sandbox" / "scenarios"
PROBES = REPO / "sandbox" / "lib" / "probes"
PREFIX = f"t{os.getpid()}"
KEYS = {
    "name",
    "scenario",
    "address",
    "port",
    "user",
    "identity_file",
    "known_hosts",
    "ssh_config",
    "tier",
}

pytestmark = pytest.mark.sandbox


def sbx(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    p = subprocess.run(
        [str(SBX), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and p.returncode != 0:
        raise AssertionError(f"sbx {' '.join(args)} -> rc {p.returncode}: {p.stderr.strip()}")
    return p


def scenario(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name / "scenario.yaml").read_text())


def ssh(host: dict, cmd: str, timeout: float = 120, stdin: str | None = None):
    t0 = time.monotonic()
    p = subprocess.run(
        ["ssh", "-F", host["ssh_config"], host["name"], cmd],
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        check=False,
    )
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t0


_started: set[str] = set()


def _down_started() -> None:
    for name in list(_started):
        subprocess.run([str(SBX), "down", name], capture_output=True, check=False)
        _started.discard(name)


atexit.register(_down_started)


def up(scn: str, suffix: str, *extra: str) -> dict:
    name = f"{PREFIX}-{suffix}"
    _started.add(name)
    p = sbx("up", scn, "--name", name, *extra)
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1, p.stdout
    return json.loads(lines[0])


def down(name: str) -> None:
    sbx("down", name)
    _started.discard(name)


@pytest.fixture(scope="session", autouse=True)
def sandbox_ready():
    if os.geteuid() != 0:
        pytest.skip("sandbox tests need root (namespaces, overlayfs, netns)")
    if not os.access("/usr/sbin/sshd", os.X_OK):
        pytest.skip("/usr/sbin/sshd is missing: run scripts/setup-sandbox.sh")
    p = subprocess.run([str(SBX), "doctor"], capture_output=True, text=True, check=False)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        pytest.skip(f"sbx doctor failed: {p.stderr.strip()}")
    if not doc.get("ssh_tier"):
        pytest.skip(f"sandbox not set up (run scripts/setup-sandbox.sh): {json.dumps(doc)}")
    yield doc
    _down_started()


@pytest.fixture(scope="module")
def chain_a():
    return up("seed-chain-a", "a")


@pytest.fixture(scope="module")
def healthy():
    return up("healthy", "h")


@pytest.fixture(scope="module")
def chain_b(sandbox_ready):
    if not sandbox_ready.get("systemd_tier"):
        pytest.skip(f"systemd tier not ready: {json.dumps(sandbox_ready)}")
    return up("seed-chain-b", "b")


# --------------------------------------------------------------------------------------------
# interface
# --------------------------------------------------------------------------------------------


def test_up_prints_one_json_line_and_strict_ssh_works(chain_a, tmp_path):
    assert set(chain_a) == KEYS
    assert chain_a["tier"] == "ssh" and chain_a["user"] == "root"
    assert chain_a["address"].startswith("127.0.")
    cfg = Path(chain_a["ssh_config"]).read_text()
    assert f"Host {chain_a['name']}" in cfg and "StrictHostKeyChecking yes" in cfg
    rc, out, dt = ssh(chain_a, "true")
    assert rc == 0, out
    rc, out, _ = ssh(chain_a, "hostname; echo $HOME; cat /proc/1/comm")
    assert out.split() == [chain_a["name"], "/root", "bash"]
    # strict host keys: the same config with a known_hosts holding another key is refused
    other = tmp_path / "known_hosts"
    hostpat = (
        chain_a["address"] if chain_a["port"] == 22 else f"[{chain_a['address']}]:{chain_a['port']}"
    )
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True
    )
    other.write_text(f"{hostpat} {' '.join((tmp_path / 'k.pub').read_text().split()[:2])}\n")
    bad = tmp_path / "ssh_config"
    bad.write_text(cfg.replace(chain_a["known_hosts"], str(other)))
    p = subprocess.run(
        ["ssh", "-F", str(bad), chain_a["name"], "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 255 and "Host key verification failed" in p.stderr


def test_list_shows_running_hosts(chain_a):
    lines = [json.loads(x) for x in sbx("list").stdout.splitlines()]
    mine = [h for h in lines if h["name"] == chain_a["name"]]
    assert mine == [chain_a]


def test_errors_are_one_clear_line(chain_a):
    p = sbx("up", "seed-chain-a", "--name", chain_a["name"], check=False)
    assert p.returncode != 0 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "exists already" in p.stderr
    for args in (["up", "no-such-scenario"], ["down", f"{PREFIX}-nosuch"], ["up"]):
        p = sbx(*args, check=False)
        assert p.returncode != 0, args
        assert p.stderr.startswith("sbx: error:") and p.stderr.count("\n") == 1, p.stderr
        assert "Traceback" not in p.stderr


def test_host_is_isolated_and_clean(chain_a, healthy):
    rc, out, _ = ssh(
        chain_a,
        "echo x > /etc/sbx-isolation-probe; ls -d /usr/local/cuda* /root/.pyenv 2>&1; "
        f"ls -A {REPO} | wc -l; cat /etc/pip.conf | grep find-links; ls /srv/wheels | wc -l",
    )
    assert rc == 0
    assert "No such file or directory" in out  # machine's CUDA and pyenv are not visible
    lines = out.strip().splitlines()
    assert lines[-3] == "0"  # the project tree is hidden
    assert int(lines[-1]) > 50  # the wheel cache is there
    assert ssh(healthy, "test -e /etc/sbx-isolation-probe")[0] == 1
    assert not Path("/etc/sbx-isolation-probe").exists()


def test_nvidia_smi_stand_in(chain_a, tmp_path):
    rc, out, _ = ssh(
        chain_a, "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader"
    )
    assert rc == 0
    assert out.strip() == "NVIDIA RTX PRO 6000 Blackwell Workstation Edition, 12.0, 580.159.04"
    h = up("healthy", "gpu", "--gpu", "h200")
    try:
        rec = REPO / "sandbox/lib/nvidia-smi/recordings/h200"
        for n in ("01", "02", "04"):
            args = (rec / f"{n}.args").read_text().strip()
            rc, out, _ = ssh(h, f"nvidia-smi {args}")
            assert out == (rec / f"{n}.stdout").read_text(), args
    finally:
        down(h["name"])


def test_default_limits_and_raised_limits(chain_a):
    rc, out, _ = ssh(chain_a, "/usr/sbin/sshd -T | grep -E '^(maxsessions|maxstartups) '")
    assert out.split() == ["maxsessions", "256", "maxstartups", "256:30:512"], out
    h = up("healthy", "lim", "--default-limits", "--gpu", "none")
    try:
        rc, out, _ = ssh(
            h, "/usr/sbin/sshd -T | grep -E '^(maxsessions|maxstartups) '; command -v nvidia-smi"
        )
        assert out.split() == ["maxsessions", "10", "maxstartups", "10:30:100"], out
    finally:
        down(h["name"])


# --------------------------------------------------------------------------------------------
# the toolchain defects are really there, and the healthy host really builds
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "defect", scenario("seed-chain-a")["expected"]["defects"], ids=lambda d: d["id"]
)
def test_seed_chain_a_defect(chain_a, defect):
    rc, out, dt = ssh(chain_a, defect["probe"])
    assert rc != 0, out
    assert re.search(defect["expect"], out), out[-2000:]
    assert dt < defect["seconds"], f"{dt:.1f}s"


def test_seed_chain_a_facts_are_true(chain_a):
    """The expected facts of the scenario, checked directly with shell commands in the host."""
    tk = scenario("seed-chain-a")["expected"]["facts"]["toolkits"][0]
    py = scenario("seed-chain-a")["expected"]["facts"]["pythons"][0]
    p = tk["prefix"]
    cmd = (
        f"{p}/bin/nvcc --version | sed -n 's/.*release \\([0-9.]*\\),.*/\\1/p'; "
        f"{p}/bin/ptxas --version | sed -n 's/.*release \\([0-9.]*\\),.*/\\1/p'; "
        f"grep -a -o -m1 'cuda_[0-9.]*\\.r[0-9.]*/compiler' {p}/nvvm/bin/cicc | head -1; "
        f"sed -n 's/^#define CUDART_VERSION *\\([0-9]*\\).*/\\1/p' {p}/include/cuda_runtime_api.h; "
        f"ls {p}/lib | grep -E '^(libcudart\\.so|libcuda\\.so)' | tr '\\n' ' '; echo; "
        f"test -e {p}/lib64 && echo lib64 || echo no-lib64; "
        f"test -e {p}/include/cccl/nv/target -o -e {p}/include/nv/target && echo cccl || echo no-cccl; "
        f'{py["path"]}/bin/python -c "import importlib.metadata as m; '
        f"print(' '.join(m.version(d) for d in ['nvidia-cuda-nvcc','nvidia-nvvm','nvidia-cuda-crt','nvidia-cuda-runtime','torch','flashinfer-python','sglang']))\""
    )
    rc, out, _ = ssh(chain_a, cmd)
    assert rc == 0, out
    lines = out.strip().splitlines()
    assert lines[0] == tk["nvcc_release"] and lines[1] == tk["ptxas_release"]
    assert lines[2] == f"cuda_{tk['cicc_release']}.r{tk['cicc_release']}/compiler"
    assert int(lines[3]) == tk["cudart_version"]
    assert lines[4].split() == tk["libs"]["lib"]
    assert lines[5:7] == ["no-lib64", "no-cccl"]
    pip = tk["pip"]
    assert lines[7].split() == [
        pip["nvidia-cuda-nvcc"],
        pip["nvidia-nvvm"],
        pip["nvidia-cuda-crt"],
        pip["nvidia-cuda-runtime"],
        py["packages"]["torch"],
        py["packages"]["flashinfer-python"],
        py["packages"]["sglang"],
    ]


@pytest.mark.parametrize("check", scenario("healthy")["expected"]["works"], ids=lambda c: c["id"])
def test_healthy_builds_and_links(healthy, check):
    rc, out, dt = ssh(healthy, check["probe"])
    assert rc == 0, out[-2000:]
    assert re.search(check["expect"], out)
    assert dt < check["seconds"], f"{dt:.1f}s"


def _jit_cases():
    for scn in ("seed-chain-a", "healthy"):
        for i, j in enumerate(scenario(scn)["expected"]["jit"]):
            yield pytest.param(scn, j, id=f"{scn}-{i}", marks=pytest.mark.slow)


@pytest.mark.parametrize("scn,jit", list(_jit_cases()))
def test_real_jit_builds(request, scn, jit):
    host = request.getfixturevalue("chain_a" if scn == "seed-chain-a" else "healthy")
    probe, _, script = jit["probe"].rpartition(" < ")
    rc, out, _ = ssh(host, probe, timeout=600, stdin=(PROBES / script).read_text())
    assert re.search(jit["expect"], out), out[-3000:]
    assert (rc == 0) == (scn == "healthy"), out[-3000:]


# --------------------------------------------------------------------------------------------
# the systemd tier
# --------------------------------------------------------------------------------------------


@pytest.mark.systemd
def test_systemd_tier_unit_environment(chain_b):
    assert chain_b["tier"] == "systemd" and set(chain_b) == KEYS
    rc, out, _ = ssh(chain_b, "cat /proc/1/comm; systemd-detect-virt")
    assert out.split() == ["systemd", "systemd-nspawn"]
    for d in scenario("seed-chain-b")["expected"]["defects"]:
        rc, out, dt = ssh(chain_b, d["probe"])
        assert rc == d.get("rc", 1), out
        assert re.search(d["expect"], out, re.M), out[-3000:]
        assert dt < d["seconds"], f"{d['id']}: {dt:.1f}s"


@pytest.mark.systemd
def test_systemd_tier_drop_in_changes_the_unit_environment(chain_b):
    dropin = "/etc/systemd/system/sglang-k26.service.d/remedy.conf"
    cmd = (
        f"mkdir -p {os.path.dirname(dropin)} && printf '[Service]\\nEnvironment=CUDA_HOME=/opt/x\\n' > {dropin} "
        "&& systemctl daemon-reload && systemctl show -p Environment -p DropInPaths sglang-k26.service"
        f"; rm -f {dropin}; systemctl daemon-reload"
    )
    rc, out, _ = ssh(chain_b, cmd)
    assert rc == 0 and "CUDA_HOME=/opt/x" in out and f"DropInPaths={dropin}" in out, out


# --------------------------------------------------------------------------------------------
# teardown and concurrency
# --------------------------------------------------------------------------------------------


def _traces(name: str) -> list[str]:
    """What of host `name` is left on the machine: run dir, mounts, processes, netns, allocation."""
    run = REPO / "sandbox" / "run" / name
    left = []
    if run.exists():
        left.append(f"dir {run}")
    left += [
        f"mount {ln.split()[4]}"
        for ln in open("/proc/self/mountinfo")
        if f"/run/{name}/" in ln.split()[4] + "/"
    ]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"/run/{name}/" in cmd or f"-M {name} " in cmd:
            left.append(f"process {pid} {cmd[:80]}")
    for f in Path("/run/remedy-sbx").glob("t*/*"):
        if f'"{run}"' in f.read_text():
            left.append(f"allocation {f}")
    return left


def _alive(pid: int, start: str) -> bool:
    """Still running (a zombie waiting for this machine's PID 1 to reap it counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] != "Z"


@pytest.mark.parametrize("scn", ["seed-chain-a", "healthy", "seed-chain-b"])
def test_down_leaves_nothing_behind(sandbox_ready, scn):
    if scn == "seed-chain-b" and not sandbox_ready.get("systemd_tier"):
        pytest.skip("systemd tier not ready")
    h = up(scn, "gone")
    rec = json.loads((REPO / "sandbox" / "run" / h["name"] / "host.json").read_text())
    assert _traces(h["name"])  # it is really there
    t0 = time.monotonic()
    down(h["name"])
    assert time.monotonic() - t0 < 15
    assert _traces(h["name"]) == []
    assert not _alive(rec["pid"], rec["pid_start"])
    assert not _alive(rec["init_pid"], rec["init_start"])
    if rec.get("netns"):
        assert not Path(f"/run/netns/{rec['netns']}").exists()
        assert not Path(f"/sys/class/net/{rec['veth']}").exists()
    assert (
        subprocess.run(
            ["ssh", "-F", h["ssh_config"], h["name"], "true"], capture_output=True, check=False
        ).returncode
        == 255
    )


def test_hosts_up_concurrently():
    n = 6
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        hosts = list(ex.map(lambda i: up("healthy", f"c{i}", "--gpu", "none"), range(n)))
    try:
        assert len({(h["address"], h["port"]) for h in hosts}) == n
        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            outs = list(ex.map(lambda h: ssh(h, "hostname")[1].strip(), hosts))
        assert outs == [h["name"] for h in hosts]
    finally:
        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            list(ex.map(lambda h: down(h["name"]), hosts))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
