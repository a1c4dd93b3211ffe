"""Where facts and evidence come from: a built-in example, a facts file, a host, log files.

Every failure here becomes an InputError with a message a person can act on.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remedy.errors import InputError, UnknownExample
from remedy.fileread import TooLarge, json_loads, read_limited
from remedy.record import Record
from remedy.redact import redact_facts
from remedy.results import SuspiciousLine, Symptom

if TYPE_CHECKING:
    from pydantic import ValidationError  # imported where facts are validated

    from remedy.model import Facts  # imported where facts are read (remedy.model)

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


def _safe_load(text: str) -> Any:
    """yaml.safe_load with libyaml's parser when present (10x faster: a 2 KB facts file cost
    ~7 ms of every `plan`); the constructor is the safe one either way, as in knowledge.

    Aliases are refused: `a: &x [*x]` made a cycle that ended in a RecursionError (exit 70),
    and 300 bytes of nested aliases (`b: [*a, *a, ...]`, 8 levels) a 10^8-node tree that
    hung every walk over the facts. `remedy facts` writes JSON, which has none."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class NoAliases(base):  # type: ignore[misc, valid-type]
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            # a node met twice is an alias (*name) of it; the libyaml composer shares it
            if node in self.constructed_objects or node in self.recursive_objects:
                line = node.start_mark.line + 1 if node.start_mark else "?"
                raise InputError(
                    f"the YAML value anchored at line {line} is used again through an alias"
                    " (*name): a facts file is a plain tree",
                    hint="write the value out, or give the JSON of `remedy facts --json`",
                )
            return super().construct_object(node, deep)

    return yaml.load(text, Loader=NoAliases)  # noqa: S506


def _own_load(text: str) -> Any:
    """_safe_load of remedy's own example files, through the knowledge's parse cache (a
    private marshal of plain data, remedy.knowledge.yamlload): `plan --example` then needs
    no YAML parser at all (~13 ms to import)."""
    from remedy.knowledge.yamlload import cached_parse

    return cached_parse(text, _safe_load, kind="safe-load")


def _parse_error(p: Path, exc: Exception) -> str:
    """`FILE:LINE:COLUMN: not valid JSON/YAML: what the parser says`: the line alone left a
    long line (a facts file is one JSON object, often one line) with nowhere to look."""
    if isinstance(exc, json.JSONDecodeError):
        pos = f":{exc.lineno}:{exc.colno}" if exc.doc else ""
        return f"{p}{pos}: not valid JSON/YAML (JSON): {exc.msg}"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    what = getattr(exc, "problem", None) or getattr(exc, "context", None) or "syntax error"
    return f"{p}{pos}: not valid JSON/YAML (YAML): {what}"


def _is_parse_error(exc: Exception) -> bool:
    """JSON's or YAML's syntax error (yaml is only imported once something was parsed)."""
    yaml = sys.modules.get("yaml")
    return isinstance(exc, json.JSONDecodeError) or (
        yaml is not None and isinstance(exc, yaml.YAMLError)
    )


# Plain records (remedy.record), not dataclasses: why is said there.
class Example(Record):
    _FIELDS = ("name", "title", "description", "facts_path", "logs", "extra_logs", "sources")

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        facts_path: Path,
        logs: list[Path],
        extra_logs: list[Path] | None = None,
        sources: list[str] | None = None,
    ) -> None:
        self.name = name
        self.title = title
        self.description = description
        self.facts_path = facts_path
        self.logs = logs
        self.extra_logs: list[Path] = [] if extra_logs is None else extra_logs
        self.sources: list[str] = [] if sources is None else sources


def examples() -> dict[str, Example]:
    out: dict[str, Example] = {}
    for d in sorted(EXAMPLES_DIR.iterdir()):
        meta_path = d / "example.yaml"
        if not meta_path.is_file():
            continue
        meta = _own_load(meta_path.read_text(encoding="utf-8"))  # whatever the locale
        out[d.name] = Example(
            name=d.name,
            title=meta["title"],
            description=" ".join(meta.get("description", "").split()),
            facts_path=d / "facts.yaml",
            logs=[d / x for x in meta.get("logs", [])],
            extra_logs=[d / x for x in meta.get("extra_logs", [])],
            sources=list(meta.get("sources", [])),
        )
    return out


