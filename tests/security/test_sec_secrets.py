"""Class 6: secrets planted in facts, units and logs appear in nothing remedy writes.

End to end: secrets in the shell environment (HF_TOKEN, *_API_KEY, *PASSWORD*), in a unit's
ExecStart (`--api-key X`, `--token=X`, an Authorization header), in a note as a JSON pair, and
in a log; then `plan --json`, `plan --out`, `plan --markdown`, the terminal report and
`export --format ansible` of the saved plan are searched for them. The saved plan must still
pass export's digest check: redaction happened before the digest, so it does not look damaged.
Property tests (hypothesis): every form of a secret is removed by the one redaction function,
redacting is idempotent, and JSON stays valid JSON after its text is redacted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from remedy.redact import REDACTED, redact_obj, redact_text

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "src/remedy/examples/seed-sm120-system-cuda128/facts.yaml"

S = {
    "env": "hfPLANTEDenvSecret0123456789",
    "apikey": "PLANTEDapiKEY9876543210",
    "pw": "PLANTEDpassw0rdXYZ",
    "flag": "PLANTEDflagValue42abc",
    "tokflag": "PLANTEDtokFlag77zz",
    "bearer": "PLANTEDbearerTok3nQQQQ",
    "json": "PLANTEDjsonPairSecret55",
    "log": "PLANTEDlogSecretAPI00",
}


def remedy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200"},
    )


def leaks(text: str) -> list[str]:
    return [k for k, v in S.items() if v in text]


def test_planted_secrets_appear_in_no_output(tmp_path: Path):
    facts = yaml.safe_load(EXAMPLE.read_text())
    facts["shell_env"].update(
        {"HF_TOKEN": S["env"], "OPENAI_API_KEY": S["apikey"], "MYSQL_ROOT_PASSWORD": S["pw"]}
    )
    svc = facts["services"][0]
    svc["exec_start"] += (
        f" --api-key {S['flag']} --token={S['tokflag']} "
        f"--header 'Authorization: Bearer {S['bearer']}'"
    )
    facts["notes"].append(f'config: {{"HF_TOKEN": "{S["json"]}"}}')
    ff = tmp_path / "facts.json"
    ff.write_text(json.dumps(facts))
    log = tmp_path / "server.log"
    log.write_text(
        f'launch_server --api-key {S["log"]}\n{{"OPENAI_API_KEY": "{S["log"]}"}}\n'
        "ptxas fatal   : Unsupported .version 9.3; current version is '9.2'\n"
    )
    out = tmp_path / "plan.json"
    runs = {
        "json": remedy("plan", "--facts", str(ff), "--log", str(log), "--json"),
        "out": remedy("plan", "--facts", str(ff), "--log", str(log), "--out", str(out)),
        "markdown": remedy("plan", "--facts", str(ff), "--log", str(log), "--markdown"),
        "terminal": remedy("plan", "--facts", str(ff), "--log", str(log), "--explain"),
        "diagnose": remedy("diagnose", "--facts", str(ff), "--log", str(log), "--json"),
    }
    for name, r in runs.items():
        assert r.returncode in (0, 1, 3), f"{name}: {r.stderr[-500:]}"
        assert leaks(r.stdout + r.stderr) == [], f"{name} printed a secret"
    saved = out.read_text()
    assert leaks(saved) == [] and REDACTED in saved
    # redaction happened before the digest: export's digest check accepts the saved plan
    playbook = tmp_path / "site.yml"
    r = remedy("export", "--format", "ansible", str(out), "--out", str(playbook))
    assert r.returncode == 0, r.stderr
    assert leaks(playbook.read_text() + r.stdout + r.stderr) == []


# ---- properties of the one redaction function ---------------------------------------------

secret = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+=-",
    min_size=10,
    max_size=40,
).filter(lambda s: s[0].isalnum() and "redacted" not in s.lower())
name = st.sampled_from(
    [
        "HF_TOKEN",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MY_SECRET",
        "GITHUB_TOKEN",
        "api_key",
        "x-api-key",
        "HUGGING_FACE_HUB_TOKEN",
    ]
)
flag = st.sampled_from(["--api-key", "--token", "--hf-token", "--password", "-api-key", "--secret"])
PRE = ["", "INFO 12:00:01 ", "[bold]x[/] ", "\x1b[31m", "ExecStart=/bin/sh -c '", "PATH=/usr/bin "]
FORMS = [
    lambda n, f, s: f"{n}={s}",
    lambda n, f, s: f"export {n}='{s}'",
    lambda n, f, s: f'{n}="{s}"',
    lambda n, f, s: f'{{"{n}": "{s}", "other": 1}}',
    lambda n, f, s: f"{n}: {s}",
    lambda n, f, s: f"python -m sglang.launch_server {f} {s} --port 30000",
    lambda n, f, s: f"ExecStart=/usr/bin/server {f}={s}",
    lambda n, f, s: f'curl -H "Authorization: Bearer {s}" http://x',
    lambda n, f, s: f"Authorization: Basic {s}",
    lambda n, f, s: f"https://user:{s}@pypi.example/simple",
    lambda n, f, s: f"Environment={n}={s} OTHER=1",
]


@given(n=name, f=flag, s=secret, form=st.sampled_from(range(len(FORMS))), pre=st.sampled_from(PRE))
def test_every_form_of_a_secret_is_redacted(n, f, s, form, pre):
    text = pre + " " + FORMS[form](n, f, s) + "\n"
    out = redact_text(text)
    assert s not in out
    assert redact_text(out) == out  # idempotent: a redacted saved plan digests the same


@given(
    obj=st.recursive(
        st.one_of(st.text(max_size=30), st.integers(), st.none()),
        lambda kids: st.one_of(
            st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=12), kids, max_size=4)
        ),
        max_leaves=12,
    ),
    n=name,
    f=flag,
    s=secret,
    form=st.sampled_from(range(len(FORMS))),
)
def test_json_text_redaction_stays_valid_json_and_hides_the_secret(obj, n, f, s, form):
    assume(s not in json.dumps(obj))  # the secret is what we plant, not random data
    doc = {"data": obj, "planted": FORMS[form](n, f, s), n: s}
    text = json.dumps(doc, indent=2)
    out = redact_text(text)
    back = json.loads(out)  # still JSON
    assert s not in out
    assert redact_obj(back) == back or s not in json.dumps(redact_obj(back))
