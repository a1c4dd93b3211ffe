"""What a log-only diagnosis reads of the knowledge, as plain data (remedy.diagnose's
hypotheses_from_log, learned_hypotheses and the field signals' key): the rules (id, title,
predicted signatures, repairs, confirm_with templates), whether each action changes the host,
the version pairs and log fields, and the expression functions over the CUDA tables.

Made from the validated knowledge (remedy.knowledge.loader) and kept like it
(remedy.knowledge.kbcache: private, keyed on the same content, only the classes named here
unpickled), as plain records instead of ~670 pydantic instances. ``log_view(kb)`` of a loaded
knowledge base and ``load_log_view()`` from the cache are the same object graph, read by the
same diagnosis code: `remedy diagnose --log` with no facts reads this instead of the whole
knowledge base.
"""

from __future__ import annotations

from typing import Any


class Record:
    """A validated model's fields as plain attributes (``fields`` in the model's order)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"Record({inner})"


class LogView:
    """The knowledge a log-only diagnosis reads (remedy.knowledge.loader.Knowledge's names)."""

    def __init__(
        self,
        rules: dict[str, Record],
        actions: dict[str, Record],
        pairs: list[Record],
        log_fields: list[Record],
        functions: Any,
    ) -> None:
        self.rules = rules
        self.actions = actions
        self.pairs = pairs
        self.log_fields = log_fields
        self.functions = functions


def plain(value: Any) -> Any:
    """``value`` with every pydantic model in it a Record of its fields (by attribute name),
    lists, tuples and dicts copied; anything else as it is."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        rec = Record(**{n: plain(getattr(value, n)) for n in type(value).model_fields})
        target = getattr(type(value), "target", None)
        if isinstance(target, property):  # skew.Pair: the rule a log's disagreement is for
            rec.target = value.target  # type: ignore[attr-defined]
        return rec
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def log_view(kb: Any) -> LogView:
    """The log-only view of a loaded knowledge base."""
    from remedy.knowledge.functions import Functions

    fns = Functions.__new__(Functions)
    fns.__dict__.update(
        {k: plain(v) for k, v in vars(kb.functions).items() if not k.startswith("_")}
    )
    return LogView(
        rules={
            rid: Record(rule=plain(cr.rule), confirm_with=list(cr.confirm_with))
            for rid, cr in kb.rules.items()
        },
        actions={
            aid: Record(action=Record(effects=plain(ca.action.effects)))
            for aid, ca in kb.actions.items()
        },
        pairs=plain(list(kb.pairs)),
        log_fields=plain(list(kb.log_fields)),
        functions=fns,
    )


# the view's form in the cache (change it with the classes above)
_FORMAT = "logview-1"


def load_log_view() -> LogView:
    """The log-only view of the knowledge (load_knowledge's directories), from the cache when
    these same files were viewed before; else the knowledge is loaded (and checked: its
    errors are raised as load_knowledge raises them) and the view kept."""
    from remedy.knowledge import kbcache
    from remedy.knowledge.dirs import data_dirs

    kdir, pdir = data_dirs()
    k = None
    if kdir.is_dir() and pdir.is_dir():  # else load_knowledge says which is missing
        key = kbcache.key(kdir, pdir)
        k = None if key is None else _FORMAT.encode() + b"\0" + key
    view = kbcache._load("logview", k, _allowed()) if k is not None else None
    if type(view) is not LogView:
        from remedy.knowledge.loader import load_knowledge

        view = log_view(load_knowledge())
        if k is not None:
            kbcache._save("logview", k, view)
    return view


def _allowed() -> dict[str, frozenset[str]]:
    return {
        __name__: frozenset({"LogView", "Record"}),
        "remedy.knowledge.kbcache": frozenset({"_expression", "_template", "_functions"}),
    }
