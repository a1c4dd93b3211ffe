"""XDG_CACHE_HOME set in this process for a moment: where remedy would put a cache file under
another cache home, computed by remedy's own code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def xdg_cache_home(path: Path) -> Iterator[None]:
    """XDG_CACHE_HOME=PATH while the block runs; afterwards as it was (set or not)."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = old
