"""A hostile log line cannot make a signature's regex run for seconds (ReDoS).

The attack, for real: a log another user writes (their build's output, read by root's
`remedy diagnose --log`) holds one 64 KB line (reader.MATCH_CAP, what the matcher sees of any
line) shaped against a signature's pattern. Two patterns backtracked quadratically over one
word: `undefined-symbol` (a word of `.so.so.so…` after `undefined symbol:`: the path group
`[^\\s:]+\\.so[\\w.]*` rescanned the word once per `.so`) and
`nvcc-error-in-host-stdlib-header` (a word of `a/a/a…` after `): error: `, or of
`/include/c++/16/` repeated: `\\S*` tried from every position of the word, and the header's
rest of path was rescanned once per `include/c++/`). Each such line took ~13 s; a log of a
few hundred of them (a few MB) held root's diagnosis for hours. Now the same lines take
milliseconds, and the patterns match what they matched (their examples, checked by
tests/test_evidence_signatures.py).
"""

from __future__ import annotations

import time

import pytest

from remedy.evidence.catalog import default_catalog
from remedy.evidence.reader import MATCH_CAP

N = MATCH_CAP

ATTACKS = {
    "undefined-symbol": [
        "undefined symbol:" + ".so" * (N // 3),
        "undefined symbol:" + (".so" * (N // 3))[: N - 20] + ": ",
        ("a/.so" * (N // 5)) + ": x undefined symbol",
    ],
    "nvcc-error-in-host-stdlib-header": [
        "): error: " + "a/" * (N // 2) + "!",
        "): error: " + "/include/c++/16/" * (N // 16),
        "): error: " + "x/include/c++/16/" * (N // 17) + "a: erro",
    ],
}


@pytest.mark.parametrize(
    ("sig_id", "k"), [(s, k) for s, lines in ATTACKS.items() for k in range(len(lines))]
)
def test_a_hostile_line_is_matched_in_bounded_time(sig_id: str, k: int):
    sig = next(s for s in default_catalog().signatures if s.id == sig_id)
    line = ATTACKS[sig_id][k][:N]
    t0 = time.process_time()  # CPU seconds: the regex's cost, whatever else the host runs
    sig.rx.search(line)
    took = time.process_time() - t0
    assert took < 1.0, f"{sig_id}: one {len(line)}-byte line took {took:.1f} CPU-s"


def test_control_the_patterns_still_match_their_lines():
    cat = {s.id: s for s in default_catalog().signatures}
    m = cat["undefined-symbol"].rx.search(
        "ImportError: /opt/x/lib/libfoo.so.1: undefined symbol: _ZN3c104cuda9SetDeviceEa"
    )
    assert m and m["shared_lib"] == "/opt/x/lib/libfoo.so.1"
    m = cat["nvcc-error-in-host-stdlib-header"].rx.search(
        "/usr/include/c++/16/bits/c++config.h(12): error: identifier is undefined"
    )
    assert m and m["host_gcc_version"] == "16" and m["header_line"] == "12"
