"""End to end: collect_facts(LocalTransport()) on a tmp tree holding REAL pip cu13 wheels.

Two venv-shaped trees are built with `pip install --no-deps --target` from the real wheels
(sandbox/cache/wheels when the sandbox has them, else a tmp download, ~3 s):

  skew/    nvidia-cuda-nvcc 13.2.78 + nvidia-nvvm 13.0.88 + crt 13.2.78 + runtime 13.0.96
           (nvcc/cudart skew, no CCCL, no lib64, no libcudart.so, no stub libcuda.so)
  cu130/   the consistent 13.0 set + cccl 13.0.85 (its nvcc.profile links -L$TOP/lib64)

plus torch 2.14.1's and cuda-toolkit 13.0.3's real METADATA and torch/version.py when those
wheels are in the cache (no 900 MB install: the two files are read out of the wheel).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from remedy.facts import collect_facts
from remedy.model import Facts
from remedy.transport import LocalTransport

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "sandbox" / "cache" / "wheels"
SKEW = [
    "nvidia-cuda-nvcc==13.2.78",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.2.78",
    "nvidia-cuda-runtime==13.0.96",
]
CU130 = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-cccl==13.0.85",
]
PYVER = f"{sys.version_info.major}.{sys.version_info.minor}"


def _wheel(d: Path, req: str) -> Path | None:
    name, version = req.split("==")
    pat = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(d.glob(pat))
    return found[0] if found else None


def wheels(reqs: list[str], tmp: Path) -> list[Path]:
    """The wheel files, from the sandbox cache if there, else downloaded once into tmp."""
    out: list[Path] = []
    missing: list[str] = []
    for r in reqs:
        w = _wheel(CACHE, r) if CACHE.is_dir() else None
        w = w or _wheel(tmp, r)
        if w:
            out.append(w)
        else:
            missing.append(r)
    for r in missing:  # one name per call: pip refuses two versions of one name
        rc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp), r],
            capture_output=True,
            text=True,
        )
        if rc.returncode != 0:
            pytest.skip(f"cannot get wheel {r}: {rc.stderr.strip()[-300:]}")
        w = _wheel(tmp, r)
        assert w, r
        out.append(w)
    return out


# Big files no collector reads (~100 MB a set): left out to keep the test fast.
UNREAD = ("/bin/nvlink", "/bin/cudafe++", "/lib/libnvvm.so.4", "/bin/fatbinary")


def unpack(whl: Path, sp: Path) -> None:
    """What `pip install --no-deps --target` does for these wheels (they have no .data and no
    scripts), keeping the unix modes, minus UNREAD."""
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            if info.filename.endswith(UNREAD):
                continue
            dest = sp / info.filename
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(dest, mode)


def make_venv(base: Path, whls: list[Path]) -> Path:
    """A venv-shaped tree: pyvenv.cfg, bin/python, lib/pythonX.Y/site-packages."""
    sp = base / "lib" / f"python{PYVER}" / "site-packages"
    sp.mkdir(parents=True)
    (base / "bin").mkdir()
    os.symlink(sys.executable, base / "bin" / "python")
    (base / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {PYVER}.0\n")
    for w in whls:
        unpack(w, sp)
    return base


def add_dist_files(sp: Path, wheel: Path, members: list[str]) -> None:
    """Copy single files (METADATA, torch/version.py) out of a wheel without installing it."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        for want in members:
            name = next(n for n in names if n.endswith(want))
            dest = sp / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(name))


