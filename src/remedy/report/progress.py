"""Progress on long work, on stderr: what is happening and for how long.

Only on a terminal (a log file or a pipe gets no spinner frames) and never on stdout, so
`--json` output stays one clean document. REMEDY_NO_PROGRESS=1 turns it off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def wanted() -> bool:
    return sys.stderr.isatty() and not os.environ.get("REMEDY_NO_PROGRESS")


@contextmanager
def activity(what: str) -> Iterator[None]:
    """A spinner, `what` and the elapsed time on stderr while the block runs (transient)."""
    if not wanted():
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        p.add_task(what, total=None)
        yield
