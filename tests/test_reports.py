"""`--report`: the failure chain and the blast radius drawn (issue 19).

The HTML is parsed (every finding, step, symptom and probe is a node of the SVG and a row of
its tables; nothing from a host or log is markup; no script, no fetch) and rendered by a real
headless browser, Debian's chromium (scripts/setup-sandbox.sh installs it): the screenshot
must not be blank and the browser must log no script error or blocked load. The markdown's
Mermaid block names every finding and step.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from remedy.cli import main
from remedy.knowledge.loader import load_knowledge
from remedy.model import Plan
from remedy.planner.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "seed-sm120-pip-cu13"


def cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


class Page(HTMLParser):
    """Node ids of the SVG, table text, and anything that could run or fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.node_ids: list[str] = []
        self.tags: set[str] = set()
        self.fetching: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        a = dict(attrs)
        if tag == "g" and a.get("data-id"):
            self.node_ids.append(a["data-id"] or "")
        for k, v in attrs:
            if k.startswith("on") or (k in ("src", "href") and v and not v.startswith("#")):
                self.fetching.append(f"<{tag} {k}={v}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def plan_html(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Plan]:
    d = tmp_path_factory.mktemp("report")
    assert (
        cli("plan", "--example", EXAMPLE, "--out", str(d / "p.json"), "--report", str(d / "p.html"))
        == 0
    )
    return d / "p.html", Plan.model_validate_json((d / "p.json").read_text())


def test_plan_report_draws_every_finding_step_and_probe(plan_html):
    path, plan = plan_html
    page = parse(path.read_text())
    assert "svg" in page.tags and "script" not in page.tags
    assert page.fetching == []
    ids = page.node_ids
    text = " ".join(page.text)
    assert plan.findings and plan.steps and plan.symptoms
    for i, f in enumerate(plan.findings):
        assert f"finding:{i}:{f.rule}" in ids
        assert f.rule in text and f.message in text
    for i, s in enumerate(plan.steps, 1):
        assert f"step:{i}" in ids and f"probe:{i}:{s.probe}" in ids
        assert s.title in text
        for c in s.commands:
            assert c in text  # every command, whole, in the steps table
    for s in plan.symptoms:
        assert f"sig:{s.signature}" in ids and f"line:{s.source}:{s.line}" in ids
    for v in plan.verification:
        assert f"verify:{v.consumer}" in ids


def test_plan_report_markdown_has_a_mermaid_chain(tmp_path: Path):
    out = tmp_path / "chain.md"
    assert cli("plan", "--example", EXAMPLE, "--report", str(out)) == 0
    md = out.read_text()
    block = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block.startswith("flowchart LR")
    kb = load_knowledge()
    from remedy.inputs import get_example, load_facts_file, scan_logs

    ex = get_example(EXAMPLE)
    symptoms, _, wrappers = scan_logs(ex.logs)
    plan = make_plan(kb, load_facts_file(ex.facts_path), symptoms, wrappers=wrappers)
    for f in plan.findings:
        assert f'["{f.rule}"]' in block
    for i, s in enumerate(plan.steps, 1):
        assert f"{i}. " in block and s.probe in block
    assert block.count(" --> ") >= len(plan.steps) * 2


def test_hostile_text_stays_text(tmp_path: Path):
    """A log line or path with markup is escaped in the HTML and the Mermaid block."""
    from remedy.inputs import get_example, load_facts_file
    from remedy.model import Symptom
    from remedy.report.files import plan_report

    ex = get_example(EXAMPLE)
    evil = '<script>alert(1)</script>"]:::x\n click n0 "javascript:alert(1)"'
    facts = load_facts_file(ex.facts_path)
    sym = Symptom(signature="ninja-build-failed", line=1, text=evil, source=f"/tmp/{evil}.log")
    plan = make_plan(load_knowledge(), facts, [sym])
    html = plan_report(plan, "html")
    assert "<script" not in html and "&lt;script&gt;" in html
    page = parse(html)
    assert "script" not in page.tags and page.fetching == []
    md = plan_report(plan, "md")
    block = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    # every line is one of the shapes remedy writes: text never becomes a statement
    shapes = re.compile(
        r'flowchart LR|  subgraph L\d+\["[^"]*"\]|  end|    n\d+\["[^"\n]*"\]:::\w+'
        r'|  n\d+ (?:-- "[^"]*" )?--> n\d+|  classDef \w+ [\w:#,]+'
    )
    bad = [ln for ln in block.splitlines() if not shapes.fullmatch(ln)]
    assert not bad, bad
    assert "<script" not in block


def test_impact_report_draws_the_blast_radius(tmp_path: Path):
    out = tmp_path / "blast.html"
    rc = cli(
        "impact", "CUDA_HOME=/dev/null", "--example", "seed-sm120-system-cuda128",
        "--json", "--report", str(out),
    )  # fmt: skip
    assert rc == 0
    page = parse(out.read_text())
    ids = set(page.node_ids)
    assert "change:CUDA_HOME" in ids
    for comp in ("flashinfer-jit", "sglang-jit-kernel", "torch-cpp-extension"):
        assert f"consumer:{comp}" in ids
    assert "down:sglang-server" in ids
    assert "NotADirectoryError" in " ".join(page.text)


def test_report_of_a_saved_plan_and_of_a_fleet_report(tmp_path: Path, plan_html):
    _, plan = plan_html
    saved = tmp_path / "plan.json"
    saved.write_text(plan.model_dump_json())
    assert cli("report", str(saved), "--out", str(tmp_path / "r.html")) == 0
    assert "step:1" in parse((tmp_path / "r.html").read_text()).node_ids
    fleet = ROOT / "docs" / "examples" / "fleet-run.json"
    if fleet.exists():
        assert cli("report", str(fleet), "--out", str(tmp_path / "f.html")) == 0
        ids = parse((tmp_path / "f.html").read_text()).node_ids
        assert any(i.startswith("host:") for i in ids) and any(
            i.startswith("outcome:") for i in ids
        )
    # not a report: a clear error, exit 2
    facts = ROOT / "src/remedy/examples" / EXAMPLE / "facts.yaml"
    assert cli("report", str(facts), "--out", str(tmp_path / "x.html")) == 2
    assert cli("report", str(saved), "--out", str(tmp_path / "x.pdf")) == 2
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "x.pdf").exists()


