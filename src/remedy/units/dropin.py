"""The drop-in remedy would write for an environment change, previewed and verified first.

Why a drop-in and never `sed -i` on the unit (seed 002): a drop-in is one file remedy owns,
so the change is reviewable as a diff, reversible by deleting it, and cannot corrupt the
vendor's unit. This module only computes: the file's new content, the diff against what is
there, the unit as systemd will see it afterwards, and `systemd-analyze verify` run on a
temporary copy of the unit + all its drop-ins. Nothing here writes to a host.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, Field

from remedy.errors import InputError
from remedy.units.parse import (
    SourceFile,
    UnitFiles,
    load_environment_files,
    order_dropins,
    parse_unit,
)
from remedy.units.specifiers import HostContext
from remedy.units.syntax import env_name_is_valid, extract_first_word, quote_assignment

DROPIN_NAME = "50-remedy.conf"
DROPIN_HEADER = (
    "# Managed by remedy: environment changes for this unit, previewed before writing.\n"
    "# Delete this file and run `systemctl daemon-reload` to undo them.\n"
)


class VerifyResult(BaseModel):
    """`systemd-analyze verify` on a temporary root holding the unit and its drop-ins."""

    ran: bool
    ok: bool
    exit_status: int | None = None
    command: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)  # paths shown as on the host
    new_messages: list[str] = Field(default_factory=list)  # not there before the change
    systemd_version: str | None = None  # of the systemd-analyze used (this machine's)
    note: str | None = None


class DropinPreview(BaseModel):
    """What remedy would write: path, content, diff, and the verdict of systemd-analyze."""

    unit: str
    path: str
    before: str | None = None  # current content of that file on the host; None: new file
    content: str  # new content; "" with remove=True when no change is left
    remove: bool = False
    diff: str = ""
    changes: dict[str, str | None] = Field(default_factory=dict)
    environment: dict[str, str] = Field(default_factory=dict)  # what the file sets
    unset: list[str] = Field(default_factory=list)  # what the file unsets
    hidden_by: str | None = None  # a same-named drop-in of higher priority hides this one
    verify: VerifyResult | None = None
    commands: list[str] = Field(default_factory=list)  # what applying it means on the host

    @property
    def noop(self) -> bool:
        return (self.before or "") == self.content and not (self.remove and self.before)


def dropin_path(unit: str, name: str = DROPIN_NAME) -> str:
    return f"/etc/systemd/system/{unit}.d/{name}"


def remedy_dropin_name(var: str, last: bool = False) -> str:
    """One drop-in per variable remedy manages, so steps (and their rollbacks) stay apart.
    `last`: named to be parsed after every drop-in of the unit (systemd.unit(5): all drop-in
    directories' .conf files in one lexicographic order of their names; "zz-" sorts after
    digits, capitals and the usual lower-case names: 90-local.conf, override.conf), so its
    Environment= and EnvironmentFile= come after an admin's later ones."""
    slug = (var or "env").lower().replace("_", "-")
    return f"{'zz' if last else '50'}-remedy-{slug}.conf"


# remedy's own drop-ins (remedy_dropin_name, operations EXEC_START_DROPIN): never an admin's
REMEDY_DROPIN = re.compile(r"(?:\d\d|zz)-remedy-[a-z0-9-]+\.conf$")
_MINE = "/remedy/simulated/value"  # remedy's value in the simulation: no host sets it


def _name_key(path: str) -> bytes:
    """conf-files.c orders drop-ins by file name, byte for byte (strcmp)."""
    return posixpath.basename(path).encode("utf-8", "surrogateescape")


