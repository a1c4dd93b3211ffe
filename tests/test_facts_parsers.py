"""Parsers never raise on garbage, and collect_facts degrades to notes, not tracebacks."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remedy.errors import CommandTimeout, HostUnreachable
from remedy.facts import (
    GpuCollector,
    HostCollector,
    PythonEnvCollector,
    ServicesCollector,
    ToolkitCollector,
    collect_facts,
    parse_env_block,
    parse_login_env,
    parse_show,
    split_sections,
)
from remedy.facts import parsers as p
from remedy.facts.collect import is_secret_name, main_script
from remedy.facts.sections import DEFAULT_TOKEN, Section, section_text
from remedy.transport import CommandResult, ScriptedTransport
from remedy.units.shown import parse_shown_environment
from remedy.units.syntax import parse_show_environment

T = DEFAULT_TOKEN
MARKERS = [
    f"\n{T} {n}\n"
    for n in (
        "gpu",
        "gpu.rc 9",
        "tk.begin /x",
        "tk.real /x",
        "tk.files",
        "tk.nvcc",
        "tk.alias",
        "tk.end",
        "py.begin /p/bin/python",
        "py.site /p/lib",
        "py.req",
        "py.end",
        "svc.boot",
        "svc.show",
        "host.mem",
        "env",
        "env.end",
        "end",
    )
]
garbage = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.sampled_from(MARKERS),
        st.sampled_from(["\0", "=", "e lib64", "L lib64\tlib", "Name: x", "Version: 1"]),
    ),
    max_size=30,
).map("".join)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(text=garbage)
def test_no_parser_raises_on_garbage(text: str) -> None:
    GpuCollector().parse(text)
    HostCollector().parse(text)
    ToolkitCollector().parse(text)
    PythonEnvCollector().parse(text)
    ServicesCollector(["x.service"]).parse(text)
    parse_login_env(text)
    parse_env_block(text)
    parse_shown_environment({"Environment": [text], "UnsetEnvironment": [text]})
    parse_show(text)
    p.parse_tool_version(text)
    p.parse_nvcc_profile_libdir(text, None)
    p.parse_metadata_grep(text)
    p.parse_torch_version_py(text)
    p.parse_os_release(text)


def test_split_sections_keeps_bodies_exact_and_survives_cuts() -> None:
    secs = [
        Section("a", "", "x\n"),
        Section("b", "arg with space", "no newline"),
        Section("c", "", ""),
    ]
    text = section_text(secs)
    assert split_sections(text) == secs
    cut = text[: text.index("no new") + 3]
    assert split_sections(cut)[-1] == Section("b", "arg with space", "no ")
    assert split_sections("junk before\n" + text)[0] == secs[0]
    assert split_sections(text.replace(T, "@@other@@")) == []


@pytest.mark.parametrize(
    "text,fields,rc,gpus,note",
    [
        (
            "0, NVIDIA H200, 9.0, 580.159.04, 143771 MiB\n1, NVIDIA H200, 9.0, 580.159.04, 143771 MiB\n",
            None,
            0,
            2,
            None,
        ),
        ("0, Tesla K80, [N/A], 470.1, [N/A]\n", None, 0, 1, None),
        (
            "0, NVIDIA H200, 9.0, 580.159.04, 143771 MiB\nWARNING: infoROM is corrupted\n",
            None,
            0,
            1,
            "not GPU rows",
        ),
        ("", None, 9, 0, "exit 9"),
    ],
)
def test_gpu_query_edge_cases(text, fields, rc, gpus, note) -> None:
    from remedy.facts.gpus import QUERY_FIELDS, parse_query_gpu

    r = parse_query_gpu(text, fields or QUERY_FIELDS, rc)
    assert len(r.gpus) == gpus
    assert (note is None and not r.notes) or (note and note in r.notes[0])
    if gpus == 1 and "K80" in text:
        assert (r.gpus[0].compute_cap, r.gpus[0].memory_mib) == ("unknown", None)


def test_profile_libdir_resolution() -> None:
    prof = (
        'LIBRARIES =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" '
        '"-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"'
    )
    assert p.parse_nvcc_profile_libdir(prof, None) == "lib64"
    assert p.parse_nvcc_profile_libdir(prof, "targets/x86_64-linux") == "targets/x86_64-linux/lib"
    assert (
        p.parse_nvcc_profile_libdir('LIBRARIES =+ "-L$(TOP)/lib/stubs" "-L$(TOP)/lib"', None)
        == "lib"
    )
    assert p.parse_nvcc_profile_libdir("TOP = x", None) is None


def test_systemd_words_old_unquoted_and_escapes() -> None:
    # systemd < 240 printed elements unquoted: a value with a space is split; glue it back
    assert parse_show_environment("A=1 B=x y C=2") == {"A": "1", "B": "x y", "C": "2"}
    assert parse_show_environment('"A=\\x41\\101" B=') == {"A": "AA", "B": ""}
    assert parse_show_environment("") == {}


def test_secret_names() -> None:
    assert is_secret_name("HF_TOKEN") and is_secret_name("OPENAI_API_KEY")
    assert not is_secret_name("TOKENIZERS_PARALLELISM") and not is_secret_name("SSH_AUTH_SOCK")


def test_service_names_are_quoted_in_the_script() -> None:
    script = main_script(T, ["evil$(touch /tmp/x).service"])
    assert "'evil$(touch /tmp/x).service'" in script


# ---- orchestration through ScriptedTransport ----------------------------------------------


def _answer(main_out: str, login_out: str, follow=None, login_exc=None):
    def handler(call):
        s = call.script or ""
        if "env -0" in s and "svc.boot" not in s:
            if login_exc:
                raise login_exc
            return login_out
        if "svc.boot" in s:
            return main_out
        return follow(s) if follow else CommandResult(0, f"\n{T} end\n".encode(), b"", 0)

    return handler


def run(t, **kw):
    return asyncio.run(collect_facts(t, token=T, timeout=10, **kw))


def test_login_timeout_and_cut_off_become_notes() -> None:
    t = ScriptedTransport(_answer(f"\n{T} host.cpus\n8\n", "", login_exc=CommandTimeout("slow rc")))
    f = run(t)
    assert f.cpus == 8
    assert any("cut off" in n for n in f.notes)
    assert any("login shell environment not collected" in n for n in f.notes)


def test_unreachable_host_raises() -> None:
    def handler(call):
        raise HostUnreachable("h: cannot connect: Connection refused")

    with pytest.raises(HostUnreachable):
        run(ScriptedTransport(handler))


def test_followup_round_probes_what_the_login_shell_names() -> None:
    login = (
        f"{T} shell /bin/bash\n\n{T} env\nCUDA_HOME=/opt/cuda-x\0HF_TOKEN=hf_abc\0\n{T} env.end\n"
    )
    seen = []

    def follow(script: str) -> CommandResult:
        seen.append(script)
        out = (
            f"\n{T} tk.begin /opt/cuda-x\nkind=\npython=\norigin=login:CUDA_HOME\n"
            f"\n{T} tk.missing\n\n{T} tk.end\n\n{T} end\n"
        )
        return CommandResult(0, out.encode(), b"", 0)

    f = run(ScriptedTransport(_answer(f"\n{T} end\n", login, follow)), services=["sglang.service"])
    assert len(seen) == 1 and "tk /opt/cuda-x '' '' login:CUDA_HOME" in seen[0]
    tk = f.toolkits[0]
    assert (tk.prefix, tk.note) == ("/opt/cuda-x", "found via login:CUDA_HOME; does not exist")
    assert f.shell_env == {"CUDA_HOME": "/opt/cuda-x", "HF_TOKEN": "<redacted>"}
    assert any("HF_TOKEN redacted" in n for n in f.notes)
    assert any("systemd is not PID 1" in n for n in f.notes)


@pytest.mark.parametrize(
    ("prefix", "env"),
    [
        ("/opt/cuvenv/lib/python3.12/site-packages/nvidia/cu13", "/opt/cuvenv"),
        (
            "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/",
            "/root/.pyenv/versions/3.11.7",
        ),
        ("/srv/v/lib/python3.10/site-packages/nvidia/cu12", "/srv/v"),
        ("/usr/local/cuda-13.0", None),
        ("/opt/x/lib/python3.12/site-packages/nvidia/cuda_runtime", None),
        ("/usr/lib/python3/dist-packages/nvidia/cu13", None),
    ],
)
def test_a_wheel_dir_named_by_cuda_home_is_owned_by_its_env(prefix: str, env: str | None) -> None:
    from remedy.facts.toolkits import owning_env

    assert owning_env(prefix) == env


def test_a_template_unit_is_not_shown_and_is_noted() -> None:
    """`systemctl show sglang@.service` fails (a template is no unit name) and with it the whole
    batch: templates are left out of the query (named or found on disk) and noted."""
    c = ServicesCollector(["sglang@.service", "sglang-a.service"])
    script = c.command()
    assert "sglang@.service" not in script and "sglang-a.service" in script
    assert "grep -v '@\\.service$'" in script  # unit files found on disk: templates dropped
    out = section_text(
        [
            Section("svc.boot", "", "systemd\n"),
            Section("svc.files", "", "other@.service\nsglang-a.service\n"),
            Section("svc.show", "", "Id=sglang-a.service\nLoadState=loaded\n"
                    "ExecStart={ path=/v/bin/python ; argv[]=/v/bin/python -m sglang.launch_server"
                    " ; ignore_errors=no }\nUnsetEnvironment=A\nEnvironment=A=1 B=2\n"),
            Section("svc.rc", "0", ""),
        ]
    )  # fmt: skip
    res = c.parse(out)
    assert [s.name for s in res.services] == ["sglang-a.service"]
    assert res.shown["sglang-a.service"].unset == ["A"]
    # kept on the Service: the planner knows no drop-in of remedy's can set A
    assert res.services[0].unset_environment == ["A"]
    notes = " ".join(res.notes)
    assert "sglang@.service: a template unit" in notes and "other@.service" in notes
