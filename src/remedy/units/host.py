"""Read a unit, its drop-ins and its EnvironmentFiles from a host, in one or two round trips.

Why not just `systemctl show`: it only exists where systemd runs, it shows what systemd has
LOADED (not the files on disk, which is what a daemon-reload after remedy's write will load),
and it never shows EnvironmentFile= values. So remedy reads the files themselves, and, where
systemd runs, also `systemctl show` to locate the unit (FragmentPath, aliases) and to warn when
disk and loaded state disagree (an edit without daemon-reload).

Round trip 1: every candidate unit file and every `.conf` of every drop-in directory systemd
would search, `systemctl show`, and the host facts specifiers need. Round trip 2 (only when the
unit has EnvironmentFile= or its unit file lay outside the standard directories): the env files,
with globs expanded on the host as glob(3) would. Every file travels base64-framed, so any byte
and any file name survive.
"""

from __future__ import annotations

import base64
import io
import posixpath
import tarfile
import zlib
from dataclasses import dataclass, field

from remedy.errors import InputError, TransportError
from remedy.transport.base import Transport
from remedy.transport.quote import quote
from remedy.units.parse import (
    SYSTEM_UNIT_PATH,
    SourceFile,
    UnitFiles,
    dropin_dirs,
    has_glob,
    order_dropins,
    parse_unit,
    unit_file_candidates,
)
from remedy.units.shown import glob_word
from remedy.units.specifiers import ARCHITECTURES, HostContext, unit_type
from remedy.units.syntax import split_show_list

SHOW_PROPS = (
    "Id",
    "Names",
    "LoadState",
    "ActiveState",
    "SubState",
    "FragmentPath",
    "DropInPaths",
    "Environment",
    "UnsetEnvironment",
    "EnvironmentFiles",
    "NeedDaemonReload",
)
MAX_FILE = 4 * 1024 * 1024
_SEP = b"\x1e"

_PRELUDE = r"""
export LC_ALL=C
NL='
'
FILES=
b64() { printf '%s' "$1" | base64 -w0; }
emit() {
  if [ -f "$1" ] && [ -r "$1" ]; then
    FILES="$FILES$1$NL"
  elif [ -e "$1" ] || [ -L "$1" ]; then
    printf '\036D %s %s\n' "$(b64 "$1")" "$(readlink -f -- "$1" | base64 -w0)"
  fi
}
flush() {
  [ -n "$FILES" ] || return 0
  IFS=$NL; set -f; set -- $FILES; set +f; unset IFS
  printf '\036N '; printf '%s\n' "$@" | base64 -w0; printf '\n'
  printf '\036P '; readlink -f -- "$@" | base64 -w0; printf '\n'
  if command -v tar >/dev/null 2>&1; then
    printf '\036T '; tar -c -h -f - -- "$@" 2>/dev/null | base64 -w0; printf '\n'
  else
    for f in "$@"; do printf '\036F %s ' "$(b64 "$f")"; head -c MAXFILE -- "$f" | base64 -w0; printf '\n'; done
  fi
  FILES=
}
""".replace("MAXFILE", str(MAX_FILE))


@dataclass
class HostRead:
    """Raw records of one round trip."""

    files: dict[str, bytes] = field(default_factory=dict)
    others: dict[str, str] = field(default_factory=dict)  # exists, not a readable file -> realpath
    links: dict[str, str] = field(default_factory=dict)  # symlink -> realpath
    values: dict[str, str] = field(default_factory=dict)
    globs: dict[str, list[str]] = field(default_factory=dict)
    realpaths: dict[str, str] = field(default_factory=dict)  # drop-in dir -> canonical
    executables: set[str] = field(default_factory=set)
    show: str | None = None
    show_rc: int | None = None
    booted: bool = False


def _d(b: bytes) -> str:
    return base64.b64decode(b).decode("utf-8", "surrogateescape")


def _dl(b: bytes) -> str:
    """A command's output (readlink -f) without its final newline."""
    text = _d(b)
    return text[:-1] if text.endswith("\n") else text