def get_example(name: str) -> Example:
    all_ = examples()
    if name not in all_:
        raise UnknownExample(
            f"unknown example {name!r}",
            hint="built-in examples: " + ", ".join(all_) + " (list them with `remedy examples`)",
        )
    return all_[name]


def _validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {err['msg']}{more}"


def load_facts_file(path: str | Path, *, plan_ok: bool = False) -> Facts:
    """Facts from a file; a saved plan is refused unless ``plan_ok`` (it carries facts, but
    given as --facts it is almost always the wrong file: the plan's facts are old news)."""
    p = Path(path)
    try:
        raw = read_limited(p)
    except OSError as exc:
        raise InputError(f"cannot read facts file {p}: {exc.strerror}") from None
    except TooLarge as exc:
        raise InputError(f"{p} is {exc}: not a facts file") from None
    if b"\x00" in raw[:65536]:
        raise InputError(f"{p} is a binary file, not a facts file (JSON or YAML)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p} is not valid UTF-8; a facts file is JSON or YAML text") from None
    if not text.strip():
        raise InputError(f"{p} is empty; expected the JSON of `remedy facts --json`")
    own = p.resolve().parent.parent == EXAMPLES_DIR  # an example's facts: remedy's own file
    try:
        data: Any = (
            json_loads(text)
            if text.lstrip().startswith("{")
            else (_own_load(text) if own else _safe_load(text))
        )
    except InputError as exc:  # an alias: the message names the file
        raise InputError(f"{p}: {exc.message}", hint=exc.hint) from None
    except Exception as exc:
        if not _is_parse_error(exc):
            raise
        raise InputError(_parse_error(p, exc)) from None
    if isinstance(data, dict) and "facts" in data and "steps" in data:
        if not plan_ok:
            raise InputError(
                f"{p} is a saved remedy plan, not a facts file",
                hint="give the host's facts (`remedy facts HOST --json > host.json`), "
                "or apply the plan with `remedy run HOST --plan " + str(p) + "`",
            )
        data = data["facts"]  # a saved plan carries its facts
    if not isinstance(data, dict):
        raise InputError(f"{p}: facts must be a mapping, got {type(data).__name__}")
    from pydantic import ValidationError

    from remedy.model import Facts

    try:
        facts = Facts.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{p}: invalid facts: {_validation_message(exc)}") from None
    return redact_facts(facts)  # before anything digests them


def scan_logs(paths: list[str | Path]) -> tuple[list[Symptom], list[SuspiciousLine], set[str]]:
    """Symptoms from every log, in order; also suspicious lines and the wrapper signature ids."""
    with LogScans(paths) as scans:
        return scans.result()


class LogScans:
    """``scan_logs`` started now and finished by ``result``: the first log's scan workers run
    while the caller does other work (``diagnose`` loads the knowledge base meanwhile); the
    other logs are scanned in ``result``. ``close`` (or leaving the ``with``) ends the workers."""

    def __init__(self, paths: list[str | Path], *, caller_works: bool = False) -> None:
        """``caller_works``: the caller has work of its own before ``result`` (PendingScan)."""
        from remedy.evidence.catalog import default_catalog
        from remedy.evidence.scan import PendingScan

        self.paths = list(paths)
        self.first: PendingScan | None = None
        if self.paths:
            self.first = PendingScan(
                str(self.paths[0]), catalog=default_catalog(), caller_works=caller_works
            )

    @property
    def reading(self) -> bool:
        """Scan workers read the first log now (a log big enough for Hyperscan), until
        ``result``; else the scan is done in ``result`` itself."""
        return self.first is not None and self.first.job is not None

    def __enter__(self) -> LogScans:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.first is not None:
            self.first.close()
            self.first = None

    def result(self) -> tuple[list[Symptom], list[SuspiciousLine], set[str]]:
        from remedy.evidence import scan_path
        from remedy.evidence.catalog import default_catalog

        catalog = default_catalog()
        wrappers = {s.id for s in catalog.signatures if getattr(s, "wrapper", False)}
        symptoms: list[Symptom] = []
        suspicious: list[SuspiciousLine] = []
        for k, p in enumerate(self.paths):
            if k == 0 and self.first is not None:
                res = self.first.result()
                self.close()
            else:
                res = scan_path(str(p), catalog=catalog)
            symptoms.extend(res.symptoms)
            suspicious.extend(res.suspicious)
        return symptoms, suspicious, wrappers
