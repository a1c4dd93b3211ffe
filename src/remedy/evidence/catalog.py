"""The signature catalog: ``knowledge/signatures.yaml`` validated and compiled.

Signatures are data written by people, so every mistake must point at ``file:line``: the
entry's shape is checked by pydantic through :func:`remedy.knowledge.yamlload.validate_entry`,
then each pattern is compiled, its groups checked against ``facts:``, and each example run
through its own pattern. A catalog that loads is one whose examples provably match.

Needle contract (what the fast grep prefilter relies on): every line a signature matches
contains at least one of its ``needles`` (case-sensitive literals). The loader can only check
this on the examples: each example must contain at least one needle, and each needle must
occur in at least one example (a needle no example uses is dead weight or a typo). The brief
asked for "every needle in every example"; that rule would forbid the multi-form signatures
the catalog needs (``driver-too-old`` has two unrelated wordings), so it is relaxed as stated.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import remedy
from remedy.errors import KnowledgeError
from remedy.evidence.plain import Plain, Source
from remedy.knowledge.yamlload import line_of, load_yaml, validate_entry

if TYPE_CHECKING:
    from remedy.results import Symptom

_KEBAB = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
# Regex metacharacters; a near-pattern without them (after unescaping) is its own literal.
_META = re.compile(r"[.^$*+?{}\[\]|()\\]")

# The catalog at run time is plain Python objects, built from the entries pydantic validated
# (remedy.evidence.catalog_schema: the YAML's shape, checked when the file is loaded, never
# when a cached catalog is read). Why: a cached catalog (remedy.evidence.evcache) was ~590
# pydantic instances, each unpickled through pydantic's __setstate__, and reading the log
# needed pydantic imported for classes whose validation had long been done.


class Near(Plain):
    """Context guard: the signature only matches if ``pattern`` occurred within the previous
    ``within`` lines of the same source and process (the matching line itself counts); with
    ``absent: true`` only if it did NOT (a line that means one thing when it stands alone)."""

    __slots__ = ("pattern", "within", "needles", "absent")
    _FIELDS = ("pattern", "within", "needles", "absent")
    # needles: literals for the prefilter; derived when pattern is plain
    _DEFAULTS = {"needles": None, "absent": False}
    pattern: str
    within: int
    needles: list[str] | None
    absent: bool


class SignatureSource(Source):
    """Upstream citation; at least one of repo, doc or thread is required."""

    __slots__ = ()

    def has_origin(self) -> bool:
        return bool(self.repo or self.doc or self.thread)


_SIG_FIELDS = (
    "id",
    "title",
    "pattern",
    "needles",
    "severity",
    "stage",
    "component",
    "facts",
    "wrapper",
    "suspicious",
    "examples",
    "source",
    "near",
    "supersedes",
    "gate",
)


class Signature(Plain):
    """One known log pattern. See knowledge/signatures.yaml for the field reference (and
    remedy.evidence.catalog_schema for the checks an entry passed)."""

    __slots__ = (
        *_SIG_FIELDS,
        "_rx",
        "_gate_rx",
        "_near_rx",
        "_near_needles",
        "_gate_lits",
        "_line",
    )
    _FIELDS = _SIG_FIELDS
    _DEFAULTS = {
        "facts": {},
        "wrapper": False,
        "suspicious": False,
        "near": None,
        "supersedes": [],
        "gate": None,
    }
    id: str
    title: str
    pattern: str
    needles: list[str]
    severity: str
    stage: str
    component: str
    facts: dict[str, str]
    wrapper: bool
    # the line also stays a candidate for the first error line: for shapes that name a cause
    # only when a field is in a knowledge table (a symbol a release removed); otherwise the
    # log's cause is unknown and this line is where its first real error is
    suspicious: bool
    examples: list[str]
    source: SignatureSource
    near: Near | None
    supersedes: list[str]
    # a cheaper regex every line `pattern` matches also matches (checked on the examples);
    # searched first, so a costly pattern runs only on lines that can match it
    gate: str | None
    # compiled on first use (a catalog loaded as validated before compiles nothing up front)
    _rx: re.Pattern[str] | None
    _gate_rx: re.Pattern[str] | None
    _near_rx: re.Pattern[str] | None
    _near_needles: tuple[str, ...]
    # gate_literals: False until derived (load_catalog derives them, so a cached catalog
    # carries them)
    _gate_lits: tuple[str, ...] | None | bool
    _line: int | None

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._rx = self._gate_rx = self._near_rx = None
        self._near_needles = ()
        self._gate_lits = False
        self._line = None

    @classmethod
    def _nested(cls) -> dict[str, type[Plain]]:
        return {"source": SignatureSource, "near": Near}

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern)
        return self._rx

    @property
    def gate_rx(self) -> re.Pattern[str] | None:
        if self._gate_rx is None and self.gate is not None:
            self._gate_rx = re.compile(self.gate)
        return self._gate_rx

    @property
    def gate_literals(self) -> tuple[str, ...] | None:
        """Strings one of which every line the gate matches holds (``required_literals``
        of the gate), or None: the matcher tests them (``in``, in C) before the gate, so a
        gate of many alternatives (~15-20 us a line in re) runs only where it can match."""
        if self._gate_lits is False:
            self._gate_lits = required_literals(self.gate) if self.gate is not None else None
        return self._gate_lits  # type: ignore[return-value]

    @property
    def near_rx(self) -> re.Pattern[str] | None:
        if self._near_rx is None and self.near is not None:
            self._near_rx = re.compile(self.near.pattern)
        return self._near_rx

    @property
    def near_needles(self) -> tuple[str, ...]:
        return self._near_needles

    @property
    def line(self) -> int | None:
        """Line of this entry in the YAML file (for error messages and reports)."""
        return self._line


class Catalog:
    """All signatures, in precedence order (file order), plus the derived prefilter data."""

    def __init__(self, *, signatures: list[Signature], path: str = "<memory>") -> None:
        self.signatures = list(signatures)
        self.path = path

    def as_dict(self) -> dict[str, Any]:
        return {"signatures": [s.as_dict() for s in self.signatures], "path": self.path}

    @cached_property
    def by_id(self) -> dict[str, Signature]:
        return {s.id: s for s in self.signatures}

    def __getitem__(self, sig_id: str) -> Signature:
        return self.by_id[sig_id]

    def __contains__(self, sig_id: object) -> bool:
        return sig_id in self.by_id

    def __len__(self) -> int:
        return len(self.signatures)

    def ids(self) -> list[str]:
        return [s.id for s in self.signatures]

    def partial_facts(self, symptom: Symptom) -> dict[str, str]:
        """The partial facts a symptom asserts (its fields renamed through ``facts:``)."""
        sig = self.by_id.get(symptom.signature)
        if sig is None:
            return {}
        return {
            key: symptom.fields[group]
            for group, key in sig.facts.items()
            if symptom.fields.get(group)
        }


def knowledge_dir() -> Path:
    """The knowledge/ directory: $REMEDY_KNOWLEDGE_DIR, the repo checkout's, else the copy
    packed into the wheel (a directory without signatures.yaml falls back to the built-in)."""
    pkg = Path(remedy.__file__).resolve().parent
    candidates = [pkg.parents[1] / "knowledge", pkg / "_data" / "knowledge"]
    if os.environ.get("REMEDY_KNOWLEDGE_DIR"):
        from remedy.knowledge.dirs import checked_env_dir

        checked_env_dir("REMEDY_KNOWLEDGE_DIR")
        candidates.insert(0, Path(os.environ["REMEDY_KNOWLEDGE_DIR"]))
    for c in candidates:
        if (c / "signatures.yaml").is_file():
            return c
    raise KnowledgeError(
        "cannot find knowledge/signatures.yaml (looked in "
        + ", ".join(str(c) for c in candidates)
        + ")"
    )


def default_catalog_path() -> Path:
    return knowledge_dir() / "signatures.yaml"


def field_name(group: str) -> str:
    """``name__2`` is an alias of ``name`` (a second alternative of the same pattern)."""
    base, sep, suffix = group.rpartition("__")
    return base if sep and base and suffix.isdigit() else group


def _compile(pattern: str, what: str, file: str, line: int | None) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise KnowledgeError(f"{what}: invalid regex: {exc}", file=file, line=line) from None


MIN_REQUIRED = 4  # characters: a shorter string is in most lines, and tests nothing


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """For each top-level alternative of ``pattern``, the longest run of plain characters
    it must match in a row (a match of the alternative holds it as is), when every
    alternative has one of at least ``MIN_REQUIRED`` characters; else None. A line that
    holds none of them is a line the pattern cannot match. Case-insensitive matching (a
    flag for the whole pattern, or a group's own: its characters are not plain) gives
    nothing; an unparsable pattern, None."""
    import re._constants as c  # the regex parser's opcodes (stdlib; as prefilter._token_gate)
    import re._parser as sre_parse

    try:
        tree = sre_parse.parse(pattern)
    except re.error:
        return None
    if tree.state.flags & (re.IGNORECASE | re.LOCALE):
        return None
    items = list(tree)
    alts = items[0][1][1] if len(items) == 1 and items[0][0] is c.BRANCH else [items]
    out: list[str] = []
    for alt in alts:
        best = run = ""
        for op, av in alt:
            run = run + chr(av) if op is c.LITERAL else ""
            if len(run) > len(best):
                best = run
        if len(best) < MIN_REQUIRED:
            return None
        out.append(best)
    return tuple(dict.fromkeys(out))


def _near_literals(near: Near, sig_id: str, file: str, line: int | None) -> tuple[str, ...]:
    if near.needles:
        return tuple(near.needles)
    literal = re.sub(r"\\(.)", r"\1", near.pattern)
    if _META.search(re.sub(r"\\.", "", near.pattern)) or not literal:
        raise KnowledgeError(
            f"signature {sig_id!r}: near.pattern is not a plain literal; list its literals "
            "in near.needles so the grep prefilter can see the context lines",
            file=file,
            line=line,
        )
    return (literal,)


def _check_signature(sig: Signature, file: str, entry: dict[str, Any]) -> None:
    label = f"signature {sig.id!r}"
    line = line_of(entry)

    def at(key: str) -> int | None:
        return line_of(entry, key) or line

    if not sig.source.has_origin():
        raise KnowledgeError(
            f"{label}: source needs repo, doc or thread", file=file, line=at("source")
        )
    rx = sig._rx = _compile(sig.pattern, label, file, at("pattern"))
    groups = {field_name(g) for g in rx.groupindex}
    for group in sig.facts:
        if group not in groups:
            raise KnowledgeError(
                f"{label}: facts maps group {group!r}, which the pattern does not define",
                file=file,
                line=at("facts"),
            )
    if sig.gate is not None:
        sig._gate_rx = _compile(sig.gate, f"{label} gate", file, at("gate"))
    if sig.near is not None:
        sig._near_rx = _compile(sig.near.pattern, f"{label} near.pattern", file, at("near"))
        sig._near_needles = _near_literals(sig.near, sig.id, file, at("near"))
    used: set[str] = set()
    for ex in sig.examples:
        if not rx.search(ex):
            raise KnowledgeError(
                f"{label}: example does not match its pattern: {ex[:160]!r}",
                file=file,
                line=at("examples"),
            )
        if sig._gate_rx is not None and not sig._gate_rx.search(ex):
            raise KnowledgeError(
                f"{label}: example matches the pattern but not the gate: {ex[:160]!r}",
                file=file,
                line=at("gate"),
            )
        present = [n for n in sig.needles if n in ex]
        if not present:
            raise KnowledgeError(
                f"{label}: example contains none of the needles {sig.needles}: {ex[:160]!r}",
                file=file,
                line=at("examples"),
            )
        used.update(present)
    for n in sig.needles:
        if n not in used:
            raise KnowledgeError(
                f"{label}: needle {n!r} occurs in no example (typo, or add an example)",
                file=file,
                line=at("needles"),
            )


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load, validate and compile a signatures file (default: the repo's/wheel's)."""
    p = Path(path) if path is not None else default_catalog_path()
    file = str(p)
    data: Any = load_yaml(p)
    checked = _validated_key(p)
    seen_valid = checked is not None and checked in _validated()
    if not isinstance(data, dict) or "signatures" not in data:
        raise KnowledgeError(
            "top level must be a mapping with a 'signatures:' list",
            file=file,
            line=line_of(data) or 1,
        )
    entries = data["signatures"]
    if not isinstance(entries, list):
        raise KnowledgeError("'signatures' must be a list", file=file, line=line_of(data) or 1)
    extra = sorted(k for k in data if k != "signatures" and not str(k).startswith("__"))
    if extra:
        raise KnowledgeError(
            f"unknown top-level key {extra[0]!r}", file=file, line=line_of(data) or 1
        )
    from remedy.evidence.catalog_schema import SignatureEntry

    sigs: list[Signature] = []
    seen: dict[str, int | None] = {}
    for entry in entries:
        line = line_of(entry)
        sig = Signature.of(validate_entry(SignatureEntry, entry, file, what="signature"))
        if sig.id in seen:
            raise KnowledgeError(
                f"duplicate signature id {sig.id!r} (first defined at line {seen[sig.id]})",
                file=file,
                line=line,
            )
        seen[sig.id] = line
        sig._line = line
        sig.gate_literals  # noqa: B018 - derived now: kept with a cached catalog
        if seen_valid:  # this very file passed every check below before: compile lazily
            if sig.near is not None:
                sig._near_needles = _near_literals(sig.near, sig.id, file, line)
        else:
            _check_signature(sig, file, entry)
        sigs.append(sig)
    if not sigs:
        raise KnowledgeError("no signatures defined", file=file, line=line_of(data) or 1)
    by_id = {s.id: s for s in sigs}
    for sig in sigs:
        for other in sig.supersedes:
            if other not in by_id or other == sig.id:
                raise KnowledgeError(
                    f"signature {sig.id!r}: supersedes unknown or self id {other!r}",
                    file=file,
                    line=sig.line,
                )
            if sig.id in by_id[other].supersedes:
                raise KnowledgeError(
                    f"signature {sig.id!r} and {other!r} supersede each other",
                    file=file,
                    line=sig.line,
                )
    if checked is not None and not seen_valid:
        _remember_validated(checked)
    return Catalog(signatures=sigs, path=file)


# Compiling ~100 patterns and running every example through them took ~25 ms of each command
# that reads a log. A file that passed every check is recorded by its sha256 (with this
# module's source and Python's version, which define the checks and the regex dialect); the
# same bytes again are loaded without the checks and each pattern compiles when first used.
# The record goes through remedy.cachefile (read only when ours and intact).
_KEEP_VALIDATED = 16


def _validated_path() -> str:
    import sys

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    v = sys.version_info
    return os.path.join(base, "remedy", f"signatures-validated-py{v[0]}{v[1]}")


def _validated_key(path: Path) -> str | None:
    import hashlib
    import sys

    try:
        body = path.read_bytes()
        code = Path(__file__).read_bytes()
    except OSError:
        return None
    h = hashlib.sha256(sys.version.encode() + b"\0" + code + b"\0" + body)
    return h.hexdigest()


def _validated() -> list[str]:
    from remedy.cachefile import read_keys

    return read_keys(_validated_path())


def _remember_validated(key: str) -> None:
    from remedy.cachefile import remember_key

    remember_key(_validated_path(), key, _KEEP_VALIDATED)


_DEFAULT: dict[tuple[str, int, int], Catalog] = {}


def default_catalog() -> Catalog:
    """The default catalog, loaded once per file version (path, mtime, size)."""
    p = default_catalog_path().resolve()
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size)
    cat = _DEFAULT.get(key)
    if cat is None:
        _DEFAULT.clear()
        cat = _DEFAULT[key] = _kept_catalog(p)
    return cat


def _kept_catalog(p: Path) -> Catalog:
    """load_catalog(p), or the catalog (and its prefilter literal sets) the last run that
    loaded these same bytes kept (remedy.knowledge.kbcache: private, keyed, only catalog
    classes unpickled)."""
    from remedy.evidence import evcache as kbcache
    from remedy.evidence import prefilter

    k = kbcache.catalog_key(p)
    got = kbcache.load_catalog(k) if k is not None else None
    if got is not None:
        cat, lits, patterns = got
        prefilter.remember(cat, lits, patterns)
        return cat
    cat = load_catalog(p)
    if k is not None:
        kbcache.save_catalog(k, (cat, prefilter.literals(cat), prefilter.engine_patterns(cat)))
    return cat
