"""Loading signatures.yaml: every mistake is a KnowledgeError that names file:line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from remedy.errors import KnowledgeError
from remedy.evidence import default_catalog, knowledge_dir, load_catalog

GOOD = """\
signatures:
- id: ninja-subcommand-failed
  title: ninja stopped
  pattern: 'ninja: build stopped: subcommand failed'
  needles: ["build stopped"]
  severity: error
  stage: compile
  component: ninja
  wrapper: true
  examples: ["ninja: build stopped: subcommand failed."]
  source: {repo: ninja-build/ninja, path: src/ninja.cc}
- id: ld-cannot-find-lib
  title: ld
  pattern: 'cannot find -l(?P<lib>\\w+)'
  needles: ["cannot find -l"]
  severity: fatal
  stage: link
  component: linker
  facts: {lib: missing_lib}
  examples: ["/usr/bin/ld: cannot find -lcudart: No such file or directory"]
  source: {doc: binutils ld}
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "signatures.yaml"
    p.write_text(text)
    return p


def where(exc: pytest.ExceptionInfo[KnowledgeError], path: Path) -> int:
    m = re.match(rf"{re.escape(str(path))}:(\d+): ", str(exc.value))
    assert m, f"error does not name file:line: {exc.value}"
    return int(m.group(1))


def test_small_catalog_loads(tmp_path: Path) -> None:
    cat = load_catalog(write(tmp_path, GOOD))
    assert cat.ids() == ["ninja-subcommand-failed", "ld-cannot-find-lib"]
    assert cat["ld-cannot-find-lib"].line == 12


def test_default_catalog_is_found_and_cached() -> None:
    assert (knowledge_dir() / "signatures.yaml").is_file()
    assert default_catalog() is default_catalog()
    assert len(default_catalog()) >= 50


def test_bad_yaml(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("  severity: fatal", "  severity: [fatal"))
    with pytest.raises(KnowledgeError, match="invalid YAML") as exc:
        load_catalog(p)
    assert where(exc, p) in (16, 17)


def test_bad_regex_names_the_pattern_line(tmp_path: Path) -> None:
    p = write(
        tmp_path, GOOD.replace("'cannot find -l(?P<lib>\\w+)'", "'cannot find -l(?P<lib>\\w+'")
    )
    with pytest.raises(KnowledgeError, match="invalid regex") as exc:
        load_catalog(p)
    assert where(exc, p) == 14


def test_duplicate_id(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("id: ld-cannot-find-lib", "id: ninja-subcommand-failed"))
    with pytest.raises(KnowledgeError, match="duplicate signature id .* line 2") as exc:
        load_catalog(p)
    assert where(exc, p) == 12


def test_example_that_does_not_match(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        GOOD.replace('["ninja: build stopped: subcommand failed."]', '["ninja: build stopped"]'),
    )
    with pytest.raises(KnowledgeError, match="example does not match its pattern") as exc:
        load_catalog(p)
    assert where(exc, p) == 10


def test_example_without_a_needle(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace('needles: ["build stopped"]', 'needles: ["Build stopped"]'))
    with pytest.raises(KnowledgeError, match="none of the needles") as exc:
        load_catalog(p)
    assert where(exc, p) == 10


def test_dead_needle(tmp_path: Path) -> None:
    p = write(
        tmp_path, GOOD.replace('needles: ["build stopped"]', 'needles: ["build stopped", "nope"]')
    )
    with pytest.raises(KnowledgeError, match="needle 'nope' occurs in no example") as exc:
        load_catalog(p)
    assert where(exc, p) == 5


def test_unknown_component_and_missing_field(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("component: linker", "component: gcc"))
    with pytest.raises(KnowledgeError, match="signature 'ld-cannot-find-lib': component") as exc:
        load_catalog(p)
    assert where(exc, p) in (12, 18)
    p = write(tmp_path, GOOD.replace("  title: ld\n", ""))
    with pytest.raises(KnowledgeError, match="title: Field required"):
        load_catalog(p)


def test_facts_must_name_a_group(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("facts: {lib: missing_lib}", "facts: {library: missing_lib}"))
    with pytest.raises(KnowledgeError, match="facts maps group 'library'") as exc:
        load_catalog(p)
    assert where(exc, p) == 19


def test_unknown_fact_key(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD.replace("facts: {lib: missing_lib}", "facts: {lib: missing_library}"))
    with pytest.raises(KnowledgeError, match="facts.lib"):
        load_catalog(p)