def cached_venv(name: str, reqs: list[str], dl: Path) -> Path:
    """Unpacked trees are cached across runs (a cache dir, not the temp dir: tests leave
    nothing there), keyed by the wheel files."""
    whls = wheels(reqs, dl)
    key = hashlib.sha256("|".join(w.name for w in whls).encode() + b"v1").hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = cache / "remedy-tests" / "facts-e2e"
    final = root / f"{name}-{key}"
    # bin/python links to the interpreter that made the venv: a tree whose interpreter is gone
    # (another checkout's venv, removed) is made again, not read as a venv without Python
    if not ((final / "pyvenv.cfg").exists() and (final / "bin" / "python").exists()):
        shutil.rmtree(final, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=root, prefix=f".{name}-"))
        make_venv(work / "v", whls)
        with contextlib.suppress(OSError):  # atomic: a concurrent run keeps the winner's copy
            os.rename(work / "v", final)
        shutil.rmtree(work, ignore_errors=True)
    return final.resolve()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("facts-e2e").resolve()
    dl = base / "wheels"
    dl.mkdir()
    src = cached_venv("skew", SKEW, dl)
    skew = base / "skew"  # a private copy-by-symlink: the torch files are added per run
    shutil.copytree(src, skew, symlinks=True, copy_function=os.link)
    cu130 = cached_venv("cu130", CU130, dl)
    sp = skew / "lib" / f"python{PYVER}" / "site-packages"
    have_torch = False
    torch_whl = sorted(CACHE.glob("torch-2.14.1-*.whl")) if CACHE.is_dir() else []
    tk_whl = sorted(CACHE.glob("cuda_toolkit-13.0.3*.whl")) if CACHE.is_dir() else []
    if torch_whl and tk_whl:
        add_dist_files(sp, torch_whl[0], [".dist-info/METADATA", "torch/version.py"])
        add_dist_files(sp, tk_whl[0], [".dist-info/METADATA"])
        have_torch = True
    home = base / "home"
    home.mkdir()
    return {"base": base, "skew": skew, "cu130": cu130, "home": home, "torch": have_torch}


def collect(tree: dict) -> Facts:
    cu130_prefix = tree["cu130"] / "lib" / f"python{PYVER}" / "site-packages" / "nvidia" / "cu13"
    t = LocalTransport(
        "e2e",
        env={
            "HOME": str(tree["home"]),
            "SHELL": "/bin/sh",
            "PATH": f"{tree['skew']}/bin:/usr/bin:/bin",
            "VIRTUAL_ENV": str(tree["skew"]),
            "CUDA_HOME": str(cu130_prefix),
        },
    )
    return asyncio.run(collect_facts(t, timeout=60))


def test_pip_cu13_tree_exact_versions_and_layout_defects(tree: dict) -> None:
    facts = collect(tree)
    sp = tree["skew"] / "lib" / f"python{PYVER}" / "site-packages"
    by_prefix = {t.prefix: t for t in facts.toolkits}
    skew = by_prefix[str(sp / "nvidia" / "cu13")]
    assert skew.kind == "pip-cu13"
    assert skew.python == str(tree["skew"])
    assert (skew.nvcc_version, skew.nvcc_release) == ("13.2.78", "13.2")
    assert skew.ptxas_release == "13.2"
    assert skew.cicc_release == "13.0"  # nvvm 13.0.88 under nvcc 13.2.78
    assert skew.cudart_version == 13000  # runtime 13.0.96 headers under nvcc 13.2: CCCL refuses
    # the pip layout defects: only lib/, only the versioned libcudart, no stub libcuda.so
    assert skew.libs == {"lib": ["libcudart.so.13"]}
    assert "lib64" not in skew.libs and "lib64/stubs" not in skew.libs
    assert skew.cccl.model_dump() == {
        "present": False,
        "nv_target": False,
        "nv_detail": False,
        "include_dir": None,
    }
    assert skew.nvcc_profile_libdir == "lib"
    assert skew.stand_in is None
    want_pip = {
        "nvidia-cuda-crt": "13.2.78",
        "nvidia-cuda-nvcc": "13.2.78",
        "nvidia-cuda-runtime": "13.0.96",
        "nvidia-nvvm": "13.0.88",
    }
    if tree["torch"]:
        want_pip["cuda-toolkit"] = "13.0.3.0"
    assert skew.pip == want_pip

    # found through CUDA_HOME of the login shell (and of the session)
    cu130 = by_prefix[
        str(tree["cu130"] / "lib" / f"python{PYVER}" / "site-packages" / "nvidia" / "cu13")
    ]
    assert (cu130.nvcc_version, cu130.ptxas_release, cu130.cicc_release) == (
        "13.0.88",
        "13.0",
        "13.0",
    )
    assert cu130.nvcc_profile_libdir == "lib64"  # 13.0.88's profile: -L$(TOP)/lib64, absent
    assert cu130.libs == {"lib": ["libcudart.so.13"]}
    assert cu130.cccl.model_dump() == {
        "present": True,
        "nv_target": True,
        "nv_detail": True,
        "include_dir": "include/cccl",
    }
    assert facts.shell_env["CUDA_HOME"] == cu130.prefix


