#!/usr/bin/env python3
"""Generate knowledge/providers.yaml: which package provides a CUDA header or library, per
toolkit line, read from the REAL package file lists.

Why generated: "fatal error: nvml.h: No such file", "cannot find -lcublas" and
"libnvrtc.so.13: cannot open shared object file" are solved by knowing which pip wheel or apt
package ships that file for the toolkit torch pins. Hand-written lists rot; this script reads
the packages themselves:

* pip: for each toolkit line, the `cuda-toolkit` metapackage's Requires-Dist (extra "all")
  names every nvidia-* wheel at its exact version (the pin torch's `cuda-toolkit[...]==X`
  requirement resolves to). Each wheel's file list is its zip central directory, read with
  HTTP Range requests from files.pythonhosted.org (a few KB per wheel, not the GBs of the
  wheels), or from a local wheel when one is in --wheels (the sandbox cache).
* apt: Debian bookworm's Contents-amd64 indexes (main, contrib, non-free) for the packages
  that ship CUDA headers/libraries (nvidia-cuda-dev, libnvidia-ml-dev, libcuda1, ...) and
  Python.h (libpythonX.Y-dev). NVIDIA's own apt repository (developer.download.nvidia.com) is
  not reachable from where this was generated; its cuda-*-X-Y packages are not covered.

Usage: python3 scripts/gen_provider_table.py [--wheels DIR] [--out knowledge/providers.yaml]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import struct
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

# toolkit line -> the cuda-toolkit metapackage version whose pins define it (torch 2.14.1+cu130
# pins cuda-toolkit==13.0.3; 12.8/12.9 are the lines torch's cu128/cu129 builds use)
LINES = {"12.8": "12.8.1", "12.9": "12.9.1", "13.0": "13.0.3", "13.2": "13.2.1"}
DEBIAN = "http://deb.debian.org/debian/dists/bookworm/{comp}/Contents-amd64.gz"
DEBIAN_COMPONENTS = ("main", "contrib", "non-free")
# Debian packages whose headers/libraries this table covers (the rest of Debian is noise here)
DEBIAN_PACKAGES = re.compile(
    r"^(nvidia-cuda-dev|nvidia-cuda-toolkit|libnvidia-ml-dev|libcuda1|libcudart\d+|"
    r"libcublas\d+|libcublaslt\d+|libcurand\d+|libcusparse\d+|libcusolver\d+|libcufft\d+|"
    r"libnvrtc\d+|libnvidia-compute-\d+|libnvjitlink\d+|libnvtoolsext\d+|"
    r"libpython3\.\d+-dev|python3\.\d+-dev|nvidia-cuda-gdb|libthrust-dev|libcub-dev|"
    r"libnvidia-ptxjitcompiler1|libnvrtc-builtins\d+(\.\d+)*)$"
)
_PROJECTS: dict[str, dict] = {}
UA = {"User-Agent": "remedy-gen-provider-table/1"}


def http(url: str, rng: str | None = None) -> bytes:
    headers = dict(UA)
    if rng:
        headers["Range"] = rng
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        return r.read()


def pypi_wheel(name: str, version: str) -> tuple[str, str] | None:
    """(url, filename) of the linux x86_64 wheel of name==version on PyPI."""
    if name not in _PROJECTS:
        _PROJECTS[name] = json.loads(http(f"https://pypi.org/pypi/{name}/json"))["releases"]
    files = _PROJECTS[name].get(version) or []
    if not files:  # "13.0.3" is published as 13.0.3.0 and the reverse
        alt = [v for v in _PROJECTS[name] if v.rstrip(".0") == version.rstrip(".0")]
        files = _PROJECTS[name].get(alt[0], []) if alt else []
    for f in files:
        fn = f["filename"]
        if fn.endswith(".whl") and ("x86_64" in fn or "py3-none-any" in fn):
            # a PyPI proxy may answer with URLs relative to the JSON document
            return urllib.parse.urljoin(f"https://pypi.org/pypi/{name}/json", f["url"]), fn
    return None


def remote_zip_names(url: str) -> list[str]:
    """File names of a remote zip from its central directory: two Range requests."""
    tail = http(url, "bytes=-65536")
    i = tail.rfind(b"PK\x05\x06")
    if i < 0:
        raise RuntimeError(f"{url}: no end of central directory in the last 64 KiB")
    cd_size, cd_off = struct.unpack("<II", tail[i + 12 : i + 20])
    if cd_off == 0xFFFFFFFF:  # zip64
        j = tail.rfind(b"PK\x06\x06")
        cd_size, cd_off = struct.unpack("<QQ", tail[j + 40 : j + 56])
    cd = http(url, f"bytes={cd_off}-{cd_off + cd_size - 1}")
    names, p = [], 0
    while p + 46 <= len(cd) and cd[p : p + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack("<HHH", cd[p + 28 : p + 34])
        names.append(cd[p + 46 : p + 46 + n].decode("utf-8", "replace"))
        p += 46 + n + m + k
    return names


def wheel_names(name: str, version: str, wheels: Path | None) -> tuple[list[str], str]:
    """(file names, where they were read) of a wheel, local first."""
    norm = name.replace("-", "_")
    if wheels:
        for whl in sorted(wheels.glob(f"{norm}-{version}-*.whl")):
            with zipfile.ZipFile(whl) as z:
                return z.namelist(), f"local {whl.name}"
    found = pypi_wheel(name, version)
    if not found:
        raise RuntimeError(f"no linux x86_64 wheel for {name}=={version} on PyPI")
    url, fn = found
    return remote_zip_names(url), f"PyPI {fn} (zip central directory)"


def toolkit_pins(version: str, wheels: Path | None) -> tuple[dict[str, str], str]:
    """nvidia-* name -> exact version from cuda-toolkit==version's Requires-Dist (extra all)."""
    if wheels and (local := sorted(wheels.glob(f"cuda_toolkit-{version}*.whl"))):
        with zipfile.ZipFile(local[0]) as z:
            meta = next(z.read(n).decode() for n in z.namelist() if n.endswith("/METADATA"))
        where = f"local {local[0].name}"
    else:
        url, fn = pypi_wheel("cuda-toolkit", version) or ("", "")
        with zipfile.ZipFile(io.BytesIO(http(url))) as z:
            meta = next(z.read(n).decode() for n in z.namelist() if n.endswith("/METADATA"))
        where = f"PyPI {fn}"
    pins: dict[str, str] = {}
    for line in meta.splitlines():
        m = re.match(r"Requires-Dist: ([\w.-]+)==([\w.]+?)(?:\.\*)?;.*extra == 'all'", line)
        if m and "'linux'" in line:
            pins[m.group(1).lower()] = m.group(2)
    return pins, where


