"""Pure parsers for raw command output. Each one is tolerant: garbage gives None or {}.

They are shared by the collectors and tested on recorded real output
(tests/fixtures/facts/<collector>/*.json).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_RELEASE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_BUILD = re.compile(r"^Build (\S+)", re.M)


@dataclass(frozen=True)
class ToolVersion:
    """What `nvcc --version` / `ptxas --version` say: release 13.2, V13.2.78, build string."""

    release: str | None = None
    version: str | None = None
    build: str | None = None


def parse_tool_version(text: str) -> ToolVersion:
    """Parse an NVIDIA compiler banner (`Cuda compilation tools, release 13.2, V13.2.78`)."""
    m = _RELEASE.search(text or "")
    b = _BUILD.search(text or "")
    if not m:
        # a stand-in may print only "release 12.8," (FlashInfer reads `release (\d+\.\d+),`)
        r = re.search(r"release (\d+\.\d+),", text or "")
        return ToolVersion(release=r.group(1) if r else None, build=b.group(1) if b else None)
    return ToolVersion(release=m.group(1), version=m.group(2), build=b.group(1) if b else None)


_CICC = re.compile(r"cuda_(\d+)\.(\d+)\.r[0-9.]+/compiler\.\d+")


def parse_cicc_build(text: str) -> str | None:
    """The build string grep'ed out of nvvm/bin/cicc (it has no --version)."""
    m = _CICC.search(text or "")
    return m.group(0) if m else None


def cicc_release(build: str | None) -> str | None:
    """`cuda_13.2.r13.2/compiler.37668154` -> `13.2`."""
    m = _CICC.search(build or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def parse_cudart_version(text: str) -> int | None:
    """`#define CUDART_VERSION  13000` -> 13000."""
    m = re.search(r"^\s*#\s*define\s+CUDART_VERSION\s+(\d+)", text or "", re.M)
    return int(m.group(1)) if m else None


def parse_nvcc_profile_libdir(text: str, target_dir: str | None) -> str | None:
    """The non-stub `-L$(TOP)/...` dir of nvcc.profile, resolved relative to the prefix.

    nvcc sets _TARGET_DIR_ to targets/<arch>-linux and _TARGET_SIZE_ to "" when that dir
    exists, else "" and "64" (seen with `nvcc --dryrun`): the 13.0.88 wheel's profile thus
    means lib64, which no cu13 wheel creates.
    """
    line = next((ln for ln in (text or "").splitlines() if ln.startswith("LIBRARIES")), None)
    if line is None:
        return None
    dirs = re.findall(r'-L\$\(TOP\)/([^"\s]*)', line)
    dirs = [d for d in dirs if not d.rstrip("/").endswith("stubs")] or dirs
    if not dirs:
        return None
    d = dirs[-1]
    tdir, tsize = (target_dir, "") if target_dir else ("", "64")
    d = d.replace("$(_TARGET_DIR_)", tdir).replace("$(_TARGET_SIZE_)", tsize)
    d = re.sub(r"/+", "/", d).strip("/")
    return d or "."


def normalize_name(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def parse_metadata_grep(text: str) -> dict[str, tuple[str, str]]:
    """`grep -m2 -H -E '^(Name|Version): ' */METADATA` -> {metadata file: (name, version)}."""
    return dict(_metadata_grep(text or ""))


_META_LINE = re.compile(r"^(.*?):(Name|Version): (.*)$")


# A fleet's hosts built from one image answer with the same text (a venv's ~200 dist-infos):
# parsed once, by its text (issue 18: the controller's CPU per host).
@functools.lru_cache(maxsize=512)
def _metadata_grep(text: str) -> tuple[tuple[str, tuple[str, str]], ...]:
    found: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = _META_LINE.match(line)
        if not m:
            continue
        path, key, value = m.groups()
        found.setdefault(path, {})[key] = value.strip()
    return tuple(
        (path, (kv["Name"], kv["Version"]))
        for path, kv in found.items()
        if "Name" in kv and "Version" in kv
    )


def packages_from_metadata(text: str) -> dict[str, str]:
    """{normalised name: version} from a metadata grep (first one wins on duplicates)."""
    out: dict[str, str] = {}
    for name, version in parse_metadata_grep(text).values():
        out.setdefault(normalize_name(name), version)
    return out


def parse_torch_version_py(text: str) -> tuple[str | None, str | None]:
    """torch/version.py -> (__version__, cuda). `cuda: Optional[str] = '13.0'` or None."""

    def get(key: str) -> str | None:
        m = re.search(rf"^{key}\s*(?::[^=]*)?=\s*(.+)$", text or "", re.M)
        if not m:
            return None
        v = m.group(1).strip()
        q = re.match(r"""^(['"])(.*)\1""", v)
        return q.group(2) if q else None

    return get("__version__"), get("cuda")


def parse_key_values(text: str) -> dict[str, str]:
    """`key=value` lines (first `=` splits); other lines ignored."""
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        k, sep, v = line.partition("=")
        if sep and k and " " not in k.strip():
            out[k.strip()] = v
    return out


def parse_pyvenv_cfg(text: str) -> dict[str, str]:
    """pyvenv.cfg `key = value` lines."""
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k.strip().lower()] = v.strip()
    return out


def parse_os_release(text: str) -> str | None:
    """/etc/os-release -> PRETTY_NAME (or NAME VERSION_ID)."""
    kv: dict[str, str] = {}
    for line in (text or "").splitlines():
        k, sep, v = line.partition("=")
        if sep:
            kv[k.strip()] = v.strip().strip('"').strip("'")
    if kv.get("PRETTY_NAME"):
        return kv["PRETTY_NAME"]
    name = " ".join(x for x in (kv.get("NAME"), kv.get("VERSION_ID")) if x)
    return name or None


def parse_meminfo_mib(text: str) -> int | None:
    m = re.search(r"MemTotal:\s+(\d+)\s*kB", text or "")
    return int(m.group(1)) // 1024 if m else None


def parse_int(text: str) -> int | None:
    m = re.search(r"\d+", text or "")
    return int(m.group(0)) if m else None
