"""Host basics: OS, CPUs, memory, host compilers (nvcc's -ccbin and FlashInfer's CXX)."""

from __future__ import annotations

from dataclasses import dataclass, field

from remedy.facts import parsers as p
from remedy.facts.sections import DEFAULT_TOKEN, Section, split_sections


@dataclass
class HostFacts:
    os: str | None = None
    kernel: str | None = None
    cpus: int | None = None
    memory_mib: int | None = None
    compilers: dict[str, str] = field(default_factory=dict)
    home: str | None = None
    user: str | None = None
    shell: str | None = None


class HostCollector:
    """Sections host.os, host.uname, host.cpus, host.mem, host.cc, host.who, and
    `host.cc.untrusted NAME WHY` for a compiler on PATH that remedy may not run (remedy.trust:
    root's PATH often starts with a venv's bin, which its service user may own)."""

    name = "host"

    def command(self) -> str:
        """Needs SH_TRUST (the batch library has it). A trusted compiler runs by its real path
        ($RP), so a link swapped after the check cannot redirect it; its output line is the
        same as before. An untrusted one is named in its own section, then host.cc resumes."""
        return (
            "m host.os; cat /etc/os-release 2>/dev/null\n"
            "m host.uname; uname -srm 2>/dev/null\n"
            "m host.cpus; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null\n"
            "m host.mem; grep -m1 '^MemTotal:' /proc/meminfo 2>/dev/null\n"
            "m host.cc\n"
            "for c in gcc g++ cc c++ clang; do\n"
            "  CV=$(PATH=${SP:-$PATH}; command -v $c 2>/dev/null) || continue\n"
            '  if trusted "$CV"; then\n'
            "    printf '%s\\t%s\\n' $c "
            '"$("$RP" -dumpfullversion -dumpversion 2>/dev/null | head -n1)"\n'
            '  else m host.cc.untrusted "$c" "$WHY"; m host.cc; fi\n'
            "done\n"
            "m host.who; printf 'HOME=%s\\nUSER=%s\\nSHELL=%s\\n' \"${HOME-}\" "
            '"$(id -un 2>/dev/null)" "${SHELL-}"\n'
        )

    def notes(self, sections: list[Section]) -> list[str]:
        """Why a compiler on PATH was not run (kept out of HostFacts: its recorded parses)."""
        out = []
        for s in sections:
            if s.name == "host.cc.untrusted":
                name, _, why = s.arg.partition(" ")
                out.append(f"{name} not executed: {why}")
        return out

    def parse(self, stdout: str, token: str = DEFAULT_TOKEN) -> HostFacts:
        return self.parse_sections(split_sections(stdout, token))

    def parse_sections(self, sections: list[Section]) -> HostFacts:
        """A line holding a NUL is a garbled reply (no os-release line, compiler version or
        uname has one) and is left out: Facts refuses a NUL anywhere, so one in a compiler's
        version ended the whole collection in a validation error (exit 70)."""
        h = HostFacts()
        for s in sections:
            if "\0" in s.body:
                s = Section(
                    s.name, s.arg, "\n".join(x for x in s.body.split("\n") if "\0" not in x)
                )
            if s.name == "host.os":
                h.os = p.parse_os_release(s.body)
            elif s.name == "host.uname":
                h.kernel = s.body.strip() or None
            elif s.name == "host.cpus":
                h.cpus = p.parse_int(s.body)
            elif s.name == "host.mem":
                h.memory_mib = p.parse_meminfo_mib(s.body)
            elif s.name == "host.cc":
                for line in s.body.splitlines():
                    name, _, version = line.partition("\t")
                    if name and version.strip():
                        h.compilers[name.strip()] = version.strip()
            elif s.name == "host.who":
                kv = p.parse_key_values(s.body)
                h.home = kv.get("HOME") or None
                h.user = kv.get("USER") or None
                h.shell = kv.get("SHELL") or None
        return h
