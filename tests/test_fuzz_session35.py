"""Hostile and malformed input to remedy's entry points, found again after an earlier fuzz
pass's branch was lost (fuzz-4): stdin closed, saved plans of another schema version, logs
in UTF-16/32, compressed, CR-only, in Kubernetes' CRI format or re-serialised Docker JSON,
a log of error words, inventory ports and host names, an unclosed --limit, unknown --rules,
a variable given twice to impact, and facts files whose parse error gave no column.

Each test asserts behaviour and failed before its fix; the property tests are deterministic
(the `ci` hypothesis profile derandomizes) and bounded.
"""

from __future__ import annotations

import codecs
import json
import lzma
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from remedy.errors import InputError
from remedy.evidence.catalog import default_catalog
from remedy.evidence.matcher import GENERIC_NEEDLES, WRAP_MIN_HEAD, LineMatcher
from remedy.evidence.prefix import strip_prefixes
from remedy.evidence.scan import scan_path
from remedy.fleet.inventory import InventoryError, parse_inventory
from remedy.planfile import load_plan

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
# a log with a signature anchored at the message's start (python-build-script-frame) and
# one in its middle (flashinfer-requires-sm75): 4 symptoms on lines 2, 4, 5, 6
SEED_LOG = CORPUS / "torch-arch-list-covers-gpu" / "1.log"
EXAMPLE = "seed-sm120-pip-cu13"


def _remedy(*args: str, stdin: Any = subprocess.DEVNULL, **kw: Any) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONIOENCODING": "utf-8"}
    env.pop("REMEDY_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        env=env,
        timeout=180,
        stdin=stdin,
        **kw,
    )


def _err(r: subprocess.CompletedProcess) -> str:
    return r.stderr.decode("utf-8", "replace")


def _seen(path: Path | str, method: str = "python") -> list[tuple[str, int]]:
    return [(s.signature, s.line) for s in scan_path(str(path), method=method).symptoms]  # type: ignore[arg-type]


SEED_TEXT = SEED_LOG.read_text(encoding="utf-8", errors="replace")
SEED_SEEN = _seen(SEED_LOG)


def test_seed_log_has_the_symptoms_the_tests_count_on() -> None:
    # lines 5 and 6 are read by FlashInfer's own signature and, since tune-ck (session 43), by the
    # generic arch-floor gate too
    assert [n for _, n in SEED_SEEN] == [2, 4, 5, 5, 6, 6]
    assert ("flashinfer-requires-sm75", 6) in SEED_SEEN


# -- 1. stdin closed --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["diagnose", "--log", "-"],
        ["diagnose", "--facts", "-"],
        ["impact", "--facts", "-", "CUDA_HOME=/x"],
        ["export", "-", "-o", "out.yml"],
        ["run", "--local", "--plan", "-", "--yes"],
    ],
)
def test_stdin_closed_is_a_clear_error(args: list[str], tmp_path: Path) -> None:
    """`<&-`: Python sets sys.stdin to None; `.buffer` was an AttributeError (exit 70)."""
    r = _remedy(*args, stdin=None, cwd=tmp_path, preexec_fn=lambda: os.close(0))
    err = _err(r)
    assert r.returncode == 2, err
    assert "standard input is closed" in err and "internal error" not in err


# -- 2. a saved plan's schema version, checked before any host is reached ---------------------


@pytest.fixture(scope="module")
def saved_plan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("plan") / "plan.json"
    r = _remedy("plan", "--example", EXAMPLE, "--out", str(out))
    assert r.returncode == 0, _err(r)
    return json.loads(out.read_text())


@pytest.mark.parametrize("version", [1, 3, 99, "2", 2.0, True, None, [2], "x" * 500])
def test_plan_of_another_schema_version_is_refused(
    saved_plan: dict[str, Any], version: Any
) -> None:
    data = dict(saved_plan)
    if version is None:
        del data["schema_version"]
    else:
        data["schema_version"] = version
    with pytest.raises(InputError, match="remedy plan of another format") as e:
        load_plan(json.dumps(data).encode(), "p.json")
    assert len(e.value.message) < 200
    assert load_plan(json.dumps(saved_plan).encode(), "p.json").schema_version == 2


