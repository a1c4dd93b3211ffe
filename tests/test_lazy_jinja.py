"""Jinja2 is loaded only when a template needs it (remedy.knowledge.expr), and the templates
rendered without it print exactly what Jinja2 prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from remedy.errors import KnowledgeError
from remedy.evaluate import render, render_raw
from remedy.knowledge.expr import KnowledgeTemplate, compile_template, env, plain_parts

SRC = Path(__file__).resolve().parents[1] / "src"
LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"

TEMPLATES = [
    "plain text, nothing to fill",
    "ls -l {{ tk_path }}/bin/nvcc on the host",
    "{{a}}{{ b }}{{\tc\t}} and {{ a }} again",
    "ends with a newline {{ a }}\n",
    "two newlines at the end\n\n",
    "text with a { brace and {{ a }}",
    "a } alone",
    "{{ a.b }} an attribute",
    "{{ a | upper }} a filter",
    "{% if a %}yes{% endif %}",
    "{# a comment #}{{ a }}",
    "{{- a -}} trimmed",
    "{{ none }} {{ true }} {{ None }}",
    "{{ self }} {{ loop }} {{ range }} {{ super }}",
    "windows\r\nnewline {{ a }}",
    "",
]
CONTEXTS: list[dict[str, Any]] = [
    {},
    {"tk_path": "/usr/local/cuda", "a": "x", "b": "y", "c": "z"},
    {"tk_path": "$CUDA_HOME", "a": "", "b": "{{ b }}", "c": "<&>"},
    {"tk_path": None, "a": 1, "b": ["l"], "c": {"k": "v"}},
    {"a": "x", "none": "shadow", "true": "t", "loop": "l", "range": "r", "super": "s"},
]


def outcome(fn: Any) -> tuple[str, str]:
    """What a render gives: its text, or the kind of error it raises."""
    try:
        return "text", fn()
    except Exception as exc:
        return "error", type(exc).__name__


@pytest.mark.parametrize("src", TEMPLATES)
def test_a_template_renders_as_jinja2_renders_it(src: str) -> None:
    t = compile_template(src, file=None, line=None, what="test")
    for ctx in CONTEXTS:
        want = outcome(lambda ctx=ctx: env().from_string(src).render(**ctx))
        assert outcome(lambda ctx=ctx: t.render(**ctx)) == want, (src, ctx)
        if want[0] == "text":
            assert render(t, ctx) == " ".join(want[1].split())


def test_only_text_and_bare_names_are_rendered_without_jinja2() -> None:
    assert plain_parts("ls {{ tk_path }}/bin") == ["ls ", "tk_path", "/bin"]
    assert plain_parts("one final newline\n") == ["one final newline"]
    for src in ("{{ a.b }}", "{% if a %}{% endif %}", "{ a", "{{ none }}", "{{ self }}", "\r"):
        assert plain_parts(src) is None, src


def test_a_value_that_is_not_a_string_goes_to_jinja2() -> None:
    t = compile_template("n={{ n }}", file=None, line=None, what="test")
    assert t.render(n=3) == "n=3"  # str(3) here too, but through Jinja2
    assert t.render(n=None) == "n=None"
    assert t.render() == "n="  # Undefined prints as nothing


def test_a_template_without_its_text_still_renders() -> None:
    """A knowledge cache written before templates kept their text: Jinja2 renders them."""
    t = compile_template("x {{ a }}", file=None, line=None, what="test")
    bare = KnowledgeTemplate(t._code, t.remedy_source)
    assert bare.render(a="1") == "x 1"


def test_a_refused_template_is_still_a_knowledge_error() -> None:
    t = compile_template("{{ a.__class__ }}", file="k.yaml", line=3, what="message")
    with pytest.raises(KnowledgeError, match="refused by the template sandbox"):
        render(t, {"a": "x"})
    with pytest.raises(KnowledgeError, match="refused by the template sandbox"):
        render_raw(t, {"a": "x"})


def _diagnose_loads(log: Path, tmp_path: Path) -> tuple[dict[str, Any], bool]:
    """A log-only diagnosis in a fresh process: its JSON, and whether Jinja2 was imported."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('JINJA=%s' % ('jinja2' in sys.modules)))\n"
        f"sys.argv = ['remedy', 'diagnose', '--log', {str(log)!r}, '--json']\n"
        "from remedy.entry import main\n"
        "main()\n"
    )
    env_ = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = ""
    err = ""
    for _ in range(2):  # the first run writes the knowledge cache, the second reads it
        res = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env_, check=False
        )
        out, err = res.stdout, res.stderr
    return json.loads(out), "JINJA=True" in err


def test_a_log_only_diagnosis_renders_without_jinja2(tmp_path: Path) -> None:
    log = LOGS / "lab_f1_ptx_isa_skew.log"
    data, jinja = _diagnose_loads(log, tmp_path)
    assert data["hypotheses"], "the fixture must name hypotheses for this to test anything"
    assert any("{{" not in c for h in data["hypotheses"] for c in h["confirm_with"])
    assert not jinja
