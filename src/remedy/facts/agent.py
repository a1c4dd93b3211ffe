"""The controller's side of the host fact agent (remedy.facts.agent_host, issue 18).

Why: on a fleet the hosts' CPU bounds fact collection, and the shell scripts start ~100
processes a host over three SSH sessions. The agent does their work in one python3 process
in one session (login sections, round 1, a look at the login PATH's usual dirs). Safety:
- the interpreter is the host's /usr/bin/python3, run only when remedy.trust's check accepts
  it and by the real path it checked, with -I -S (no site, no user site, no PYTHON* env, no
  cwd on sys.path); the code is remedy's own agent_host.py sent over stdin, never a file
  read from the host;
- what it prints is data: JSON lines of [name, arg, body] (the raw bytes in base64), each
  checked for shape and size, turned into the same Sections the shell batch's stream gives
  and parsed by the same code; nothing in them is run or evaluated here;
- where the host has no usable python3 (missing, untrusted, too old, a crash), the shell batch
  runs as before: same facts either way.
"""

from __future__ import annotations

import binascii
import functools
import importlib.util
import marshal
from importlib import resources

from remedy.facts.sections import Section
from remedy.fileread import json_loads
from remedy.transport.base import OUTPUT_CAP, Transport
from remedy.transport.quote import quote
from remedy.trust import SH_TRUST

PYTHON = "/usr/bin/python3"
MARK = "remedy-facts-agent"  # argv[0] of the wrapper: names the agent in process lists
NO_PYTHON = 90  # /usr/bin/python3 missing or not executable
UNTRUSTED_PYTHON = 91  # /usr/bin/python3 fails the trust check
LINE_CAP = OUTPUT_CAP  # one section: never more than the transport keeps anyway
SECTION_CAP = 200_000  # sections in one answer (a large build host prints a few thousand)


def wrapper(python: str = PYTHON) -> str:
    """sh: trust-check the host's python3 (remedy.trust.SH_TRUST: it and every directory
    above its real path owned by root or us, not writable by others), then exec that real
    path on the agent, which arrives on stdin. No python: exit NO_PYTHON, the caller falls
    back to the shell batch."""
    py = quote(python)
    return (
        SH_TRUST
        + f"[ -f {py} ] && [ -x {py} ] || exit {NO_PYTHON}\n"
        + f"trusted {py} || {{ printf '%s\\n' \"$WHY\" >&2; exit {UNTRUSTED_PYTHON}; }}\n"
        # python sets LC_CTYPE=C.UTF-8 in its own environment when the locale is C (PEP
        # 538), which the session's `env` must not show: LC_ALL=C prevents it, and the agent
        # is told what LC_ALL was so that its copy of the session's environment is the
        # session's
        + 'case ${LC_ALL:+x} in x) exec "$RP" -I -S - ;; esac\n'
        + 'case ${LC_ALL+x} in x) LC_ALL=C exec "$RP" -I -S - LC_ALL-was-empty ;; esac\n'
        + 'LC_ALL=C exec "$RP" -I -S - LC_ALL-was-unset\n'
    )


def agent_source() -> bytes:
    """agent_host.py from remedy's own package (never from the host)."""
    return resources.files("remedy.facts").joinpath("agent_host.py").read_bytes()


@functools.cache
def _bootstrap() -> bytes:
    """The program's head: compiling agent_host.py costs a host ~12 ms, so it also travels
    compiled by this interpreter (marshal); a host whose python has the same bytecode magic
    runs that, any other compiles the source. Both are remedy's own code, built here, and
    travel as base64 literals (a repr of the bytes, all escapes, took the host's tokenizer
    ~5 ms more)."""
    src = agent_source()
    code = marshal.dumps(compile(src, "remedy-facts-agent", "exec", dont_inherit=True))

    def b64(data: bytes) -> bytes:
        return b"_a2b('" + binascii.b2a_base64(data, newline=False) + b"')"

    return (
        b"from binascii import a2b_base64 as _a2b\n"
        b"try:\n"
        b"    import _frozen_importlib_external as _fie\n"
        b"    _magic = _fie.MAGIC_NUMBER\n"
        b"except (ImportError, AttributeError):\n"
        b"    _magic = None\n"
        b"if _magic == " + repr(importlib.util.MAGIC_NUMBER).encode() + b":\n"
        b"    import marshal\n"
        b"    exec(marshal.loads(" + b64(code) + b"))\n"
        b"else:\n"
        b"    exec(compile(" + b64(src) + b", 'remedy-facts-agent', 'exec'))\n"
    )


def program(request: dict[str, object]) -> bytes:
    """The agent plus the call that runs `request`: remedy's own constants (str, lists, bools)
    written as a Python literal by ascii() (the host needs no json module to read it)."""
    return _bootstrap() + b"main(" + ascii(request).encode("ascii") + b")\n"


def command(python: str = PYTHON) -> list[str]:
    return ["sh", "-c", wrapper(python), MARK]


def _text(s: str) -> str:
    """An agent string (raw bytes in base64) -> what the shell stream's decoding gives."""
    return binascii.a2b_base64(s.encode("ascii")).decode("utf-8", "replace")


def parse_output(stdout: bytes) -> list[Section]:
    """JSON lines -> Sections. Stops at the first line that is not a well-formed section (a
    cut-off answer gives fewer sections, as a cut-off shell stream does: no `end`)."""
    lines = [ln for ln in stdout.split(b"\n") if ln]
    if 0 < len(lines) <= SECTION_CAP and len(stdout) <= LINE_CAP:
        try:  # the usual answer, whole and well-formed: one json.loads for all of it
            return [_section(item) for item in json_loads(b"[" + b",".join(lines) + b"]")]
        except (ValueError, UnicodeEncodeError, TypeError):
            pass  # not whole: the well-formed lines before the first bad one, below
    out: list[Section] = []
    for line in lines:
        if len(line) > LINE_CAP or len(out) >= SECTION_CAP:
            break
        try:
            out.append(_section(json_loads(line)))
        except (ValueError, UnicodeEncodeError, TypeError):  # (binascii.Error: a ValueError)
            break
    return out


def _section(item: object) -> Section:
    """One [name, arg, body] of base64 strings -> a Section; TypeError for any other shape."""
    if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)):
        raise TypeError("not a section")
    name, arg, body = (_text(x) for x in item)
    return Section(name=name, arg=arg, body=body)


async def run_agent(
    transport: Transport, request: dict[str, object], timeout: float
) -> list[Section] | None:
    """The agent's sections, or None where this host cannot run it (no trusted python3, or it
    failed before answering in full): the caller then runs the shell batch."""
    r = await transport.run(command(PYTHON), timeout=timeout, input=program(request))
    if r.exit_status in (NO_PYTHON, UNTRUSTED_PYTHON):
        return None
    sections = parse_output(r.stdout)
    if r.exit_status != 0 or not sections or sections[-1].name != "end":
        return None
    return sections
