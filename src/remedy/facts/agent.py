"""The controller's side of the host fact agent (remedy.facts.agent_host, issue 18).

Why: on a fleet the hosts' CPU bounds fact collection, and the shell batch starts ~70
processes a host. The agent does the batch in one python3 process on the host. Safety:
- the interpreter is the host's /usr/bin/python3, run only when remedy.trust's check accepts
  it and by the real path it checked, with -I -S (no site, no user site, no PYTHON* env, no
  cwd on sys.path); the code is remedy's own agent_host.py sent over stdin, never a file
  read from the host;
- what it prints is data: JSON lines of [name, arg, body], each checked for shape and size,
  turned into the same Sections the shell batch's stream gives and parsed by the same code;
  nothing in them is run or evaluated here;
- where the host has no usable python3 (missing, untrusted, too old, a crash), the shell batch
  runs as before: same facts either way.
"""

from __future__ import annotations

import json
from importlib import resources

from remedy.facts.sections import Section
from remedy.transport.base import OUTPUT_CAP, Transport
from remedy.trust import SH_TRUST

PYTHON = "/usr/bin/python3"
MARK = "remedy-facts-agent"  # argv[0] of the wrapper: names the agent in process lists
NO_PYTHON = 90  # /usr/bin/python3 missing or not executable
UNTRUSTED_PYTHON = 91  # /usr/bin/python3 fails the trust check
LINE_CAP = OUTPUT_CAP  # one section: never more than the transport keeps anyway
SECTION_CAP = 200_000  # sections in one answer (a large build host prints a few thousand)

# sh: trust-check the host's python3 (remedy.trust.SH_TRUST: it and every directory above its
# real path owned by root or us, not writable by others), then exec that real path on the
# agent, which arrives on stdin. No python: exit NO_PYTHON, the caller falls back.
WRAPPER = (
    SH_TRUST
    + f"[ -f {PYTHON} ] && [ -x {PYTHON} ] || exit {NO_PYTHON}\n"
    + f"trusted {PYTHON} || {{ printf '%s\\n' \"$WHY\" >&2; exit {UNTRUSTED_PYTHON}; }}\n"
    + 'exec "$RP" -I -S -\n'
)


def agent_source() -> bytes:
    """agent_host.py from remedy's own package (never from the host)."""
    return resources.files("remedy.facts").joinpath("agent_host.py").read_bytes()


def program(request: dict[str, object]) -> bytes:
    """The agent plus the call that runs `request`. The request goes in as a JSON text inside
    a Python string literal (ASCII: json.dumps escapes the rest), parsed by the agent."""
    text = json.dumps(request, ensure_ascii=True)
    return agent_source() + b"\nmain(" + ascii(text).encode("ascii") + b")\n"


def command() -> list[str]:
    return ["sh", "-c", WRAPPER, MARK]


def _text(s: str) -> str:
    """An agent string (raw bytes as latin-1) -> what the shell stream's decoding gives."""
    return s.encode("latin-1", "replace").decode("utf-8", "replace")


def parse_output(stdout: bytes) -> list[Section]:
    """JSON lines -> Sections. Stops at the first line that is not a well-formed section (a
    cut-off answer gives fewer sections, as a cut-off shell stream does: no `end`)."""
    out: list[Section] = []
    for line in stdout.split(b"\n"):
        if not line:
            continue
        if len(line) > LINE_CAP or len(out) >= SECTION_CAP:
            break
        try:
            item = json.loads(line)
        except ValueError:
            break
        if not (
            isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)
        ):
            break
        name, arg, body = item
        out.append(Section(name=_text(name), arg=_text(arg), body=_text(body)))
    return out


async def run_agent(
    transport: Transport, request: dict[str, object], timeout: float
) -> list[Section] | None:
    """The agent's sections, or None where this host cannot run it (no trusted python3, or it
    failed before answering in full): the caller then runs the shell batch."""
    r = await transport.run(command(), timeout=timeout, input=program(request))
    if r.exit_status in (NO_PYTHON, UNTRUSTED_PYTHON):
        return None
    sections = parse_output(r.stdout)
    if r.exit_status != 0 or not sections or sections[-1].name != "end":
        return None
    return sections
