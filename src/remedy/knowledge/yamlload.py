"""Safe YAML loading that remembers where each mapping came from.

Knowledge and playbooks are data written by people; when one entry is wrong the error must
name the file and the line, so every mapping carries its 1-based line under the key
``__line__`` (stripped again by :func:`strip_lines`). Only ``yaml.SafeLoader`` is used:
loading knowledge never executes code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remedy.errors import KnowledgeError
from remedy.fileread import TooLarge, read_limited

if TYPE_CHECKING:
    import yaml

LINE_KEY = "__line__"
KEYLINES_KEY = "__keylines__"


# yaml (~13 ms to import) is imported when a file is parsed, not when this module is: a
# command whose knowledge comes whole from the parse cache never loads it.


@functools.cache
def _line_loader() -> type:
    """The loader class: libyaml's parser when present (5-10x faster); the constructor is the
    safe one either way."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = type("_LineLoader", (base,), {})
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    return loader


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict:
    import yaml

    mapping = yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep=deep)
    keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:
        raise KnowledgeError(
            f"duplicate key {sorted(dupes)[0]!r}",
            file=getattr(loader, "_remedy_file", None),
            line=node.start_mark.line + 1,
        )
    mapping[LINE_KEY] = node.start_mark.line + 1
    mapping[KEYLINES_KEY] = {
        k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)
    }
    return mapping


# What a document may expand to once its aliases are followed: nested aliases (`&a [*b, *b]`,
# "billion laughs") make a few hundred bytes expand exponentially when walked or validated.
MAX_NODES = 1_000_000