@pytest.mark.parametrize(
    ("edit", "needle", "rc"),
    [
        ({"schema_version": 99}, "another format", 2),
        ({"schema_version": "x"}, "another format", 2),
        ({"plan_digest": "sha256:" + "0" * 64}, "plan_digest", 5),
    ],
)
def test_run_checks_the_saved_plan_before_connecting(
    saved_plan: dict[str, Any], tmp_path: Path, edit: dict[str, Any], needle: str, rc: int
) -> None:
    """`remedy run HOST --plan F`: a plan of another schema was read as this one and the host
    was connected to first (here: a name that cannot resolve, exit 4 'cannot connect')."""
    f = tmp_path / "plan.json"
    f.write_text(json.dumps({**saved_plan, **edit}))
    r = _remedy("run", "nohost.invalid", "--plan", str(f), "--yes")
    err = _err(r)
    assert r.returncode == rc, err
    assert needle in err and "cannot connect" not in err and "Traceback" not in err


# -- 3. UTF-16/32 and compressed logs ----------------------------------------------------------


@pytest.mark.parametrize(
    "codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]
)
@pytest.mark.parametrize("method", ["python", "grep"])
def test_utf16_and_utf32_logs_are_decoded(tmp_path: Path, codec: str, method: str) -> None:
    """With and without a byte-order mark: read as the same text (were refused as 'NUL')."""
    log = tmp_path / "w.log"
    log.write_bytes(SEED_TEXT.replace("\n", "\r\n").encode(codec))
    assert _seen(log, method) == SEED_SEEN


def test_utf16_log_through_stdin_and_a_pipe(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_bytes(SEED_TEXT.encode("utf-16"))
    with log.open("rb") as f:
        r = _remedy("diagnose", "--log", "-", "--json", stdin=f)
    assert r.returncode in (0, 1), _err(r)
    assert [(s["signature"], s["line"]) for s in json.loads(r.stdout)["symptoms"]] == SEED_SEEN


def _lz4_frame(data: bytes) -> bytes:
    """An lz4 frame (magic, descriptor, one uncompressed block, end mark): the magic is what
    the sniffing reads; no lz4 module is needed."""
    return (
        b"\x04\x22\x4d\x18\x64\x40\xa7"
        + (len(data) | 1 << 31).to_bytes(4, "little")
        + data
        + b"\0" * 4
    )


@pytest.mark.parametrize(
    ("pack", "fmt"),
    [
        (lzma.compress, "xz-compressed"),
        (lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE), "lzma-compressed"),
        (_lz4_frame, "lz4-compressed"),
        ("zip", "zip archive"),
    ],
)
def test_compressed_logs_are_refused_naming_the_format(tmp_path: Path, pack: Any, fmt: str) -> None:
    log = tmp_path / "c.log"
    if pack == "zip":
        with zipfile.ZipFile(log, "w") as z:
            z.writestr("server.log", SEED_TEXT)
    else:
        log.write_bytes(pack(SEED_TEXT.encode()))
    r = _remedy("diagnose", "--log", str(log))
    err = _err(r)
    assert r.returncode == 2, err
    assert fmt in err and "decompress it first" in err


# -- 4. Docker json-file records with spaces after the separators ----------------------------


@pytest.mark.parametrize("seps", [(", ", ": "), (",", ": "), (", ", ":"), (",  ", ":\t")])
def test_spaced_docker_json_is_unwrapped(tmp_path: Path, seps: tuple[str, str]) -> None:
    log = tmp_path / "ctr-json.log"
    log.write_text(
        "".join(
            json.dumps(
                {"log": line + "\n", "stream": "stderr", "time": "2026-01-01T00:00:00Z"},
                separators=seps,
            )
            + "\n"
            for line in SEED_TEXT.splitlines()
        )
    )
    for method in ("python", "grep"):
        assert _seen(log, method) == SEED_SEEN, method


