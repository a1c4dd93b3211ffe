#!/usr/bin/env python3
"""Held-out evaluation of log-only diagnosis: a date split and leave-one-repository-out.

Why: the corpus test (tests/test_corpus.py) measures remedy on logs its knowledge was written
from. This script measures it on logs the knowledge was NOT tuned to.

Method (what is frozen, and how):

- Knowledge and code are frozen by git commit. ``--ref COMMIT`` extracts ``src/``,
  ``knowledge/`` and ``playbooks/`` of that commit (``git archive``) into a temporary
  directory and diagnoses the corpus of the working tree with them, in a subprocess whose
  ``remedy`` is that tree's. So a figure for a commit is exactly what that commit's rules,
  signatures and ranking code say; nothing written later can leak in.
- Date split. Every row added for issue 17 carries the date of the post its log was copied
  from. ``SPLIT_DATE`` was fixed before any rule was written for those logs. The held-out set
  is every row dated on or after it whose thread is not cited anywhere in the knowledge of
  ``BEFORE_REF`` (a thread a rule or signature was written from is not unseen). Legacy rows
  (no date) and rows dated before the split are the tuning set.
- ``BEFORE_REF`` is the commit the branch started from: its knowledge never saw any of the new
  logs. ``FROZEN_REFS`` are the commits of successive tuning rounds. Round 1 (69b691c) was
  written from pre-split threads and upstream sources only; the round-1 held-out logs were
  read when collected, but no diagnosis of them was looked at before that commit. After each
  frozen commit its misses were studied and the knowledge tuned (TUNED_AFTER lists every such
  change), and a NEW batch of post-split logs was collected and committed before any diagnosis
  ran on it. ``CLEAN_ROUNDS`` scores each held-out log once, by the knowledge frozen before it
  was collected: that total is the honest held-out figure. The per-ref "date split, held-out"
  line also counts logs a later round was tuned on, so for later refs it is optimistic.
- Leave-one-repository-out (LORO): each log is diagnosed with the knowledge minus every
  signature and field signal that cites a thread of the log's own repository and no upstream
  code or doc (items that cite upstream code or docs stay: they were not learned from the
  threads). Rules stay: they are written from upstream code, not from threads. Most items
  cite upstream sources, so LORO removes little; it guards against thread-only patterns.

- The learned fallback (src/remedy/evidence/learned.py; refs that have it): the committed
  model was trained on the whole corpus, so it is never used here. The runner trains a model
  with the ref's own code on the rows it may see and points remedy at it
  ($REMEDY_LEARNED_MODEL): for the date split, the ref's corpus minus every post-split row the
  starting commit never saw (legacy and pre-split rows only); for a clean round, the rows of the
  corpus the round's logs were absent from; for LORO, the ref's corpus minus the log's
  repository (one model per repository). Refs without the module are rules-only, as before.

Figures per run: top-1, top-3, "unknown" (no hypothesis at all) and harmful fixes. A learned
top hypothesis proposes no fix, so a wrong one is never harmful; it is counted apart ("learned
top wrong"), and a learned class named for a log whose cause no rule covers is counted as a
learned claim. A harmful
fix: the top hypothesis is wrong, its repairs include a toolchain or driver change
(``toolchain_actions``), and that action is not a repair of the right class (judged with the
current knowledge of what the right class's fix is).

    python bench/generalize.py                    # before / frozen / HEAD, date split + LORO
    python bench/generalize.py --ref HEAD --json  # one ref, machine-readable
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
RESULTS = ROOT / "bench" / "results"

SPLIT_DATE = "2025-06-01"
BEFORE_REF = "2fdae7f"  # the branch's starting commit (main at the time)
# Frozen rounds: 69b691c was written from pre-split threads only; each later ref is the
# knowledge after a tuning round, evaluated on post-split threads collected after it.
FROZEN_REFS: list[str] = [
    "69b691c",
    "8d806c0",
    "e9c0621",
    "33214ee",
    "b31ce0a",
    "d08be8c",
    "9786cf4",
    "23414a7",
    "f78b0af",
    "89169e4",
    "30a1953",
]
# Clean rounds: (knowledge ref, ref whose corpus the round's logs were absent from). A held-out
# log belongs to the LAST round whose candidate set holds it, and is scored only by that
# round's knowledge, which was committed before the log was collected (round 1: before any
# rule was written for the post-split logs; later rounds: logs collected after the commit).
CLEAN_ROUNDS: list[tuple[str, str]] = [
    ("69b691c", BEFORE_REF),
    ("8d806c0", "8d806c0"),
    ("e9c0621", "e9c0621"),
    ("33214ee", "33214ee"),
    ("b31ce0a", "b31ce0a"),
    # round 6: d08be8c (main after issue 17's first merge) on a batch collected after it
    ("d08be8c", "d08be8c"),
    ("9786cf4", "9786cf4"),
    ("23414a7", "23414a7"),
    ("f78b0af", "f78b0af"),
    ("89169e4", "89169e4"),
    ("30a1953", "30a1953"),
    # round 12: 97 logs (69 with a class, 28 whose cause no rule covers) collected on
    # 2026-12-02 by three engineers who never ran remedy on them, while two others changed
    # the knowledge without seeing them; scored by the knowledge at the merge of those two
    # (926b04f), which does not cite their threads.
    ("926b04f", "926b04f"),
    # round 13: 73 logs (53 with a class, 20 whose cause no rule covers) collected on
    # 2026-12-02 by three engineers who never ran remedy on them, while two others tuned the
    # knowledge on round 12's misses without seeing them; scored by that knowledge (03c75cb).
    ("03c75cb", "03c75cb"),
    # round 14: 75 logs (43 with a class, 32 whose cause no rule covers) collected on
    # 2026-12-02 by three engineers (fresh-g/h/i) who never ran remedy on them, while two
    # others added the learned fallback and tune-d's class-level families without seeing
    # them; scored by the knowledge at the merge of those two (d31c9eb), with a learned model
    # trained only on d31c9eb's corpus.
    ("d31c9eb", "d31c9eb"),
    # round 15: 17 logs (6 with a class, 11 whose cause no rule covers) collected on 2026-12-02
    # by one engineer (fresh-j) who never ran remedy on them, while another tuned the knowledge
    # on round 14's misses (tune-e) without seeing them; scored by that knowledge (a829aa4).
    ("a829aa4", "a829aa4"),
    # round 16: 36 logs (16 with a class, 20 whose cause no rule covers) collected on 2026-12-02
    # by three engineers (fresh-k/l/m) who never ran remedy on them, while another added the
    # removed-CUDA-API class (tune-f) without seeing them; four were collected as class null and
    # relabelled to that class from their threads' established causes before scoring. Scored by
    # the knowledge at tune-f's merge (df02cf8).
    ("df02cf8", "df02cf8"),
    # round 17: 33 logs (18 with a class, 15 whose cause no rule covers) collected on 2026-12-02
    # by three engineers (fresh-n/o/p) who never ran remedy on them; scored by the knowledge at
    # the end of session 26 (d88cf0b), which no one had tuned since they began.
    ("d88cf0b", "d88cf0b"),
    # round 18: 27 logs (13 with a class, 14 whose cause no rule covers) collected on 2026-12-02
    # by two engineers (fresh-q/r) who never ran remedy on them, while tune-h and tune-i changed
    # the knowledge without seeing them; scored by the knowledge after both merged (338f0ca).
    ("338f0ca", "338f0ca"),
    # round 19: 14 logs (6 with a class, 8 whose cause no rule covers) collected on 2026-12-02
    # by two engineers (fresh-s/t) who never ran remedy on them, while tune-j tuned the knowledge
    # on round 18's misses without seeing them; scored by the knowledge after tune-j (ff4c4c4).
    ("ff4c4c4", "ff4c4c4"),
    # round 20: 32 logs (15 with a class, 17 whose cause no rule covers) collected on 2026-12-02
    # by four engineers (fresh-u/v/w/x) who never ran remedy on them, while tune-n, tune-o and
    # tune-p changed the knowledge without seeing them; scored by the knowledge after all three
    # merged (9efa960). One thread collected twice (ublue-os/aurora#1924) was kept once.
    ("9efa960", "9efa960"),
    # round 21: 18 logs (9 with a class, 9 whose cause no rule covers) collected on 2026-12-02
    # by three engineers (fresh-y/z/za) who never ran remedy on them, while tune-q tuned the
    # knowledge on round 20's misses without seeing them; scored by the knowledge after tune-q
    # merged (a3742e2). 30e38cd (before tune-q) scored them the same.
    ("a3742e2", "a3742e2"),
    # round 22: 31 logs (25 with a class, 6 whose cause no rule covers) collected on 2026-12-03
    # by four engineers (fresh-zb/zc/zd/ze) who never ran remedy on them, while tune-r and
    # tune-s changed the knowledge without seeing them; scored by the knowledge after both
    # merged (78c8edc). 624797e (before both) scored one more top-1 (fzd-3, a bare CUDA
    # error 35 that tune-s's guard now leaves unknown) and the same 0 harmful.
    ("78c8edc", "78c8edc"),
    # round 23: 10 logs (4 with a class, 6 whose cause no rule covers) collected on 2026-12-03
    # by two engineers (fresh-zf/zg) who never ran remedy on them, while tune-t tuned the
    # knowledge on round 22's misses without seeing them; scored by the knowledge after tune-t
    # merged (6c83b9b). 114b7eb (before tune-t) scored them the same.
    ("6c83b9b", "6c83b9b"),
    # round 24: 12 logs (7 with a class, 5 whose cause no rule covers) collected on 2026-12-03
    # by two engineers (fresh-zh/zi) who never ran remedy on them, while tune-u and tune-v
    # changed the knowledge without seeing them; scored by the knowledge after both merged
    # (683db61). 95429ab (before both) scored them the same.
    ("683db61", "683db61"),
    # round 25: 17 logs (14 with a class, 3 whose cause no rule covers) collected on 2026-12-03
    # by two engineers (fresh-zj/zk) who never ran remedy on them, while tune-x and tune-z
    # changed the knowledge without seeing them; scored by the knowledge after both merged
    # (0ef4aa3). 864a490 (before both) scored them the same. One entry with round 26 (below):
    # both rounds' logs are absent from 0ef4aa3's corpus, so the table shows them as one row.
    # round 26: 16 logs (11 with a class, 5 whose cause no rule covers) collected on 2026-12-03
    # by two engineers (fresh-zl/zm) who never ran remedy on them, while tune-z changed the
    # knowledge without seeing them; scored by the knowledge after it merged (0ef4aa3).
    # 219dc05 (before tune-z) scored them the same.
    ("0ef4aa3", "0ef4aa3"),
    # rounds 27 and 28: 73 logs (46 with a class, 27 whose cause no rule covers) collected on
    # 2026-12-03 by seven engineers (coll-n..t, prefixes fzn-fzt) who never ran remedy on them,
    # in two waves; no knowledge changed between 9c052dc (main at the session's start) and
    # their collection, so 9c052dc scores both (one entry: both are absent from its corpus).
    ("9c052dc", "9c052dc"),
    # round 29: 31 logs (17 with a class, 14 whose cause no rule covers) collected on
    # 2026-12-03 by three engineers (coll-u/v/w, prefixes fzu-fzw) who never ran remedy on them,
    # from 27bc768 (main + rounds 27-28 + tune-ab and tune-ac); tune-ad merged while they
    # worked (79bc573) without seeing them. Scored by 27bc768, the knowledge frozen when they
    # started; the learned model is trained on 79bc573's corpus (rounds 27-28, not 29).
    # 9c052dc scored them the same (bench/results/round29/).
    ("27bc768", "79bc573"),
    # round 30: 19 logs (11 with a class, 8 whose cause no rule covers) collected on
    # 2026-12-03 by three engineers (coll-x/y/z, prefixes fzx-fzz) from 79bc573; scored by it,
    # the learned model trained on 9fcb05f's corpus (rounds 27-29, not 30).
    ("79bc573", "9fcb05f"),
    # round 31: 36 logs (22 with a class, 14 whose cause no rule covers) collected on
    # 2026-12-03 (session 32) by four engineers (coll-gaa..gad, prefixes gaa-gad) who never ran
    # remedy on them, while harvest-a, redteam-8, toolchain-3 and perf-f worked without seeing
    # them; scored by eb9d155 (main at the session's start, bench/results/round31/).
    ("eb9d155", "eb9d155"),
    # round 32: 17 logs (10 with a class, 7 whose cause no rule covers) collected on
    # 2026-12-03 (session 32) by two engineers (coll-gae/gaf) who never ran remedy on them,
    # while tune-ag, harvest-a and harvest-b changed the knowledge without seeing them; scored
    # by bb6d022 (main with round 31's rows; eb9d155 scored them the same).
    ("bb6d022", "bb6d022"),
    # round 33: 18 logs (12 with a class, 6 whose cause no rule covers) collected on
    # 2026-12-03 (session 32) by two engineers (coll-gag/gah) who never ran remedy on them,
    # while tune-ag, harvest-a and harvest-b changed the knowledge without seeing them; scored
    # by d4f2d08 (main with rounds 31-32's rows).
    ("d4f2d08", "d4f2d08"),
    # round 34: 4 logs (3 with a class, 1 whose cause no rule covers), all posted after the
    # split, collected on 2026-12-03 (session 32) by one engineer (coll-gai) who never ran
    # remedy on them; scored by 2adef5a (main with rounds 31-33's rows).
    ("2adef5a", "2adef5a"),
    # round 35: 18 logs (13 with a class, 5 whose cause no rule covers) collected on
    # 2026-12-03 (session 32) by two engineers (coll-gaj/gak) who never ran remedy on them,
    # while perf-g and toolchain-4 worked without seeing them; scored by b1843d9 (main after
    # tune-ag, harvest-a and harvest-b merged).
    ("b1843d9", "b1843d9"),
    # round 36: 52 logs (30 with a class, 22 whose cause no rule covers) collected on
    # 2026-12-03 (session 33) by five engineers (coll-gba..gbe, prefixes gba-gbe) who never
    # ran remedy on them, while tune-ai, perf-h and redteam-9 worked without seeing them;
    # scored by f4035c6 (main at the session's start, bench/results/round36/).
    ("f4035c6", "f4035c6"),
    # round 37: 15 logs (11 with a class, 4 whose cause no rule covers) collected on
    # 2026-12-03 (session 33) by three engineers (coll-gbf..gbh, prefixes gbf-gbh) who never
    # ran remedy on them, while tune-ai and tune-aj changed the knowledge without seeing them;
    # scored by 9d31880 (main with round 36's rows, knowledge of f4035c6; main after tune-ai
    # and tune-aj scored them the same, bench/results/round37/).
    ("9d31880", "9d31880"),
    # round 38: 10 logs (6 with a class, 4 whose cause no rule covers) collected on
    # 2026-12-03 (session 33) by two engineers (coll-gbi/gbj) who never ran remedy on them,
    # while tune-ak, learned-gate and fuzz-2 worked without seeing them; scored by 08388f6
    # (main after tune-ai and tune-aj, with rounds 36-37's rows, bench/results/round38/).
    ("08388f6", "08388f6"),
    # round 39: 52 logs (32 with a class, 20 whose cause no rule covers) collected on
    # 2026-12-04 (session 34) by five engineers (coll-gca..gce, prefixes gca-gce) who never
    # ran remedy on them, while toolchain-6, redteam-10 and gen-mech worked without seeing
    # them; scored by 39e6a42 (main at the session's start, bench/results/round39/).
    ("39e6a42", "39e6a42"),
    # round 40: 23 logs (13 with a class, 10 whose cause no rule covers) collected on
    # 2026-12-04 (session 34) by three engineers (coll-gcf..gch, prefixes gcf-gch) who never
    # ran remedy on them, while tune-al, toolchain-6, redteam-10 and gen-mech worked without
    # seeing them; scored by 479c240 (main with round 39's rows, knowledge of 39e6a42,
    # bench/results/round40/).
    ("479c240", "479c240"),
    # round 41: 31 logs (20 with a class, 11 whose cause no rule covers) collected on
    # 2026-12-04 (session 34) by three engineers (coll-gci..gck, prefixes gci-gck) who never
    # ran remedy on them, while tune-am and fuzz-3 worked without seeing them; scored by
    # 693363e (main after tune-al, gen-mech and redteam-10, with rounds 39-40's rows,
    # bench/results/round41/).
    ("693363e", "693363e"),
    # round 42: 32 logs (20 with a class, 12 whose cause no rule covers) collected on
    # 2026-12-04 (session 35) by three engineers (coll-gcl..gcn: 3D vision/graphics research
    # code, package ecosystems and build systems, science GPU apps) who never ran remedy on
    # them, while tune-an/tune-ao worked without seeing them; scored by 3434aa6 (main at the
    # session's start with rounds 39-41's rows, bench/results/round42/).
    ("3434aa6", "3434aa6"),
    # round 43: 20 logs (12 with a class, 8 whose cause no rule covers) collected on
    # 2026-12-04 (session 35) by two engineers (coll-gco/gcp: LLM fine-tuning and alternative
    # serving stacks; Windows/WSL2 and desktop image UIs) who never ran remedy on them, while
    # tune-an/ao/ap worked without seeing them; scored by 8f7a3c2 (round 42's rows, the
    # knowledge of 3434aa6, bench/results/round43/; 420bd90, after the tuning, scores the same)
    ("8f7a3c2", "8f7a3c2"),
    # round 44: 52 logs (32 with a class, 20 whose cause no rule covers) collected on
    # 2026-12-04 (session 36) by five engineers (coll-gcq..gcu: audio/speech/video stacks and
    # ComfyUI nodes; sglang/flashinfer/vllm threads from 2025-06 on; platforms, containers and
    # non-Python bindings; vision/detection and GPU data libraries; local-LLM apps and 3D
    # apps) who never ran remedy on them, while tune-aq/tune-ar, perf-36, redteam-12 and
    # truth-4 worked without seeing them; scored by 5e051be (main at the session's start,
    # bench/results/round44/).
    ("5e051be", "5e051be"),
    # round 45: 21 logs (13 with a class, 8 whose cause no rule covers) collected on
    # 2026-12-04 (session 36) by two engineers (coll-gcv/gcw: torch extension ecosystems and
    # distributed training; non-torch frameworks and numeric GPU libraries) who never ran
    # remedy on them, while tune-aq/ar/as worked without seeing them; scored by 2ef04a6
    # (round 44's rows, the knowledge of 5e051be, bench/results/round45/).
    ("2ef04a6", "2ef04a6"),
    # round 46: 20 logs (13 with a class, 7 whose cause no rule covers) collected on
    # 2026-12-04 (session 36) by two engineers (coll-gcx/gcy: building CUDA code on native
    # Windows; the NVIDIA driver as the OS installs it) who never ran remedy on them, while
    # tune-aq/ar/as worked without seeing them; scored by 8e1ad76 (rounds 44-45's rows, the
    # knowledge of 5e051be, bench/results/round46/).
    ("8e1ad76", "8e1ad76"),
    # round 47: 27 logs (12 with a class, 15 whose cause no rule covers) collected on
    # 2026-12-04 (session 36) by three engineers (coll-gcz/gda/gdb: the Hugging Face and
    # Lightning layer; model-serving infrastructure other than sglang/vllm; the newest
    # hardware and toolkits outside the core stack, posts from 2025-06 on) who never ran remedy
    # on them; scored by 24b0af6 (this session's main after tune-aq/ar/as, truth-4,
    # redteam-12 and perf-36, blind to the round: bench/results/round47/).
    ("24b0af6", "24b0af6"),
    # round 48: 48 logs (25 with a class, 23 whose cause no rule covers) collected on
    # 2026-12-05 (session 37) by five engineers (coll-gdc/gdd/gde/gdf/gdg: the core stack,
    # threads from 2025-08 on; Jetson, Grace and other aarch64 hosts; host compilers and distro
    # CUDA packages; quantization kernels and recommender stacks; robotics and simulation)
    # who never ran remedy on them, while tune-at/au/av worked without seeing them; scored by
    # cb51f80 (session 36's final main, bench/results/round48/).
    ("cb51f80", "cb51f80"),
    # round 49: 69 logs (38 with a class, 31 whose cause no rule covers) collected on
    # 2026-12-05 (session 37) by six engineers (coll-gdh/gdi/gdj/gdk/gdl/gdm: multi-GPU
    # communication and expert-parallel libraries; profilers and the CUDA Python bindings; RL
    # post-training stacks; CUDA in CI and images; HPC codes and the NVIDIA HPC SDK; video and
    # media pipelines) who never ran remedy on them; scored by 0ba34e92 (this session's final
    # knowledge: tune-at/au/av/aw, perf-37 and redteam-13 merged, blind to the round:
    # bench/results/round49/).
    ("0ba34e92", "0ba34e92"),
    # round 50: 30 logs (12 with a class, 18 whose cause no rule covers) collected on
    # 2026-12-05 (session 37), while the project's CI ran, by three engineers
    # (coll-gdn/gdo/gdp: document AI and OCR deployments; retrieval, embeddings and vector
    # search; GPU sharing and virtualization: MIG, vGPU, passthrough, MPS, HAMi) who never ran
    # remedy on them; scored by the same final knowledge as round 49 (0ba34e92, blind to both
    # rounds: bench/results/round50/). One entry per ref: round 49's covers both rounds' rows.
    # round 51: 17 logs (10 with a class, 7 whose cause no rule covers) collected on
    # 2026-12-05 (session 38) by two engineers (collect-gdq/gdr: the core stack, threads from
    # 2025-10 on; Triton kernels outside the serving stack and torch.compile) who never ran
    # remedy on them, while tune-ax/ay/az/ba worked without seeing them; scored by 3aab2cfd
    # (session 37's final main, bench/results/round51/).
    ("3aab2cfd", "3aab2cfd"),
    # round 52: 65 logs (36 with a class, 29 whose cause no rule covers) collected on
    # 2026-12-05 (session 38) by seven engineers (collect-gds/gdt/gdu/gdv/gdw/gdx/gdy: cloud GPU
    # images and hosted platforms; desktop GPUs running local AI apps; CUDA outside ML:
    # password recovery, crypto and zk provers; vision foundation-model repos and their ops;
    # large-scale training frameworks; scientific and medical imaging; NVIDIA application SDKs)
    # who never ran remedy on them; scored by fb037e10 (this session's final knowledge:
    # tune-ax/ay/az/ba/bb, perf-38 and redteam-14 merged, blind to the round:
    # bench/results/round52/). fb037e10 was lost with a submission that did not land;
    # 785477d9 rebuilds it (that tree less round 52's rows and the gdu-1 signal tuned after)
    # and scores the round identically (score-785477d9.txt vs score-fb037e10.txt).
    ("785477d9", "785477d9"),
    # round 53: 61 logs (27 with a class, 34 whose cause no rule covers) collected on
    # 2026-12-05 (session 39) by seven engineers (col-53a..g: GPU array libraries and LLM
    # runtimes; CUDA from Rust/Go/Java and distributed training; ONNX Runtime/TensorRT and GPUs
    # under orchestration; vLLM/SGLang/FlashInfer 2025-26; PyTorch and Triton; image/video
    # generation and speech; local LLM runners and Jetson/edge) who never ran remedy on them,
    # while tune-bc/bd/be/bf worked without seeing them; scored by 260ce802 (that session's
    # knowledge with every tuner merged, blind to the round) and by 5413bec2 (its start):
    # the same rules-only figures (bench/results/round53/).
    ("260ce802", "260ce802"),
    # rounds 54 and 55: 55 logs (25 with a class, 30 whose cause no rule covers) and 28 logs
    # (18 / 10) collected on 2026-12-05 (session 39) by ten engineers (col-54a..g: the Hugging
    # Face and fine-tuning stacks; serving engines and kernel packages; CUDA packaging and
    # managed GPU platforms; native Windows, JAX and robotics; 3D-vision extensions and
    # quantization; threads found by the error text; col-55a..c: NVIDIA training software and
    # CUDA images; error-text searches) who never ran remedy on them, while tune-bg/bh,
    # deco-bj and wording-bm worked without seeing them; scored by 0334bece (that session's
    # final knowledge, blind to both rounds; bench/results/round54/, round55/). One entry per
    # ref: it covers both rounds' rows.
    ("0334bece", "0334bece"),
    # rounds 56-57 (session 40): 65 logs (36 with a class, 29 whose cause no rule covers)
    # collected by eight engineers (col-56a..e: GPU start-up, build/JIT, loader/runtime-library,
    # Triton/cuDNN/capture and host-compiler/arch-list errors; col-57a..c: SGLang/FlashInfer
    # start-up, conda/pip/WSL toolchains, JAX/numba/PyCUDA) who never ran remedy on them, while
    # tune-bp/bq/br, redteam-16 and perf-40 worked without seeing them; scored by d546146a
    # (main after tune-bp/bq/br, blind to both rounds; bench/results/round56/, round57/). One
    # entry: it covers both rounds' rows.
    ("d546146a", "d546146a"),
    # round 58 (session 40): 28 logs (16 with a class, 12 whose cause no rule covers) collected
    # by four engineers (col-58a..d: installed-package mismatches; GPU containers, NCCL and
    # fabric manager; Triton/Inductor; local LLM runners) who never ran remedy on them, while
    # tune-bs/bt tuned on rounds 56-57 and perf-40, redteam-17/18 worked without seeing them;
    # scored by ca8fbd74 (main after tune-bs/bt, blind to the round; bench/results/round58/).
    ("ca8fbd74", "ca8fbd74"),
    # round 59 (session 40): 15 logs (9 with a class, 6 whose cause no rule covers) collected by
    # three engineers (col-59a..c: newest error-text threads; CUDA extension builds from source;
    # repos rare in the corpus: OptiX, OpenMM, Faiss, HeavyDB, Dr.Jit) who never ran remedy on
    # them, while tune-bu tuned on round 58; scored by de01a083 (that session's final knowledge,
    # blind to the round; bench/results/round59/).
    ("de01a083", "de01a083"),
    # round 60 (session 40): 15 logs (5 with a class, 10 whose cause no rule covers) collected by
    # two engineers (col-60a/b: speech, video generation, robotics; distributions, WSL, NixOS and
    # cloud images) who never ran remedy on them, while tune-bv and label-audit worked; scored by
    # d3297bae (that session's final knowledge, blind to the round; bench/results/round60/).
    ("d3297bae", "d3297bae"),
    # rounds 61-62 (session 41): 47 logs (21 with a class, 26 whose cause no rule covers)
    # collected by ten engineers (col-61a..f, col-62a..d: LLM engines and op builds; containers and
    # clusters; scientific stacks; torch compile/NCCL/capture; Windows/WSL/pip installs; GPU apps;
    # Jetson/ARM and P2P; CUDA build systems; serving stacks; research-code builds) who never ran
    # remedy on them, while tune-bw/bx/by/bz tuned by class family; scored by 10c6ed84 (that
    # session's knowledge after those tuners, blind to the rounds; bench/results/round61/, round62/).
    ("10c6ed84", "10c6ed84"),
    # round 63 (session 41): 16 logs (7 with a class, 9 whose cause no rule covers) collected by
    # three engineers (col-63a..c: quantization/FP8 kernels; Python packaging of GPU libraries;
    # graphics/video/OptiX apps) who never ran remedy on them, while tune-ca/cb tuned on rounds
    # 61-62 and label-audit-2 relabelled; scored by e30b3489 (blind to the round;
    # bench/results/round63/).
    ("e30b3489", "e30b3489"),
    # round 64 (session 41): 29 logs (9 with a class, 20 whose cause no rule covers) collected by
    # six engineers (col-64a..f: 2025-26 threads of the big trackers; toolkit installs and nvcc/
    # nvlink errors; non-torch frameworks; audio/vision apps; HPC clusters; CUDA.jl) who never ran
    # remedy on them, while tune-cc tuned on round 63; scored by 6a51da95 (blind to the round;
    # bench/results/round64/; god-1, a second log of a thread already in the corpus, was dropped
    # after scoring: score-*-with-god-1.txt keep the first scoring, where it was a hit).
    ("6a51da95", "6a51da95"),
    # rounds 65-67 (session 42): 109 logs (46 with a class, 63 whose cause no rule covers)
    # collected by sixteen engineers (col-65a..k, col-66a..e, col-67a..e: robotics/simulation; 3D
    # extensions; inference runtimes and quantization wheels; training-kernel packages; distro and
    # env-manager CUDA packaging; torchvision/DALI/NVENC; serving/cluster runtimes; Windows MSVC
    # builds; Python CUDA JIT libraries; fine-tuning stacks; aarch64/Grace hosts; GPU data
    # libraries; local LLM apps; life-science software; kernel DSLs; leftovers; the driver below
    # CUDA; CI builds; virtualised/cloud GPUs; video-generation trainers) who never ran remedy on
    # them, while tune-ce tuned on facts printed in logs; scored by 5b772634 (blind to the rounds;
    # bench/results/round65/ .. round67/). gsp-2 and gtp-2, second logs of threads with a log in
    # the round, were dropped after scoring (one log per dated thread; round 67's
    # score-*-with-gtp-2.txt keep the first scoring, where gtp-2 was a hit; gsp-2 was a named null).
    ("5b772634", "5b772634"),
    # rounds 68-70 (session 42): 67 logs (33 with a class, 34 whose cause no rule covers)
    # collected by twelve engineers (col-68a..d, col-69a..d, col-70a..d: 2026 threads; user-built
    # CUDA extensions; Jetson/edge; game engines and creative tools; leftovers; RL/large-scale
    # training; diffusion inference libraries; HPC C++/Fortran stacks; CPU-only or wrong-variant
    # installs; NVIDIA library skew in Python envs; JavaScript/desktop GPU apps) who never ran
    # remedy on them, while tune-cf/cg/ch tuned on rounds 65-67; scored by fc2f8696 (blind to the
    # rounds; bench/results/round68/ .. round70/).
    ("fc2f8696", "fc2f8696"),
    # round 71 (session 43): 24 logs (12 with a class, 12 whose cause no rule covers) collected by
    # five engineers (col-71a..e: leftovers; speech and audio; CUDA from Rust/Julia/Java/.NET/R;
    # computer-vision op packages; other compilers, GPU miners and ZLUDA; graph/recsys/vector-search
    # libraries) who never ran remedy on them, while tune-ck/cl tuned on upstream message families;
    # scored by 1424e1d6 (the session's start, blind to the round; bench/results/round71/).
    ("1424e1d6", "1424e1d6"),
    # rounds 72-75 (session 43): 82 logs (48 with a class, 34 whose cause no rule covers) collected
    # by seventeen engineers (col-72a..d, col-73a..e, col-74a..d, col-75a..d: GPU-arch leftovers and
    # WSL/Windows loading; containers and orchestration; LLM training frameworks and NCCL; hosted
    # notebooks and cloud platforms; GPU communication stacks; laptops and hybrid graphics; ML
    # compilers' code generation; CMake's CUDA language; MD/chemistry codes; ZK provers; media servers
    # and NVENC; NVIDIA SDK products; video upscaling; learning-CUDA repos; GPU analytics; 2025-26
    # image/video UI stacks) who never ran remedy on them, while tune-ck/cl tuned on upstream message
    # families; scored by 757144ff (after tune-ck/cl, blind to the rounds; bench/results/round72/ ..
    # round75/; 1424e1d6 gives the same figures). hak-2, a second log of a thread with a log in round
    # 75, was dropped after scoring (one log per dated thread; it was a null said unknown).
    ("757144ff", "757144ff"),
    # rounds 76-77 (session 43): 55 logs (21 with a class, 34 whose cause no rule covers) collected
    # by ten engineers (col-76a..f, col-77a..d: leftovers; SLAM/3D reconstruction builds; older
    # frameworks (Caffe, darknet, CNTK, Chainer); 2025-26 distributed inference stacks; CUDA-only
    # code on Macs and AMD/Intel hosts; CUDA wheel packaging; medical imaging; weather/climate HPC)
    # who never ran remedy on them, while tune-cm/cn/co tuned on rounds 71-75; scored by b37b75ec
    # (after tune-cm/cn/co, blind to the rounds; bench/results/round76/, round77/). hcc-2, a
    # second log of a thread with a log in round 76, was dropped after scoring (a null said unknown).
    ("b37b75ec", "b37b75ec"),
    # round 78 (session 43): 22 logs (13 with a class, 9 whose cause no rule covers) collected by
    # four engineers (col-78a..d: OCR/document AI; LLM app stacks with local GPU inference;
    # OpenCV/dlib CUDA builds; quantum-computing simulators) who never ran remedy on them, while
    # tune-cp/cq tuned on rounds 76-77; scored by 814c3f62 (after tune-cp/cq, blind to the round;
    # bench/results/round78/).
    ("814c3f62", "814c3f62"),
    # rounds 79-83 (session 44), re-committed in session 45 (session 44's commits never landed):
    # each round's logs and rows are one commit, so each round is scored by the commit before it,
    # whose knowledge and code are session 44's start (58f73320), blind to the round; the score
    # files were re-run with these refs (bench/results/round79..83/).
    # round 79: 19 logs (7 with a class, 12 whose cause no rule covers) collected by four engineers
    # (col-79a..d: Gaussian-splatting builds; protein/biology AI; speech synthesis; GPU
    # tabular/dataframe stacks) who never ran remedy on them.
    ("58f73320", "58f73320"),
    # round 80: 17 logs (8 with a class, 9 whose cause no rule covers; col-80a..d: sparse
    # convolution/point clouds; robot learning and simulation; custom-kernel LLM research code;
    # fine-tuning stacks).
    ("751a640b", "751a640b"),
    # round 81: 17 logs (10 with a class, 7 whose cause no rule covers; col-81a..d: video
    # generation; diffusion acceleration; 3D generation; Jetson and edge). hgh-2 and hgh-3, second
    # and third logs of a thread with a log in the round, were dropped after scoring (one log per
    # dated thread; hgh-2 was missed, hgh-3 right).
    ("a9ee9177", "a9ee9177"),
    # round 82: 21 logs (9 with a class, 12 whose cause no rule covers; col-82a..d: model serving
    # platforms; classic CUDA C++ projects; Python GPU JIT libraries; graphics/compute tools).
    ("a9735050", "a9735050"),
    # round 83: 15 logs (6 with a class, 9 whose cause no rule covers; col-83a..d: PyTorch
    # ecosystem libraries; SGLang/vLLM-neighbour plugins; GPU databases and search; HPC codes with
    # CUDA backends). Session 44 scored it after tune-cr/cs (6/6); here by the start's knowledge.
    ("a7f81489", "a7f81489"),
    # round 84 (session 45): 10 logs (6 with a class, 4 whose cause no rule covers) collected by
    # four engineers (col-84a..d: quantization libraries; RL/post-training stacks; vision toolboxes
    # with CUDA ops; scientific/simulation GPU stacks) who never ran remedy on them; scored by
    # 94494aed (session 44's work as re-committed, blind to the round; bench/results/round84/).
    ("94494aed", "94494aed"),
    # round 85 (session 45): 13 logs (3 with a class, 10 whose cause no rule covers) collected by
    # four engineers (col-85a..d: ComfyUI nodes and WebUI extensions; Kubernetes/cloud GPU
    # provisioning; Windows/WSL builds; NVIDIA's own repos) who never ran remedy on them, while
    # tune-cu/cv/cw tuned on older rounds; scored by bdef6003 (knowledge as at 94494aed, blind
    # to the round; bench/results/round85/).
    ("bdef6003", "bdef6003"),
    # round 86 (session 45): 15 logs (3 with a class, 12 whose cause no rule covers) collected by
    # four engineers (col-86a..d: kernel DSLs and kernel libraries; state-space/long-context
    # kernels; GPU media decode for ML; diffusion training tools) who never ran remedy on them;
    # scored by 598120ac (after tune-cu/cv/cw, blind to the round; bench/results/round86/).
    ("598120ac", "598120ac"),
    # round 87 (session 45): 12 logs (8 with a class, 4 whose cause no rule covers) collected by
    # four engineers (col-87a..d: neural rendering/3D reconstruction; voice and music generation;
    # desktop AI app bundles; GGML-family local inference) who never ran remedy on them, until
    # the session's search budget ran out; scored by 02e8f581 (after tune-cx, blind to the round;
    # bench/results/round87/). hmh-1 (a null whose fix removed the nvcc search) is named
    # toolkit-found: a label question, counted harmful.
    ("02e8f581", "02e8f581"),
    # round 88 (session 46): 22 logs (10 with a class, 12 whose cause no rule covers) collected by
    # eight engineers (col88a..h: inference servers; PyTorch extension builds; containers and
    # drivers; Python GPU libraries; native CMake/cargo builds; training frameworks; image/video
    # generation; ARM/embedded and non-Python stacks) who never ran remedy on them; scored by
    # 9872ba63 (session 45's landed main, blind to the round; bench/results/round88/).
    ("9872ba63", "9872ba63"),
    # round 89 (session 46): 17 logs (8 with a class, 9 whose cause no rule covers) collected by
    # five engineers (col89a..e: HPC and scientific codes; vision and TensorRT deployment;
    # cloud/Kubernetes serving; speech and audio; distribution packaging) who never ran remedy on
    # them; scored by 650b0dc4 (round 88 merged, no tuner yet, blind to the round;
    # bench/results/round89/).
    ("650b0dc4", "650b0dc4"),
    # round 90 (session 46): 12 logs (5 with a class, 7 whose cause no rule covers) collected by
    # four engineers (col90a..d: quantization and LLM kernel libraries; desktop/local LLM apps;
    # non-PyTorch ML frameworks; CUDA on Windows hosts) who never ran remedy on them; scored by
    # beae082e (after tune-da/db/dc, blind to the round; bench/results/round90/). hqq-1 (a loaded
    # kernel module older than the libraries, a reboot pending) is named
    # container-driver-satisfies-image, whose repair upgrades the driver: counted harmful.
    ("beae082e", "beae082e"),
    # round 91 (session 46): 14 logs (6 with a class, 8 whose cause no rule covers) collected by
    # four engineers (col91a..d: robotics and simulation; GPU video encode/decode; Rust, JS, Go,
    # Java and .NET stacks; rendering and other end-user CUDA apps) who never ran remedy on them;
    # scored by b415682c (after tune-dd, blind to the round; bench/results/round91/).
    ("b415682c", "b415682c"),
    # round 92 (session 46): 10 logs (4 with a class, 6 whose cause no rule covers) collected by
    # four engineers (col92a..d: hosted notebook/ML platforms; NVIDIA's SDK repositories;
    # embedding and vector-search servers; older GPUs after support was dropped) who never ran
    # remedy on them; scored by 03d30ba7 (after tune-de/df/dg, blind to the round;
    # bench/results/round92/).
    ("03d30ba7", "03d30ba7"),
    # round 93 (session 46): 2 logs (both whose cause no rule covers; htj-1 is from 2020, the
    # collector's one older row) collected by two engineers (col93b..c: multi-GPU/NCCL; GPU
    # partitioning) who never ran remedy on them, until the session's search budget ran out
    # (col93a and col93d found none); scored by bf66d9e5 (after tune-dh/di, blind to the round;
    # bench/results/round93/).
    ("bf66d9e5", "bf66d9e5"),
    # round 94 (session 47): 54 logs (34 with a class, 20 whose cause no rule covers) collected
    # by ten engineers (col94a..j: leads left by round 93; SGLang/FlashInfer; other LLM serving
    # engines; PyTorch/Triton; ONNX Runtime, CTranslate2 and TensorRT runtimes; CUDA packaging
    # and CI; CUDA Python bindings and JAX; fine-tuning stacks; TensorRT deployment leads;
    # medical imaging and biology) who never ran remedy on them; scored by 906b0001 (session
    # 46's landed knowledge, blind to the round; bench/results/round94/). unknown/hvv-1 (a
    # Triton cache built on another GPU, only 'device kernel image is invalid') is named
    # driver-runs-ptx, whose repair upgrades the driver: counted harmful.
    ("906b0001", "906b0001"),
    # round 95 (session 47): 31 logs (21 with a class, 10 whose cause no rule covers) collected
    # by eight engineers (col95a..e, col96a..c: rare classes and leads left by round 94; CUDA
    # packaging leads; video and image enhancement stacks; expert-parallel and communication
    # kernel libraries; self-hosted home-lab appliances) who never ran remedy on them, while
    # tune-ea..ee worked on round 94; scored by 3f5dcc63 (after tune-ea..ee, blind to the round;
    # bench/results/round95/).
    ("3f5dcc63", "3f5dcc63"),
    # round 96 (session 47): 9 logs (7 with a class, 2 whose cause no rule covers) collected by
    # three engineers (col97a..c: leads left by round 95; local-LLM backends such as exllama
    # and llama-cpp-python; image-generation front-ends) who never ran remedy on them, while
    # tune-fa..fd worked on round 95; scored by 52b2e8b0 (after tune-fa..fd, blind to the
    # round; bench/results/round96/).
    ("52b2e8b0", "52b2e8b0"),
    # round 97 (session 48): 66 logs (34 with a class, 32 whose cause no rule covers) collected
    # by twelve engineers (session 48's col97a..l: leads left by rounds 94-96; CUDA extension
    # source builds; DeepSpeed and bitsandbytes; GPUs in containers and clusters; JAX,
    # TensorFlow, CuPy and Numba; SGLang/vLLM/TensorRT-LLM 2025-2026; 3D vision and speech
    # stacks) who never ran remedy on them; scored by cc972def (session 47's knowledge, blind
    # to the round; bench/results/round97/). compat-libcuda-only-where-supported/hzt-1
    # (named container-driver-satisfies-image, upgrade-driver) and cuda-home-is-toolkit/iat-1
    # (named toolkit-links-cudart, link-layout-symlinks) count harmful.
    ("cc972def", "cc972def"),
    # round 98 (session 49): 54 logs (39 with a class, 15 whose cause no rule covers) collected
    # by eleven engineers (session 49's col98a..k: leads left by rounds 96-97; GPUs in
    # containers, Kubernetes and NixOS/Talos; CUDA extension source builds; Rust CUDA stacks
    # and scientific codes; Numba/CuPy/JAX runtime failures; Blackwell GPUs) who never ran
    # remedy on them; scored by 7c7be757 (session 48's knowledge, blind to the round;
    # bench/results/round98/). torch-arch-list-covers-gpu/idq-1 (named
    # driver-supports-build-cuda, upgrade-driver) counts harmful.
    ("7c7be757", "7c7be757"),
    # round 99 (session 50): 34 logs (17 with a class, 17 whose cause no rule covers) collected
    # by eight engineers (session 50's col99a..h: FlashInfer/SGLang/vLLM JIT builds; torch
    # extension builds in research repos; GPU containers, drivers and JAX; Triton, Jetson and
    # Megatron; pip installs of CUDA packages; runtime failures outside the toolchain and
    # scientific codes; leads left by the others) who never ran remedy on them; scored by
    # f0835d13 (session 49's knowledge, blind to the round; bench/results/round99/).
    # unknown/ifk-1 (a null row named toolkit-found) counts harmful.
    ("f0835d13", "f0835d13"),
    # round 100 (session 50): 12 logs (8 with a class, 4 whose cause no rule covers) collected
    # by four engineers (session 50's col100a..d: leads left by round 99; JAX/XLA and Julia
    # CUDA stacks; serving stacks and CUDA_HOME mistakes; CUDA 13 and Blackwell) who never ran
    # remedy on them; scored by e5031904 (session 50's knowledge after tune-ia..id, blind to
    # the round; bench/results/round100/). arch-supported-by-toolkit/iga-1 (named
    # driver-supports-build-cuda, upgrade-driver) counts harmful.
    ("e5031904", "e5031904"),
    # round 101 (session 50): 12 logs (5 with a class, 7 whose cause no rule covers) collected
    # by four engineers (session 50's col101a..d: leads left by round 100; CUDA builds on
    # Windows; CUDA graph capture and collectives in serving stacks) who never ran remedy on
    # them; scored by b51315c6 (session 50's knowledge after tune-ia..if, blind to the round;
    # bench/results/round101/).
    ("b51315c6", "b51315c6"),
    # rounds 102-104 (session 51): 80 logs (48 with a class, 32 whose cause no rule covers)
    # collected by eighteen engineers (session 51's col102a..h, col103a..e, col104a..e:
    # FlashInfer/SGLang; vLLM/TRT-LLM/llama.cpp; torch extension builds; containers and
    # drivers; Triton and CUDA Python packages; the GPU operator; CMake/MSBuild CUDA builds;
    # conda-forge and runtime libraries; JAX/TF/Paddle; NCCL and capture; Windows; leads left
    # by the others) who never ran remedy on them; scored by 1f79c202 (session 50's final
    # knowledge, blind to the rounds; bench/results/round102/score-1f79c202-rounds102-104.txt).
    # triton-finds-libcuda/iig-1 and jit-cache-intact/iih-1 (both named
    # driver-supports-build-cuda, upgrade-driver) count harmful.
    ("1f79c202", "1f79c202"),
    # round 105 (session 52): 38 real logs (18 with a class, 20 null) from eleven collectors
    # (vLLM/SGLang; kernel-library JIT builds; torch extensions of research repos; Triton and
    # Inductor; drivers and containers; JAX/TF/ONNX Runtime/numba; conda and toolkits;
    # diffusion and audio repos; leads left by the others) who never ran remedy on them; scored
    # by 8c56c4bb (session 51's final knowledge, blind to the round;
    # bench/results/round105/score-8c56c4bb-round105.txt). unknown/ilm-1 (named toolkit-found)
    # counts harmful.
    ("8c56c4bb", "8c56c4bb"),
]
# Changes made after looking at held-out (post-split) diagnoses; empty means none.
TUNED_AFTER: list[str] = [
    "after 69b691c: signature glibc-math-exception-spec also matches the message wrapped after"
    " 'error: exception' (NVIDIA/cuda-samples#378) and cudafe++'s 'has a different exception"
    " specifier' (1Cat-vLLM#215)",
    "after 69b691c: field signal no-kernel-image-raised-in-package-source (the CUDA error's"
    " source path names flash-attn/xformers/...: ostris/ai-toolkit#475, flash-attention#2168)",
    "after 69b691c: signature ld-needed-libcuda-not-found ('warning: libcuda.so.1, needed by"
    " ..., not found', ggml-org/llama.cpp#18022), predicted by toolkit-links-cudart",
    "after 8d806c0 (round 2 misses): field signals that discount the arch-list rules when the"
    " log never names FLASHINFER_/TORCH_CUDA_ARCH_LIST and torch's wheel rule when torch's"
    " capability warning is absent (a bare 'no kernel image' ranks package-has-gpu-arch first);"
    " signature arch-list-env-mentioned; driver-too-old with torch's 'found version N' ->"
    " driver-supports-cuda",
    "after e9c0621/33214ee (round 3 misses): signature nvcc-exec-not-found (FileNotFoundError"
    " for 'nvcc', flashinfer-ai/flashinfer#1781), predicted by toolkit-found; no new round was"
    " collected after it, so the clean figures do not include it",
    "after d08be8c (round 6 misses): signature glibc-math-exception-spec also matches the"
    " message wrapped before 'of previous function' (JustVugg/colibri#966); field signal"
    " bare-ptxas-gpu-name-is-triton (an sm_XYa 'gpu-name' rejection with no nvcc/ninja line is"
    " Triton's bundled ptxas: triton compiler.py sm_arch_from_capability), which also removes"
    " the 2 harmful CUDA_HOME proposals of round 6",
    "after 9786cf4 (round 7 misses): signature nvcc-unsupported-arch also matches 'sm_XY'"
    " values (nvcc echoes -arch=sm_100f, sgl-project/sglang#9340); nvcc-exec-not-found also"
    " matches an absolute path to nvcc (CUDA_HOME/bin/nvcc, lenML/Speech-AI-Forge#258); new"
    " signature custom-allreduce-v2-disabled-capture (AttributeError on a disabled"
    " CustomAllReduceV2, sglang custom_all_reduce_v2.py), predicted by capture-custom-allreduce",
    "after 30a1953 (round 11 miss): field signal undefined-driver-api-symbol (an unmangled cuXxx"
    " undefined symbol is a libcuda driver-API entry point -> driver-supports-build-cuda, not the"
    " torch ABI; sgl-project/sglang#8131); no round was collected after it, so the clean figures"
    " do not include it",
    "class-breadth (after reading the corpus's strict xfails): signature xformers-op-capability"
    " from xFormers' not_supported_reasons template (package-has-gpu-arch/8, a round-3 held-out"
    " miss) and nvcc-path-malformed predicted by cuda-home-is-toolkit (cuda-home-is-toolkit/1);"
    " every other class-breadth change was written from upstream templates and recordings"
    " (tests/fixtures/templates), not from corpus logs",
    "after 926b04f (round 12 misses): signature torch-gpu-arch-unsupported also matches the"
    " second line of torch's _check_capability warning ('The current PyTorch install supports"
    " CUDA capabilities ...'), so a copy whose first line is wrapped or cut still names the"
    " torch wheel (wheel-has-gpu-arch/fc-12)",
    "after 926b04f (round 12 misses): signature package-no-compiled-kernel-for-cc (vLLM"
    " scaled_mm_entry.cu 'No compiled <op> for a compute capability ...'), predicted by"
    " package-has-gpu-arch (package-has-gpu-arch/fa-1)",
    "after 926b04f (round 12 misses): signature cute-dsl-arch-not-admissible (CuTe DSL MmaOp"
    " 'expects arch to be one of [...], but got sm_XY', NVIDIA/cutlass tcgen05/mma.py),"
    " predicted by kernel-arch-feature (kernel-arch-feature/fa-1)",
    "after 926b04f (round 12 misses): signature cudajl-gpu-unsupported-by-toolkit (CUDA.jl"
    " state.jl 'GPU (compute capability M.m) is not supported on CUDA N+'), predicted by"
    " arch-supported-by-toolkit (arch-supported-by-toolkit/fb-22)",
    "after 926b04f (round 12 misses): signature torch-arch-list-printed (the repr of"
    " torch.cuda.get_arch_list()) and field signal torch-arch-list-next-to-no-kernel-image ->"
    " wheel-has-gpu-arch (wheel-has-gpu-arch/fc-23)",
    "after 926b04f (round 12 misses): scan mechanism, a line that matched nothing and ends"
    " mid-sentence holding (or ending with the start of) a specific needle is matched once more"
    " joined to the line after it (same process, at most 64 per log; the symptom keeps the"
    " first line's number); for logs copied hard-wrapped from threads (wheel-has-gpu-arch/fc-12"
    " shape; fixes cuda-math-headers-match-host/fb-19 and fc-2)",
    "after 926b04f (round 12 misses): field signal cccl-ctk-check-is-nvcc-vs-headers (CCCL's"
    " cuda_toolkit.h #error names the nvcc/CUDART_VERSION pair; the FLASHINFER_NVCC route needs"
    " an env var the log never shows): no longer ranks env-unset-flashinfer-nvcc first (was harmful)",
    "after 926b04f (round 12 misses): signature nvcc-not-located (a build helper's own toolkit"
    " lookup in any wording: 'could not find nvcc', 'Could not find NVCC at', TileLang's 'No CUDA"
    " or HIP available on this system') predicted by toolkit-found",
    "after 926b04f (round 12 misses): signature glibc-math-exception-spec accepts EDG's wording"
    " cut at any point from 'incompat' on, with or without the mathcalls.h(N|...) location",
    "after 926b04f (round 12 misses): field signal pkg-resources-is-setuptools-removal"
    " (ModuleNotFoundError for pkg_resources = setuptools 82.0.0 removed it: build-tool-regression)",
    "after 926b04f (round 12 misses): signature python-h-missing also matches torch Inductor's"
    " cpp_builder warning 'Can't find Python.h in <dir>'",
    "after 926b04f (round 12 misses): signature package-needs-newer-nvcc also matches any"
    " setup.py's 'CUDA X or higher/newer/later/above is required' (SageAttention's wording of"
    " flash-attention's nvcc gate); toolkit-major-matches-torch/fc-35 stays a tie (xfail)",
    "after 926b04f (round 12 misses): field signal compiler-runtime-header-is-provided (a"
    " missing sanitizer/*.h is libsanitizer's, shipped by a split package: needed-files-provided)",
    "after 926b04f (round 12 misses): signature companion-built-for-other-torch (HF kernels'"
    " variant rejection 'Torch version (X) does not match environment Torch version (Y)',"
    " torchvision/torchaudio _check_cuda_version) predicted by extensions-match-torch-abi",
    "after 926b04f (round 12 misses): signature jax-cuda-lib-unloadable (JAX's _check_cuda_versions"
    " 'Unable to load X. Is it installed?' / versions_helpers 'The X library was not found')"
    " predicted by ld-library-path-not-shadowing and needed-files-provided; field signal"
    " jax-nvjitlink-dependent-is-search-path (cuSPARSE/cuSOLVER load libnvJitLink themselves)",
    "after 926b04f (round 12 misses): suspicious-line words for failures worded without an"
    " error word ('failure', 'Segfault', 'egmentation fault', 'does not match', 'is undefined',"
    " 'Could not find'): the first real error of a log no rule covers is shown first",
    "after 926b04f (round 12 misses): LLVM ORC's 'JIT session error: ' line is a diagnostic"
    " (scored above the Python exception it causes)",
    "after 03c75cb (round 13 misses): field signal retired-arch-is-a-target-list (nvcc"
    " rejecting a target at or below sm_72 -- one CUDA 9/11/12/13 RETIRED -- is a stale arch list"
    " entry, toolkit-knows-target-archs, never the toolkit too old for the GPU; CUDA release notes);"
    " template nvcc/arch-dropped-by-cuda13 relabelled to that class",
    "after 03c75cb (round 13 misses): signatures fmha-kernel-outside-arch-range (the cutlass"
    " fmha generator's 'FATAL: kernel `X` is for smA-smB, but was built for smN', xformers/torch"
    " generate_kernels.py) and tensorrt-target-sm-unsupported (TensorRT 'Target GPU SM N is not"
    " supported by this TensorRT release'), predicted by package-has-gpu-arch (ff-15, ff-12)",
    "after 03c75cb (round 13 misses): signature cuda-runtime-lib-not-found also matches"
    " 'ImportError: libX.so.N:' (CPython ImportError(dlerror()) naming a CUDA soname), so a copy"
    " cut after the soname still names it (runtime-libs-match-cuda-major/fd-20, fd-21, fd-22)",
    "after 03c75cb (round 12/13 misses, tune-d): signature nvcc-unsupported-arch covers the class"
    " of nvcc's unknown-target message, not one wording: re-cased, cut after 'architect' or"
    " without its value, or quoted without the 'nvcc fatal :' prefix (fb-9, fb-10, fe-3, fb-27)",
    "after 03c75cb (round 12/13 misses, tune-d): remedy.evidence.fields.preceding_commands reads"
    " the nvcc command setuptools/CMake/make echo before an nvcc fatal line (no ninja FAILED:"
    " wrapper; hard-wrapped copies joined), so its targets and toolkit path reach the field"
    " signals and version pairs (fb-26, fb-9)",
    "after 03c75cb (round 12/13 misses, tune-d): field signals plain-arch-is-the-gpu (now only"
    " when the echoed command has one plain target: torch cpp_extension building for the visible"
    " GPU), rejected-target-in-echoed-arch-list and rejected-target-without-gpu-command: a target"
    " nvcc rejects is an arch list's (toolkit-knows-target-archs) unless the log shows a build for"
    " the GPU alone; flips 9 corpus rows to right and arch-supported-by-toolkit/1, /2 (one bare"
    " line each) to wrong; template nvcc/unsupported-arch-plain relabelled",
    "after 03c75cb (round 12/13 misses, tune-d): field signal nccl-cudnn-symbol-in-wheel-is-other-major"
    " (an undefined nccl*/cudnn* symbol in a pip wheel's library: every CUDA major's NCCL/cuDNN"
    " wheel installs the same nvidia/nccl|cudnn path, so another major's wheel overwrote it ->"
    " runtime-libs-match-cuda-major, LD_LIBRARY_PATH second; fc-19, fc-20); template"
    " libs/nccl-symbol relabelled from ld-library-path-not-shadowing",
    "after 03c75cb (tune-d, from upstream sources, no held-out miss of this shape): signature"
    " ld-version-not-found (glibc dl-version.c 'version `libX.so.N' not found (required by Y)')"
    " with field signal cuda-version-node-missing-is-other-major -> runtime-libs-match-cuda-major;"
    " GLIBC_/GLIBCXX_ nodes stay unmatched (no rule); fmha-kernel-outside-arch-range also takes"
    " the older mem-eff macro 'FATAL: this function is for smN, but was built for smM' (citations"
    " of fmha and TensorRT re-read)",
    "after 03c75cb (round 12/13 misses, tune-d): signature pip-requirement-conflict (pip install's"
    " conflict report and pip check, every wording in pip's install.py/check.py, for"
    " requirements on the GPU stack; info severity) predicted by python-requirements-hold, the"
    " one class that had no signature (python-requirements-hold/fe-8)",
    "after 03c75cb (round 12/13 misses, tune-d): torch-abi-undefined-symbol also takes the"
    " demangled c10::/at::/torch:: form (c++filt), and the scan's wrap join also takes a line cut"
    " after a label (ending in ':') or ending in blanks (fold -s) (extensions-match-torch-abi/fa-1)",
    "after 03c75cb (round 12/13 misses, tune-d): signature cuda-invalid-ptx (CUDA error 218 in"
    " each wording: CUDA_ERROR_INVALID_PTX, cudaErrorInvalidPtx, 'a PTX JIT compilation failed',"
    " Rust's 'Error: InvalidPtx') predicted by package-has-gpu-arch (package-has-gpu-arch/ff-5)",
    "after 03c75cb (tune-d, from CPython's subprocess source; jit-parallelism-fits-memory/6 stays a"
    " miss, its status 9 is an exit code): build-oom-killed also takes CalledProcessError's"
    " 'Command [build command] died with <Signals.SIGKILL: 9>'",
    "after 03c75cb (round 12/13 misses, tune-d): signature nvcc-error-in-host-stdlib-header (the"
    " nvcc front end's 'FILE(LINE): error:' inside libstdc++ of a gcc newer than every nvcc in"
    " cuda-tables.yaml max_gcc accepts) predicted by host-compiler-supported"
    " (host-compiler-supported/fe-12; unknown/fa-3, gcc 14 with -std=c++11, stays unmatched)",
    "after 03c75cb (tune-d, from XLA's source, no held-out miss of this shape):"
    " cudnn-version-incompatible also takes XLA's 'Loaded runtime CuDNN library: X but source was"
    " compiled with: Y' (JAX, TensorFlow)",
    "after 03c75cb (round 12/13 misses, tune-d): signature cutlass-status-error (CUTLASS's"
    " cutlassGetStatusString statuses as CUTLASS_CHECK prints them) with field signals: Architecture"
    " Mismatch / Internal -> package-has-gpu-arch, Insufficient Driver -> driver-supports-build-cuda"
    " (package-has-gpu-arch/fa-2)",
    "after 03c75cb (round 12/13 misses, tune-d): field signal"
    " header-and-link-name-missing-is-dev-component (a CUDA library's header and -l<lib> both"
    " missing = its dev component absent from the toolkit -> toolkit-has-library-headers;"
    " toolkit-has-library-headers/ff-13)",
    "after 03c75cb (tune-d, from upstream sources, no held-out miss of this shape): signature"
    " gpu-below-required-capability (flash-attn's 'FlashAttention only supports Ampere GPUs or"
    " newer') and field signal xformers-gpu-too-old-is-hardware (xFormers' '(too old)') ->"
    " kernel-arch-feature, the class the corpus gives a GPU older than the kernels need",
    "after 03c75cb (tune-d, from recorded shells, no held-out miss of this shape): signature"
    " nvcc-not-on-path (dash/bash/make 'nvcc: not found' / 'command not found' / 'No such file or"
    " directory' for nvcc run by name) predicted by toolkit-found",
    "after 03c75cb (tune-d, from CMake 3.25's modules, no held-out miss of this shape):"
    " cmake-cuda-compiler-not-found takes every wording of CMake's CUDA toolkit lookup (the"
    " CUDAToolkit_ROOT form wrapped after 'by', FindCUDA's 'Specify CUDA_TOOLKIT_ROOT_DIR',"
    " 'Couldn't find CUDA library root.')",
    "after 03c75cb (tune-d, harm guard from nvcc 13.0.88 recordings, no held-out miss of this"
    " shape): field signal host-flag-passed-to-nvcc-is-no-toolkit-age (gcc's -f*/-W*/-pthread"
    " rejected by nvcc withdraw nvcc-option-unknown's credit from the CUDA_HOME/toolkit rules)",
    "after 03c75cb (tune-d, from torch's source, no held-out miss of this shape):"
    " gpu-below-required-capability also takes torch Inductor's GPUTooOldForTriton ('Found X which"
    " is too old to be supported by the triton GPU compiler')",
    "after 03c75cb (tune-d, from DeepSpeed's and apex's sources, no held-out miss of this shape):"
    " nvcc-not-located also takes DeepSpeed's 'CUDA_HOME does not exist, unable to compile CUDA"
    " op(s)' and apex's raised '... was requested, but nvcc was not found'",
    "after d31c9eb (round 14 misses, tune-e): signature cccl-cpp-dialect takes CCCL's own"
    " sentence ('Thrust|CUB|libcu++ requires at least C++NN', thrust cpp_dialect.h, cub"
    " util_cpp_dialect.cuh, libcu++ __internal/cpp_dialect.h) with or without the compiler's"
    " '#error'/file:line prefix (cxx-dialect-meets-toolkit/fi-26)",
    "after d31c9eb (round 14 misses, tune-e): signature nvcc-not-found-shell takes a path to a"
    " missing nvcc without the shell's own prefix and an empty toolkit prefix ('/bin/nvcc: not"
    " found' = <empty CUDA_HOME>/bin/nvcc; tvm-ffi/torch/DeepEP join CUDA_HOME unvalidated)"
    " (cuda-home-is-toolkit/fh-1)",
    "after d31c9eb (round 14 misses, tune-e): nvcc-not-located also takes sgl_kernel's toolkit"
    " preload 'Could not find CUDA lib directory.' (sglang sgl_kernel/__init__.py, #8813)"
    " (toolkit-found/fg-4)",
    "after d31c9eb (round 14 misses, tune-e): signature nvrtc-unsupported-arch (NVRTC's 'invalid"
    " value for --gpu-architecture (-arch)', recorded from NVRTC 13.0 for compute_70 and"
    " compute_200), predicted by arch-supported-by-toolkit (arch-supported-by-toolkit/fh-1)",
    "after d31c9eb (round 14 misses, tune-e): signature libcuda-lookup-ldconfig-missing (Triton"
    " libcuda_dirs runs /sbin/ldconfig -p unguarded: FileNotFoundError for it), predicted by"
    " triton-finds-libcuda (triton-finds-libcuda/fh-1)",
    "after d31c9eb (round 14 misses, tune-e): cuda-runtime-lib-not-found also takes torch's"
    " at::DynamicLibrary 'Error in dlopen for library libX.so.N' (ATen DynamicLibrary.cpp, used by"
    " LazyNVRTC) (runtime-libs-match-cuda-major/fh-1)",
    "after d31c9eb (round 14 misses, tune-e): signatures meson-host-compiler-id and"
    " meson-nvcc-sanity-check-failed (a wrapper: mesonbuild compilers/cuda.py sanity_check) and"
    " field signal host-gcc-newer-than-every-nvcc-meson (host gcc >= 16, newer than every nvcc's"
    " max_gcc) -> host-compiler-supported (host-compiler-supported/fh-1)",
    "after d31c9eb (round 14 misses, tune-e): signature cuda-invalid-image-code ('CUDA error 200'"
    " = CUDA_ERROR_INVALID_IMAGE, not 209 NO_BINARY_FOR_GPU: the driver cannot read an image"
    " built by a newer CUDA; CUDA Driver API CUresult), predicted by driver-supports-build-cuda"
    " (driver-supports-build-cuda/fh-2)",
    "after d31c9eb (round 14 class-null rows named by a rule, tune-e): field signal"
    " cuda-library-api-symbol-is-search-path (-> ld-library-path-not-shadowing) only for torch's"
    " own libraries (torch/lib/, libtorch*.so); for other binaries an unmangled cudaX/cublasX"
    " undefined symbol says only 'built with a newer CUDA minor than the loaded runtime'"
    " (unknown/fc-33, fg-3, fi-31: no LD_LIBRARY_PATH cause); new zero-weight signal"
    " cuda-library-api-symbol-is-not-torch-abi keeps extensions-match-torch-abi off such lines;"
    " template libs/cudart-symbol-version.log relabelled null",
    "tune-f (after round 15; class-null logs of rounds 5-15 read, written from upstream docs): new"
    " class toolkit-major-keeps-project-api (code written for CUDA 12 names an API CUDA 13 / CCCL"
    " 3.0 / cuda-bindings 13 removed or changed): signature cuda-api-not-in-toolkit captures the"
    " symbol a compiler or Python rejects, and the field signal removed-cuda-api-in-table names the"
    " class only for symbols in knowledge/cuda-api-changes.yaml (CCCL 3.0 migration guide,"
    " cuda-bindings 13.0.0 notes, CUDA 12.x -> 13.x API changes; C++ rows checked against nvcc"
    " 13.0.88's headers); its repair is a manual report (no toolchain step); 24 class-null rows"
    " relabelled (21 named, 3 strict xfails; EDG's unnamed arity error read from the echoed"
    " cuCtxCreate_v4 call, signature cuda-api-call-echoed-after-arity-error); texture references (removed in CUDA 12.0) in the same"
    " table ('texture is not a template', recorded with nvcc 13.0.88); the CUDA 13 graph-edge and"
    " memory-location signatures (clang's 'no matching function for call to', EDG's 'is"
    " incompatible with parameter of type', from the 13.0.88 cuda_runtime_api.h)",
    "tune-f (after reading round 12-15's first-error-line xfails): a log no rule explains ranks its"
    " matched error lines (a signature whose credit field signals withdraw, an ld 'undefined"
    " reference') with the unmatched suspicious lines on the same score"
    " (remedy.evidence.suspicious.with_unexplained, used by remedy diagnose and the corpus test);"
    " 8 first-error-line xfails pass (fc-33, ff-9, fg-3, fg-5, fi-5, fi-17, fi-18, fi-31)",
    "tune-g (after reading round 16's misses, fk-4/fk-5): knowledge/cuda-api-changes.yaml gains"
    " 'families:', name shapes a major removed as a whole; the first is CUDA 13's unversioned"
    " PFN_cuX driver-entry-point typedefs (cudaTypedefs.h 13.0 read here declares only"
    " PFN_cuX_vNNNNN; the CUDA 11.x header aliased every unversioned name); gcc's '‘X’ does not"
    " name a type' joins signature cuda-api-not-in-toolkit (recorded with g++ 12.2)",
    "tune-g (after reading round 16's miss fl-2): nvcc-unsupported-arch captures a target named"
    " by no compute capability ('compute_none', 'sm_native'), and field signal"
    " named-placeholder-target ranks it toolkit-knows-target-archs, never"
    " arch-supported-by-toolkit (Spack's cuda_arch default 'none' expanded by cuda_flags)",
    "tune-g (after reading round 16's fm-6 named extensions-match-torch-abi): field signal"
    " unmangled-symbol-outside-torch-shim-is-not-torch-abi withdraws the torch-ABI credit of an"
    " 'undefined symbol' that is neither mangled (_Z) nor in libtorch's extern \"C\" shim"
    " (torch_*, aoti_torch_*; torch/csrc/stable/c/shim.h)",
    "tune-g (after reading round 16's first-error-line xfails fk-1, fk-16, fl-8): the suspicious"
    " line ranking scores GNU ld's 'undefined reference to' as a linker diagnostic (ld/ldmain.c),"
    " distutils' 'command ... failed with exit code' as a wrapper (_distutils/spawn.py), a bare"
    " 'Error:' heading as no message, and an earlier line stating a later exception's message as"
    " high as that exception (logging.Formatter.format writes the message before exc_info)",
    "tune-h (after reading round 16's miss cccl-complete/fk-9, NVRTC's wording): signatures"
    " missing-header, cuda-lib-header-missing and python-h-missing take every compiler's wording"
    " of a missing #include, not only gcc's: EDG/NVRTC 'catastrophic error: cannot open source"
    " file \"X\"' and 'could not open source file ... (no directories in search list)' (recorded"
    " from NVRTC 13.0.88), clang's 'X' file not found (DiagnosticLexKinds.td), MSVC C1083; field"
    " signal missing-cccl-header names cccl-complete from NVRTC's wording only when a toolkit"
    " header includes the CCCL header (the JIT program's own -I list is no pip-install-cccl"
    " cause: fk-9 and unknown/fk-10 are one line with two causes, fk-9 stays a strict xfail)",
    "tune-h (jit-cache-intact, the class with one signature; from glibc's dl-load.c and"
    " recordings, no held-out miss of this shape): shared-object-truncated also takes glibc's"
    " 'cannot read file data' (a .so truncated past its ELF header), the loader's own"
    " 'error while loading shared libraries: X.so: ...' prefix, torch's 'Error in dlopen: ' and"
    " GNU ld's 'error: X.so: file too short'",
    "tune-h (from lld's Driver.cpp, Microsoft's LNK1104 page and a gold recording, no held-out"
    " miss of this shape): ld-cannot-find-lib also takes lld's 'error: unable to find library"
    " -lX' and link.exe's 'LNK1104: cannot open file X.lib' (a .lib only, never a locked"
    " .exe/.dll), so the -lcuda / -lcudart / CUDA-library field signals decide on every linker",
    "tune-h (build-tool-regression, the class with one signature; from CMake 4.0.3 recordings,"
    " no held-out miss of this shape): cmake-policy-removed also takes CMake 4's refusal of a"
    " cmake_policy(SET CMPnnnn OLD) for a policy it removed (CMP0000-CMP0065, introduced before"
    " 3.5), never a policy 4.0 still supports nor 3.27-3.31's 'will be removed' warning",
    "tune-h (capture-sync-free, one signature; from libcudart 13.0's error strings and cuda.h,"
    " no held-out miss of this shape): cuda-stream-capture-unsupported also takes 906"
    " (cudaErrorStreamCaptureImplicit, 'operation would make the legacy stream depend on a"
    " capturing blocking stream'), cudaErrorCapturedEvent and the driver API's CUresult names"
    " (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED/_IMPLICIT, CUDA_ERROR_CAPTURED_EVENT; _INVALIDATED"
    " for the wrapper); 905 (isolation, a side stream) stays out",
    "tune-h (the CUresult-200 family, from libcudart 13.0's strings and Triton's driver.c; no"
    " held-out miss of this shape, round 14's fh-2 was its number): cuda-invalid-image-code"
    " (driver-supports-build-cuda) also takes the error by name (cudaErrorInvalidKernelImage,"
    " CUDA_ERROR_INVALID_IMAGE) and torch's 'CUDA error: device kernel image is invalid', which"
    " had no class; triton-invalid-kernel-image (driver-runs-ptx) keeps only Triton's own"
    " 'Triton Error [CUDA]: ' lines (both classes repair with upgrade-driver: never harmful)",
    "tune-h (from torch 2.14.1's torch/utils/cpp_extension.py, no held-out miss of this shape):"
    " torch-cuda-version-mismatch reads CUDA_MISMATCH_MESSAGE as current torch raises it, its two"
    " literals joined with no blank ('used to compilePyTorch (12.8)'), which matched nothing",
    "tune-h (from torch 2.14.1's torch/backends/cudnn/__init__.py, no held-out miss of this"
    " shape): new signature torch-cudnn-gpu-below-sm75 ('cuDNN version N is not compatible with"
    " devices with SM < 7.5', torch's bundled cuDNN >= 9.11 on a pre-Turing GPU), predicted by"
    " wheel-has-gpu-arch, whose rule already fails CUDA 13 torch below 7.5",
    "tune-h (from torch 2.14.1's torch/cuda/__init__.py, recorded by calling its"
    " _warn_unsupported_code; no held-out miss of this shape): torch-gpu-arch-unsupported also"
    " takes the first two lines of the current capability warning ('Found GPU0 X which is of"
    " compute capability (CC) M.m.', 'The following list shows the CCs this version of PyTorch"
    " was built for ...'), so a copy cut before its verdict line names the wheel",
    "tune-h (recorded with g++ 12.2; no held-out miss of this shape): glibc-math-exception-spec"
    " takes gcc's 'declaration of X has a different exception specifier' with the U+2018/U+2019"
    " quotes gcc prints in a UTF-8 locale, not only ASCII quotes",
    "tune-i (after reading round 17's miss fo-9): cuda-api-not-in-toolkit takes GCC's"
    " cv-qualified and typedef wordings of a missing member ('const struct cudaDeviceProp' has no"
    " member named, 'cudaDeviceProp' {aka 'struct cudaDeviceProp'}; gcc/c/c-typeck.cc %qT,"
    " gcc/testsuite/g++.dg/spellcheck-fields.C)",
    "tune-i (after reading round 17's miss fn-4): undefined-symbol also matches glibc's"
    " 'undefined symbol:' whose symbol was wrapped onto the next line or cut when quoted",
    "tune-i (after reading round 17's misses fn-8 and fp-7): signatures cuda-runtime-none-loadable"
    " (a loader that tried every CUDA runtime soname it knows: cudnn-frontend's 'Unable to load"
    " any libcudart.so.* library', include/cudnn_frontend_shim.h) and tf-gpu-libs-not-loadable"
    " (TensorFlow's 'Cannot dlopen some GPU libraries', gpu_device.cc; info) join"
    " runtime-libs-match-cuda-major (later: XLA cudart_stub.cc's 'Error loading CUDA libraries. GPU will"
    " not be used' and TensorFlow dso_loader.cc's Windows 'Could not load dynamic library"
    " 'cudart64_110.dll'' too); an info line beside a failing (error/fatal, non-wrapper)"
    " line weighs 0.05 instead of 0.5 (diagnose.INFO_BESIDE_FAILURE_WEIGHT), so it rarely outranks"
    " what failed",
    "tune-i (after reading round 17's first-error-line misses fo-5 and fp-6): the suspicious-line"
    " words add 'no member', 'not a member' (EDG's 'namespace \"X\" has no member \"Y\"', GCC's and clang's"
    " missing-member wordings quoted without 'error:') and 'only supports' (a kernel's arch guard"
    " printed before it traps)",
    "tune-j (after reading round 18's miss fq-5): knowledge/cuda-api-changes.yaml lists the runtime"
    " calls CUDA 13.0 removed (the cudaThread* family, cudaSetDoubleForDevice/Host,"
    " cudaLaunchCooperativeKernelMultiDevice; 12.3 runtime API docs' deprecated group, absent from"
    " the 13.0.88 headers here), and cuda-api-not-in-toolkit takes MSVC's C3861 'identifier not"
    " found' and GCC's C 'implicit declaration of function' (error form) wordings",
    "tune-j (after reading round 18's miss fq-8): missing-header also takes GCC's line quoted"
    " without its ': No such file or directory' tail when an include name ends the line (CUDA 13"
    " moved Thrust/CUB/libcu++ under include/cccl: CCCL 3.0 migration guide)",
    "tune-j (after reading round 18's miss fr-1): new signatures xla-ptxas-too-old (XLA's raised"
    " 'PATH ptxas too old. Falling back to the driver to compile.', error) and"
    " xla-ptxas-too-old-fallback (LogPtxasTooOld's warning, info; openxla/xla"
    " subprocess_compilation.cc), predicted by arch-supported-by-toolkit (a CUDA_HOME/toolkit"
    " repair, never a driver one)",
    "tune-j (after reading round 18's miss fr-9): cuda-runtime-lib-not-found takes CTranslate2's"
    " 'Library X is not found or cannot be loaded' without the exception's name (an application"
    " prints it after its own prefix) and its Windows DLL name cublas64_N.dll (src/cuda/"
    "cublas_stub.cc, nccl_stub.cc); prefilter literal 'is not found' added",
    "tune-j (after reading round 18's miss fr-11): tensorrt-target-sm-unsupported takes the bare"
    " 'Target GPU SM N is not supported by this TensorRT release.' line and TensorRT's kernel-library"
    " wording 'Unsupported SM: 0xMmm' (trtSmToCask), both package-has-gpu-arch",
    "tune-j (after reading round 18's first-error-line misses fq-10, fr-5, fr-12, fr-13): no-class"
    " error signatures cudajl-gpu-not-fully-supported (CUDA.jl state.jl's capability warning and"
    " its below-5.0 error), nvrm-gpu-not-driven (NVRM: a GPU the module will not drive: no GSP"
    " for open nvidia.ko, another driver release, legacy branch, off the bus, 'No NVIDIA GPU"
    " found'; open-gpu-kernel-modules osapi.c/nv.c/nv-pci.c) and nvrm-api-mismatch (both NVRM"
    " wordings), so the line that matters is shown; suspicious-line word 'No devices'"
    " (nvidia-smi's verdict)",
    "tune-j (the fq-5 family at link time): field signal removed-cuda-api-unresolved-at-link names"
    " toolkit-major-keeps-project-api for an ld 'undefined reference' to a C API the table marks"
    " removed (recorded: an object calling cudaThreadSynchronize linked with CUDA 13.0.88's"
    " libcudart; signature-changed rows keep their C symbol and never match)",
    "tune-j (the fr-1 family): field signal xla-ptxas-gpu-name names arch-supported-by-toolkit,"
    " not Triton, for ptxas' 'Value sm_XY is not defined for option gpu-name' quoted in XLA's"
    " 'ptxas exited with non-zero error code' (bare-ptxas-gpu-name-is-triton now skips those"
    " lines); cuda-api-not-in-toolkit also takes GCC's 'there are no arguments to X that depend"
    " on a template parameter' (recorded with g++ 12.2)",
    "tune-k (after reading the class-null rows fh-8, fi-3, fi-4, fi-13, fi-14, fl-1, fq-3, fq-4,"
    " fs-1, fs-4 (held-out rows); wordings from moby, the CDI library, Podman, ramalama and the"
    " NVIDIA Container Toolkit/libnvidia-container sources): new class container-runtime-provides-gpu"
    " (knowledge/rules-containers.yaml) with signatures container-gpu-device-driver-missing,"
    " container-runtime-nvidia-unknown, cdi-device-unresolvable, cdi-spec-unparsable,"
    " cdi-device-not-configured, nvidia-hook-csv-mode-gpus-flag, cdi-hook-binary-missing,"
    " nvidia-container-cli-nvml-missing; those ten rows relabelled to it",
    "tune-l (after reading the notes of rounds 17-18's class-null rows fp-8, fr-5, fr-12, fr-13;"
    " written from open-gpu-kernel-modules osapi.c/nv-pci.c and NVML's nvml.h): new class"
    " driver-module-matches-libraries (the loaded kernel module and the user-space driver are"
    " different versions: NVRM's 'API mismatch', predicted from nvrm-api-mismatch, and NVML's"
    " 'Driver/library version mismatch', new signature nvml-driver-library-mismatch) and new"
    " class driver-branch-drives-gpu (the driver branch or module flavour does not drive the"
    " GPU: new signature nvrm-gpu-needs-other-driver on the module's continuation lines, open"
    " nvidia.ko without GSP, 'not supported by the NVIDIA X driver release', the 580.xx legacy"
    " message, nv-pci.c's 'ignoring the legacy GPU'; prefilter literal 'NVRM:' added); both"
    " repairs are manual reports; fp-8 and fr-5 relabelled to the first, fr-12 and fr-13 to the"
    " second",
    "tune-m (after reading round 19's misses ft-1, ft-7): cuda-api-not-in-toolkit takes EDG's"
    " 'has no member' with a mangled closing quote (\"Max'); ptxas-feature-needs-arch-target and"
    " ptxas-feature-absent-on-arch take typographic quotes (‘mma with block scale’, recorded with"
    " ptxas 13.0.88 for sm_121 vs sm_121a); cuda-api-changes.yaml gains the CCCL 3.0 migration"
    " guide's other removed cub:: functions with a replacement (LaneMask*, WARP_*, CTA_SYNC_AND/OR,"
    " SHFL_IDX_SYNC, BFI, PRMT, GridBarrier*, Mutex, ThreadTrap), each checked with nvcc 13.0.88",
    "tune-o (from upstream source only: DeepGEMM csrc/jit/compiler.hpp and csrc/utils/exception.hpp,"
    " sgl-kernel 0.3.21, vllm 0.34.0, bitsandbytes 0.50.2 and xformers 0.0.35 wheels, triton 3.8.0,"
    " torch 2.14.1, flashinfer 0.6.11; no held-out diagnosis was studied): new signatures"
    " deepgemm-nvcc-missing (predicted by cuda-home-is-toolkit) and kernel-requires-newer-sm"
    " (SGLang/FlashInfer 'X requires SMnn[, SMmm]' raised errors, kernel-arch-feature);"
    " gpu-below-required-capability also"
    " takes sgl-kernel's FA3 gate, vLLM's attention-backend 'compute capability not supported' and"
    " quantization capability gates, FlashMLA's Hopper/Blackwell reasons, SGLang's sm75 floor and"
    " FA3/TRTLLM/tokenspeed backend gates, and Triton's num_ctas > 1 below SM90 (kernel-arch-feature);"
    " package-needs-newer-nvcc takes flash-attention's major-only wording; torch-gpu-cc-outside-range"
    " takes torch 2.8-2.9's matched_cuda_warn ('Please install PyTorch with a following CUDA')."
    " DeepGEMM's 'NVCC version"
    " should be >= 12.3' was tried on package-needs-newer-nvcc and dropped when tests/test_corpus.py"
    " showed round 12's unknown/fa-4.log holds that line labelled null; CUDA-init errors 34/802 (803 is tune-n's class)"
    " and bitsandbytes' missing-binary shapes stay without a rule after reading the corpus notes of"
    " unknown/fo-2, ff-3, fp-4, fk-1 and fc-22 (labelled null)",
    "tune-n (after reading the notes and logs of the class-null corpus rows ff-3, fo-2, fp-4"
    " and the 804 rows ff-2, fi-32; written from CUDA 13.0's cuda.h/driver_types.h (803/804),"
    " libcudart.so.13's strings, the CUDA Compatibility guide's Forward Compatibility page, and"
    " the emitters torch CUDAFunctions.cpp, XLA/TF cuda_driver.h ToString, numba driver.py,"
    " ollama gpu_info_nvcuda.c): new class compat-libcuda-only-where-supported (the libcuda CUDA"
    " loads pairs with the kernel driver; a cuda-compat libcuda only on a data-center GPU and an"
    " older driver), new signature cuda-system-driver-mismatch (error 803 by string, both names"
    " and ollama's numeric form), repair a manual report; cuda-forward-compat-unsupported (804)"
    " also takes ollama's numeric form and stays container-driver-satisfies-image's; field"
    " signals give 803 to container-driver-satisfies-image beside an NGC image's driver check and"
    " to driver-module-matches-libraries beside NVML's/NVRM's version mismatch; ff-3, fo-2, fp-4"
    " relabelled to the new class",
    "tune-q (after round 20's misses fu-7/8/9, fw-1/3/4, fx-5/8 and the class-null row fu-6;"
    " read moby daemon/devices.go, devices_linux.go, devices_nvidia_linux.go,"
    " devices_amd_linux.go, errors.go at b985e231, open-gpu-kernel-modules osapi.c"
    " rm_is_supported_device, osinit.c, nv.c, nverror.h at df1c9a3d, the proprietary module's"
    " 'requires use of the NVIDIA open kernel modules' as recorded in a public dmesg, ublue-os/main"
    " build_files/nvidia-install.sh at 01ffb5d5, triton 3.8.0 language/core.py dtype.to_ir and"
    " backends/nvidia/compiler.py parse_options, cncf-tags container-device-interface's"
    " Device.validate, the vllm 0.34.0 wheel's gpu_worker.py): new signatures"
    " docker-gpus-no-nvidia-device-driver (Docker 28+'s AMD CDI fallthrough for --gpus: 'AMD CDI"
    " spec not found', 'no known GPU vendor found') -> container-runtime-provides-gpu,"
    " kmod-nvidia-package-version-mismatch (the Universal Blue image guard) ->"
    " driver-module-matches-libraries, triton-fp8e4nv-below-sm89 (also vLLM 0.34.0's own 'native FP8 (fp8e4nv) requires SM89+' guards in triton_attn.py, triton_mla.py, triton_reshape_and_cache_flash.py) -> kernel-arch-feature;"
    " container-gpu-device-driver-missing also without Docker's prefix; nvrm-gpu-needs-other-driver"
    " also takes the proprietary module's open-module requirement and the GSP line without"
    " 'NVRM: ', cdi-device-unresolvable also the NVIDIA Container Runtime's cdi-mode 'failed to inject CDI devices' (nvidia-container-toolkit internal/modifier/cdi/registry.go at d34b3046), and the 515-535 open module's 'Open nvidia.ko is only ready for use on Data Center GPUs' (osinit.c at tags 515.43.04, 525.60.11). Left unknown: fu-7 ('invalid device, empty device edits' is fu-6's line too, a"
    " class-null row), fw-1 (Xid 169 SEC2_HALT_ERROR + RmInitAdapter name no cause), fw-4 (a"
    " generic torch OOM; the VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS hint it quotes is not in"
    " the vLLM source read)",
    "tune-r (after round 21's misses fy-4, fza-1 and the class-null rows fy-1, fy-2, fy-6, fy-9,"
    " fx-7; read torch 2.14.1's cpp_extension.py _check_cuda_version, libnvidia-container"
    " src/driver.c/error.c/error_generic.c, NVIDIA/go-nvlib pkg/nvml/return.go, dell/dkms dkms.in"
    " at 793fdab5, rpmfusion/akmods akmods at 0bb03928, kmod tools/modprobe.c, libdnf"
    " libdnf/goal/Goal.cpp, libsolv/libzypp problem strings, apt apt-private/private-output.cc"
    " ShowBroken, open-gpu-kernel-modules kernel_rc.c's Xid print, NVIDIA's Xid catalog and driver"
    " installation guide): torch-cuda-version-mismatch takes torch 2.14's args-tuple form with %s"
    " unfilled (recorded); nvml-driver-library-mismatch takes libnvidia-container's lower-cased"
    " 'nvml error: driver/library version mismatch' and the Go code name"
    " ERROR_LIB_RM_VERSION_MISMATCH, nvrm-api-mismatch the open wording's first line; new class"
    " driver-module-built-for-kernel (manual report) with signatures nvidia-kmod-build-failed"
    " (DKMS/akmods failures of the NVIDIA module only), nvidia-module-not-found (kmod's modprobe)"
    " and nvidia-kmod-package-uninstallable (libsolv/apt refusing an NVIDIA kernel-module"
    " package); class-free error signatures package-resolver-problem and nvidia-xid so the"
    " suspicious-line scan shows them; fy-1, fy-2, fx-7, fy-6 relabelled to the new class;"
    " fy-4 (only the persistenced socket line) left a miss; field signals"
    " lib-not-runtime-is-not-cudart-link (toolkit-links-cudart and triton-finds-libcuda only for"
    " -lcudart/-lcuda) and torch-library-link-is-no-provider (-ltorch*/-lc10 are the torch"
    " wheel's own, as for the loader's line), so fza-2 names no cause; GNU ld's 'cannot find -l'"
    " scores as a linker diagnostic and cargo's 'could not compile `X`' as a wrapper; apt's"
    " 'has no installation candidate' / 'Unable to locate package' shown (apt-private/"
    "private-cacheset.cc, apt-pkg/cacheset.cc), naming the new class only for an NVIDIA"
    " kernel-module package",
    "tune-s (after reading the harmful rows of 30a1953 and HEAD: package-has-gpu-arch/fh-1,"
    " fp-12): toolchain_actions counts upgrade-driver by its gpu_driver effect (refs from 926b04f"
    " on have no action touches, so no driver upgrade was counted harmful there: HEAD's 0 was 2,"
    " clean rounds d31c9eb and d88cf0b 1 each); field signals may name in 'unless' the signals"
    " that confirm their line, and insufficient-driver-unconfirmed withdraws both driver rules'"
    " credit from a CUDA error 35 that states no driver version and names no binary (cudart"
    " returns 35 with no libcuda at all: recorded with libcudart 13.0; torch's device_count_impl"
    " in c10/cuda/CUDAFunctions.cpp splits it by cudaDriverGetVersion); field signal"
    " lib-outside-cuda-runtime-is-not-toolkit-layout (an ld 'cannot find -lX' for anything but"
    " cuda/cudart/cudadevrt is no toolkit link-layout or Triton cause; torch 2.14.1"
    " cpp_extension._prepare_ldflags); field signal"
    " triton-ptxas-failure-without-a-ptxas-version-reason (Triton's ptxas exit-status line gives"
    " triton-ptxas-knows-arch no credit unless ptxas' stderr names an unknown gpu-name, PTX"
    " .version or .target; triton 3.8.0 make_cubin, a recorded 'too much shared data' template);"
    " field signal compiler-cannot-start-outside-flashinfer-jit (a CUDA compiler that cannot load"
    " a shared library names FLASHINFER_NVCC only inside a FlashInfer JIT build: a failed edge in"
    " its cached_ops dir, a flashinfer/jit frame; flashinfer 0.6.11 cpp_ext.py/env.py);"
    " equal log-only evidence ranks a report-only rule before one whose repairs change the host"
    " (diagnose.changes_facts) before the rule id",
    "tune-t (after round 22's misses, 78c8edc): signatures cmake-cudatoolkit-root-no-nvcc (CMake"
    " FindCUDAToolkit/CMakeDetermineCUDACompiler 'Could not find [`]nvcc[`] executable in path"
    " specified by [environment] variable CUDAToolkit_ROOT=', -> cuda-home-is-toolkit) and the"
    " backtick GUESS form plus a project's 'CUDA Toolkit not found' in cmake-cuda-compiler-not-found"
    " (Kitware/CMake Modules/FindCUDAToolkit.cmake _CUDAToolkit_find_failure_message);"
    " cuda-bindings-no-cuda-h (NVlabs/cuda-oxide crates/cuda-bindings/build.rs) -> toolkit-found"
    " with field signal cuda-h-missing-where-bindings-found-no-toolkit; cuda-lib-header-missing"
    " takes the short '<lib>.h not found'; capture-cuda-error-oom (c10/cuda/CUDAException.cpp"
    " 'CUDA error: out of memory' near a CUDA-graph capture line) -> capture-memory-headroom;"
    " runtime-min-driver-stated (MAX's 'requires a minimum driver version of N ... Your driver"
    " version is X', the driver stated in the log) -> driver-supports-build-cuda;"
    " tileiras-unknown-gpu-name (LLVM cl 'Cannot find option named' for tileiras --gpu-name) ->"
    " arch-supported-by-toolkit; field signal compiler-builtin-header-is-provided (stddef.h etc.:"
    " libclang-common-N-dev / libgcc-N-dev, dpkg -c recorded) -> needed-files-provided; then,"
    " for the same families without a held-out log: clang-cuda-no-installation (clang"
    " DiagnosticDriverKinds.td err_drv_no_cuda_installation), cudarc build.rs' 'Unable to find"
    " `include/cuda.h` under any of' and rust-build-nvcc-not-found (bindgen_cuda's nvcc"
    " expect, NotFound only) -> toolkit-found; cuda-lib-header-missing also for nvjpeg/npp/"
    "nvJitLink/cufile headers (providers.yaml wheels); capture-cuda-oom also for SGLang's"
    " 'Capture cuda graph failed: CUDA error: out of memory' (sglang 0.5.12 cuda_graph_runner.py)",
    "after 6c83b9b (round 23's held-out harmful miss fzf-4, a Mojo kernel whose ptxas rejects"
    " sm_110a): field signal compiler-quoted-ptxas-gpu-name names arch-supported-by-toolkit for a"
    " ptxas gpu-name rejection a compiler reports at its own source location (FILE:LINE:COL:"
    " error: ptxas ..., llvm SourceMgr's form), and bare-ptxas-gpu-name-is-triton no longer"
    " takes such a line (Triton's PTXASError names no source location); no round was collected"
    " after it, so the clean figures do not include it",
    "tune-w (after round 24's misses, 95429ab): signature paddle-gpu-arch-not-compiled (Paddle's"
    " compiled_archs{CUDA_REAL_ARCHS} check, paddle/phi/backends/gpu/gpu_resources.cc"
    " InitGpuProperties, old LOG(WARNING) wordings and the newer 'Mismatched GPU Architecture'"
    " one) -> package-has-gpu-arch; xla-llvm-ptx-version-below-target (llvm NVPTXSubtarget.cpp"
    " 'PTX version X does not support target' in XLA's gpu_compiler.cc 'LLVM Fatal Error ..."
    " Reason:' form only; a bare LLVM ERROR stays unknown: Triton derives +ptx from its own"
    " ptxas) -> arch-supported-by-toolkit; field signal"
    " cuda-library-from-system-toolkit-dir-is-search-path (an ImportError/OSError naming a CUDA"
    " library under /usr/local/cuda*|/opt/cuda* as the object with the unresolved symbol, not a"
    " libc function; ld.so(8) search order) -> ld-library-path-not-shadowing; derived field"
    " lib_cuda_majors from knowledge/providers.yaml and signals"
    " soname-shipped-by-every-cuda-major-is-a-missing-package(-generic): a missing soname that"
    " the CUDA 12 and 13 lines both ship (libcurand.so.10, libcusparse.so.12) gives"
    " runtime-libs-match-cuda-major no credit -> needed-files-provided",
    "lead (after round 24's null row fzi-4): suspicious.WORDS gains 'nable to load' so cuDNN's"
    " 'Unable to load any of {libcudnn_...}' is a suspicious line (it names no cause)",
    "tune-ad (after round 28's misses, 9c052dc): undefined-symbol's symbol field drops a"
    " wrapper's full stop (sglang flashinfer_comm_fusion.py '{e}. Disabling ...'), so the"
    " unmangled-symbol exclusions read it; field signal"
    " cuda-library-from-system-toolkit-dir-is-search-path also takes cuDNN 8's 'Could not load"
    " library X. Error: <dlerror>', TensorFlow's \"Could not load dynamic library 'X'; dlerror:\""
    " and ONNX Runtime's 'Failed to load library X with error:' lead-ins;"
    " cuda-library-object-is-not-extension-abi (a CUDA library missing a symbol is no torch"
    " ABI); nvjitlink-symbol-is-search-path only for toolkit libraries and torch's own (a RAPIDS"
    " wheel's nvJitLink miss names no search path); signature pip-resolver-cuda-wheel-conflict"
    " (pip's 'P V depends on nvidia-X==...' and uv's pin clash) -> python-requirements-hold,"
    " withdrawn with pip's 'no matching distributions' paragraph; field cmd_link_cuda_libdir"
    " (the link command echoed before 'cannot find -l<lib>') and signal"
    " cuda-lib-link-without-cuda-libdir: a CUDA -l with no CUDA -L gives needed-files-provided"
    " no credit",
    "tune-ae (after round 29's misses, 27bc768): build-oom-killed takes GNU make's"
    " '*** [<mk>:<n>: <obj>.o] Error 137' / '... Killed' (src/job.c child_error) and"
    " setuptools' 'command ... failed with exit code -9' -> jit-parallelism-fits-memory;"
    " tensorrt-target-sm-unsupported takes TensorRT 7's 'Assertion failed: Unsupported SM.' /"
    " 'trtSmToCask: 0 (Unsupported SM.)'; signatures tei-compute-cap-not-compiled"
    " (text-embeddings-inference's 'Runtime compute cap N is not compatible with compile time"
    " compute cap M') -> package-has-gpu-arch and ctranslate2-compute-type-unsupported"
    " ('Requested float16|bfloat16|int8* compute type, but the target device ...') ->"
    " kernel-arch-feature; field signal insufficient-driver-outside-torch no longer takes"
    " CTranslate2's 'CUDA failed with error' (old driver and no driver in a container read the"
    " same): insufficient-driver-ctranslate2-with-driver-stated needs a driver-version line;"
    " fields.range_contexts reads torch 2.5-2.9's range warning around its line and signal"
    " torch-cc-range-gpu-above-newest-minor gives wheel-has-gpu-arch no credit for a GPU above"
    " the newest minor of a major the wheel has (GB10 12.1 on a 12.0 wheel); field signal"
    " killed-after-nvcc-command: a shell's bare 'Killed' right after an echoed nvcc command"
    " (fields.preceding_commands) -> jit-parallelism-fits-memory",
    "tune-ah (after rounds 32-35's misses, fafbf0a): signatures torchao-cpp-extensions-skipped"
    " (torchao's 'Skipping import of cpp extensions due to incompatible torch version') ->"
    " extensions-match-torch-abi, candle-bf16-kernel-not-in-module (candle's 'named symbol not"
    " found ... when loading <kernel>_bf16') -> kernel-arch-feature,"
    " nvcc-host-pass-libstdcxx-parameter-packs (gcc's 'parameter packs not expanded' in"
    " libstdc++'s std_function.h/tuple) -> host-compiler-supported,"
    " triton-llvm-cannot-select-tcgen05 -> triton-knows-gpu; container-gpu-device-driver-missing"
    " without the quoted driver name, nvml-driver-library-mismatch takes 'Failed to initialize"
    " NVML: Function Not Found', gpu-lacks-number-format the bare _scaled_mm line,"
    " nvidia-kmod-build-failed kbuild's make error in /dkms/nvidia/<ver>/build,"
    " cuda-runtime-lib-not-found ldd's/ntldd's 'X => not found', moe-kernel-arch-dispatch-"
    "refuses-gpu DeepGEMM's 'Unknown recipe' (utils/layout.hpp)",
    "after fb037e10 (round 52's harmful classed miss gdu-1, hashcat/hashcat#4728): field signal"
    " ptx-version-under-driver-jit-error (a ptxas 'Unsupported .version' line in a log with the"
    " driver's CUDA_ERROR_UNSUPPORTED_PTX_VERSION text is the driver's JIT, not a toolkit"
    " cicc/ptxas pair) -> driver-supports-build-cuda; round 52's figures are fb037e10's",
    "after 260ce802 (round 53's gej-5 Comfy-Org/ComfyUI#1150, gel-4 ggml-org/llama.cpp#8117,"
    " gel-7 ollama/ollama#6647, gek-5 NVIDIA/cuda-python#1126; first error line, tune-bh):"
    " suspicious.py: ComfyUI's 'Error occurred when executing <Node>:' heading is a wrapper;"
    " a call 'cudaGetLastError()' is no exception line; ' err: ' (a C helper's return code) is"
    " an error word and a logfmt level=DEBUG record ranks below it; a NeMo/glog W-level header"
    " is a warning verdict",
    "after 260ce802 (round 53's null gel-8, ggml-org/llama.cpp#5686, tune-bh): field signal"
    " ggml-no-device-code-for-a-compiled-arch (ggml's no_device_code prints __CUDA_ARCH__, one"
    " of the compiled list: GPU lacking the feature vs PTX JIT on a newer GPU) -> no cause",
    "after 260ce802 (round 53's null gej-4, thu-ml/SageAttention#291, tune-bh): field signals"
    " wgmma-on-a-target-without-any-wgmma / tcgen05-on-a-target-without-any-tcgen05 (ptxas's"
    " 'not supported on .target sm_NN' for wgmma off sm_90, tcgen05 off the sm_100a family)"
    " withdraw arch-specific-target -> no cause",
    "after 260ce802 (round 53's gel-2, LostRuins/koboldcpp#610): signature"
    " package-build-arch-excludes-gpu also takes ggml-cuda.cu's older device-side bad_arch()"
    " wording 'ggml-cuda was compiled without support for the current GPU architecture'"
    " -> package-has-gpu-arch",
    "after 260ce802 (round 53's geh-5, pytorch/pytorch#197765): signature"
    " torch-cuda-home-not-set takes torch's OSError cut after its first sentence or inside"
    " 'Please set it to your' (InductorError wrapping) -> toolkit-found",
    "after 260ce802 (round 53's gea-5, turboderp-org/exui#37): field signals"
    " extension-dll-procedure-{not-found,named}-is-torch-abi read the other torch-extension"
    " module suffixes ('_ext', '<name>_C'; bare '_C' stays out) -> extensions-match-torch-abi",
    "after 260ce802 (round 53's gel-3, ollama/ollama#6604): signature"
    " driver-lib-lacks-versioned-entry-point (Ollama's 'symbol lookup for cu*_vN failed' on the"
    " driver library), driver-too-old takes Ollama's 'your nvidia driver is too old or missing'"
    " (superseding versioned-lib-load-failed) and field signal"
    " insufficient-driver-beside-old-driver-library -> driver-supports-build-cuda",
    "after 260ce802 (round 53's gel-5, mudler/LocalAI#2117): signature"
    " container-entrypoint-nvidia-smi-missing (LocalAI's AIO entrypoint check, an entrypoint"
    " script's 'nvidia-smi: command not found') -> container-runtime-provides-gpu",
    "after 260ce802 (round 53's gdz-2, inducer/pycuda#430): knowledge/cuda-api-changes.yaml"
    " rows for CUDA 12.0's removals CU_TARGET_COMPUTE_20/21 and cudaProfilerInitialize with its"
    " cudaOutputMode_t enum -> toolkit-major-keeps-project-api",
    "after 260ce802 (round 53's geh-4, pytorch/pytorch#150442): field signal"
    " cuda-header-missing-under-torch-header-is-cuda-home (a CUDA runtime/driver header missing"
    " where torch's own header includes it: the -I<CUDA_HOME>/include torch passes holds no"
    " toolkit) -> cuda-home-is-toolkit",
    "after 260ce802 (round 53's gef-1, vllm-project/vllm#25143): field signal"
    " unsupported-ptx-in-serving-engine (torch's PTX refusal with a vLLM/SGLang frame, no Triton"
    " line) and serving-engine-frame read after a line prefix -> driver-supports-build-cuda",
    "after 0334bece (round 54's geq-2, Dao-AILab/flash-attention#1477): field signal"
    " nvcc-gate-minor-floor-of-12 (a setup.py nvcc gate at a minor floor of CUDA 12, no cu13"
    " torch tag: the nvcc's version and path are not shown) withdraws the toolchain rules -> null",
    "after 0334bece (round 54's gew-2, AutoGPTQ/AutoGPTQ#550): field signal"
    " ptxas-feature-floor-in-multi-arch-build (ptxas 'requires .target sm_N or higher' on nvcc's"
    " <stem>.compute_XX.ptx of a several -gencode build: an arch-list entry without a"
    " __CUDA_ARCH__ guard) withdraws kernel-arch-feature -> null (round 36's gbd-2 too)",
    "after 0334bece (round 55's gfd-1, mihaibujanca/dynamicfusion#79): signature no-kernel-image"
    " takes cudaGetErrorString(98) 'invalid device function' after a program's own error/failure"
    " prefix and ':' (a line naming HIP/ROCm left out) -> package-has-gpu-arch",
    "after 0334bece (round 55's gfd-3, laugh12321/TensorRT-YOLO#74): the same no-kernel-image"
    " form ('Error text: invalid device function', the library's own check block)"
    " -> package-has-gpu-arch",
    "after 0334bece (round 55's gfd-5, peterjc123/pytorch-scripts#18): no-kernel-image takes"
    " THCudaCheck's 'cuda runtime error (8) : invalid device function' (the pre-10.1 number);"
    " field signal no-kernel-image-in-thc-check-of-torch-source (file in THC/ATen/torch/lib)"
    " -> wheel-has-gpu-arch",
    "after 0334bece (round 55's gfd-4, filecoin-project/rust-gpu-tools#79): no-kernel-image"
    " takes rustacuda/cust's CudaError::NoBinaryForGpu (Debug, after 'Error: ' or on the"
    " 'panicked at' line) -> package-has-gpu-arch",
    "after e024ab67 (round 53's gek-4, SYSTRAN/faster-whisper#14): field signal"
    " ctranslate2-compute-type-on-cpu-device (CTranslate2's compute-type refusal beside"
    ' device="cpu" / --device cpu, signature device-cpu-requested) withdraws kernel-arch-feature'
    " -> null",
    "after e024ab67 (round 53's gei-3, triton-lang/triton#5491): field signal"
    " ptxas-half-to-bfloat-cvt-is-codegen (ptxas 'cvt with .bf16.f16' / '.f16.bf16' requires"
    " sm_90: a codegen path without the sm_90 guard on a GPU with both types) withdraws"
    " kernel-arch-feature; 'Internal Triton PTX codegen error' ranked as a wrapper -> null",
    "after e024ab67 (round 53's geh-2/geh-3, pytorch/pytorch#165812 and #148120): field signals"
    " *-beside-lib64-torch (a CUDA wheel library 'cannot open shared object file' with torch"
    " imported from lib64/pythonX.Y/site-packages, signature torch-in-lib64-site-packages: the"
    " platlib/purelib split) withdraw needed-files-provided and runtime-libs-match-cuda-major"
    " -> null (round 32's gaf-7 too)",
    "after e024ab67 (round 55's gff-4, numba/numba#8985): field signal"
    " symbol-missing-from-stub-libcuda-is-search-path (an undefined symbol in"
    " <toolkit>/.../stubs/libcuda.so: the stub answered through a search path;"
    " undefined-driver-api-symbol no longer reads it as an old driver)"
    " -> ld-library-path-not-shadowing",
    "after d546146a (round 56's gfx-11, NixOS/nixpkgs#342385): field signals"
    " bundled-cuda-runner-library-is-the-bundles* (a CUDA library that a program in an"
    " application bundle's per-CUDA-major runner dir, ollama's .../cuda_vN[_variant]/, cannot"
    " load: the bundle carries that library) withdraw runtime-libs-match-cuda-major and"
    " needed-files-provided -> null",
    "after d546146a (round 56's ggl-1, sasha0552/pascal-pkgs-ci#46): signature"
    " ptxas-feature-absent-on-arch also takes ptxas' 'Modifier X on Y requires .target sm_NN"
    " or higher' (the instruction named; 'requires PTX ISA .version' stays out)"
    " -> kernel-arch-feature",
    "after d546146a (round 57's ghv-1, jax-ml/jax#7239): signature xla-ptxas-not-launched"
    " (XLA's fatal 'Failed to launch ptxas' / raised 'Couldn't invoke ptxas --version';"
    " TensorFlow's redzone-allocator warning left out) -> toolkit-found",
    "after d546146a (round 57's null ggz-1, heterodb/pg-strom#758): field signal"
    " undefined-driver-api-symbol no longer takes the CUDA 3.2/4.0 _v2 entry points"
    " (cuEventDestroy_v2, cuMemAlloc_v2 ...: every driver exports them; no driver libcuda"
    " answered) -> null",
    "after d546146a (round 57's ghj-1, NVIDIA/numba-cuda#430): signature"
    " numba-libdevice-file-missing (Python's FileNotFoundError on <prefix>/nvvm/libdevice/"
    "libdevice*.bc, numba-cuda's unchecked open_libdevice) -> needed-files-provided",
    "after d546146a (round 57's null ghk-1, conda-forge/jaxlib-feedstock#283): signature"
    " xla-cuda-root-is-conda-build-prefix (XLA's CUDA root candidates name a conda-forge"
    " feedstock build env) and field signal libdevice-missing-under-conda-build-root"
    " (withdraws needed-files-provided from xla-libdevice-not-found beside it) -> null",
    "after d546146a (round 57's null ghn-1, EricLBuehler/mistral.rs#653): field signal"
    " rustc-link-of-build-script-lib-is-no-provider (a non-CUDA library missing at rustc's"
    " '= note:' link is a build script's product) withdraws needed-files-provided -> null",
    "after ca8fbd74 (round 58's gir-1, NVIDIA/k8s-device-plugin#23): signature"
    " k8s-device-plugin-no-nvidia-runtime also matches the first plugins' own NVML-init line"
    " ('Failed to start nvml with error: could not load NVML library', main.go 1.8-1.10)"
    " -> container-runtime-provides-gpu",
    "after ca8fbd74 (round 58's null giw-1, AbdBarho/stable-diffusion-webui-docker#129):"
    " signature nvidia-container-cli-nvml-missing (the hook's plain 'load library failed:"
    " libnvidia-ml.so.1') no longer predicts container-runtime-provides-gpu (no driver, an old"
    " WSL2 host or a wrong driver root); only snap's '.real' CLI does"
    " (nvidia-container-cli-snap-nvml-missing) -> null",
    "after de01a083 (round 59's gki-1, zju3dv/EnvGS#4): signature optix-abi-newer-than-driver"
    " (optixInit's OPTIX_ERROR_UNSUPPORTED_ABI_VERSION: 7801 / 'Unsupported ABI version' with"
    " OptiX on the line; 7804 'Library not found' not taken) -> driver-supports-build-cuda",
    "after de01a083 (round 59's gjz-1, lbin/DCNv2#25): signature nvcc-exec-not-found also"
    " takes old distutils' 'unable to execute '<path>/bin/nvcc': No such file or directory';"
    " field signal nvcc-under-versioned-prefix-is-cuda-home (the missing nvcc under a"
    " versioned prefix such as /usr/local/cuda-11.0, which torch reaches only through"
    " CUDA_HOME/CUDA_PATH) -> cuda-home-is-toolkit",
    "after 2153c874 (class family GPU arch: tune-bw, deepseek-ai/FlashMLA#39): field signal"
    " no-kernel-image-in-arch-exclusive-kernel-library ('no kernel image' raised in FlashMLA's"
    " sources, kernels built for sm_90/sm_100 only; FlashMLA's flash_fwd_mla no longer reads"
    " as flash-attn) -> kernel-arch-feature",
    "after 2153c874 (class family driver/container: fu-7, kaito-project/kaito#2326): signature"
    " cdi-device-empty-edits (the CDI library's 'invalid device, empty device edits': no CDI"
    " spec names the GPU) -> container-runtime-provides-gpu; field signal"
    " cdi-empty-edits-beside-missing-driver-library withdraws it when nvidia-ctk could not"
    " locate the driver's libraries (unknown/fu-6)",
    "after 2153c874 (class family null-named, tune-by: gae-1, triton-lang/triton#4576):"
    " field signal ptx-version-in-triton-ptxas is a guard now (Triton derives .version from"
    " the same ptxas it runs, so its ptxas' .version refusal is Triton's table, no ptxas or"
    " cicc/ptxas fact); a version pair read only from a line another rule's signal placed"
    " elsewhere is no evidence for the withdrawn rule -> null (no triton-ptxas-knows-arch,"
    " no ptxas-accepts-cicc-ptx)",
    "after 2153c874 (class family library/toolkit location: tune-bz; cuda-home-is-toolkit/4,"
    " gcc-10, gfc-1, gdv-10, lenML/Speech-AI-Forge#258, AutoGPTQ/AutoGPTQ#20,"
    " EleutherAI/gpt-neox#1109, IDEA-Research/GroundingDINO#230): field signal"
    " nvcc-at-prefix-is-cuda-home (any <prefix>/bin/nvcc a build could not exec, the default"
    " /usr/local/cuda included, which torch's _find_cuda_home takes only when it exists);"
    " signature nvcc-exec-not-found also takes str(OSError) alone at a line's start"
    " -> cuda-home-is-toolkit",
    "after 2153c874 (class family library/toolkit location: tune-bz;"
    " toolkit-major-keeps-project-api/fe-6, BNLNPPS/simphony#235): cuda-api-changes.yaml rows"
    " of a new change kind 'include' (thrust::distance, thrust::pair: CCCL 3.2, bundled with"
    " CUDA 13.2, no longer includes their headers from the other Thrust headers;"
    " rapidsai/cugraph#5357, NVIDIA/cudf#20708) -> toolkit-major-keeps-project-api",
    "after 10c6ed84 (round 62's unknown/gmk-1 numpy/numpy#18175, gml-1 basler/pypylon#475):"
    " suspicious-line words 'llegal instruction', 'Aborted', 'core dumped', 'Killed': a shell's"
    " report that the process died of a signal is the first error where nothing above states a"
    " cause (scored 1.0, below every error line, tied with a verdict line above it)",
    "after 10c6ed84 (round 61's unknown/gmd-1, florestefano1975/ComfyUI-HiDiffusion#2): verdict"
    " wording 'not [X] compiled|built with|for' (torch _lazy_init's 'Torch not compiled with CUDA"
    " enabled' quoted without its AssertionError) is the first error of a short log",
    "after 10c6ed84 (round 62's unknown/gmq-1 bazel-contrib/rules_cuda#433, gmr-1"
    " bazel-contrib/rules_cuda#160): signature bazel-action-failed (context) and weight-0 field"
    " signals bazel-clang-cuda-lookup-is-build-rule, bazel-clang-cuda-installation-is-build-rule,"
    " bazel-output-tree-header-missing-is-build-rule: a clang CUDA lookup or a toolkit header"
    " missing inside a Bazel action names no host cause (needed-files-provided, toolkit-found"
    " withdrawn) -> null",
    "after 10c6ed84 (round 61's glq-1, deepseek-ai/DeepEP#62): signature"
    " cuda-stream-capture-unsupported takes 904 cudaErrorStreamCaptureUnjoined ('capturing"
    " stream has unjoined work', a side stream forked in capture and never joined)"
    " -> capture-sync-free",
    "after 10c6ed84 (round 61's glt-1, nanoporetech/dorado#166): field signal"
    " cuda-library-from-system-toolkit-dir-is-search-path takes an HPC module toolkit tree"
    " (<prefix>/cuda/<ver>/lib64, EasyBuild CUDA/<ver>-<toolchain>) and unversioned .so"
    " -> ld-library-path-not-shadowing",
    "after 10c6ed84 (round 61's gme-1, ayaanzhaque/instruct-nerf2nerf#3): field signal"
    " split-cuda-libtorch-name-is-extension-abi (bare libtorch_cuda_cu/_cpp.so, gone since"
    " torch 2.0, pytorch/pytorch#87502) with context signature torch-own-import-frame"
    " -> extensions-match-torch-abi",
    "after 10c6ed84 (round 61's null glx-1, JuliaGPU/CUDA.jl#3205): suspicious-line word"
    " 'Could not locate' (cuDNN's Windows loader verdict, no error word) -> first error line",
    "after 10c6ed84 (round 62's gmp-1, EricLBuehler/mistral.rs#396; first error only): cargo's"
    " 'failed to run custom build command for `X`' is a wrapper, the build script's relayed panic"
    " is the first error (corpus fh-3/fh-4 first_error_line moved to it; fzf-2 fixed too)",
    "after e30b3489 (round 63's null gnl-1, int-brain-lab/ibl-sorter#41): field signals"
    " cuda-library-from-system-toolkit-dir-is-search-path and nvjitlink-symbol-is-search-path"
    " leave out a toolkit library under <toolkit>/targets/<triple>/lib (the ld.so.conf.d entry"
    " of the CUDA packages, found through ld.so.cache, not LD_LIBRARY_PATH) -> no cause",
    "after e30b3489 (round 63's null gnj-1, Comfy-Org/ComfyUI#4531): suspicious-line word"
    " 'only support' (was 'only supports'; the passive capability gate 'X is only supported on"
    " devices with compute capability >= N', no error word; also takes Triton's 'only support"
    " CUDA 10.0 or higher', round 54's gfa-2) -> first error line",
    "after e30b3489 (round 63's gno-1, rdyro/torch2jax#29): signature"
    " pip-resolver-cuda-wheel-conflict takes uv's report wrapped inside a requirement's marker"
    " braces ('<pkg><spec> depends on nvidia-X{<markers...' at the line end)"
    " -> python-requirements-hold",
    "after e30b3489 (round 63's null gnn-1, evo-design/proto-tools#79): signature"
    " uv-no-version-of-cuda-wheel ('there is no version of nvidia-X...') with field signal"
    " cuda-wheel-conflict-with-no-version-available (an index without the pinned wheel is no"
    " pin clash) -> no cause; verdict word 'No solution found' (uv's resolver verdict) -> first"
    " error line",
    "after e30b3489 (round 63's gng-1, thu-ml/SageAttention#173): signature"
    " arch-kernel-module-not-built ('SM<nn> kernel is not available', SageAttention's per-arch"
    " extension absent from the install) -> package-has-gpu-arch",
    "after e30b3489 (round 63's gnh-1, ELS-RD/kernl#133): capability_shortfall reads a floor"
    " stated alone ('8.0 (Ampere) or higher is required') as 'unstated'; field signal"
    " capability-refused-at-stated-floor-is-hardware (floor >= 7.0) -> kernel-arch-feature",
    "after 6a51da95 (round 64's gpf-1, JuliaGPU/CUDA.jl#2844): signature cudajl-ptxas-failed"
    " (CUDA.jl's 'Failed to compile PTX code (ptxas exited with code N)') turns off"
    " bare-ptxas-gpu-name-is-triton; field signal cudajl-ptxas-gpu-name -> arch-supported-by-toolkit",
    "after 6a51da95 (round 64's unknown/gpb-1 JuliaGPU/CUDA.jl#784, gpc-1 JuliaGPU/CUDA.jl#670):"
    " Julia's ConsoleLogger box ('┌ Error: <summary>', '│   exception =', '│    <error>'):"
    " the exception value's first line is the first error (suspicious.julia_exception_boxes)",
    "after 6a51da95 (round 64's goj-1, jax-ml/jax#6517; round 63's gnp-1 and the older gcw-7 too):"
    " XLA's 'Loaded runtime CuDNN library: X but source was compiled with: Y' split from"
    " cudnn-version-incompatible into xla-cudnn-loaded-older, which names no rule (jaxlib and"
    " TensorFlow bundle no cuDNN: the line does not show a second copy); gcd-11 flagged, template"
    " jax/xla-cudnn-older relabelled null",
    "after 5b772634 (round 66's gsl-1, apache/tvm#10426): signature tvm-cuda-arch-fallback (TVM's"
    " 'Unable to detect CUDA version, default to \"-arch=sm_NN\" instead'); field signal"
    " tvm-fallback-arch-is-not-the-hosts withdraws nvcc's refusal of that fallback arch from the"
    " arch rules -> none",
    "after 5b772634 (round 66's gsp-2, iree-org/iree#24477): field signal"
    " llvm-ptx-version-plain-target-is-not-triton (LLVM NVPTX 'PTX version X does not support"
    " target sm_NN' for a target without Triton's 'a' suffix) withdraws triton-ptxas-knows-arch"
    " -> none; gsp-2 kept as template iree/llvm-ptx-version-quoted-sm120",
    "after 5b772634 (round 65's gpr-1, ltdrdata/ComfyUI-Impact-Pack#915): signature"
    " companion-built-for-other-torch also takes torch's dispatcher 'Could not run"
    " 'torchvision|torchaudio::<op>' with arguments from the 'CUDA' backend' (no CUDA kernel"
    " registered by the companion) -> extensions-match-torch-abi",
    "after 5b772634 (round 65's gpx-1, nagadomi/nunif#351): signature nvenc-min-driver-stated"
    " also takes FFmpeg's '(unknown)' minimum (headers newer than its driver table) ->"
    " driver-supports-build-cuda",
    "after 5b772634 (round 65's gqp-1, pie-project/pie#457): signature nvcc-unsupported-gcc"
    " also takes host_config.h's MSVC refusal quoted as 'C1189: unsupported Microsoft Visual"
    " Studio version' -> host-compiler-supported (the bare cudafe++ ACCESS_VIOLATION stays"
    " unknown, gqr-1)",
    "after 5b772634 (round 66's gry-1, ollama/ollama#12622): signature"
    " package-build-arch-excludes-gpu also takes ggml_cuda_init's 'GGML_ASSERT(ggml_cuda_has_arch("
    '...) && "ggml was not compiled with support for this arch") failed\' -> package-has-gpu-arch',
    "after 5b772634 (round 66's gsk-1, jax-ml/jax#26799): signature gpu-below-required-capability"
    " also takes XLA's 'Triton support is only enabled for Ampere GPUs (compute capability 8.0)"
    " and up, but got compute capability X' -> kernel-arch-feature",
    "after 5b772634 (round 67's gsc-1, modular/mojo-gpu-puzzles#257): signature"
    " runtime-min-driver-stated also takes MAX's 'GPU driver version is not supported. Required:"
    " driver version >= N ... Detected: X' -> driver-supports-build-cuda",
    "after 5b772634 (round 67's gtn-1, aws/containers-roadmap#336): signature"
    " container-cli-cuda-requirement also takes a requirement error naming a brand alternative's"
    " clause ('driver < N', 'brand = tesla') or following the hook's --require=cuda>=X exec line"
    " -> container-driver-satisfies-image",
    "after 5b772634 (round 66's gsg-1, sokrypton/ColabFold#532): signature"
    " cuda-runtime-none-loadable also takes the XLA/TensorFlow cudart stub's older stand-in"
    " 'cudaGetErrorString symbol not found' (the build's libcudart.so.N did not load) ->"
    " runtime-libs-match-cuda-major",
    "after 5b772634 (round 65's unknown/gpl-1, NVIDIA/DALI#5696; gps-1, NVIDIA/DALI#3878): DALI's"
    " pipeline-build headings ('Critical error when building pipeline:', 'Error when"
    " constructing/adding operator: ... encountered:') are wrappers -> none; first error line",
    "after 5b772634 (round 65's unknown/gpk-1, flox/flox#3597): FFmpeg nv-codec-headers'"
    " 'Cannot load <lib>' is error-looking (suspicious WORDS) -> none; first error line",
    "after 5b772634 (round 65's unknown/gqv-1, Genesis-Embodied-AI/genesis-world#2814): a"
    " location header ('Error at <file>:<line> in <func>', c10's 'Exception raised from ...')"
    " scores below an error word (2.5) -> none; first error line",
    "after 5b772634 (round 66's unknown/grm-1, NVIDIA/nccl#1611): glibc malloc_printerr verdicts"
    " ('corrupted ', 'corruption') are error-looking; Open MPI's signal report ('[host:pid]"
    " Signal: Aborted (6)', '*** End of error message ***') is a signal-death trailer -> none;"
    " first error line",
    "after 5b772634 (round 66's unknown/gro-1, cms-sw/cmsdist#4039): bash's 'cannot execute"
    " binary file' is error-looking -> none; first error line",
    "after 5b772634 (round 66's unknown/grp-1, novitalabs/pegaflow#427): jemalloc's '<jemalloc>:"
    " Unsupported system page size' is error-looking -> none; first error line",
    "after 5b772634 (round 67's unknown/gtg-1, NVlabs/cuda-oxide#629; the older ghz-1,"
    " chelsea0x3b/cudarc#246 too): cargo's 'test failed, to rerun pass' and 'process didn't exit"
    " successfully' summaries are wrappers -> none; first error line",
    "after 5b772634 (rounds 65-67's first-error review; the older unknown/geq-1"
    " tile-ai/tilelang#2367, gdy-3 marcoslucianops/DeepStream-Yolo#591, ghc-1 dphnAI/sonar#458):"
    " libstdc++'s 'terminate called after throwing' heading scores as an exception line (above"
    " Paddle's FatalError trailer); assert(0)/assert(false) scores as an error word (the abort"
    " after the program's own message); uvicorn's level prefix and its 'Exception in ASGI"
    " application' heading -> none; first error line",
    "after 5b772634 (rounds 65-67's first-error review; the older unknown/gky-1"
    " warmshao/FasterLivePortrait#8, gkz-1 projectbluefin/dakota#373, gox-1"
    " EESSI/software-layer#231, ges-4 replicate/cog#390, glc-1 microsoft/WSL#11229): verdict"
    " words 'couldn't <find|determine|...>' (nvidia-smi's libnvidia-ml lookup, Cog's CUDA"
    " choice) and ldconfig's 'is not a symbolic link' -> none; first error line of a short log",
    "after 5b772634 (rounds 65-67's first-error review; the older unknown/gep-2"
    " sgl-project/sglang#12533, gdd-2 KellerJordan/modded-nanogpt#145, gkk-1"
    " KillzXGaming/Switch-Toolbox#657, gdd-4 eugr/spark-vllm-docker#15, fzv-8"
    " pytorch/pytorch#172629): verdict words 'cannot allocate', 'does not have', 'illegal"
    " address' and torch's 'which is of cuda capability' warning line -> none; first error"
    " line of a short log",
    "after fc2f8696 (round 68's gug-1, jkjung-avt/tensorrt_demos#554): field signal"
    " detected-arch-is-python-none (nvcc refuses compute_None / sm_None or a one-letter target:"
    " a GPU-detection helper's None, not an arch list or a toolkit gap) withdraws"
    " toolkit-knows-target-archs and arch-supported-by-toolkit -> none",
    "after fc2f8696 (round 70's gwf-1, vios-s/DiffAN#7): field signal"
    " cuda-library-api-symbol-is-search-path no longer reads an object reached as"
    " torch/lib/../../../../ (the env prefix's own lib/, a conda cudatoolkit's copy beside the"
    " pip wheels) as torch's -> none",
    "after fc2f8696 (round 70's gvs-1, ollama/ollama#12442): signature"
    " package-build-arch-excludes-gpu also reads ggml's line with an unexpanded"
    " __CUDA_ARCH_LIST__ (a compiled arch, no cause); field signal"
    " ggml-wmma-flash-attention-on-sm72 (flash_attn_ext_f16 stub on arch 720: ggml picks its"
    " sm_70-only WMMA kernel on Xavier) -> kernel-arch-feature",
    "after fc2f8696 (round 69's gvj-1, hypre-space/hypre#395): hypre's HYPRE_CUDA_CALL "
    "'CUDA ERROR (code = 98|209, ...)' joins no-kernel-image -> package-has-gpu-arch",
    "after fc2f8696 (round 68's guc-1, ashawkey/torch-ngp#22): nvcc's atomicAdd overload "
    "miss with a 16-bit float pointer (__half/__nv_bfloat16 declared only for "
    "sm_70+/sm_80+; double stays unmatched, unknown/gub-1) -> kernel-arch-feature",
    "after fc2f8696 (round 69's gtz-1, microsoft/onnxruntime#21049, and gus-1, "
    "cubiq/ComfyUI_InstantID#27): ONNX Runtime's 'CUDA_PATH is set but CUDA wasnt able to "
    "be loaded' (the CUDA provider library failed to load) -> runtime-libs-match-cuda-major",
    "after fc2f8696 (round 69's guu-1, rapidsai/docker#182): ccache's 'Could not find "
    'compiler "nvcc" in PATH\' (the compiler launcher resolving nvcc) -> toolkit-found; the '
    "same line for a host compiler -> none",
    "after fc2f8696 (round 70's gwb-1, skypilot-org/skypilot#1327): glibc's 'symbol X "
    "version V not defined in file F with link time reference' is a signature (versioned-"
    "symbol-not-defined); a CUDA library API symbol on torch's own nvidia-* wheel library "
    "(torch/lib/../../nvidia/) -> ld-library-path-not-shadowing; another package's "
    "preloader (unknown/gwe-1) -> none",
    "after 1424e1d6 (class family torch-ABI: gom-1, dmlc/dgl#5442): DGL's 'Cannot find DGL C++ "
    "sparse|graphbolt library at ..._pytorch_<torch>.so' (no build for this torch) is a "
    "signature; with it macOS dyld's 'Symbol not found' / 'symbol not found in flat "
    "namespace' for c10/at/torch symbols and PyG's torch_scatter/sparse/cluster CUDA check "
    "-> extensions-match-torch-abi; torch 1.x's 'No such operator torchvision::nms' (the JIT "
    "lookup's wording of torch-custom-op-missing) -> extensions-match-torch-abi",
    "after 1424e1d6 (class family container: no corpus row, upstream moby/moby survey): "
    "Docker's older 'Unknown runtime specified nvidia' (daemon, Compose v1, docker-py) "
    "-> container-runtime-provides-gpu; another runtime's name -> none; libnvidia-container's "
    "'failed to get device cgroup mount path: no cgroup filesystem mounted for the devices "
    "subsytem' -> container-runtime-provides-gpu",
    "after 1424e1d6 (class family driver-module: no corpus row, upstream NVIDIA/nvidia-installer "
    "survey): the .run installer's module-build failures (run_make's 'An error occurred while "
    "performing the step: \"Building kernel modules\"', the older 'Unable to build the NVIDIA "
    "kernel module', run_dkms' 'Failed to run `dkms build|install -m nvidia`') -> "
    "driver-module-built-for-kernel; its 'Unable to load' and a dkms remove -> none",
    "after 757144ff (round 73's gyu-1, apache/tvm#7056): nvcc's bare 'nvcc fatal : Unknown "
    "option' with no line showing the nvcc (its /usr/bin path, its release) or torch's "
    "version check gives the toolchain rules no credit -> none; beside /usr/bin/nvcc -> "
    "path-nvcc-not-distro",
    "after 757144ff (round 72's gxo-1, microsoft/WSL#5554): DKMS missing the headers of a WSL "
    "kernel (-Microsoft, -microsoft-standard-WSL2) -> none; another kernel -> "
    "driver-module-built-for-kernel",
    "after 757144ff (round 72's gxr-1, NVIDIA/nvidia-container-toolkit#885): CDI's 'failed to "
    "stat CDI host device' is a signature (cdi-host-device-missing); a DRM node "
    "(/dev/dri/cardN, renderDN) -> container-runtime-provides-gpu; /dev/nvidia-uvm -> none",
    "after 757144ff (round 72's gxv-1, NVIDIA/libnvidia-container#287): a CDI name "
    "(vendor/class=name) stat'ed as a device path (Podman's 'stat X', moby's 'error gathering "
    "device information while adding custom device') -> container-runtime-provides-gpu; a "
    "/dev path -> none",
    "after 757144ff (round 72's gxx-1, vllm-project/vllm#1726): NCCL's 'Invalid config <attr> "
    "attribute value' is a signature; NCCL_CONFIG_UNDEF_INT (-2147483648) -> "
    "runtime-libs-match-cuda-major; another value -> none",
    "after 757144ff (round 73's gyj-1, openucx/ucx#4165): autoconf's 'checking for F in "
    "-lcuda|-lcudart... no' is a signature -> toolkit-links-cudart; another library -> none",
    "after 757144ff (round 73's gyp-1, linux-surface/linux-surface#52): a compile error in "
    "Debian's DKMS trees of the driver module (nvidia-current, nvidia-legacy-NNNxx, "
    "nvidia-tesla-NNN) -> driver-module-built-for-kernel; nvidia-fs's tree -> none",
    "after 1424e1d6 (round 71's gwn-1, ma-xu/pointMLP-pytorch#39): signature "
    "torch-gpu-arch-unsupported also takes torch's capability warning quoted from 'CUDA "
    "capability sm_XY is not compatible ...' on, the device name and 'with' left out -> "
    "wheel-has-gpu-arch",
    "after 1424e1d6 (round 71's gws-1, huggingface/candle#3366): signature "
    "wmma-fragment-undefined-for-target, EDG's 'incomplete type' / clang's 'implicit "
    "instantiation of undefined template' for a WMMA fragment (type, shape) that crt/mma.h "
    "defines only for a newer __CUDA_ARCH__ (half sm_70, int8 sm_72, sub-byte sm_75, "
    "bf16/tf32/double sm_80) -> kernel-arch-feature; a shape no arch defines -> none",
    "after 757144ff (round 75's hap-1, nagadomi/waifu2x#176): signature cudnn-arch-mismatch, "
    "cuDNN <= 8's CUDNN_STATUS_ARCH_MISMATCH beside an error word -> kernel-arch-feature; "
    "cuDNN 9's CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH -> none",
    "after 757144ff (round 73's gyx-1, NVIDIA/cutlass#1815): context signature "
    "cutlass-python-compile-failed (CUTLASS Python's 'Compilation error for the following "
    "kernel:' / 'Error Message:' report) and field signal "
    "generator-suffixed-target-is-not-an-arch-list: an a/f target nvcc refuses beside a "
    "runtime generator that adds the suffix to the device's own arch -> none (withdraws "
    "toolkit-knows-target-archs and arch-supported-by-toolkit); the device's plain arch refused "
    "there (generator-plain-target-is-the-gpu) -> arch-supported-by-toolkit",
    "after 757144ff (round 74's gzp-1, GOMC-WSU/GOMC#168): the runtime's string for 98 "
    "('invalid device function') is taken wherever it stands on a line naming no HIP/ROCm, as "
    "209's is (programs' own check macros: gpuErrchk 'GPUassert: %s %s %d', HANDLE_ERROR "
    "'%s in %s at line %d', Caffe's 'Check failed: ... (8 vs. 0)  %s', NCCL's WARN) -> "
    "package-has-gpu-arch",
    "after 757144ff (round 75's hat-1, fixstars/libSGM#8): libSGM's 'cuda error %s : %d %s' over 98, the "
    "same bare-string change -> package-has-gpu-arch",
    "after 757144ff (round 74's gzs-1, risc0/risc0#3231): 'named symbol not found' on a line "
    "that names a kernel launch call (cudaLaunchKernel[Ex], cudaLaunchCooperativeKernel, "
    "cudaFuncGet/SetAttribute: sppark's CUDA_OK '%s@%s:%d failed: \"%s\"') joins "
    "kernel-lookup-symbol-not-found -> package-has-gpu-arch; a lookup by name "
    "(cudaMemcpyToSymbol, cuModuleGetFunction) -> none",
    "after b37b75ec (round 77's hcx-1, pytorch/pytorch#90673): signature"
    " conda-plan-nvidia-channel-cuda-library (conda/mamba transaction line installing a CUDA library"
    " from NVIDIA's channel) switches off field signal cuda-library-api-symbol-is-search-path"
    " (without) -> none",
    "after b37b75ec (round 76's hca-1/hch-1/hci-1/hcl-1/hcb-1/hcc-1/hck-1, myshell-ai/MeloTTS#40,"
    " tile-ai/tilelang#90 ...): signature host-is-not-nvidia (macOS/ROCm/gfx host marks) and"
    " weight-0 field signals non-nvidia-host-* withdraw container-runtime-provides-gpu,"
    " runtime-libs-match-cuda-major and needed-files-provided beside such a mark -> none (the"
    " seven rows' logs hold no mark and stay flagged)",
    "after b37b75ec (round 77's hdj-1, E3SM-Project/E3SM#8491): host_config.h's '#error -- "
    "unsupported Intel ICX compiler/HOS clang/Grace clang' as a clang-based compiler prints it "
    "('error: -- unsupported ...!', no '#error' word) joins nvcc-unsupported-gcc "
    "-> host-compiler-supported",
    "after b37b75ec (round 76's hbi-1, niuzhiheng/caffe#33): Caffe's glog CUDA_CHECK "
    "'Check failed: <var> == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient' "
    "joins insufficient-driver-binary-check-macro -> driver-supports-build-cuda; other codes "
    "in the same macro -> none",
    "after b37b75ec (round 77's hcw-1, Garden-AI/garden#213): torch-preload-lib-not-found "
    "takes torch's two-part globs ('libnvrtc.so.*[0-9].*[0-9]', cudart, cupti) "
    "-> runtime-libs-match-cuda-major (the template's class; the row's needed-files-provided "
    "is a label question)",
    "after 814c3f62 (round 78's heh-1/hej-1, QuEST-Kit/QuEST#531 and OE4T/meta-tegra#18): cicc-not-found takes the bare name nvcc runs through nvcc.profile's PATH (bash 'sh: cicc: command not found', dash 'sh: 1: cicc: not found') -> needed-files-provided",
    "after 814c3f62 (round 78's hdp-1, PaddlePaddle/PaddleOCR#16070): paddle-gpu-arch-not-compiled takes the tail of Paddle's architecture check alone ('your current GPU is <cc> Solution: Install the correct wheel package built for your GPU') -> package-has-gpu-arch",
    "after 814c3f62 (round 78's hei-1, src-d/kmcuda#92): hpc-arch-check-refuses-gpu takes kmcuda's own device check ('compute capability mismatch for device N: wanted X.Y, have A.B') -> package-has-gpu-arch",
    "after 814c3f62 (round 78's hek-1, pluskid/Mocha.jl#57): cudnn-arch-mismatch takes the whole line 'ERROR: Arch mismatch' (Mocha's status table for CUDNN_STATUS_ARCH_MISMATCH as Julia prints it) -> kernel-arch-feature",
    "after 751a640b (round 80's hfl-1, isl-org/Open3D-ML#430): companion-built-for-other-torch takes Open3D's op-library guard 'Version mismatch: Open3D needs PyTorch version X, but version Y is installed' (its TensorFlow/Paddle forms stay unmatched) -> extensions-match-torch-abi",
    "after 814c3f62 (round 78's null hdu-1, huggingface/text-embeddings-inference#149): signature docker-run-cpu-image-requests-gpus (a docker run with --gpus for an image tagged as its CPU build) and weight-0 field signal cpu-image-docker-gpu-request withdraw container-runtime-provides-gpu from Docker's 'could not select device driver' beside it -> none",
    "after 751a640b (round 80's null hfq-1, Genesis-Embodied-AI/genesis-world#400): suspicious-line word 'lib not found' (Taichi's TI_WARN('{} lib not found.') in load_lib) makes the loader's verdict a candidate, ahead of the 'is not supported, falling back to CPU' it causes -> none (first error line 1)",
    "after a9ee9177 (round 81's hgj-1, 98mxr/GMFSS_Fortuna#6): cuda-runtime-lib-not-found "
    "also takes ctypes' Windows 'Could not find module '<bare CUDA runtime DLL>' (or one of its "
    "dependencies)' (CuPy's softlink; CUDA 11 DLLs the provider table does not list; a full path "
    "stays unclaimed) -> runtime-libs-match-cuda-major",
    "after a9ee9177 (round 81's hgt-1, BachiLi/diffvg#87): signature "
    "nvcc-host-pass-pybind11-cast-op (gcc's 'expected template-name before <' in pybind11's "
    "cast.h, the nvcc front-end rewrite of cast_op, pybind/pybind11#4606) -> host-compiler-supported",
    "after a9ee9177 (round 81's hgo-1, nunchux-ai/nunchaku#295): signature "
    "device-trap-kernel-unsupported-on-gpu (nunchaku's trap_unsupported_arch printf 'This kernel "
    "is not supported on your GPU') -> kernel-arch-feature",
    "after a9ee9177 (round 81's hgz-1, dusty-nv/jetson-inference#1061): field signal "
    "truncated-l4t-csv-library-is-container-mount (a truncated cuDNN/TensorRT library in "
    "aarch64's system dir: L4T's CSV-mounted placeholder) -> container-runtime-provides-gpu, "
    "jit-cache-intact excluded",
    "after a9735050 (round 82's null hhm-1, k2-fsa/k2#582): cccl-complete no longer predicts "
    "thrust-cub-version-mismatch (Thrust's 'version of CUB in your include path is not compatible' "
    "and CCCL's mixed-copy #errors: a stray copy, not a missing CCCL) -> none",
    "after a9735050 (round 82's null hhg-1, triton-inference-server/server#7022): the "
    "suspicious-line scorer reads glog's severity letter: an I/W record ranks 1.0 below and is "
    "never promoted as a first fatal statement, so the E record states the failure -> none "
    "(first error line 5)",
    "after a9735050 (round 82's null hhx-1, rnd-team-dev/plotoptix#22): a line headed by an "
    "OPTIX/CUDA/NVRTC_ERROR_* status name and a message (the OptiX SDK sutil Exception's what()) "
    "scores as an exception line, ahead of the 'Error:' lines of the compile log it carries -> "
    "none (first error line 1)",
    "after 94494aed (round 84's hjb-1, vllm-project/vllm#38619): field signal "
    "unsupported-ptx-in-torch (c10's 'CUDA error: the provided PTX was compiled with an "
    "unsupported toolchain') now weighs the PTX as a non-torch binary's (torch's wheels carry "
    "SASS for every listed arch; c10 reports any module's refusal), off beside Triton's lines; "
    "insufficient-driver-outside-torch no longer takes c10's own 'Search for "
    "`cudaErrorInsufficientDriver' in ...' help line -> driver-supports-build-cuda",
    "after 94494aed (round 84's null hjy-1, NVIDIA/cuda-quantum#3354): pip's "
    "'error: subprocess-exited-with-error' / 'error: metadata-generation-failed' headings "
    "(DiagnosticPipError references) score as wrappers, below the build backend's own exception "
    "-> none (first error line 15)",
    "after 757144ff (round 74's null hae-1, NVIDIA/cuda-quantum#2409): ninja's \"loading "
    "'build.ninja'\", CMake's 'Configuring incomplete, errors occurred!' and CUDA-Q's 'Build "
    "failed. Please check the console output' are wrapper wordings (they point at the configure "
    "step's CMake Error record) -> none (first error line 3)",
    "after 757144ff (round 75's null han-1, NixOS/nixpkgs#77834): FFmpeg's 'Error initializing "
    "output stream' / 'Error while opening encoder' relay is wrapper wording, below the "
    "encoder's own '[<codec> @ 0x...]' reason -> none (first error line 1)",
    "after 757144ff (round 75's null hbe-1, Comfy-Org/ComfyUI#3794): where every error-looking "
    "line is a wrapper (ComfyUI's 'Error occurred when executing <Node>:'), a short log's first "
    "verdict line (no error word) outranks it, as after a bare signal death -> none (first "
    "error line 3)",
    "after a7f81489 (round 83's null hip-1, heterodb/pg-strom#1030): PostgreSQL's server-log "
    "severity (elog.c '<LEVEL>:  '): a LOG/INFO/NOTICE record ranks 1.0 below, and a backend's "
    "'terminating connection due to administrator command' scores as a signal death (the end, "
    "not the cause) -> none (first error line 2)",
    "after b37b75ec (round 76's arch-supported-by-toolkit/hbp-1, AlexeyAB/darknet#1579): "
    "fields.with_log_nvcc gives an arch refusal the log's own nvcc release; a Pascal/Volta target "
    "refused by an nvcc older than it (CMake select_compute_arch.cmake: 6.x from 8.0, 7.0/7.2 "
    "from 9.0) withdraws retired-arch-is-a-target-list (target-newer-than-log-nvcc-*, weight 0) "
    "-> no class excluded (toolkit-knows-target-archs 69% -> 26% beside arch-supported-by-toolkit)",
    "after bdef6003 (round 85's driver-supports-build-cuda/hla-1, NVIDIA-NeMo/Speech#14107): "
    "unsupported-ptx-driver and field signal unsupported-ptx-in-binary read cuda-python's check "
    "idiom 'Cuda Error: 222' / 'Cuda Runtime Error: 222' (NeMo assert_drv, TensorRT samples "
    "check_cuda_err: format() of the CUresult/cudaError_t enum) -> driver-supports-build-cuda",
    "after bdef6003 (round 85's review, tune-cv's gpu-model-named finding): gpu-model-named gets "
    "needles for the prefixes its pattern already took ('GeForce ', 'Quadro ': older drivers' "
    "names without 'NVIDIA '), 'GTX 10' dropped (prefilter 140 -> 141 literals) -> "
    "arch-supported-by-toolkit / toolkit-knows-target-archs judged by the named GPU",
    "after 598120ac (round 86's review, tune-cx's lead from hla-1, NVIDIA-NeMo/Speech#14107): "
    "no-kernel-image, cuda-invalid-image-code and cuda-invalid-ptx read cuda-python's check idiom "
    "'Cuda Error: N' / 'Cuda Runtime Error: N' for 209, 200, 218 (same in both enums) and the "
    "runtime-only 98; 'Cuda Error: 35/98' (no such CUresult) and a bare 'Cuda Runtime Error: 35' "
    "stay unread -> package-has-gpu-arch / driver-supports-build-cuda",
    "after 598120ac (round 86's review, tune-cx's gpu-model-named lead): gpu-model-named keeps the "
    "'Quadro ' prefix ('Quadro RTX 6000' is Turing, a bare 'RTX 6000' stays ambiguous) and takes "
    "four-digit Quadro P/T/K/M and unbranded T-series models; cuda-tables.yaml gpu_models gains "
    "their compute capability -> arch-supported-by-toolkit judged by the named GPU",
    "after 598120ac (round 86's triton-finds-libcuda/hma-1, vavo/lora-pilot#8): "
    "triton-launcher-build-command also reads str(CalledProcessError) alone at a line's start "
    "(a wrapper's re-raise, diffusers' lazy import) -> context only, no class (hma-1 stays unknown)",
    "after 9872ba63 (round 88's unknown/hnr-1, state-spaces/mamba#742): suspicious.py reads pip's "
    "wheel-build summaries ('Failed building wheel for', 'Could not build wheels for', 'Failed to "
    "build installable wheels for', 'error: failed-wheel-build-for-install') as wrappers: pip's "
    "'× ... did not run successfully.' heading or the backend's own error is the first error line "
    "-> no class (first-error line only)",
    "after 9872ba63 (round 88's toolkit-major-keeps-project-api/hoj-1, opencv/opencv#28784): "
    "cuda-api-changes.yaml gains the family _LIBCUDACXX_{BEGIN,END}_NAMESPACE_* (dropped by CCCL "
    "3.2 / CUDA 13.2, NVIDIA/cccl 7b52284299) and signature cccl-macro-echoed-under-declaration-error "
    "reads the CCCL macro EDG echoes under 'this declaration has no storage class or type "
    "specifier' (not in a CCCL header) -> toolkit-major-keeps-project-api",
    "after 9872ba63 (round 88's driver-module-built-for-kernel/hnv-1, "
    "NVIDIA/open-gpu-kernel-modules#1288, and hnw-1, NixOS/nixpkgs#532695): "
    "nvidia-kmod-source-broken also reads compiler errors in the driver's own files named "
    "relative to the module directory (kbuild >= 6.13: common/inc/nv-*.h, nvidia/nv*.c, "
    "nvidia-uvm/uvm*, nvidia-drm|modeset|peermem/...), and nvidia-kmod-build-failed kbuild's "
    "per-object rule for those objects -> driver-module-built-for-kernel",
    "after 650b0dc4 (round 89's container-driver-satisfies-image/hpr-1, gpustack/gpustack#5886): "
    "container-cli-cuda-requirement takes the CLI's line under its wrapped name "
    "'nvidia-container-cli.real:' (the GPU Operator's toolkit container and the Docker snap run "
    "it so) in every branch -> container-driver-satisfies-image",
    "after 650b0dc4 (round 89's driver-supports-build-cuda/hps-1, modular/modular#4923): "
    "runtime-min-driver-stated also takes MAX's mid-2025 ending 'The driver version MAX detected "
    "is: X.Y' after the floor sentence (the driver's CUDA, read into driver_cuda) "
    "-> driver-supports-build-cuda",
    "after 650b0dc4 (round 89's unknown/hph-1, spack/spack-packages#3424): suspicious.py reads GNU "
    "ld's relocation verdicts ('PC-relative offset overflow in PLT entry for', 'relocation "
    "truncated to fit:', 'relocation ... can not be used when making a shared/PIE object') as "
    "linker diagnostics, above collect2's wrapper and ld's later 'final link failed' (also "
    "unknown/gdx-4) -> no class (first-error line only)",
    "after 650b0dc4 (round 89's unknown/hpf-1, conda-forge/openmpi-feedstock#203): suspicious.py's "
    "verdict lines start a hand-wrapped sentence (Open MPI's help texts) where the verdict's words "
    "fall on a lower-case continuation of a long line that ends mid-sentence (also unknown/gcv-8) "
    "-> no class (first-error line only)",
    "after beae082e (round 90's arch-supported-by-toolkit/hqx-1, "
    "TaterTotterson/microWakeWord-Trainer-Nvidia-Docker#56): signature "
    "xla-handler-ptx-version-below-target reads LLVM NVPTX's 'PTX version X does not support "
    "target sm_Y' with any prefix within three lines under XLA's 'LLVM Fatal Error while "
    "compiling target binary' handler line, and both XLA signatures supersede the Triton "
    "reading of their line (a one-line 'Reason: ' form tied with triton-ptxas-knows-arch) "
    "-> arch-supported-by-toolkit",
    "after beae082e (round 90's driver-module-matches-libraries/hqq-1, ollama/ollama#15918): "
    "error 804 (cuda-forward-compat-unsupported) beside NVML's 'Driver/library version mismatch' "
    "or 'NVRM: API mismatch' withdraws the image and compat readings, and in Ollama's server log "
    "(new context signature ollama-server-log-line, prefilter 141 -> 142 literals; Ollama ships "
    "no compat libcuda) with no <toolkit>/compat path on the line it is the driver's own libcuda "
    "newer than the loaded module, not an image's CUDA above the driver -> "
    "driver-module-matches-libraries (compat-libcuda-only-where-supported second)",
    "after b415682c (round 91's driver-supports-build-cuda/hrn-1, obsproject/obs-studio#13793): "
    "new signature nvenc-test-reason-outdated-driver takes OBS's NVENC probe output "
    "'reason=outdated_driver' on its own line (obs-nvenc-test's INI verdict when the driver's "
    "NVENC API is below the build's; prefilter 145 -> 146 literals), not its other reasons "
    "(no_devices, no_supported_devices, session_limit) -> driver-supports-build-cuda",
    "after b415682c (round 91's unknown/hrt-1, vortex-data/vortex#6660): undefined-symbol drops "
    'the quotes of a caller that quotes dlerror() whole (libloading\'s DlSym { desc: "..." } '
    "in cudarc's panic, a Python repr) from shared_lib and symbol, so the unmangled-symbol "
    "reading withdraws the torch-ABI credit; undefined-driver-api-symbol skips a profiler's "
    "CUDA injection library (Nsight Compute's libcuda-injection.so, lib*Injection*.so) as the "
    "object -> no class (a cudarc panic on the driver's libcuda.so, chelsea0x3b/cudarc#422, "
    "-> driver-supports-build-cuda)",
    "after beae082e (round 90's unknown/hqp-1, mozilla-ai/llamafile#961): llamafile's 'fatal "
    "error: support for --gpu X was explicitly requested, but it wasn't available' (cuda.c "
    "ImportCuda, metal.c ImportMetal) is wrapper wording, not a compiler diagnostic; 'no "
    "pre-built' is a verdict word; a wrapper in a diagnostic's form (2.5) ranks below a verdict "
    "line above it in a short log (0.5) -> no class (first-error line only)",
    "after b415682c (round 91's unknown/hrj-1, isaac-sim/IsaacSim#794): Kit gpu.foundation's "
    "'[Warning] Skipping NVIDIA GPU due ...' record is a low-scored suspicious line (new word, "
    "no new prefilter literal; gpu-model-named lines stay first-error candidates), and the first "
    "skip above gpu.foundation's 'No device could be created' ranks with it; masked-GPU skips "
    "with no such error stay a note (unknown/hri-1 left) -> no class (first-error line only)",
    "after 0aac4f0d (round 94's needed-files-provided/huy-1, pytorch/pytorch#40356): field"
    " signal torch-own-header-missing-under-torch-header: a THC/ATen/c10/torch/caffe2 header"
    " missing where torch's own installed header (torch/include/...) includes it is a torch build"
    " that does not ship its own header (the CPU wheel): needed-files-provided; a project source"
    " including a torch header (unknown/gua-1, fzl-8) stays null. Upstream:"
    " aten/src/ATen/cuda/detail/OffsetCalculator.cuh '#include <THC/THCIntegerDivider.cuh>'",
    "after 906b0001 (round 94's unknown/hvv-1): a Triton 'Triton Error [CUDA]: device kernel image is invalid' standing alone (no site-packages frame above it, no wrapper before it, no driver line in the log) names no cause (field signal bare-triton-invalid-kernel-image-names-no-driver, frame_packages read for triton-invalid-kernel-image); CUDA_ERROR_INVALID_IMAGE fits a ptxas newer than the driver and a cubin for another GPU alike; triton-lang/triton third_party/nvidia/backend/driver.c loadBinary/gpuAssert, triton-lang/triton#1323",
    "after 906b0001 (round 94's unknown/hvr-1): absl::Status lines ('RESOURCE_EXHAUSTED: ...', 'INTERNAL: ...', any canonical code at line start) are exception-level suspicious lines, four codes added as prefilter words; abseil absl/status/status.cc Status::ToString, openxla/xla Triton fusion emitter ResourceExhausted('Shared memory size limit exceeded')",
    "after 906b0001 (round 94's unknown/huk-1): libstdc++'s 'terminate called after throwing an instance of' ranks as an exception line where it follows other text on the line (a tqdm bar redrawn without a newline); gcc libstdc++-v3/libsupc++/vterminate.cc",
    "after 906b0001 (round 94's toolkit-found/hvg-1, MrOz59/Apollo-Linux#28): signature "
    "cmake-project-cuda-not-found, a CMake project's own 'CUDA [toolkit|compiler] not found' "
    "right under 'CMake Error at ... (message):' (LizardByte/Sunshine "
    "cmake/compile_definitions/linux.cmake after check_language(CUDA)), predicted by toolkit-found",
    "after 906b0001 (round 94's toolkit-links-cudart/hvk-1, tensor-compiler/taco#319): "
    "signature build-input-library-missing (GNU make remake.c 'No rule to make target ..., "
    "needed by ...', ninja's '..., missing and no known rule to make it') for a library file; "
    "field signal cudart-input-file-missing-is-link-layout names toolkit-links-cudart for "
    "libcudart[_static] only",
    "after 906b0001 (round 94's cuda-home-is-toolkit/hvw-1, Kaggle/docker-python#1359): "
    "signature include-directive-echo (GCC/clang's ' NN | #include \"X\"' echo, or its cut "
    "tail for a crt/ header); field signals crt-header-{missing,echo}-in-extension-build-is-"
    "cuda-home: a crt/ header missing beside a Python extension build frame "
    "(torch.utils.cpp_extension _find_cuda_home) -> cuda-home-is-toolkit",
    "after 906b0001 (round 94's triton-knows-gpu/huu-1, jax-ml/jax-triton#114): new signature "
    "triton-ptx-header-below-target, ptxas' 'PTX .version X does not support .target sm_Y' "
    "taken only under Triton's 'Internal Triton PTX codegen error' header (near:), predicted by "
    "triton-knows-gpu: Triton <= 2.0 wrote .version from a table capped at 7.4 and .target from "
    "the GPU (lib/Target/PTX/PTXTranslation.cpp translateLLVMIRToPTX, python/triton/compiler.py "
    "ptx_get_version); the same line without the header names no class -> triton-knows-gpu; "
    "hun-1 (cut after 'ptxas fatal') and hut-1 (cut before the ValueError) left flagged",
    "after 0aac4f0d (round 94's package-has-gpu-arch/hwa-1, blakeblackshear/frigate#6666): "
    "signature ngc-container-gpu-not-yet-supported, predicted by package-has-gpu-arch: the NGC "
    "entrypoint's 'WARNING: Detected NVIDIA <GPU> GPU, which is not yet supported in this version "
    "of the container' (the image's release predates the GPU); the bare 'No supported GPU(s) "
    "detected' (context signature ngc-container-no-supported-gpu) stays unnamed alone (unknown/hhh-1, "
    "an MPS server), and the warning without that refusal names nothing (field signal "
    "ngc-gpu-not-yet-supported-without-refusal; unknown/gda-7); source: NGC container entrypoint "
    "(/opt/nvidia/entrypoint.d), public quotes read through the code index",
    "after 0aac4f0d (round 94's package-has-gpu-arch/hwe-1, nanoporetech/dorado#498): "
    "fields.check_contexts reads the c10 stack below a 'no kernel image' (first_frame_lib, the "
    "library of frame #0, c10::Error); field signal no-kernel-image-in-bundled-libtorch: a frame "
    "#0 outside torch's own libc10/libtorch* is a program with libtorch built in -> "
    "package-has-gpu-arch, wheel-has-gpu-arch excluded; source: pytorch c10/util/Backtrace.cpp",
    "after 0aac4f0d (round 94's ld-library-path-not-shadowing/hvo-1, jax-ml/jax#28929): "
    "signature ld-debug-library-needed-by (glibc LD_DEBUG=libs 'file=<lib> [0];  needed by "
    "<object>') and fields.ld_search_fields (the last 'trying file=' before 'generating link "
    "map' and its search list); field signal ld-debug-wheel-cuda-dependency-from-ld-library-path: "
    "a CUDA library a site-packages object needs found through LD_LIBRARY_PATH outside "
    "site-packages -> ld-library-path-not-shadowing; source: glibc elf/dl-load.c _dl_map_object; "
    "prefilter 146 -> 147 (';  needed by')",
    "after 1f0bc7a4 (round 95's unknown/hxe-1): FFmpeg's relays of a hwcontext failure ('Device "
    "creation failed: ', \"Failed to set value '\", 'Error parsing global options: ') are wrapper "
    "wording, so the '[AVHWDeviceContext] cu->cuInit(0) failed -> CUDA_ERROR_*' line ranks first; "
    "source: FFmpeg fftools/ffmpeg_hw.c hw_device_init_from_string, fftools/cmdutils.c "
    "write_option, fftools/ffmpeg_opt.c ffmpeg_parse_options, libavutil/cuda_check.h",
    "after 1f0bc7a4 (round 95's unknown/hxm-1): NCCL's INFO notes on optional plugins and "
    "libibverbs it did without ('<X>/Plugin: Could not find: libnccl-*.so', 'Failed to open "
    "libibverbs.so[.1]') score as notes and let a verdict of the log go first; 'exceeds' is a "
    "verdict word; lines opening with the same record head (a lower-case host) are not a "
    "hard-wrapped sentence; source: NVIDIA/nccl src/misc/ibvwrap.cc buildIbvSymbols, "
    "src/plugin/*.cc",
    "after 1f0bc7a4 (round 95's unknown/hxn-1): ptxas's \"Feature '<x>' requires PTX ISA "
    ".version <v> or later\" / 'requires .target sm_XX or higher' quoted without its error "
    "prefix is a verdict of a short log; source: ptxas diagnostics (closed source), "
    "triton-lang/triton#3899",
    "after 1f0bc7a4 (round 95's triton-finds-libcuda/hxt-1, huggingface/text-generation-inference"
    "#1245): signature triton-libcuda-not-found also reads the second line of libcuda_dirs' "
    "assertion message alone ('Possible files are located at [<ldconfig's libcuda.so.N>].Please "
    "create a symlink of libcuda.so to any of the file(s).', Triton 2.x and 3.x wordings, the "
    "two sentences wrapped or not); the other branch ('Please make sure GPU is set up ... "
    "/sbin/ldconfig') alone stays unread; source: triton-lang/triton "
    "third_party/nvidia/backend/driver.py and python/triton/common/build.py libcuda_dirs; "
    "prefilter unchanged (needles hold 'libcuda.so')",
    "after 1f0bc7a4 (round 95's needed-files-provided/hwq-1, NVIDIA/numba-cuda#196): field "
    "signal nvrtc-builtins-of-its-own-release-missing: 'nvrtc: error: failed to open "
    "libnvrtc-builtins.so.M.m' (or nvrtc-builtins64_MM.dll, now in cuda-runtime-lib-not-found's "
    "pattern) names NVRTC's own release's companion library -> needed-files-provided, "
    "runtime-libs-match-cuda-major excluded; source: NVRTC's message as quoted in the thread, "
    "knowledge/providers.yaml (nvidia-cuda-nvrtc-cu12 ships both files), Debian libnvrtc-builtinsM.m",
    "after 1f0bc7a4 (round 95's container-driver-satisfies-image/hyc-1, Frigate #7959): "
    "signature driver-too-old also reads the TensorRT YOLO plugins' CHECK ('Cuda failure in file "
    "'<f>' line <n>: 35', under insufficient-driver-unconfirmed when alone); new context signature "
    "container-init-s6-overlay (s6-overlay's service paths and s6-rc lines: a container image's "
    "PID 1); field signal tensorrt-plugin-insufficient-driver-in-container: that 35 beside s6 -> "
    "container-driver-satisfies-image (the plugin runs only after TensorRT initialised CUDA: the "
    "driver is present and older than the image's CUDA); source: jkjung-avt/tensorrt_demos "
    "plugins/yolo_layer.h CHECK, just-containers/s6-overlay README; prefilter 154 -> 155 ('s6-')",
    "after cc972def (round 97's torch-arch-list-covers-gpu/hzc-1, pytorch/pytorch#3865): new "
    "field signal no-kernel-image-in-thc-check-of-torch-source-build: THC's 'THCudaCheck(Warn) "
    "FAIL file=' / 'cuda runtime error (N) : ... at <file>' naming a torch tree (aten/src/THC, "
    "torch/lib/THC ...) under a user's home (/home/<u>, /root, /Users/<u>, C:\\Users\\<u>), "
    "outside site-packages/conda, is a torch compiled from a checkout -> torch-arch-list-covers-gpu "
    "(excludes wheel/package/flashinfer; the wheel THC prior no-kernel-image-in-thc-check-of-torch-"
    "source is off then); source: pytorch/pytorch aten/src/THC/THCGeneral.cpp __THCudaCheck "
    "(__FILE__ of the caller), cmake/Dependencies.cmake TORCH_CUDA_ARCH_LIST; no prefilter change",
    "after cc972def (round 97's jit-parallelism-fits-memory/hzl-1): process-killed takes the "
    "shell's 'Killed' indented (pip's subprocess-exited-with-error block indents a build's "
    "output six blanks), so killed-after-nvcc-command reads the nvcc command echoed above it; "
    "source: pypa/pip src/pip/_internal/exceptions.py DiagnosticPipError._prefix_with_indent, "
    "ninja-build/ninja src/subprocess-posix.cc",
    "after cc972def (round 97's jit-ninja-on-path/hzq-1): signatures ninja-impostor-in-torch-jit "
    "(near torch's 'as PyTorch extensions root...') and ninja-impostor (with torch's 'Ninja is "
    "required' after it, field signal ninja-impostor-with-torch-ninja-check): Debian's "
    "privilege-escalation detector /usr/sbin/ninja 0.1.3 answering torch's 'ninja --version' with "
    "'die: error: must run as root'; CMake's own check of it names nothing; source: pytorch/pytorch "
    "torch/utils/cpp_extension.py verify_ninja_availability, Ubuntu manpage ninja(8), "
    "microsoft/eEVM#3, pristineio/webrtc-build-scripts#27",
    "after cc972def (round 97's extensions-match-torch-abi/ian-1, isl-org/Open3D#5882): "
    "signatures open3d-torch-guard-crashed and -ipython (extensions-match-torch-abi): Open3D "
    "0.16's torch-version guard dies in its mismatch branch formatting the message "
    "('.'.join(release[:2] + ('*',)) over ints), so CPython's 'TypeError: sequence item 0: "
    "expected str instance, int found' stands for 'Version mismatch: Open3D needs PyTorch "
    "version X.*'; read only with the innermost frame open3d/ml/torch/__init__.py (near:, "
    "CPython within 3, IPython 8 within 8); companion-built-for-other-torch also takes the "
    "CloudViewer fork's guard; source: isl-org/Open3D python/open3d/ml/torch/__init__.py "
    "(0.16.0 line 38, as #5882 and Open3D-ML#588 print it), Asher-1/ACloudViewer's copy; "
    "prefilter unchanged",
    "after cc972def (round 97's unknown/hzh-1): a build step's own 'error: ' six columns in "
    "under pip's '[N lines of output]' relay is scored as the child printed it (a diagnostic), "
    "above pip's 'Failed to build' summary; source: pypa/pip src/pip/_internal/exceptions.py "
    "InstallationSubprocessError, setuptools/_distutils/core.py setup (SystemExit('error: ...'))",
    "after cc972def (round 97's unknown/ibc-1): the kubelet's CRI records 'X from runtime "
    "service failed' / 'from image service failed' are wrapper wording; source: kubernetes "
    "pkg/kubelet/cri/remote/remote_runtime.go, remote_image.go (klog.ErrorS)",
    "after cc972def (round 97's unknown/iay-1, ibj-1, ibn-1): verdicts of a short log with no "
    "error line: pytest's '!!! KeyboardInterrupt !!!' banner, faulthandler's 'Timeout "
    "(H:MM:SS)!', a backend skipped 'at users request'; source: pytest-dev/pytest "
    "src/_pytest/terminal.py _report_keyboardinterrupt, python/cpython Modules/faulthandler.c "
    "faulthandler_thread, ollama/ollama discover (slog.Info 'skipping available library at "
    "users request')",
    "after cc972def (round 97's unknown/ibf-1): pip's spinner status '... error' / 'finished "
    "with status 'error'' is wrapper wording; a copy cut inside pip's output relay (fewer lines "
    "than '[N lines of output]', no '[end of output]') whose lines only wrap or head the "
    "failure shows no first-error line and no verdict; source: pypa/pip "
    "src/pip/_internal/cli/spinners.py open_spinner, src/pip/_internal/exceptions.py",
    "after cc972def (round 97's unknown/hzp-1, unslothai/unsloth#1909): new context signature "
    "msvc-feature-probe-link-miss (link.exe's LNK1181 right after cl.exe's 'test.c' echo, "
    "DeepSpeed's has_function probe) supersedes ld-cannot-find-lib on that line, and a line a "
    "superseding context signature took is no verdict; source: deepspeedai/DeepSpeed "
    "op_builder/builder.py OpBuilder.has_function; prefilter 156 -> 157 ('test.c', after tune-gc's)",
    "after cc972def (round 97's cuda-home-is-toolkit/iat-1, kvcache-ai/ktransformers#54): field "
    "signal toolkit-lib-input-at-empty-prefix-is-cuda-home: a CUDA toolkit library make/ninja "
    "has no rule for directly under /lib64, /lib or /targets/<triple>/lib at the root "
    "('$ENV{CUDA_HOME}/lib64/libcudart.so' with CUDA_HOME unset; lib64/stubs/libcuda.so) -> "
    "cuda-home-is-toolkit, toolkit-links-cudart's cudart-input-file-missing-is-link-layout "
    "withdrawn (unless) and excluded (its link-layout-symlinks was harmful); the driver's "
    "/lib64/libcuda.so and full prefixes unchanged; source: ninja-build/ninja src/build.cc "
    "Plan::AddSubTarget (read), GNU make src/remake.c; prefilter unchanged",
    "after cc972def (round 97's toolkit-found/hzi-1, state-spaces/mamba#602): signature "
    "nvcc-not-found-warning-then-build-error also takes the setup.py's own traceback frame "
    '(\'File "<string>"|.../setup.py", line N, in <module>\') within 40 lines after '
    "check_if_cuda_home_none's warning, where the paste stops before the exception line; pip's "
    "frames or the wrapper alone still name nothing; source: Dao-AILab/flash-attention setup.py "
    "check_if_cuda_home_none (copied by mamba, causal-conv1d); prefilter unchanged ('File \"')",
    "after cc972def (round 97's toolkit-found/iaa-1, xinzhuma/monodle#23): new context "
    "signature numba-nvvm-bare-windows-dll-not-found (ctypes' \"Could not find module "
    "'nvvm.dll'\" within 2 lines of 'libNVVM cannot be found') and field signal "
    "numba-nvvm-bare-windows-dll-is-no-toolkit: numba's NvvmSupportError with the bare Windows "
    "name -> toolkit-found, needed-files-provided excluded (on win32 numba searches only the "
    "conda env and CUDA_HOME/CUDA_PATH, and returns '%s.dll' % 'nvvm' when they hold no "
    "NVVM); Linux's 'libnvvm.so: cannot open' and a full nvvm64_*.dll path unchanged; source: "
    "numba/numba numba/cuda/cudadrv/libs.py get_cudalib, numba/cuda/cuda_paths.py "
    "get_system_ctk (read); prefilter unchanged",
    "after cc972def (round 97's compat-libcuda-only-where-supported/hzt-1, NVIDIA/gpu-operator#277): "
    "field signal forward-compat-in-cuda-sample-wrapper: 804's string in the CUDA samples' "
    "'(error code %s)!' wrapper (vectorAdd, the gpu-operator validator's) with no framework or "
    "container on the line -> compat-libcuda-only-where-supported, container-driver-satisfies-image "
    "(driver upgrade) excluded; source: NVIDIA/cuda-samples Samples/0_Introduction/vectorAdd/vectorAdd.cu",
    "after cc972def (round 97's driver-supports-build-cuda/iai-1, InternLM/lmdeploy#1108): new "
    "context signature nccl-check-macro-failed (NCCL docs' example NCCLCHECK, 'Failed, NCCL error "
    "<file>:<line> ...', copied by FasterTransformer/TurboMind: a C++ program calling NCCL, never "
    "torch); field signal nccl-insufficient-driver-in-own-binary: NCCL's 'Cuda failure' 35 beside it "
    "-> driver-supports-build-cuda (nccl-cuda-failure-is-torch and insufficient-driver-unconfirmed "
    "step aside); field signal nccl-optional-plugin-not-found-is-note: NCCL < 2.19's 'NET/Plugin : "
    "Plugin load (libnccl-net.so) returned 2' note names no provider rule; source: NVIDIA/nccl "
    "src/include/checks.h CUDACHECK, src/net.cc, FasterTransformer src/fastertransformer/utils/nccl_utils.h",
    "after cc972def (round 97's container-runtime-provides-gpu/hzy-1, ollama/ollama#6383): new "
    "signatures ollama-libcuda-search-in-container-driver-dir (FindGPULibs' globs holding the "
    "LD_LIBRARY_PATH entry /usr/local/nvidia/lib[64]/libcuda.so*, the image's environment), "
    "ollama-gpu-library-discovery-empty ('discovered GPU libraries' paths=[]) and "
    "ollama-libcuda-discovered; field signal ollama-no-libcuda-in-container: empty discovery with "
    "the container's search path and no libcuda found -> container-runtime-provides-gpu; source: "
    "ollama/ollama gpu/gpu.go and discover/gpu.go FindGPULibs, Dockerfile LD_LIBRARY_PATH",
    "after cc972def (round 97's driver-supports-build-cuda/iao-1, SYSTRAN/faster-whisper#363): new "
    "context signature python-frame-in-user-home (a traceback frame under /home/<person>/, ~/ or "
    "C:\\Users\\<name>\\, images' service users such as user/jovyan/ray/vscode left out); field "
    "signal insufficient-driver-ctranslate2-in-user-home: CTranslate2's 'CUDA failed with error' 35 "
    "in such an environment -> driver-supports-build-cuda (a workstation, not a container without "
    "the GPU; insufficient-driver-unconfirmed steps aside); source: OpenNMT/CTranslate2 "
    "src/cuda/utils.h CUDA_CHECK, CPython Lib/traceback.py",
    "after cc972def (round 97's package-has-gpu-arch/iaw-1, visualbruno/ComfyUI-Trellis2#197): "
    "signature no-kernel-image takes the runtime's string cut after 'is available' (a report's "
    "quote such as 'Triton Error: no kernel image is available', a logger that wraps the line "
    "before 'for execution on the device'), needles shortened to 'no kernel image is available' "
    "-> package-has-gpu-arch by the existing bare-message ranking; source: CUDA Runtime API "
    "cudaGetErrorString(cudaErrorNoKernelImageForDevice), triton-lang/triton "
    "third_party/nvidia/backend/driver.c gpuAssert",
    "after 7c7be757 (round 98's jit-cache-writable/idc-1, idi-1, idj-1: triton-lang/triton#518, "
    "vacancy/PreciseRoIPooling#37, pytorch/pytorch#34238): new context signature "
    "python-permission-denied (Python's EACCES with the path) and field signal "
    "eacces-on-shared-tmp-jit-cache-root -> jit-cache-writable only when the path lies under a JIT "
    "cache's shared default root in the temp dir (/tmp/triton, /tmp/torch_extensions, "
    "/tmp/torchinductor_<user>; another user's directory); package trees and container HOME "
    "caches stay unknown; source: triton python/triton/code_gen.py _warmup, pytorch/pytorch "
    "torch/utils/cpp_extension.py get_default_build_root + file_baton.py, "
    "torch/_inductor/runtime/cache_dir_utils.py default_cache_dir",
    "after 7c7be757 (round 98's nvcc-matches-cudart-headers/icd-1, tune-he): signature "
    "cuda-headers-redefine-cudacc-ver (the CUDA >= 9 crt/common_functions.h's own line "
    "redefining __CUDACC_VER__, GCC/clang/MSVC C4005 wordings: an nvcc <= 8 that predefines it "
    "drives newer headers) -> nvcc-matches-cudart-headers (field signal and version-pair "
    "predicts); source: CUDA 9.0 crt/common_functions.h, pytorch/pytorch#4150 and #8094",
    "after 7c7be757 (round 98's nvcc-matches-cudart-headers/idw-1, tune-he): signature "
    "nvcc-stub-macro-arity-mismatch (GCC's 'macro \"__cudaLaunch\" passed N arguments, but "
    "takes just M' / 'requires N arguments, but only M given', MSVC C4002/C4003, on nvcc's host "
    "stub macros) -> nvcc-matches-cudart-headers; source: gcc libcpp/macro.cc "
    "_cpp_arguments_ok, CUDA 13 crt/host_runtime.h's two-argument __cudaLaunch",
    "after 7c7be757 (round 98's toolkit-found/idv-1, tune-he): signature host-cc-failed-with-code "
    "(Futhark's '<cc> failed with code N:' around the plain host C compiler) and field signal "
    "cuda-h-missing-under-plain-host-cc-is-no-toolkit (cuda.h/cuda_runtime.h/nvrtc.h missing "
    "there -> toolkit-found, excludes needed-files-provided; nvcc's own run keeps it); source: "
    "diku-dk/futhark docs/man/futhark-cuda.rst (gcc with no toolkit -I; CPATH fix)",
    "after round99 (round 98's ibr-1, ida-1: Docker's 'could not select device driver \"cdi\"'): "
    "signature docker-cdi-device-driver-not-enabled (the named cdi device driver is registered "
    "only with dockerd's CDI feature on; supersedes container-gpu-device-driver-missing), "
    "predicted by container-runtime-provides-gpu, whose message now names features.cdi; "
    "source: moby/moby daemon/devices.go handleDevice, daemon/errors.go incompatibleDeviceRequest",
    "after round99 (round 98's idl-1: nvidia-container-cli 'mount error: open failed: "
    ".../devices.allow: permission denied' under rootless dockerd): signature "
    "nvidia-container-cli-devices-cgroup-denied (the hook's devices-cgroup write refused: cgroup "
    "v1 devices.allow open denied, C and Go wordings, or cgroup v2 bpf_prog_query EPERM under "
    "'failed to add device rules'; other reasons and runc's own query stay unknown), predicted by "
    "container-runtime-provides-gpu (message: no-cgroups = true); source: NVIDIA/libnvidia-container "
    "src/nvcgo/internal/cgroup/v1.go addDeviceRule, ebpf.go; moby/moby#38729",
    "after f0835d13 (round 99's driver-supports-build-cuda/ifq-1, tune-ib): signature "
    "nccl-runtime-call-requires-newer-driver (NCCL's 'Cuda failure [36 ]'API call is not supported "
    "in the installed CUDA driver'', not its INFO line) -> driver-supports-build-cuda; other "
    "wordings of 36 stay generic; source: NVIDIA/nccl src/include/checks.h CUDACHECK",
    "after f0835d13 (round 99's driver-runs-ptx/ifo-1, tune-ib): signature "
    "xla-driver-link-of-ptxas-cubins-failed (XLA's 'Unknown:'/'UNKNOWN:' link status over 209, "
    "200 or 222; supersedes no-kernel-image) -> driver-runs-ptx; source: tensorflow "
    "stream_executor/cuda/cuda_asm_compiler.cc LinkGpuAsm RETURN_IF_CUDA_ERROR",
    "after f0835d13 (round 99's kernel-arch-feature/ifb-1, tune-ic): signature "
    "torch-check-arch-gate-false (torch's bare TORCH_CHECK form 'Expected <cond> to be true, "
    "but got false' whose condition is only arch terms: is_smNN / is_smNx, <props>->major/minor "
    "compared with a number) -> kernel-arch-feature; source: Dao-AILab/flash-attention "
    "csrc/flash_attn/fmha_api.cpp mha_bwd/mha_fwd (0.1/0.2.x), c10/util/Exception.h TORCH_CHECK",
    "after f0835d13 (round 99's unknown/ieg-1, ifp-1, tune-ia): first-error ranking: CMake "
    "FindCUDA's indented 'Error generating [file] <path>' is wrapper wording, EDG's '<file>(<n>) "
    "(col. <c>): catastrophic|internal error' a compiler diagnostic, and the CUDA tools' padded "
    "'nvcc error   :' / 'ptxas fatal   :' rank alike (5.0); source: CMake "
    'Modules/FindCUDA/run_nvcc.cmake (message(FATAL_ERROR "Error generating ...")), nvcc\'s '
    "diagnostic format",
    "after f0835d13 (round 99's unknown/ifm-1, tune-ia): '*** Exception (<file>::<fn>:<line>)' "
    "banners are location headers (2.5), their 'Text: ...' line the statement; source: "
    "DualSPHysics JException::Print",
    "after f0835d13 (round 99's unknown/ifj-1, tune-ia): NCCL 2.2/2.3's WARN form of the "
    "libibverbs probe ('<file>:<n> WARN Failed to open libibverbs.so[.1]') is a probe note; "
    "source: NVIDIA/nccl src/misc/ibvwrap.cc, maintainer sjeaugey in "
    "NVIDIA/nccl-tests#14",
    "after 7c7be757 (round 98's unknown/ict-1, tune-ia): prefix 'buildkit' strips BuildKit's "
    "plain-progress '#<vertex> <seconds> ' from a RUN step's lines; source: moby/buildkit "
    "util/progress/progressui printer.go textMux.printVtx",
    "after f0835d13 (round 99's unknown/ifc-1, tune-ia): a matched make 'Error N' shown alone "
    "lets a verdict above it (make's own 'make: g++: No such file or directory') be the "
    "statement; a fallback note ('X is not available, using Y') is as weak as a warning, and "
    "an echoed command line (2+ options) is no wrapped prose; source: GNU make src/job.c "
    "child_error and exec_command",
    "after 7c7be757 (round 98's triton-finds-libcuda/ibq-1, tune-ie): signature "
    "libcuda-lookup-ldconfig-failed reads Triton's 'ldconfig -p' call failing (CalledProcessError "
    "exit status 1: no ld cache; FileNotFoundError 'ldconfig': Triton 2.1's bare name off PATH) "
    "only next to a triton/ frame, libcuda_dirs or Inductor's wrapper; source: triton-lang/triton "
    "third_party/nvidia/backend/driver.py libcuda_dirs, python/triton/common/build.py (2.1), "
    "glibc elf/ldconfig.c print_cache",
    "after tune-if (round 95's hwj-1, MrForExample/ComfyUI-3D-Pack#61): torch's 'Ninja is "
    "required to load C++ extensions' (or FileNotFoundError ninja) whose traceback frames, "
    "above or below the line (new field frame_files), lie in a Windows portable bundle's "
    "python_embeded or ComfyUI_windows_portable: jit-ninja-on-path (field signal "
    "ninja-missing-in-windows-embedded-python), since the bundle's .bat never puts "
    "python_embeded\\Scripts, where pip puts ninja.exe, on PATH; a venv'd ComfyUI stays null; "
    "source: comfyanonymous/ComfyUI .ci/windows_base_files/run_nvidia_gpu.bat, torch "
    "cpp_extension.py verify_ninja_availability",
    "after 1f79c202 (round 100's arch-supported-by-toolkit/iga-1, harmful): field signal "
    "xla-fallback-ptx-load-rejected-is-ptxas-arch: XLA's 'failed to load PTX text as a module: "
    "CUDA_ERROR_INVALID_IMAGE' (the driver JIT of XLA's fallback PTX) beside XLA's 'Falling back "
    "to the CUDA driver for PTX compilation; ptxas does not support CC X.Y' is the ptxas that "
    "does not know the GPU, not a prebuilt binary newer than the driver; source: openxla/xla "
    "cuda_driver.cc LoadPtx, subprocess_compilation.cc LogPtxasTooOld",
    "after 1f79c202 (round 99's driver-supports-build-cuda/ifl-1): insufficient-driver-binary-"
    "check-macro reads the CUDA samples' checkCudaErrors shape 'CUDA error at <file>:<line> "
    "code=35(<string>)' (a binary's own check naming its source file); source: NVIDIA/cuda-samples "
    "Common/helper_cuda.h check()",
    "after 1f79c202 (round 101's toolkit-knows-target-archs/igu-1): nvcc-unsupported-arch takes "
    "the refusal retyped without nvcc's ' : ' separator ('nvcc fatal unsupported gpu "
    "architecture 'compute_86''); source: nvcc's 'nvcc fatal   : Unsupported gpu architecture' "
    "(CUDA Features Archive for the per-release targets)",
    "after 1f79c202 (round 101's unknown/ihb-1, first error line): suspicious.py ranks pip's "
    "'Could not install packages due to an OSError.' (its traceback form) with the OSError line "
    "its logged traceback ends in; source: pypa/pip commands/install.py create_os_error_message "
    "and logger.error(message, exc_info=show_traceback)",
    "after 7c7be757 (round 98's ibv-1, siderolabs/extensions#380): field signal "
    "linker-script-library-is-no-truncated-object: 'invalid ELF header' on an unversioned "
    "libc.so / libm.so / libpthread.so / libgcc_s.so / libncurses.so is the loader reaching a "
    "GNU ld script (a musl DT_NEEDED 'libc.so', ctypes.CDLL('libc.so')), not a truncated JIT "
    "object: jit-cache-intact gets no credit, no cause is named; source: bminor/glibc Makerules "
    "(libc.so written as '/* GNU ld script */ GROUP (...)'), elf/dl-load.c open_verify",
    "after tune-jc (rounds 70/98's gvc-1, ice-1, ido-1: gpufs/gpufs#3, "
    "ccsb-scripps/AutoDock-GPU#249/#146): new signature symbol-copy-invalid-device-symbol "
    "('invalid device symbol' / cudaErrorInvalidSymbol from a program's own check macro over "
    "cudaMemcpyToSymbol, the module without an image for the GPU) -> package-has-gpu-arch; a "
    "call showing a string literal as the symbol (CUDA 5's removed char* form) and HIP lines "
    "are not taken; source: CUDA Runtime API cudaMemcpyToSymbol/cudaErrorInvalidSymbol, "
    "AutoDock-GPU cuda/kernels.cu SetKernelsGpuData",
    "after tune-jc (round 68's gup-1, dillongoostudios/goo-engine#26): new signatures "
    "cycles-runtime-kernel-compile-failed (Cycles' 'Failed to execute compilation command' / "
    "'CUDA kernel compilation failed' after its own '\"nvcc\" -arch=sm_XY --cubin ... "
    "cycles_kernel_sm_XY_<md5>.cubin' command: the build shipped no kernel for the GPU; "
    "adaptive compilation's -D__KERNEL_FEATURES__ is not taken) and "
    "cycles-no-binary-kernel-for-cc ('CUDA binary kernel for this graphics card compute "
    "capability (X.Y) not found.') -> package-has-gpu-arch; source: blender/blender "
    "intern/cycles/device/cuda/device_impl.cpp CUDADevice::compile_kernel",
    "after m51 (round 102's iig-1, iih-1, rStar#17 / pytorch#108868): a decade-old cuXxx symbol "
    "unresolved in a Triton-built cached module (~/.triton/cache, /tmp/torchinductor_*/triton) "
    "-> jit-cache-intact (triton-finds-libcuda second), no driver upgrade; any JIT cache dir "
    "(torch_extensions, FlashInfer cached_ops) leaves undefined-driver-api-symbol; source: "
    "triton-lang/triton third_party/nvidia/backend/driver.py compile_module_from_src",
    "after tune-kc (round 105's ilv-1, NVIDIA/numba-cuda#452): cuda-runtime-none-loadable also "
    "takes cuda-pathfinder's Windows form 'Failure finding \"<lib>*.dll\"' (cudart, nvrtc, "
    "cuBLAS(Lt), cuFFT, cuRAND, cuSOLVER, cuSPARSE, nvJitLink; not nvvm) and the message on a "
    "line of its own after a wrapped 'DynamicLibNotFoundError:' -> runtime-libs-match-cuda-major; "
    "source: NVIDIA/cuda-python cuda_pathfinder/cuda/pathfinder/_dynamic_libs/"
    "find_nvidia_dynamic_lib.py _FindNvidiaDynamicLib.raise_not_found_error",
    "after tune-kc (round 105's ils-1, YanWenKun/ComfyUI-Docker#42): field signal "
    "khronos-gl-header-is-provided: a missing Khronos EGL/GL/GLES/KHR API header (EGL/egl.h, "
    "GL/gl.h, KHR/khrplatform.h ...) -> needed-files-provided (libglvnd's libegl-dev / "
    "libgl-dev / libglvnd-devel); GLEW, GLU, GLUT and glm keep no signal; source: NVlabs/"
    "nvdiffrast nvdiffrast/common/glutil.h and docker/Dockerfile",
    "after f95baa65 (round 105's ilf-1, NVIDIA/apex#1633): a setup.py's TypeError on None + str "
    "or os.path.join(None) whose frame line joins CUDA_HOME or '/bin/nvcc' (torch's CUDA_HOME "
    "is None: no toolkit found) -> toolkit-found (cuda-home-none-joined-in-build); source: "
    "NVIDIA/apex setup.py get_cuda_bare_metal_version, torch/utils/cpp_extension.py CUDA_HOME",
    "after f95baa65 (round 105's null ilm-1, traveller59/second.pytorch#7): 'nvcc: not found' under "
    "an echoed bare nvcc that passes a toolkit's -I<prefix>/include: the runner's PATH (sudo "
    "secure_path), no cause named (field signal bare-nvcc-with-toolkit-include-is-path-of-the-"
    "runner withdraws toolkit-found); source: sudoers(5) secure_path, dash command lookup",
    "after m52 (round 102's iib-1, NVIDIA/gpu-operator#234): dnf 4 'Error: Unable to find a "
    "match: kernel-headers-<rel> kernel-devel-<rel>' (and dnf5 'No match for argument: "
    "kernel-headers-<rel>') -> dkms-kernel-headers-missing, driver-module-built-for-kernel; "
    "kernel-tools and other packages stay unknown; source: rpm-software-management/dnf "
    "dnf/cli/commands/install.py InstallCommand.run, NVIDIA/gpu-driver-container rhel8/nvidia-driver",
    "after m52 (round 102's iiq-1, NixOS/nix#4970): the legacy (340.xx) driver's flat kernel/ tree "
    "(kernel/nv-linux.h, nv*.c, os-*.c, uvm/nvidia_uvm*.c) in a compiler error -> "
    "nvidia-kmod-source-broken; a project's own kernel/ files stay unchanged; source: NixOS/nixpkgs "
    "pkgs/os-specific/linux/nvidia-x11 (builder-legacy340.sh), the 340 .run layout",
    "after m52 (round 102's iir-1, NixOS/nixpkgs#538659): Nix's failed derivation of the nixpkgs "
    "kernel-module package (nvidia-x11|dc|kernel-modules|open-<driver>-<kernel>, 'builder for ... "
    "failed', 2.29+ 'Cannot build', a bare nvidia-kernel-modules-<d>-<k> line) -> "
    "nix-nvidia-kmod-derivation-failed; the libsOnly nvidia-x11-<ver> stays unknown; source: "
    "NixOS/nixpkgs pkgs/os-specific/linux/nvidia-x11/kernel-modules.nix, NixOS/nix derivation-goal.cc",
    "after m52 (round 102's ihy-1, M-Bab/linux-kernel-amdgpu-binaries#101): DKMS's echo of the "
    "NVIDIA dkms.conf make (NV_EXCLUDE_BUILD_MODULES) ending '(bad exit status: N)' -> "
    "dkms-nvidia-make-bad-exit (new prefilter literal); other modules' make and a successful make "
    "stay unknown; source: dell/dkms dkms.in invoke_command / actual_build",
    "after m52 (round 103's iiu-1, NVIDIA/gpu-operator#227): the GPU Operator driver container's "
    "'Could not resolve Linux kernel version' -> gpu-operator-driver-kernel-unresolved; 'Could not "
    "resolve RHEL version' stays unknown; source: NVIDIA/gpu-driver-container rhel8/nvidia-driver "
    "_resolve_kernel_version",
    "after tune-kb (round 102's iil-1, round 104's ijy-1, NVIDIA/GPUStressTest#11 / "
    "quokka-astro/quokka#706): new signature cmake-cuda-compiler-id-unknown (CMake's "
    "'Failed to detect a default CUDA architecture.' within 3 lines of 'The CUDA compiler "
    "identification is unknown': the compiler path CMake was handed runs no nvcc it can "
    "identify) -> cuda-home-is-toolkit, shared with path-nvcc-not-distro (field signal "
    "cmake-cuda-id-unknown-is-toolkit-path leans to the toolkit path unless /usr/bin/nvcc is in "
    "the log); after 'identification is NVIDIA X' nothing is named; source: Kitware/CMake "
    "Modules/CMakeDetermineCUDACompiler.cmake",
    "after tune-kb (round 104's ijt-1, NVIDIA/aicr#1688): new signature "
    "containerd-dropin-config-version-higher ('drop-in config version N higher than root config "
    "version M': containerd 2.x refuses the NVIDIA runtime's conf.d drop-in written at the "
    "dump's version) -> container-runtime-provides-gpu; containerd exiting without that line "
    "names nothing; source: containerd/containerd cmd/containerd/server/config/config.go "
    "LoadConfig",
    "after tune-kb (round 104's ikd-1, vllm-project/vllm#3098): new near: option absent: true "
    "(match only where the context did NOT occur) and signature "
    'libcuda-lookup-ldconfig-not-on-path-bare (the uncaught "FileNotFoundError: [Errno 2] No '
    "such file or directory: 'ldconfig'\" with no traceback frame or header within 40 lines "
    "before: Triton 2.1's libcuda_dirs with /sbin off PATH, quoted alone) -> "
    "triton-finds-libcuda; under another program's frames nothing is named; source: "
    "triton-lang/triton python/triton/common/build.py libcuda_dirs",
]

TOOLCHAIN_ENV = re.compile(
    r"^(CUDA_HOME|CUDA_PATH|PATH|NVCC_CCBIN|FLASHINFER_NVCC|TRITON_PTXAS\w*)$"
)

# Runs inside the frozen tree: scans and diagnoses every log, prints JSON.
_RUNNER = r"""
import json, re, sys
tree, corpus, exclude_repo_json = sys.argv[1], sys.argv[2], sys.argv[3]
train_files = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
sys.path.insert(0, tree + "/src")
import yaml
from pathlib import Path
from remedy.evidence.catalog import load_catalog
from remedy.evidence import scan_path
from remedy.diagnose import diagnose
from remedy.knowledge.loader import load_knowledge
import remedy.evidence.catalog as catmod