def _value_after(
    unit: str,
    dropins: Sequence[SourceFile],
    env_files: Mapping[str, bytes | None],
    env_globs: Mapping[str, Sequence[str]],
    var: str,
    host: HostContext | None,
) -> tuple[str | None, str]:
    """var as systemd hands it to the process after these drop-ins (Environment=, then every
    EnvironmentFile= in order; an empty assignment resets its list), and where it came from."""
    cfg = parse_unit(unit, None, dropins, host=host)
    value, where = cfg.environment.get(var), ""
    if var in cfg.environment_origins:
        where = f"Environment={var}=..."
    loaded, _ = load_environment_files(unit, cfg.environment_files, env_files, env_globs,
                                       strict=False)  # fmt: skip
    for ref, lf in zip(cfg.environment_files, loaded, strict=True):
        if var in lf.values:
            value, where = lf.values[var], f"EnvironmentFile={ref.path}"
    return value, where


def later_dropin_override(
    unit: str,
    dropins: Sequence[SourceFile],
    env_files: Mapping[str, bytes | None],
    env_globs: Mapping[str, Sequence[str]],
    var: str,
    *,
    host: HostContext | None = None,
) -> str | None:
    """The drop-in of the unit, read after remedy's last-named one for var
    (zz-remedy-VAR.conf: an Environment= line and an EnvironmentFile= of its own, which wins
    over every Environment=), that still changes var: its path and how ("D
    (EnvironmentFile=F)": F is listed after remedy's file, so read later; an empty
    EnvironmentFile= and Environment= drop remedy's lines). None when remedy's value stands.

    Why: systemd.unit(5) reads every drop-in directory's .conf files in one order of their
    names; an admin's `zzz-local.conf` or `~override.conf` sorts after "zz-remedy-", and a
    plan that wrote there anyway said `ok` for a change systemd then overrode (test_s).
    dropins: the unit's drop-ins remedy did not write (any order); env_files/env_globs: the
    EnvironmentFiles read from the host, as for units.shown.service_environment."""
    mine_name = remedy_dropin_name(var, True)
    later = sorted(
        (
            d
            for d in dropins
            if _name_key(d.path) > mine_name.encode()
            and not REMEDY_DROPIN.match(posixpath.basename(d.path))
        ),
        key=lambda d: _name_key(d.path),
    )
    if not later or not env_name_is_valid(var):
        return None
    path = dropin_path(unit, mine_name)
    own_env = path.removesuffix(".conf") + ".env"
    files = {**env_files, own_env: f"{var}={_MINE}\n".encode()}
    seq = [SourceFile(path, f"[Service]\nEnvironment={var}={_MINE}\nEnvironmentFile={own_env}\n"
                            .encode())]  # fmt: skip
    for d in later:
        seq.append(d)
        value, where = _value_after(unit, seq, files, env_globs, var, host)
        if value != _MINE:
            how = where if value is not None else "an empty EnvironmentFile= and Environment="
            return f"{d.path} ({how})"
    return None


def read_after_remedy(dropin_paths: Sequence[str]) -> list[str]:
    """The unit's drop-ins that may be read after one of remedy's last-named ones: a name
    sorting after "zz-remedy-" that is not remedy's own (facts read these, as data)."""
    return [
        p
        for p in dropin_paths
        if _name_key(p) > b"zz-remedy-" and not REMEDY_DROPIN.match(posixpath.basename(p))
    ]


ANY_VAR = "*"  # dropin_overrides' key for a variable no later drop-in names


