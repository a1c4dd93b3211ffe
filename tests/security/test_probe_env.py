"""Class 3: a probe run as root must not load code from where the workload's environment says.

The attacks, for real: a service's environment (a unit's Environment= or, typically, its
EnvironmentFile= that the service user owns) names a directory another user owns. The
toolkit, the compiler and the interpreter are root's and pass the owner check, but

* root's `c++` runs `ld` (and `as`) found on PATH: a `ld` uid 65534 owns first on PATH ran
  as root under link-probe;
* ld.so loads LD_PRELOAD into every process the probe starts (root's python among them);
* Python imports PYTHONPATH's `sitecustomize` before the probe's own script;
* the GPU probes ran `nvidia-smi` from the host's PATH without any check (the facts collector
  checks it; the GPU gate did not).

Each leaves a canary file when it runs; the probe must be skipped with the reason and leave
none. The controls (the same code owned by root) show the canary does appear, so the attack
is real and the owner check is what stops it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from test_exec_trust import fake_prefix

from remedy.model import Facts, Gpu
from remedy.probes import run_probe
from remedy.transport.local import LocalTransport

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)  # a trusted parent: only what the test makes below it varies
    return tmp_path


def own(path: Path, uid: int) -> None:
    for dp, _dns, fns in os.walk(path):
        os.chown(dp, uid, uid)
        for n in fns:
            os.chown(os.path.join(dp, n), uid, uid)


def wrapper(bin_dir: Path, name: str, canary: Path) -> None:
    """`name` that notes it ran in the canary, then does the real tool's work."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    f = bin_dir / name
    f.write_text(f'#!/bin/sh\necho "$0 uid $(id -u)" >> {canary}\nexec /usr/bin/{name} "$@"\n')
    f.chmod(0o755)