def _check_expansion(root: yaml.Node, file: str) -> None:
    import yaml

    """KnowledgeError when the document, aliases expanded, has more than MAX_NODES nodes or
    refers to itself (a node reached again while it is being counted)."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in busy:
            raise KnowledgeError(
                "a YAML alias refers to the node that contains it",
                file=file,
                line=node.start_mark.line + 1,
            )
        busy.add(key)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            n += sum(size(c) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            n += sum(size(k) + size(v) for k, v in node.value)
        busy.discard(key)
        if n > MAX_NODES:
            raise KnowledgeError(
                f"YAML aliases expand to more than {MAX_NODES:,} nodes: refused",
                file=file,
                line=node.start_mark.line + 1,
            )
        sizes[key] = n
        return n

    try:
        size(root)
    except RecursionError:
        raise KnowledgeError("YAML nested too deep", file=file) from None


def load_yaml_text(text: str, file: str = "<string>") -> Any:
    import yaml

    loader = _line_loader()(text)
    loader._remedy_file = file  # type: ignore[attr-defined]
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, file)
        return loader.construct_document(node)
    except KnowledgeError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise KnowledgeError(f"invalid YAML: {exc.problem or exc}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"invalid YAML: {exc}", file=file) from None
    finally:
        loader.dispose()


def read_utf8(
    path: str | Path, error: Callable[..., Exception] = KnowledgeError, what: str = ""
) -> str:
    """A data file's text; unreadable or non-UTF-8 is `error` naming the file (and line)."""
    p = Path(path)
    try:
        raw = read_limited(p)
    except OSError as exc:
        raise error(
            f"cannot read{' ' + what if what else ''}: {exc.strerror}", file=str(p)
        ) from None
    except TooLarge as exc:
        raise error(str(exc), file=str(p)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error("not valid UTF-8", file=str(p), line=line) from None


def load_yaml(path: str | Path) -> Any:
    """A data file, parsed; a file parsed before (same bytes) comes from the parse cache."""
    text = read_utf8(path)
    return cached_parse(text, lambda t: load_yaml_text(t, str(path)))


def cached_parse(text: str, parse: Callable[[str], Any], kind: str = "") -> Any:
    """parse(text), from the parse cache when this text was parsed before by the same kind of
    parse (`kind` names a parse other than load_yaml_text's, e.g. a plain safe load); an
    error is raised, never cached."""
    prefix = f"{kind}\0".encode() if kind else b""
    key = hashlib.sha256(prefix + text.encode("utf-8")).hexdigest()
    cache = _parse_cache()
    blob = cache.get(key)
    if isinstance(blob, bytes):
        try:
            return marshal.loads(blob)  # fresh objects on every load: callers may change them
        except (ValueError, EOFError, TypeError):
            pass
    data = parse(text)
    try:
        cache[key] = marshal.dumps(data)
    except ValueError:  # a type marshal cannot hold (a YAML timestamp): not cached
        return data
    _save_parse_cache(cache, key)
    return data


# Parsing the knowledge YAML with line marks took ~100 ms of every command's start-up;
# loading its marshalled result takes ~2 ms. Entries are keyed by the text's SHA-256, so an
# edited file is simply parsed again.
_PARSED: dict[str, Any] | None = None
_KEEP = 64


def _parse_cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = f"yaml{_yaml_version()}-py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(base, "remedy", f"parsed-{tag}.marshal")


@functools.cache
def _yaml_version() -> str:
    """yaml.__version__, read from its __init__.py when yaml is not imported yet (the cache's
    name: a parse by another PyYAML is not reused)."""
    mod = sys.modules.get("yaml")
    if mod is None:
        import re
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec("yaml")
        try:
            with open(spec.origin or "", encoding="utf-8") as f:  # type: ignore[union-attr]
                m = re.search(r"^__version__ = ['\"]([^'\"]+)['\"]", f.read(), re.M)
        except (AttributeError, OSError, UnicodeDecodeError):
            m = None
        if m:
            return m.group(1)
        import yaml as mod
    return str(mod.__version__)


def _parse_cache() -> dict[str, Any]:
    """The cache, loaded once. Knowledge decides what runs on hosts: like the template code
    cache, it is read only when it is ours and intact (remedy.cachefile); else ignored."""
    global _PARSED
    if _PARSED is None:
        _PARSED = {}
        from remedy.cachefile import read_private

        body = read_private(_parse_cache_path())
        if body is not None:
            try:
                data = marshal.loads(body)
            except Exception:  # a damaged cache is rebuilt, never a failure
                data = None
            if isinstance(data, dict):
                _PARSED.update(
                    (k, v) for k, v in data.items() if isinstance(k, str) and isinstance(v, bytes)
                )
    return _PARSED


def _save_parse_cache(cache: dict[str, Any], newest: str) -> None:
    """Write the cache (newest entries kept) through remedy.cachefile; failures are harmless."""
    from remedy.cachefile import write_private

    keep = dict(list((k, v) for k, v in cache.items() if k != newest)[-(_KEEP - 1) :])
    keep[newest] = cache[newest]
    with contextlib.suppress(ValueError):  # marshal: a type it cannot hold
        write_private(_parse_cache_path(), marshal.dumps(keep))


def strip_lines(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_lines(v) for k, v in obj.items() if k not in (LINE_KEY, KEYLINES_KEY)}
    if isinstance(obj, list):
        return [strip_lines(v) for v in obj]
    return obj


def line_of(obj: Any, key: str | None = None) -> int | None:
    """Line of a mapping, or of one of its keys when `key` is given."""
    if not isinstance(obj, dict):
        return None
    if key is not None and key in obj.get(KEYLINES_KEY, {}):
        return obj[KEYLINES_KEY][key]
    return obj.get(LINE_KEY)


def validate_entry(model: type, entry: Any, file: str, what: str = "entry") -> Any:
    """Validate one YAML mapping with a pydantic model; errors name file:line and the field."""
    from pydantic import ValidationError  # here: a cached load reads no YAML entry

    line = line_of(entry)
    if not isinstance(entry, dict):
        raise KnowledgeError(
            f"{what} must be a mapping, got {type(entry).__name__}", file=file, line=line
        )
    try:
        return model.model_validate(strip_lines(entry))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        # Point at the line of the nested mapping where possible.
        node: Any = entry
        for part in err["loc"]:
            if (
                isinstance(node, dict)
                and part in node
                or isinstance(node, list)
                and isinstance(part, int)
                and part < len(node)
            ):
                node = node[part]
                line = line_of(node) or line
            else:
                break
        ident = entry.get("id") or entry.get("name")
        label = f"{what} {ident!r}" if ident else what
        raise KnowledgeError(f"{label}: {loc}: {err['msg']}", file=file, line=line) from None
