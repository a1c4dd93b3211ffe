"""The cyclic garbage collector is off while remedy starts up, and back on for the work.

Start-up builds some 50,000 objects that live until the process exits: modules, ~120 pydantic
model classes with their validators, the knowledge base. During `plan --example` the collector
ran ~100 times over them (~17 ms of a ~0.27 s command) and freed a few hundred objects. So the
console script pauses it first thing (`pause`), and a command resumes it (`resume`) once its
modules and knowledge are loaded: gc.freeze() first moves everything alive by then out of the
collector's sight (the process holds it to the end anyway), so the command's own work (a large
plan, a long log) runs with the collector on, as before, and no slower.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Turn the collector off until `resume` (a no-op when something else turned it off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Start-up is over: what exists now is frozen, and the collector is on again if `pause`
    turned it off (in-process callers that never paused it are left as they are)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