# -- 5. 200k lines with an error word: the per-line cost (bench/bench_error_words.py) ---------

MATCHER = LineMatcher(default_catalog())
NEEDLES = [n for n, _ in MATCHER._needles]


def _wrap_reference(m: LineMatcher, text: str) -> list[int]:
    """wrap_candidates as it was: every needle tested against the line."""
    text = text.rstrip(" \t")
    if not text or not (text[-1].isalnum() or text[-1] in "_:"):
        return []
    if not any(lit in text for lit in m._literals):
        return []
    cand: set[int] = set()
    n = len(text)
    for needle, idxs in m._needles:
        if needle in GENERIC_NEEDLES:
            continue
        hit = needle in text
        if not hit and len(needle) > WRAP_MIN_HEAD:
            head = needle[:WRAP_MIN_HEAD]
            at = text.find(head, max(0, n - len(needle)))
            while at != -1 and not hit:
                hit = needle.startswith(text[at:]) and (at == 0 or not text[at - 1].isalnum())
                at = text.find(head, at + 1)
        if hit:
            cand.update(i for i in idxs if m._sigs[i].near is None)
    return sorted(cand)


def _lead_reference(m: LineMatcher, text: str) -> list[int]:
    head = text.lstrip(" \t")
    if not head:
        return []
    cand: set[int] = set()
    for needle, idxs in m._needles:
        if needle not in GENERIC_NEEDLES and head.startswith(needle):
            cand.update(i for i in idxs if m._sigs[i].near is None)
    return sorted(cand)


@st.composite
def needle_line(draw: st.DrawFn) -> str:
    """Text around whole needles, needles cut at any point, and the error words."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(NEEDLES),
                st.sampled_from(NEEDLES).flatmap(
                    lambda n: st.integers(1, len(n)).map(lambda k: n[:k])
                ),
                st.sampled_from(sorted(GENERIC_NEEDLES)),
                st.text(max_size=6),
            ),
            max_size=5,
        )
    )
    return draw(st.sampled_from(["", " ", "  "])) + draw(st.sampled_from([" ", "", ": "])).join(
        parts
    )


@settings(max_examples=300)
@given(needle_line())
@example("error: x")
@example("ImportError: libcudart.so.12: cannot open shared obje")
@example("x" * 3000 + " undefined reference to")
def test_indexed_matcher_finds_what_every_needle_found(text: str) -> None:
    """The trigram index finds exactly the candidates the loop over every needle found."""
    assert MATCHER.wrap_candidates(text) == _wrap_reference(MATCHER, text)
    assert MATCHER.lead_candidates(text) == _lead_reference(MATCHER, text)
    ref = LineMatcher(default_catalog())
    ref._among = lambda t, needles, by_tri: needles  # type: ignore[method-assign]
    got = [(m.sig.id, m.start) for m in LineMatcher(default_catalog()).match(1, text, None)]
    assert got == [(m.sig.id, m.start) for m in ref.match(1, text, None)]


def test_error_word_lines_do_not_test_every_needle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of an error word and nothing a signature knows looks at a handful of needles,
    not all ~450 (the loop that made 200k such lines take minutes)."""
    m = LineMatcher(default_catalog())
    looked: list[int] = []
    real = m._among

    def count(text: str, needles: Any, by_tri: Any) -> Any:
        out = real(text, needles, by_tri)
        looked.append(len(out))
        return out

    monkeypatch.setattr(m, "_among", count)
    for i in range(50):
        line = f"[2026-01-01 00:00:00] worker {i}: error: step {i} x"
        m.wrap_candidates(line)
        m.match(i + 1, line, None)
    assert looked and max(looked) < len(m._needles) // 10


# -- 6. Kubernetes CRI log prefix --------------------------------------------------------------


