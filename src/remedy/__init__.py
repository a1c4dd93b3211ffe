"""remedy: a remediation planner for GPU inference hosts."""

import os as _os
import sys as _sys

__version__ = "0.1.0"

# pydantic looks for plugins in every installed distribution's entry points when the first
# model class is built (importlib.metadata: ~25 ms of each command's start-up); remedy uses
# no pydantic plugin. An explicit setting in the environment wins.
_os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def _no_plugin_loader() -> None:
    """With every plugin disabled, pydantic's plugin loader answers "no plugins" without
    looking, but importing it still imports importlib.metadata (email, zipfile, csv...: ~12 ms,
    more on a busy host) at the first model class. Stand in for it until something else is
    asked of it: `get_plugins` answers as pydantic's does for that setting (read at each call,
    like pydantic); any other name loads and returns the real module's."""
    name = "pydantic.plugin._loader"
    if name in _sys.modules:
        return
    import types

    stub = types.ModuleType(name)

    def _real() -> types.ModuleType:
        import importlib

        if _sys.modules.get(name) is stub:
            del _sys.modules[name]
        return importlib.import_module(name)

    def get_plugins() -> tuple[()] | object:
        if _os.environ.get("PYDANTIC_DISABLE_PLUGINS") in ("__all__", "1", "true"):
            return ()
        return _real().get_plugins()

    def __getattr__(attr: str) -> object:
        if attr.startswith("__"):  # the import system's own probes (__path__, ...)
            raise AttributeError(attr)
        return getattr(_real(), attr)

    stub.get_plugins = get_plugins  # type: ignore[attr-defined]
    stub.__getattr__ = __getattr__  # type: ignore[attr-defined]
    _sys.modules[name] = stub


if _os.environ["PYDANTIC_DISABLE_PLUGINS"] in ("__all__", "1", "true"):
    _no_plugin_loader()

# pydantic's default-factory signature check, answered at once for list/dict/set (~30 ms of
# model building): remedy.pydanticfix
from remedy import pydanticfix as _pydanticfix  # noqa: E402

_pydanticfix.install()
