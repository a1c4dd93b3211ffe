"""Match one log line against the catalog: needles gate, regexes confirm, ``near:`` guards.

Kept apart from file reading so that every way of getting lines (grep prefilter, pure Python,
an iterable) goes through exactly the same per-line decision; that is what makes the two read
paths provably identical.
"""

from __future__ import annotations

import re
from typing import Any

from remedy.evidence.catalog import Catalog, Signature, field_name
from remedy.evidence.prefilter import literals
from remedy.record import Record

NearKey = tuple[str, str | None]
TRI = 3  # characters of a needle's start it is indexed by (LineMatcher._among)
TRI_MAX_LINE = 2048  # longer lines test every needle: their trigram set would cost more
WRAP_MIN_HEAD = 8  # characters of a needle a wrapped line must end with to be joined
# needles that are bare error words: nearly every candidate line holds one, so they do not make
# a line a wrap candidate (LineMatcher.wrap_candidates)
GENERIC_NEEDLES = frozenset(
    w + s for w in ("error", "failed", "fatal", "exception") for s in ("", ":")
) | frozenset(
    v for w in ("error", "failed", "fatal", "exception") for v in (w.capitalize(), w.upper())
)


# Plain records (remedy.record), not dataclasses: why is said there.
class Match(Record):
    """One signature matched on one line."""

    __slots__ = ("sig", "start", "end", "fields")
    _FIELDS = __slots__

    def __init__(
        self, sig: Signature, start: int, end: int, fields: dict[str, str] | None = None
    ) -> None:
        self.sig = sig
        self.start = start
        self.end = end
        self.fields: dict[str, str] = {} if fields is None else fields


_LITERALS: dict[int, tuple[Catalog, tuple[str, ...]]] = {}


def _literals(catalog: Catalog) -> tuple[str, ...]:
    """prefilter.literals once per catalog object (~5 ms each; a plan's logs, each with its
    own matcher, share the default catalog)."""
    hit = _LITERALS.get(id(catalog))
    if hit is None or hit[0] is not catalog:
        if len(_LITERALS) > 8:  # catalogs made one after another (tests) are not kept
            _LITERALS.clear()
        hit = _LITERALS[id(catalog)] = (catalog, tuple(literals(catalog)))
    return hit[1]


