"""Evidence: known log signatures and the streaming log reader that turns logs into symptoms.

from remedy.evidence import scan_path, scan_lines, ScanResult
res = scan_path("server.log")          # default catalog: knowledge/signatures.yaml
res.symptoms, res.suspicious, res.lines, res.bytes, res.source

The names below are imported on first use (PEP 562), so that ``remedy.evidence.early`` and
``fastscan`` can start a scan before pydantic and the catalog are imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remedy.evidence import reader
    from remedy.evidence.catalog import (
        Catalog,
        Signature,
        default_catalog,
        knowledge_dir,
        load_catalog,
    )
    from remedy.evidence.scan import ScanResult, scan_lines, scan_path

_WHERE = {
    "Catalog": "remedy.evidence.catalog",
    "Signature": "remedy.evidence.catalog",
    "default_catalog": "remedy.evidence.catalog",
    "knowledge_dir": "remedy.evidence.catalog",
    "load_catalog": "remedy.evidence.catalog",
    "ScanResult": "remedy.evidence.scan",
    "scan_lines": "remedy.evidence.scan",
    "scan_path": "remedy.evidence.scan",
}


def __getattr__(name: str) -> Any:
    if name == "reader":
        return importlib.import_module("remedy.evidence.reader")
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'remedy.evidence' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "Catalog",
    "ScanResult",
    "Signature",
    "default_catalog",
    "knowledge_dir",
    "load_catalog",
    "reader",
    "scan_lines",
    "scan_path",
]
