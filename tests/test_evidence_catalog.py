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
