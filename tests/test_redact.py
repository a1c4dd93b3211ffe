"""One redaction at every boundary: names, URL credentials, token shapes; plans, logs, errors."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from redact_reference import reference_redact

from remedy.facts.collect import redact
from remedy.redact import REDACTED, is_secret_name, redact_env, redact_obj, redact_text

SECRET = "s3cretPLANTED"
TOKEN = "hf_PLANTEDabcdefghijklmnopqrstuvwxyz"


def test_secret_names():
    for n in (
        "HF_TOKEN",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "FTP_PASSWD",
        "GIT_CREDENTIALS",
        "HTTP_AUTH",
        "WANDB_KEY",
    ):
        assert is_secret_name(n), n
    for n in (
        "TIKTOKEN_CACHE_DIR",
        "TOKENIZERS_PARALLELISM",
        "SSH_AUTH_SOCK",
        "CUDA_HOME",
        "PATH",
        "KEYBOARD",
        "GOOGLE_APPLICATION_CREDENTIALS_FILE",
    ):
        assert not is_secret_name(n), n


def test_url_credentials_anywhere_in_a_value():
    env = {
        "PIP_INDEX_URL": f"https://user:{SECRET}@pypi.example.com/simple",
        "PIP_EXTRA_INDEX_URL": f"https://a.example/simple https://tok:{SECRET}@b.example/simple",
        "HF_ENDPOINT": f"https://{SECRET}@hf.example",
        "HF_TOKEN": TOKEN,
        "CUDA_HOME": "/usr/local/cuda",
    }
    assert redact_env(env) == ["HF_ENDPOINT", "HF_TOKEN", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"]
    assert SECRET not in json.dumps(env) and TOKEN not in json.dumps(env)
    assert env["PIP_INDEX_URL"] == f"https://{REDACTED}@pypi.example.com/simple"
    assert env["CUDA_HOME"] == "/usr/local/cuda"
    assert redact(dict(env)) == [], "the collector's redact is the same, and idempotent"


def test_free_text_logs_and_errors():
    line = (
        f"pip: Looking in indexes: https://u:{SECRET}@idx.example/simple; HF_TOKEN={TOKEN} "
        f"OPENAI_API_KEY: sk-{SECRET}xxxxxxxxxxxxxx token {TOKEN} CUDA_HOME=/opt/cuda"
    )
    out = redact_text(line)
    assert SECRET not in out and TOKEN not in out
    assert "CUDA_HOME=/opt/cuda" in out and "idx.example/simple" in out


def test_structures_plans_and_journal_records():
    rec = {
        "event": "step-done",
        "env": {"HF_TOKEN": TOKEN, "X": "1"},
        "output": [f"https://me:{SECRET}@h/x"],
        "n": 3,
    }
    out = redact_obj(rec)
    assert SECRET not in json.dumps(out) and TOKEN not in json.dumps(out)
    assert out["env"]["X"] == "1" and out["n"] == 3


def test_cli_error_messages_are_redacted(tmp_path: Path):
    """A secret in an argument that ends in a remedy error is not echoed back."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "remedy",
            "plan",
            "--facts",
            str(tmp_path / f"https:__u:{SECRET}@x" / "HF_TOKEN=x.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr
    bad = f"https://u:{SECRET}@host/simple"
    r2 = subprocess.run(
        [sys.executable, "-m", "remedy", "impact", f"PIP_INDEX_URL={bad}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert SECRET not in r2.stdout + r2.stderr


def agent_append(journal: Path, record: dict) -> None:
    """One journal record written by the host agent (as remedy does on a host)."""
    from remedy.executor import agent

    subprocess.run(
        [sys.executable, agent.__file__, "append", str(journal), json.dumps(record)],
        check=True,
        capture_output=True,
        timeout=30,
    )


def test_agent_state_is_private(tmp_path: Path):
    """The host agent's journal and checkpoints: 0600 files in a 0700 directory."""
    from remedy.executor import agent

    d = tmp_path / "state" / "runs"
    j = d / "journal.jsonl"
    agent_append(j, {"a": 1})
    assert stat.S_IMODE(j.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    # `write` (the run's plan copy, checkpoints) creates its parents private too
    f = tmp_path / "state2" / "runs" / "r1" / "plan.json"
    subprocess.run(
        [sys.executable, agent.__file__, "write", str(f), "600"],
        input=b"{}",
        check=True,
        capture_output=True,
        timeout=30,
    )
    for p in (f.parent, f.parent.parent):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_an_existing_journal_with_a_looser_mode_is_made_private(tmp_path: Path):
    """A journal left 0644 (by an older remedy, an operator's cp, a restored backup) is
    tightened on the next append, not kept as it was."""
    d = tmp_path / "state" / "runs"
    d.mkdir(parents=True, mode=0o755)
    j = d / "journal.jsonl"
    j.write_text('{"event": "start"}\n')
    j.chmod(0o644)
    agent_append(j, {"a": 1})
    assert stat.S_IMODE(j.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert j.read_text().count("\n") == 2  # appended, nothing lost


# ---- the terminal: styles and wrapping must not hide a secret from the redaction ----------


def _render(*renderables: object, width: int = 60) -> str:
    import io

    from remedy.report.console import RedactingConsole, RedactingStream

    buf = io.StringIO()
    con = RedactingConsole(
        file=RedactingStream(buf), force_terminal=True, color_system="truecolor", width=width
    )
    for r in renderables:
        con.print(r)
    return buf.getvalue()


def test_a_secret_split_by_styles_is_redacted():
    out = _render("[bold]DB_PASSWORD[/bold]=s3cr3t-value-123 and [red]more[/]")
    assert "s3cr3t-value-123" not in out and "<redacted>" in out


def test_a_secret_wrapped_over_lines_is_redacted():
    from rich.panel import Panel
    from rich.table import Table

    url = "https://alice:pa55word-9876@pypi.example.com/simple/some/very/long/index/path"
    t = Table("what", "value")
    t.add_row("index", url)
    out = _render(t, Panel("x", title=f"[b]API_KEY[/b]=k3y-material-42 {url}"), width=40)
    assert "pa55word" not in out and "k3y-material" not in out, out


def test_the_stream_redacts_across_escape_codes():
    import io

    from remedy.report.console import RedactingStream

    buf = io.StringIO()
    RedactingStream(buf).write("\x1b[1mOPENAI_API_KEY\x1b[0m=abc123xyz\n")
    assert "abc123xyz" not in buf.getvalue() and "<redacted>" in buf.getvalue()


def test_text_without_secrets_keeps_its_colours():
    from remedy.report.console import _ANSI

    out = _render("[bold red]ptxas fatal[/]: Unsupported .version 9.3 (CUDA_HOME=/usr/local/cuda)")
    assert "\x1b[1;31mptxas fatal" in out
    assert "CUDA_HOME=/usr/local/cuda" in _ANSI.sub("", out)


def test_names_are_matched_only_where_a_secret_name_can_start():
    """NAME=value and --flag value are matched only at runs around a secret word, not from
    every position: the same text out as searching from everywhere, on texts made of the
    pieces that matter (leads, quotes, separators, dotted and dashed names, a match that
    names another run just before a secret one: ``p=Api-Key: v``)."""
    import random

    from remedy.redact import _redact_text

    assert _redact_text("user:p=Api-Key--tok.en: PGPASSWORD") == (
        f"user:p=Api-Key--tok.en: {REDACTED}"
    )
    pieces = ["\\", '"', "'", "=", ":", " ", "\t", "-", "--", ".", "_", "a", "p", "9", "TOKEN"]
    pieces += ["token", "key", "KEY", "Api", "pass", "PASSWORD", "auth", "x", "ı", ",", ";", "}"]
    pieces += ["]", "{", "authorization", "bearer ", "\n", "SECRET", "cookie", REDACTED, "é"]
    rnd = random.Random(26)
    changed = 0
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 25)))
        want = reference_redact(text)
        assert _redact_text(text) == want, text
        changed += want != text
    assert changed > 2_000  # control: many held a secret


def test_the_url_pass_is_skipped_only_where_it_would_change_nothing():
    """The credential-in-URL pass runs only where '://' is followed by a credential and '@'
    (redact._URL_HINT): the same text out as running it everywhere, on texts made of schemes,
    slashes, quotes, blanks, '@' and the documentation URLs a diagnosis quotes."""
    import random

    from remedy.redact import _redact_text

    assert _redact_text('see https://docs.nvidia.com/x and "a@b"') == (
        'see https://docs.nvidia.com/x and "a@b"'
    )
    assert _redact_text("pip https://u:pw@pypi.example/simple") == (
        f"pip https://{REDACTED}@pypi.example/simple"
    )
    pieces = ["://", "https", "git+ssh", "@", "/", " ", "\t", "\n", "'", '"', ":", "u", "pw"]
    pieces += ["docs.nvidia.com", "-", ".", "é", "9", "x", "a@b", "https://", "user:"]
    rnd = random.Random(31)
    changed = 0
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 20)))
        want = reference_redact(text)
        assert _redact_text(text) == want, text
        changed += want != text
    assert changed > 1_000  # control: many held a credential


def test_a_json_members_bare_secret_value_is_redacted_as_a_json_string():
    """Found by the hypothesis test in tests/security/test_sec_secrets.py: `"CREDENTIAL": 0`
    became `"CREDENTIAL": <redacted>`, which is no longer JSON."""
    doc = {"a": {"CREDENTIAL": 0, "API_KEY": True, "PASSWORD": None}, "p": "HF_TOKEN: 123"}
    out = redact_text(json.dumps(doc, indent=2))
    back = json.loads(out)
    assert back["a"] == {
        "CREDENTIAL": "<redacted>",
        "API_KEY": "<redacted>",
        "PASSWORD": "<redacted>",
    }
    assert back["p"] == "HF_TOKEN: <redacted>"  # inside a string, the value stays bare
    assert redact_text(out) == out
