"""The host agent's reply is a JSON object or a clear error.

The attack: a hostile host (the network is untrusted) answers the agent's `read`, `runs`
or `lock-acquire` with valid JSON that is no object (`[]`, `5`, `"x"`). The runner took it as
the agent's dict and `data.get(...)` ended the run in an internal error (exit 70). Now
`HostState.agent` refuses it: a RemedyError naming the agent command and the reply.
"""

from __future__ import annotations

import asyncio

import pytest

from remedy.errors import RemedyError
from remedy.executor.hoststate import HostState
from remedy.transport.base import CommandResult
from remedy.transport.scripted import ScriptedTransport


@pytest.mark.parametrize("reply", [b"[]\n", b"5\n", b'"x"\n', b"null\n"])
def test_an_agent_reply_that_is_no_object_is_a_clear_error(reply: bytes):
    t = ScriptedTransport(lambda call: CommandResult(0, reply, b"", 0.0), host="evil")
    hs = HostState(t, state_dir="/s", python="/usr/bin/python3", agent_path="/s/agent.py")
    with pytest.raises(RemedyError, match="no JSON object"):
        asyncio.run(hs.agent("runs", "/s"))


def test_control_an_object_reply_is_taken():
    t = ScriptedTransport(lambda call: CommandResult(0, b'{"runs": []}\n', b"", 0.0), host="h")
    hs = HostState(t, state_dir="/s", python="/usr/bin/python3", agent_path="/s/agent.py")
    assert asyncio.run(hs.agent("runs", "/s")) == (0, {"runs": []})
