"""The confirmation question is terminal text like the rest: no escape from the host.

The attack: `remedy rollback` asks `Roll back run RUN_ID on HOST?`, and RUN_ID is a directory
name in the host's state dir (a hostile host answers the agent's `runs` with any name). The
preview lines go through remedy's console, which strips controls; the question went through
typer's prompt, which writes it as is: OSC 52 (set the clipboard), a screen clear, bidi and
zero-width characters reached the operator's terminal right where they type their answer.
"""

from __future__ import annotations

import sys


def test_the_rollback_question_holds_no_escape_from_the_host(monkeypatch, capsys):
    """`Roll back run RUN_ID on HOST?` names a run by its directory on the host (a hostile
    host's `runs` reply chooses it): the question went to the terminal through typer's
    prompt, not the console, with the run id's OSC 52 and screen clear raw."""
    import io

    from remedy.confirm import ask

    stdin = io.StringIO("n\n")
    stdin.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", stdin)
    evil = "ab12\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202e\u200b"
    assert ask(f"Roll back run {evil} on h?", yes=False, what="roll back") is False
    out = capsys.readouterr().out
    assert "Roll back run ab12" in out and "on h?" in out
    assert not [c for c in ("\x1b", "\x07", "\u202e", "\u200b") if c in out], repr(out)
