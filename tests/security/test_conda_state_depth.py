"""A conda environment's `conda-meta/state`, written by the environment's owner, nested past
the JSON parser's depth is no crash of the facts.

The facts read a `conda run`/`conda activate` unit's `PREFIX/conda-meta/state` (`conda env
config vars set` stores its variables there) with the unit user's rights, up to 64 KiB, and
parse it on the controller. The attack, for real, as root: uid 65534 owns the environment and
fills the file with 64 KiB of `[`: `json.loads` raised RecursionError (no ValueError), an
internal error (exit 70) of every `remedy facts`/`plan` of the host. Now
`facts.services.conda_state_vars` parses with `fileread.json_loads`: no variables. Control: a
real state file's `CUDA_HOME` is read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="an env uid 65534 owns, setpriv"
)
NOBODY = 65534


@pytest.fixture
def env() -> Iterator[Path]:
    """A conda environment uid 65534 owns, in a directory it can reach."""
    base = Path(tempfile.mkdtemp(prefix="remedy-conda-", dir="/tmp"))
    try:
        base.chmod(0o755)
        prefix = base / "envs" / "sglang"
        (prefix / "conda-meta").mkdir(parents=True)
        for d in (base / "envs", prefix, prefix / "conda-meta"):
            os.chown(d, NOBODY, NOBODY)
        yield prefix
    finally:
        shutil.rmtree(base)


def _state_vars(prefix: Path, text: str) -> dict[str, str]:
    """The follow-up script for a `conda run -p PREFIX` unit with User=nobody, run by sh as
    root, then the controller's parse of the state file it read."""
    from remedy.facts.collect import _needs, _State, followup_script
    from remedy.facts.sections import split_sections
    from remedy.facts.services import ServiceFacts, conda_state_file, conda_state_vars
    from remedy.model import Service

    st = prefix / "conda-meta" / "state"
    st.write_text(text)
    os.chown(st, NOBODY, NOBODY)
    svc = Service(
        name="s.service", exec_start=f"/opt/conda/bin/conda run -p {prefix} python -m x",
        sandboxing={"User": "nobody"},
    )  # fmt: skip
    need = _needs(_State(), {}, ServiceFacts(services=[svc], systemd=True))
    need.prefixes, need.interpreters, need.paths = [], [], []
    out = subprocess.run(
        ["sh", "-c", followup_script("TOK", _State(), need)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    state = _State()
    state.absorb(split_sections(out.stdout, "TOK"))
    raw = state.files_read.get(conda_state_file(str(prefix)))
    assert raw, "the state file was not read"
    return conda_state_vars(raw)


def test_a_state_file_nested_past_the_parser_is_no_crash(env: Path):
    deep = '{"env_vars": ' + "[" * 70_000
    assert _state_vars(env, deep) == {}


def test_control_a_real_state_files_vars_are_read(env: Path):
    doc = {"env_vars": {"CUDA_HOME": "/usr/local/cuda-12.8"}}
    assert _state_vars(env, json.dumps(doc)) == {"CUDA_HOME": "/usr/local/cuda-12.8"}
