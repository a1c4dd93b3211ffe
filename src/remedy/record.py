"""Plain records: equality and repr over ``_FIELDS``, as the dataclasses they replace gave.

Why: a log-only ``diagnose`` imports the modules these records live in, and importing
dataclasses (inspect, ast, dis, tokenize) was ~7-9 ms of that command (perf-45). One base
instead of the same four methods written into each record."""

from __future__ import annotations


class Record:
    """``__eq__`` (same class, fields equal) and ``__repr__`` over ``_FIELDS``; unhashable,
    as a mutable dataclass (eq, not frozen). A subclass without ``__slots__`` keeps a
    ``__dict__``, which pickle and copy restore as-is."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS)
        return f"{type(self).__qualname__}({inner})"


class FrozenRecord(Record):
    """A frozen dataclass's record: fields set once in ``__init__`` (``object.__setattr__``),
    assignment and deletion refused, hashed by its fields."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self._FIELDS))
