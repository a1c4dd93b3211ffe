"""Run outcomes and their exit codes: one table for the CLI, run reports, fleets and exports.

Scripts branch on these codes, so a name and its code never change meaning. ``fixed`` is
claimed only when the operation that failed was seen to succeed (the build, the import, the
launch, the service coming up ready); everything short of that has its own name and code.
"""

from __future__ import annotations

# outcome name -> exit code
OUTCOME_EXIT: dict[str, int] = {
    "fixed": 0,  # the failing operation was re-run and now succeeds
    "nothing-to-do": 10,  # every rule holds and every consumer passes
    "applied-restart-pending": 11,  # steps applied (cheap verification); units still to restart
    "applied-not-fixed": 12,  # steps applied, but the original failure remains
    # steps applied, nothing re-run: no consumer to verify (`plan --consumers ""`, none on
    # the host, every probe unable to run) and no failed operation from a log
    "applied-not-verified": 14,
    "rolled-back": 3,
    "no-complete-plan": 3,
    "refused": 5,
    "needs-attention": 6,
    "unreachable": 4,
    "host-key-rejected": 8,  # unknown or changed host key: trust it knowingly, never retried
    "interrupted": 4,
    "error": 2,
    # fleet only: a host the rollout never started (untouched); the stop says why (7)
    "skipped": 13,
}

# a fleet rollout that stopped before every host was tried (error budget, canary, signal)
EXIT_STOPPED = 7


# what the exit codes mean, for --help and the README (tests/test_first_hour.py checks both
# list every code here)
EXIT_MEANING: dict[int, str] = {
    0: "ok / fixed; a requested rollback done",
    1: "findings (diagnose) or predicted breakage (impact --fail-on-breakage)",
    2: "bad input or usage",
    3: "no complete plan / a run failed and was rolled back",
    4: "host unreachable or connection dropped (interrupted)",
    5: "refused (stale plan, host locked)",
    6: "needs attention (a rollback failed)",
    7: "fleet rollout stopped (canary failed, error budget spent)",
    8: "host key unknown or changed (ssh-keyscan / --accept-new)",
    10: "nothing to do",
    11: "applied, restart pending (--verify cheap: units still to restart)",
    12: "applied, but the original failure remains",
    13: "fleet: a host skipped (never started) when the rollout stopped",
    14: "applied, not verified (nothing was re-run: no consumer to verify, no log's operation)",
    70: "internal error (a bug in remedy)",
    128: "+N: stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); 141 stdout reader left",
}

# A rollback the user asked for (`remedy rollback`, `remedy resume --rollback`) that finished
# is the command succeeding, not a failed run.
REQUESTED_ROLLBACK_EXIT: dict[str, int] = {"rolled-back": 0}


def exit_code_for(outcome: str) -> int:
    """The exit code of an outcome; an unknown one asks for attention rather than passing."""
    return OUTCOME_EXIT.get(outcome, 6)


def transport_outcome(exc: BaseException) -> str:
    """The outcome of a connection that failed: a host key problem is not "unreachable"
    (retrying will not help; a person must trust or re-check the key)."""
    from remedy.errors import HostKeyRejected

    return "host-key-rejected" if isinstance(exc, HostKeyRejected) else "unreachable"