def preload_lib(d: Path, canary: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    src = d / "evil.c"
    src.write_text(
        "#include <stdio.h>\n__attribute__((constructor)) static void f(void) {"
        f' FILE *c = fopen("{canary}", "a"); if (c) {{ fputs("preload\\n", c); fclose(c); }} }}\n'
    )
    so = d / "evil.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so


def probe(area: Path, name: str, env: dict[str, str]):
    """A probe of a root-owned toolkit (its nvcc a script touching area/canary-nvcc) in the
    workload environment env (the login shell's, as facts recorded it)."""
    prefix = area / "cuda-evil"
    if not prefix.exists():
        fake_prefix(area, area / "canary-nvcc")
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")], shell_env=env)
    return asyncio.run(
        run_probe(name, LocalTransport("local"), facts, params={"prefix": str(prefix)}, timeout=60)
    )


def plant(area: Path, var: str, owner: int) -> dict[str, str]:
    """The environment whose `var` names code uid `owner` wrote (area/canary when it runs)."""
    canary = area / "canary"
    d = area / "svc"
    env = {"PATH": "/usr/bin:/bin"}
    if var == "PATH":
        wrapper(d / "bin", "ld", canary)
        wrapper(d / "bin", "as", canary)
        env["PATH"] = f"{d / 'bin'}:/usr/bin:/bin"
    elif var == "LD_PRELOAD":
        env["LD_PRELOAD"] = str(preload_lib(d / "lib", canary))
    elif var == "FLASHINFER_EXTRA_LDFLAGS":  # gcc looks for ld/collect2 in -B's dir first
        wrapper(d / "bin", "ld", canary)
        (d / "bin" / "collect2").symlink_to("ld")
        env[var] = f"-B{d / 'bin'}/"
    elif var == "PYTHONPATH":
        (d / "py").mkdir(parents=True)
        (d / "py" / "sitecustomize.py").write_text(f"open({str(canary)!r}, 'a').write('py')\n")
        env["PYTHONPATH"] = str(d / "py")
    own(d, owner)
    return env


@needs_root
@pytest.mark.parametrize("var", ["PATH", "LD_PRELOAD", "PYTHONPATH", "FLASHINFER_EXTRA_LDFLAGS"])
def test_code_another_user_names_in_the_environment_is_not_loaded(area: Path, var: str):
    env = plant(area, var, NOBODY)
    res = probe(area, "link-probe", env)
    assert not (area / "canary").exists(), f"link-probe as root ran code {var} named"
    assert not (area / "canary-nvcc").exists()  # refused before any step ran
    assert not res.ok and res.skipped, res.detail
    assert res.skipped.startswith(f"not executed: {var} holds {area}/svc/"), res.skipped
    assert "owned by nobody (uid 65534)" in res.skipped


@needs_root
@pytest.mark.parametrize("var", ["PATH", "LD_PRELOAD", "PYTHONPATH", "FLASHINFER_EXTRA_LDFLAGS"])
def test_control_the_same_code_owned_by_root_is_loaded(area: Path, var: str):
    env = plant(area, var, 0)
    res = probe(area, "link-probe", env)
    assert not res.skipped, res.detail
    assert (area / "canary").exists()  # the attack is real: the environment's code ran


@needs_root
def test_a_missing_directory_is_judged_by_who_could_create_it(area: Path):
    """PATH naming a directory that does not exist yet: nobody's parent could create it."""
    (area / "svc").mkdir()
    os.chown(area / "svc", NOBODY, NOBODY)
    res = probe(area, "preprocess-probe", {"PATH": f"{area}/svc/later/bin:/usr/bin:/bin"})
    assert res.skipped and res.skipped.startswith(f"not executed: PATH holds {area}/svc owned")
    res = probe(area, "preprocess-probe", {"PATH": f"{area}/root-later/bin:/usr/bin:/bin"})
    assert not res.skipped, res.detail  # root's own parent: nobody else can create it


def nvidia_smi(area: Path, owner: int) -> Path:
    b = area / "venv" / "bin"
    b.mkdir(parents=True)
    f = b / "nvidia-smi"
    f.write_text(f"#!/bin/sh\ntouch {area / 'canary-smi'}\necho 'GPU 0: Fake (UUID: GPU-0)'\n")
    f.chmod(0o755)
    own(area / "venv", owner)
    return b


@needs_root
def test_gpu_probes_do_not_run_an_nvidia_smi_another_user_owns(area: Path):
    """root's PATH (the transport's) starts with a venv's bin holding nobody's nvidia-smi."""
    b = nvidia_smi(area, NOBODY)
    t = LocalTransport("local", env={"PATH": f"{b}:/usr/bin:/bin"})
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")])
    res = asyncio.run(run_probe("driver-probe", t, facts, timeout=60))
    assert not (area / "canary-smi").exists(), "the GPU gate ran nobody's nvidia-smi as root"
    assert res.skipped == f"not executed: {b}/nvidia-smi owned by nobody (uid 65534)"


@needs_root
def test_control_gpu_probes_run_a_root_owned_nvidia_smi(area: Path):
    b = nvidia_smi(area, 0)
    t = LocalTransport("local", env={"PATH": f"{b}:/usr/bin:/bin"})
    facts = Facts(gpus=[Gpu(name="g", compute_cap="12.0")])
    asyncio.run(run_probe("driver-probe", t, facts, timeout=60))
    assert (area / "canary-smi").exists()


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({"PATH": "/usr/bin::/bin"}, [("PATH", "/usr/bin"), ("PATH", "/bin")]),
        ({"LD_PRELOAD": "libx.so /opt/a/y.so:/opt/b/z.so"}, ["/opt/a/y.so", "/opt/b/z.so"]),
        # a host compiler (-ccbin, NVCC_CCBIN): also its gcc and g++ should it be a directory
        # (redteam-22; for a file they are missing, so judged by the file itself)
        (
            {"NVCC_PREPEND_FLAGS": "-ccbin /opt/g/bin/g++ -O2"},
            ["/opt/g/bin/g++", "/opt/g/bin/g++/gcc", "/opt/g/bin/g++/g++"],
        ),
        (
            {"NVCC_APPEND_FLAGS": "--compiler-bindir=/opt/g -B/opt/as"},
            ["/opt/g", "/opt/g/gcc", "/opt/g/g++", "/opt/as"],
        ),
        ({"FLASHINFER_EXTRA_CUDAFLAGS": "-Xcompiler=-B/opt/b,-O2 -ccbin g++"}, ["/opt/b"]),
        ({"FLASHINFER_EXTRA_LDFLAGS": "-B /opt/l/ -lfoo"}, ["/opt/l"]),
        ({"PYTHONPATH": "/opt/p/../q"}, ["/opt/q"]),
        (
            {"NVCC_CCBIN": "/opt/g/bin/g++-12"},
            ["/opt/g/bin/g++-12", "/opt/g/bin/g++-12/gcc", "/opt/g/bin/g++-12/g++"],
        ),
        ({"TRITON_PTXAS_PATH": "/opt/t/ptxas"}, ["/opt/t/ptxas"]),
        ({"TRITON_PTXAS_BLACKWELL_PATH": "/opt/t/ptxas-bw"}, ["/opt/t/ptxas-bw"]),
        ({"PYTHONPYCACHEPREFIX": "/opt/pyc", "HOME": "/home/u"}, ["/opt/pyc", "/home/u"]),
    ],
)
def test_env_code_paths_names_every_location(env, want):
    from remedy.trust import env_code_paths

    pairs, why = env_code_paths(env)
    assert why is None
    got = pairs if isinstance(want[0], tuple) else [p for _v, p in pairs]
    assert got == want


@pytest.mark.parametrize(
    "env",
    [
        {"PATH": "bin:/usr/bin"},
        {"LD_LIBRARY_PATH": "lib"},
        {"NVCC_PREPEND_FLAGS": "'"},
        {"FLASHINFER_EXTRA_LDFLAGS": "-Bbin"},
    ],
)
def test_env_code_paths_refuses_what_it_cannot_check(env):
    from remedy.trust import env_code_paths

    _pairs, why = env_code_paths(env)
    assert why and why.startswith("not executed: ")
