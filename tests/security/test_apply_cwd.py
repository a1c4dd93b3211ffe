"""A step never imports code from the directory remedy was started in (class 3, applying).

The attack, for real: root runs `remedy run --local` from a directory another user can write
(/tmp, a shared checkout). A `pip-install` step runs `ENV/bin/python -m pip install …`, and
`-m` puts the working directory first on sys.path: uid 65534's `pip/__main__.py` there ran
as root, although the env itself (root's) passed the interpreter check. Every step now runs
from `/`. The control: root's own `pip` (on PYTHONPATH, behind the working directory) is the
one that runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from local_apply import apply_locally

from remedy.model import Facts, Step
from remedy.operations import PipInstall

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a directory another user owns")
NOBODY = 65534


def fake_pip(d: Path, marker: Path, what: str, owner: int) -> None:
    """A `pip` package whose `python -m pip` writes `what` to marker and installs nothing."""
    (d / "pip").mkdir(parents=True)
    (d / "pip" / "__init__.py").write_text("")
    (d / "pip" / "__main__.py").write_text(
        f"import os\nopen({str(marker)!r}, 'a').write({what!r} + ' uid %d\\n' % os.getuid())\n"
    )
    for p in (d, d / "pip", d / "pip" / "__init__.py", d / "pip" / "__main__.py"):
        os.chown(p, owner, owner)


def run_pip_step(tmp_path: Path, pythonpath: Path) -> None:
    """A plan with one pip-install step into root's env (its python a link to this
    interpreter), applied by the real runner through the local transport."""
    env = tmp_path / "opt" / "venv"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    (env / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    facts = Facts(host="scratch", pythons=[{"path": str(env), "python": "3.12"}])
    step = Step(
        action="pip-x",
        title="pin a wheel",
        operation=PipInstall(python=str(env), packages={"nvidia-cuda-cccl": "13.0.85"}),
        probe="static",
    )
    apply_locally(tmp_path, facts, [step], {"PYTHONPATH": str(pythonpath)})


def test_a_step_does_not_import_from_the_directory_remedy_was_started_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    tmp_path.chmod(0o755)
    marker = tmp_path / "ran"
    fake_pip(tmp_path / "shared", marker, "nobody's pip", NOBODY)
    fake_pip(tmp_path / "rootlib", marker, "root's pip", 0)
    monkeypatch.chdir(tmp_path / "shared")
    run_pip_step(tmp_path, tmp_path / "rootlib")
    ran = marker.read_text() if marker.exists() else ""
    assert "nobody's pip" not in ran, "root imported pip from remedy's working directory"
    assert ran == "root's pip uid 0\n"  # control: the step did run python -m pip, as root
