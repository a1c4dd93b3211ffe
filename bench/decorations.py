#!/usr/bin/env python3
"""Decorations: top-1 on the template table when every line carries a collector's prefix.

Why: real logs reach remedy decorated, each line prefixed by whatever collected it (a vLLM
worker's process tag, Ray's actor tag, `docker compose logs`, `kubectl logs --prefix`, a CI
runner's timestamp, a Python logging format, colour codes, a Markdown quote in an issue). The
message a signature describes is the same under each; this takes every template row WITH a
class (tests/fixtures/templates/index.yaml), applies each decoration below to the lines of its
log, diagnoses it log-only (as bench/breadth.py and tests/test_templates.py do) and prints, per
decoration, the rows whose top-1 is right, and the rows that change against no decoration.

Every decoration is a shape upstream code writes; ``DECORATIONS`` cites it.

    python bench/decorations.py --ref 6598894a --ref WORKTREE   # before / after, same run
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tests" / "fixtures" / "templates"
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "bench"))
from generalize import _extract, _git  # noqa: E402


def _prefix(p: str) -> Callable[[str], str]:
    def deco(text: str) -> str:
        return "".join(p + line for line in text.splitlines(keepends=True))

    return deco


# GNU grep --color=always (src/grep.c print_line_middle; GREP_COLORS default ms=01;31 and the
# "\33[K" erase-line it adds): each match wrapped, the rest of the line untouched
_GREP_WORDS = re.compile(r"(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]atal|FATAL|[Ww]arning|WARNING)")


def _grep_color(text: str) -> str:
    return _GREP_WORDS.sub(lambda m: f"\x1b[01;31m\x1b[K{m.group(0)}\x1b[m\x1b[K", text)


# GCC -fdiagnostics-color=always (gcc/diagnostic.cc diagnostic_build_prefix, locus "01",
# error "01;31", warning "01;35", note "01;36"; gcc/pretty-print.cc colorize_start/stop):
# the location and the kind word of a compiler diagnostic coloured
_GCC_DIAG = re.compile(r"^(\S[^:\n]*:\d+(?::\d+)?:) (fatal error|error|warning|note): ", re.M)
_GCC_KIND = {"fatal error": "01;31", "error": "01;31", "warning": "01;35", "note": "01;36"}


def _gcc_color(text: str) -> str:
    return _GCC_DIAG.sub(
        lambda m: (
            f"\x1b[01m\x1b[K{m.group(1)}\x1b[m\x1b[K "
            f"\x1b[{_GCC_KIND[m.group(2)]}m\x1b[K{m.group(2)}: \x1b[m\x1b[K"
        ),
        text,
    )


# torch._inductor.exc.InductorError (torch/_inductor/exc.py; raised around a lowering's
# exception in torch/_inductor/compile_fx.py): the final exception line reads
# "torch._inductor.exc.InductorError: OSError: <message>"
_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception): \S.*$", re.M)


def _inductor_wrap(text: str) -> str:
    last = None
    for last in _EXC_LINE.finditer(text):  # noqa: B007
        pass
    if last is None:
        return text
    return text[: last.start()] + "torch._inductor.exc.InductorError: " + text[last.start() :]


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


# name -> (function, the upstream code that writes the shape)
DECORATIONS: dict[str, tuple[Callable[[str], str], str]] = {
    "none": (lambda t: t, "the template as recorded"),
    "journald": (
        _prefix("May 25 20:37:37 gpu-node-3 python3[73647]: "),
        "systemd src/journal/journalctl (output short): 'MMM DD HH:MM:SS host ident[pid]: '",
    ),
    "sglang-rank": (
        _prefix("[2026-11-29 18:15:55 TP0] "),
        "sgl-project/sglang python/sglang/srt/utils.py configure_logger: '[%(asctime)s TP0] '",
    ),
    "vllm-proc": (
        _prefix("(EngineCore_DP0 pid=1815813) (Worker_TP0 pid=1815836) "),
        "vllm-project/vllm vllm/utils/system_utils.py _add_prefix (NO_COLOR / not a tty): "
        "'(worker_name pid=N) ', nested by the engine core and its workers",
    ),
    "vllm-proc-color": (
        _prefix("\x1b[1;36m(EngineCore_DP0 pid=1815813)\x1b[0;0m "),
        "vllm-project/vllm vllm/utils/system_utils.py _add_prefix: CYAN '(name pid=N)' RESET",
    ),
    "vllm-logger": (
        _prefix("ERROR 09-17 23:37:06 [multiproc_executor.py:671] "),
        "vllm-project/vllm vllm/logger.py _FORMAT '%(levelname)s %(asctime)s "
        "[%(fileinfo)s:%(lineno)d] %(message)s' (datefmt %m-%d %H:%M:%S); "
        "vllm/logging_utils/formatter.py NewLineFormatter repeats it on every line",
    ),
    "vllm-v1": (
        _prefix(
            "(EngineCore_DP0 pid=1815813) (Worker_TP0 pid=1815836) "
            "ERROR 09-17 23:37:06 [multiproc_executor.py:671] "
        ),
        "vllm-proc and vllm-logger together (a V1 worker's logger.exception)",
    ),
    "ray": (
        _prefix("(RayWorkerWrapper pid=4121, ip=10.0.3.17) "),
        "ray-project/ray python/ray/_private/worker.py print_worker_logs: "
        "'({prefix}{pid}, ip={ip}) ' (prefix_for: the actor's class name and ' pid=')",
    ),
    "compose": (
        _prefix("sglang-1    | "),
        "docker/compose cmd/formatter/logs.go logConsumer.Log: "
        "'%-<width>s |' then ' ' (width: the longest name + 3)",
    ),
    "kubectl": (
        _prefix("[pod/sglang-0/server] "),
        "kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/cmd/logs/logs.go "
        "addPrefixIfNeeded: '[pod/%s/%s] '",
    ),
    "gha": (
        _prefix("2025-01-01T12:00:00.1234567Z "),
        "actions/runner src/Runner.Common/Logging.cs PagingLogger.Write: "
        "DateTime.UtcNow.ToString(\"O\") + ' '",
    ),
    "pylog-basic": (
        _prefix("ERROR:root:"),
        "cpython Lib/logging/__init__.py BASIC_FORMAT '%(levelname)s:%(name)s:%(message)s'",
    ),
    "pylog-asctime": (
        _prefix("2025-01-01 12:00:00,123 - worker - ERROR - "),
        "cpython Doc/howto/logging.rst: '%(asctime)s - %(name)s - %(levelname)s - %(message)s'",
    ),
    "ansi-grep": (
        _grep_color,
        "GNU grep src/grep.c print_line_middle (--color=always, ms=01;31 + EL)",
    ),
    "ansi-gcc": (
        _gcc_color,
        "gcc/diagnostic.cc diagnostic_build_prefix (-fdiagnostics-color=always)",
    ),
    "crlf": (_crlf, "a log saved on Windows / by a tool writing '\\r\\n'"),
    "md-quote": (
        _prefix("> "),
        "CommonMark block quote: a log pasted into an issue as '> ' lines",
    ),
    "indent": (
        _prefix("    "),
        "CommonMark indented code block: a log pasted under a list item / four spaces",
    ),
    "inductor-wrap": (
        _inductor_wrap,
        "pytorch/pytorch torch/_inductor/exc.py InductorError: the final exception line "
        "prefixed 'torch._inductor.exc.InductorError: '",
    ),
}

_RUNNER = r"""
import importlib.util, json, sys, tempfile
from pathlib import Path
tree, table, bench, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
sys.path.insert(0, tree + "/src")
spec = importlib.util.spec_from_file_location("decorations", bench)
deco = importlib.util.module_from_spec(spec)
spec.loader.exec_module(deco)
import yaml
from remedy.diagnose import diagnose
from remedy.inputs import scan_logs
from remedy.knowledge.loader import load_knowledge
kb = load_knowledge()
rows = [r for r in yaml.safe_load((Path(table) / "index.yaml").read_text())["templates"]
        if r["class"]]
