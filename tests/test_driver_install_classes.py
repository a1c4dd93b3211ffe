"""The driver-install classes: kernel module vs user-space driver, driver branch vs GPU (tune-l),
the libcuda CUDA loads vs the kernel driver (tune-n, error 803).

Why: the classes are named from the NVIDIA kernel module's, NVML's and cuInit's own wordings,
which sit next to the CUDA-vs-driver lines in the same logs. Each row is a log (real recorded text from
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

from conftest import diagnosed_log

MODULE = "driver-module-matches-libraries"
BRANCH = "driver-branch-drives-gpu"
NEW = [MODULE, BRANCH]
COMPAT = "compat-libcuda-only-where-supported"  # tune-n: error 803
KMOD = "driver-module-built-for-kernel"  # tune-r: no module built/installed for the kernel
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
    # gpustack/gpustack, corpus ff-3): not tied to the kernel module here; tune-n's class
    (
        [
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error?"
            " Error 803: system has unsupported display driver / cuda driver combination"
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    # --- error 803: the libcuda CUDA loads against the kernel driver (tune-n) -------------
    # torch's warning inside the vLLM cu130 image (recorded: vllm-project/vllm#33116, corpus fo-2)
    (
        [
            "| NVIDIA-SMI 580.105.08             Driver Version: 580.105.08     CUDA Version: 13.0 |",
            "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA"
            " initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error?"
            " Error 803: system has unsupported display driver / cuda driver combination"
            " (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)",
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    # llama.cpp with cuda-compat-12.9 on LD_LIBRARY_PATH, GeForce (recorded: llama.cpp#17542)
    (
        [
            "ggml_cuda_init: failed to initialize CUDA: system has unsupported display driver /"
            " cuda driver combination"
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    # torch's warning wrapped by a terminal inside the string (both halves still name it)
    (
        [
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you"
            " run some cuda functions before calling NumCudaDevices() that might have already set"
            " an error? Error 803: system has",
            "unsupported display driver / cuda driver combination (Triggered internally at"
            " /pytorch/c10/cuda/CUDAFunctions.cpp:119.)",
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    # the names: driver API (XLA/TF's ToString, numba) and runtime (cupy)
    (
        [
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit:"
            " CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda"
            " driver combination"
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    (
        [
            "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    (["CUDA error: cudaErrorSystemDriverMismatch"], COMPAT, [*NEW, *CUDA_DRIVER]),
    # ollama's numeric form of cuInit's return (gpu_info_nvcuda.c nvcuda_init)
    (
        [
            'level=WARN source=gpu.go:605 msg="unknown error initializing cuda driver library'
            " /usr/local/cuda-12.9/compat/libcuda.so.575.57.08: cuda driver library init failure:"
            ' 803. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md"'
        ],
        COMPAT,
        [*NEW, *CUDA_DRIVER],
    ),
    # ... and 804 stays the image's CUDA above the host driver (corpus ff-2, fi-32)
    (
        [
            'level=WARN source=gpu.go:605 msg="unknown error initializing cuda driver library'
            " /usr/local/cuda-13.0/compat/libcuda.so.580.95.05: cuda driver library init failure:"
            ' 804. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md"'
        ],
        "container-driver-satisfies-image",
        [*NEW, COMPAT],
    ),
    (
        [
            "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW"
        ],
        "container-driver-satisfies-image",
        [*NEW, COMPAT],
    ),
    # an NGC image's start-up check: the image needs a newer driver; its compat could not bridge
    (
        [
            "ERROR: This container was built for NVIDIA Driver Release 560.28 or later, but",
            "       version 535.183.01 was detected and compatibility mode is UNAVAILABLE.",
            "       [[System has unsupported display driver / cuda driver combination"
            " (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) cuInit()=803]]",
        ],
        "container-driver-satisfies-image",
        [*NEW, COMPAT],
    ),
    # the bracketed line alone (a cut log) is the same check
    (
        [
            "       [[System has unsupported display driver / cuda driver combination"
            " (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) cuInit()=803]]"
        ],
        "container-driver-satisfies-image",
        [*NEW, COMPAT],
    ),
    # NVML or the kernel module naming a module/library mismatch: the driver's own libcuda
    (
        [
            "Failed to initialize NVML: Driver/library version mismatch",
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you"
            " run some cuda functions before calling NumCudaDevices() that might have already set"
            " an error? Error 803: system has unsupported display driver / cuda driver combination",
        ],
        MODULE,
        [BRANCH, COMPAT, *CUDA_DRIVER],
    ),
    (
        [
            "[ 8957.099615] NVRM: API mismatch: the client has the version 570.148.08, but",
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error?"
            " Error 803: system has unsupported display driver / cuda driver combination",
        ],
        MODULE,
        [BRANCH, COMPAT, *CUDA_DRIVER],
    ),
    # other cuInit failures are not 803's
    (
        [
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit:"
            " CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
        ],
        None,
        [COMPAT],
    ),
    (
        [
            'level=WARN source=gpu.go:605 msg="unknown error initializing cuda driver library'
            " /usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure:"
            ' 999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md"'
        ],
        None,
        [COMPAT],
    ),
    (["cuda driver library init failure: 8030"], None, [COMPAT]),
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
    # --- tune-r: the NVML/NVRM mismatch wordings of the container runtime and Go wrappers ----
    # libnvidia-container lower-cases NVML's string (error_generic.c error_vset)
    (
        [
            "docker: Error response from daemon: failed to create task for container: failed to"
            " create shim task: OCI runtime create failed: runc create failed: unable to start"
            " container process: error during container init: error running hook #0: error"
            " running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
            "nvidia-container-cli: initialization error: nvml error: driver/library version"
            " mismatch: unknown.",
        ],
        MODULE,
        [BRANCH, KMOD, *CUDA_DRIVER],
    ),
    # go-nvlib's default error string, the return code's own name
    (
        ['level=error msg="failed to initialize NVML: ERROR_LIB_RM_VERSION_MISMATCH"'],
        MODULE,
        [BRANCH, KMOD, *CUDA_DRIVER],
    ),
    # the open module's first line alone (osapi.c RmPerformVersionCheck, filled)
    (["[ 1234.567890] NVRM: API mismatch: the client 'nvidia-smi' (pid 4242)"], MODULE, [KMOD]),
    # a lower-case word 'mismatch' of another kind is not NVML's
    (["ERROR: NVML driver version mismatch detected by the operator? no"], None, [MODULE]),
    # --- tune-r: the kernel module built and installed for the running kernel ---------------
    # kmod's modprobe (recorded: cupy/cupy#10295) and its current wording (tools/modprobe.c)
    (
        [
            "Setting up cuda-drivers:amd64 (615.71.09-1ubuntu1) ...",
            "modprobe: FATAL: Module nvidia_drm not found.",
        ],
        KMOD,
        [*NEW, *CUDA_DRIVER],
    ),
    (
        ["modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-1014-gcp"],
        KMOD,
        [*NEW],
    ),
    # DKMS (dkms.in actual_build / autoinstall, filled)
    (
        [
            "Building initial module for 6.8.0-45-generic",
            "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)",
            "Consult /var/lib/dkms/nvidia/580.95.05/build/make.log for more information.",
        ],
        KMOD,
        [*NEW, *CUDA_DRIVER],
    ),
    (
        [
            "Autoinstall on 6.8.0-45-generic failed for module(s) nvidia/580.95.05.",
            "Error! One or more modules failed to install during autoinstall.",
        ],
        KMOD,
        [*NEW],
    ),
    (["Error! Build of nvidia.ko failed for: 6.8.0-45-generic (x86_64)"], KMOD, [*NEW]),
    # akmods (recorded: negativo17/nvidia-driver#188)
    (
        [
            "Checking kmods exist for 6.17.10-300.fc43.aarch64 [  OK  ]",
            "Building and installing nvidia-kmod [FAILED]",
            "Building rpms failed; see /var/cache/akmods/nvidia/590.44.01-1-for-6.17.10-300.fc43"
            ".aarch64.failed.log for details",
        ],
        KMOD,
        [*NEW],
    ),
    # a resolver refusing the kernel-module package (recorded: stackhpc/ansible-slurm-appliance#703)
    (
        [
            "  Problem 1: cannot install the best candidate for the job",
            "   - nothing provides dkms >= 3.1.8 needed by kmod-nvidia-open-dkms-3:575.57.08-1.el9"
            ".noarch from cuda-rhel9-x86_64",
        ],
        KMOD,
        [*NEW],
    ),
    (
        [
            "The following packages have unmet dependencies:",
            " nvidia-driver-580 : Depends: nvidia-dkms-580 (<= 580.95.05-1) but it is not going"
            " to be installed",
            "E: Unable to correct problems, you have held broken packages.",
        ],
        KMOD,
        [*NEW],
    ),
    # apt asked for the DKMS module package itself (apt-private/private-cacheset.cc, cacheset.cc)
    (["E: Package 'nvidia-dkms-615' has no installation candidate"], KMOD, [*NEW]),
    (["E: Unable to locate package nvidia-dkms-615-open"], KMOD, [*NEW]),
    # ... but not for a driver meta-package or a user-space package
    (["E: Unable to locate package nvidia-driver-615-open"], None, [KMOD]),
    # not the NVIDIA driver's module: GDS's nvidia-fs, GDRCopy's gdrdrv, a NIC driver
    (
        [
            "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)",
            "Consult /var/lib/dkms/nvidia-fs/2.24.3/build/make.log for more information.",
        ],
        None,
        [KMOD],
    ),
    (["modprobe: FATAL: Module gdrdrv not found in directory /lib/modules/6.8.0"], None, [KMOD]),
    (["Building and installing nvidia-kmod [  OK  ]"], None, [KMOD]),
    # a module that exists but will not load, and nvidia-smi's verdict, have other causes
    (["modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"], None, [KMOD]),
    (
        [
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            "Make sure that the latest NVIDIA driver is installed and running.",
        ],
        None,
        [KMOD],
    ),
    # a resolver failure about another package names no class
    (
        [
            " Problem: cannot install the best candidate for the job",
            "  - nothing provides python3.12-devel needed by vllm-deps-1.0-1.el9.x86_64",
        ],
        None,
        [KMOD],
    ),
    # an Xid names no class
    (["Xid 78: Guest driver is incompatible with host driver"], None, [KMOD]),
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
        assert not set(ranked) & {*NEW, KMOD}, ranked
    else:
        assert ranked and ranked[0] == first, ranked
    assert not set(ranked) & set(never), ranked


SHOWN: list[tuple[list[str], int]] = [
    (
        [
            "Reading package lists...",
            "E: Package 'cuda-drivers-615' has no installation candidate",
        ],
        2,
    ),
    # tune-r: lines with no error word that the suspicious-line scan now shows, naming no cause
    # (held-out fy-9: an Xid; fy-6's first line: libsolv's job problem)
    (["Xid 78: Guest driver is incompatible with host driver"], 1),
    (
        [
            "[ 1234.5] nvidia-persistenced started",
            "[ 1234.6] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off"
            " the bus.",
        ],
        2,
    ),
    (
        [
            "Last metadata expiration check: 0:00:01 ago.",
            " Problem: cannot install the best candidate for the job",
            "  - nothing provides python3.12-devel needed by vllm-deps-1.0-1.el9.x86_64",
        ],
        2,
    ),
    (
        [
            "Reading package lists...",
            "The following packages have unmet dependencies:",
            " libfoo-dev : Depends: libfoo1 (= 1.2-1) but 1.3-1 is to be installed",
        ],
        2,
    ),
    (
        [
            "Dependencies resolved.",
            "  - package nvidia-driver-3:580.95.05-1.el9.x86_64 from cuda-rhel9-x86_64 is filtered"
            " out by modular filtering",
        ],
        2,
    ),
]


@pytest.mark.parametrize(("lines", "first_line"), SHOWN)
def test_resolver_and_xid_lines_are_shown_and_name_no_cause(
    tmp_path: Path, lines: list[str], first_line: int
) -> None:
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    d = diagnosed_log(log)
    assert d.hypotheses == []
    shown = d.suspicious
    assert shown and shown[0].line == first_line, [(s.line, s.text) for s in shown]