@pytest.mark.parametrize("tag", ["F", "P"])
@pytest.mark.parametrize(
    "stamp",
    ["2026-01-01T00:00:00.000000000Z", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.123+02:00"],
)
def test_cri_prefix_is_stripped(tmp_path: Path, tag: str, stamp: str) -> None:
    log = tmp_path / "0.log"
    log.write_text("".join(f"{stamp} stderr {tag} {line}\n" for line in SEED_TEXT.splitlines()))
    for method in ("python", "grep"):
        assert _seen(log, method) == SEED_SEEN, method
    assert strip_prefixes(f"{stamp} stdout {tag} [2026-05-18 21:14:31 TP0] boom") == ("boom", "TP0")


def test_cri_line_that_holds_a_docker_record() -> None:
    rec = json.dumps({"log": "fatal error: x.h: No such file or directory\n", "stream": "stderr"})
    assert (
        strip_prefixes("2026-01-01T00:00:00Z stdout F " + rec)[0]
        == "fatal error: x.h: No such file or directory"
    )


# -- 7. CR-only line ends ----------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-8", "utf-16", "utf-32-be"])
@pytest.mark.parametrize("method", ["python", "grep"])
def test_cr_only_log_is_read_line_by_line(tmp_path: Path, method: str, codec: str) -> None:
    log = tmp_path / "mac.log"
    log.write_bytes(SEED_TEXT.replace("\n", "\r").encode(codec))
    assert _seen(log, method) == SEED_SEEN


def test_cr_only_through_stdin(tmp_path: Path) -> None:
    log = tmp_path / "mac.log"
    log.write_bytes(SEED_TEXT.replace("\n", "\r").encode())
    with log.open("rb") as f:
        r = _remedy("diagnose", "--log", "-", "--json", stdin=f)
    assert [(s["signature"], s["line"]) for s in json.loads(r.stdout)["symptoms"]] == SEED_SEEN


def test_crlf_and_progress_bars_keep_their_line_numbers(tmp_path: Path) -> None:
    """A log that has LF keeps its numbering: tqdm's CR inside a line is no line end."""
    log = tmp_path / "tqdm.log"
    log.write_bytes(("10%|#  \r50%|### \r" + SEED_TEXT.replace("\n", "\r\n")).encode())
    assert _seen(log) == SEED_SEEN


# -- 8. / 9. inventory ports and host names ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "line"),
    [
        ("[gpu]\ngpu0 ansible_port=0\n", "i.ini", 2),
        ("[gpu]\ngpu0 ansible_port=True\n", "i.ini", 2),
        ("[gpu]\ngpu0 ansible_port=22.5\n", "i.ini", 2),
        ("[gpu]\ngpu0 ansible_port=65536\n", "i.ini", 2),
        ("[gpu]\ngpu0\n[gpu:vars]\nansible_ssh_port=-1\n", "i.ini", 4),
        ("gpu0\ngpu1:0\n", "i.txt", 2),
        ("all:\n  hosts:\n    gpu0:\n      ansible_port: true\n", "i.yml", 4),
        ("all:\n  hosts:\n    gpu0:\n      ansible_port: 22.5\n", "i.yml", 4),
        ("all:\n  hosts:\n    gpu0:\n      ansible_port: 0\n", "i.yml", 4),
        ("all:\n  vars:\n    ansible_port: [22]\n  hosts:\n    gpu0:\n", "i.yml", 3),
    ],
)
def test_inventory_port_must_be_a_port(text: str, name: str, line: int) -> None:
    with pytest.raises(InventoryError, match="must be a whole number from 1 to 65535") as e:
        parse_inventory(text, name)
    assert e.value.message.startswith(f"{name}:{line}:")


def test_inventory_good_ports_still_read() -> None:
    inv = parse_inventory(
        "all:\n  hosts:\n    a:\n      ansible_port: '2222'\n    b:2200:\n", "i.yml"
    )
    assert [inv.hosts[h].connection.port for h in ("a", "b")] == [2222, 2200]


HOSTILE_NAMES = [
    "gpu\x1bc",
    "gpu\x07",
    "gpu\x9b2J",
    "gpu\u202eevil",
    "gpu\u200b0",
    "gpu\x00",
    "gpu\x7f",
]


