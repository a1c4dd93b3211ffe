"""remedy.units parser: table-driven cases (tests/fixtures/units/environment.yaml) and units.

The same table is checked against a real systemd 252 in tests/test_units_systemd.py; here it
runs without any host, in milliseconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from remedy.errors import InputError
from remedy.units import (
    SourceFile,
    UnitFiles,
    dropin_dirs,
    format_show_environment,
    load_unit,
    order_dropins,
    parse_env_file,
    parse_show_environment,
    parse_unit,
)
from remedy.units.parse import exec_python, venv_of
from remedy.units.syntax import (
    WordError,
    extract_first_word,
    quote_assignment,
    shell_maybe_quote,
    split_lines,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "units"
CASES: list[dict[str, Any]] = yaml.safe_load((FIXTURES / "environment.yaml").read_text())


def case_name(case: dict[str, Any]) -> str:
    return case.get("name") or f"fx-{case['id']}.service"


def case_unit_bytes(case: dict[str, Any]) -> bytes:
    if "unit_bytes" in case:
        return case["unit_bytes"].encode("utf-8")
    return case["unit"].encode("utf-8")


def case_files(case: dict[str, Any], extra_unit_lines: str = "") -> UnitFiles:
    """The case as UnitFiles (drop-ins ordered as systemd would)."""
    name = case_name(case)
    frag = SourceFile(
        f"{case.get('unit_dir', '/etc/systemd/system')}/{name}",
        case_unit_bytes(case) + extra_unit_lines.encode(),
    )
    dropins = case.get("dropins") or {}
    order = order_dropins(dropins, name)
    env_files = {
        p: (t.encode() if t is not None else None) for p, t in (case.get("env_files") or {}).items()
    }
    globs: dict[str, list[str]] = {}
    for p in env_files:
        if "glob-" in p:
            globs.setdefault("/etc/fx/glob-*.env", []).append(p)
    globs = {k: sorted(v) for k, v in globs.items()}
    return UnitFiles(
        name=name,
        fragment=frag,
        dropins=[SourceFile(p, dropins[p].encode()) for p in order],
        env_files=env_files,
        env_globs=globs,
    )


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_environment_table(case: dict[str, Any]):
    unit = load_unit(case_files(case))
    assert unit.environment == case["environment"]
    assert list(unit.environment) == list(case["environment"]), "order is part of show"
    if "effective" in case:
        assert unit.effective_environment == case["effective"]
    else:
        assert unit.effective_environment == case["environment"]
    if "show" in case:
        assert format_show_environment(unit.environment) == case["show"]
    assert parse_show_environment(format_show_environment(unit.environment)) == unit.environment
    got = [str(d) for d in unit.diagnostics]
    for want in case.get("diagnostics") or []:
        assert any(want in g for g in got), (want, got)
    if case.get("diagnostics") == []:
        assert got == []
    if "dropin_paths" in case:
        assert unit.dropin_paths == case["dropin_paths"]
    assert not unit.errors


# --------------------------------------------------------------------------------------------
# Words, escapes, lines, show quoting
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('a "b c" d', [b"a", b"b c", b"d"]),
        ("x='y z'w", [b"x=y zw"]),
        ("\"\" ''", [b"", b""]),
        ("\\x41\\101\\u00e9", [b"AA\xc3\xa9"]),
        ("'\\n'", [b"\n"]),
        ("  lead   trail  ", [b"lead", b"trail"]),
        ("\\xff", [b"\xff"]),
    ],
)
def test_extract_first_word(text: str, words: list[bytes]):
    got: list[bytes] = []
    pos: int | None = 0
    while True:
        w, pos = extract_first_word(text, pos)
        if w is None:
            break
        got.append(w)
    assert got == words


@pytest.mark.parametrize("text", ['"open', "a\\ b", "a\\q", "\\x00", "\\u0000", "\\777", "a\\"])
def test_extract_first_word_rejects_like_systemd(text: str):
    with pytest.raises(WordError):
        pos: int | None = 0
        while pos is not None:
            w, pos = extract_first_word(text, pos)
            if w is None:
                break


def test_relaxed_escapes_keep_backslash():
    assert extract_first_word("a\\qb", 0, relax_escapes=True) == (b"a\\qb", None)


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"a\nb\n", [b"a", b"b"]),
        (b"a\r\nb", [b"a", b"b"]),
        (b"a\n\nb", [b"a", b"", b"b"]),
        (b"a\rb\n\r", [b"a", b"b"]),
        (b"a\0b", [b"a", b"b"]),
        (b"", []),
    ],
)
def test_split_lines_like_read_line(data: bytes, lines: list[bytes]):
    assert split_lines(data) == lines


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("A=1", "A=1"),
        ("A=a b", '"A=a b"'),
        ('A="', '"A=\\""'),
        ("A=$x`y\\", '"A=\\$x\\`y\\\\"'),
        ("A=tab\t", '"A=tab\\t"'),
        ("A=\x01\x7f", '"A=\\001\\177"'),
        ("A=é日", "A=é日"),
        ("A=*", '"A=*"'),
        ("A=it's", '"A=it\'s"'),
        ("A=", "A="),
    ],
)
def test_shell_maybe_quote_matches_systemctl_show(value: str, shown: str):
    assert shell_maybe_quote(value) == shown
    name, _, val = value.partition("=")
    assert parse_show_environment(shown) == {name: val}


def test_parse_show_environment_of_a_real_line():
    line = 'Environment=PATH=/usr/local/cuda-12.8/bin:/bin OMP_NUM_THREADS=8 "X=a b" "Y=\\$HOME"'
    assert parse_show_environment(line) == {
        "PATH": "/usr/local/cuda-12.8/bin:/bin",
        "OMP_NUM_THREADS": "8",
        "X": "a b",
        "Y": "$HOME",
    }
    assert parse_show_environment("Environment=") == {}
    with pytest.raises(ValueError):
        parse_show_environment('Environment="A=open')


@pytest.mark.parametrize(
    "value",
    ["plain", "two words", 'a "quoted" b', "back\\slash\\", "$HOME ${X} `cmd`", "100%", "%n %%",
     "tab\there", "é日本😀", "'single'", " lead and trail ", "", "a;b#c", "=x="],
)  # fmt: skip
def test_quote_assignment_round_trips_through_the_parser(value: str):
    text = f"[Service]\nEnvironment={quote_assignment('V', value)}\n".encode()
    cfg = parse_unit("x.service", SourceFile("/etc/systemd/system/x.service", text))
    assert cfg.environment == {"V": value} and not cfg.diagnostics


@pytest.mark.parametrize(
    ("name", "value", "msg"),
    [
        ("V", "a\nb", "newline"),
        ("V", "a\rb", "newline"),
        ("V", "a\x01b", "control character"),
        ("1V", "x", "not a valid environment variable name"),
        ("V-W", "x", "not a valid environment variable name"),
        ("V", "\ud800", "UTF-8"),
    ],
)
def test_quote_assignment_refuses_what_systemd_cannot_take_back(name: str, value: str, msg: str):
    with pytest.raises(ValueError, match=msg):
        quote_assignment(name, value)


# --------------------------------------------------------------------------------------------
# Drop-in directories
# --------------------------------------------------------------------------------------------


def test_dropin_dirs_follow_systemd_order():
    dirs = dropin_dirs(
        "foo-bar@x.service", unit_path=["/etc/systemd/system", "/usr/lib/systemd/system"]
    )
    assert dirs == [
        "/etc/systemd/system/foo-bar@x.service.d",
        "/etc/systemd/system/foo-bar@.service.d",
        "/etc/systemd/system/foo-.service.d",
        "/etc/systemd/system/foo-@x.service.d",
        "/etc/systemd/system/foo-@.service.d",
        "/usr/lib/systemd/system/foo-bar@x.service.d",
        "/usr/lib/systemd/system/foo-bar@.service.d",
        "/usr/lib/systemd/system/foo-.service.d",
        "/usr/lib/systemd/system/foo-@x.service.d",
        "/usr/lib/systemd/system/foo-@.service.d",
        "/etc/systemd/system/service.d",
        "/usr/lib/systemd/system/service.d",
    ]
    assert dropin_dirs("a-b-c.service", unit_path=["/e"]) == [
        "/e/a-b-c.service.d",
        "/e/a-b-.service.d",
        "/e/a-.service.d",
        "/e/service.d",
    ]


def test_order_dropins_name_wins_by_directory_then_sorts_by_name():
    files = [
        "/usr/lib/systemd/system/u.service.d/10-a.conf",
        "/etc/systemd/system/u.service.d/10-a.conf",
        "/usr/lib/systemd/system/u.service.d/05-z.conf",
        "/run/systemd/system/service.d/50-all.conf",
        "/etc/systemd/system/u.service.d/not-a-conf.txt",
        "/etc/systemd/system/other.service.d/01.conf",
    ]
    assert order_dropins(files, "u.service") == [
        "/usr/lib/systemd/system/u.service.d/05-z.conf",
        "/etc/systemd/system/u.service.d/10-a.conf",
        "/run/systemd/system/service.d/50-all.conf",
    ]


def test_order_dropins_with_symlinked_dirs():
    real = {"/lib/systemd/system/u.service.d": "/usr/lib/systemd/system/u.service.d"}
    files = ["/usr/lib/systemd/system/u.service.d/a.conf"]
    assert order_dropins(files, "u.service", realpaths=real) == files


# --------------------------------------------------------------------------------------------
# Fatal errors, env files, ExecStart
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        (b"[Service\nEnvironment=A=1\n", "Invalid section header '[Service'"),
        (b'[Ser"vice]\n', "Bad characters in section header"),
        (b"[Service]\nEnvironment=A=\xff\n", "String is not UTF-8 clean"),
        (
            b"[Service]\nExecStart=relative/path\n",
            "Neither a valid executable name nor an absolute path",
        ),
        (b"[Service]\nExecStart=/usr/bin/x\\\n", None),
    ],
)
def test_fatal_errors_are_errors(text: bytes, msg: str | None):
    cfg = parse_unit("x.service", SourceFile("/etc/systemd/system/x.service", text))
    if msg is None:
        assert not cfg.errors
        return
    assert cfg.errors and msg in str(cfg.errors[0])
    assert str(cfg.errors[0]).startswith("/etc/systemd/system/x.service:")


def test_missing_required_environment_file_is_an_input_error():
    text = b"[Service]\nEnvironmentFile=/etc/x.env\nEnvironmentFile=-/etc/y.env\n"
    files = UnitFiles("x.service", SourceFile("/etc/systemd/system/x.service", text), env_files={})
    with pytest.raises(InputError, match=r"EnvironmentFile=/etc/x.env .*does not exist"):
        load_unit(files)
    unit = load_unit(files, strict_env_files=False)
    assert [f.missing for f in unit.loaded_environment_files] == [True, True]
    assert unit.errors and "Failed to load environment files" in unit.errors[0].message


def test_environment_file_with_invalid_utf8_is_refused_whole():
    with pytest.raises(ValueError, match="invalid UTF-8"):
        parse_env_file(b"A=1\nB=\xff\n", "/etc/x.env")


def test_environment_file_stops_at_nul_and_keeps_first_position():
    env, diags = parse_env_file(b"A=1\nB=2\nA=3\n\0C=4\n")
    assert list(env.items()) == [("A", "3"), ("B", "2")] and not diags


def test_not_a_unit_name():
    with pytest.raises(InputError):
        parse_unit("sglang", None)


@pytest.mark.parametrize(
    ("exec_start", "env", "venv", "module", "flags"),
    [
        ("/root/venv_sglang211/bin/python -m sglang.launch_server --model-path /m --tp 8 --port=30000 --enable-x",
         {}, "/root/venv_sglang211", "sglang.launch_server",
         {"model-path": "/m", "tp": "8", "port": "30000", "enable-x": True}),
        ("-/opt/v/bin/python3.12 -m sglang.launch_server", {}, "/opt/v", "sglang.launch_server", {}),
        ("/usr/bin/env CUDA_HOME=/x /opt/v/bin/python3 -m sglang.launch_server --tp 2", {}, "/opt/v",
         "sglang.launch_server", {"tp": "2"}),
        ("/bin/bash -c 'source /opt/v/bin/activate && exec /opt/v/bin/python -m sglang.launch_server --tp 4'",
         {}, "/opt/v", "sglang.launch_server", {"tp": "4"}),
        ("${VENV}/bin/python -m sglang.launch_server", {"VENV": "/srv/venv"}, None, None, None),
        ("@/opt/v/bin/python sglang-server -m sglang.launch_server", {}, "/opt/v", "sglang.launch_server", {}),
        ("/usr/bin/sleep infinity", {}, None, None, None),
    ],
)  # fmt: skip
def test_exec_start_to_venv_and_flags(exec_start, env, venv, module, flags):
    text = f"[Service]\nExecStart={exec_start}\n".encode()
    cfg = parse_unit("x.service", SourceFile("/etc/systemd/system/x.service", text))
    if exec_start.startswith("${"):
        # systemd refuses a path that is not absolute and has special characters
        assert cfg.errors
        return
    got_venv, launch = exec_python(cfg.exec_start, env)
    assert got_venv == venv
    if module is None:
        assert launch is None
    else:
        assert launch is not None and launch.module == module and launch.flags == flags


def test_exec_start_prefixes_and_semicolons():
    text = b"[Service]\nType=oneshot\nExecStart=-@:+/bin/echo argv0 a\\x41 \\; b ; /bin/true\n"
    cfg = parse_unit("x.service", SourceFile("/etc/systemd/system/x.service", text))
    a, b = cfg.exec_start
    assert (a.ignore_failure, a.separate_argv0, a.no_env_expand, a.privileged) == (
        True,
        True,
        True,
        True,
    )
    assert a.path == "/bin/echo" and a.argv == ["argv0", "aA", ";", "b"]
    assert b.argv == ["/bin/true"]


def test_venv_of():
    assert venv_of("/x/venv/bin/python3.11") == "/x/venv"
    assert venv_of("/usr/bin/python3") == "/usr"
    assert venv_of("/opt/sglang") is None
