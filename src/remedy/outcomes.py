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
    "rolled-back": 3,
    "no-complete-plan": 3,
    "refused": 5,
    "needs-attention": 6,
    "unreachable": 4,
    "interrupted": 4,
    "error": 2,
    # fleet only: a host the rollout never started (untouched); the stop says why (7)
    "skipped": 13,
}

# a fleet rollout that stopped before every host was tried (error budget, canary, signal)
EXIT_STOPPED = 7


def exit_code_for(outcome: str) -> int:
    """The exit code of an outcome; an unknown one asks for attention rather than passing."""
    return OUTCOME_EXIT.get(outcome, 6)