def dropin_overrides(
    unit: str,
    dropin_paths: Sequence[str],
    files: Mapping[str, bytes | None],
    env_globs: Mapping[str, Sequence[str]],
    *,
    host: HostContext | None = None,
) -> dict[str, str]:
    """NAME -> "DROP-IN (how)" for every variable a drop-in read after remedy's own for it
    still sets (later_dropin_override); ANY_VAR when one drops remedy's lines for any
    variable (an empty EnvironmentFile= and Environment=). files: the drop-ins' and the
    EnvironmentFiles' bytes as read from the host (None: missing)."""
    later = [
        SourceFile(p, data)
        for p in read_after_remedy(dropin_paths)
        if (data := files.get(p)) is not None
    ]
    if not later:
        return {}
    out: dict[str, str] = {}
    for d in later:
        # an EnvironmentFile= whose path needs a host fact remedy does not have here (%H,
        # %m, %b, ...): systemd reads a file remedy cannot name, which may set any variable
        one = parse_unit(unit, None, [d], host=host)
        if one.environment_files and one.unresolved_specifiers:
            refs = ", ".join(r.path for r in one.environment_files)
            out[ANY_VAR] = (
                f"{d.path} (EnvironmentFile={refs}: {', '.join(one.unresolved_specifiers)} "
                "not known to remedy, so neither is the file systemd reads)"
            )
            return out
    cfg = parse_unit(unit, None, later, host=host)
    loaded, _ = load_environment_files(unit, cfg.environment_files, files, env_globs,
                                       strict=False)  # fmt: skip
    names = set(cfg.environment).union(*(lf.values for lf in loaded))
    for var in sorted(names):
        why = later_dropin_override(unit, later, files, env_globs, var, host=host)
        if why:
            out[var] = why
    # a variable none of them names: lost only where they drop remedy's lines outright
    why = later_dropin_override(unit, later, files, env_globs, "REMEDY_ANY", host=host)
    if why:
        out[ANY_VAR] = why
    return out


def render_dropin(env: Mapping[str, str], unset: Sequence[str]) -> str:
    """The file: `[Service]`, one quoted Environment= per variable, UnsetEnvironment= lines.

    Raises InputError for a name or value systemd cannot take back byte for byte.
    """
    if not env and not unset:
        return ""
    lines = [DROPIN_HEADER.rstrip("\n"), "[Service]"]
    for k, v in env.items():
        try:
            lines.append("Environment=" + quote_assignment(k, v))
        except ValueError as e:
            raise InputError(str(e), hint="nothing was written") from None
    for k in unset:
        if not env_name_is_valid(k):
            raise InputError(f"{k!r} is not a valid environment variable name")
        lines.append(f"UnsetEnvironment={k}")
    return "\n".join(lines) + "\n"


def _read_existing(src: SourceFile, unit: str) -> tuple[dict[str, str], list[str]]:
    """Environment/UnsetEnvironment of an existing remedy drop-in; refuses hand-edited ones."""
    cfg = parse_unit(unit, None, [src])
    other = {
        f"[{sec}] {k}"
        for sec, keys in cfg.settings.items()
        for k in keys
        if (sec, k) not in (("Service", "Environment"), ("Service", "UnsetEnvironment"))
    }
    resets = [
        k for k, vals in cfg.settings.get("Service", {}).items() for v in vals if not v.strip()
    ]
    problems = [str(d) for d in cfg.diagnostics]
    if other or resets or problems:
        what = sorted(other) + [f"an empty {k}= (a reset)" for k in resets] + problems
        raise InputError(
            f"{src.path} exists but is not a drop-in remedy can merge into: it has "
            + "; ".join(what),
            hint="move your own settings to another drop-in (e.g. override.conf); "
            "nothing was written",
        )
    return dict(cfg.environment), list(cfg.unset_environment)


def merge_changes(
    env: Mapping[str, str], unset: Sequence[str], changes: Mapping[str, str | None]
) -> tuple[dict[str, str], list[str]]:
    """Apply {VAR: value | None} to the drop-in's own lists. Unset also drops a set."""
    new_env, new_unset = dict(env), list(unset)
    for k, v in changes.items():
        if not env_name_is_valid(k):
            raise InputError(
                f"{k!r} is not a valid environment variable name",
                hint="letters, digits and _, not starting with a digit; nothing was written",
            )
        if v is None:
            new_env.pop(k, None)
            if k not in new_unset:
                new_unset.append(k)
        else:
            new_env[k] = v
            new_unset = [u for u in new_unset if u != k and not u.startswith(k + "=")]
    return new_env, new_unset


