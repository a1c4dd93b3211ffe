"""torch 2.5-2.9's range warning: the GPU's compute capability and the wheel's range are read
around the matched line (remedy.evidence.fields.range_contexts), so a GPU one minor above the
newest arch of a major the wheel has (GB10 12.1 on a (8.0) - (12.0) wheel: its sm_120 cubins
run there) is no evidence that the wheel lacks the GPU's arch (corpus unknown/fzv-8), while a
GPU of a major the wheel lacks still is (knowledge/field-signals.yaml
torch-cc-range-gpu-above-newest-minor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from remedy.diagnose import diagnose
from remedy.evidence.fields import range_fields
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge

WARN = (
    "    Found GPU0 {name} which is of cuda capability {cc}.\n"
    "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
    "    ({lo}) - ({hi})\n"
)


def test_range_fields_compare_the_gpu_with_the_newest_arch_of_its_major() -> None:
    joined = " ".join(WARN.format(name="NVIDIA GB10", cc="12.1", lo="8.0", hi="12.0").split())
    assert range_fields(joined) == {
        "gpu_cc": "12.1",
        "wheel_min_cc": "8.0",
        "wheel_max_cc": "12.0",
        "cc_above_max_same_major": "yes",
    }
    below = " ".join(WARN.format(name="Tesla P40", cc="6.1", lo="7.0", hi="12.0").split())
    assert range_fields(below)["cc_above_max_same_major"] == "no"
    above_other_major = " ".join(WARN.format(name="X", cc="12.0", lo="5.0", hi="9.0").split())
    assert range_fields(above_other_major)["cc_above_max_same_major"] == "no"
    # the range cut off: nothing to compare
    assert range_fields(joined.split("(8.0)")[0]) == {}


@pytest.mark.parametrize(
    ("name", "cc", "lo", "hi", "named"),
    [
        ("NVIDIA GB10", "12.1", "8.0", "12.0", []),
        ("NVIDIA B300", "10.3", "7.5", "10.0", []),
        ("Tesla P40", "6.1", "7.0", "12.0", ["wheel-has-gpu-arch"]),
        ("NVIDIA GeForce RTX 5090", "12.0", "5.0", "9.0", ["wheel-has-gpu-arch"]),
        # a Tegra iGPU does not run the dGPU cubins of its major (torch's DEVICE_REQUIREMENT)
        ("Orin", "8.7", "5.0", "8.6", ["wheel-has-gpu-arch"]),
    ],
)
def test_range_warning_names_the_wheel_only_for_a_missing_major(
    tmp_path: Path, name: str, cc: str, lo: str, hi: str, named: list[str]
) -> None:
    log = tmp_path / "warn.log"
    header = "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:\n"
    log.write_text(header + WARN.format(name=name, cc=cc, lo=lo, hi=hi))
    symptoms, _, wrappers = scan_logs([log])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    assert [h.rule for h in d.hypotheses[:1]] == named
