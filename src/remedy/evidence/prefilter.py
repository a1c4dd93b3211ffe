"""Choose the literals the prefilter (grep or ``bytes.find``) looks for.

Correctness needs only a superset: every line a signature, a ``near:`` guard or the
suspicious-line heuristic can use must contain one of the literals. Any substring of a needle
preserves that, so the literal set is derived, not written by hand:

1. needles that contain an error word (``error``, ``FAILED``, ...) are dropped: the word
   already selects their lines;
2. every other needle is replaced by an *anchor*: a substring of it (up to 12 bytes) that
   starts at its rarest-looking character. On a 1 GB journal, grep's DFA cost grew with how
   often the literals' first bytes occur: 5 anchors starting with common lowercase letters
   added ~0.9 CPU-s/GB, 23 starting with capitals ~0.36, 12 starting with j/k/q/v/x/z ~0.24;
3. anchors sharing their first 4 bytes are merged into their common prefix ("CUDA ..." x 11
   becomes "CUDA");
4. any literal containing another literal is dropped, and so is one whose needles all contain
   another kept literal ("SM 12.x requires CUDA" is already selected by "CUDA").

Measured with grep -E over the whole set: needles as-is (68 literals) 2.9 CPU-s/GB; the
derived set 2.1; ``grep -E -i 'error|failed|fatal'`` 0.9-1.1.
"""

from __future__ import annotations

import os.path
import string
from collections.abc import Iterable

from remedy.evidence.catalog import Catalog
from remedy.evidence.suspicious import WORDS

ANCHOR_LEN = 12
ANCHOR_MIN = 4
_RARE_PUNCT = frozenset("`'\"()!<>=#@$%&*+;?^{|}~")


def _rank(c: str) -> int:
    if c in string.ascii_uppercase or c in _RARE_PUNCT:
        return 3
    if c in "jkqvxz":
        return 2
    if c.isdigit() or c in " \t/-_.:,[]":
        return 0
    return 1


def anchor(needle: str) -> str:
    """Substring of ``needle`` starting at its rarest character (earliest on ties)."""
    if len(needle) <= ANCHOR_MIN:
        return needle
    best_i, best_r = 0, -1
    for i in range(len(needle) - ANCHOR_MIN + 1):
        r = _rank(needle[i])
        if r > best_r:
            best_i, best_r = i, r
    return needle[best_i : best_i + ANCHOR_LEN]


def literals(catalog: Catalog) -> list[str]:
    """The prefilter literals for ``catalog``, shortest first (once per catalog object)."""
    hit = _LITERALS.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return list(hit[1])
    needles: set[str] = set()
    for s in catalog.signatures:
        needles.update(s.needles)
        needles.update(s.near_needles)
    out = reduce_literals(needles)
    if len(_LITERALS) > 8:  # catalogs made one after another (tests) are not kept
        _LITERALS.clear()
    _LITERALS[id(catalog)] = (catalog, tuple(out))
    return out


_LITERALS: dict[int, tuple[Catalog, tuple[str, ...]]] = {}


def remember(catalog: Catalog, lits: list[str], patterns: list[tuple[str, bytes | None]]) -> None:
    """``literals`` and ``engine_patterns`` of ``catalog``, as computed by the run that kept
    it (remedy.evidence.catalog._kept_catalog): not computed again."""
    _LITERALS[id(catalog)] = (catalog, tuple(lits))
    _ENGINE_CACHE[id(catalog)] = (catalog, list(patterns))


def reduce_literals(needles: Iterable[str], merge_min: int = 0) -> list[str]:
    """Steps 1-4 above over any set of needles (the error words always kept): every needle
    contains at least one of the literals returned. ``merge_min``: a group whose common
    prefix (step 3) is shorter than this keeps its anchors apart (fastscan says why)."""
    rest = sorted(n for n in set(needles) if not any(w in n for w in WORDS))
    by_anchor: dict[str, set[str]] = {}
    for n in rest:
        by_anchor.setdefault(anchor(n), set()).add(n)
    groups: dict[str, list[str]] = {}
    for a in sorted(by_anchor):
        groups.setdefault(a[:ANCHOR_MIN], []).append(a)
    origin: dict[str, set[str]] = {}  # literal -> needles it stands for
    for g in groups.values():
        lit = os.path.commonprefix(g) if len(g) > 1 else g[0]
        if len(lit) < merge_min:
            for a in g:
                origin.setdefault(a, set()).update(by_anchor[a])
            continue
        origin.setdefault(lit, set()).update(*(by_anchor[a] for a in g))
    kept: list[str] = []
    for lit in sorted(set(WORDS) | set(origin), key=lambda x: (len(x), x)):
        if not any(k in lit for k in kept):
            kept.append(lit)
    # 5. drop a literal when every needle it stands for contains another kept literal
    dropped: list[str] = []
    for lit in sorted((k for k in kept if k in origin), key=lambda x: (-len(x), x)):
        others = [k for k in kept if k != lit]
        if all(any(o in n for o in others) for n in origin[lit]):
            kept.remove(lit)
            dropped.append(lit)
    # ... unless the literal that covered it was dropped in its turn (a needle holding 'API
    # version' and 'NvEncodeAPI ', the literal 'API version' dropped for 'quire'): the needle
    # would select no line, so its literal stays after all
    for lit in dropped:
        if not all(any(k in n for k in kept) for n in origin[lit]):
            kept.append(lit)
    return sorted(kept, key=lambda x: (len(x), x))


