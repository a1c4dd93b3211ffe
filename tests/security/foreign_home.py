"""A HOME owned by a given user and a memory cap for the child that reads it: shared by the
tests that attack what remedy reads from another user's ~/.ssh."""

from __future__ import annotations

import os
import resource
from pathlib import Path

NOBODY = 65534


def cap_memory() -> None:
    """preexec_fn: a 2 GiB address-space cap, so a read of /dev/zero fails instead of filling RAM."""
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def home_owned_by(tmp_path: Path, owner: int) -> Path:
    """TMP/home-OWNER with a 0700 .ssh, both owned by OWNER; TMP itself readable by all."""
    tmp_path.chmod(0o755)
    home = tmp_path / f"home-{owner}"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    os.chown(home, owner, owner)
    os.chown(home / ".ssh", owner, owner)
    return home
