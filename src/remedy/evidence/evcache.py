"""The signature catalog and the checked field signals, kept like the knowledge base
(remedy.knowledge.kbcache: private, keyed on content, only allowlisted classes unpickled).

Why here and not in kbcache: these are evidence's own objects (knowledge never imports
evidence, docs/ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from remedy.knowledge.kbcache import _hash_files, _load, _save, _sources, _versions

# The signature catalog (remedy.evidence.catalog.default_catalog), with the literal sets
# remedy.evidence.prefilter derives from it, likewise: ~170 signatures validated and ~10 ms
# of literal reduction per run that reads a log, before the scan's results can be matched.
_CATALOG_SOURCES = ("evidence", "knowledge/yamlload.py", "model")


def catalog_key(path: Path) -> bytes | None:
    """sha256 of the signatures file (path and bytes), the evidence modules' source (they
    define the checks, the regex dialect and the literal sets) and the versions."""
    h = _versions(str(path), _CATALOG_FORMAT)
    return _hash_files(h, [(b"S", _sources(_CATALOG_SOURCES)), (b"C", [path])])


# the catalog's form in the cache: plain objects (remedy.evidence.catalog), no pydantic models
_CATALOG_FORMAT = "catalog-plain-1"


def _allowed_catalog() -> dict[str, frozenset[str]]:
    # a compiled pattern is pickled as kbcache._no_regex() (compiled again on first use)
    return {
        "remedy.evidence.catalog": frozenset({"Catalog", "Signature", "SignatureSource", "Near"}),
        "remedy.knowledge.kbcache": frozenset({"_no_regex"}),
    }


def load_catalog(k: bytes) -> tuple[Any, list[str], list[tuple[str, bytes | None]]] | None:
    """(catalog, prefilter literals, engine patterns) cached under ``k``, or None."""
    from remedy.evidence.catalog import Catalog

    got = _load("catalog", k, _allowed_catalog())
    if (
        type(got) is tuple
        and len(got) == 3
        and type(got[0]) is Catalog
        and all(type(x) is str for x in got[1])
        and all(
            type(p) is tuple and type(p[0]) is str and (p[1] is None or type(p[1]) is bytes)
            for p in got[2]
        )
    ):
        return got
    return None


def save_catalog(k: bytes, value: tuple[Any, list[str], list[tuple[str, bytes | None]]]) -> None:
    _save("catalog", k, value)


# The field signals (knowledge/field-signals.yaml) `diagnose` ranks hypotheses with: ~60
# entries validated and checked against the rules and the signatures on every run.
def signals_key(path: Path, rule_ids: list[str], signature_ids: list[str]) -> bytes | None:
    """sha256 of the signals file, what it is checked against (the knowledge's rule ids, the
    catalog's signature ids), the evidence modules' source and the versions."""
    h = _versions(
        str(path), _SIGNALS_FORMAT, "\n".join(sorted(rule_ids)), "\n".join(sorted(signature_ids))
    )
    return _hash_files(h, [(b"S", _sources(_CATALOG_SOURCES)), (b"F", [path])])


# the signals' form in the cache: plain objects (remedy.evidence.fields, .plain)
_SIGNALS_FORMAT = "signals-plain-1"


def load_signals(k: bytes) -> list[Any] | None:
    """The checked signals cached under ``k``, or None."""
    from remedy.evidence import fields

    allowed = {
        "remedy.evidence.fields": frozenset({"Signal"}),
        "remedy.evidence.plain": frozenset({"Source"}),
    }
    got = _load("signals", k, allowed)
    if type(got) is list and all(type(s) is fields.Signal for s in got):
        return got
    return None


def save_signals(k: bytes, signals: list[Any]) -> None:
    _save("signals", k, signals)


# The CUDA API table (knowledge/cuda-api-changes.yaml: changes, families, headers), each part
# checked by pydantic (remedy.evidence.fields_schema) the first time a log needs it, and kept
# here as plain rows (remedy.evidence.fields): a log naming a removed API or header reads them
# without importing pydantic (~30 ms).
def api_table_key(path: Path) -> bytes | None:
    """sha256 of the table (path and bytes), the evidence modules' source and the versions."""
    h = _versions(str(path), _API_FORMAT)
    return _hash_files(h, [(b"S", _sources(_CATALOG_SOURCES)), (b"A", [path])])


# the table's form in the cache: {part name: its plain rows}
_API_FORMAT = "api-table-plain-1"


def load_api_table(k: bytes) -> dict[str, Any] | None:
    """The checked parts of the table cached under ``k`` (part name -> rows), or None."""
    from remedy.evidence import fields

    allowed = {"remedy.evidence.fields": frozenset({"ApiChange", "ApiFamily", "RemovedHeader"})}
    got = _load("api-table", k, allowed)
    if type(got) is not dict:
        return None
    ok = {
        "changes": lambda v: (
            type(v) is dict and all(type(r) is fields.ApiChange for r in v.values())
        ),
        "families": lambda v: type(v) is tuple and all(type(r) is fields.ApiFamily for r in v),
        "headers": lambda v: (
            type(v) is dict and all(type(r) is fields.RemovedHeader for r in v.values())
        ),
    }
    if all(name in ok and ok[name](v) for name, v in got.items()):
        return got
    return None


def save_api_table(k: bytes, parts: dict[str, Any]) -> None:
    _save("api-table", k, parts)


# The GPU model table (knowledge/cuda-tables.yaml gpu_models: a model's regex and its compute
# capability) a log's GPU names are looked up in (remedy.evidence.fields.gpu_model_cc), as
# plain (model, cc) string pairs. Read through the YAML parse cache it cost that whole cache
# (every knowledge file's parse, ~3 MB, read, checked and unmarshalled: ~7-8 ms of each
# `diagnose --log`) for the few rows of one 5 KB file.
def gpu_models_key(path: Path) -> bytes | None:
    """sha256 of the tables file (path and bytes), the evidence modules' source and the
    versions."""
    h = _versions(str(path), _GPU_MODELS_FORMAT)
    return _hash_files(h, [(b"S", _sources(_CATALOG_SOURCES)), (b"G", [path])])


# the table's form in the cache: a tuple of (model regex, compute capability) strings
_GPU_MODELS_FORMAT = "gpu-models-plain-1"


def load_gpu_models(k: bytes) -> tuple[tuple[str, str], ...] | None:
    """The rows cached under ``k``, or None (no class is unpickled: strings in tuples)."""
    got = _load("gpu-models", k, {})
    if type(got) is tuple and all(
        type(r) is tuple and len(r) == 2 and type(r[0]) is str and type(r[1]) is str for r in got
    ):
        return got
    return None


def save_gpu_models(k: bytes, rows: tuple[tuple[str, str], ...]) -> None:
    _save("gpu-models", k, rows)
