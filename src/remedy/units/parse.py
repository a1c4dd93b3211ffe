"""systemd unit files as PID 1 reads them: sections, drop-ins, Environment=, EnvironmentFile=.

Why remedy parses units itself: the environment a server runs under decides which nvcc each JIT
consumer picks, and `systemctl show` is only available where systemd runs and only shows
Environment= (not EnvironmentFile= values, not UnsetEnvironment=). To preview a drop-in before
writing it, remedy must compute the result of unit + drop-ins + env files on its own, exactly as
systemd 252 would. The line reader, the drop-in order and each setting's parser are ports of
src/shared/conf-parser.c, src/shared/dropin.c, src/core/load-fragment.c and src/basic/env-file.c;
tests compare the result with a real systemd (tests/test_units_systemd.py).

Main entry points: `parse_unit()` (files -> UnitConfig) and `load_unit()` (UnitFiles, with
EnvironmentFile contents -> Unit with `environment` and `effective_environment`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from remedy.errors import InputError
from remedy.resolve import SYSTEMD_DEFAULT_PATH
from remedy.units._keys import KNOWN_KEYS
from remedy.units.specifiers import (
    HostContext,
    SpecifierError,
    expand,
    template_name,
    unit_instance,
    unit_prefix,
    unit_type,
)
from remedy.units.syntax import (
    COMMENTS,
    LONG_LINE_MAX,
    WHITESPACE,
    WordError,
    env_assignment_is_valid,
    env_name_is_valid,
    extract_first_word,
    split_lines,
    utf8_decode,
)

# `systemd-analyze unit-paths` for the system manager of systemd 252 on Debian, highest
# priority first. A drop-in in an earlier directory hides one of the same name in a later one.
SYSTEM_UNIT_PATH: tuple[str, ...] = (
    "/etc/systemd/system.control",
    "/run/systemd/system.control",
    "/run/systemd/transient",
    "/run/systemd/generator.early",
    "/etc/systemd/system",
    "/etc/systemd/system.attached",
    "/run/systemd/system",
    "/run/systemd/system.attached",
    "/run/systemd/generator",
    "/usr/local/lib/systemd/system",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/run/systemd/generator.late",
)
SECTIONS = ("Unit", "Service", "Install")
_BOM = b"\xef\xbb\xbf"
_GLOB = re.compile(r"[*?\[]")

Severity = Literal["error", "ignored", "warning"]


@dataclass(frozen=True)
class SourceFile:
    """One file as read from a host: its path there and its bytes."""

    path: str
    data: bytes


class Diagnostic(BaseModel):
    """A message systemd would log while loading the unit, with the file and line.

    severity: "error" -> systemd refuses to load the unit; "ignored" -> systemd drops the line
    or a word of it (the unit does not do what the file says); "warning" -> harmless (an
    unknown key or section, which systemd also only warns about).
    """

    file: str
    line: int
    message: str
    severity: Severity = "warning"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class Origin(BaseModel):
    """Where a variable's value comes from."""

    kind: Literal["Environment", "EnvironmentFile", "UnsetEnvironment"]
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.kind}= at {self.file}:{self.line}"


class EnvironmentFileRef(BaseModel):
    """One EnvironmentFile= setting: the path after specifiers, `-` = missing is fine."""

    path: str
    optional: bool
    file: str = ""  # where it was set; empty when read from `systemctl show`
    line: int = 0


class ExecCommand(BaseModel):
    """One command of ExecStart=: prefixes decoded, specifiers expanded."""

    path: str
    argv: list[str]
    ignore_failure: bool = False  # "-"
    separate_argv0: bool = False  # "@"
    no_env_expand: bool = False  # ":"
    privileged: bool = False  # "+"
    no_setuid: bool = False  # "!" / "!!"
    file: str = ""
    line: int = 0


class Launch(BaseModel):
    """What an SGLang ExecStart runs: `python -m sglang.launch_server --flag value …`."""

    module: str
    flags: dict[str, str | bool] = Field(default_factory=dict)


class UnitConfig(BaseModel):
    """The parsed unit: what systemd keeps after reading the unit file and its drop-ins."""

    name: str
    fragment_path: str | None = None
    dropin_paths: list[str] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)  # = systemctl show -p Environment
    environment_origins: dict[str, Origin] = Field(default_factory=dict)
    environment_files: list[EnvironmentFileRef] = Field(default_factory=list)
    unset_environment: list[str] = Field(default_factory=list)
    unset_origins: dict[str, Origin] = Field(default_factory=dict)
    pass_environment: list[str] = Field(default_factory=list)
    exec_start: list[ExecCommand] = Field(default_factory=list)
    settings: dict[str, dict[str, list[str]]] = Field(default_factory=dict)  # raw, for reports
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    unresolved_specifiers: list[str] = Field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


