"""Compare a scenario's expected facts (sandbox/scenarios/*/scenario.yaml, `expected.facts`) with
facts collected from the host (a `remedy.model.Facts`, or its `model_dump()` dict).

Semantics (partial match: only what the scenario states is checked):
  * dict: every key given must match; a key whose expected value is None must be absent or None
    in the actual dict (e.g. `nvidia-cuda-cccl: null` = "not installed", `CUDA_HOME: null` = unset);
  * list of dicts: each expected item is matched with the actual item of the same identity key
    (toolkits: prefix, pythons: path, services: name, gpus: index) and compared recursively;
  * list of scalars: equal as sets (order-free); an empty list also accepts an absent key;
  * scalars: compared as strings ("12.0" == 12.0 is not an issue in YAML that quotes versions).
Usage:
    from expect import compare            # sys.path.insert(0, "sandbox/lib")
    problems = compare(scenario["expected"]["facts"], facts.model_dump())
    assert not problems, "\\n".join(problems)
"""

from __future__ import annotations

from typing import Any

IDENTITY = {"toolkits": "prefix", "pythons": "path", "services": "name", "gpus": "index"}


def compare(expected: Any, actual: Any, path: str = "facts") -> list[str]:
    if hasattr(actual, "model_dump"):
        actual = actual.model_dump()
    problems: list[str] = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected a mapping, got {actual!r}"]
        for k, v in expected.items():
            sub = f"{path}.{k}"
            if v is None:
                if actual.get(k) is not None:
                    problems.append(f"{sub}: expected absent, got {actual.get(k)!r}")
            elif isinstance(v, list) and not v:
                if actual.get(k):
                    problems.append(f"{sub}: expected empty or absent, got {actual.get(k)!r}")
            elif k not in actual:
                problems.append(f"{sub}: missing (expected {v!r})")
            else:
                problems += compare(v, actual[k], sub)
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {actual!r}"]
        if expected and all(isinstance(e, dict) for e in expected):
            key = IDENTITY.get(path.rsplit(".", 1)[-1])
            for i, e in enumerate(expected):
                if key and key in e:
                    match = [
                        a for a in actual if isinstance(a, dict) and str(a.get(key)) == str(e[key])
                    ]
                    if not match:
                        problems.append(f"{path}[{key}={e[key]}]: missing")
                        continue
                    problems += compare(e, match[0], f"{path}[{key}={e[key]}]")
                elif i < len(actual):
                    problems += compare(e, actual[i], f"{path}[{i}]")
                else:
                    problems.append(f"{path}[{i}]: missing")
            return problems
        if {str(x) for x in expected} != {str(x) for x in actual}:
            problems.append(
                f"{path}: expected {sorted(map(str, expected))}, got {sorted(map(str, actual))}"
            )
        return problems
    if str(expected) != str(actual):
        problems.append(f"{path}: expected {expected!r}, got {actual!r}")
    return problems