def test_supersedes_unknown_id(tmp_path: Path) -> None:
    p = write(
        tmp_path, GOOD.replace("  wrapper: true\n", "  wrapper: true\n  supersedes: [nope]\n")
    )
    with pytest.raises(KnowledgeError, match="supersedes unknown or self id 'nope'") as exc:
        load_catalog(p)
    assert where(exc, p) == 2


def test_near_pattern_needs_literals(tmp_path: Path) -> None:
    near = "  near: {pattern: 'compilation_.*\\.py', within: 5}\n"
    p = write(tmp_path, GOOD.replace("  wrapper: true\n", "  wrapper: true\n" + near))
    with pytest.raises(KnowledgeError, match="near.pattern is not a plain literal"):
        load_catalog(p)
    plain = "  near: {pattern: 'compilation_context\\.py', within: 5}\n"
    cat = load_catalog(
        write(tmp_path, GOOD.replace("  wrapper: true\n", "  wrapper: true\n" + plain))
    )
    assert cat["ninja-subcommand-failed"].near_needles == ("compilation_context.py",)


def test_top_level_shape(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="'signatures:' list"):
        load_catalog(write(tmp_path, "sigs: []\n"))
    with pytest.raises(KnowledgeError, match="unknown top-level key 'extra'"):
        load_catalog(write(tmp_path, GOOD + "extra: 1\n"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="cannot read"):
        load_catalog(tmp_path / "nope.yaml")


def test_required_literals_are_in_every_line_the_pattern_matches() -> None:
    """catalog.required_literals is sound: on random patterns (literals, alternatives, optional
    and scoped-caseless groups, classes, anchors, repeats) over random texts of the same
    letters, a text the pattern matches holds one of them. And the gates of the catalog get
    theirs (the matcher tests them before the gate)."""
    import random
    import re

    from remedy.evidence.catalog import default_catalog, required_literals

    rnd = random.Random(31)
    atoms = ["abcd", "bcda", "xyzw", "ab", "c", "d d", r"\d", "[ab]", "."]

    def piece(depth: int) -> str:
        k = rnd.randrange(9 if depth < 2 else 4)
        if k < 4:
            return rnd.choice(atoms)
        if k == 4:
            return "(?:" + alt(depth + 1) + ")?"
        if k == 5:
            return "(?i:" + alt(depth + 1) + ")"
        if k == 6:
            return "(" + alt(depth + 1) + ")"
        if k == 7:
            return rnd.choice([r"\b", "^", "(?<!a)"]) + rnd.choice(atoms)
        return rnd.choice(atoms) + rnd.choice(["+", "*", "{1,2}", "?"])

    def alt(depth: int) -> str:
        return "|".join(
            "".join(piece(depth) for _ in range(rnd.randrange(1, 4)))
            for _ in range(rnd.randrange(1, 4))
        )

    letters = ["a", "b", "c", "d", "x", "y", "z", "w", " ", "1", "A", "B", "\u0130"]
    texts = ["".join(rnd.choice(letters) for _ in range(rnd.randrange(0, 24))) for _ in range(300)]
    words = ["abcd", "bcda", "xyzw", "ab", "c", "d d", "1", "A", "x", " ", "ABCD", "aBcd"]
    texts += ["".join(rnd.choice(words) for _ in range(rnd.randrange(1, 8))) for _ in range(300)]
    derived = hits = 0
    for _ in range(3_000):
        pattern = ("(?i)" if rnd.random() < 0.05 else "") + alt(0)
        lits = required_literals(pattern)
        if lits is None:
            continue
        derived += 1
        rx = re.compile(pattern)
        for t in texts:
            if rx.search(t) is not None:
                hits += 1
                assert any(x in t for x in lits), (pattern, lits, t)
    assert derived > 300 and hits > 10_000  # control: many patterns got literals, and matched
    assert required_literals("(?i)abcdef") is None and required_literals("(?i:abcd)") is None
    assert required_literals("of B?Float16 type|abcd(?:e)?fgh") == ("Float16 type", "abcd")
    gated = {s.id: s.gate_literals for s in default_catalog().signatures if s.gate is not None}
    assert gated["shared-object-truncated"] == (
        "invalid ELF header",
        "file too short",
        "cannot read file data",
        "file not recognized: File truncated",  # GNU ld (BFD) on a truncated .so (tune-aw)
    )
    assert gated["nvcc-not-located"] is None  # a caseless alternative: the gate alone