class LoadedEnvironmentFile(BaseModel):
    """An EnvironmentFile= after reading it on the host (globs expanded)."""

    pattern: str
    optional: bool
    paths: list[str] = Field(default_factory=list)  # the files it matched, in glob order
    missing: bool = False
    values: dict[str, str] = Field(default_factory=dict)


class Unit(UnitConfig):
    """A unit with its EnvironmentFiles read: what the service process gets."""

    effective_environment: dict[str, str] = Field(default_factory=dict)
    effective_origins: dict[str, Origin] = Field(default_factory=dict)
    removed_by_unset: dict[str, Origin] = Field(default_factory=dict)  # set, then unset
    loaded_environment_files: list[LoadedEnvironmentFile] = Field(default_factory=list)
    python: str | None = None  # venv prefix of the ExecStart interpreter
    launch: Launch | None = None

    def process_environment(self, manager: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment the main process starts with (execute.c exec_child()).

        manager: the system manager's own environment (`systemctl show-environment`); by
        default just systemd's PATH. Order: manager, PassEnvironment=, Environment=,
        EnvironmentFile=, then UnsetEnvironment= removes. User=/HOME=-style variables that
        systemd adds itself (INVOCATION_ID, JOURNAL_STREAM, …) are not included.
        """
        base = dict(manager) if manager is not None else {"PATH": SYSTEMD_DEFAULT_PATH}
        env: dict[str, str] = dict(base)
        for name in self.pass_environment:
            if name in base:
                env[name] = base[name]
        env.update(self.environment)
        for f in self.loaded_environment_files:
            env.update(f.values)
        return _apply_unset(env, self.unset_environment)


@dataclass
class UnitFiles:
    """Everything systemd reads for one unit; built by units.host.read_unit() or by tests.

    dropins are in the order systemd applies them (see order_dropins()). env_files maps every
    EnvironmentFile path that was looked at to its bytes, None when it does not exist;
    env_globs maps a glob pattern to the paths it matched (sorted as glob(3) does).
    """

    name: str
    fragment: SourceFile | None
    dropins: list[SourceFile] = field(default_factory=list)
    env_files: dict[str, bytes | None] = field(default_factory=dict)
    env_globs: dict[str, list[str]] = field(default_factory=dict)
    host: HostContext | None = None
    live: dict[str, str] | None = None  # `systemctl show` properties where systemd runs
    executables: set[str] | None = None  # ExecStart paths found executable on the host


# --------------------------------------------------------------------------------------------
# Drop-in directories and their order (src/shared/dropin.c)
# --------------------------------------------------------------------------------------------


def _name_dirs(path: str, name: str, out: list[str]) -> None:
    """dropin.c unit_file_find_dirs(): name.d, the template's, then each `-` prefix's."""
    out.append(f"{path}/{name}.d")
    inst = unit_instance(name)
    if inst:
        tmpl = template_name(name)
        if tmpl:
            _name_dirs(path, tmpl, out)
    utype = unit_type(name)
    if utype is None:  # a top-level "service" drop-in name
        return
    prefix = unit_prefix(name)
    chopped = False
    while True:
        dash = prefix.rfind("-")
        if dash <= 0:
            return
        if dash + 1 < len(prefix) or chopped:
            prefix = prefix[: dash + 1]
            break
        prefix = prefix[:dash]
        chopped = True
    built = prefix + (f"@{inst}" if inst else "") + "." + utype
    _name_dirs(path, built, out)


def dropin_dirs(
    name: str,
    unit_path: Sequence[str] = SYSTEM_UNIT_PATH,
    aliases: Sequence[str] = (),
) -> list[str]:
    """Every drop-in directory systemd searches for `name`, highest priority first.

    For each unit directory: `<name>.d`, the template's (`foo@.service.d`), the `-` prefixes'
    (`foo-.service.d`); then the same for aliases; then the unit type's (`service.d`).
    """
    dirs: list[str] = []
    for p in unit_path:
        _name_dirs(p, name, dirs)
    for alias in aliases:
        for p in unit_path:
            _name_dirs(p, alias, dirs)
    utype = unit_type(name)
    if utype:
        for p in unit_path:
            dirs.append(f"{p}/{utype}.d")
    seen: set[str] = set()
    return [d for d in dirs if not (d in seen or seen.add(d))]


def order_dropins(
    files: Iterable[str],
    name: str,
    unit_path: Sequence[str] = SYSTEM_UNIT_PATH,
    aliases: Sequence[str] = (),
    realpaths: Mapping[str, str] | None = None,
) -> list[str]:
    """The drop-ins systemd applies, in its order, from the `.conf` files that exist.

    conf-files.c: for each file name the copy in the highest-priority directory wins (an
    /etc file hides the /usr/lib one of the same name); then all are sorted by file name,
    whatever directory they come from. realpaths maps a drop-in directory to its canonical
    path (systemd resolves symlinks such as /lib -> /usr/lib first); files are then expected
    under the canonical directories.
    """
    rank: dict[str, int] = {}
    for i, d in enumerate(dropin_dirs(name, unit_path, aliases)):
        rank.setdefault((realpaths or {}).get(d, d), i)
    best: dict[str, tuple[int, str]] = {}
    for f in files:
        d, base = posixpath.split(f)
        if d not in rank or not base.endswith(".conf"):
            continue
        if base not in best or rank[d] < best[base][0]:
            best[base] = (rank[d], f)
    return [best[b][1] for b in sorted(best, key=lambda s: s.encode("utf-8", "surrogateescape"))]


def unit_file_candidates(name: str, unit_path: Sequence[str] = SYSTEM_UNIT_PATH) -> list[str]:
    """Where the unit file itself may be, highest priority first (the template's last)."""
    names = [name]
    tmpl = template_name(name)
    if tmpl:
        names.append(tmpl)
    return [f"{p}/{n}" for n in names for p in unit_path]


# --------------------------------------------------------------------------------------------
# The line reader (src/shared/conf-parser.c config_parse, parse_line)
# --------------------------------------------------------------------------------------------


@dataclass
class _Line:
    file: str
    line: int
    section: str
    key: str
    value: str


def _logical_lines(src: SourceFile, diags: list[Diagnostic]) -> list[_Line]:
    """Assignments of one file, with continuation lines joined and sections tracked."""
    out: list[_Line] = []
    section: str | None = None
    section_ignored = False
    continuation: bytes | None = None
    bom_seen = False
    lineno = 0

    def fatal(msg: str) -> None:
        diags.append(Diagnostic(file=src.path, line=lineno, message=msg, severity="error"))
        raise _Fatal

    def parse_line(raw: bytes) -> None:
        nonlocal section, section_ignored
        stripped = raw.strip(WHITESPACE.encode())
        if not stripped:
            return
        text = utf8_decode(stripped)
        if text is None:
            shown = stripped.decode("utf-8", "replace")
            fatal(f"String is not UTF-8 clean, ignoring assignment: {shown}")
            return
        if text.startswith("["):
            if not text.endswith("]"):
                fatal(f"Invalid section header '{text}'")
            n = text[1:-1]
            if any(ord(c) < 32 or c in "\"'\\\x7f" for c in n):
                fatal(f"Bad characters in section header '{text}'")
            if n in SECTIONS:
                section, section_ignored = n, False
            else:
                if not n.startswith("X-"):
                    diags.append(
                        Diagnostic(
                            file=src.path, line=lineno, message=f"Unknown section '{n}'. Ignoring."
                        )
                    )
                section, section_ignored = None, True
            return
        if section is None:
            if not section_ignored:
                diags.append(
                    Diagnostic(
                        file=src.path,
                        line=lineno,
                        message="Assignment outside of section. Ignoring.",
                        severity="ignored",
                    )
                )
            return
        eq = text.find("=")
        if eq < 0:
            diags.append(
                Diagnostic(
                    file=src.path,
                    line=lineno,
                    message="Missing '=', ignoring line.",
                    severity="ignored",
                )
            )
            return
        if eq == 0:
            diags.append(
                Diagnostic(
                    file=src.path,
                    line=lineno,
                    message="Missing key name before '=', ignoring line.",
                    severity="ignored",
                )
            )
            return
        key = text[:eq].strip(WHITESPACE)
        value = text[eq + 1 :].strip(WHITESPACE)
        if key not in KNOWN_KEYS[section]:
            if not key.startswith("X-"):
                diags.append(
                    Diagnostic(
                        file=src.path,
                        line=lineno,
                        message=f"Unknown key '{key}' in section [{section}], ignoring.",
                    )
                )
            return
        out.append(_Line(src.path, lineno, section, key, value))

    try:
        for buf in split_lines(src.data):
            lineno += 1
            if len(buf) > LONG_LINE_MAX:
                fatal("Line too long")
            lead = buf.lstrip(WHITESPACE.encode())
            if lead and lead[:1] in (b"#", b";"):
                continue
            line = buf
            if not bom_seen and line.startswith(_BOM):
                line = line[len(_BOM) :]
                bom_seen = True
            if continuation is not None:
                if len(continuation) + len(line) > LONG_LINE_MAX:
                    fatal("Continuation line too long")
                p = continuation + line
            else:
                p = line
            escaped = False
            for ch in p:
                escaped = False if escaped else ch == 0x5C
            if escaped:
                continuation = p[:-1] + b" "
                continue
            parse_line(p)
            continuation = None
        if continuation is not None:
            lineno += 1
            parse_line(continuation)
    except _Fatal:
        pass
    return out


class _Fatal(Exception):
    pass


assert COMMENTS == "#;"  # the comment test above inlines these two characters


# --------------------------------------------------------------------------------------------
# Settings (src/core/load-fragment.c)
# --------------------------------------------------------------------------------------------


class _State:
    def __init__(self, name: str, fragment_path: str | None, host: HostContext | None) -> None:
        self.name = name
        self.fragment_path = fragment_path
        self.host = host
        self.cfg = UnitConfig(name=name, fragment_path=fragment_path)

    def warn(self, ln: _Line, msg: str, severity: Severity = "ignored") -> None:
        self.cfg.diagnostics.append(
            Diagnostic(file=ln.file, line=ln.line, message=msg, severity=severity)
        )

    def expand(self, word: bytes) -> bytes:
        return expand(
            word,
            self.name,
            fragment_path=self.fragment_path,
            host=self.host,
            unresolved=self.cfg.unresolved_specifiers,
        )


def _shown(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _expanded_words(
    st: _State, ln: _Line, bad_word: str, specifiers: str
) -> Iterator[tuple[bytes, bytes]]:
    """The words of a list setting, each with its specifiers expanded, as the loops of the
    config_parse_*environ() functions read them: a word whose specifiers fail is warned about and
    skipped; a bad word (unbalanced quotes, unknown escape) is warned about (`bad_word`) and ends
    the line. `specifiers` is what the skip warning calls them ("specifiers", "unit specifiers")."""
    pos: int | None = 0
    while True:
        try:
            word, pos = extract_first_word(ln.value, pos)
        except WordError:
            st.warn(ln, bad_word)
            return
        if word is None:
            return
        try:
            resolved = st.expand(word)
        except SpecifierError as e:
            st.warn(ln, f"Failed to resolve {specifiers} in {_shown(word)}, ignoring: {e}")
            continue
        yield word, resolved


def _environ(st: _State, ln: _Line) -> None:
    """config_parse_environ(): words; an empty value resets; a bad word ends the line."""
    cfg = st.cfg
    if not ln.value:
        cfg.environment.clear()
        cfg.environment_origins.clear()
        return
    for _, resolved in _expanded_words(
        st, ln, f"Invalid syntax, ignoring: {ln.value}", "specifiers"
    ):
        text = utf8_decode(resolved)
        if text is None or not env_assignment_is_valid(text):
            st.warn(ln, f"Invalid environment assignment, ignoring: {_shown(resolved)}")
            continue
        k, _, v = text.partition("=")
        cfg.environment[k] = v
        cfg.environment_origins[k] = Origin(kind="Environment", file=ln.file, line=ln.line)


def _unset_environ(st: _State, ln: _Line) -> None:
    """config_parse_unset_environ(): names or NAME=VALUE; a bad word ends the line."""
    cfg = st.cfg
    if not ln.value:
        cfg.unset_environment.clear()
        cfg.unset_origins.clear()
        return
    words: list[str] = []
    for _, resolved in _expanded_words(
        st, ln, f"Trailing garbage in {ln.key}, ignoring: {ln.value}", "unit specifiers"
    ):
        text = utf8_decode(resolved)
        if text is None or not (env_assignment_is_valid(text) or env_name_is_valid(text)):
            st.warn(
                ln, f"Invalid environment name or assignment {ln.key}, ignoring: {_shown(resolved)}"
            )
            continue
        words.append(text)
    for w in words:
        if w not in cfg.unset_environment:
            cfg.unset_environment.append(w)
            cfg.unset_origins[w] = Origin(kind="UnsetEnvironment", file=ln.file, line=ln.line)


def _pass_environ(st: _State, ln: _Line) -> None:
    """config_parse_pass_environ(): names imported from the manager's environment."""
    if not ln.value:
        st.cfg.pass_environment.clear()
        return
    for word, resolved in _expanded_words(
        st, ln, f"Trailing garbage in {ln.key}, ignoring: {ln.value}", "specifiers"
    ):
        text = utf8_decode(resolved)
        if text is None or not env_name_is_valid(text):
            st.warn(ln, f"Invalid environment name for {ln.key}, ignoring: {_shown(word)}")
            continue
        if text not in st.cfg.pass_environment:
            st.cfg.pass_environment.append(text)


def path_simplify(path: str) -> str:
    """path-util.c path_simplify(): drop `//`, `/./` and a trailing slash; keep `..`."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return ("/" if path.startswith("/") else "") + "/".join(parts) or "/"


def _env_file(st: _State, ln: _Line) -> None:
    """config_parse_unit_env_file(): one path, specifiers expanded, NOT unquoted."""
    cfg = st.cfg
    if not ln.value:
        cfg.environment_files.clear()
        return
    try:
        raw = st.expand(ln.value.encode("utf-8", "surrogateescape"))
    except SpecifierError as e:
        st.warn(ln, f"Failed to resolve unit specifiers in '{ln.value}', ignoring: {e}")
        return
    text = utf8_decode(raw)
    if text is None:
        st.warn(ln, f"String is not UTF-8 clean, ignoring assignment: {_shown(raw)}")
        return
    optional = text.startswith("-")
    path = text[1:] if optional else text
    if not path.startswith("/"):
        st.warn(ln, f"{ln.key}= path is not absolute, ignoring: {path}")
        return
    path = path_simplify(path)
    if ".." in path.split("/"):
        st.warn(ln, f"{ln.key}= path is not normalized, ignoring: {path}")
        return
    cfg.environment_files.append(
        EnvironmentFileRef(path=path, optional=optional, file=ln.file, line=ln.line)
    )


def _word_and_warn(st: _State, ln: _Line, pos: int | None) -> tuple[bytes | None, int | None]:
    """extract_first_word_and_warn(): retry with unknown escapes kept, as ExecStart= does."""
    try:
        return extract_first_word(ln.value, pos)
    except WordError:
        pass
    try:
        word, nxt = extract_first_word(ln.value, pos, relax_escapes=True)
    except WordError:
        st.warn(ln, f'Unbalanced quoting, ignoring: "{ln.value}"')
        raise
    st.warn(ln, f'Ignoring unknown escape sequences: "{_shown(word or b"")}"', "warning")
    return word, nxt


def _exec(st: _State, ln: _Line) -> None:
    """config_parse_exec(): prefixes -@:+!, a path, arguments, `;` between commands."""
    cfg = st.cfg
    if not ln.value:
        cfg.exec_start.clear()
        return
    pos: int | None = 0
    while pos is not None:
        try:
            first, pos = _word_and_warn(st, ln, pos)
        except WordError:
            return
        if first is None:
            return
        if first == b";":
            continue
        text = first.decode("utf-8", "surrogateescape")
        cmd = ExecCommand(path="", argv=[], file=ln.file, line=ln.line)
        i = 0
        while i < len(text):
            c = text[i]
            if c == "-" and not cmd.ignore_failure:
                cmd.ignore_failure = True
            elif c == "@" and not cmd.separate_argv0:
                cmd.separate_argv0 = True
            elif c == ":" and not cmd.no_env_expand:
                cmd.no_env_expand = True
            elif c == "+" and not (cmd.privileged or cmd.no_setuid):
                cmd.privileged = True
            elif c == "!" and not cmd.privileged:
                cmd.no_setuid = True
            else:
                break
            i += 1
        sev: Severity = "ignored" if cmd.ignore_failure else "error"
        try:
            path = st.expand(text[i:].encode("utf-8", "surrogateescape")).decode(
                "utf-8", "surrogateescape"
            )
        except SpecifierError as e:
            st.warn(ln, f"Failed to resolve unit specifiers in '{text[i:]}': {e}", sev)
            return
        bad = None
        if not path:
            bad = f"Empty path in command line: '{ln.value}'"
        elif any(ord(ch) < 32 or ch in "\"'\\\x7f" for ch in path):
            bad = f"Executable name contains special characters: {path}"
        elif path.endswith("/"):
            bad = f"Executable path specifies a directory: {path}"
        elif not path.startswith("/") and ("/" in path or path in (".", "..")):
            bad = f"Neither a valid executable name nor an absolute path: {path}"
        if bad:
            st.warn(ln, bad, sev)
            return
        argv: list[str] = [] if cmd.separate_argv0 else [path]
        cmd.path = path_simplify(path) if path.startswith("/") else path
        while pos is not None:
            rest = ln.value[pos:]
            if rest[:1] == ";" and (len(rest) == 1 or rest[1] in WHITESPACE):
                pos += 1
                while pos < len(ln.value) and ln.value[pos] in WHITESPACE:
                    pos += 1
                if pos >= len(ln.value):
                    pos = None
                break
            if rest[:2] == "\\;" and (len(rest) == 2 or rest[2] in WHITESPACE):
                argv.append(";")
                pos += 2
                while pos < len(ln.value) and ln.value[pos] in WHITESPACE:
                    pos += 1
                if pos >= len(ln.value):
                    pos = None
                continue
            try:
                word, pos = _word_and_warn(st, ln, pos)
            except WordError:
                if sev == "error":
                    st.cfg.diagnostics[-1].severity = "error"
                return
            if word is None:
                break
            try:
                argv.append(st.expand(word).decode("utf-8", "surrogateescape"))
            except SpecifierError as e:
                st.warn(ln, f"Failed to resolve unit specifiers in {_shown(word)}: {e}", sev)
                return
        if not argv:
            st.warn(ln, f"Empty executable name or zeroeth argument: {ln.value}", sev)
            return
        cmd.argv = argv
        cfg.exec_start.append(cmd)


_HANDLERS = {
    ("Service", "Environment"): _environ,
    ("Service", "UnsetEnvironment"): _unset_environ,
    ("Service", "PassEnvironment"): _pass_environ,
    ("Service", "EnvironmentFile"): _env_file,
    ("Service", "ExecStart"): _exec,
}


def parse_unit(
    name: str,
    fragment: SourceFile | None,
    dropins: Sequence[SourceFile] = (),
    *,
    host: HostContext | None = None,
) -> UnitConfig:
    """The unit file, then each drop-in in the given (systemd's) order, as PID 1 loads them.

    Never raises for content: systemd's complaints are in .diagnostics ("error" ones mean
    systemd would refuse to load the unit). Use order_dropins() to get the drop-in order.
    """
    if unit_type(name) is None:
        raise InputError(
            f"not a unit name: {name!r}", hint="name the unit with its type, e.g. sglang.service"
        )
    st = _State(name, fragment.path if fragment else None, host)
    cfg = st.cfg
    cfg.dropin_paths = [d.path for d in dropins]
    for src in ([fragment] if fragment else []) + list(dropins):
        for ln in _logical_lines(src, cfg.diagnostics):
            cfg.settings.setdefault(ln.section, {}).setdefault(ln.key, []).append(ln.value)
            handler = _HANDLERS.get((ln.section, ln.key))
            if handler:
                handler(st, ln)
        if cfg.errors:
            break
    order = {p: i for i, p in enumerate([fragment.path] if fragment else [])}
    for i, d in enumerate(dropins, len(order)):
        order.setdefault(d.path, i)
    cfg.diagnostics.sort(key=lambda d: (order.get(d.file, len(order)), d.line))
    return cfg


# --------------------------------------------------------------------------------------------
# EnvironmentFile= contents (src/basic/env-file.c parse_env_file_internal)
# --------------------------------------------------------------------------------------------


def parse_env_file(data: bytes, path: str = "<env>") -> tuple[dict[str, str], list[Diagnostic]]:
    """KEY=VALUE lines as systemd 252 reads an EnvironmentFile.

    Quotes ('…', "…" with \\" \\\\ \\` \\$ escapes), backslash-newline continuation,
    trailing whitespace trimmed, `#`/`;` comments at the start of a key. systemd does NOT
    understand `export KEY=VALUE`: the key becomes "export KEY", which is invalid, so the line
    is dropped; remedy reports it. Invalid UTF-8 makes systemd refuse the whole file: raised
    as ValueError.
    """
    pairs: list[tuple[str, str, int]] = []
    diags: list[Diagnostic] = []
    # the C loop stops at the first NUL byte of the file
    text = data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
    key: list[str] = []
    value: list[str] = []
    state = "PRE_KEY"
    last_key_ws: int | None = None
    last_val_ws: int | None = None
    line = 1

    def push() -> None:
        nonlocal key, value
        k = "".join(key if last_key_ws is None else key[:last_key_ws])
        pairs.append((k, "".join(value), line))
        key, value = [], []

    for c in text:
        if state == "PRE_KEY":
            if c in COMMENTS:
                state = "COMMENT"
            elif c not in WHITESPACE:
                state, last_key_ws, key = "KEY", None, [c]
        elif state == "KEY":
            if c in "\n\r":
                state, key = "PRE_KEY", []
                line += 1
            elif c == "=":
                state, last_val_ws = "PRE_VALUE", None
            else:
                if c not in WHITESPACE:
                    last_key_ws = None
                elif last_key_ws is None:
                    last_key_ws = len(key)
                key.append(c)
        elif state == "PRE_VALUE":
            if c in "\n\r":
                push()
                line += 1
                state = "PRE_KEY"
            elif c == "'":
                state = "SQ"
            elif c == '"':
                state = "DQ"
            elif c == "\\":
                state = "VALUE_ESCAPE"
            elif c not in WHITESPACE:
                state = "VALUE"
                value.append(c)
        elif state == "VALUE":
            if c in "\n\r":
                if last_val_ws is not None:
                    del value[last_val_ws:]
                push()
                line += 1
                state = "PRE_KEY"
            elif c == "\\":
                state, last_val_ws = "VALUE_ESCAPE", None
            else:
                if c not in WHITESPACE:
                    last_val_ws = None
                elif last_val_ws is None:
                    last_val_ws = len(value)
                value.append(c)
        elif state == "VALUE_ESCAPE":
            state = "VALUE"
            if c not in "\n\r":
                value.append(c)
        elif state == "SQ":
            if c == "'":
                state = "PRE_VALUE"
            else:
                value.append(c)
        elif state == "DQ":
            if c == '"':
                state = "PRE_VALUE"
            elif c == "\\":
                state = "DQ_ESCAPE"
            else:
                value.append(c)
        elif state == "DQ_ESCAPE":
            state = "DQ"
            if c in '"\\`$':
                value.append(c)
            elif c != "\n":
                value += ["\\", c]
        elif state == "COMMENT":
            if c == "\\":
                state = "COMMENT_ESCAPE"
            elif c in "\n\r":
                state = "PRE_KEY"
                line += 1
        elif state == "COMMENT_ESCAPE":
            state = "COMMENT"
    if state in ("PRE_VALUE", "VALUE", "VALUE_ESCAPE", "SQ", "DQ", "DQ_ESCAPE"):
        if state == "VALUE" and last_val_ws is not None:
            del value[last_val_ws:]
        push()

    env: dict[str, str] = {}
    for k, v, ln in pairs:
        kb, vb = k.encode("utf-8", "surrogateescape"), v.encode("utf-8", "surrogateescape")
        if utf8_decode(kb) is None or utf8_decode(vb) is None:
            raise ValueError(f"{path}:{ln}: invalid UTF-8 in {k!r}; systemd refuses the file")
        env[k] = v  # strv_env_replace_consume: a later line replaces in place
    clean: dict[str, str] = {}
    for k, v in env.items():
        if env_assignment_is_valid(f"{k}={v}"):
            clean[k] = v
            continue
        line_of = max(ln for kk, _, ln in pairs if kk == k)
        if k.startswith("export ") or k.startswith("export\t"):
            msg = (
                f"'{k}={v}' is ignored: systemd does not understand 'export' in an "
                "EnvironmentFile (write NAME=value, without export)"
            )
        else:
            msg = f"Ignoring invalid environment assignment '{k}={v}'"
        diags.append(Diagnostic(file=path, line=line_of, message=msg, severity="ignored"))
    return clean, diags


# --------------------------------------------------------------------------------------------
# The whole unit
# --------------------------------------------------------------------------------------------


def _apply_unset(env: Mapping[str, str], unset: Sequence[str]) -> dict[str, str]:
    """env-util.c strv_env_delete(): `NAME` removes NAME; `NAME=VALUE` only that exact pair."""
    out: dict[str, str] = {}
    for k, v in env.items():
        if k in unset or f"{k}={v}" in unset:
            continue
        out[k] = v
    return out


def has_glob(path: str) -> bool:
    return bool(_GLOB.search(path))


def load_environment_files(
    unit_name: str,
    refs: Sequence[EnvironmentFileRef],
    env_files: Mapping[str, bytes | None],
    env_globs: Mapping[str, Sequence[str]],
    *,
    strict: bool = True,
) -> tuple[list[LoadedEnvironmentFile], list[Diagnostic]]:
    """Read every EnvironmentFile= as execute.c load_environment_files() does.

    refs in unit order; env_files maps each path looked at to its bytes (None: missing);
    env_globs maps a glob pattern to the paths it matched, in glob(3) order. A later file wins
    over an earlier one. A missing file without `-`, and a file with invalid UTF-8, make
    systemd refuse to start the unit: InputError when strict, else an error diagnostic.
    The one reader of env files: load_unit() (impact), facts and probes all call it.
    """
    loaded: list[LoadedEnvironmentFile] = []
    diags: list[Diagnostic] = []
    for ref in refs:
        lf = LoadedEnvironmentFile(pattern=ref.path, optional=ref.optional)
        paths = list(env_globs.get(ref.path, [])) if has_glob(ref.path) else [ref.path]
        paths = [p for p in paths if env_files.get(p) is not None]
        if not paths:
            lf.missing = True
            loaded.append(lf)
            if ref.optional:
                continue
            where = f" ({ref.file}:{ref.line})" if ref.file else ""
            msg = (
                f"{unit_name}: EnvironmentFile={ref.path}{where} does not "
                "exist; systemd refuses to start the unit ('Failed to load environment files: "
                "No such file or directory')"
            )
            if strict:
                raise InputError(
                    msg, hint=f"create it, or write EnvironmentFile=-{ref.path} if it is optional"
                )
            diags.append(Diagnostic(file=ref.file, line=ref.line, message=msg, severity="error"))
            continue
        for p in paths:
            data = env_files[p]
            assert data is not None
            try:
                values, file_diags = parse_env_file(data, p)
            except ValueError as e:
                if ref.optional:
                    continue
                if strict:
                    raise InputError(f"{unit_name}: {e}") from None
                diags.append(Diagnostic(file=p, line=0, message=str(e), severity="error"))
                continue
            diags.extend(file_diags)
            lf.paths.append(p)
            lf.values.update(values)
        loaded.append(lf)
    return loaded, diags


def load_unit(files: UnitFiles, *, strict_env_files: bool = True) -> Unit:
    """Parse the unit and its drop-ins, read its EnvironmentFiles, compute both environments.

    `environment` is what `systemctl show -p Environment` prints; `effective_environment` is
    what the unit hands the process: Environment=, then every EnvironmentFile in order (a
    later file, and any file over Environment=, wins), then UnsetEnvironment= removes.

    Raises InputError for a missing EnvironmentFile without `-` when strict_env_files (systemd
    refuses to start the unit: "Failed to load environment files") and for a file with invalid
    UTF-8 (same refusal); otherwise those are diagnostics.
    """
    cfg = parse_unit(files.name, files.fragment, files.dropins, host=files.host)
    unit = Unit(**cfg.model_dump())
    eff: dict[str, str] = dict(cfg.environment)
    origins: dict[str, Origin] = dict(cfg.environment_origins)
    loaded, diags = load_environment_files(
        files.name,
        cfg.environment_files,
        files.env_files,
        files.env_globs,
        strict=strict_env_files,
    )
    unit.diagnostics.extend(diags)
    unit.loaded_environment_files = loaded
    for lf in loaded:
        for p in lf.paths:
            data = files.env_files.get(p) or b""
            values, _ = parse_env_file(data, p)
            for k, v in values.items():
                eff[k] = v
                origins[k] = Origin(kind="EnvironmentFile", file=p, line=_line_of(data, k))
    unit.effective_environment = _apply_unset(eff, cfg.unset_environment)
    for k, o in origins.items():
        if k in unit.effective_environment:
            unit.effective_origins[k] = o
        else:
            token = k if k in cfg.unset_origins else f"{k}={eff[k]}"
            if token in cfg.unset_origins:
                unit.removed_by_unset[k] = cfg.unset_origins[token]
    unit.python, unit.launch = exec_python(cfg.exec_start, unit.effective_environment)
    return unit


def _line_of(data: bytes, key: str) -> int:
    """Last line that assigns key in an env file (for messages only)."""
    pat = re.compile(rb"^\s*" + re.escape(key.encode()) + rb"\s*=")
    hit = 0
    for i, line in enumerate(data.splitlines(), 1):
        if pat.match(line):
            hit = i
    return hit


# --------------------------------------------------------------------------------------------
# ExecStart -> Python environment and SGLang flags
# --------------------------------------------------------------------------------------------

_PYTHON = re.compile(r"^python[0-9.]*$")
_PY_IN_TEXT = re.compile(r"""(/[^\s;"'=]*/bin/python[0-9.]*)(?=[\s;"']|$)""")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _subst(text: str, env: Mapping[str, str]) -> str:
    """ExecStart's ${VAR}/$VAR substitution with the unit's environment."""
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), text)


def venv_of(python: str) -> str | None:
    """`/x/venv/bin/python3.12` -> `/x/venv`; None when the path is no `…/bin/python*`."""
    d, base = posixpath.split(python)
    if _PYTHON.match(base) and posixpath.basename(d) == "bin":
        return posixpath.dirname(d) or "/"
    return None


def exec_python(
    commands: Sequence[ExecCommand], env: Mapping[str, str]
) -> tuple[str | None, Launch | None]:
    """(venv prefix, SGLang launch) of the ExecStart that runs Python, if any.

    Understands `/venv/bin/python …`, `/usr/bin/env [VAR=x] /venv/bin/python …` and shell
    wrappers (`bash -c "… /venv/bin/python -m sglang.launch_server …"`).
    """
    for cmd in commands:
        argv = [cmd.path, *cmd.argv[1:]]
        if not cmd.no_env_expand:
            argv = [_subst(a, env) for a in argv]
        i = 0
        if posixpath.basename(argv[0]) == "env":
            i = 1
            while i < len(argv) and (argv[i].startswith("-") or "=" in argv[i]):
                i += 1
        if i < len(argv) and venv_of(argv[i]):
            return venv_of(argv[i]), _launch(argv[i + 1 :])
        text = " ".join(argv)
        m = _PY_IN_TEXT.search(text)
        if m:
            after = text[m.end() :].split()
            return venv_of(m.group(1)), _launch(after)
    return None, None


def _launch(args: Sequence[str]) -> Launch | None:
    """`-m sglang.launch_server --tp 8 --enable-x` -> Launch(module, {"tp": "8", …})."""
    args = list(args)
    if "-m" not in args:
        return None
    i = args.index("-m")
    if i + 1 >= len(args):
        return None
    launch = Launch(module=args[i + 1])
    rest = args[i + 2 :]
    j = 0
    while j < len(rest):
        a = rest[j]
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            if eq:
                launch.flags[name] = val
            elif j + 1 < len(rest) and not rest[j + 1].startswith("--"):
                launch.flags[name] = rest[j + 1]
                j += 1
            else:
                launch.flags[name] = True
        j += 1
    return launch
