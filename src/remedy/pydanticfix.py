"""pydantic's question "does this default factory take the validated data?", answered at once
for the builtin containers.

Building a model class, pydantic asks it of every `Field(default_factory=...)` through
`inspect.signature`; for `list`, `dict`, `set` that means parsing the builtin's text signature
with the tokenizer (its regex compiled on first use): ~0.4 ms a field, ~110 fields, plus
~20 ms for the first. remedy's models use `default_factory=list/dict/set` throughout. For
those builtins the answer is always no (`list(iterable=(), /)`: its one parameter has a
default; `dict` has no signature pydantic can read, which it also takes as no), so it is
given without asking; every other factory goes to pydantic's own function.

The answer is put in when pydantic's `_fields` module is first imported (an import hook
that removes itself); a pydantic without that function is left as it is.
"""

from __future__ import annotations

import sys

_MODULE = "pydantic._internal._fields"
_NAME = "takes_validated_data_argument"
# builtin factories whose signature has no required positional parameter
NO_DATA = (list, dict, set, frozenset, tuple)


def _patch(module: object) -> None:
    orig = getattr(module, _NAME, None)
    if not callable(orig) or getattr(orig, "__wrapped__", None) is not None:
        return

    def takes_validated_data_argument(default_factory: object) -> bool:
        if default_factory in NO_DATA:
            return False
        return orig(default_factory)

    takes_validated_data_argument.__wrapped__ = orig  # type: ignore[attr-defined]
    takes_validated_data_argument.__doc__ = orig.__doc__
    setattr(module, _NAME, takes_validated_data_argument)


class _Finder:
    """A meta path finder for one module: it lets the usual finders find it and patches it
    once executed (pydantic's own modules import the name from it after that)."""

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> object:
        if name != _MODULE:
            return None
        if cls in sys.meta_path:
            sys.meta_path.remove(cls)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_and_patch(module: object) -> None:
            exec_module(module)
            _patch(module)

        loader.exec_module = exec_and_patch  # type: ignore[union-attr]
        return spec


def install() -> None:
    """Before pydantic is imported (remedy/__init__.py): patch its `_fields` when it loads."""
    if _MODULE in sys.modules:
        _patch(sys.modules[_MODULE])
    elif _Finder not in sys.meta_path:
        sys.meta_path.insert(0, _Finder)  # type: ignore[arg-type]
