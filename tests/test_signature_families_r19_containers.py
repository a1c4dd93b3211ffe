"""The container engine not handing a container its GPU (tune-k), as a table.

Why: container-runtime-provides-gpu must be named for every engine's wording of "no NVIDIA
runtime / no usable CDI spec" (Docker, Podman, containerd via the CDI library, ramalama, the NVIDIA
hook) and must not take the driver-vs-image check (container-driver-satisfies-image) nor a
missing library inside a container that was never asked for a GPU. Rows are corpus lines or the
upstream format strings filled as the emitter fills them (sources in knowledge/signatures.yaml).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from family_table import check_family

C = "container-runtime-provides-gpu"

# (log lines, class ranked first or None for "no class", classes that must not be ranked at all)
CASES: list[tuple[list[str], str | None, list[str]]] = [
    # moby daemon/errors.go: --gpus with no NVIDIA device driver registered (fh-8)
    (
        [
            "  /usr/bin/docker start 4d15a1238263",
            '  Error response from daemon: could not select device driver "" with capabilities:'
            " [[gpu]]",
            "  Error: Docker start fail with exit code 1",
        ],
        C,
        ["container-driver-satisfies-image"],
    ),
    (
        [
            'docker: Error response from daemon: could not select device driver "nvidia" with'
            " capabilities: [[gpu]]."
        ],
        C,
        [],
    ),
    # moby daemon/runtime_unix.go: --runtime=nvidia with the runtime not in daemon.json (fq-3)
    (["docker: Error response from daemon: unknown or invalid runtime name: nvidia"], C, []),
    # ... never another runtime name (a typo of runc is no GPU set-up)
    (["docker: Error response from daemon: unknown or invalid runtime name: runsc"], None, [C]),
    # CDI library pkg/cdi/cache.go under Podman's and Docker's wrappers (fl-1, fi-14)
    (["Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=0"], C, []),
    (["Error: error setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all"], C, []),
    (
        [
            "docker: Error response from daemon: CDI device injection failed: unresolvable CDI"
            " devices nvidia.com/gpu=all"
        ],
        C,
        [],
    ),
    # pkg/cdi/spec.go: a spec the engine's CDI parser rejects (fi-13)
    (
        [
            "The following error was triggered when refreshing the CDI registry: failed to load CDI"
            ' Spec failed to parse CDI Spec "/etc/cdi/nvidia.yaml": failed to unmarshal CDI Spec:'
            ' error unmarshaling JSON: while decoding JSON: json: unknown field "additionalGids"'
        ],
        C,
        [],
    ),
    # ramalama common.py find_in_cdi / check_nvidia (fi-3)
    (
        [
            "Device all does not have a CDI configuration",
            "No CDI configuration found for all",
            'You can use the "nvidia-ctk cdi generate" command from the ',
        ],
        C,
        [],
    ),
    # nvidia-container-runtime-hook hook_config.go assertModeIsLegacy, both wordings (fq-4)
    (
        [
            "docker: Error response from daemon: failed to create task for container: error"
            " running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as"
            " 'csv'",
            "invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus"
            " flag) is not supported. Please use the NVIDIA Container Runtime (e.g. specify the"
            " --runtime=nvidia flag) instead",
        ],
        C,
        [],
    ),
    (
        [
            "invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus"
            " flag) is not supported. Please use the NVIDIA Container Runtime instead.: unknown."
        ],
        C,
        [],
    ),
    # a CDI spec's hook path absent on the host (fs-4) ...
    (
        [
            "error running createContainer hook #0: fork/exec /usr/bin/nvidia-ctk: no such file or"
            " directory"
        ],
        C,
        [],
    ),
    # ... never some other hook binary
    (
        [
            "error running createContainer hook #0: fork/exec /usr/libexec/oci/hooks.d/foo: no such"
            " file or directory"
        ],
        None,
        [C],
    ),
    # libnvidia-container xfuncs.h xdlopen: the hook finds no NVML on the host. Since tune-bu
    # (session 40, round 58's giw-1) the plain line names no class: no driver on the host, a WSL2
    # host too old for GPUs and a wrong driver root all print it (the snap variant keeps C)
    (
        [
            "stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: load"
            " library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or"
            " directory: unknown"
        ],
        None,
        ["needed-files-provided", "runtime-libs-match-cuda-major"],
    ),
    # the driver-vs-image requirement stays container-driver-satisfies-image's
    (
        [
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please"
            " update your driver to a newer version, or use an earlier cuda container: unknown"
        ],
        "container-driver-satisfies-image",
        [C],
    ),
    # a container run without --gpus (fi-5): the image's binary misses libcuda, no engine error
    (
        [
            "$ docker run -it --rm ghcr.io/leejet/stable-diffusion.cpp:master-cuda",
            "/sd-cli: error while loading shared libraries: libcuda.so.1: cannot open shared object"
            " file: No such file or directory",
        ],
        None,
        [C],
    ),
]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    check_family(tmp_path, lines, first, never)
