"""Unit specifiers (`%n`, `%i`, `%h`, `%H` …) as systemd 252's unit_full_printf() expands them.

Why: `Environment=CUDA_HOME=%h/cuda` or `EnvironmentFile=/etc/sglang/%i.env` only mean
something once expanded. Specifiers that depend on the unit name or on the system manager's
fixed directories are resolved here always; the ones that depend on the host (hostname,
machine id, kernel, os-release) only when a HostContext says their value, else they are kept
verbatim and reported, never guessed. Source: src/core/unit-printf.c, src/shared/specifier.c.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

# specifier.c POSSIBLE_SPECIFIERS: an unknown one of these makes systemd drop the word
_POSSIBLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%")
UNIT_TYPES = (
    "service",
    "mount",
    "swap",
    "socket",
    "target",
    "device",
    "automount",
    "timer",
    "path",
    "slice",
    "scope",
)


class SpecifierError(ValueError):
    """systemd could not resolve a specifier: it logs and ignores the whole word."""


@dataclass(frozen=True)
class HostContext:
    """What host-dependent specifiers resolve to on one host; None = not known here."""

    hostname: str | None = None  # %H (%l is its first label)
    pretty_hostname: str | None = None  # %q
    machine_id: str | None = None  # %m
    boot_id: str | None = None  # %b
    kernel_release: str | None = None  # %v
    architecture: str | None = None  # %a, systemd's names: x86-64, arm64 …
    os_release: dict[str, str] = field(default_factory=dict)  # %o %w %W %B %M %A
    home: str = "/root"  # %h of the system manager (PID 1 runs as root)
    shell: str = "/bin/bash"  # %s: $SHELL of PID 1, else /bin/bash if it exists, else /bin/sh
    tmp_dir: str = "/tmp"  # %T
    fragment_realpath: str | None = None  # %y (symlinks resolved on the host)


# uname -m -> systemd's architecture names (src/basic/architecture.c)
ARCHITECTURES = {
    "x86_64": "x86-64",
    "aarch64": "arm64",
    "aarch64_be": "arm64-be",
    "i386": "x86",
    "i486": "x86",
    "i586": "x86",
    "i686": "x86",
    "ppc64le": "ppc64-le",
    "ppc64": "ppc64",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "armv7l": "arm",
    "loongarch64": "loongarch64",
}


def unit_type(name: str) -> str | None:
    """`foo@x.service` -> `service`; None when the suffix is no unit type."""
    _, dot, suffix = name.rpartition(".")
    return suffix if dot and suffix in UNIT_TYPES else None


def unit_prefix(name: str) -> str:
    """unit_name_to_prefix(): everything before the first `@`, else before the last `.`."""
    at = name.find("@")
    return name[:at] if at >= 0 else name.rpartition(".")[0]


def unit_instance(name: str) -> str | None:
    """unit_name_to_instance(): between the first `@` and the last `.`; None when plain."""
    at = name.find("@")
    if at < 0:
        return None
    return name[at + 1 :].rpartition(".")[0]


def template_name(name: str) -> str | None:
    """`foo@bar.service` -> `foo@.service`; None for a unit that is no instance."""
    inst = unit_instance(name)
    if not inst:
        return None
    return unit_prefix(name) + "@." + name.rpartition(".")[2]


def unit_name_unescape(text: str) -> str:
    """unit-name.c unit_name_unescape(): `-` -> `/`, `\\xHH` -> the byte."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "-":
            out += b"/"
        elif c == "\\":
            digits = text[i + 2 : i + 4]
            if text[i + 1 : i + 2] != "x" or len(digits) != 2:
                raise SpecifierError(f"bad escape in unit name part {text!r}")
            try:
                out.append(int(digits, 16))
            except ValueError:
                raise SpecifierError(f"bad escape in unit name part {text!r}") from None
            i += 3
        else:
            out += c.encode("utf-8", "surrogateescape")  # names read from a host may hold any byte
        i += 1
    return out.decode("utf-8", "surrogateescape")


def unit_name_path_unescape(text: str) -> str:
    """unit-name.c unit_name_path_unescape(): `-` is `/`; refuses `a-` and `a--b`."""
    if not text:
        raise SpecifierError("empty path in unit name")
    if text == "-":
        return "/"
    w = unit_name_unescape(text)
    if w.startswith("/") or w.endswith("/"):
        raise SpecifierError(f"unit name part {text!r} is no normalized path")
    path = "/" + w
    if "//" in path or any(p in (".", "..") for p in path.split("/")[1:]):
        raise SpecifierError(f"unit name part {text!r} is no normalized path")
    return path