@pytest.mark.parametrize("bad", HOSTILE_NAMES)
@pytest.mark.parametrize("fmt", ["yaml", "ini", "plain"])
def test_inventory_host_name_with_controls_is_refused(bad: str, fmt: str) -> None:
    text = {
        "yaml": "all:\n  hosts:\n    " + json.dumps(bad).replace("\x7f", "\\x7f") + ":\n",
        "ini": "[gpu]\n" + bad + "\n",
        "plain": bad + "\n",
    }[fmt]
    with pytest.raises(InventoryError, match="invalid host name") as e:
        parse_inventory(text, "inv", fmt)
    assert e.value.message.isprintable()


def test_inventory_control_in_address_is_refused() -> None:
    with pytest.raises(InventoryError, match="ansible_host holds a control"):
        parse_inventory('all:\n  hosts:\n    a:\n      ansible_host: "10.0.0.1\\e[2J"\n', "i.yml")


def test_hostile_host_name_never_reaches_the_terminal(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.yml"
    inv.write_text('all:\n  hosts:\n    "gpu\\ec\\a":\n')
    r = _remedy("facts", "--inventory", str(inv))
    assert r.returncode == 2
    assert b"\x1b" not in r.stderr + r.stdout and b"\x07" not in r.stderr + r.stdout


# -- 10. an unclosed --limit -------------------------------------------------------------------


@pytest.mark.parametrize(
    "limit", ["gpu[0", "gpu[", "~gpu[", "gpu]", "gpu0,gpu[0", "gpu[0:", "all:gpu[1"]
)
def test_unpaired_bracket_in_limit_is_refused(limit: str) -> None:
    """`gpu[0` became the terms `gpu` and `0`; `~gpu[` the regex `gpu`: every gpu host."""
    inv = parse_inventory("gpu0\ngpu1\ngpu\n0\n", "i.txt")
    with pytest.raises(InventoryError, match="unpaired"):
        inv.select(limit)


def test_limit_subscripts_and_regex_classes_still_work() -> None:
    inv = parse_inventory("gpu0\ngpu1\ngpu2\n", "i.txt")
    assert [h.name for h in inv.select("all[0:1]")] == ["gpu0", "gpu1"]
    assert [h.name for h in inv.select("~gpu[12]")] == ["gpu1", "gpu2"]
    assert [h.name for h in inv.select("gpu0,~gpu[2]")] == ["gpu0", "gpu2"]


def test_unclosed_limit_on_the_command_line(tmp_path: Path) -> None:
    inv = tmp_path / "hosts"
    inv.write_text("gpu0\ngpu1\n")
    r = _remedy("facts", "--inventory", str(inv), "--limit", "~gpu[")
    assert r.returncode == 2 and "unpaired" in _err(r)


# -- 11. plan --rules with an unknown id ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--rules", "nope"], "known, e.g."),
        (["--rules", "toolkit-major-matches-torh"], "toolkit-major-matches-torch"),
        (["--rules", ","], None),
        (["--consumers", "flashinfer-jt"], "did you mean: flashinfer-jit"),
    ],
)
def test_plan_unknown_rule_id(args: list[str], hint: str | None) -> None:
    """Every step was filtered out: a plan of nothing, exit 0."""
    r = _remedy("plan", "--example", EXAMPLE, *args)
    err = _err(r)
    assert r.returncode == 2, err
    assert hint is None or hint in err


def test_plan_with_no_consumer_to_verify_is_a_selection(tmp_path: Path) -> None:
    """`--consumers ""` selects no final verification (the sandbox's fault and soak plans use
    it); refusing it as an unknown id broke them."""
    out = tmp_path / "plan.json"
    r = _remedy("plan", "--example", EXAMPLE, "--consumers", "", "--out", str(out))
    assert r.returncode == 0, _err(r)
    plan = json.loads(out.read_text())
    assert plan["scope_consumers"] == [] and plan["verification"] == []