def test_python_env_packages_torch_and_pins(tree: dict) -> None:
    facts = collect(tree)
    env = next(p for p in facts.pythons if p.path == str(tree["skew"]))
    assert env.python == PYVER
    for name, version in {
        "nvidia-cuda-nvcc": "13.2.78",
        "nvidia-nvvm": "13.0.88",
        "nvidia-cuda-crt": "13.2.78",
        "nvidia-cuda-runtime": "13.0.96",
    }.items():
        assert env.packages[name] == version
    if not tree["torch"]:
        pytest.skip("torch/cuda-toolkit wheels not in sandbox/cache/wheels")
    assert env.packages["torch"] == "2.14.1"
    assert env.torch_cuda == "13.0"
    pins = {(r.by, r.package, r.spec) for r in env.requirements}
    # torch pins cuda-toolkit; cuda-toolkit[cudart] (asked for by torch) pins the runtime
    assert ("torch 2.14.1", "cuda-toolkit", "==13.0.3") in pins
    assert ("cuda-toolkit 13.0.3.0", "nvidia-cuda-runtime", "==13.0.96.*") in pins
    assert env.flashinfer_cccl is None and env.triton_ptxas == {}


def test_nvcc_runtime_skew_is_visible_in_one_toolkit(tree: dict) -> None:
    """The CCCL check compares nvcc's release with CUDART_VERSION: both are in the facts."""
    facts = collect(tree)
    sp = tree["skew"] / "lib" / f"python{PYVER}" / "site-packages"
    tk = next(t for t in facts.toolkits if t.prefix == str(sp / "nvidia" / "cu13"))
    major, minor = (int(x) for x in tk.nvcc_release.split("."))
    assert tk.cudart_version != major * 1000 + minor * 10


def test_layout_fix_shows_up(tree: dict, tmp_path: Path) -> None:
    """After the lab's fix (lib64 -> lib, libcudart.so, stub libcuda.so), the facts say so.

    The fixed prefix is a shadow of the cu130 one (symlinks, as make_shadow_cuda_home.sh does)
    so nothing is copied.
    """
    src = tree["cu130"] / "lib" / f"python{PYVER}" / "site-packages" / "nvidia" / "cu13"
    p = tmp_path / "shadow"
    p.mkdir()
    for d in ("bin", "include", "nvvm"):
        os.symlink(src / d, p / d)
    (p / "lib").mkdir()
    for f in (src / "lib").iterdir():
        os.symlink(f, p / "lib" / f.name)
    os.symlink("lib", p / "lib64")
    os.symlink("libcudart.so.13", p / "lib" / "libcudart.so")
    (p / "lib" / "stubs").mkdir()
    (p / "lib" / "stubs" / "libcuda.so").write_bytes(b"")
    t = LocalTransport(
        "e2e",
        env={
            "HOME": str(tree["home"]),
            "SHELL": "/bin/sh",
            "PATH": "/usr/bin:/bin",
            "CUDA_HOME": str(p),
        },
    )
    facts = asyncio.run(collect_facts(t, timeout=60))
    tk = next(x for x in facts.toolkits if x.prefix == str(p))
    assert tk.libs == {
        "lib": ["libcudart.so", "libcudart.so.13"],
        "lib64": ["libcudart.so", "libcudart.so.13"],
        "lib64/stubs": ["libcuda.so"],
        "lib/stubs": ["libcuda.so"],
    }
    assert tk.note and "lib64 -> lib" in tk.note
    assert tk.nvcc_profile_libdir == "lib64"  # now present, so -L$(TOP)/lib64 works
    assert (tk.nvcc_release, tk.cudart_version) == ("13.0", 13000)
