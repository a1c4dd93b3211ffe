"""Start remedy as a foreground command at a terminal gets started: SIGINT, SIGTERM and
SIGHUP at their defaults.

remedy keeps a stop signal its parent ignored (`nohup`, a script's `cmd &`: remedy.entry),
so a test that sends one must not hand down what the test runner itself inherited (pytest
started under nohup, or in the background of a CI script, ignores SIGHUP or SIGINT)."""

from __future__ import annotations

import signal


def default_stop_signals() -> None:
    """preexec_fn for the remedy process a test will signal."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
