"""`remedy` as its console script runs, with the runner fixture operation registered and the
saved-plan check switched off: lets signal tests run a hand-made step through the real CLI.
Usage: python tests/cli_fixture_driver.py ARGS... (as `remedy ARGS...`)."""

from __future__ import annotations

import sys
from pathlib import Path

import remedy.entry  # noqa: F401 - installs the early signal handlers first, as the script does

sys.path.insert(0, str(Path(__file__).parent))

import runner_fixture_op  # noqa: E402, F401 - registers test-fixture-shell

import remedy.operations.verify as verify  # noqa: E402

verify.verify_saved_plan = lambda plan, kb: None  # the fixture plan is hand-made on purpose

remedy.entry.main()
