"""Signals stop remedy's async work the way a dropped connection does, and say so.

Without this, SIGTERM (a service stop, a CI job's timeout) and SIGHUP (a closed terminal) killed
remedy on the spot with no word, and Ctrl-C left "remedy: interrupted" without the run id or
how to go on. Now the first SIGINT/SIGTERM/SIGHUP cancels the work at its current await (or
calls `on_first`, e.g. a fleet rollout that stops starting hosts and lets those in flight
finish; a second signal then cancels). The work unwinds through its own handlers: the
transports kill the process groups they started, locally and on the host; a run keeps the host
lock and its journal says where it stopped (`remedy resume` goes on, as after kill -9). Then
`Interrupted` is raised: exit 128 + the signal's number.

One handler serves the whole process (`install`, by the console script before it imports the
CLI), in one of three modes:
- work: inside `run_interruptible`, as above;
- hold: the signal is kept and acted on when the next work starts (it is cancelled before it
  does anything). run/resume/rollback hold from process start to their work and after it: a
  signal while Python imports remedy, or while the finished run's report is printed, no
  longer ends the process without the report (`--json` included) that scripts read;
- raise: `Interrupted` at once, wherever the program stands (read-only commands, where
  nothing has started that needs unwinding).
Without `install` (remedy used as a library, in-process tests) `run_interruptible` puts the
handler in place for its own duration only.

Handlers are Python-level (`signal.signal`), not the loop's: a callback queued from them runs
when the loop next turns, but a blocking prompt never lets it turn, so inside `prompting()`
(nothing started yet) a signal raises at once; a third signal does too (a user who keeps
pressing Ctrl-C wants out now).

A signal ignored when the handler goes in (inherited SIG_IGN: `nohup` for SIGHUP, a
non-interactive shell's `&` for SIGINT) is left ignored: whoever started remedy asked for it
to survive that signal, and Python keeps an inherited SIG_IGN for SIGINT the same way.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Literal, TypeVar

from remedy.errors import Interrupted

T = TypeVar("T")
Mode = Literal["raise", "hold", "work"]
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Process:
    """What the one handler needs to know; module state because signals are process state."""

    installed = False
    mode: Mode = "raise"
    pending: list[int] = []  # held, not yet acted on
    count = 0  # signals received by this process
    dispatch: Callable[[int], None] | None = None  # the running work's (work mode)
    prompting = False


def _handler(signum: int, _frame: Any) -> None:
    P = _Process
    P.count += 1
    if P.mode == "work" and P.dispatch is not None:
        P.dispatch(signum)
        return
    if P.mode == "hold" and P.count < 3 and not P.prompting:
        P.pending.append(signum)
        return
    raise Interrupted(P.pending[0] if P.pending else signum)


def install(mode: Mode = "hold", pending: list[int] | None = None) -> None:
    """The process-wide handler (main thread only), starting in `mode`; `pending`: signals
    noted before (the entry point's), taken over as held ones."""
    P = _Process
    for s in STOP_SIGNALS:
        if signal.getsignal(s) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(s, _handler)
    P.installed, P.mode = True, mode
    if pending:
        P.count += len(pending)
        P.pending.extend(pending)
        pending.clear()


def set_mode(mode: Literal["raise", "hold"]) -> None:
    """Leave hold for raise: a signal held so far is raised now."""
    P = _Process
    P.mode = mode
    if mode == "raise" and P.pending:
        first = P.pending[0]
        P.pending.clear()
        raise Interrupted(first)


def ignore() -> None:
    """The process is on its way out: further signals change nothing."""
    if _Process.installed:
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)


def current_mode() -> Mode:
    return _Process.mode


@contextlib.contextmanager
def prompting() -> Iterator[None]:
    """Around a blocking question asked before anything changed: a signal ends it at once."""
    was, _Process.prompting = _Process.prompting, True
    try:
        yield
    finally:
        _Process.prompting = was


def run_interruptible(
    work: Callable[[], Coroutine[Any, Any, T]],
    *,
    on_first: Callable[[int], None] | None = None,
) -> T:
    """asyncio.run(work()) with STOP_SIGNALS turned into cancellation, then `Interrupted`.

    on_first(signum), when given, handles the first signal inside the loop instead of the
    cancel. Work that finishes despite a signal (on_first let it) returns normally. Signals
    held before start act as soon as the work starts; one that came too late to act (the work
    had finished) is handled as the mode outside says."""
    import asyncio

    P = _Process
    received: list[int] = []  # this work's signals, acted on or not
    queued: list[int] = []  # before the loop ran
    late: list[int] = []  # came after the work was done
    acted = [0]
    box: dict[str, Any] = {}

    def in_loop(signum: int) -> None:
        task = box["task"]
        acted[0] += 1
        if task.done():
            late.append(signum)
        elif acted[0] == 1 and on_first is not None:
            on_first(signum)
        else:
            task.cancel()

    def dispatch(signum: int) -> None:
        received.append(signum)
        if P.prompting or len(received) >= 3:
            raise KeyboardInterrupt
        loop = box.get("loop")
        if loop is None:  # the loop not yet running: acted on when it starts
            queued.append(signum)
            return
        try:
            loop.call_soon_threadsafe(in_loop, signum)
        except RuntimeError:  # the loop closed: the work is over
            late.append(signum)

    async def main() -> T:
        box["task"] = asyncio.current_task()
        box["loop"] = asyncio.get_running_loop()
        while queued:
            in_loop(queued.pop(0))
        if box["task"].cancelling():  # a held signal: stop before the work does anything
            await asyncio.sleep(0)
        return await work()

    outer_mode, outer_dispatch = P.mode, P.dispatch
    old: dict[int, Any] = {}
    if not P.installed:
        for s in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):  # not the main thread: no signals
                if signal.getsignal(s) is not signal.SIG_IGN:  # ignored by the parent: stays
                    old[s] = signal.signal(s, _handler)
    received.extend(P.pending)
    queued.extend(P.pending)
    P.pending.clear()
    P.mode, P.dispatch = "work", dispatch
    try:
        result = asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        if received:
            raise Interrupted(received[0]) from None
        raise
    except Exception as exc:
        # a prompt (click's) turns the KeyboardInterrupt raised into it into its Abort
        if received and type(exc).__name__ == "Abort":
            raise Interrupted(received[0]) from None
        raise
    finally:
        P.mode, P.dispatch = outer_mode, outer_dispatch
        for s, h in old.items():
            signal.signal(s, h)
    if late and outer_mode == "hold":
        P.pending.extend(late)
    elif late:
        raise Interrupted(late[0])
    return result