THREAD = re.compile(r"([\w.-]+/[\w.-]+)#\d+")

def learned_only_from(src, repo):
    if src is None:
        return False
    if getattr(src, "repo", None) or getattr(src, "doc", None) or getattr(src, "path", None):
        return False
    return repo in THREAD.findall(getattr(src, "thread", None) or "")

kb = load_knowledge()
full = load_catalog(Path(tree) / "knowledge" / "signatures.yaml")
rows = yaml.safe_load((Path(corpus) / "index.yaml").read_text())["logs"]
exclude = json.loads(exclude_repo_json)
out = {"repairs": {rid: list(cr.rule.repairs) for rid, cr in kb.rules.items()}, "logs": {}}
actions = getattr(kb, "actions", None) or {}
out["actions"] = {}
for aid, a in (actions.items() if isinstance(actions, dict) else []):
    act = getattr(a, "action", a)
    effects = []
    for e in getattr(act, "effects", []) or []:
        effects.append(e if isinstance(e, dict) else getattr(e, "model_dump", lambda: {})())
    touches = [getattr(t, "kind", None) for t in (getattr(act, "touches", []) or [])]
    out["actions"][aid] = {"effects": effects, "touches": touches}
# the learned fallback (refs that have remedy.evidence.learned): a model trained here, by the
# tree's own code, on train_files only (rows the ref's corpus had; minus the log's repository
# for LORO), handed to remedy through $REMEDY_LEARNED_MODEL; never the committed model
try:
    from remedy.evidence import learned as lmod
