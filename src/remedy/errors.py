"""remedy's own errors. Every failure a user can cause ends in one of these, never a traceback.

RemedyError                      exit code 2 unless a subclass says otherwise
├── InputError                   bad user input: a log, a facts file, an argument
│   ├── LogReadError             a log that cannot be read (binary, missing, permission)
│   ├── UnknownExample           an --example name that is not built in
│   ├── IdentityFileError        a host's identity file is missing or unreadable
│   └── fleet's InventoryError   a malformed inventory or --limit (also an AtFileLine)
├── AtFileLine                   about a data file: the message starts with file:line
│   └── KnowledgeError           knowledge/ or playbooks/ YAML is malformed
├── TransportError               talking to a host failed
│   ├── HostUnreachable          connect refused / timed out / DNS
│   ├── HostKeyRejected          unknown or changed host key
│   ├── CommandTimeout           a remote command ran past its timeout (killed)
│   └── ConnectionDropped        the connection went away mid-command
├── PlanError                    no plan can be made, or a saved plan is unusable
│   └── StalePlan                facts changed since the plan was made (carries the diff)
├── LockHeld                     another run holds the host lock (carries owner, id)
├── RunError                     apply/probe/rollback failed
│   ├── ProbeFailed
│   └── RollbackFailed
└── Interrupted                  a signal stopped remedy (exit 128 + the signal's number)
"""

from __future__ import annotations


class RemedyError(Exception):
    exit_code = 2
    label = "error"  # how the CLI's one-line message starts

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class InputError(RemedyError):
    pass


class LogReadError(InputError):
    pass


class UnknownExample(InputError):
    pass


class AtFileLine(RemedyError):
    """An error about a data file: the message starts with `file:line: ` where known."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        super().__init__(where + message, hint=hint)
        self.file = file
        self.line = line


class KnowledgeError(AtFileLine):
    pass


class TransportError(RemedyError):
    exit_code = 4


class HostUnreachable(TransportError):
    pass


class HostKeyRejected(TransportError):
    """Unknown or changed host key: its own exit code (outcomes: host-key-rejected), since
    the host answered and waiting will not help."""

    exit_code = 8
    label = "host key"


class CommandTimeout(TransportError):
    pass


class OutputTooLarge(TransportError):
    """A host command printed more than remedy keeps (its process was killed): a command's
    output is data from the host and must not exhaust this machine's memory."""


class ConnectionDropped(TransportError):
    pass


# the connection itself is gone: whatever ran under it says nothing about the host
CONNECTION_LOST = (ConnectionDropped, HostUnreachable)


class IdentityFileError(InputError):
    """An identity (private key) file named for a host is missing or unreadable: the host was
    never tried, so it is not unreachable; the message names the file."""


class PlanError(RemedyError):
    pass


class StalePlan(PlanError):
    exit_code = 5

    def __init__(self, message: str, diff: list[str]) -> None:
        super().__init__(message)
        self.diff = diff


class LockHeld(RemedyError):
    exit_code = 5


class RunError(RemedyError):
    exit_code = 3


class ProbeFailed(RunError):
    pass


class RollbackFailed(RunError):
    exit_code = 6


class Interrupted(RemedyError):
    """Ctrl-C, SIGTERM (a service stop, a CI timeout) or SIGHUP (a closed terminal): the work
    was cancelled where it stood. Exit 128 + the signal's number, as a shell reports it."""

    label = "stopped"

    def __init__(self, signum: int) -> None:
        import signal

        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        super().__init__(f"interrupted by {name}")
        self.signum = signum
        self.exit_code = 128 + signum