_HOST_DEPENDENT = {
    "a": "architecture",
    "A": "os-release IMAGE_VERSION",
    "b": "boot id",
    "B": "os-release BUILD_ID",
    "H": "hostname",
    "l": "short hostname",
    "q": "pretty hostname",
    "m": "machine id",
    "M": "os-release IMAGE_ID",
    "o": "os-release ID",
    "v": "kernel release",
    "w": "os-release VERSION_ID",
    "W": "os-release VARIANT_ID",
    "c": "cgroup path (deprecated)",
    "r": "cgroup slice (deprecated)",
    "R": "cgroup root (deprecated)",
}

_MANAGER_DIRS = {
    "C": "/var/cache",
    "E": "/etc",
    "L": "/var/log",
    "S": "/var/lib",
    "t": "/run",
    "V": "/var/tmp",
}


def _lookup(
    spec: str, unit: str, fragment_path: str | None, host: HostContext | None
) -> str | None:
    """The expansion of one specifier letter; None when it depends on an unknown host fact.

    Raises SpecifierError where systemd's lookup fails (it then ignores the word).
    """
    inst = unit_instance(unit)
    prefix = unit_prefix(unit)
    if spec == "n":
        return unit
    if spec == "N":
        return unit.rpartition(".")[0]
    if spec == "p":
        return prefix
    if spec == "P":
        return unit_name_unescape(prefix)
    if spec == "i":
        return inst or ""
    if spec == "I":
        return unit_name_unescape(inst or "")
    if spec in ("j", "J"):
        last = prefix.rpartition("-")[2] if "-" in prefix else prefix
        return unit_name_unescape(last) if spec == "J" else last
    if spec == "f":
        return unit_name_path_unescape(inst if inst is not None else prefix)
    if spec in ("y", "Y"):
        real = (host.fragment_realpath if host else None) or fragment_path
        if not real:
            raise SpecifierError("unit has no fragment path")
        return real if spec == "y" else posixpath.dirname(real)
    if spec in _MANAGER_DIRS:
        return _MANAGER_DIRS[spec]
    if spec == "d":
        return f"/run/credentials/{unit}"
    if spec in ("u", "g"):
        return "root"
    if spec in ("U", "G"):
        return "0"
    h = host or HostContext()
    if spec == "h":
        return h.home
    if spec == "s":
        return h.shell
    if spec == "T":
        return h.tmp_dir
    if host is None:
        return None
    osr = host.os_release
    table: dict[str, str | None] = {
        "a": host.architecture,
        "A": osr.get("IMAGE_VERSION", ""),
        "b": host.boot_id,
        "B": osr.get("BUILD_ID", ""),
        "H": host.hostname,
        "l": host.hostname.split(".")[0] if host.hostname else None,
        "q": host.pretty_hostname or host.hostname,
        "m": host.machine_id,
        "M": osr.get("IMAGE_ID", ""),
        "o": osr.get("ID", ""),
        "v": host.kernel_release,
        "w": osr.get("VERSION_ID", ""),
        "W": osr.get("VARIANT_ID", ""),
    }
    return table.get(spec)


def expand(
    word: bytes,
    unit: str,
    *,
    fragment_path: str | None = None,
    host: HostContext | None = None,
    unresolved: list[str] | None = None,
) -> bytes:
    """specifier.c specifier_printf() with unit_full_printf()'s table.

    `%%` is `%`; an unknown letter or digit raises SpecifierError (systemd drops the word);
    any other character after `%`, and a trailing `%`, stay verbatim. A host-dependent
    specifier whose value is unknown stays verbatim and is appended to `unresolved`.
    """
    if b"%" not in word:
        return word
    out = bytearray()
    i, n = 0, len(word)
    while i < n:
        b = word[i]
        if b != 0x25:  # '%'
            out.append(b)
            i += 1
            continue
        if i + 1 >= n:
            out.append(b)
            break
        spec = chr(word[i + 1])
        i += 2
        if spec == "%":
            out += b"%"
            continue
        if spec not in _POSSIBLE:
            out += b"%" + bytes([ord(spec)])
            continue
        known = spec in _HOST_DEPENDENT or spec in "nNpPiIjJfyYdhsuUgGT" or spec in _MANAGER_DIRS
        if not known:
            raise SpecifierError(f"unknown specifier %{spec}")
        if spec in "crR":
            value = None
        else:
            value = _lookup(spec, unit, fragment_path, host)
        if value is None:
            if unresolved is not None:
                unresolved.append(f"%{spec} ({_HOST_DEPENDENT.get(spec, spec)})")
            out += b"%" + spec.encode()
            continue
        out += value.encode("utf-8", "surrogateescape")
    return bytes(out)