except ImportError:
    lmod = None
if train_files is None:
    lmod = None
models = {}
if lmod is not None:
    import os, tempfile
    mdir = tempfile.mkdtemp(prefix="remedy-gen-model-")
    allowed = set(train_files)
    trows = [t for t in lmod.corpus_rows(Path(corpus)) if t["file"] in allowed]
    toks = {t["file"]: lmod.tokens(t["text"]) for t in trows}
    out["learned"] = {}
    out["trained_rows"] = len(trows)

    def model_for(repo):
        key = repo if exclude else ""
        if key not in models:
            use = [t for t in trows if not key or t["repo"] != key]
            m = lmod.train([t["text"] for t in use], [t["label"] for t in use],
                           tokenized=[toks[t["file"]] for t in use])
            path = os.path.join(mdir, f"m{len(models)}.json")
            Path(path).write_text(json.dumps(m.to_json()))
            models[key] = path
        return models[key]

catalogs = {}
for r in rows:
    repo = r["thread"].split("#")[0]
    key = repo if exclude else ""
    if key not in catalogs:
        if key:
            sigs = [s for s in full.signatures if not learned_only_from(s.source, repo)]
            cat = catmod.Catalog(signatures=sigs, path=full.path)
        else:
            cat = full
        catalogs[key] = cat
    cat = catalogs[key]
    res = scan_path(str(Path(corpus) / r["file"]), catalog=cat)
    wrappers = {s.id for s in cat.signatures if getattr(s, "wrapper", False)}
    kw = {}
    try:
        from remedy.evidence import fields as fieldmod  # present from issue 17 on
        kw["signals"] = fieldmod.load_signals(Path(tree) / "knowledge" / "field-signals.yaml",
                                              exclude_repo=repo if exclude else None)
    except (ImportError, FileNotFoundError):
        pass
    if lmod is not None:
        os.environ[lmod.ENV_MODEL] = model_for(repo)
        kw["log_text"] = lmod.read_log_text([Path(corpus) / r["file"]])
    try:
        d = diagnose(kb, None, res.symptoms, wrappers=wrappers, **kw)
    except TypeError:
        d = diagnose(kb, None, res.symptoms, wrappers=wrappers)
    out["logs"][r["file"]] = [h.rule for h in d.hypotheses[:5]]
    if lmod is not None and d.hypotheses and getattr(d.hypotheses[0], "source", "") == "learned":
        out["learned"][r["file"]] = True