def test_plan_may_verify_the_server_itself() -> None:
    """The service component (the launch-level proof) is a consumer a plan verifies: the
    sandbox's chain-B plan selects `sglang-server`, which the first check refused."""
    r = _remedy("plan", "--example", EXAMPLE, "--consumers", "sglang-server,flashinfer-jit")
    assert r.returncode == 0, _err(r)


def test_plan_rules_with_inventory_is_refused(tmp_path: Path) -> None:
    """fleet plans ignored --rules: every rule was planned for every host."""
    inv = tmp_path / "hosts"
    inv.write_text("gpu0\n")
    r = _remedy("plan", "--inventory", str(inv), "--rules", "cccl-complete")
    assert r.returncode == 2 and "--rules and --consumers" in _err(r)


# -- 12. impact with a variable given twice ------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["CUDA_HOME=a", "CUDA_HOME=b"],
        ["CUDA_HOME=a", "CUDA_HOME=a"],
        ["CUDA_HOME=a", "--unset", "CUDA_HOME"],
        ["--unset", "CUDA_HOME", "--unset", "CUDA_HOME"],
    ],
)
def test_impact_variable_twice_is_refused(args: list[str]) -> None:
    r = _remedy("impact", *args)
    err = _err(r)
    assert r.returncode == 2, err
    assert "CUDA_HOME is given twice" in err


# -- 13. facts file parse errors name file:line:column --------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "where", "words"),
    [
        ("f.json", '{"host": "a",\n  "gpus": [,]\n}\n', ":2:12:", "Expecting value"),
        ("f.json", '{"host": "a", "gpus": [1,]}', ":1:26:", "Expecting value"),
        ("f.yaml", "host: a\ngpus:\n  - name: x\n   bad: [\n", ":4:4:", "expected"),
        ("f.yaml", "host: a\n\tgpus: []\n", ":2:1:", "tab"),
    ],
)
def test_facts_parse_error_gives_line_and_column(
    tmp_path: Path, name: str, content: str, where: str, words: str
) -> None:
    f = tmp_path / name
    f.write_text(content)
    r = _remedy("diagnose", "--facts", str(f))
    err = _err(r)
    assert r.returncode == 2, err
    assert f"{f}{where} not valid JSON/YAML" in err and words in err


def test_codecs_named_by_the_sniffer_exist() -> None:
    from remedy.evidence.reader import text_encoding

    for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        assert text_encoding("Error: x\n".encode(codec)) is not None
        codecs.lookup(codec)
    assert text_encoding(b"plain text\n") is None


# -- new: a NUL in a host's compiler version (test_fuzz.py's collect target, one seed) ----------


@pytest.mark.parametrize(
    ("section", "garbled"), [("host.cc", "clang\t1\x008.0\n"), ("host.cc", "icc\t\x00\n")]
)
def test_nul_in_a_host_section_does_not_end_the_collection(section: str, garbled: str) -> None:
    """A garbled reply with a NUL in a compiler's version (or os-release, the login names):
    Facts refuses a NUL anywhere, and the whole collection ended in a ValidationError."""
    import asyncio

    from remedy.facts.collect import collect_facts
    from remedy.facts.sections import DEFAULT_TOKEN
    from remedy.transport import CommandResult, ScriptedTransport

    fx = json.loads((ROOT / "tests" / "fixtures" / "facts" / "hosts" / "h200.json").read_text())
    mark = f"@@remedy-fact@@ {section}\n"
    outs = [r["output"] for r in fx["rounds"]]
    k = next(i for i, o in enumerate(outs) if mark in o)
    outs[k] = outs[k].replace(mark, mark + garbled, 1)
    replies = iter(outs)  # the rounds in the order they were recorded

    def handler(call: Any) -> CommandResult:
        return CommandResult(0, next(replies, "").encode(), b"", 0.0)

    t = ScriptedTransport(handler, host=fx["host"])
    facts = asyncio.run(
        collect_facts(t, services=fx.get("services"), timeout=30, token=DEFAULT_TOKEN)
    )
    assert "\0" not in facts.model_dump_json()
    assert facts.host_compilers.get("gcc") == "13.3.0"  # the rest of the host is still read


