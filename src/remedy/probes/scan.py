"""Probe output -> symptoms, through the same signature catalog as every log.

The real scanner is `remedy.evidence.scan_lines(lines, source=...)` (signatures, needles,
`near` context, `supersedes`). While that module is being written this falls back to a
minimal matcher over knowledge/signatures.yaml (pattern search per line, `supersedes`
honoured, no `near` guards), so probe tests can run; the fallback is used only when
`scan_lines` cannot be imported.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import yaml

from remedy.results import Symptom


def scan_text(text: str, source: str) -> list[Symptom]:
    return scan(text.splitlines(), source)


def scan(lines: list[str], source: str) -> list[Symptom]:
    if not lines:
        return []
    try:
        from remedy.evidence import scan_lines
    except ImportError:
        return _fallback_scan(lines, source)
    return list(scan_lines(lines, source=source).symptoms)


# ---- fallback (until remedy.evidence.scan_lines lands) ---------------------------------------


@dataclass(frozen=True)
class _Sig:
    id: str
    rx: re.Pattern[str]
    severity: str
    stage: str | None
    component: str | None
    supersedes: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _fallback_signatures() -> tuple[_Sig, ...]:
    from remedy.knowledge.loader import data_dirs

    kdir, _ = data_dirs()
    data: dict[str, Any] = yaml.safe_load((kdir / "signatures.yaml").read_text(encoding="utf-8"))
    out = []
    for s in data.get("signatures", []):
        out.append(
            _Sig(
                id=s["id"],
                rx=re.compile(s["pattern"]),
                severity=s.get("severity", "error"),
                stage=s.get("stage"),
                component=s.get("component"),
                supersedes=tuple(s.get("supersedes") or ()),
            )
        )
    return tuple(out)


def _field(name: str) -> str:
    return re.sub(r"__\d+$", "", name)


def _fallback_scan(lines: list[str], source: str) -> list[Symptom]:
    out: list[Symptom] = []
    sigs = _fallback_signatures()
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        hits: list[tuple[int, int, _Sig, re.Match[str]]] = []
        for order, sig in enumerate(sigs):
            m = sig.rx.search(line)
            if m:
                hits.append((m.start(), order, sig, m))
        dropped = {d for _, _, sig, _ in hits for d in sig.supersedes}
        for _, _, sig, m in sorted(hits, key=lambda h: (h[0], h[1])):
            if sig.id in dropped:
                continue
            fields = {_field(k): v for k, v in m.groupdict().items() if v}
            out.append(
                Symptom(
                    signature=sig.id,
                    line=no,
                    text=line[:500],
                    source=source,
                    fields=fields,
                    stage=sig.stage,
                    component=sig.component,
                    severity=sig.severity,
                )
            )
    return out
