"""The driver-install classes (tune-l): kernel module vs user-space driver, driver branch vs GPU.

Why: both classes are named from the NVIDIA kernel module's and NVML's own wordings, which sit
next to the CUDA-vs-driver lines in the same logs. Each row is a log (real recorded text from
tests/fixtures/corpus, or the upstream format string filled as the emitter fills it, cited in
knowledge/signatures.yaml) and the class log-only diagnosis must rank first, or None where no
class may be named, and the classes that must NOT be ranked at all. The negative rows keep the
new classes off the lines other classes own (driver-supports-cuda and the rest) and off NVRM
lines that name another driver failure (a GPU off the bus, no GPU at all).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

MODULE = "driver-module-matches-libraries"
BRANCH = "driver-branch-drives-gpu"
NEW = [MODULE, BRANCH]
CUDA_DRIVER = [
    "driver-supports-cuda",
    "driver-supports-build-cuda",
    "driver-runs-ptx",
    "container-driver-satisfies-image",
]

CASES: list[tuple[list[str], str | None, list[str]]] = [
    # --- kernel module vs user-space libraries --------------------------------------------
    # nvidia-smi after a driver install (recorded: zzzhouuu/truenas-nvidia-drivers#19)
    (
        [
            "root@truenas[/]# nvidia-smi",
            "Failed to initialize NVML: Driver/library version mismatch",
            "NVML library version: 580.178",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026",
        ],
        MODULE,
        [BRANCH, *CUDA_DRIVER],
    ),
    # the open module's banner (cpnr/computing#109)
    (
        [
            "$ nvidia-smi",
            "Failed to initialize NVML: Driver/library version mismatch",
            "NVML library version: 580.159",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.126.09  Release Build"
            "  (dvs-builder@U22-I3-AM02-24-3)  Wed Jan  7 22:51:36 UTC 2026",
        ],
        MODULE,
        [BRANCH, *CUDA_DRIVER],
    ),
    # NVML's older wording as nvitop prints it (XuehaiPan/nvitop#41)
    (["NVML ERROR: RM has detected an NVML/RM version mismatch."], MODULE, CUDA_DRIVER),
    # the kernel's refusal, old wording (recorded: nvidiavgpuarchive/index#1) ...
    (
        [
            "[ 8957.099615] NVRM: API mismatch: the client has the version 570.148.08, but",
            "[ 8957.099615] NVRM: this kernel module has the version 570.148.06.  Please",
            "[ 8957.099615] NVRM: make sure that this kernel module and all NVIDIA driver",
        ],
        MODULE,
        [BRANCH, *CUDA_DRIVER],
    ),
    # ... and RmPerformVersionCheck's current one (osapi.c at 595.45.04, filled)
    (
        [
            "NVRM: API mismatch: the client 'nvidia-smi' (pid 4242)",
            "NVRM: has the version 580.95.05, but this kernel module has",
            "NVRM: the version 580.82.07.  Please make sure that this",
        ],
        MODULE,
        [BRANCH, *CUDA_DRIVER],
    ),
    # --- driver branch / module flavour vs GPU --------------------------------------------
    # open nvidia.ko on a Pascal Tesla P4 (recorded: zzzhouuu/truenas-nvidia-drivers#20)
    (
        [
            "$ nvidia-smi",
            "No devices found",
            "[   87.358035] NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1bb3)",
            "               NVRM: installed in this system is not supported by open",
            "               NVRM: nvidia.ko because it does not include the required GPU",
            "               NVRM: System Processor (GSP).",
            "[  988.289884] NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x24:0x72:1603)",
        ],
        BRANCH,
        [MODULE, *CUDA_DRIVER],
    ),
    # the vGPU host variant (osapi.c, filled)
    (
        [
            "NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:1db4)",
            "NVRM: installed in this vGPU host system is not supported by",
            "NVRM: open nvidia.ko.",
        ],
        BRANCH,
        [MODULE, *CUDA_DRIVER],
    ),
    # a GPU outside the release (print_unsupported, filled)
    (
        [
            "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)",
            "NVRM: installed in this system is not supported by the",
            "NVRM: NVIDIA 550.54.14 driver release.",
        ],
        BRANCH,
        [MODULE, *CUDA_DRIVER],
    ),
    # 595 dropped Pascal: the legacy message (recorded: NixOS/nixos-hardware#1828)
    (
        [
            "Apr 13 16:41:14 nixos kernel: NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed"
            " in this system>",
            "                              NVRM:  supported through the NVIDIA 580.xx Legacy"
            " drivers. Please",
            "                              NVRM:  visit http://www.nvidia.com/object/unix.html for"
            " more",
            "                              NVRM:  information.  The 595.58.03 NVIDIA driver will"
            " ignore",
            "                              NVRM:  this GPU.  Continuing probe...",
            "Apr 13 16:41:14 nixos kernel: NVRM: No NVIDIA GPU found.",
        ],
        BRANCH,
        [MODULE, *CUDA_DRIVER],
    ),
    # nv-pci.c's probe (filled)
    (["NVRM: ignoring the legacy GPU 0000:01:00.0"], BRANCH, [MODULE, *CUDA_DRIVER]),
    # --- lines the new classes must not take ---------------------------------------------
    # a driver too old for the CUDA runtime stays driver-supports-cuda
    (
        ["RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"],
        "driver-supports-cuda",
        NEW,
    ),
    # error 803 of a cuda-compat libcuda picked by the container's ld cache (recorded:
    # gpustack/gpustack, unknown/ff-3.log): not tied to the kernel module here
    (
        [
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error?"
            " Error 803: system has unsupported display driver / cuda driver combination"
        ],
        None,
        NEW,
    ),
    # torch's own verdict on an old GPU is the wheel's, not the driver's
    (
        [
            "NVIDIA GeForce GTX 1050 with CUDA capability sm_61 is not compatible with the current"
            " PyTorch installation."
        ],
        "wheel-has-gpu-arch",
        NEW,
    ),
    # a GPU off the bus is not a branch problem (osapi.c, filled)
    (
        [
            "NVRM: The NVIDIA GPU 0000:3b:00.0",
            "NVRM: (PCI ID: 10de:2330) installed in this system has",
            "NVRM: fallen off the bus and is not responding to commands.",
        ],
        None,
        NEW,
    ),
    # the shared first line alone, 'No NVIDIA GPU found' alone, nvidia-smi's verdict alone
    (["NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1bb3)"], None, NEW),
    (["Apr 13 16:41:14 nixos kernel: NVRM: No NVIDIA GPU found."], None, NEW),
    (["$ nvidia-smi", "No devices were found"], None, NEW),
    (["[  988.289884] NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x24:0x72:1603)"], None, NEW),
    # the module's ordinary banners
    (
        [
            "[    6.252567] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06",
            "[    6.860482] NVRM: GPU at 0000:01:00.0 has software scheduler ENABLED",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026",
        ],
        None,
        NEW,
    ),
]


def _ranked(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    symptoms, _suspicious, wrappers = scan_logs([log])
    return [
        h.rule for h in diagnose(load_knowledge(), None, symptoms, wrappers=wrappers).hypotheses
    ]


@pytest.mark.parametrize(("lines", "first", "never"), CASES)
def test_driver_install_family(
    tmp_path: Path, lines: list[str], first: str | None, never: list[str]
) -> None:
    ranked = _ranked(tmp_path, lines)
    if first is None:
        assert not set(ranked) & set(NEW), ranked
    else:
        assert ranked and ranked[0] == first, ranked
    assert not set(ranked) & set(never), ranked
