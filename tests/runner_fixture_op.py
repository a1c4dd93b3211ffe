"""A runner-only test operation: fixed commands and touches, for the executor's own tests.

The planner never produces it and a saved plan holding it is refused by `run --plan` (its
steps are not what remedy plans from the facts): it exists so that journal, checkpoint,
restore and signal tests can drive the Runner with steps of every kind of touch.
"""

from __future__ import annotations

from typing import Literal

from remedy.model import Touch
from remedy.operations import Operation, register


@register
class FixtureShell(Operation):
    op: Literal["test-fixture-shell"] = "test-fixture-shell"
    cmds: list[str]
    paths: list[Touch] = []

    def commands(self) -> list[str]:
        return list(self.cmds)

    def touches(self) -> list[Touch]:
        return list(self.paths)