print(json.dumps(out))
"""


def _rows() -> list[dict[str, Any]]:
    return yaml.safe_load((CORPUS / "index.yaml").read_text())["logs"]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def _extract(ref: str, dest: Path) -> None:
    """The src/, knowledge/ and playbooks/ of ``ref`` (the working tree for HEAD)."""
    if ref == "WORKTREE":
        for part in ("src", "knowledge", "playbooks"):
            subprocess.run(["cp", "-r", str(ROOT / part), str(dest / part)], check=True)
        return
    tar = dest / "tree.tar"
    with tar.open("wb") as f:
        subprocess.run(
            ["git", "archive", ref, "src", "knowledge", "playbooks"], cwd=ROOT, stdout=f, check=True
        )
    with tarfile.open(tar) as t:
        t.extractall(dest, filter="data")


def diagnose_with(ref: str, loro: bool = False, train: set[str] | None = None) -> dict[str, Any]:
    """Every corpus log diagnosed by ``ref``'s code and knowledge. ``train``: the corpus files a
    learned fallback may be trained on (refs with remedy.evidence.learned train one in the
    runner; with ``loro``, one per repository without it); None: rules only."""
    args = [json.dumps(loro)]
    if train is not None:
        args.append(json.dumps(sorted(train)))
    with tempfile.TemporaryDirectory(prefix="remedy-gen-") as tmp:
        _extract(ref, Path(tmp))
        r = subprocess.run(
            [sys.executable, "-c", _RUNNER, tmp, str(CORPUS), *args],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            raise SystemExit(f"diagnosis with {ref} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout)


def toolchain_actions(actions: dict[str, Any]) -> set[str]:
    """Actions that change the toolkit, the toolchain's environment, or the driver.

    A driver change is read from its ``gpu_driver`` effect, which every ref's upgrade-driver
    has: refs from 926b04f on dropped the action's ``touches`` (typed operations, a43d86f), so
    reading ``touches`` alone counted no driver upgrade as a toolchain change there."""
    out = set()
    for aid, a in actions.items():
        for e in a["effects"]:
            if "toolkit" in e or "add_toolkit" in e or "gpu_driver" in e:
                out.add(aid)
            for key in ("env", "unset_env"):
                names = e.get(key) or {}
                if any(TOOLCHAIN_ENV.match(str(n)) for n in names):
                    out.add(aid)
        if "driver" in a["touches"]:
            out.add(aid)
    return out


def cited_threads(ref: str) -> set[str]:
    """Threads cited in the knowledge or the corpus of ``ref`` (they are not unseen)."""
    if ref == "WORKTREE":
        paths = [
            *ROOT.glob("knowledge/*.yaml"),
            *ROOT.glob("playbooks/*.yaml"),
            CORPUS / "index.yaml",
        ]
        text = "".join(p.read_text() for p in paths)
    else:
        text = _git("show", f"{ref}:tests/fixtures/corpus/index.yaml")
        for part in ("knowledge", "playbooks"):
            for f in _git("ls-tree", "-r", "--name-only", ref, part).splitlines():
                text += _git("show", f"{ref}:{f}")
    return set(re.findall(r"[\w.-]+/[\w.-]+#\d+", text))


def unseen(rows: list[dict[str, Any]], ref: str, *, no_rule: bool = False) -> list[dict[str, Any]]:
    """Rows dated on/after the split whose thread ``ref`` never cites: its held-out set.

    ``no_rule``: the rows of that set whose established cause has no rule (class null)."""
    seen = cited_threads(ref)
    return [
        r
        for r in rows
        if (r.get("class") is None if no_rule else r.get("class"))
        and r.get("date")
        and str(r["date"]) >= SPLIT_DATE
        and r["thread"] not in seen
    ]


def corpus_files(ref: str) -> set[str]:
    """The files of ``ref``'s corpus index (the working tree's for WORKTREE)."""
    if ref == "WORKTREE":
        return {r["file"] for r in _rows()}
    text = _git("show", f"{ref}:tests/fixtures/corpus/index.yaml")
    return {r["file"] for r in yaml.safe_load(text)["logs"]}


def date_split_train(ref: str) -> set[str]:
    """What a learned model may see for the date split: ``ref``'s corpus minus every post-split
    row the starting commit never saw (classified or not): legacy and pre-split rows only."""
    rows = _rows()
    held = {r["file"] for r in unseen(rows, BEFORE_REF)}
    held |= {r["file"] for r in unseen(rows, BEFORE_REF, no_rule=True)}
    return corpus_files(ref) - held


def score(rows: list[dict[str, Any]], run: dict[str, Any], current: dict[str, Any]) -> dict:
    """top-1/top-3/unknown/harmful; a learned top hypothesis proposes no fix, so a wrong one is
    not harmful: it is counted apart (learned_top_wrong) so a figure never hides it."""
    tool = toolchain_actions(current["actions"]) | toolchain_actions(run["actions"])
    learned = run.get("learned", {})
    n = top1 = top3 = unknown = harmful = learned_wrong = learned_right = learned_top3 = 0
    misses, harms = [], []
    for r in rows:
        ranked = run["logs"][r["file"]]
        n += 1
        if r["file"] in learned and r["class"] in ranked[:3]:
            learned_top3 += 1
        if not ranked:
            unknown += 1
        if ranked[:1] == [r["class"]]:
            top1 += 1
            learned_right += r["file"] in learned
        else:
            misses.append({"file": r["file"], "class": r["class"], "ranked": ranked[:3]})
            if r["file"] in learned:
                learned_wrong += 1
                misses[-1]["learned"] = True
            elif ranked:
                right = set(current["repairs"].get(r["class"], []))
                proposed = set(run["repairs"].get(ranked[0], [])) & tool
                if proposed and not (proposed & right):
                    harmful += 1
                    harms.append({"file": r["file"], "top": ranked[0], "actions": sorted(proposed)})
        if r["class"] in ranked[:3]:
            top3 += 1
    return {
        "logs": n,
        "top1": top1,
        "top3": top3,
        "unknown": unknown,
        "harmful": harmful,
        "learned_active": "learned" in run,
        "learned_top_right": learned_right,
        "learned_top_wrong": learned_wrong,
        # what a user sees by default: learned hints are opt-in (REMEDY_LEARNED_HINTS), and a
        # learned hypothesis exists only where no rule matched, so without it the log is unknown
        "rules_only": {
            "top1": top1 - learned_right,
            "top3": top3 - learned_top3,
            "unknown": unknown + learned_right + learned_wrong,
        },
        "top1_rate": round(top1 / n, 3) if n else None,
        "top3_rate": round(top3 / n, 3) if n else None,
        "unknown_rate": round(unknown / n, 3) if n else None,
        "misses": misses,
        "harmful_fixes": harms,
    }


def score_no_rule(rows: list[dict[str, Any]], run: dict[str, Any], current: dict) -> dict:
    """Held-out logs whose established cause no rule covers: the right answer is "unknown"
    (the corpus test's rule for class-null rows); naming a toolchain change is harmful."""
    tool = toolchain_actions(current["actions"]) | toolchain_actions(run["actions"])
    said_unknown, named, harms, learned_claims = 0, [], [], 0
    for r in rows:
        ranked = run["logs"][r["file"]]
        if not ranked:
            said_unknown += 1
            continue
        named.append({"file": r["file"], "ranked": ranked[:3]})
        if r["file"] in run.get("learned", {}):
            # a learned class for a cause no rule covers: a false claim of knowing (no fix)
            learned_claims += 1
            named[-1]["learned"] = True
        elif set(run["repairs"].get(ranked[0], [])) & tool:
            harms.append({"file": r["file"], "top": ranked[0]})
    return {
        "logs": len(rows),
        "said_unknown": said_unknown,
        "named_a_class": len(named),
        "learned_claims": learned_claims,
        "harmful": len(harms),
        "named": named,
        "harmful_fixes": harms,
    }


def split(rows: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """Post-split rows the starting commit never saw, and the rest (the tuning set)."""
    held = unseen(rows, BEFORE_REF)
    tuning = [r for r in rows if r.get("class") and r not in held]
    return held, tuning


def evaluate(ref: str, current: dict[str, Any]) -> dict[str, Any]:
    rows = _rows()
    held, tuning = split(rows)
    own = unseen(rows, ref)
    plain = diagnose_with(ref, train=date_split_train(ref))
    loro = diagnose_with(ref, loro=True, train=corpus_files(ref))
    classified = [r for r in rows if r.get("class")]
    out = {
        "ref": ref,
        "commit": _git("rev-parse", "--short", ref) if ref != "WORKTREE" else "worktree",
        "split_date": SPLIT_DATE,
        "date_split_heldout": score(held, plain, current),
        "date_split_tuning": score(tuning, plain, current),
        "loro_all": score(classified, loro, current),
    }
    if own and len(own) != len(held):
        out["unseen_by_this_ref"] = score(own, plain, current)
    out["date_split_no_rule"] = score_no_rule(
        unseen(rows, BEFORE_REF, no_rule=True), plain, current
    )
    return out


def clean_rounds(current: dict[str, Any]) -> dict[str, Any]:
    """Every post-split log scored once, by the knowledge frozen before it was collected."""
    rows = _rows()
    owner: dict[str, int] = {}
    for i, (_, corpus_ref) in enumerate(CLEAN_ROUNDS):
        for r in unseen(rows, corpus_ref):
            owner[r["file"]] = i
    for i, (_, corpus_ref) in enumerate(CLEAN_ROUNDS):
        for r in unseen(rows, corpus_ref, no_rule=True):
            owner[r["file"]] = i
    rounds = []
    total = {
        "logs": 0,
        "top1": 0,
        "top3": 0,
        "unknown": 0,
        "harmful": 0,
        "learned_top_right": 0,
        "learned_top_wrong": 0,
    }
    rules_only = {"top1": 0, "top3": 0, "unknown": 0}
    for i, (ref, corpus_ref) in enumerate(CLEAN_ROUNDS):
        mine = [r for r in rows if owner.get(r["file"]) == i]
        if not mine:
            continue
        run = diagnose_with(ref, train=corpus_files(corpus_ref))
        classified = [r for r in mine if r.get("class")]
        sc = score(classified, run, current)
        nulls = [r for r in mine if r.get("class") is None]
        rd = {"knowledge": ref, "logs_absent_from": corpus_ref, **sc}
        if nulls:
            rd["no_rule"] = score_no_rule(nulls, run, current)
        rounds.append(rd)
        for k in total:
            total[k] += sc[k]
        for k in rules_only:
            rules_only[k] += sc["rules_only"][k]
    total["rules_only"] = rules_only
    total["learned_active"] = any(rd["learned_active"] for rd in rounds)
    n = total["logs"] or 1
    total.update(
        top1_rate=round(total["top1"] / n, 3),
        top3_rate=round(total["top3"] / n, 3),
        unknown_rate=round(total["unknown"] / n, 3),
    )
    return {"rounds": rounds, "total": total}


def _line(name: str, s: dict[str, Any]) -> str:
    n = s["logs"]
    return (
        f"  {name:28} n={n:3}  top-1 {s['top1']:3} ({s['top1_rate']:.1%})  "
        f"top-3 {s['top3']:3} ({s['top3_rate']:.1%})  unknown {s['unknown']:2} "
        f"({s['unknown_rate']:.1%})  harmful {s['harmful']}"
        + (
            f"  learned top right {s['learned_top_right']} wrong {s['learned_top_wrong']}"
            if s.get("learned_active") or s.get("learned_top_right") or s.get("learned_top_wrong")
            else ""
        )
    )


def _saved_or_json(report: dict[str, Any], args: argparse.Namespace) -> bool:
    """Write the report to --save's file; print it as JSON under --json (True: done)."""
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.save}.json").write_text(json.dumps(report, indent=2) + "\n")
    if args.json:
        print(json.dumps(report, indent=2))
    return bool(args.json)


def _print_clean(clean: dict[str, Any]) -> None:
    print("\nclean held-out (each post-split log scored by the knowledge frozen before it")
    print("was collected; the figure to quote):")
    for rd in clean["rounds"]:
        print(_line(f"{rd['knowledge']} on its round", rd))
        if "no_rule" in rd:
            nr = rd["no_rule"]
            print(
                f"  {'  + no rule covers the cause':28} n={nr['logs']:3}  said unknown "
                f"{nr['said_unknown']}, named a class {nr['named_a_class']} (learned "
                f"{nr['learned_claims']}), harmful {nr['harmful']}"
            )
    print(_line("all rounds", clean["total"]))
    tot, ro = clean["total"], clean["total"].get("rules_only")
    if ro and tot["logs"]:
        n = tot["logs"]
        print(
            f"  {'rules only (the default)':28} n={n:3}  top-1 {ro['top1']:3} "
            f"({ro['top1'] / n:.1%})  top-3 {ro['top3']:3} ({ro['top3'] / n:.1%})  "
            f"unknown {ro['unknown']:2} ({ro['unknown'] / n:.1%})  (learned hints are opt-in)"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", action="append", help="git ref(s) to evaluate (WORKTREE = files)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--save", help="write the JSON report to bench/results/NAME.json")
    ap.add_argument(
        "--clean-only",
        action="store_true",
        help="only the clean held-out rounds (each log by the knowledge frozen before it; ~80 s)",
    )
    args = ap.parse_args()
    if args.clean_only:
        clean = clean_rounds(diagnose_with("WORKTREE"))
        if not _saved_or_json(clean, args):
            _print_clean(clean)
        return 0
    refs = args.ref or [BEFORE_REF, *FROZEN_REFS, "WORKTREE"]
    current = diagnose_with("WORKTREE")
    reports = [evaluate(ref, current) for ref in refs]
    rows = _rows()
    held, tuning = split(rows)
    clean = clean_rounds(current) if not args.ref else None
    rep = {
        "clean_heldout": clean,
        "split_date": SPLIT_DATE,
        "heldout_logs": len(held),
        "heldout_classes": len({r["class"] for r in held}),
        "heldout_repositories": len({r["thread"].split("#")[0] for r in held}),
        "tuning_logs": len(tuning),
        "tuned_after_seeing_heldout": TUNED_AFTER,
        "runs": reports,
    }
    if _saved_or_json(rep, args):
        return 0
    print(
        f"date split at {SPLIT_DATE}: {rep['heldout_logs']} held-out logs "
        f"({rep['heldout_classes']} classes, {rep['heldout_repositories']} repositories), "
        f"{rep['tuning_logs']} tuning logs"
    )
    for r in reports:
        print(f"\n{r['ref']} ({r['commit']}):")
        print(_line("date split, held-out", r["date_split_heldout"]))
        print(_line("date split, tuning set", r["date_split_tuning"]))
        print(_line("leave-one-repo-out, all", r["loro_all"]))
        if "unseen_by_this_ref" in r:
            print(_line("post-split, unseen by it", r["unseen_by_this_ref"]))
        nr = r["date_split_no_rule"]
        print(
            f"  {'date split, no rule covers':28} n={nr['logs']:3}  said unknown "
            f"{nr['said_unknown']}, named a class {nr['named_a_class']} (learned "
            f"{nr['learned_claims']}), harmful {nr['harmful']}"
        )
    if clean:
        _print_clean(clean)
    base = reports[0]["date_split_heldout"]
    if base["top1"]:
        for r in reports[1:]:
            s = r["date_split_heldout"]
            print(
                f"\n{r['ref']} held-out top-1 vs {reports[0]['ref']}: {s['top1'] / base['top1']:.2f}x"
            )
    if TUNED_AFTER:
        print("\ntuned after seeing held-out results:")
        for t in TUNED_AFTER:
            print(f"  - {t}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
