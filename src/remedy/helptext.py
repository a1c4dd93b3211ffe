"""Help text built from the one outcome table (`remedy.outcomes`), so --help, the README and
the code cannot list different exit codes."""

from __future__ import annotations

from remedy.outcomes import EXIT_MEANING


def exit_code_lines() -> list[str]:
    """One line a code: `  3  no complete plan / ...` (128 is written 128+N)."""
    return [
        f"  {'128+N' if c == 128 else c:<5} {m.removeprefix('+N: ')}"
        for c, m in EXIT_MEANING.items()
    ]


def exit_code_epilog() -> str:
    # "\b" keeps click from re-flowing the table into one paragraph
    return "\b\nExit codes:\n" + "\n".join(exit_code_lines())
