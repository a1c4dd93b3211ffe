"""A plan's operation parameters are refused with a trailing newline.

The attack: the forms a loaded plan's parameters must have (a variable name, the profile.d
file's slug, a package name, a Debian package, a known package index) were checked with
`re.match` against `^...$`, and Python's `$` also matches just before a final "\\n". So
`name: "cuda-home\\n"` passed and became /etc/profile.d/zz-remedy-cuda-home<NL>.sh and
/etc/.environment.remedy-cuda-home<NL>.tmp (a file name with a newline in the preview, the
checkpoint and the playbook), `torch\\n` a pip argument, `https://download.pytorch.org/whl/
cu128\\n` an index URL that is not the known one. Now every form is a fullmatch.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from remedy.operations import AptInstall, PipInstall, SetEnv

CU = "/usr/local/cuda-12.8"
PY = "/opt/venv"
INDEX = "https://download.pytorch.org/whl/cu128"


@pytest.mark.parametrize(
    "build",
    [
        lambda s: SetEnv(scope="profile", name="cuda-home" + s, set={"CUDA_HOME": CU}),
        lambda s: SetEnv(scope="profile", name="cuda-home", set={"CUDA_HOME" + s: CU}),
        lambda s: SetEnv(scope="profile", name="cuda-home", unset=["FLASHINFER_NVCC" + s]),
        lambda s: PipInstall(python=PY, packages={"torch" + s: "2.8.0"}),
        lambda s: PipInstall(python=PY, packages={"torch": "2.8.0"}, index_url=INDEX + s),
        lambda s: AptInstall(packages=["cuda-nvcc-12-8" + s]),
    ],
    ids=["slug", "set-name", "unset-name", "pip-package", "index-url", "apt-package"],
)
def test_a_final_newline_is_refused_and_the_plain_form_accepted(build):
    build("")  # control: the form itself is valid
    with pytest.raises(ValidationError):
        build("\n")
