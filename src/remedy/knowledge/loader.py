"""Load knowledge/ and playbooks/: validate every entry, cross-check references, compile
every expression and template. Any mistake is a KnowledgeError naming file and line."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remedy.errors import KnowledgeError
from remedy.knowledge.dirs import _builtin_dirs, checked_env_dir, data_dirs  # noqa: F401
from remedy.knowledge.expr import compile_expr, compile_template, free_names, save_code_cache
from remedy.knowledge.functions import CONTEXT_NAMES, MESSAGE_NAMES, Functions
from remedy.knowledge.schema import (
    Action,
    Component,
    CudaTables,
    Probe,
    Release,
    Rule,
    Variable,
)
from remedy.knowledge.skew_schema import load_pairs
from remedy.knowledge.yamlload import line_of, load_yaml, validate_entry


@dataclass
class CompiledRule:
    rule: Rule
    file: str
    line: int | None
    when: Any
    holds: Any
    subject: Any
    message: Any
    because: list[Any]
    confirm_with: list[Any]


@dataclass
class CompiledBefore:
    action: str
    when: Any
    params: dict[str, Any]


@dataclass
class CompiledAction:
    action: Action
    file: str
    line: int | None
    title: Any
    when: Any
    bind: dict[str, Any]
    before: list[CompiledBefore]
    effects: list[dict[str, Any]]  # same shape, expressions compiled
    # operation name and its parameters (compiled expressions, or constants)
    operation: tuple[str, dict[str, Any]] | None = None


@dataclass
class Knowledge:
    components: dict[str, Component]
    variables: dict[str, Variable]
    rules: dict[str, CompiledRule]
    actions: dict[str, CompiledAction]
    probes: dict[str, Probe]
    releases: list[Release]
    signature_ids: set[str]
    functions: Functions
    files: list[str] = field(default_factory=list)
    version: str = ""
    # version-pairs.yaml: the pairs (each also a rule above) and the log fields stating versions
    pairs: list[Any] = field(default_factory=list)
    log_fields: list[Any] = field(default_factory=list)

    def consumers(self) -> list[Component]:
        return [c for c in self.components.values() if c.kind == "consumer"]


def _entries(path: Path, key: str) -> list[Any]:
    data = load_yaml(path)
    if not isinstance(data, dict) or key not in data:
        raise KnowledgeError(
            f"top level must be a mapping with a '{key}:' list", file=str(path), line=1
        )
    items = data[key]
    if not isinstance(items, list):
        raise KnowledgeError(f"'{key}' must be a list", file=str(path), line=line_of(data))
    return items


def _unique(items: list[Any], attr: str, file: str, lines: list[int | None], what: str) -> None:
    seen: dict[str, int | None] = {}
    for item, line in zip(items, lines, strict=True):
        key = getattr(item, attr)
        if key in seen:
            raise KnowledgeError(
                f"duplicate {what} {key!r} (first at line {seen[key]})", file=file, line=line
            )
        seen[key] = line


def _load_list(path: Path, key: str, model: type, what: str) -> list[tuple[Any, Any]]:
    """(model, raw mapping) pairs; the raw mapping gives field lines for later errors."""
    raw = _entries(path, key)
    out = [(validate_entry(model, e, str(path), what), e) for e in raw]
    _unique(
        [o for o, _ in out],
        "id" if hasattr(model, "model_fields") and "id" in model.model_fields else "name",
        str(path),
        [line_of(e) for _, e in out],
        what,
    )
    return out


def _checked(compile_: Callable[..., Any], *, template: bool, known: frozenset[str] | set[str]):
    """compile_expr/compile_template that also fail on a free name nothing provides: a typo in
    a variable or function name would otherwise only make the rule silently never fire."""

    def go(
        src: str, *, file: str, line: int | None, what: str, extra: frozenset[str] = frozenset()
    ) -> Any:
        out = compile_(src, file=file, line=line, what=what)
        unknown = sorted(free_names(src, template=template) - known - extra)
        if unknown:
            raise KnowledgeError(
                f"{what}: unknown name{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in "
                f"{src.strip()!r} (not a fact, a context variable, a parameter or a knowledge "
                "function: see knowledge/functions.py)",
                file=file,
                line=line,
            )
        return out

    return go


def _compile_effect(
    eff: dict[str, Any], file: str, line: int | None, aid: str, compile_: Callable[..., Any]
) -> dict[str, Any]:
    def ex(src: Any) -> Any:
        if not isinstance(src, str):
            raise KnowledgeError(
                f"action {aid!r}: effect values must be expression strings, got {src!r}",
                file=file,
                line=line,
            )
        return compile_(src, line)

    out: dict[str, Any] = {}
    for k, v in eff.items():
        if k == "__line__":
            continue
        if k in ("toolkit", "python"):
            out[k] = v
        elif k == "set" or (k == "env" and isinstance(v, dict)):
            out[k] = {f: ex(e) for f, e in v.items() if f != "__line__"}
        elif k == "packages":
            out[k] = (
                ex(v) if isinstance(v, str) else {n: ex(e) for n, e in v.items() if n != "__line__"}
            )
        elif k == "unset_env":
            out[k] = list(v)
        else:  # add_toolkit, gpu_driver
            out[k] = ex(v)
    return out


def _compile_operation(
    a: Action,
    file: str,
    line: int | None,
    compile_: Callable[[str, int | None], Any],
    check: bool = True,
) -> tuple[str, dict[str, Any]] | None:
    """`operation:` of an action: a known operation name, and for each of that operation's
    parameters an expression (a string, its names checked like every other) or a constant.
    Without `check` (these very files passed it against this very operations module, see
    _ops_checked) remedy.operations is not imported: `diagnose` makes no plan."""
    spec = a.operation
    if spec is None:
        return None
    if not check:
        return spec.get("op"), {
            k: compile_(v, line) if isinstance(v, str) else v
            for k, v in spec.items()
            if k not in ("op", "__line__")
        }
    from remedy.operations import OPERATIONS

    what = f"action {a.id!r}"
    name = spec.get("op")
    if name not in OPERATIONS:
        raise KnowledgeError(
            f"{what}: operation {name!r} is not one of {', '.join(sorted(OPERATIONS))}",
            file=file,
            line=line,
        )
    fields = set(OPERATIONS[name].model_fields) - {"op"}
    params: dict[str, Any] = {}
    for k, v in spec.items():
        if k in ("op", "__line__"):
            continue
        if k not in fields:
            raise KnowledgeError(
                f"{what}: operation {name!r} has no parameter {k!r} (has: "
                f"{', '.join(sorted(fields))})",
                file=file,
                line=line,
            )
        params[k] = compile_(v, line) if isinstance(v, str) else v
    return name, params


# Checking every action's `operation:` against remedy.operations imports it (pydantic models,
# packaging, the playbook writers: ~12 ms) for commands that make no plan (`diagnose`). Action
# files that passed the check are recorded by their sha256 with the operations module's
# source, this module's and Python's version (they define the check); the same bytes again
# skip it. The record goes through remedy.cachefile (read only when ours and intact); what it
# can do is skip a check, never add an operation.
_KEEP_OPS_CHECKED = 16


def _ops_record_path() -> str:
    import sys

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    v = sys.version_info
    return os.path.join(base, "remedy", f"operations-checked-py{v[0]}{v[1]}")


def _ops_key(act_files: list[Path]) -> str | None:
    import sys

    h = hashlib.sha256(sys.version.encode() + b"\0")
    try:
        for p in (Path(__file__), Path(__file__).parent.parent / "operations" / "__init__.py"):
            h.update(p.read_bytes() + b"\0")
        for p in act_files:
            h.update(str(p).encode() + b"\0" + p.read_bytes() + b"\0")
    except OSError:
        return None
    return h.hexdigest()


def _ops_checked() -> list[str]:
    from remedy.cachefile import read_keys

    return read_keys(_ops_record_path())


def _remember_ops_checked(key: str) -> None:
    from remedy.cachefile import remember_key

    remember_key(_ops_record_path(), key, _KEEP_OPS_CHECKED)


def knowledge_version(files: list[str]) -> str:
    """sha256 of the knowledge and playbook files (names and bytes): a saved plan names the
    knowledge it was made with, so a plan from other rules is refused, not re-interpreted."""
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def load_knowledge(knowledge_dir: str | None = None, playbooks_dir: str | None = None) -> Knowledge:
    """The knowledge, validated and compiled (cached per pair of directories)."""
    kdir, pdir = data_dirs()
    return _load_knowledge(str(knowledge_dir or kdir), str(playbooks_dir or pdir))


def _cache_clear() -> None:
    _load_knowledge.cache_clear()


load_knowledge.cache_clear = _cache_clear  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=4)
def _load_knowledge(kdir_s: str, pdir_s: str) -> Knowledge:
    kdir, pdir = Path(kdir_s), Path(pdir_s)
    for d in (kdir, pdir):
        if not d.is_dir():
            raise KnowledgeError(f"knowledge directory not found: {d}")
    from remedy.knowledge import kbcache

    key = kbcache.key(kdir, pdir)
    kb = kbcache.load(key) if key is not None else None
    if kb is None:
        kb = _load_fresh(kdir, pdir)
        if key is not None:
            kbcache.save(key, kb)
    return kb


def _load_fresh(kdir: Path, pdir: Path) -> Knowledge:
    """Every file read, validated, cross-checked and compiled (what remedy.knowledge.kbcache
    keeps for the next run)."""

    comp_file = kdir / "components.yaml"
    comps = _load_list(comp_file, "components", Component, "component")
    components = {c.id: c for c, _ in comps}
    for c, raw in comps:
        for dep in c.depends_on:
            if dep not in components:
                raise KnowledgeError(
                    f"component {c.id!r} depends on unknown component {dep!r}",
                    file=str(comp_file),
                    line=line_of(raw, "depends_on"),
                )

    var_file = kdir / "variables.yaml"
    variables: dict[str, Variable] = {}
    raw_vars = _entries(var_file, "variables")
    for e in raw_vars:
        v = validate_entry(Variable, e, str(var_file), "variable")
        if v.name in variables:
            raise KnowledgeError(
                f"duplicate variable {v.name!r}", file=str(var_file), line=line_of(e)
            )
        for edge in [*v.consumers, *v.unaffected]:
            if edge.component not in components:
                raise KnowledgeError(
                    f"variable {v.name!r}: unknown component {edge.component!r}",
                    file=str(var_file),
                    line=line_of(e),
                )
        variables[v.name] = v

    rel_file = kdir / "cuda-releases.yaml"
    releases = [
        validate_entry(Release, e, str(rel_file), "release") for e in _entries(rel_file, "releases")
    ]

    sig_file = kdir / "signatures.yaml"
    signature_ids: set[str] = set()
    if sig_file.is_file():
        for e in _entries(sig_file, "signatures"):
            if isinstance(e, dict) and isinstance(e.get("id"), str):
                signature_ids.add(e["id"])

    act_files = sorted(p for p in pdir.glob("*.yaml") if p.name != "probes.yaml")
    probe_file = pdir / "probes.yaml"
    probe_entries = _load_list(probe_file, "probes", Probe, "probe")
    probes = {p.id: p for p, _ in probe_entries}
    probe_raw = {p.id: raw for p, raw in probe_entries}

    raw_actions: list[tuple[Action, str, Any]] = []
    for f in act_files:
        for a, raw in _load_list(f, "actions", Action, "action"):
            raw_actions.append((a, str(f), raw))
    seen_actions: dict[str, str] = {}
    for a, f, raw in raw_actions:
        if a.id in seen_actions:
            raise KnowledgeError(
                f"duplicate action {a.id!r} (also in {seen_actions[a.id]})",
                file=f,
                line=line_of(raw),
            )
        seen_actions[a.id] = f

    tables_file = kdir / "cuda-tables.yaml"
    tables = validate_entry(CudaTables, load_yaml(tables_file), str(tables_file), "CUDA tables")
    fns = Functions(releases, {k: c.model_dump() for k, c in components.items()}, tables)
    fns.invalid_errors = (
        {
            (edge.component, cls): eff.error
            for edge in variables["CUDA_HOME"].consumers
            for cls, eff in edge.effects.items()
            if eff.error
        }
        if "CUDA_HOME" in variables
        else {}
    )
    known = fns.names() | CONTEXT_NAMES
    expr_ = _checked(compile_expr, template=False, known=known)
    tmpl_ = _checked(compile_template, template=True, known=known)

    rule_files = sorted(kdir.glob("rules*.yaml"))
    rule_entries = [
        (r, raw, rf) for rf in rule_files for r, raw in _load_list(rf, "rules", Rule, "rule")
    ]
    pairs, log_fields, pair_rules = load_pairs(kdir / "version-pairs.yaml", components)
    # version pairs first: the toolkit's own consistency (cicc/ptxas, nvcc/headers) is what
    # the planner repairs before what builds on it (CCCL, links), as when they led rules.yaml
    rule_entries = pair_rules + rule_entries
    rules: dict[str, CompiledRule] = {}
    for r, raw, rule_file in rule_entries:
        f = str(rule_file)
        if r.id in rules:
            raise KnowledgeError(
                f"duplicate rule {r.id!r} (also in {rules[r.id].file})", file=f, line=line_of(raw)
            )
        line = line_of(raw)

        def at(key: str, raw: Any = raw) -> int | None:
            return line_of(raw, key)

        for cid in r.consumers:
            if cid not in components:
                raise KnowledgeError(
                    f"rule {r.id!r}: unknown consumer {cid!r}", file=f, line=at("consumers")
                )
        for aid in r.repairs:
            if aid not in seen_actions:
                raise KnowledgeError(
                    f"rule {r.id!r}: repairs unknown action {aid!r}", file=f, line=at("repairs")
                )
        if signature_ids:
            for sid in r.predicts:
                if sid not in signature_ids:
                    raise KnowledgeError(
                        f"rule {r.id!r}: predicts unknown signature {sid!r}",
                        file=f,
                        line=at("predicts"),
                    )
        what = f"rule {r.id!r}"
        rules[r.id] = CompiledRule(
            rule=r,
            file=f,
            line=line,
            when=expr_(r.when, file=f, line=at("when"), what=f"{what} when"),
            holds=expr_(r.holds, file=f, line=at("holds"), what=f"{what} holds"),
            subject=expr_(r.subject, file=f, line=at("subject"), what=f"{what} subject"),
            message=tmpl_(r.message, file=f, line=at("message"), what=what, extra=MESSAGE_NAMES),
            because=[
                tmpl_(b, file=f, line=at("because"), what=what, extra=MESSAGE_NAMES)
                for b in r.because
            ],
            confirm_with=[
                tmpl_(b, file=f, line=at("confirm_with"), what=what, extra=MESSAGE_NAMES)
                for b in r.confirm_with
            ],
        )
    for p in pairs:
        if p.evidence_for is not None and p.evidence_for not in rules:
            raise KnowledgeError(
                f"pair {p.id!r}: evidence_for unknown rule {p.evidence_for!r}",
                file=str(kdir / "version-pairs.yaml"),
            )

    ops_key = _ops_key(act_files)
    ops_checked = ops_key is not None and ops_key in _ops_checked()
    passed: dict[str, set[str]] = {}  # action -> params other actions' `before` give it
    for a, _, _ in raw_actions:
        for b in a.before:
            passed.setdefault(b.action, set()).update(b.params)
    actions: dict[str, CompiledAction] = {}
    for a, f, raw in raw_actions:
        what = f"action {a.id!r}"
        line = line_of(raw)
        params = frozenset(a.bind) | frozenset(passed.get(a.id, ()))

        def ax(
            src: str, ln: int | None, params: frozenset[str] = params, f: str = f, what: str = what
        ) -> Any:
            return expr_(src, file=f, line=ln, what=what, extra=params)

        def at_(
            src: str, ln: int | None, params: frozenset[str] = params, f: str = f, what: str = what
        ) -> Any:
            return tmpl_(src, file=f, line=ln, what=what, extra=params)

        for rid in a.repairs:
            if rid not in rules:
                raise KnowledgeError(
                    f"{what}: repairs unknown rule {rid!r}", file=f, line=line_of(raw, "repairs")
                )
        if a.probe not in probes:
            raise KnowledgeError(
                f"{what}: unknown probe {a.probe!r}", file=f, line=line_of(raw, "probe")
            )
        for b in a.before:
            if b.action not in seen_actions:
                raise KnowledgeError(
                    f"{what}: before names unknown action {b.action!r}",
                    file=f,
                    line=line_of(raw, "before"),
                )
        actions[a.id] = CompiledAction(
            action=a,
            file=f,
            line=line,
            title=at_(a.title, line_of(raw, "title")),
            when=ax(a.when, line_of(raw, "when")),
            bind={k: ax(v, line_of(raw.get("bind"), k)) for k, v in a.bind.items()},
            before=[
                CompiledBefore(
                    action=b.action,
                    when=ax(b.when, line_of(raw, "before")),
                    params={k: ax(v, line_of(raw, "before")) for k, v in b.params.items()},
                )
                for b in a.before
            ],
            effects=[_compile_effect(e, f, line_of(raw, "effects"), a.id, ax) for e in a.effects],
            operation=_compile_operation(
                a, f, line_of(raw, "operation") or line, ax, check=not ops_checked
            ),
        )
    if ops_key is not None and not ops_checked:
        _remember_ops_checked(ops_key)
    used_probes = {ca.action.probe for ca in actions.values()}
    for pid, p in probes.items():
        if pid not in used_probes and not p.verifies and p.level != "launch":
            raise KnowledgeError(
                f"probe {pid!r} is used by no action and verifies no component: nothing would "
                "ever run it (name it in an action's `probe:` or give it `verifies:`)",
                file=str(probe_file),
                line=line_of(probe_raw[pid]),
            )
        for rid in p.requires:
            if rid not in rules:
                raise KnowledgeError(
                    f"probe {pid!r} requires unknown rule {rid!r}",
                    file=str(probe_file),
                    line=line_of(probe_raw[pid], "requires"),
                )
        for cid in p.verifies:
            if cid not in components:
                raise KnowledgeError(
                    f"probe {pid!r} verifies unknown component {cid!r}",
                    file=str(probe_file),
                    line=line_of(probe_raw[pid], "verifies"),
                )

    save_code_cache()
    files = [
        str(p)
        for p in [comp_file, var_file, rel_file, tables_file, *rule_files, probe_file, *act_files]
    ]
    if (kdir / "version-pairs.yaml").is_file():
        files.append(str(kdir / "version-pairs.yaml"))
    return Knowledge(
        components=components,
        variables=variables,
        rules=rules,
        actions=actions,
        probes=probes,
        releases=releases,
        signature_ids=signature_ids,
        functions=fns,
        files=files,
        version=knowledge_version(files),
        pairs=pairs,
        log_fields=log_fields,
    )
