"""remedy.results: the plain Symptom, SuspiciousLine, Hypothesis and Diagnosis a log-only
diagnosis makes have remedy.model's fields, defaults and order, and their JSON is the bytes
pydantic's model_dump_json writes for the same data (floats, None, escapes, non-ASCII, empty
containers, nesting, a pydantic Finding inside)."""

from __future__ import annotations

import random

import pytest

from remedy import model, results

NAMES = ("Symptom", "SuspiciousLine", "Hypothesis", "Diagnosis")


@pytest.mark.parametrize("name", NAMES)
def test_the_plain_classes_have_the_models_fields_and_defaults(name: str) -> None:
    plain, schema = getattr(results, name), getattr(model, name)
    assert tuple(schema.model_fields) == plain._FIELDS
    required = {k: f for k, f in schema.model_fields.items() if f.is_required()}
    args = {"signature": "s", "line": 1, "text": "t", "rule": "r", "message": "m", "score": 1}
    made = plain(**{k: args[k] for k in required})
    ref = schema(**{k: args[k] for k in required})
    assert made.model_dump() == ref.model_dump()
    assert made.model_dump_json(indent=2) == ref.model_dump_json(indent=2)


_TEXTS = ["", "plain", 'q"uote\\back', "tab\tnl\nret\r\x00\x1f\x7f", "café ✓ 𝔘 \u2028", "…"]
_FLOATS = [0.0, -0.0, 1.0, 0.1, 2 / 3, 1e-5, 1.5e-7, 1e16, 123456.789, float("inf"), float("nan")]


def _diagnosis(rnd: random.Random) -> results.Diagnosis:
    t = lambda: rnd.choice(_TEXTS)  # noqa: E731
    syms = [
        results.Symptom(
            signature=t(),
            line=rnd.randint(1, 10**9),
            text=t(),
            source=t(),
            fields={t(): t() for _ in range(rnd.randint(0, 3))},
            process=rnd.choice([None, t()]),
            stage=rnd.choice([None, "link"]),
            severity=rnd.choice(["error", "fatal", "warning"]),
        )
        for _ in range(rnd.randint(0, 3))
    ]
    hyps = [
        results.Hypothesis(
            rule=t(),
            message=t(),
            score=rnd.choice(_FLOATS + [3]),
            evidence=[rnd.randint(0, 9) for _ in range(rnd.randint(0, 3))],
            confirm_with=[t()],
            distinguishes_from={t(): t()},
            confidence=rnd.choice(_FLOATS),
            support_lines=rnd.randint(0, 5),
            matched_fields=[t()] * rnd.randint(0, 2),
            settle_with=rnd.choice([None, t()]),
            source=rnd.choice(["rules", "learned"]),
            probability=rnd.choice([None, *_FLOATS]),
        )
        for _ in range(rnd.randint(0, 3))
    ]
    sus = [
        results.SuspiciousLine(line=rnd.randint(1, 99), text=t(), score=rnd.choice(_FLOATS))
        for _ in range(rnd.randint(0, 2))
    ]
    finding = model.Finding(
        rule="r", message=t(), subject="s", source=model.Source(repo="a/b", path="p")
    )
    return results.Diagnosis(
        host=rnd.choice([None, t()]),
        symptoms=syms,
        findings=rnd.choice([[], [finding]]),
        advice=rnd.choice([[], [finding, finding]]),
        hypotheses=hyps,
        unexplained=[rnd.randint(0, 5) for _ in range(rnd.randint(0, 2))],
        suspicious=sus,
        partial_facts={t(): t() for _ in range(rnd.randint(0, 2))},
        collect_next=[t() for _ in range(rnd.randint(0, 2))],
        evaluation_errors=[t() for _ in range(rnd.randint(0, 1))],
    )


def test_the_json_is_what_pydantic_writes() -> None:
    rnd = random.Random(41)
    kinds = set()
    for _ in range(400):
        d = _diagnosis(rnd)
        ref = model.Diagnosis.model_validate(d, from_attributes=True)
        for indent in (2, None):
            assert d.model_dump_json(indent=indent) == ref.model_dump_json(indent=indent)
        kinds.add((bool(d.symptoms), bool(d.findings), bool(d.hypotheses)))
    assert len(kinds) == 8  # control: empty and full lists of each were compared


def test_floats_are_written_as_pydantic_writes_them() -> None:
    from pydantic_core import to_json

    rnd = random.Random(7)
    values = [rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 30) for _ in range(20000)]
    values += [float(rnd.randint(-(10**18), 10**18)) for _ in range(2000)]
    values += [0.0, -0.0, 1e-5, 1e-6, 1e15, 1e16, 5e-324, 1.7976931348623157e308]
    assert [results.json_float(v) for v in values] == [to_json(v).decode() for v in values]
    assert results.json_float(float("nan")) == "null"  # as model_dump_json (ser_json_inf_nan)


def test_a_plan_takes_the_plain_symptoms_and_hypotheses() -> None:
    s = results.Symptom(signature="x", line=3, text="t", fields={"a": "b"})
    h = results.Hypothesis(rule="r", message="m", score=0.5, source="learned")
    assert model.Symptom.model_validate(s).model_dump() == s.model_dump()
    assert model.Hypothesis.model_validate(h).model_dump() == h.model_dump()
    with pytest.raises(ValueError):
        results.Hypothesis(rule="r", message="m", score=0.5, source="other")


@pytest.mark.parametrize(
    "fields",
    [
        {
            "repo": "NVIDIA/cccl",
            "path": "libcudacxx/include/cuda/std/version",
            "function": "f",
            "ref": "v2.8.0",
        },
        {"repo": "NVIDIA/cccl", "path": "README.md"},
        {"repo": "NVIDIA/cccl"},
        {"doc": "https://docs.nvidia.com/cuda/", "thread": "a/b#1"},
        {"thread": "sgl-project/sglang#1", "note": "lab log"},
        {"note": "lab log"},
        {},
    ],
)
def test_both_sources_cite_alike(fields: dict) -> None:
    from remedy.evidence.plain import Source as PlainSource
    from remedy.model import Source

    plain = PlainSource(**fields)
    assert plain.short() == Source(**fields).short()
    want = f"{fields['repo']}:{fields['path']}" if fields.get("path") else None
    if want:
        assert plain.short().startswith(want)
    else:
        assert plain.short() == (
            fields.get("doc") or fields.get("thread") or fields.get("note") or "?"
        )
