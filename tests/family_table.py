"""The runner the message-family tables (tests/test_signature_families_*.py) share.

Each table row is a log, the class log-only diagnosis must rank first (None: no class may be
named unless the row lists classes it must not name), and the classes that must NOT be ranked.
"""

from __future__ import annotations

from pathlib import Path

from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge


def rules_ranked(tmp_path: Path, lines: list[str]) -> list[str]:
    """The rule classes log-only diagnosis ranks for these lines, best first."""
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    symptoms, _, wrappers = scan_logs([log])
    d = diagnose(load_knowledge(), None, symptoms, wrappers=wrappers)
    return [h.rule for h in d.hypotheses if h.source == "rules"]


def check_family(tmp_path: Path, lines: list[str], first: str | None, never: list[str]) -> None:
    ranked = rules_ranked(tmp_path, lines)
    if first is None:
        assert ranked == [] or never, ranked
    else:
        assert ranked and ranked[0] == first, ranked
    assert not set(ranked) & set(never), ranked
