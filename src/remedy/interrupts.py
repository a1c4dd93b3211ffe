"""Signals stop remedy's async work the way a dropped connection does, and say so.

Without this, SIGTERM (a service stop, a CI job's timeout) and SIGHUP (a closed terminal) killed
remedy on the spot with no word, and Ctrl-C left "remedy: interrupted" without the run id or
how to go on. Now the first SIGINT/SIGTERM/SIGHUP cancels the work at its current await (or
calls `on_first`, e.g. a fleet rollout that stops starting hosts and lets those in flight
finish; a second signal then cancels). The work unwinds through its own handlers: the
transports kill the process groups they started, locally and on the host; a run keeps the host
lock and its journal says where it stopped (`remedy resume` goes on, as after kill -9). Then
`Interrupted` is raised: exit 128 + the signal's number.

Handlers are Python-level (`signal.signal`), not the loop's: a callback queued from them runs
when the loop next turns, but a blocking prompt never lets it turn, so inside `prompting()`
(nothing started yet) a signal raises at once; a third signal does too (a user who keeps
pressing Ctrl-C wants out now).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from remedy.errors import Interrupted

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_prompting = False


@contextlib.contextmanager
def prompting() -> Iterator[None]:
    """Around a blocking question asked before anything changed: a signal ends it at once."""
    global _prompting
    was, _prompting = _prompting, True
    try:
        yield
    finally:
        _prompting = was


def run_interruptible(
    work: Callable[[], Coroutine[Any, Any, T]],
    *,
    on_first: Callable[[int], None] | None = None,
) -> T:
    """asyncio.run(work()) with STOP_SIGNALS turned into cancellation, then `Interrupted`.

    on_first(signum), when given, handles the first signal inside the loop instead of the
    cancel. Work that finishes despite a signal (on_first let it) returns normally."""
    received: list[int] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def in_loop(signum: int) -> None:
            if len(received) == 1 and on_first is not None:
                on_first(signum)
            elif not task.done():
                task.cancel()

        def handler(signum: int, _frame: Any) -> None:
            received.append(signum)
            if _prompting or len(received) >= 3:
                raise KeyboardInterrupt
            loop.call_soon_threadsafe(in_loop, signum)

        old: dict[int, Any] = {}
        for s in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):  # not the main thread: no signals
                old[s] = signal.signal(s, handler)
        try:
            return await work()
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    try:
        return asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        if received:
            raise Interrupted(received[0]) from None
        raise
    except Exception as exc:
        # a prompt (click's) turns the KeyboardInterrupt raised into it into its Abort
        if received and type(exc).__name__ == "Abort":
            raise Interrupted(received[0]) from None
        raise