# ---- a real browser --------------------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("REMEDY_STRICT_SKIPS") == "1":
        pytest.fail("chromium is not installed: scripts/setup-sandbox.sh installs it (apt)")
    pytest.skip("chromium is not installed (scripts/setup-sandbox.sh installs it)")


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of a PNG (8-bit, colour types 2/6, no interlace)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = ctype = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows


@pytest.mark.parametrize("which", ["plan", "impact"])
def test_the_report_renders_in_headless_chromium(tmp_path: Path, which: str):
    browser = _chromium()
    page = tmp_path / f"{which}.html"
    args = (
        ["plan", "--example", EXAMPLE]
        if which == "plan"
        else ["impact", "CUDA_HOME=/dev/null", "--example", "seed-sm120-system-cuda128"]
    )
    assert cli(*args, "--report", str(page)) == 0
    shot = tmp_path / "shot.png"
    env = dict(os.environ, HOME=str(tmp_path))  # chromium's profile and crash dirs go here
    r = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900",
         "--enable-logging=stderr", "--v=0", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    # script errors and blocked loads reach chromium's log as console messages
    console = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not [ln for ln in console if "rror" in ln or "Refused" in ln], console
    w, h, rows = png_pixels(shot.read_bytes())
    assert (w, h) == (1400, 900)
    # not blank: many pixels differ from the background, in more than a few colours
    bpp = len(rows[0]) // w
    bg = rows[0][:3]
    inked = colours = 0
    seen: set[bytes] = set()
    for row in rows[::3]:
        for x in range(0, w * bpp, bpp * 3):
            px = row[x : x + 3]
            inked += px != bg
            if len(seen) < 64:
                seen.add(px)
    colours = len(seen)
    assert inked > 2000 and colours >= 8, (inked, colours)
    # and the boxes of the chain are there: the red of a failing node and the green of a fix
    flat = b"".join(rows)
    assert bytes.fromhex("fde2e1") in flat and bytes.fromhex("dff3e4") in flat
