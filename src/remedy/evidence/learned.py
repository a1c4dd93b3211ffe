"""A learned fallback for log-only diagnosis: which known class a log's wording resembles.

Why: rules and signatures match wording someone wrote down; a real log often says the same
thing in words no signature knows (held-out rounds 12/13: "unknown" on 44 of 122). A text
classifier trained on the corpus (tests/fixtures/corpus, one real log per row, class-null rows
as the label NONE so it can say "no known class") names the class the wording is closest to.

It is a hint, never a finding: a learned hypothesis is ranked below every rule hypothesis,
carries its probability and the fact that would settle it, and no repairs (plan and run never
act on it). The model is data: ``python -m remedy.evidence.learned --train`` regenerates
knowledge/learned/log-classes.json from the corpus (a test asserts the committed file equals a
regeneration). Pure Python (stdlib only), deterministic: multinomial naive Bayes over TF-IDF
features (tokens with digits and hex folded to N, sublinear tf, L2-normalised); a seeded-SGD
logistic regression is the other kind bench/learned_eval.py --select compares it with.

The claim gate (format 2): probability alone named a class on logs of causes no rule covers
whenever their wrapper's wording (a container hook's, a build tool's) was the wording all of a
class's rows share. The model file therefore also keeps, per class, its distinctive tokens
(is_distinctive: in enough of its rows, several times as often as in any other label's, and in
the rows of few labels), and a class is named only when the log has one of them
(bench/learned_eval.py --gate and --gate-generic, LORO).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from remedy.evidence.prefix import unwrap_line
from remedy.fileread import json_loads

FORMAT = "remedy-log-classes-2"  # 2: per-class distinctive tokens (the claim gate)
NONE = "(none)"  # the label of class-null corpus rows: the cause has no rule
ENV_MODEL = "REMEDY_LEARNED_MODEL"  # a model file to use instead of the knowledge's (bench)
# The committed model is consulted only when this is "1" (or ENV_MODEL names a model): on the
# first held-out round scored with it in the tree (round 14, bench/generalize.py CLEAN_ROUNDS)
# its hints were right on 0 of 5 logs (1 wrong class, 4 classes named for causes no rule
# covers), so by default an unmatched log stays "unknown".
ENV_HINTS = "REMEDY_LEARNED_HINTS"
MODEL_NAME = "learned/log-classes.json"
BOILERPLATE_NAME = "learned/boilerplate.yaml"

# bounds: a log read for the model is at most this many bytes (head + tail), tokens capped
MAX_BYTES = 32 * 1024
HEAD_BYTES = 4 * 1024
MAX_TOKENS = 6_000
MAX_TOKEN_LEN = 64

# the parameters the committed model is trained with: chosen by `bench/learned_eval.py
# --select` (grouped cross-validation and a frozen simulation of rounds 1-11, never a row of
# held-out rounds 12/13; bench/results/learned-select.txt)
PARAMS: dict[str, Any] = {
    "kind": "nb",
    "alpha": 0.1,
    "temperature": 1.0,
    "prior": 0.0,
    "min_df": 1,
    "bigrams": False,
    "prune": 0.01,
    "threshold": 0.3,
    # the claim gate (distinctive_tokens): a class is named only when the log has one of its
    # distinctive tokens (in >= gate_share of its rows, >= gate_ratio x as often as in any
    # other label's rows, the no-class label included), and nothing is named when the most
    # probable class has none; chosen by `bench/learned_eval.py --gate`
    # (leave-one-repository-out at HEAD, bench/results/learned-gate.txt)
    "gate_share": 0.1,
    "gate_ratio": 2.0,
    # no word of a tool's fixed text (knowledge/learned/boilerplate.yaml) and no bare version
    # shape ('n.n.n.postn') is distinctive: they say which tool printed the failure, or which
    # release, never the cause (tune-ai: pip's conflict text claimed python-requirements-hold
    # for a conflict of no rule, fzx-5)
    "gate_boilerplate": True,
    # words common to many labels are never distinctive (max_df by label): a token in the rows
    # of more than gate_max_labels labels (the no-class label counted) is wording every kind
    # of failure has ('traceback', 'torch', 'build', 'cmake'); and a class is compared as if
    # it had gate_pseudo_rows more rows without the token, so a class of one or two logs does
    # not own every word its logs happen to share (learned-gate, session 33: 'torch', in 21 of
    # 48 labels, was distinctive of a class of 2 rows and claimed the no-rule conflict fzx-5
    # again). A count, not a share of the labels: a share collapses on a corpus of few labels
    # (0.13 x 3 labels: no word at all). Chosen by `bench/learned_eval.py --gate-generic`
    # (leave-one-repository-out at HEAD, bench/results/learned-gate-session33.txt): at most 6
    # labels alone (7 and 8: 3 wrong more; 5: 25 right fewer) gives 1 right claim fewer for 3
    # wrong and 2 no-class claims fewer; with 5 pseudo-rows 2 right fewer for 5 wrong and 2
    # no-class fewer (utility: right - 2 x (wrong + no-class), both counts, 185 -> 203)
    "gate_max_labels": 6,
    "gate_pseudo_rows": 5,
    # used by kind "lr" only
    "C": 100.0,
    "epochs": 80,
    "lr": 0.5,
    "seed": 17,
}

_NUM = re.compile(r"0[xX][0-9a-fA-F]+|\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b|\d+")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{2,}")


def tokens(text: str, *, bigrams: bool = False) -> list[str]:
    """Lower-cased word tokens, digits and hex folded to N (versions and addresses vary, their
    shape does not); at most MAX_TOKENS, each at most MAX_TOKEN_LEN characters."""
    out: list[str] = []
    for m in _TOKEN.finditer(_NUM.sub("N", text)):
        out.append(m.group().lower()[:MAX_TOKEN_LEN].rstrip(".-+"))
        if len(out) >= MAX_TOKENS:
            break
    if bigrams:
        out += [f"{a} {b}" for a, b in zip(out, out[1:], strict=False)]
    return out


def class_doc_freq(
    docs: Sequence[list[str]], labels: Sequence[str]
) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """token -> {label: rows of that label with the token}, and label -> rows."""
    df: dict[str, dict[str, int]] = {}
    n: dict[str, int] = {}
    for toks, lab in zip(docs, labels, strict=True):
        n[lab] = n.get(lab, 0) + 1
        for t in set(toks):
            d = df.setdefault(t, {})
            d[lab] = d.get(lab, 0) + 1
    return df, n


def is_distinctive(
    by_label: dict[str, int],
    label: str,
    n: dict[str, int],
    share: float,
    ratio: float,
    max_labels: int | None = None,
    pseudo_rows: float = 0.0,
) -> bool:
    """Whether a token whose rows per label are ``by_label`` is distinctive of ``label``: in at
    least ``share`` of its rows and at least ``ratio`` times as often (as a share of rows, the
    label's counted with ``pseudo_rows`` more rows without the token) as in any other label's
    rows, NONE included (wording common to logs of causes with no rule, or to several classes,
    is the wrapper around a cause, not the cause); and, with ``max_labels``, in the rows of at
    most that many labels (a word of many kinds of failure is no kind's)."""
    k, rows = by_label.get(label, 0), n.get(label, 0)
    if k <= 0 or rows <= 0 or k < share * rows:
        return False
    if max_labels is not None and sum(1 for c in by_label.values() if c > 0) > max_labels:
        return False
    # k/(rows + pseudo_rows) >= ratio * c/n[lab], in products (no rounding at the boundary)
    return all(
        k * n[lab] >= ratio * c * (rows + pseudo_rows)
        for lab, c in by_label.items()
        if lab != label
    )


# a version and nothing else once digits are folded: 'n.n', 'n.n.n.postn', 'n.n.nrcn'
_VERSION_SHAPE = re.compile(r"n(?:\.n)+(?:\.?(?:post|dev|rc|a|b)n)?")


def boilerplate_tokens(path: str | os.PathLike[str] | None = None) -> frozenset[str]:
    """The tokens of the tools' fixed texts (knowledge/learned/boilerplate.yaml); a malformed
    file is a KnowledgeError naming file and line, as for every knowledge file."""
    from remedy.errors import KnowledgeError
    from remedy.knowledge.yamlload import line_of, load_yaml

    if path is None:
        from remedy.evidence.catalog import knowledge_dir

        path = knowledge_dir() / BOILERPLATE_NAME
    file = str(path)
    data = load_yaml(path)  # unreadable, not UTF-8, not YAML: KnowledgeError with file:line
    entries = data.get("boilerplate") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise KnowledgeError(
            "'boilerplate' must be a list of entries", file=file, line=line_of(data) or 1
        )
    out: set[str] = set()
    for entry in entries:
        texts = entry.get("texts") if isinstance(entry, dict) else None
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise KnowledgeError(
                "a boilerplate entry needs 'texts': a list of strings",
                file=file,
                line=line_of(entry, "texts") or line_of(entry) or line_of(data) or 1,
            )
        for text in texts:
            out.update(tokens(text))
    return frozenset(out)


def distinctive_tokens(
    docs: Sequence[list[str]],
    labels: Sequence[str],
    share: float,
    ratio: float,
    exclude: frozenset[str] = frozenset(),
    max_labels: int | None = None,
    pseudo_rows: float = 0.0,
) -> dict[str, list[str]]:
    """label -> its distinctive tokens (is_distinctive), sorted; NONE has none (it is never
    claimed). ``exclude``: tokens never distinctive (boilerplate_tokens); with it, a bare
    version shape is not either."""
    df, n = class_doc_freq(docs, labels)
    out: dict[str, list[str]] = {lab: [] for lab in sorted(n) if lab != NONE}
    for t in sorted(df):
        if exclude and (t in exclude or _VERSION_SHAPE.fullmatch(t)):
            continue
        for lab in df[t]:
            if lab != NONE and is_distinctive(df[t], lab, n, share, ratio, max_labels, pseudo_rows):
                out[lab].append(t)
    return out


def read_log_text(paths: Iterable[str | os.PathLike[str]], *, checked: bool = False) -> str:
    """The text the model reads from logs: each file whole up to MAX_BYTES, else its head and
    its tail (the fatal error is usually last), decoded leniently; unreadable files skipped.
    ``checked``: only the very files the scan checked under these names
    (remedy.evidence.reader.open_checked): diagnosis reads a log again after its scan, and
    its writer may have swapped the name for a link to a file only root can read."""
    parts: list[str] = []
    budget = MAX_BYTES
    for p in paths:
        if budget <= 0:
            break
        try:
            if checked:
                from remedy.evidence.reader import open_checked

                fd = open_checked(os.fspath(p))
                if fd is None:
                    continue
            else:
                fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
                if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device: not ours to drain
                    os.close(fd)
                    continue
            with os.fdopen(fd, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(0)
                if size <= budget:
                    data = f.read(budget)
                else:
                    head = f.read(min(HEAD_BYTES, budget // 2))
                    f.seek(max(size - (budget - len(head)), len(head)))
                    data = head + b"\n" + f.read(budget - len(head))
        except OSError:
            continue
        budget -= len(data)
        text = data.decode("utf-8", errors="replace").replace("\0", " ")
        first = text.split("\n", 1)[0]
        if unwrap_line(first) != first:  # a container's log: the lines the container wrote
            text = "\n".join(unwrap_line(x) for x in text.split("\n"))
        parts.append(text)
    return "\n".join(parts)


# --- features -------------------------------------------------------------------------------


class Vocab:
    """Token -> (index, idf) over the training documents, tokens in at least min_df of them.

    Plain classes here, not dataclasses: ``dataclasses`` (with inspect, ast, dis) was ~12 ms
    of every ``remedy diagnose --log`` start-up, the only module on that path importing it."""

    __slots__ = ("index", "idf")

    def __init__(self, index: dict[str, int], idf: list[float]) -> None:
        self.index = index
        self.idf = idf

    @classmethod
    def fit(cls, docs: Sequence[list[str]], min_df: int) -> Vocab:
        df: dict[str, int] = {}
        for toks in docs:
            for t in set(toks):
                df[t] = df.get(t, 0) + 1
        kept = sorted(t for t, n in df.items() if n >= min_df)
        n = len(docs)
        return cls(
            index={t: i for i, t in enumerate(kept)},
            idf=[math.log((1 + n) / (1 + df[t])) + 1.0 for t in kept],
        )

    def vector(self, toks: list[str]) -> dict[int, float]:
        """Sublinear tf x idf, L2-normalised (a long log weighs no more than a short one)."""
        tf: dict[int, int] = {}
        for t in toks:
            i = self.index.get(t)
            if i is not None:
                tf[i] = tf.get(i, 0) + 1
        v = {i: (1.0 + math.log(c)) * self.idf[i] for i, c in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {i: x / norm for i, x in sorted(v.items())}


# --- the model ------------------------------------------------------------------------------


class Model:
    """Softmax over per-class scores: score_c = bias_c + mass_c * sum(x) + sum_i w_ci x_i,
    times ``temperature``; x is the log's TF-IDF vector. Logistic regression: mass 0; naive
    Bayes: w = log(1 + count/alpha), mass = log(alpha / (total_c + alpha V)), bias the prior."""

    def __init__(
        self,
        classes: list[str],
        vocab: Vocab,
        weights: dict[int, list[tuple[int, float]]],  # feature -> [(class, weight)], pruned
        bias: list[float],
        mass: list[float],
        temperature: float = 1.0,
        params: dict[str, Any] | None = None,
        header: dict[str, Any] | None = None,
        # class -> its distinctive tokens (the claim gate); None: no gate (a model trained so)
        distinctive: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self.classes = classes
        self.vocab = vocab
        self.weights = weights
        self.bias = bias
        self.mass = mass
        self.temperature = temperature
        self.params: dict[str, Any] = {} if params is None else params
        self.header: dict[str, Any] = {} if header is None else header
        self.distinctive = distinctive

    def probabilities(self, text: str) -> dict[str, float]:
        return self.proba_tokens(self.tokens(text))

    def tokens(self, text: str) -> list[str]:
        return tokens(text, bigrams=bool(self.params.get("bigrams")))

    def supported(self, label: str, toks: Iterable[str]) -> bool:
        """Whether the log (its tokens) has a word distinctive of ``label`` (always, with no
        gate)."""
        if self.distinctive is None:
            return True
        mine = self.distinctive.get(label)
        return bool(mine) and not mine.isdisjoint(toks)

    def proba_tokens(self, toks: list[str]) -> dict[str, float]:
        x = self.vocab.vector(toks)
        total = sum(x.values())
        s = [b + m * total for b, m in zip(self.bias, self.mass, strict=False)]
        for i, v in x.items():
            for c, w in self.weights.get(i, ()):
                s[c] += w * v
        s = [v * self.temperature for v in s]
        top = max(s)
        e = [math.exp(v - top) for v in s]
        z = sum(e)
        return {c: e[k] / z for k, c in enumerate(self.classes)}

    def to_json(self) -> dict[str, Any]:
        feats = sorted(self.vocab.index, key=self.vocab.index.__getitem__)
        used = [t for t in feats if self.weights.get(self.vocab.index[t])]
        return {
            "format": FORMAT,
            **self.header,
            "params": self.params,
            "classes": self.classes,
            "temperature": _r(self.temperature),
            "bias": [_r(b) for b in self.bias],
            "mass": [_r(m) for m in self.mass],
            # token: [idf, [[class, weight], ...]] (tokens with no weight left out)
            "features": {
                t: [
                    _r(self.vocab.idf[self.vocab.index[t]]),
                    [[c, _r(w)] for c, w in self.weights[self.vocab.index[t]]],
                ]
                for t in used
            },
            # class: its distinctive tokens (is_distinctive; the claim gate); null: no gate
            "distinctive": None
            if self.distinctive is None
            else {c: sorted(v) for c, v in sorted(self.distinctive.items())},
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Model:
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model")
        feats = d["features"]
        if not isinstance(feats, dict):
            raise ValueError("features is not a mapping")
        # the parsed lists are used as they are (loading is on diagnose's start-up path)
        index = dict(zip(feats, range(len(feats)), strict=True))
        vals = list(feats.values())
        vocab = Vocab(index=index, idf=[v[0] for v in vals])
        weights = dict(zip(range(len(vals)), [v[1] for v in vals], strict=True))
        header = {k: d[k] for k in HEADER_KEYS if k in d}
        classes = list(d["classes"])
        if "distinctive" not in d:  # a gate left out would silently name classes ungated
            raise ValueError("no distinctive tokens (null for a model without the gate)")
        gate = d["distinctive"]
        params = d.get("params") or {}
        if not isinstance(params, dict):
            raise ValueError("params is not a mapping")
        if gate is None and params.get("gate_share") is not None:
            raise ValueError("the model was trained with a gate but has no distinctive tokens")
        distinctive = None
        if gate is not None:
            if not isinstance(gate, dict) or not set(gate) <= set(classes):
                raise ValueError("distinctive is not a mapping of the model's classes")
            if not all(
                isinstance(v, list) and all(isinstance(t, str) for t in v) for v in gate.values()
            ):
                raise ValueError("distinctive tokens are not lists of words")
            distinctive = {c: frozenset(v) for c, v in gate.items()}
        return cls(
            classes=classes,
            vocab=vocab,
            weights=weights,
            bias=[float(b) for b in d["bias"]],
            mass=[float(m) for m in d["mass"]],
            temperature=float(d.get("temperature", 1.0)),
            params=dict(params),
            header=header,
            distinctive=distinctive,
        )


HEADER_KEYS = ("generated_by", "corpus_digest", "trained_rows", "note")


def _r(x: float) -> float:
    return float(f"{x:.4g}")


def train(
    texts: Sequence[str],
    labels: Sequence[str],
    params: dict[str, Any] | None = None,
    *,
    tokenized: Sequence[list[str]] | None = None,
) -> Model:
    """The model of ``params["kind"]`` ("nb" or "lr") over these documents (``tokenized``:
    their tokens(), when the caller trains many models on the same texts)."""
    p = {**PARAMS, **(params or {})}
    toks = tokenized or [tokens(t, bigrams=bool(p["bigrams"])) for t in texts]
    vocab = Vocab.fit(toks, int(p["min_df"]))
    X = [list(vocab.vector(t).items()) for t in toks]
    classes = sorted(set(labels))
    y = [classes.index(lab) for lab in labels]
    m = (_train_nb if p["kind"] == "nb" else _train_lr)(X, y, classes, vocab, p)
    if p.get("gate_share") is not None:
        skip = boilerplate_tokens() if p.get("gate_boilerplate") else frozenset()
        most = p.get("gate_max_labels")
        gate = distinctive_tokens(
            toks,
            labels,
            float(p["gate_share"]),
            float(p["gate_ratio"]),
            skip,
            None if most is None else int(most),
            float(p.get("gate_pseudo_rows") or 0.0),
        )
        m.distinctive = {c: frozenset(v) for c, v in gate.items()}
    return m


def _train_nb(
    X: list[list[tuple[int, float]]],
    y: list[int],
    classes: list[str],
    vocab: Vocab,
    p: dict[str, Any],
) -> Model:
    """Multinomial naive Bayes over TF-IDF mass (closed form: counting)."""
    k, V, alpha = len(classes), len(vocab.idf), float(p["alpha"])
    cnt: list[dict[int, float]] = [{} for _ in classes]
    tot = [0.0] * k
    docs = [0] * k
    for x, c in zip(X, y, strict=False):
        docs[c] += 1
        for i, v in x:
            cnt[c][i] = cnt[c].get(i, 0.0) + v
            tot[c] += v
    eps = float(p["prune"])
    weights: dict[int, list[tuple[int, float]]] = {}
    for c in range(k):
        for i, n in sorted(cnt[c].items()):
            w = math.log(1.0 + n / alpha)
            if w >= eps:
                weights.setdefault(i, []).append((c, w))
    n = len(X)
    prior = float(p.get("prior", 0.0))  # 0: uniform (the corpus's class sizes are not the field's)
    bias = [prior * math.log(docs[c] / n) for c in range(k)]
    mass = [math.log(alpha / (tot[c] + alpha * V)) for c in range(k)]
    return Model(
        classes, vocab, dict(sorted(weights.items())), bias, mass, float(p["temperature"]), params=p
    )


def _train_lr(
    X: list[list[tuple[int, float]]],
    y: list[int],
    classes: list[str],
    vocab: Vocab,
    p: dict[str, Any],
) -> Model:
    """Multinomial logistic regression by SGD (seeded shuffles, L2 = 1/(C n), step
    lr/(1+t/n)). Deterministic: the only randomness is ``random.Random(seed)``."""
    import random

    k, n = len(classes), len(X)
    W = [[0.0] * k for _ in vocab.idf]
    b = [0.0] * k
    lam = 1.0 / (float(p["C"]) * max(n, 1))
    scale = 1.0  # W_true = scale * W (lazy L2 shrinkage)
    rng = random.Random(int(p["seed"]))
    order = list(range(n))
    step = 0
    for _ in range(int(p["epochs"])):
        rng.shuffle(order)
        for d in order:
            lr = float(p["lr"]) / (1.0 + step / max(n, 1))
            step += 1
            x = X[d]
            s = list(b)
            for i, v in x:
                wi = W[i]
                for c in range(k):
                    s[c] += scale * wi[c] * v
            top = max(s)
            e = [math.exp(v - top) for v in s]
            z = sum(e)
            g = [ev / z for ev in e]
            g[y[d]] -= 1.0
            scale *= 1.0 - lr * lam
            if scale < 1e-6:
                for wi in W:
                    for c in range(k):
                        wi[c] *= scale
                scale = 1.0
            for c in range(k):
                b[c] -= lr * g[c]
            f = lr / scale
            for i, v in x:
                wi = W[i]
                for c in range(k):
                    wi[c] -= f * g[c] * v
    eps = float(p["prune"])
    weights: dict[int, list[tuple[int, float]]] = {}
    for i, wi in enumerate(W):
        kept = [(c, scale * w) for c, w in enumerate(wi) if abs(scale * w) >= eps]
        if kept:
            weights[i] = kept
    return Model(classes, vocab, weights, b, [0.0] * k, 1.0, params=p)


# --- the committed model: training from the corpus, loading ----------------------------------


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def corpus_rows(corpus: Path) -> list[dict[str, Any]]:
    """The corpus's rows with their text and label (class, or NONE for class null)."""
    import yaml

    rows = yaml.safe_load((corpus / "index.yaml").read_text())["logs"]
    for r in rows:
        r["text"] = (corpus / r["file"]).read_bytes().decode("utf-8", errors="replace")
        r["label"] = r.get("class") or NONE
        r["repo"] = str(r["thread"]).split("#")[0]
    return rows


def corpus_digest(corpus: Path) -> str:
    """sha256 over the index and every log it names (names and bytes, sorted)."""
    import hashlib

    import yaml

    h = hashlib.sha256()
    idx = (corpus / "index.yaml").read_bytes()
    h.update(b"index.yaml\0" + idx + b"\0")
    for f in sorted(r["file"] for r in yaml.safe_load(idx)["logs"]):
        h.update(f.encode() + b"\0" + (corpus / f).read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def train_rows(rows: Sequence[dict[str, Any]], params: dict[str, Any] | None = None) -> Model:
    return train([r["text"] for r in rows], [r["label"] for r in rows], params)


def model_json(corpus: Path) -> str:
    """The committed model file's text, regenerated from the corpus (byte-stable)."""
    rows = corpus_rows(corpus)
    m = train_rows(rows)
    m.header = {
        "generated_by": "python -m remedy.evidence.learned --train (do not edit)",
        "corpus_digest": corpus_digest(corpus),
        "trained_rows": len(rows),
    }
    return json.dumps(m.to_json(), sort_keys=False, separators=(",", ":")) + "\n"


def default_model_path() -> Path:
    from remedy.evidence.catalog import knowledge_dir

    return knowledge_dir() / MODEL_NAME


_LOADED: dict[str, Model | None] = {}


def load_model(path: str | os.PathLike[str] | None = None) -> Model | None:
    """The model at ``path`` ($REMEDY_LEARNED_MODEL, else the knowledge's when
    $REMEDY_LEARNED_HINTS=1), read once; None when hints are off, or there is no model, or it
    is damaged (diagnosis then stays rules-only, never fails)."""
    if path is None and not os.environ.get(ENV_MODEL) and os.environ.get(ENV_HINTS) != "1":
        return None  # opt-in (ENV_HINTS): see there why
    p = str(path or os.environ.get(ENV_MODEL) or default_model_path())
    if path is None and os.environ.get(ENV_MODEL):
        from remedy.fileread import untrusted_tree

        if untrusted_tree(p):  # another user's weights would choose root's hints
            return None
    if p not in _LOADED:
        try:
            with open(p, "rb") as f:
                _LOADED[p] = Model.from_json(json_loads(f.read(16 << 20)))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            _LOADED[p] = None
    return _LOADED[p]


def ranked(probs: dict[str, float], threshold: float) -> list[tuple[str, float]]:
    """The known classes at or above ``threshold``, most probable first; none when NONE is the
    most probable (the model says the wording is of a cause with no rule)."""
    out = sorted(
        ((c, p) for c, p in probs.items() if p >= threshold), key=lambda cp: (-cp[1], cp[0])
    )
    if out[:1] and out[0][0] == NONE:
        return []
    return [(c, p) for c, p in out if c != NONE][:3]


def learned_classes(text: str, model: Model | None = None) -> list[tuple[str, float]]:
    """(class, probability) the fallback names for this log text, or [] (no model, or below
    the model's threshold, or NONE first); a class only where the log has a word distinctive
    of it (Model.supported: the words all of a class's rows share, a tool's wrapper text, are
    no evidence of the cause)."""
    m = model or load_model()
    if m is None or not text:
        return []
    try:
        toks = m.tokens(text)
        got = ranked(m.proba_tokens(toks), float(m.params.get("threshold", PARAMS["threshold"])))
        present = set(toks)
        if got[:1] and not m.supported(got[0][0], present):
            return []  # the closest class's own words are absent: its wrapper's text is not it
        return [(c, p) for c, p in got if m.supported(c, present)]
    except (TypeError, ValueError, IndexError, KeyError, OverflowError):
        return []  # a damaged model file: diagnosis stays rules-only


def check_model(rule_ids: set[str], path: str | os.PathLike[str] | None = None) -> str:
    """`remedy check`'s line about the model; KnowledgeError when the file exists but cannot be
    used (diagnosis would silently stay rules-only) or names a class that is not a rule."""
    from remedy.errors import KnowledgeError

    p = Path(path or default_model_path())
    if not p.exists():
        return "learned fallback: no model (log-only diagnosis is rules only)"
    fix = "regenerate it: python -m remedy.evidence.learned --train"
    try:
        m = Model.from_json(json_loads(p.read_bytes()[: 16 << 20]))
        m.probabilities("nvcc fatal")  # the weights are usable, not only the header
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise KnowledgeError(f"not a usable model ({exc})", file=str(p), hint=fix) from None
    stray = sorted(set(m.classes) - rule_ids - {NONE})
    if stray:
        raise KnowledgeError(
            f"the model names classes that are no rule: {', '.join(stray[:5])}",
            file=str(p),
            hint=fix,
        )
    return (
        f"learned fallback: {len(m.classes) - 1} classes, {len(m.vocab.idf)} features, "
        + (
            "no claim gate"
            if m.distinctive is None
            else f"{sum(1 for v in m.distinctive.values() if v)} classes with distinctive words"
        )
        + f", trained on {m.header.get('trained_rows', '?')} corpus rows: OK"
        + ("" if os.environ.get(ENV_HINTS) == "1" else f" (hints off; {ENV_HINTS}=1 turns them on)")
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m remedy.evidence.learned",
        description="Regenerate knowledge/learned/log-classes.json from the corpus.",
    )
    ap.add_argument("--train", action="store_true", help="write the model file")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    ap.add_argument("--corpus", default=str(repo_root() / "tests" / "fixtures" / "corpus"))
    ap.add_argument("--out", default=str(repo_root() / "knowledge" / MODEL_NAME))
    args = ap.parse_args(argv)
    from remedy.errors import KnowledgeError

    try:
        text = model_json(Path(args.corpus))
    except KnowledgeError as exc:  # a malformed knowledge file: its file:line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    out = Path(args.out)
    if args.check:
        same = out.is_file() and out.read_text() == text
        print(
            "up to date"
            if same
            else f"{out} is stale: run python -m remedy.evidence.learned --train"
        )
        return 0 if same else 1
    if args.train:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out} ({len(text)} bytes)")
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