class LineMatcher:
    """Stateful matcher for one source: remembers where each ``near:`` pattern last occurred,
    per process, so a guarded signature only fires in the right context."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._sigs = catalog.signatures
        # needle -> indexes of signatures using it (test each needle once per line)
        needle_map: dict[str, list[int]] = {}
        for i, s in enumerate(self._sigs):
            for n in s.needles:
                needle_map.setdefault(n, []).append(i)
        self._needle_map = needle_map
        self._needles = list(needle_map.items())
        # needles by their first TRI characters: a short line looks up its own trigrams instead
        # of testing every needle (~450) against it; that loop, run for every candidate line
        # in match, wrap_candidates and lead_candidates, made a log of 200k lines that each
        # hold an error word take minutes (bench/bench_error_words.py)
        self._tri_all = _by_trigram(self._needles)
        self._specific = [
            (n, [i for i in idxs if self._sigs[i].near is None])
            for n, idxs in self._needles
            if n not in GENERIC_NEEDLES
        ]
        self._specific = [(n, idxs) for n, idxs in self._specific if idxs]
        self._tri_specific = _by_trigram(self._specific)
        self._near = [(s, s.near_needles) for s in self._sigs if s.near is not None]
        self._last_near: dict[NearKey, int] = {}
        self._order = {s.id: i for i, s in enumerate(self._sigs)}
        self._literals = _literals(catalog)
        # per signature, what the inner loop reads (pydantic attribute access is slow); made
        # when the signature is first a candidate, so only those patterns are compiled
        self._plan: list[tuple[Signature, Any, Any, int | None, bool, Any] | None] = [None] * len(
            self._sigs
        )

    def sig_id(self, i: int) -> str:
        return self._sigs[i].id

    def wrap_candidates(self, text: str) -> list[int]:
        """Signatures a line wrapped at a word boundary may have cut: the line holds a prefilter
        literal (so every read path sees it), ends in a word character, and holds one of their
        specific needles (not a bare error word, which nearly every line holds) or ends with the
        start of one (at least ``WRAP_MIN_HEAD`` characters, from a word start). A line may also
        end in ':' (wrapped at the space after a label: 'undefined symbol:' then the symbol on
        the next line); trailing blanks (what fold -s and editors leave at a wrap) do not count.
        Signatures with a ``near:`` guard stay single-line."""
        text = text.rstrip(" \t")
        if not text or not (text[-1].isalnum() or text[-1] in "_:"):
            return []
        cand: set[int] = set()
        n = len(text)
        # a needle in the line, or one whose start ends it, starts with one of its trigrams
        for needle, idxs in self._among(text, self._specific, self._tri_specific):
            hit = needle in text
            if not hit and len(needle) > WRAP_MIN_HEAD:
                head = needle[:WRAP_MIN_HEAD]
                at = text.find(head, max(0, n - len(needle)))
                while at != -1 and not hit:
                    hit = needle.startswith(text[at:]) and (at == 0 or not text[at - 1].isalnum())
                    at = text.find(head, at + 1)
            if hit:
                cand.update(idxs)
        if cand and not any(lit in text for lit in self._literals):
            return []
        return sorted(cand)

    def lead_candidates(self, text: str) -> list[int]:
        """Signatures whose specific needle STARTS this line (after its indent): the line may be
        the second half of a message wrapped at the space after its subject (the loader's
        'libfoo.so.1:' then 'cannot open shared object file ...'), to be matched joined after
        the line before it (the match must start on that line: a needle the pattern begins
        with never joins). Signatures with a ``near:`` guard stay single-line."""
        head = text.lstrip(" \t")
        if not head:
            return []
        cand: set[int] = set()
        for needle, idxs in (*self._tri_specific.get(head[:TRI], ()), *self._tri_specific[""]):
            if head.startswith(needle):
                cand.update(idxs)
        return sorted(cand)

    def _among(
        self,
        text: str,
        needles: list[tuple[str, list[int]]],
        by_tri: dict[str, list[tuple[str, list[int]]]],
    ) -> list[tuple[str, list[int]]]:
        """The needles that may occur in ``text``: those starting with one of its trigrams
        (a long line: all of them; building its trigram set would cost more)."""
        if len(text) > TRI_MAX_LINE:
            return needles
        out = list(by_tri[""])
        for t in {text[i : i + TRI] for i in range(len(text) - TRI + 1)}:
            got = by_tri.get(t)
            if got is not None:
                out.extend(got)
        return out

    def match_joined(
        self, first: str, follower: str, sig_idxs: list[int], sep: str = " "
    ) -> list[Match]:
        """Matches of ``sig_idxs`` over ``first`` joined to the next line with ``sep`` (one
        space: a wrap at a word boundary; "": a terminal's hard wrap at its column, which cuts
        inside a word), kept only where the match spans the join (it starts on ``first`` and
        ends past it); offsets are into the joined text."""
        joined = first + sep + follower
        cut = len(first)
        found: list[Match] = []
        for i in sig_idxs:
            sig = self._sigs[i]
            if sig.gate_rx is not None and sig.gate_rx.search(joined) is None:
                continue
            m = sig.rx.search(joined)
            if m is None or m.start() >= cut or m.end() <= cut:
                continue
            found.append(Match(sig, m.start(), m.end(), _fields(m)))
        return self._settle(found)

    def match(
        self, lineno: int, text: str, process: str | None, hint: frozenset[str] | None = None
    ) -> list[Match]:
        """All signatures matching ``text`` (line ``lineno``), after ``supersedes:``.

        ``hint``: literals a multi-literal engine saw somewhere in the raw line (a superset of
        the needles in ``text``); only those are looked for. Same result as without it."""
        for sig, lits in self._near:
            # plain loops, not any(genexpr): ~50 near signatures and ~50 gate literals a
            # candidate line, where a generator's frame per item was most of match's time
            for n in lits:
                if (hint is None or n in hint) and n in text:
                    break
            else:
                continue
            if sig.near_rx is not None and sig.near_rx.search(text):
                self._last_near[(sig.id, process)] = lineno
        cand: set[int] = set()
        if hint is None:
            for needle, idxs in self._among(text, self._needles, self._tri_all):
                if needle in text:
                    cand.update(idxs)
        else:
            for needle in hint:
                idxs = self._needle_map.get(needle)
                if idxs is not None and needle in text:
                    cand.update(idxs)
        if not cand:
            return []
        found: list[Match] = []
        for i in sorted(cand):
            plan = self._plan[i]
            if plan is None:
                s = self._sigs[i]
                within_ = s.near.within if s.near is not None else None
                absent = bool(s.near.absent) if s.near is not None else False
                lits = s.gate_literals if s.gate is not None else None
                plan = self._plan[i] = (s, s.rx, s.gate_rx, within_, absent, lits)
            sig, rx, gate, within, absent, lits = plan
            if within is not None:
                last = self._last_near.get((sig.id, process))
                seen = last is not None and lineno - last <= within
                if seen == absent:
                    continue
            if gate is not None:
                # the gate's required strings first (catalog.required_literals)
                if lits is not None:
                    for x in lits:
                        if x in text:
                            break
                    else:
                        continue
                if gate.search(text) is None:
                    continue
            m = rx.search(text)
            if m is None:
                continue
            found.append(Match(sig, m.start(), m.end(), _fields(m)))
        return self._settle(found)

    def _settle(self, found: list[Match]) -> list[Match]:
        """Drop matches a co-matching signature ``supersedes:``; order by position, then by
        catalog order."""
        if len(found) > 1:
            dropped = {other for mt in found for other in mt.sig.supersedes}
            if dropped:
                found = [mt for mt in found if mt.sig.id not in dropped]
            found.sort(key=lambda mt: (mt.start, self._order[mt.sig.id]))
        return found


def _by_trigram(
    needles: list[tuple[str, list[int]]],
) -> dict[str, list[tuple[str, list[int]]]]:
    """Needles keyed by their first TRI characters; one shorter than that under "" (tested
    against every line)."""
    out: dict[str, list[tuple[str, list[int]]]] = {"": []}
    for needle, idxs in needles:
        out.setdefault(needle[:TRI] if len(needle) >= TRI else "", []).append((needle, idxs))
    return out


def _fields(m: re.Match[str]) -> dict[str, str]:
    """Named groups as fields: stripped, empty ones left out, the first of a name wins."""
    fields: dict[str, str] = {}
    for group, value in m.groupdict().items():
        if value is None:
            continue
        value = value.strip()
        name = field_name(group)
        if value and name not in fields:
            fields[name] = value
    return fields