def plan_dropin(
    files: UnitFiles,
    changes: Mapping[str, str | None],
    *,
    name: str = DROPIN_NAME,
    verify: bool = True,
    systemd_analyze: str | None = None,
) -> tuple[DropinPreview, UnitFiles]:
    """The remedy drop-in after `changes`, and the unit's files as systemd will read them then.

    Merges with an existing remedy drop-in of the same name. verify runs systemd-analyze on a
    temporary copy (before and after) and reports only what the change adds.
    """
    if files.fragment is None:
        raise InputError(f"{files.name} has no unit file; remedy writes drop-ins for real units")
    path = dropin_path(files.name, name)
    existing = next((d for d in files.dropins if d.path == path), None)
    before_text = existing.data.decode("utf-8", "surrogateescape") if existing else None
    env0: dict[str, str] = {}
    unset0: list[str] = []
    if existing is not None:
        env0, unset0 = _read_existing(existing, files.name)
    env1, unset1 = merge_changes(env0, unset0, changes)
    content = render_dropin(env1, unset1)
    remove = not content
    others = [d for d in files.dropins if d.path != path]
    after_paths = order_dropins([d.path for d in others] + ([] if remove else [path]), files.name)
    by_path = {d.path: d for d in others}
    if not remove:
        by_path[path] = SourceFile(path, content.encode())
    hidden_by = None
    if not remove and path not in after_paths:
        hidden_by = next(
            (p for p in after_paths if posixpath.basename(p) == name), "a same-named drop-in"
        )
    after = replace(files, dropins=[by_path[p] for p in after_paths if p in by_path])
    diff = "".join(
        difflib.unified_diff(
            (before_text or "").splitlines(keepends=True),
            content.splitlines(keepends=True),
            fromfile=path if before_text is not None else "/dev/null",
            tofile=path if not remove else "/dev/null",
        )
    )
    d = posixpath.dirname(path)
    if remove:
        commands = [f"rm -f {path}"] if existing else []
    else:
        commands = [
            f"install -d -m 0755 {d}",
            f"write {path} (mode 0644, atomically: temp file + rename)",
        ]
    if commands:
        commands += ["systemctl daemon-reload", f"systemctl restart {files.name}"]
    preview = DropinPreview(
        unit=files.name,
        path=path,
        before=before_text,
        content=content,
        remove=remove,
        diff=diff,
        changes=dict(changes),
        environment=env1,
        unset=unset1,
        hidden_by=hidden_by,
        commands=commands,
    )
    if verify:
        preview.verify = verify_change(files, after, systemd_analyze=systemd_analyze)
    return preview, after


# --------------------------------------------------------------------------------------------
# systemd-analyze verify on a temporary root
# --------------------------------------------------------------------------------------------


def find_systemd_analyze() -> str | None:
    """From the distribution's directories only (remedy.syspath.BASE_PATH): root never runs a
    systemd-analyze another user planted earlier on its PATH, nor one a /usr/local link leads
    to (redteam-28)."""
    from remedy.syspath import BASE_PATH

    return shutil.which("systemd-analyze", path=BASE_PATH) or next(
        (p for p in ("/usr/bin/systemd-analyze", "/bin/systemd-analyze") if os.access(p, os.X_OK)),
        None,
    )


def _exec_paths(files: UnitFiles) -> list[str]:
    """Executables of every Exec*= line, which verify checks exist (stubbed in the temp root)."""
    cfg = parse_unit(files.name, files.fragment, files.dropins, host=files.host)
    out: list[str] = []
    for key, values in cfg.settings.get("Service", {}).items():
        if not key.startswith("Exec") or key in ("ExecSearchPath", "ExecPaths"):
            continue
        for v in values:
            try:
                word, _ = extract_first_word(v, 0, relax_escapes=True)
            except ValueError:
                continue
            if not word:
                continue
            p = word.decode("utf-8", "surrogateescape").lstrip("-@:+!")
            if p.startswith("/"):
                out.append(p)
            elif p:
                out.append("/usr/bin/" + p)
    return out


def _inside(root: Path, host_path: str) -> Path | None:
    """Where a host's path goes in the temporary root: normalised as an absolute path first,
    so `..` stops at `/` and never leaves the root (a FragmentPath or ExecStart= of
    `/../../etc/cron.d/x` from a hostile host would have been written on this machine, as
    root, with the host's bytes). None for a path no file can have (NUL, empty)."""
    if not host_path or "\0" in host_path:
        return None
    rel = posixpath.normpath("/" + host_path).lstrip("/")
    return root / rel if rel else None


