"""A journal record is a JSON object of the runner's own shape, or it is not trusted.

The attack, for real: after a run killed mid-way (kill -9), the journal holds a record that
is a JSON object whose fields have the wrong type or range: a step given as text, a step
number past the plan's end or negative (Python's `plan.steps[-1]` is the LAST step), a
record with a step and no event, a start time that is text, an outcome that is a list. A
hostile host (the network is untrusted) answers the agent's `read`/`runs` with the same, and
a damaged disk can leave one. `history` ended in an internal error (exit 70: `'<' not
supported between 'int' and 'str'`), `resume` and its rollback too (`KeyError: 'event'`,
`IndexError`, `TypeError`), and a step of -1 made `resume` restore the checkpoint of the
plan's last step. Now such a record is read as a torn one (the runner's own words only:
`event` text, `step` an int naming a step of the plan), and the run finishes as it would
without it. Also: the agent's `runs` reply must be a list of objects each naming its run.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_executor import drive, fixed_state, inproc, setup_tree, snapshot  # noqa: E402

from remedy.errors import RemedyError  # noqa: E402
from remedy.executor.runner import Runner  # noqa: E402
from remedy.transport.base import CommandResult  # noqa: E402
from remedy.transport.scripted import ScriptedTransport  # noqa: E402


@pytest.fixture
def root(tmp_path: Path) -> Path:
    setup_tree(tmp_path / "tree")
    return tmp_path


BAD_RECORDS = [
    b'{"event": "committed", "step": "1"}\n',  # a step as text
    b'{"event": "committed", "step": 99}\n',  # past the plan's end
    b'{"event": "applied", "step": -1}\n',  # plan.steps[-1]: the last step
    b'{"step": 0}\n',  # a step and no event
    b'{"event": ["committed"], "step": 0}\n',  # an event that is no text
    b'{"event": "committed", "step": true}\n',  # a bool is an int to Python
]


@pytest.mark.parametrize("record", BAD_RECORDS)
@pytest.mark.parametrize("mode", ["resume", "resume-rollback"])
def test_a_record_of_the_wrong_shape_is_not_trusted(root: Path, monkeypatch, record, mode):
    before = snapshot(root)
    assert drive(root, "run", crash="applied:1").returncode == -9
    (journal,) = (root / "state").rglob("journal.jsonl")
    with open(journal, "ab") as f:
        f.write(record)
    assert [h["outcome"] for h in inproc(root, "history", monkeypatch)] == ["interrupted"]
    rep = inproc(root, mode, monkeypatch)
    if mode == "resume":
        assert rep["outcome"] == "fixed", rep
        fixed_state(root)
    else:
        assert rep["outcome"] == "rolled-back", rep
        assert snapshot(root) == before


def test_history_of_a_journal_with_a_text_start_time_is_no_crash(root: Path, monkeypatch):
    """Two runs, one whose first record's time is text: the sort by start time compared an
    int with a str (exit 70), and `remedy history` printed nothing."""
    assert drive(root, "run", crash="applied:1").returncode == -9
    (journal,) = (root / "state").rglob("journal.jsonl")
    copy = journal.parent.parent / "0000000000aa"
    shutil.copytree(journal.parent, copy)
    lines = journal.read_bytes().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["ts"], rec["owner"] = "yesterday", ["x"]
    journal.write_bytes(json.dumps(rec).encode() + b"\n" + b"".join(lines[1:]))
    hist = inproc(root, "history", monkeypatch)
    assert [h["outcome"] for h in hist] == ["interrupted", "interrupted"], hist
    assert sorted(h["started"] is None for h in hist) == [False, True], hist
    assert all(h["owner"] is None or isinstance(h["owner"], str) for h in hist)
    r = subprocess.run([sys.executable, "-m", "remedy", "history", "--local"], text=True,
                       capture_output=True, timeout=120,
                       env={**os.environ, "XDG_STATE_HOME": str(root / "state")})  # fmt: skip
    assert r.returncode == 0 and "0000000000aa" in r.stdout, r.stderr


@pytest.mark.parametrize(
    "reply",
    [
        b'{"runs": 5}\n',
        b'{"runs": [5]}\n',
        b'{"runs": [{"first": {}}]}\n',
        b'{"runs": [{"run_id": ["x"]}]}\n',
    ],
)
def test_a_runs_reply_of_the_wrong_shape_is_a_clear_error(reply: bytes):
    t = ScriptedTransport(lambda call: CommandResult(0, reply, b"", 0.0), host="evil")
    r = Runner(t, collect=None, prober=None)  # type: ignore[arg-type]

    async def no_setup() -> None:
        r.hs.state_dir, r.hs.python, r.hs.agent_path = "/s", "/usr/bin/python3", "/s/agent.py"

    r.hs.setup = no_setup  # type: ignore[method-assign]
    with pytest.raises(RemedyError, match="runs"):
        asyncio.run(r.runs())


def test_control_a_runs_reply_of_the_agents_shape_is_taken():
    reply = (
        b'{"runs": [{"run_id": "abc", "first": {"ts": 5, "event": "start", "owner": "me"}, '
        b'"last": {"event": "finished", "outcome": "fixed"}, "committed": [0, 1]}]}\n'
    )
    t = ScriptedTransport(lambda call: CommandResult(0, reply, b"", 0.0), host="h")
    r = Runner(t, collect=None, prober=None)  # type: ignore[arg-type]

    async def no_setup() -> None:
        r.hs.state_dir, r.hs.python, r.hs.agent_path = "/s", "/usr/bin/python3", "/s/agent.py"

    r.hs.setup = no_setup  # type: ignore[method-assign]
    (run,) = asyncio.run(r.runs())
    assert run["run_id"] == "abc" and run["outcome"] == "fixed" and run["started"] == 5
    assert run["committed_steps"] == [0, 1] and run["owner"] == "me"
