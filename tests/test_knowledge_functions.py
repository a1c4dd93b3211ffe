"""The knowledge function registry: every function rules and actions may call has a docstring,
and the ones over CUDA facts answer from knowledge/*.yaml (cuda-releases.yaml,
cuda-tables.yaml) as upstream documents them."""

from __future__ import annotations

import pytest
from packaging.version import Version

from remedy.knowledge.loader import load_knowledge


@pytest.fixture(scope="module")
def fns():
    return load_knowledge().functions


def test_every_registered_function_says_what_it_is_for(fns):
    registry = {**fns.statics(), **fns.bind({}, {})}
    missing = sorted(n for n, f in registry.items() if not (f.__doc__ or "").strip())
    assert not missing, f"knowledge functions without a docstring: {missing}"
    assert set(registry) == fns.names()


CASES = [
    # versions
    ("ver", ("13.0.88+cu13",), Version("13.0.88")),
    ("ver", ("not a version",), None),
    ("rel", ("12.8.93",), "12.8"),
    ("rel", ("V12.8",), None),
    ("major_of", ("12.8.93",), 12),
    ("cudart_release", (12080,), "12.8"),
    ("cudart_int", ("13.0",), 13000),
    # cuda-releases.yaml
    ("ptx_isa", ("12.8",), Version("8.7")),
    ("ptx_isa", ("13.0",), Version("9.0")),
    ("min_driver", ("12.8",), "570.26"),
    ("min_cuda_for", ("12.0",), "12.8"),  # sm_120 (RTX PRO 6000) needs CUDA 12.8
    ("min_cuda_for", ("9.0",), "11.8"),
    ("min_cuda_for_target", ("12.0f",), "12.9"),  # family targets came with 12.9
    ("dropped_in", ("6.1",), "13.0"),  # CUDA 13.0 removed offline compilation for Pascal
    ("dropped_in", ("9.0",), None),
    ("apt_packages", ("12.8",), ["cuda-nvcc-12-8", "cuda-cudart-dev-12-8", "cuda-cccl-12-8"]),
    ("wheel", ("13.0", "nvidia-cuda-nvcc"), "13.0.88"),
    ("release_wheels", ("11.8",), {}),
    # cuda-tables.yaml
    ("compat_driver", ("12.4",), "525.60.13"),
    ("compat_driver", ("13.1",), "580.65.06"),
    ("max_gcc_for", ("12.3",), 12),
    ("max_gcc_for", ("12.8",), 14),
    ("max_gcc_for", ("10.2",), None),
    ("min_arch_for", ({"flashinfer-python": "0.6"},), ("7.5", "flashinfer-python",
     "flashinfer/jit/core.py check_cuda_arch: 'FlashInfer requires GPUs with sm75 or higher'")),
    ("min_arch_for", ({"torch": "2.9"},), None),
    # arch lists (FLASHINFER_CUDA_ARCH_LIST, TORCH_CUDA_ARCH_LIST)
    ("arch_list_valid", ("12.0a 9.0",), True),
    ("arch_list_valid", ("bogus",), False),
    ("arch_list_suffixed", ("9.0 12.0a",), True),
    ("arch_list_covers", ("8.9+PTX", "12.0"), True),
    ("arch_list_covers", ("8.9", "12.0"), False),
    # server command lines
    ("exec_flag", ("python -m sglang.launch_server --tp 8", "--tp"), "8"),
    ("exec_flag", ("python -m sglang.launch_server --tp=4", "--tp"), "4"),
    ("with_flag", ("python -m sglang.launch_server", "--disable-cuda-graph"),
     "python -m sglang.launch_server --disable-cuda-graph"),
    # systemd
    ("dropin_dir", ("sglang.service",), "/etc/systemd/system/sglang.service.d"),
    # a unit's literal $PATH written out (systemd.exec(5): no expansion in Environment=)
    ("path_expanded", ("/opt/v/bin:$PATH",),
     "/opt/v/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("path_expanded", ("${PATH}:/usr/bin:$HOME/bin:/opt/x",),
     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/x"),
    ("path_expanded", ("$HOME/bin",), None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "args", "want"), CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_static_functions(fns, name, args, want):
    assert fns.statics()[name](*args) == want


def test_functions_over_facts():
    """The bound functions read one facts snapshot and never raise on a missing fact."""
    fns = load_knowledge().functions
    facts = {
        "toolkits": [
            {"prefix": "/usr/local/cuda-12.8", "aliases": ["/usr/local/cuda"],
             "ptxas_release": "12.8", "libs": {"lib64": ["libcudart.so", "libcudart.so.12"]}},
        ],
        "host_compilers": {"gcc-12": "12.2.0", "gcc-15": "15.1.0"},
        "services": [{"name": "s.service", "exec_start": "python -m sglang.launch_server --tp 2"}],
        "workload": {"service": "s.service"},
    }  # fmt: skip
    b = fns.bind(facts, {})
    assert b["tk_at"]("/usr/local/cuda")["prefix"] == "/usr/local/cuda-12.8"
    assert b["nvcc_owner"]("/usr/local/cuda/bin/nvcc")["prefix"] == "/usr/local/cuda-12.8"
    assert b["missing_libs"](facts["toolkits"][0], ["lib64"], ["cudart", "cuda"]) == ["libcuda.so"]
    assert b["cudart_soname"](facts["toolkits"][0]) == "libcudart.so.12"
    assert b["gcc_choices"]("12.8") == ["/usr/bin/gcc-12"]  # gcc 15 is newer than 12.8 takes
    assert b["ptxas_choices"]({"compute_cap": "12.0"}) == ["/usr/local/cuda-12.8/bin/ptxas"]
    assert b["ptxas_choices"]({"compute_cap": "11.0"}) == []  # sm_110 needs CUDA 13.0
    assert b["server_cmdline"]() == "python -m sglang.launch_server --tp 2"
    assert b["tp_size"]() == 2
    assert b["apt_release_of"]("/usr/local/cuda-12.8") == "12.8"
    empty = fns.bind({}, {})
    assert empty["tk_at"]("/x") is None and empty["server_cmdline"]() is None
    assert empty["tp_size"]() == 1 and empty["nccl_wheel"](None) is None


def test_provider_lookups_load_the_provider_table_only_when_called() -> None:
    """The render context's provider lookups answer as remedy.knowledge.providers' own
    functions do, and importing that module waits for the first call (a fresh interpreter:
    `diagnose --log` renders hypotheses with them in the context and calls none)."""
    import subprocess
    import sys

    from remedy.knowledge import providers as pv
    from remedy.knowledge.functions import provider_functions

    fns = provider_functions()
    py = {"version": "3.12.3", "packages": {"nvidia-cuda-nvcc-cu12": "12.8.93"}}
    assert fns["provider_version"](py, "nvidia-cuda-nvcc-cu12") == pv.provider_version(
        py, "nvidia-cuda-nvcc-cu12"
    )
    for name, own in (("unprovided_files", pv.unprovided), ("pip_providers", pv.pip_providers)):
        assert fns[name](py, ["libcudart.so.12", "nvcc"]) == own(py, ["libcudart.so.12", "nvcc"])
    assert fns["provided_files"](py, "nvidia-cuda-nvcc-cu12", ["nvcc"]) == pv.provided_files(
        py, "nvidia-cuda-nvcc-cu12", ["nvcc"]
    )
    owns = {
        "unprovided_files": pv.unprovided,
        "pip_providers": pv.pip_providers,
        "provider_version": pv.provider_version,
        "provided_files": pv.provided_files,
    }
    assert set(fns) == set(owns)
    for name, own in owns.items():  # what the registry says each is for: the function's own
        assert fns[name].__doc__ == own.__doc__, name
    code = (
        "import sys; from remedy.knowledge.functions import provider_functions as p;"
        "f = p(); print('remedy.knowledge.providers' in sys.modules);"
        "f['pip_providers'](None, ['nvcc']); print('remedy.knowledge.providers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
