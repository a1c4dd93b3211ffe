"""Plain run-time objects for evidence's knowledge (signatures, field signals, the CUDA API
table): built from entries pydantic validated when the YAML was loaded, and read back from
the caches (remedy.evidence.evcache) without importing pydantic or the schema classes.

Why: a cached catalog and its signals were ~900 pydantic instances, each unpickled through
pydantic's __setstate__, and reading a log needed pydantic (~30 ms of imports) for classes
whose validation had long been done."""

from __future__ import annotations

from typing import Any


class Plain:
    """Fields in ``_FIELDS`` (keyword arguments; a missing one takes ``_DEFAULTS``), equality
    and repr over them. Containers in defaults are copied, never shared."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()
    _DEFAULTS: dict[str, Any] = {}

    def __init__(self, **kw: Any) -> None:
        for name in self._FIELDS:
            if name in kw:
                value = kw.pop(name)
            else:
                value = self._DEFAULTS[name]
                if isinstance(value, (list, dict)):
                    value = type(value)(value)
            object.__setattr__(self, name, value)
        if kw:
            raise TypeError(f"{type(self).__name__}: unknown field {next(iter(kw))!r}")

    @classmethod
    def of(cls, entry: Any) -> Any:
        """The plain object of a validated entry (same field names, nested ones converted by
        ``_NESTED``)."""
        d = {n: getattr(entry, n) for n in cls._FIELDS}
        for name, kind in cls._nested().items():
            if d[name] is not None:
                d[name] = kind.of(d[name])
        return cls(**d)

    @classmethod
    def _nested(cls) -> dict[str, type[Plain]]:
        return {}

    def as_dict(self) -> dict[str, Any]:
        """The fields, nested plain objects as dicts too (what pydantic's model_dump gave)."""
        return {
            n: v.as_dict() if isinstance(v := getattr(self, n), Plain) else v for n in self._FIELDS
        }

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the pydantic models were

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"{type(self).__name__}({inner})"


class Source(Plain):
    """An upstream citation (remedy.model.Source's fields and ``short``)."""

    __slots__ = ("repo", "path", "function", "ref", "doc", "thread", "note")
    _FIELDS = ("repo", "path", "function", "ref", "doc", "thread", "note")
    _DEFAULTS = dict.fromkeys(_FIELDS)
    repo: str | None
    path: str | None
    function: str | None
    ref: str | None
    doc: str | None
    thread: str | None
    note: str | None

    def short(self) -> str:
        from remedy.results import source_short

        return source_short(self)
