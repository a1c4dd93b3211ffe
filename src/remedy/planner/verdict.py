"""What a plan claims about the log it was made from: which fatal line each step addresses, and
which fatal lines no finding explains.

A plan that repairs real defects of a host but not the one that stopped the build must say so
at its top, in its JSON and in its status: applying it will not make the failure go away.
"""

from __future__ import annotations

import re

from remedy.knowledge.providers import missing_file, safe_name
from remedy.model import FailedOperation, Finding, Plan, Symptom

# the one rule about missing files (knowledge/rules-providers.yaml)
FILE_RULE = "needed-files-provided"
# the fields a signature extracts that name a missing file, and how to read them
FILE_FIELDS = {"missing_header": "header", "missing_lib": "lib", "shared_lib": "so"}


def fatal_indexes(symptoms: list[Symptom]) -> list[int]:
    return [i for i, s in enumerate(symptoms) if s.severity == "fatal"]


# "nvcc: error while loading shared libraries: libnvvm.so.4": a CUDA toolkit binary finds its
# own libraries relative to its own prefix (nvcc.profile, RPATH $ORIGIN), so no package installed
# into a Python env can supply them: the toolkit that was picked is broken or the wrong one.
_TOOLKIT_BINARY_LOAD = re.compile(
    r"(?:^|[\s/])(?:nvcc|ptxas|cicc|nvlink|fatbinary|cudafe\+\+|nvdisasm|cuobjdump|nvcc\.real)"
    r":\s*error while loading shared libraries"
)


def missing_files(symptoms: list[Symptom]) -> list[str]:
    """Files the failing operation could not find, from its fatal lines (validated names); a
    toolkit binary's own libraries are not among them (see _TOOLKIT_BINARY_LOAD)."""
    out: list[str] = []
    for i in fatal_indexes(symptoms):
        if _TOOLKIT_BINARY_LOAD.search(symptoms[i].text):
            continue
        for fld, kind in FILE_FIELDS.items():
            v = symptoms[i].fields.get(fld)
            f = missing_file(kind, v) if v else None
            if f and f not in out:
                out.append(f)
    return out


def _named_file(s: Symptom) -> str | None:
    for fld in FILE_FIELDS:
        if s.fields.get(fld):
            return s.fields[fld]
    return None


def explains(f: Finding, i: int, s: Symptom) -> bool:
    """A finding explains a fatal line when it predicts the line's signature and, for a line
    that names a missing file, the finding is about that file (names it): "cannot find
    -lcudart" is the link layout's, "cutlass/cutlass.h: No such file" is not."""
    name = _named_file(s)
    names_it = bool(name) and name in (f.message or "")
    if i not in f.explains and not (f.rule == FILE_RULE and names_it):
        return False
    if not name:
        return True
    base = name[3:] if name.startswith("lib") else name
    return name in f.message or f"lib{base}" in f.message or f"-l{name}" in f.message


def line_ref(s: Symptom) -> str:
    return f"{s.source}:{s.line}: {s.text[:300]}"


def attribute(plan: Plan) -> None:
    """Fill each step's `addresses` and the plan's `unexplained` fatal lines; a plan with
    steps or nothing to do whose log has an unexplained fatal line gets status 'unexplained'."""
    fatal = fatal_indexes(plan.symptoms)
    explained: set[int] = set()
    for step in plan.steps:
        step.addresses = []
    for f in plan.findings:
        mine = [i for i in fatal if explains(f, i, plan.symptoms[i])]
        explained.update(mine)
        for step in plan.steps:
            if f.rule in step.fixes:
                for i in mine:
                    ref = line_ref(plan.symptoms[i])
                    if ref not in step.addresses:
                        step.addresses.append(ref)
    plan.unexplained = [line_ref(plan.symptoms[i]) for i in fatal if i not in explained]
    plan.failed_operation = failed_operation(plan.symptoms)
    if plan.unexplained and plan.status in ("ok", "nothing-to-do"):
        plan.status = "unexplained"


# signature -> the consumer whose build failed, most specific first
CONSUMER_OF = [
    ("torch-extension-build-failed", "torch-cpp-extension"),
    ("traceback-sglang-load-jit", "sglang-jit-kernel"),
    ("traceback-flashinfer-jit", "flashinfer-jit"),
    # Triton's own compile stages (knowledge/signatures.yaml): LLVM's PTX ISA check, its ptxas
    ("triton-ptx-version-below-target", "triton"),
    ("triton-ptxas-failed", "triton"),
    ("triton-llvm-unknown-processor", "triton"),
]
BUILD_PROBE = {
    "torch-cpp-extension": "torch-ext-build",
    "sglang-jit-kernel": "sglang-jit-build",
    "flashinfer-jit": "flashinfer-jit-build",
    "triton": "triton-compile",
}
# FlashInfer JIT module names in a failing build's paths -> fi_build.py's module argument
FI_MODULES = {"quantization": "quant", "norm": "norm", "silu_and_mul": "act", "act_and_mul": "act"}
_FI_MODULE = re.compile(r"(?:cached_ops|generated)/(quantization|norm|silu_and_mul|act_and_mul)\b")
_INCLUDE_ROOT = re.compile(r"/include/(?:cccl/)?(?P<rel>[^/].*)$")


def _header_of(s: Symptom) -> str | None:
    """The header whose #include failed, as the failing unit reached it: the including header
    relative to its include root when a header included it (torch/include/c10/cuda/
    driver_api.h -> c10/cuda/driver_api.h), else the missing header itself."""
    inc = s.fields.get("includer") or ""
    m = _INCLUDE_ROOT.search(inc)
    if m and safe_name(m.group("rel")):
        return m.group("rel")
    return safe_name(s.fields.get("missing_header"))


def failed_operation(symptoms: list[Symptom]) -> FailedOperation | None:
    """The build the log came from, rebuilt from its failing command's consumer and fatal
    lines; None when the log does not say which consumer's build failed."""
    fatal = fatal_indexes(symptoms)
    if not fatal:
        return None
    sigs = {s.signature for s in symptoms}
    consumer = next((c for sig, c in CONSUMER_OF if sig in sigs), None)
    if consumer is None:
        return None
    params: dict[str, list[str]] = {}
    lines: list[str] = []
    if consumer == "torch-cpp-extension":
        headers: list[str] = []
        for i in fatal:
            h = _header_of(symptoms[i]) if symptoms[i].fields.get("missing_header") else None
            if h and h not in headers:
                headers.append(h)
                lines.append(line_ref(symptoms[i]))
        if headers:
            params["headers"] = headers
    if consumer == "flashinfer-jit":
        # the module whose build failed, among those probes/scripts/fi_build.py can build
        for s in symptoms:
            m = _FI_MODULE.search(s.text)
            if m:
                params["module"] = FI_MODULES[m.group(1)]
                lines.append(line_ref(s))
                break
    wrapper = next(s for s in symptoms if any(s.signature == sig for sig, _ in CONSUMER_OF))
    return FailedOperation(
        consumer=consumer,
        probe=BUILD_PROBE[consumer],
        params=params,
        first_error=line_ref(symptoms[fatal[0]]),
        from_lines=[line_ref(wrapper), *lines],
    )
