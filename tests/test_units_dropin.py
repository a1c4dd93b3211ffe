"""The drop-in remedy would write: content, merge, diff, systemd-analyze verify; never a write."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remedy.errors import InputError
from remedy.units import (
    SourceFile,
    UnitFiles,
    load_unit,
    parse_unit,
    plan_dropin,
    render_dropin,
    verify_unit_files,
)
from remedy.units.dropin import find_systemd_analyze, merge_changes
from remedy.units.syntax import unichar_is_valid

UNIT = "sglang-k26.service"
FRAG = f"/etc/systemd/system/{UNIT}"
DROPIN = f"/etc/systemd/system/{UNIT}.d/50-remedy.conf"
SEED_UNIT = b"""[Unit]
Description=SGLang
After=network-online.target

[Service]
Environment=OMP_NUM_THREADS=8
Environment="PATH=/usr/local/cuda-12.8/bin:/root/venv_sglang211/bin:/usr/bin:/bin"
ExecStart=/root/venv_sglang211/bin/python -m sglang.launch_server --model-path /m --port 30000
"""
needs_analyze = pytest.mark.skipif(
    find_systemd_analyze() is None, reason="systemd-analyze missing (apt-get install systemd)"
)


def files(*dropins: tuple[str, bytes], unit: bytes = SEED_UNIT) -> UnitFiles:
    return UnitFiles(UNIT, SourceFile(FRAG, unit), [SourceFile(p, d) for p, d in dropins])


def test_new_dropin_content_diff_and_commands():
    preview, after = plan_dropin(files(), {"CUDA_HOME": "/usr/local/cuda-13.0"}, verify=False)
    assert preview.path == DROPIN and preview.before is None and not preview.remove
    assert preview.content.splitlines()[-2:] == [
        "[Service]",
        'Environment="CUDA_HOME=/usr/local/cuda-13.0"',
    ]
    assert preview.diff.startswith(f"--- /dev/null\n+++ {DROPIN}\n")
    assert '+Environment="CUDA_HOME=/usr/local/cuda-13.0"' in preview.diff
    assert preview.commands[-2:] == ["systemctl daemon-reload", f"systemctl restart {UNIT}"]
    unit = load_unit(after)
    assert unit.environment["CUDA_HOME"] == "/usr/local/cuda-13.0"
    assert unit.dropin_paths == [DROPIN]


def test_merge_with_existing_remedy_dropin():
    old = b'[Service]\nEnvironment="A=1" "B=keep"\nUnsetEnvironment=C\n'
    preview, after = plan_dropin(
        files((DROPIN, old)), {"A": None, "C": "back", "D": "x y"}, verify=False
    )
    assert preview.before == old.decode()
    assert preview.environment == {"B": "keep", "C": "back", "D": "x y"}
    assert preview.unset == ["A"]
    assert '-Environment="A=1" "B=keep"' in preview.diff  # re-rendered one per line
    assert '+Environment="D=x y"' in preview.diff and "-UnsetEnvironment=C" in preview.diff
    eff = load_unit(after).effective_environment
    assert "A" not in eff and eff["C"] == "back" and eff["D"] == "x y"


def test_same_change_twice_is_a_noop():
    first, after = plan_dropin(files(), {"CUDA_HOME": "/x"}, verify=False)
    second, _ = plan_dropin(after, {"CUDA_HOME": "/x"}, verify=False)
    assert second.noop and second.diff == ""


def test_removing_the_last_change_removes_the_file():
    existing = render_dropin({"CUDA_HOME": "/x"}, []).encode()
    preview, after = plan_dropin(files((DROPIN, existing)), {"CUDA_HOME": None}, verify=False)
    # unsetting a variable the unit itself does not set still leaves UnsetEnvironment=
    assert preview.unset == ["CUDA_HOME"] and not preview.remove
    gone = merge_changes({"A": "1"}, [], {"A": "1"})
    assert gone == ({"A": "1"}, [])
    assert render_dropin({}, []) == ""


@pytest.mark.parametrize(
    "text",
    [
        b"[Service]\nExecStart=\nExecStart=/bin/other\n",
        b"[Service]\nEnvironment=\nEnvironment=A=1\n",
        b"[Unit]\nAfter=x.target\n",
        b"[Service]\nEnvironment=A=\\q\n",
    ],
)
def test_hand_edited_remedy_dropin_is_refused(text: bytes):
    with pytest.raises(InputError, match="not a drop-in remedy can merge into"):
        plan_dropin(files((DROPIN, text)), {"A": "2"}, verify=False)


@pytest.mark.parametrize(
    ("changes", "msg"),
    [
        ({"CUDA_HOME": "/a\n/b"}, "newline"),
        ({"CUDA_HOME": "a\x1bb"}, "control character"),
        ({"1BAD": "x"}, "not a valid environment variable name"),
        ({"BAD-NAME": None}, "not a valid environment variable name"),
    ],
)
def test_unwritable_values_are_clear_errors(changes, msg):
    with pytest.raises(InputError, match=msg):
        plan_dropin(files(), changes, verify=False)


def test_a_higher_priority_dropin_of_the_same_name_hides_remedys():
    ctl = f"/run/systemd/system.control/{UNIT}.d/50-remedy.conf"
    preview, after = plan_dropin(
        files((ctl, b"[Service]\nEnvironment=CUDA_HOME=/ctl\n")), {"CUDA_HOME": "/x"}, verify=False
    )
    assert preview.hidden_by == ctl
    assert load_unit(after).environment["CUDA_HOME"] == "/ctl"


def test_unit_without_fragment_is_refused():
    with pytest.raises(InputError, match="no unit file"):
        plan_dropin(UnitFiles(UNIT, None), {"A": "1"}, verify=False)


_SAFE = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r\x7f"
    ).filter(lambda c: unichar_is_valid(ord(c)))
    | st.sampled_from(list("\t \"'\\$%`;#=*?[]()|&<>!" + string.ascii_letters)),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(value=_SAFE, name=st.sampled_from(["CUDA_HOME", "PATH", "X_1", "_y"]))
def test_any_writable_value_reads_back_exactly(value: str, name: str):
    text = render_dropin({name: value}, ["GONE"]).encode()
    cfg = parse_unit(UNIT, None, [SourceFile(DROPIN, text)])
    assert cfg.environment == {name: value}
    assert cfg.unset_environment == ["GONE"]
    assert not cfg.diagnostics


@needs_analyze
def test_verify_passes_for_the_seed_unit_plus_dropin():
    preview, _ = plan_dropin(files(), {"CUDA_HOME": "/usr/local/cuda-13.0"})
    v = preview.verify
    assert v is not None and v.ran and v.ok, v
    assert v.command[:4] == [v.command[0], "verify", "--man=no", "--recursive-errors=no"]
    assert "--root=<tmp>" in v.command and v.systemd_version


@needs_analyze
def test_verify_reports_a_broken_unit_with_host_paths():
    broken = SEED_UNIT.replace(b"ExecStart=/root/", b"ExecStart=root/")
    res = verify_unit_files(files(unit=broken))
    assert res.ran and not res.ok and res.exit_status
    assert any(
        m.startswith(f"{FRAG}:") and "Neither a valid executable name" in m for m in res.messages
    )
    # remedy's own parser says the same thing
    cfg = parse_unit(UNIT, SourceFile(FRAG, broken))
    assert "Neither a valid executable name" in str(cfg.errors[0])


@needs_analyze
def test_verify_does_not_blame_the_dropin_for_old_complaints():
    noisy = SEED_UNIT + b"Bogus=1\n"
    preview, _ = plan_dropin(files(unit=noisy), {"CUDA_HOME": "/usr/local/cuda-13.0"})
    v = preview.verify
    assert v.ran and v.ok and v.new_messages == [] and "already complained" in (v.note or "")
    assert any("Unknown key 'Bogus'" in m for m in v.messages)


def test_verify_without_systemd_analyze_says_so():
    res = verify_unit_files(files(), systemd_analyze="/nonexistent/systemd-analyze")
    assert not res.ran and not res.ok and "failed to run" in (res.note or "")