def _parse_records(out: bytes, root: str) -> HostRead:
    res = HostRead()

    def strip(p: str) -> str:
        return p[len(root) :] if root and p.startswith(root + "/") else p

    names: list[str] = []
    for rec in out.split(_SEP):
        rec = rec.strip(b"\n")
        if not rec:
            continue
        kind, _, rest = rec.partition(b" ")
        parts = rest.split(b" ")
        try:
            if kind == b"F":
                res.files[strip(_d(parts[0]))] = base64.b64decode(
                    parts[1] if len(parts) > 1 else b""
                )
            elif kind == b"N":
                names = [strip(x) for x in _d(parts[0]).split("\n") if x]
            elif kind == b"P":
                reals = [strip(x) for x in _d(parts[0]).split("\n") if x]
                res.links.update(zip(names, reals, strict=False))
            elif kind == b"T":
                # the host's `tar -c` is uncompressed: mode "r:" takes no gzip/bz2/xz, and no
                # member beyond MAX_FILE (the `head -c` path's cap) is read. tarfile's default
                # "r:*" took a hostile host's ~2 MiB of gzip holding a 2 GiB "unit file", read
                # whole (tests/security/test_unit_read_bomb.py)
                with tarfile.open(fileobj=io.BytesIO(base64.b64decode(parts[0])), mode="r:") as tf:
                    for m in tf.getmembers():
                        if m.isfile() and m.size > MAX_FILE:
                            raise ValueError(
                                f"{m.name} is {m.size} bytes, more than a unit file "
                                f"({MAX_FILE // (1 << 20)} MiB); not read"
                            )
                        fh = tf.extractfile(m) if m.isfile() else None
                        if fh is not None:
                            res.files[strip("/" + m.name.lstrip("/"))] = fh.read(MAX_FILE)
            elif kind == b"L":
                res.links[strip(_d(parts[0]))] = strip(_dl(parts[1]))
            elif kind == b"D":
                res.others[strip(_d(parts[0]))] = strip(_dl(parts[1])) if len(parts) > 1 else ""
            elif kind == b"V":
                res.values[parts[0].decode()] = _d(parts[1]) if len(parts) > 1 else ""
            elif kind == b"R":
                res.realpaths[strip(_d(parts[0]))] = strip(_d(parts[1]))
            elif kind == b"G":
                res.globs.setdefault(strip(_d(parts[0])), []).append(strip(_d(parts[1])))
            elif kind == b"X":
                res.executables.add(strip(_d(parts[0])))
            elif kind == b"S":
                res.show_rc = int(parts[0])
                res.show = _d(parts[1]) if len(parts) > 1 else ""
            elif kind == b"B":
                res.booted = parts[0] == b"1"
        # a cut or garbled tar/gzip too (ReadError, BadGzipFile is an OSError, zlib.error)
        except (IndexError, ValueError, EOFError, OSError, tarfile.TarError, zlib.error) as e:
            raise TransportError(f"garbled reply while reading unit files: {e}") from None
    return res


def _round1_script(name: str, root: str) -> str:
    cands = unit_file_candidates(name)
    dirs = dropin_dirs(name)
    lines = [_PRELUDE]
    lines.append("for f in " + " ".join(quote(root + c) for c in cands) + '; do emit "$f"; done')
    lines.append(
        "for d in "
        + " ".join(quote(root + d) for d in dirs)
        + '; do [ -d "$d" ] || continue; r=$(readlink -f -- "$d"); '
        + 'printf \'\\036R %s %s\\n\' "$(b64 "$d")" "$(b64 "$r")"; '
        + 'for f in "$r"/*.conf; do emit "$f"; done; done'
    )
    for key, path in (
        ("hostname", "/proc/sys/kernel/hostname"),
        ("boot_id", "/proc/sys/kernel/random/boot_id"),
    ):
        lines.append(f"printf '\\036V {key} %s\\n' \"$(cat {path} 2>/dev/null | base64 -w0)\"")
    lines.append("printf '\\036V kernel %s\\n' \"$(uname -r | base64 -w0)\"")
    lines.append("printf '\\036V machine %s\\n' \"$(uname -m | base64 -w0)\"")
    bash = quote(root + "/bin/bash")
    lines.append(f"[ -e {bash} ] && printf '\\036V bash %s\\n' \"$(b64 yes)\"")
    for p in ("/etc/machine-id", "/etc/os-release", "/usr/lib/os-release", "/etc/machine-info"):
        lines.append(f"emit {quote(root + p)}")
    if root == "":
        lines.append("printf '\\036V pid1env %s\\n' \"$(base64 -w0 /proc/1/environ 2>/dev/null)\"")
        props = " ".join(f"-p {p}" for p in SHOW_PROPS)
        lines.append(
            "if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then\n"
            "  printf '\\036B 1\\n'\n"
            f"  S=$(systemctl show --no-pager {props} -- {quote(name)} 2>&1); RC=$?\n"
            '  printf \'\\036S %s %s\\n\' "$RC" "$(printf \'%s\' "$S" | base64 -w0)"\n'
            "else printf '\\036B 0\\n'; fi"
        )
    lines.append("flush")
    return "\n".join(lines) + "\n"