# -- new: a UTF-8 byte-order mark at a line's start (a log, files joined by cat, an inventory) --


@pytest.mark.parametrize("method", ["python", "grep"])
def test_utf8_bom_does_not_hide_the_first_line(tmp_path: Path, method: str) -> None:
    """'\\ufeffFile "<string>", line 2, in <module>' matched no signature anchored at ^."""
    line = 'File "<string>", line 2, in <module>\n'
    log = tmp_path / "bom.log"
    log.write_bytes(b"\xef\xbb\xbf" + line.encode() + (b"\xef\xbb\xbf" + line.encode()))  # cat a b
    assert _seen(log, method) == [
        ("python-build-script-frame", 1),
        ("python-build-script-frame", 2),
    ]


def test_inventory_with_a_utf8_bom(tmp_path: Path) -> None:
    """Notepad's mark made `[gpu]` a host with a bad range."""
    from remedy.fleet.inventory import load_inventory

    inv = tmp_path / "hosts.ini"
    inv.write_bytes(b"\xef\xbb\xbf[gpu]\r\ngpu0\r\n")
    assert [h.name for h in load_inventory(inv).select("gpu")] == ["gpu0"]


# -- new: stdout or stderr closed --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["plan", "--example", EXAMPLE, "--json"], ["diagnose", "--log", str(SEED_LOG)], ["examples"]],
)
@pytest.mark.parametrize("closed", [(1,), (1, 2)])
def test_closed_stdout_is_not_an_internal_error(args: list[str], closed: tuple[int, ...]) -> None:
    """`>&-`: sys.stdout is None, the first print an AttributeError (exit 70; with stderr
    closed too, Python's own exit 1). Each of these commands exits 0 when it can write."""

    def close() -> None:
        for fd in closed:
            os.close(fd)

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("REMEDY_DEBUG", None)
    r = subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        timeout=180,
        preexec_fn=close,
    )
    assert r.returncode == 0, r.stderr


def test_closed_stdout_keeps_the_out_file_whole(tmp_path: Path) -> None:
    """`--out` with stdout closed: the whole plan, and exit 0 (was exit 70 at the first print)."""
    out = tmp_path / "plan.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "plan", "--example", EXAMPLE, "--out", str(out)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        timeout=180,
        preexec_fn=lambda: os.close(1),
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["schema_version"] == 2


# -- new: a lone UTF-16 surrogate escaped in a facts file or a saved plan ------------------------


def test_lone_surrogate_in_facts_is_refused_with_its_place(tmp_path: Path) -> None:
    """`"prefix": "/usr/\\ud800x"` is valid JSON; the plan could not be written (exit 70)."""
    import yaml

    facts = yaml.safe_load(
        (ROOT / "src" / "remedy" / "examples" / EXAMPLE / "facts.yaml").read_text()
    )
    facts["toolkits"][0]["prefix"] = "/usr/\ud800x"
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(facts))
    r = _remedy("plan", "--facts", str(f), "--json")
    err = _err(r)
    assert r.returncode == 2, err
    assert "lone UTF-16 surrogate in toolkits[0].prefix" in err
    facts["toolkits"][0]["prefix"] = "/usr/\U0001f600x"  # a pair is one character: fine
    f.write_text(json.dumps(facts))
    assert _remedy("plan", "--facts", str(f), "--json").returncode == 0


def test_lone_surrogate_in_a_saved_plan_is_refused(
    saved_plan: dict[str, Any], tmp_path: Path
) -> None:
    f = tmp_path / "plan.json"
    f.write_text(json.dumps({**saved_plan, "host": "gpu\udfff"}))
    r = _remedy("report", str(f), "-o", str(tmp_path / "p.html"))
    assert r.returncode == 2, _err(r)
    with pytest.raises(InputError, match="lone UTF-16 surrogate in host"):
        load_plan(f.read_bytes(), "plan.json")
