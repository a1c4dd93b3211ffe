"""Host sets: Ansible inventories (INI and YAML) and plain host lists, and Ansible's host
patterns for `--limit`.

Why our own parser: stdlib configparser cannot read Ansible INI (host lines are not
`key=value`, `[group:children]`, ranges, `host:port`), and ansible-core is far too heavy to be a
runtime dependency of a CLI. The semantics follow Ansible's own `ini` and `yaml` inventory
plugins and its pattern rules, so an inventory a team already has works unchanged:

* every host is in `all`; a host in no group is also in `ungrouped`;
* variables: `all` < parent groups < child groups (by depth, then group name) < host vars;
* ranges `gpu[01:20]`, `gpu[1:20:2]`, `rack-[a:c]` expand in host names (zero padding kept);
* patterns: `all`/`*`, a group or host name, globs (`gpu*`), regexes (`~gpu0[1-3]`), `a:b` or
  `a,b` (union), `a:&b` (intersection), `a:!b` (exclusion), subscripts `group[0]`,
  `group[1:3]`; unions first, then intersections, then exclusions, whatever their order.

remedy departs from Ansible in one place: a `--limit` term that matches no host is an error,
not a warning — a typo must never silently shrink (or empty) a rollout.

Connection variables read: `ansible_host`, `ansible_port`, `ansible_user`,
`ansible_ssh_private_key_file`, `ansible_connection` (ssh or local), the known_hosts file in
`ansible_ssh_common_args`/`ansible_ssh_extra_args` (`-o UserKnownHostsFile=FILE`), and
`remedy_known_hosts` (a file or a list of files), which wins over both.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from remedy.errors import AtFileLine, InputError, KnowledgeError
from remedy.knowledge.yamlload import read_utf8
from remedy.textchars import CONTROLS


class InventoryError(AtFileLine, InputError):
    """A malformed inventory or a bad pattern; names the file and line where it can."""


# --------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------


@dataclass
class Group:
    name: str
    hosts: list[str] = field(default_factory=list)  # direct members, in inventory order
    children: list[str] = field(default_factory=list)
    parents: set[str] = field(default_factory=set)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Connection:
    """How to reach one host, from its variables (None: ssh_config / OpenSSH defaults)."""

    kind: str  # "ssh" | "local"
    address: str
    port: int | None = None
    user: str | None = None
    key_file: str | None = None
    known_hosts: tuple[str, ...] | None = None


@dataclass
class InventoryHost:
    name: str
    vars: dict[str, Any]  # effective: group vars by precedence, then the host's own
    groups: list[str]  # every group it is in, ancestors and `all` included
    line: int | None = None  # where it was first named

    @property
    def connection(self) -> Connection:
        return connection_of(self)


@dataclass
class Inventory:
    source: str
    groups: dict[str, Group]
    hosts: dict[str, InventoryHost]  # in inventory order

    def select(self, pattern: str | None) -> list[InventoryHost]:
        """The hosts a pattern names, in inventory order (Ansible's --limit semantics)."""
        if pattern is None or not pattern.strip():
            return list(self.hosts.values())
        names = evaluate_pattern(self, pattern)
        order = {n: i for i, n in enumerate(self.hosts)}
        return [self.hosts[n] for n in sorted(names, key=order.__getitem__)]

    def group_hosts(self, group: str) -> list[str]:
        """Hosts of a group and of its descendants, direct members first."""
        out: dict[str, None] = {}  # an ordered set: membership tests stay O(1)
        seen_groups: set[str] = set()

        def walk(g: str) -> None:
            if g in seen_groups:
                return
            seen_groups.add(g)
            out.update(dict.fromkeys(self.groups[g].hosts))
            for c in self.groups[g].children:
                walk(c)

        if group == "all":
            return list(self.hosts)
        walk(group)
        return list(out)


# --------------------------------------------------------------------------------------------
# building an inventory (shared by the formats)
# --------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.groups: dict[str, Group] = {"all": Group("all"), "ungrouped": Group("ungrouped")}
        self.groups["all"].children.append("ungrouped")
        self.groups["ungrouped"].parents.add("all")
        self.host_vars: dict[str, dict[str, Any]] = {}
        self.host_lines: dict[str, int | None] = {}
        self.members: dict[str, set[str]] = {}  # group -> its direct hosts (fast membership)

    def group(self, name: str, line: int | None) -> Group:
        if (
            not name
            or any(c.isspace() for c in name)
            or name.startswith(("&", "!", "~"))
            or CONTROLS.search(name)
        ):
            raise InventoryError(f"invalid group name {name!r}", file=self.source, line=line)
        g = self.groups.get(name)
        if g is None:
            g = self.groups[name] = Group(name)
        return g

    def add_host(self, group: str, host: str, hvars: dict[str, Any], line: int | None) -> None:
        if host not in self.host_vars:
            check_host_name(host, file=self.source, line=line)
        check_vars(hvars, file=self.source, line=line)
        if host not in self.host_vars and len(self.host_vars) >= MAX_HOSTS:
            raise InventoryError(
                f"more than {MAX_HOSTS:,} hosts: refused", file=self.source, line=line
            )
        if host not in self.host_vars:
            self.host_vars[host] = {}
            self.host_lines[host] = line
        self.host_vars[host].update(hvars)
        g = self.group(group, line)
        members = self.members.setdefault(group, set())
        if host not in members:
            members.add(host)
            g.hosts.append(host)

    def add_child(self, parent: str, child: str, line: int | None) -> None:
        if child == "all":
            raise InventoryError("`all` cannot be a child group", file=self.source, line=line)
        p, c = self.group(parent, line), self.group(child, line)
        if child not in p.children:
            p.children.append(child)
        c.parents.add(parent)
        if self._is_ancestor(child, parent):
            raise InventoryError(
                f"group {child!r} is its own ancestor (through {parent!r})",
                file=self.source,
                line=line,
            )

    def _is_ancestor(self, anc: str, g: str) -> bool:
        todo, seen = [g], set()
        while todo:
            x = todo.pop()
            if x == anc:
                return True
            if x in seen:
                continue
            seen.add(x)
            todo.extend(self.groups[x].parents)
        return False

    def build(self) -> Inventory:
        groups = self.groups
        # groups nobody adopted are children of `all`
        for name, g in groups.items():
            if name != "all" and not g.parents:
                g.parents.add("all")
                groups["all"].children.append(name)
        depth: dict[str, int] = {}

        def depth_of(name: str) -> int:
            if name not in depth:
                ps = groups[name].parents
                depth[name] = 0 if name == "all" else 1 + max(depth_of(p) for p in ps)
            return depth[name]

        direct: dict[str, list[str]] = {h: [] for h in self.host_vars}
        for name, g in groups.items():
            for h in g.hosts:
                direct[h].append(name)
        hosts: dict[str, InventoryHost] = {}
        ungrouped = dict.fromkeys(groups["ungrouped"].hosts)  # ordered set
        for h in self.host_vars:
            if not [g for g in direct[h] if g not in ("all", "ungrouped")]:
                ungrouped.setdefault(h)
                direct[h] = ["ungrouped"]
            elif h in ungrouped:
                del ungrouped[h]
                direct[h] = [g for g in direct[h] if g != "ungrouped"]
            mine: set[str] = set()
            todo = list(direct[h])
            while todo:
                g = todo.pop()
                if g not in mine:
                    mine.add(g)
                    todo.extend(groups[g].parents)
            mine.add("all")
            ordered = sorted(mine, key=lambda g: (depth_of(g), g))
            merged: dict[str, Any] = {}
            for g in ordered:
                merged.update(groups[g].vars)
            merged.update(self.host_vars[h])
            hosts[h] = InventoryHost(h, merged, ordered, self.host_lines[h])
        groups["ungrouped"].hosts = list(ungrouped)
        return Inventory(self.source, groups, hosts)


# --------------------------------------------------------------------------------------------
# host names: ranges and host:port
# --------------------------------------------------------------------------------------------

_RANGE = re.compile(r"\[([^\]]*)\]")


# An inventory's hosts, all ranges expanded: far above any fleet remedy drives (a range such
# as gpu[0:99999999999] would otherwise be built in memory before anything could refuse it).
MAX_HOSTS = 100_000


_DIGITS = re.compile(r"[0-9]+")


def expand_hosts(pattern: str, *, file: str | None = None, line: int | None = None) -> list[str]:
    """`gpu[01:03]` → gpu01 gpu02 gpu03; `[a:c]` letters; `[1:9:2]` a stride; several ranges
    multiply. Zero padding follows the start's width, as Ansible does."""
    m = _RANGE.search(pattern)
    if not m:
        if "[" in pattern or "]" in pattern:
            raise InventoryError(f"unbalanced brackets in host {pattern!r}", file=file, line=line)
        return [pattern]
    head, tail, spec = pattern[: m.start()], pattern[m.end() :], m.group(1)
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
        raise InventoryError(
            f"bad range [{spec}] in host {pattern!r}: use [START:END] or [START:END:STEP]",
            file=file,
            line=line,
        )
    beg, end = parts[0], parts[1]
    try:
        step = int(parts[2]) if len(parts) == 3 and parts[2] else 1
    except ValueError:
        raise InventoryError(f"bad range step in [{spec}]", file=file, line=line) from None
    if step < 1:
        raise InventoryError(f"bad range step in [{spec}]", file=file, line=line)
    if _DIGITS.fullmatch(beg) and _DIGITS.fullmatch(end):  # ASCII: `²`.isdigit() is True
        width = len(beg) if beg.startswith("0") and len(beg) > 1 else 0
        lo, hi = int(beg), int(end)
        # counted before anything is built, in Python ints (len(range) overflows ssize_t)
        if max(0, (hi - lo) // step + 1) > MAX_HOSTS:
            raise InventoryError(
                f"range [{spec}] in host {pattern!r} has more than {MAX_HOSTS:,} hosts: refused",
                file=file,
                line=line,
            )
        items = [str(i).zfill(width) for i in range(lo, hi + 1, step)]
    elif len(beg) == 1 and len(end) == 1 and beg.isalpha() and end.isalpha():
        items = [chr(c) for c in range(ord(beg), ord(end) + 1, step)]
    else:
        raise InventoryError(
            f"bad range [{spec}] in host {pattern!r}: both ends numbers, or both one letter",
            file=file,
            line=line,
        )
    if not items:
        raise InventoryError(f"empty range [{spec}] in host {pattern!r}", file=file, line=line)
    rests = expand_hosts(tail, file=file, line=line)
    if len(items) * len(rests) > MAX_HOSTS:
        raise InventoryError(
            f"host {pattern!r} expands to more than {MAX_HOSTS:,} hosts: refused",
            file=file,
            line=line,
        )
    return [head + item + rest for item in items for rest in rests]


def check_host_name(name: str, *, file: str | None = None, line: int | None = None) -> None:
    """A host name with a control, an invisible character or a blank is refused: it is
    printed in every table, progress line and error (an escape sequence in it would drive
    the operator's terminal) and handed to SSH as the address."""
    if not name or CONTROLS.search(name) or any(c.isspace() for c in name):
        raise InventoryError(
            f"invalid host name {name!r}: control, invisible or blank characters",
            file=file,
            line=line,
        )


_PORT_VARS = ("ansible_port", "ansible_ssh_port")
_TEXT_VARS = ("ansible_host", "ansible_ssh_host", "ansible_user", "ansible_ssh_user")


def check_vars(hvars: dict[str, Any], *, file: str | None = None, line: int | None = None) -> None:
    """Connection variables checked where they are written, so the error names the file and
    line: a port is a whole number 1-65535 (0, true, 22.5 were taken: 0 as "no port", true
    as port 1, 22.5 as 22), an address or user holds no control character."""
    for k in _PORT_VARS:
        if k not in hvars:
            continue
        v = hvars[k]
        ok = (type(v) is int and 0 < v < 65536) or (
            isinstance(v, str) and _DIGITS.fullmatch(v) is not None and 0 < int(v) < 65536
        )
        if not ok:
            raise InventoryError(
                f"{k} must be a whole number from 1 to 65535, got {repr(v)[:40]}",
                file=file,
                line=line,
            )
    for k in _TEXT_VARS:
        v = hvars.get(k)
        if isinstance(v, str) and (CONTROLS.search(v) or "\n" in v or "\t" in v):
            raise InventoryError(
                f"{k} holds a control or invisible character: {v[:60]!r}", file=file, line=line
            )


def _split_port(token: str) -> tuple[str, int | None]:
    """`host:port` (one colon, numeric port); anything else is a name (IPv6 included)."""
    if token.count(":") == 1 and not token.startswith("["):
        host, port = token.split(":")
        if _DIGITS.fullmatch(port):
            return host, int(port)
    m = re.fullmatch(r"\[([^\]]+)\]:(\d+)", token)
    if m and ":" in m.group(1):
        return m.group(1), int(m.group(2))
    return token, None


def _value(text: str) -> Any:
    """Ansible's INI values: Python literals where they parse (ports, booleans), else text."""
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return v if isinstance(v, (str, int, float, bool, list, dict, tuple)) else text


# --------------------------------------------------------------------------------------------
# INI
# --------------------------------------------------------------------------------------------

_SECTION = re.compile(r"^\[([^\]:\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$")


def parse_ini(text: str, source: str = "<inventory>") -> Inventory:
    b = _Builder(source)
    group, kind = "ungrouped", "hosts"
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            m = _SECTION.match(line)
            if not m:
                raise InventoryError(f"bad section header {line!r}", file=source, line=n)
            group, kind = m.group(1), m.group(2) or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raise InventoryError(
                    f"unknown section kind {kind!r}: use [{group}], [{group}:vars] or "
                    f"[{group}:children]",
                    file=source,
                    line=n,
                )
            b.group(group, n)
            continue
        if kind == "vars":
            k, eq, v = line.partition("=")
            if not eq or not k.strip():
                raise InventoryError(
                    f"expected NAME=VALUE in [{group}:vars], got {line!r}", file=source, line=n
                )
            try:
                words = shlex.split(v.strip(), comments=True)
            except ValueError as exc:
                raise InventoryError(f"{exc} in {line!r}", file=source, line=n) from None
            value = _value(" ".join(words)) if words else ""
            check_vars({k.strip(): value}, file=source, line=n)
            b.groups[group].vars[k.strip()] = value
            continue
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as exc:
            raise InventoryError(f"{exc} in {line!r}", file=source, line=n) from None
        if kind == "children":
            if len(tokens) != 1:
                raise InventoryError(
                    f"one group name per line in [{group}:children], got {line!r}",
                    file=source,
                    line=n,
                )
            b.add_child(group, tokens[0], n)
            continue
        name, *assigns = tokens
        if "=" in name:
            raise InventoryError(
                f"a host line starts with the host, got {name!r}", file=source, line=n
            )
        hvars: dict[str, Any] = {}
        for a in assigns:
            k, eq, v = a.partition("=")
            if not eq or not k:
                raise InventoryError(
                    f"expected NAME=VALUE host variable after {name!r}, got {a!r}",
                    file=source,
                    line=n,
                )
            hvars[k] = _value(v)
        host, port = _split_port(name)
        if port is not None:
            hvars.setdefault("ansible_port", port)
        for h in expand_hosts(host, file=source, line=n):
            b.add_host(group, h, dict(hvars), n)
    return b.build()


# --------------------------------------------------------------------------------------------
# plain list: one `[user@]host[:port]` a line
# --------------------------------------------------------------------------------------------


def parse_plain(text: str, source: str = "<inventory>") -> Inventory:
    b = _Builder(source)
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if len(line.split()) != 1:
            raise InventoryError(f"one host per line, got {line!r}", file=source, line=n)
        hvars: dict[str, Any] = {}
        if "@" in line:
            user, line = line.rsplit("@", 1)
            if not user:
                raise InventoryError(f"empty user in {raw.strip()!r}", file=source, line=n)
            hvars["ansible_user"] = user
        host, port = _split_port(line)
        if port is not None:
            hvars["ansible_port"] = port
        if not host:
            raise InventoryError(f"no host in {raw.strip()!r}", file=source, line=n)
        for h in expand_hosts(host, file=source, line=n):
            b.add_host("ungrouped", h, dict(hvars), n)
    return b.build()


# --------------------------------------------------------------------------------------------
# YAML
# --------------------------------------------------------------------------------------------


class YamlGroup(BaseModel):
    """One group of Ansible's YAML inventory (every key optional; nothing else allowed)."""

    model_config = ConfigDict(extra="forbid")

    hosts: dict[str, dict[str, Any] | None] | None = None
    vars: dict[str, Any] | None = None
    children: dict[str, YamlGroup | None] | None = None


class YamlInventory(BaseModel):
    groups: dict[str, YamlGroup | None]


def parse_yaml(text: str, source: str = "<inventory>") -> Inventory:
    from remedy.knowledge.yamlload import load_yaml_text, strip_lines

    try:
        raw = load_yaml_text(text, source)
    except KnowledgeError as exc:
        prefix = f"{source}:{exc.line}: " if exc.line else f"{source}: "
        msg = exc.message[len(prefix) :] if exc.message.startswith(prefix) else exc.message
        raise InventoryError(msg, file=source, line=exc.line) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InventoryError(
            f"a YAML inventory is a mapping of groups (all: ...), got {type(raw).__name__}",
            file=source,
            line=1,
        )
    try:
        model = YamlInventory.model_validate({"groups": strip_lines(raw)})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [p for p in err["loc"][1:]]
        line = _line_at(raw, loc)
        where = ".".join(str(p) for p in loc if not _is_type_label(p))
        raise InventoryError(f"{where}: {err['msg']}", file=source, line=line) from None
    b = _Builder(source)

    def walk(name: str, g: YamlGroup | None, node: Any, line: int | None) -> None:
        b.group(name, line)
        if g is None:
            return
        if g.vars:
            vars_node = node.get("vars") if isinstance(node, dict) else None
            for k, v in g.vars.items():
                check_vars({k: v}, file=source, line=_key_line(vars_node, k) or line)
            b.groups[name].vars.update(g.vars)
        hosts_node = node.get("hosts") if isinstance(node, dict) else None
        for pattern, hv in (g.hosts or {}).items():
            hline = _key_line(hosts_node, pattern) or line
            hvars = dict(hv or {})
            hnode = hosts_node.get(pattern) if isinstance(hosts_node, dict) else None
            for k, v in hvars.items():  # each variable at its own line
                check_vars({k: v}, file=source, line=_key_line(hnode, k) or hline)
            host, port = _split_port(str(pattern))
            if port is not None:
                hvars.setdefault("ansible_port", port)
            for h in expand_hosts(host, file=source, line=hline):
                b.add_host(name, h, dict(hvars), hline)
        kids_node = node.get("children") if isinstance(node, dict) else None
        for child, cg in (g.children or {}).items():
            cline = _key_line(kids_node, child) or line
            b.add_child(name, child, cline)
            walk(child, cg, kids_node.get(child) if isinstance(kids_node, dict) else None, cline)

    for name, g in model.groups.items():
        walk(name, g, raw.get(name), _key_line(raw, name))
    return b.build()


def _is_type_label(p: Any) -> bool:
    # pydantic names the branch of a union in the loc (e.g. "YamlGroup", "dict[str,any]")
    return isinstance(p, str) and (p == "YamlGroup" or "[" in p or p in ("none", "str", "int"))


def _key_line(node: Any, key: str) -> int | None:
    from remedy.knowledge.yamlload import line_of

    return line_of(node, key) if isinstance(node, dict) else None


def _line_at(raw: Any, loc: list[Any]) -> int | None:
    """The line of the deepest mapping key along a pydantic error location."""
    from remedy.knowledge.yamlload import line_of

    node, line = raw, line_of(raw)
    for part in loc:
        if isinstance(node, dict) and part in node:
            line = line_of(node, part) or line
            node = node[part]
        elif not _is_type_label(part):
            if isinstance(node, dict) and isinstance(part, str):
                line = line_of(node, part) or line_of(node) or line
            break
    return line


# --------------------------------------------------------------------------------------------
# loading a file
# --------------------------------------------------------------------------------------------


def detect_format(text: str, path: str = "") -> str:
    """yaml | ini | plain: by extension first, then by content (as Ansible tries plugins)."""
    low = path.lower()
    if low.endswith((".yml", ".yaml", ".json")):
        return "yaml"
    meaningful = [
        ln.strip()
        for ln in text.splitlines()
        if ln.strip() and not ln.strip().startswith(("#", ";", "---"))
    ]
    if not meaningful:
        return "plain"
    if re.match(r"^[^\s\[\]=]+:\s*(#.*)?$", meaningful[0]) or meaningful[0].startswith("{"):
        return "yaml"
    if any(ln.startswith("[") or "=" in ln for ln in meaningful):
        return "ini"
    if all(len(ln.split("#", 1)[0].split()) == 1 for ln in meaningful):
        return "plain"
    return "ini"


def parse_inventory(text: str, source: str = "<inventory>", fmt: str | None = None) -> Inventory:
    fmt = fmt or detect_format(text, source)
    if fmt == "yaml":
        return parse_yaml(text, source)
    if fmt == "plain":
        return parse_plain(text, source)
    return parse_ini(text, source)


def load_inventory(path: str | Path) -> Inventory:
    p = Path(path)
    text = read_utf8(p, InventoryError, "the inventory")
    # a UTF-8 byte-order mark (Notepad, PowerShell's Out-File) became part of the first host
    # or section name: `\ufeff[gpu]` was read as a host with a bad range
    inv = parse_inventory(text.removeprefix("\ufeff"), str(p))
    if not inv.hosts:
        raise InventoryError("the inventory names no host", file=str(p))
    return inv


# --------------------------------------------------------------------------------------------
# connection variables
# --------------------------------------------------------------------------------------------


def _ssh_options(args: str) -> dict[str, str]:
    """`-o Key=Value` / `-oKey=Value` / `-o Key Value` / `-i FILE` / `-p PORT` / `-l USER` from
    ansible_ssh_common_args or ansible_ssh_extra_args, keys lower-cased."""
    out: dict[str, str] = {}
    try:
        words = shlex.split(args)
    except ValueError:
        return out
    i = 0
    while i < len(words):
        w = words[i]
        arg = None
        if w in ("-o", "-i", "-p", "-l") and i + 1 < len(words):
            arg, i = words[i + 1], i + 1
        elif w.startswith(("-o", "-i", "-p", "-l")) and len(w) > 2:
            arg = w[2:]
        flag = w[:2]
        if arg is not None:
            if flag == "-o":
                k, _, v = arg.replace("=", " ", 1).partition(" ")
                out[k.strip().lower()] = v.strip()
            else:
                out[{"-i": "identityfile", "-p": "port", "-l": "user"}[flag]] = arg
        i += 1
    return out


def connection_of(host: InventoryHost) -> Connection:
    v = host.vars

    def first(*keys: str) -> Any:
        for k in keys:
            if v.get(k) not in (None, ""):
                return v[k]
        return None

    kind = str(first("ansible_connection") or "ssh")
    if kind in ("smart", "paramiko", "ssh"):
        kind = "ssh"
    elif kind != "local":
        raise InventoryError(
            f"host {host.name}: ansible_connection={kind} is not supported (ssh or local)"
        )
    opts: dict[str, str] = {}
    for k in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        if isinstance(v.get(k), str):
            opts.update(_ssh_options(v[k]))
    port_v = first("ansible_port", "ansible_ssh_port")
    if port_v is None:
        port_v = opts.get("port")
    port: int | None = None
    if port_v is not None:
        if isinstance(port_v, bool) or (isinstance(port_v, float) and not port_v.is_integer()):
            raise InventoryError(
                f"host {host.name}: ansible_port must be a whole number, got {port_v!r}"
            )
        try:
            port = int(port_v)
        except (TypeError, ValueError, OverflowError):  # OverflowError: 1e309, .inf
            raise InventoryError(
                f"host {host.name}: ansible_port must be a number, got {port_v!r}"
            ) from None
        if not 0 < port < 65536:
            raise InventoryError(f"host {host.name}: ansible_port {port} is out of range")
    known = first("remedy_known_hosts")
    known_files: tuple[str, ...] | None = None
    if isinstance(known, (list, tuple)):
        known_files = tuple(str(x) for x in known)
    elif known is not None:
        known_files = (str(known),)
    elif "userknownhostsfile" in opts:
        known_files = tuple(opts["userknownhostsfile"].split())
    key = first("ansible_ssh_private_key_file", "ansible_private_key_file") or opts.get(
        "identityfile"
    )
    user = first("ansible_user", "ansible_ssh_user") or opts.get("user")
    address = str(first("ansible_host", "ansible_ssh_host") or host.name)
    return Connection(
        kind=kind,
        address=address,
        port=port,
        user=str(user) if user is not None else None,
        key_file=str(key) if key is not None else None,
        known_hosts=known_files,
    )


# --------------------------------------------------------------------------------------------
# patterns
# --------------------------------------------------------------------------------------------

_TERMS = re.compile(r"(?:[^\s:\[\]]|\[[^\]]*\])+")
_SUBSCRIPT = re.compile(r"^(.+)\[(?:(-?\d+)|(-?\d*):(-?\d*))\]$")


def split_pattern(pattern: str) -> list[str]:
    """Ansible's split: on commas if there are any, else on colons outside brackets.

    A bracket left unpaired is refused: the colon split skipped what it could not read, so
    `gpu[0` became the terms `gpu` and `0`, and `~gpu[` the regex `gpu` (every gpu host)."""
    if "," in pattern:
        parts = pattern.split(",")
        for p in parts:  # a regex term keeps its own syntax (re.compile's error names it)
            if not p.strip().startswith("~") and _unpaired(p):
                _bad_brackets(pattern, p)
    else:
        parts = _TERMS.findall(pattern)
        if _TERMS.sub("", pattern).strip(": \t"):
            _bad_brackets(pattern, _TERMS.sub("", pattern))
    return [p.strip() for p in parts if p.strip()]


def _unpaired(text: str) -> bool:
    """Whether text has a '[' without its ']' or a ']' without its '[' (no nesting)."""
    depth = 0
    for c in text:
        depth += (c == "[") - (c == "]")
        if depth not in (0, 1):
            return True
    return depth != 0


def _bad_brackets(pattern: str, where: str) -> None:
    raise InventoryError(
        f"--limit {pattern!r}: unpaired '[' or ']' in {where.strip()!r}",
        hint="a subscript is NAME[N] or NAME[START:END] (a host range such as gpu[01:08] "
        "belongs in the inventory)",
    )


def evaluate_pattern(inv: Inventory, pattern: str) -> list[str]:
    terms = split_pattern(pattern)
    if not terms:
        raise InventoryError(f"empty host pattern {pattern!r}")
    plain = [t for t in terms if t[0] not in "&!"]
    inter = [t[1:] for t in terms if t[0] == "&"]
    excl = [t[1:] for t in terms if t[0] == "!"]
    if not plain:
        plain = ["all"]
    chosen: dict[str, None] = {}  # an ordered set
    for t in plain:
        found = _match_term(inv, t)
        if not found:
            raise InventoryError(
                f"--limit term {t!r} matches no host or group of {inv.source}",
                hint="groups: " + ", ".join(sorted(g for g in inv.groups if g != "ungrouped")),
            )
        chosen.update(dict.fromkeys(found))
    hosts = list(chosen)
    for t in inter:
        keep = set(_match_term(inv, t))
        hosts = [h for h in hosts if h in keep]
    for t in excl:
        drop = set(_match_term(inv, t))
        hosts = [h for h in hosts if h not in drop]
    if not hosts:
        raise InventoryError(f"--limit {pattern!r} leaves no host")
    return hosts


def _match_term(inv: Inventory, term: str) -> list[str]:
    if not term:
        raise InventoryError("empty term in host pattern")
    m = _SUBSCRIPT.match(term)
    if m and not term.startswith("~"):
        base = _match_term(inv, m.group(1))
        if m.group(2) is not None:
            i = int(m.group(2))
            return [base[i]] if -len(base) <= i < len(base) else []
        lo = int(m.group(3)) if m.group(3) else 0
        hi = int(m.group(4)) if m.group(4) else len(base) - 1
        return base[lo : hi + 1]  # Ansible's slices include the end
    if term in ("all", "*"):
        return list(inv.hosts)
    if term.startswith("~"):
        try:
            rx = re.compile(term[1:])
        except re.error as exc:
            raise InventoryError(f"bad regular expression in pattern {term!r}: {exc}") from None

        def match(name: str) -> bool:
            return rx.search(name) is not None
    else:

        def match(name: str) -> bool:
            return fnmatch.fnmatchcase(name, term)

    out: dict[str, None] = {}  # an ordered set
    groups = [g for g in inv.groups if match(g)]
    for g in groups:
        out.update(dict.fromkeys(inv.group_hosts(g)))
    if not groups or term.startswith("~") or any(c in term for c in ".?*["):
        out.update(dict.fromkeys(h for h in inv.hosts if match(h)))
    return list(out)