def _write_root(root: Path, files: UnitFiles) -> None:
    for src in ([files.fragment] if files.fragment else []) + list(files.dropins):
        dst = _inside(root, src.path)
        if dst is None:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.data)
    for exe in _exec_paths(files):
        dst = _inside(root, exe)
        if dst is None or dst.exists():
            continue
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(b"#!/bin/sh\n")
            dst.chmod(0o755)
        except OSError:
            continue


# systemd-analyze's environment, not the inherited one: LD_LIBRARY_PATH is searched before its
# RUNPATH, and one naming uid 65534's dir made root's `systemd-analyze --version` load that
# user's libseccomp.so.2 (tests/security/test_inherited_loader_env.py)
_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "SYSTEMD_LOG_COLOR": "0"}


def _run_verify(exe: str, files: UnitFiles, timeout: float) -> tuple[int, list[str], list[str]]:
    from remedy.fileread import private_tempdir

    # the host's files are written into it by name: never in a TMPDIR another user owns, who
    # could swap the directory for theirs, its names links to any file of root's
    where = private_tempdir()
    if where is None:
        raise OSError("no temporary directory only root or remedy's user can change")
    with tempfile.TemporaryDirectory(prefix="remedy-verify-", dir=where) as tmp:
        root = Path(tmp)
        _write_root(root, files)
        # --man=no: verify otherwise runs `man SECTION PAGE` for each Documentation=man:PAGE(SECTION)
        # of the host's unit, both words the host's text: `man:p(--config-file=FILE)` made root
        # run man with another user's config, whose `DEFINE nroff PROG` man-db then ran
        # (tests/security/test_verify_man.py); --generators=no is verify's default
        cmd = [exe, "verify", "--man=no", "--recursive-errors=no", "--no-pager", f"--root={root}",
               files.name]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, env=_ENV, check=False)
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        msgs = [ln.replace(str(root), "") for ln in text.splitlines() if ln.strip()]
        shown = [c if not c.startswith("--root=") else "--root=<tmp>" for c in cmd]
        return proc.returncode, msgs, shown


def systemd_version(exe: str) -> str | None:
    try:
        out = subprocess.run(
            [exe, "--version"], capture_output=True, timeout=10, check=False, env=_ENV
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = out.stdout.decode("utf-8", "replace").splitlines()[:1]
    return first[0].strip() if first else None


def verify_unit_files(
    files: UnitFiles, *, systemd_analyze: str | None = None, timeout: float = 30.0
) -> VerifyResult:
    """Run `systemd-analyze verify` on a temporary root with exactly these files."""
    exe = systemd_analyze or find_systemd_analyze()
    if not exe:
        return VerifyResult(
            ran=False,
            ok=False,
            note="systemd-analyze is not installed on this machine (apt-get install systemd); "
            "the drop-in was checked by remedy's own parser only",
        )
    try:
        rc, msgs, cmd = _run_verify(exe, files, timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return VerifyResult(ran=False, ok=False, note=f"systemd-analyze verify failed to run: {e}")
    return VerifyResult(
        ran=True,
        ok=rc == 0,
        exit_status=rc,
        command=cmd,
        messages=msgs,
        new_messages=msgs,
        systemd_version=systemd_version(exe),
    )


def verify_change(
    before: UnitFiles, after: UnitFiles, *, systemd_analyze: str | None = None
) -> VerifyResult:
    """verify on the files after the change; messages already there before are not blamed."""
    res = verify_unit_files(after, systemd_analyze=systemd_analyze)
    if not res.ran:
        return res
    old = verify_unit_files(before, systemd_analyze=systemd_analyze)
    res.new_messages = [m for m in res.messages if m not in set(old.messages)]
    if not res.ok and old.ran and not old.ok and not res.new_messages:
        res.ok = True
        res.note = (
            "systemd-analyze already complained before the change (see messages); "
            "the drop-in adds no new complaint"
        )
    return res