def _parse_show(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k in SHOW_PROPS:
            props[k] = v
    return props


def _host_context(r: HostRead, fragment_real: str | None) -> HostContext:
    osr_raw = r.files.get("/etc/os-release") or r.files.get("/usr/lib/os-release") or b""
    osr: dict[str, str] = {}
    for line in osr_raw.decode("utf-8", "replace").splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip() and not k.startswith("#"):
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
                v = v[1:-1]
            osr[k.strip()] = v
    pretty = None
    for line in (r.files.get("/etc/machine-info") or b"").decode("utf-8", "replace").splitlines():
        if line.startswith("PRETTY_HOSTNAME="):
            pretty = line.split("=", 1)[1].strip().strip("\"'") or None
    pid1 = {}
    for item in r.values.get("pid1env", "").encode("utf-8", "surrogateescape").split(b"\0"):
        k, sep, v = item.decode("utf-8", "replace").partition("=")
        if sep:
            pid1[k] = v
    home = pid1.get("HOME", "")
    mid = (r.files.get("/etc/machine-id") or b"").decode().strip() or None
    boot = r.values.get("boot_id", "").strip().replace("-", "") or None
    machine = r.values.get("machine", "").strip()
    return HostContext(
        hostname=r.values.get("hostname", "").strip() or None,
        pretty_hostname=pretty,
        machine_id=mid,
        boot_id=boot,
        kernel_release=r.values.get("kernel", "").strip() or None,
        architecture=ARCHITECTURES.get(machine, machine or None),
        os_release=osr,
        home=home if home.startswith("/") and "/./" not in home else "/root",
        shell=pid1.get("SHELL") or ("/bin/bash" if r.values.get("bash") else "/bin/sh"),
        tmp_dir=pid1.get("TMPDIR") or "/tmp",
        fragment_realpath=fragment_real,
    )


async def read_unit(
    transport: Transport, name: str, *, root: str = "/", timeout: float = 60.0
) -> UnitFiles:
    """The unit `name` as systemd on that host would load it after a daemon-reload.

    root: read a directory tree instead of the live system (an image, a test fixture); then
    systemctl is not consulted. Raises InputError for a unit that does not exist, is masked,
    or whose files systemd would refuse to load; nothing is written on the host.
    """
    if unit_type(name) is None:
        name = name + ".service" if "." not in name else name
        if unit_type(name) is None:
            raise InputError(f"not a unit name: {name!r}", hint="e.g. sglang-k26.service")
    root = "" if root in ("", "/") else root.rstrip("/")
    host = getattr(transport, "host", "host")
    res = await transport.run(_round1_script(name, root), timeout=timeout)
    if res.exit_status != 0 and not res.stdout:
        raise TransportError(
            f"{host}: reading {name} failed (exit {res.exit_status}): "
            + res.stderr.decode("utf-8", "replace").strip()[:300]
        )
    r1 = _parse_records(res.stdout, root)
    show = _parse_show(r1.show or "") if r1.booted and r1.show_rc == 0 else None
    live = show if show is not None else None

    fragment_path: str | None = None
    aliases: list[str] = []
    if show is not None:
        load = show.get("LoadState", "")
        on_disk = any(c in r1.files or c in r1.others for c in unit_file_candidates(name))
        if load == "not-found" and not on_disk:
            raise InputError(
                f"unit {name} not found on {host} (systemctl show: LoadState=not-found)",
                hint="check the name with `systemctl list-unit-files '*sglang*'`",
            )
        if load == "masked":
            raise InputError(f"unit {name} is masked on {host}; remedy will not edit it")
        fragment_path = show.get("FragmentPath") or None
        aliases = [n for n in split_show_list(show.get("Names", "")) if n != name]
    if fragment_path is None:
        for cand in unit_file_candidates(name):
            if cand in r1.files or cand in r1.others:
                fragment_path = cand
                break
    if fragment_path is None:
        dirs = ", ".join(SYSTEM_UNIT_PATH[4:12])
        raise InputError(
            f"unit {name} not found on {host}: no unit file in {dirs} (nor the other unit dirs)",
            hint="check the name; a unit made only of drop-ins is not a unit systemd can start",
        )
    real = r1.links.get(fragment_path) or r1.others.get(fragment_path) or fragment_path
    if real == "/dev/null":
        raise InputError(f"unit {name} is masked on {host} ({fragment_path} -> /dev/null)")
    if real != fragment_path and unit_type(posixpath.basename(real)):
        alias_target = posixpath.basename(real)
        if alias_target != name and alias_target not in aliases:
            aliases.append(alias_target)

    canon = set(r1.realpaths.values())
    dropin_files = [p for p in r1.files if posixpath.dirname(p) in canon and p.endswith(".conf")]
    ordered = order_dropins(dropin_files, name, aliases=aliases, realpaths=r1.realpaths)
    hctx = _host_context(r1, real)

    # round 2: the fragment if it was outside the standard dirs, env files, executables
    fragment_data = r1.files.get(fragment_path)
    if fragment_path in r1.others and fragment_data is None:
        raise InputError(f"{fragment_path} on {host} is not a readable regular file")
    dropins = [SourceFile(p, r1.files[p]) for p in ordered]
    cfg = parse_unit(
        name,
        SourceFile(fragment_path, fragment_data) if fragment_data is not None else None,
        dropins,
        host=hctx,
    )
    if cfg.errors:
        raise InputError(
            f"{name} on {host}: systemd would refuse to load this unit:\n  "
            + "\n  ".join(str(d) for d in cfg.errors),
            hint="fix the unit file first; remedy writes nothing onto a unit systemd rejects",
        )
    need_fragment = fragment_data is None
    env_refs = cfg.environment_files
    files = UnitFiles(
        name=name,
        fragment=SourceFile(fragment_path, fragment_data) if fragment_data is not None else None,
        dropins=dropins,
        host=hctx,
    )
    files.live = live
    if need_fragment or env_refs or cfg.exec_start:
        lines = [_PRELUDE]
        if need_fragment:
            lines.append(f"emit {quote(root + fragment_path)}")
        for ref in env_refs:
            if has_glob(ref.path):
                lines.append(
                    f'for f in {glob_word(root + ref.path)}; do [ -e "$f" ] || continue; '
                    f'printf \'\\036G %s %s\\n\' "$(b64 {quote(root + ref.path)})" "$(b64 "$f")"; '
                    'emit "$f"; done'
                )
            else:
                lines.append(f"emit {quote(root + ref.path)}")
        for cmd in cfg.exec_start:
            if cmd.path.startswith("/"):
                p = quote(root + cmd.path)
                lines.append(f"[ -x {p} ] && printf '\\036X %s\\n' \"$(b64 {p})\"")
        lines.append("flush")
        lines.append("exit 0")
        res2 = await transport.run("\n".join(lines) + "\n", timeout=timeout)
        r2 = _parse_records(res2.stdout, root)
        if need_fragment:
            data = r2.files.get(fragment_path)
            if data is None:
                raise InputError(f"cannot read {fragment_path} on {host}")
            files.fragment = SourceFile(fragment_path, data)
        for ref in env_refs:
            if has_glob(ref.path):
                matches = sorted(
                    set(r2.globs.get(ref.path, [])),
                    key=lambda s: s.encode("utf-8", "surrogateescape"),
                )
                files.env_globs[ref.path] = matches
                for m in matches:
                    files.env_files[m] = r2.files.get(m)
            else:
                files.env_files[ref.path] = r2.files.get(ref.path)
        files.executables = r2.executables
    return files
