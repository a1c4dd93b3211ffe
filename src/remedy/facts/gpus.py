"""GPUs, from nvidia-smi's CSV query.

No nvidia-smi is a fact (a CPU host, a container without the driver mount): no GPUs, no
note. An nvidia-smi that runs but cannot talk to the driver is also no GPUs, plus a note,
because that is what a diagnosis must explain before anything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from remedy.facts.sections import DEFAULT_TOKEN, Section, split_sections
from remedy.model import Gpu

QUERY_FIELDS = ("index", "name", "compute_cap", "driver_version", "memory.total")
QUERY_ARGS = "--query-gpu=" + ",".join(QUERY_FIELDS) + " --format=csv,noheader"
QUERY = "nvidia-smi " + QUERY_ARGS


@dataclass
class GpuFacts:
    gpus: list[Gpu] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    present: bool = False  # nvidia-smi exists


def _na(v: str) -> bool:
    return v.strip().strip("[]").upper() in ("N/A", "NOT SUPPORTED", "UNKNOWN ERROR", "")


def _mib(v: str) -> int | None:
    v = v.strip()
    if _na(v):
        return None
    num, _, unit = v.partition(" ")
    try:
        n = float(num)
    except ValueError:
        return None
    unit = unit.strip().lower()
    scale = {"": 1, "mib": 1, "gib": 1024, "kib": 1 / 1024}.get(unit)
    return int(n * scale) if scale is not None else None


def parse_query_gpu(
    text: str, fields: tuple[str, ...] = QUERY_FIELDS, exit_status: int = 0
) -> GpuFacts:
    """Parse `nvidia-smi --query-gpu=<fields> --format=csv[,noheader]` output.

    A header line (format=csv) is recognised and skipped. Lines that are not CSV rows of the
    right width are collected as a note (that is how nvidia-smi reports driver trouble).
    """
    res = GpuFacts(present=True)
    if exit_status != 0:
        said = " ".join(ln.strip() for ln in text.splitlines() if ln.strip())[:300]
        if exit_status == 124:
            res.notes.append(f"nvidia-smi hung and was killed after 20 s (driver wedged?): {said}")
        else:
            res.notes.append(f"nvidia-smi failed (exit {exit_status}): {said or 'no output'}")
        return res
    want = [f.strip() for f in fields]
    junk: list[str] = []
    first = True
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        cells = [c.strip() for c in line.split(",")]
        names = [c.split(" [")[0].strip() for c in cells]
        if first and (names == want or (names and names[0] == want[0])):
            first = False
            continue  # header: "name, compute_cap, memory.total [MiB]" (aliases canonicalised)
        first = False
        if len(cells) != len(want):
            junk.append(line)
            continue
        row = dict(zip(want, cells, strict=True))
        try:
            index = int(row.get("index", len(res.gpus)))
        except ValueError:
            junk.append(line)
            continue
        cap = row.get("compute_cap", "")
        res.gpus.append(
            Gpu(
                index=index,
                name=row.get("name", "unknown") or "unknown",
                compute_cap="unknown" if _na(cap) else cap,
                driver=None if _na(row.get("driver_version", "")) else row.get("driver_version"),
                memory_mib=_mib(row.get("memory.total", "")),
            )
        )
    if junk:
        res.notes.append(f"nvidia-smi printed lines that are not GPU rows: {' '.join(junk)[:300]}")
    return res


class GpuCollector:
    """Section `gpu`: the query output and its exit status; `gpu.absent` without nvidia-smi;
    `gpu.untrusted WHY` when the nvidia-smi on PATH is not one remedy may run (remedy.trust:
    root's PATH often starts with a venv's bin, which its service user may own)."""

    name = "gpu"

    def command(self) -> str:
        """Needs SH_TRUST (the batch library has it)."""
        return (
            "if CV=$(PATH=${SP:-$PATH}; command -v nvidia-smi 2>/dev/null); then\n"
            '  if trusted "$CV"; then\n'
            f'    m gpu; to 20 "$RP" {QUERY_ARGS} 2>&1; m gpu.rc $?\n'
            '  else m gpu.untrusted "$WHY"; fi\n'
            "else m gpu.absent; fi\n"
        )

    def parse(self, stdout: str, token: str = DEFAULT_TOKEN) -> GpuFacts:
        return self.parse_sections(split_sections(stdout, token))

    def parse_sections(self, sections: list[Section]) -> GpuFacts:
        body: str | None = None
        rc = 0
        for s in sections:
            if s.name == "gpu.absent":
                return GpuFacts()
            if s.name == "gpu.untrusted":
                return GpuFacts(present=True, notes=[f"nvidia-smi not executed: {s.arg}"])
            if s.name == "gpu":
                body = s.body
            elif s.name == "gpu.rc":
                rc = _int(s.arg, 0)
        if body is None:
            return GpuFacts(notes=["nvidia-smi output missing (collection cut off?)"])
        return parse_query_gpu(body, exit_status=rc)


def _int(s: str, default: int) -> int:
    try:
        return int(s.strip())
    except ValueError:
        return default
