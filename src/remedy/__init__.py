"""remedy: a remediation planner for GPU inference hosts."""

import os as _os

__version__ = "0.1.0"

# pydantic looks for plugins in every installed distribution's entry points when the first
# model class is built (importlib.metadata: ~25 ms of each command's start-up); remedy uses
# no pydantic plugin. An explicit setting in the environment wins.
_os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