_CACHE: dict[int, tuple[Catalog, list[bytes]]] = {}

# moby daemon/logger/jsonfilelog/jsonlog/jsonlogbytes.go ffjsonWriteJSONBytesAsString: '\\'
# and '"' get a backslash, '\n' and '\r' are \n and \r, every other byte below 0x20 and '<',
# '>', '&' are \u00XX
_DOCKER_ESC = {
    ord("\\"): b"\\\\",
    ord('"'): b'\\"',
    ord("<"): b"\\u003c",
    ord(">"): b"\\u003e",
    ord("&"): b"\\u0026",
    ord("\t"): b"\\u0009",
}


def docker_json_escaped(lit: bytes) -> bytes | None:
    """``lit`` as it reads inside a Docker json-file record, or None when it reads the same."""
    if not any(b in _DOCKER_ESC for b in lit):
        return None
    return b"".join(_DOCKER_ESC.get(b, bytes((b,))) for b in lit)


def literal_bytes(catalog: Catalog) -> list[bytes]:
    """``literals`` encoded, cached per catalog object."""
    hit = _CACHE.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    out = [lit.encode("utf-8") for lit in literals(catalog)]
    # the same literal as Docker's json-file driver writes it inside a record (remedy.evidence
    # .prefix.unwrap_docker_json): a line is selected before it is unwrapped
    out += [e for e in (docker_json_escaped(lit) for lit in out) if e is not None]
    _CACHE[id(catalog)] = (catalog, out)
    return out


def engine_literals(catalog: Catalog) -> list[str]:
    """The literal set for a multi-literal engine (fastscan): every needle, every ``near:``
    needle and the error words. Unlike grep, Hyperscan runs faster on whole needles than on the
    short anchors above (100 MB journal: these ~120 literals 0.65 ns/byte, the 48 anchors 1.07:
    long literals give its filter fewer false hits), and which literals hit a line tells the
    matcher which needles to look for (LineMatcher's ``hint``)."""
    lits: set[str] = set(WORDS)
    for s in catalog.signatures:
        lits.update(s.needles)
        lits.update(s.near_needles)
    return sorted(lits)


_WS = frozenset(b" \t\n\r\x0b\x0c")


def _token_gate(gate: str, needle: str) -> bool:
    """True if every match of ``gate`` (on str, and of the same pattern on UTF-8 bytes) ends
    with ``needle`` and holds no whitespace, and the bytes pattern matches wherever the str one
    does: then, given where the needle occurs, the gate can be checked on just the
    whitespace-free run before it. Accepted: alternatives made of ASCII literals and repeats
    of negated classes that exclude whitespace (wider on bytes than on str, never narrower)."""
    import re
    import re._constants as c  # the regex parser's opcodes (stdlib)
    import re._parser as sre_parse

    try:
        tree = list(sre_parse.parse(gate))
    except re.error:
        return False
    alts = tree[0][1][1] if len(tree) == 1 and tree[0][0] is c.BRANCH else [tree]
    tail = [ord(ch) for ch in needle]
    if any(not 0 < t < 128 or t in _WS for t in tail):
        return False
    for alt in alts:
        items = list(alt)
        if len(items) < len(tail) or [(op, av) for op, av in items[-len(tail) :]] != [
            (c.LITERAL, t) for t in tail
        ]:
            return False
        for op, av in items:
            if op is c.LITERAL:
                if not 0 < av < 128 or av in _WS:
                    return False
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                body = list(av[2])
                if len(body) != 1 or body[0][0] is not c.IN:
                    return False
                cls = body[0][1]
                if not cls or cls[0][0] is not c.NEGATE:
                    return False
                if (c.CATEGORY, c.CATEGORY_SPACE) not in cls:
                    return False
                if any(o is c.LITERAL and not 0 < a < 128 for o, a in cls[1:]):
                    return False
            else:
                return False
    return True


def engine_patterns(catalog: Catalog) -> list[tuple[str, bytes | None]]:
    """``engine_literals``, each with the bytes form of its gate or None. A needle that only
    signatures with a ``gate:`` use, and that no ``near:`` guard or error word shares, gets
    their gates when ``_token_gate`` accepts them: fastscan then drops a line whose only hits
    are such needles with no gate match in the run before them; the matcher would only have
    dropped it later, after decoding. On a build journal this keeps every nvcc command line
    (needle ``/bin/nvcc``, signature nvcc-path-malformed) away from the matcher."""
    hit = _ENGINE_CACHE.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    shared: set[str] = set(WORDS)
    users: dict[str, list[str | None]] = {}
    for s in catalog.signatures:
        shared.update(s.near_needles)
        for n in s.needles:
            users.setdefault(n, []).append(s.gate)
    out: list[tuple[str, bytes | None]] = []
    for lit in engine_literals(catalog):
        gates = users.get(lit, [])
        gate: bytes | None = None
        if gates and lit not in shared and all(g and _token_gate(g, lit) for g in gates):
            gate = "|".join(f"(?:{g})" for g in gates if g).encode("ascii")
        out.append((lit, gate))
    _ENGINE_CACHE[id(catalog)] = (catalog, out)
    return out


_ENGINE_CACHE: dict[int, tuple[Catalog, list[tuple[str, bytes | None]]]] = {}
