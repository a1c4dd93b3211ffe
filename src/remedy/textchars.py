"""Which characters of a host string a terminal or a file reader would not see as text.

One table for every writer: the terminal and report renderers (report/safe.py) strip or escape
them, and the typed operations' YAML writer (operations/playbook.py) double-quotes a string that
holds one, so the playbook reads back the same path the plan names.
"""

from __future__ import annotations

import re

# Characters a terminal draws as nothing (Unicode's format and default-ignorable characters):
# the bidi overrides/isolates/marks that reorder what is displayed ("Trojan Source"), and the
# zero-width ones (ZWSP/ZWNJ/ZWJ, WORD JOINER and the invisible operators, BOM, SOFT HYPHEN,
# Mongolian and other variation selectors, Hangul fillers), LINE/PARAGRAPH SEPARATOR, and the
# tag characters (U+E0000 block: invisible letters). In a host string they hide what the
# operator reads (`/opt/x<ZWSP>/.venv` shows as `/opt/x/.venv`) or carry a message nobody sees.
INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
# C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI), the invisible
CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]")
# what json.dumps leaves raw in a string (it escapes C0 only): DEL, C1, the invisible
JSON_RAW = re.compile(f"[\x7f-\x9f{INVISIBLE}]")
# never raw in JSON; in YAML/HTML/markdown: an escape
C0 = re.compile("[\x00-\x08\x0b-\x1f]")


def needs_escape(text: str) -> bool:
    """Whether a file writer escapes a character of text (a YAML writer then double-quotes it:
    in a plain or single-quoted scalar an escape is text, not the character)."""
    return bool(JSON_RAW.search(text) or C0.search(text))