def header_key(rel: str) -> tuple[str, str] | None:
    """('file'|'dir', key) for a path under include/: files up to two dirs deep by name,
    deeper trees (CCCL's cuda/std/..., thrust/...) by their top two dirs."""
    parts = rel.split("/")
    if any(p in ("detail", "__detail") for p in parts[:-1]):
        return ("dir", "/".join(parts[:2]) + "/") if len(parts) > 2 else None
    if len(parts) <= 3:
        return ("file", rel)
    return ("dir", "/".join(parts[:2]) + "/")


def classify(path: str) -> tuple[str, str] | None:
    """('header'|'hdir'|'lib', key) of a file path inside a package, else None."""
    m = re.search(r"(?:^|/)include/(.+)$", path)
    if m and not path.endswith("/"):
        hk = header_key(m.group(1))
        if hk:
            return ("header" if hk[0] == "file" else "hdir", hk[1])
    base = path.rsplit("/", 1)[-1]
    if re.fullmatch(r"lib[\w+-]+(?:\.\w+)*\.so(?:\.[\d.]+)?|lib[\w+-]+\.a", base) and (
        "/lib" in path or path.startswith("lib")
    ):
        return ("lib", base)
    return None


def add(pkg: dict, kind: str, key: str) -> None:
    """One file of a package, by kind: header (path under include/), header dir, library."""
    group = {"header": "headers", "hdir": "header_dirs", "lib": "libraries"}[kind]
    bucket = pkg.setdefault(group, [])
    if key not in bucket:
        bucket.append(key)


def finish(pkg: dict) -> dict:
    for g in ("headers", "header_dirs", "libraries"):
        pkg[g] = sorted(pkg.get(g, []))
    return pkg


def pip_line(line: str, tk_version: str, wheels: Path | None) -> dict:
    pins, where = toolkit_pins(tk_version, wheels)
    out: dict = {
        "cuda_toolkit": tk_version,
        "pins": dict(sorted(pins.items())),
        "pins_source": f"cuda-toolkit=={tk_version} METADATA Requires-Dist (extra 'all'), {where}",
        "packages": {},
    }
    for name, version in sorted(pins.items()):
        try:
            names, src = wheel_names(name, version, wheels)
        except Exception as e:  # noqa: BLE001 - report and go on; the table says what it lacks
            print(f"  {name}=={version}: {e}", file=sys.stderr)
            out.setdefault("unread", []).append(f"{name}=={version}: {e}")
            continue
        pkg: dict = {"version": version, "source": src}
        for path in names:
            c = classify(path)
            if c:
                add(pkg, c[0], c[1])
        out["packages"][name] = finish(pkg)
        print(f"  {line} {name}=={version}: {len(names)} files ({src})", file=sys.stderr)
    return out


def debian() -> dict:
    out: dict = {"release": "bookworm", "sources": [], "packages": {}}
    for comp in DEBIAN_COMPONENTS:
        url = DEBIAN.format(comp=comp)
        text = gzip.decompress(http(url)).decode("utf-8", "replace")
        out["sources"].append(url)
        for row in text.splitlines():
            if "\t" not in row and "  " not in row:
                continue
            path, _, locs = row.rpartition(" ")
            path = path.strip()
            for loc in locs.split(","):
                pkg = loc.rsplit("/", 1)[-1]
                if not DEBIAN_PACKAGES.match(pkg):
                    continue
                c = classify("/" + path)
                if c:
                    add(out["packages"].setdefault(pkg, {}), c[0], c[1])
        print(f"  debian {comp}: read", file=sys.stderr)
    out["packages"] = {k: finish(v) for k, v in sorted(out["packages"].items())}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheels", type=Path, help="a dir of local wheels to read first")
    ap.add_argument("--out", type=Path, default=Path("knowledge/providers.yaml"))
    ap.add_argument("--lines", default=",".join(LINES), help="toolkit lines (default: all)")
    a = ap.parse_args()
    import yaml

    doc = {
        "generated_by": "scripts/gen_provider_table.py",
        "note": "GENERATED: do not edit by hand; re-run the script. NVIDIA's apt repository "
        "(developer.download.nvidia.com) was not reachable when generating: cuda-*-X-Y apt "
        "packages are not covered; pip wheels and Debian bookworm are.",
        "pip": {},
        "debian": {},
    }
    for line in a.lines.split(","):
        print(f"line {line}: cuda-toolkit=={LINES[line]}", file=sys.stderr)
        doc["pip"][line] = pip_line(line, LINES[line], a.wheels)
    doc["debian"] = debian()
    text = (
        "# "
        + doc["note"]
        + "\n"
        + yaml.safe_dump(doc, sort_keys=False, width=1 << 20, default_flow_style=None)
    )
    a.out.write_text(text)
    print(f"wrote {a.out} ({len(text)} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
