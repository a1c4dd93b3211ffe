"""Evidence: known log signatures and the streaming log reader that turns logs into symptoms.

from remedy.evidence import scan_path, scan_lines, ScanResult
res = scan_path("server.log")          # default catalog: knowledge/signatures.yaml
res.symptoms, res.suspicious, res.lines, res.bytes, res.source
"""

from remedy.evidence import reader
from remedy.evidence.catalog import (
    Catalog,
    Signature,
    default_catalog,
    knowledge_dir,
    load_catalog,
)
from remedy.evidence.scan import ScanResult, scan_lines, scan_path

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