out = {}
with tempfile.TemporaryDirectory(prefix="remedy-deco-") as tmp:
    p = Path(tmp) / "decorated.log"
    for name in names:
        fn = deco.DECORATIONS[name][0]
        got = out[name] = {}
        for r in rows:
            raw = (Path(table) / r["file"]).read_bytes().decode("utf-8", "surrogateescape")
            p.write_bytes(fn(raw).encode("utf-8", "surrogateescape"))
            sy, _su, wr = scan_logs([p])
            d = diagnose(kb, None, sy, wrappers=wr)
            got[r["file"]] = [h.rule for h in d.hypotheses[:3]]
print(json.dumps(out))
"""


def ranked_with(ref: str, names: list[str]) -> dict[str, dict[str, list[str]]]:
    with tempfile.TemporaryDirectory(prefix="remedy-deco-") as tmp:
        _extract(ref, Path(tmp))
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                _RUNNER,
                tmp,
                str(TEMPLATES),
                str(Path(__file__).resolve()),
                ",".join(names),
            ],
            capture_output=True,
            text=True,
            timeout=3000,
        )
        if r.returncode != 0:
            raise SystemExit(f"diagnosis with {ref} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout)


def main() -> int:
    import yaml

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", action="append", help="git refs (WORKTREE = files); default WORKTREE")
    ap.add_argument("--only", help="comma-separated decorations (default: all)")
    ap.add_argument("--show", type=int, default=6, help="changed rows listed per decoration")
    ap.add_argument("--save", help="write the JSON report to bench/results/NAME.json")
    args = ap.parse_args()
    refs = args.ref or ["WORKTREE"]
    names = args.only.split(",") if args.only else list(DECORATIONS)
    if "none" not in names:
        names.insert(0, "none")
    rows = [
        r for r in yaml.safe_load((TEMPLATES / "index.yaml").read_text())["templates"] if r["class"]
    ]
    cls = {r["file"]: r["class"] for r in rows}
    rep: dict = {"rows": len(rows), "runs": []}
    for ref in refs:
        ranked = ranked_with(ref, names)
        commit = _git("rev-parse", "--short", ref) if ref != "WORKTREE" else "worktree"
        base = ranked["none"]
        ok0 = {f for f, got in base.items() if got[:1] == [cls[f]]}
        per = {}
        print(f"{ref} ({commit}): {len(rows)} classed template rows, top-1 right per decoration")
        for name in names:
            got = ranked[name]
            ok = {f for f, g in got.items() if g[:1] == [cls[f]]}
            lost = sorted(ok0 - ok)
            gained = sorted(ok - ok0)
            changed = sorted(f for f in got if got[f][:1] != base[f][:1])
            per[name] = {
                "top1": len(ok),
                "kept": len(ok & ok0),
                "lost": lost,
                "gained": gained,
                "changed": {f: {"none": base[f][:1], name: got[f][:1]} for f in changed},
            }
            print(
                f"  {name:16} top-1 {len(ok):3}/{len(rows)}  stays right {len(ok & ok0):3}/"
                f"{len(ok0)}  lost {len(lost):3}  gained {len(gained):2}  top-1 changed "
                f"{len(changed):3}"
            )
            for f in changed[: args.show]:
                print(f"      {f}: {base[f][:1]} -> {got[f][:1]} (class {cls[f]})")
        rep["runs"].append({"ref": ref, "commit": commit, "decorations": per})
    if len(refs) > 1:
        print("top-1 per decoration, " + " -> ".join(f"{r['ref']}" for r in rep["runs"]))
        for name in names:
            figs = " -> ".join(f"{r['decorations'][name]['top1']:3}" for r in rep["runs"])
            print(f"  {name:16} {figs}   /{len(rows)}  ({DECORATIONS[name][1][:70]})")
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.save}.json").write_text(json.dumps(rep, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
