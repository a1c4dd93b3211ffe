#!/usr/bin/env bash
# Install everything sandbox/sbx needs on this machine, idempotently; a second run only checks.
# Works as root on a fresh Debian 12 with network to the package registries (Debian, PyPI) only.
#   1. apt packages (apt-get update first, only when one is missing)
#   2. the systemd tier's rootfs (debootstrap, once)            } run in parallel
#   3. the wheel cache (pip download) and the heavy environment } with step 2
#   4. the per-scenario toolchain layers (pip --target from the wheel cache)
# Everything lands in sandbox/cache/ (SBX_CACHE); nothing is installed into the machine's Pythons.
# Prints the time of each step. Exit 0 when both tiers are ready.
# SBX_SETUP_STEPS="apt rootfs wheels venv layers" (the default) selects steps, for development.
set -euo pipefail
STEPS=" ${SBX_SETUP_STEPS:-apt rootfs wheels venv layers} "
want() { [[ $STEPS == *" $1 "* ]]; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SBX=$ROOT/sandbox/sbx
T0=$(date +%s%N)
say() { printf '[setup-sandbox] %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
since() { local ms=$((($(date +%s%N) - $1) / 1000000)); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }
[ "$(id -u)" = 0 ] || die "must run as root"

# ---- 1. apt ----------------------------------------------------------------------------------
t=$(date +%s%N)
want apt || PKGS=()
want apt && PKGS=(openssh-server openssh-client systemd-container debootstrap iproute2 util-linux procps
  python3 python3-venv python3-pip python3-yaml python3-dev g++ ca-certificates cmake ninja-build make
  chromium)  # chromium: tests/test_reports.py renders the HTML reports headless; cmake: the
  # CMake attacks of tests/security/test_inherited_compiler_env.py; ninja-build, make: the PATH
  # program attacks of tests/security/test_step_path_programs.py and test_path_link_hops.py
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt: installing ${missing[*]}"
  # no service may start on this machine (openssh-server's postinst would start sshd on :22)
  added_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get -q update -o DPkg::Lock::Timeout=300 >/dev/null
  apt-get -q install -y --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
  [ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
fi
say "1. apt packages: $(since "$t")s (${#missing[@]} installed)"

eval "$("$SBX" paths | /usr/bin/python3 -c 'import json,sys,shlex; d=json.load(sys.stdin); print("\n".join(f"P_{k.upper()}={shlex.quote(v)}" for k,v in d.items()))')"
mkdir -p "$P_CACHE" "$P_WHEELS"
PIPENV=(env -u PIP_CONSTRAINT -u PIP_FIND_LINKS PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1)

# ---- 2. rootfs (background) ------------------------------------------------------------------
rootfs_pid=
t_rootfs=$(date +%s%N)
if ! want rootfs; then
  :
elif [ -x "$P_ROOTFS/usr/lib/systemd/systemd" ]; then
  say "2. rootfs: cached ($(basename "$P_ROOTFS"))"
else
  say "2. rootfs: debootstrap into $(basename "$P_ROOTFS") (background)"
  rm -rf "$P_ROOTFS"
  "$ROOT/sandbox/lib/make-rootfs.sh" "$P_ROOTFS" &
  rootfs_pid=$!
fi

# ---- 3. wheel cache + heavy environment ------------------------------------------------------
t=$(date +%s%N)
stamp="$P_WHEELS/.complete-$(cat "$P_HEAVY_LOCK" "$P_TOOLCHAIN_LOCK" | sha256sum | cut -c1-12)"
if ! want wheels; then
  :
elif [ -e "$stamp" ]; then
  say "3a. wheel cache: cached"
else
  # 4 pip downloads in parallel (pip fetches one file at a time); the toolchain lock has one
  # group per line because pip refuses two versions of one name in one call
  dl() { "${PIPENV[@]}" /usr/bin/python3 -m pip download -q --no-deps -d "$P_WHEELS" "$@" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2); }
  mapfile -t reqs < <(grep -vE '^\s*(#|$)' "$P_HEAVY_LOCK")
  pids=()
  for k in 0 1 2 3; do
    part=()
    for ((i = k; i < ${#reqs[@]}; i += 4)); do part+=("${reqs[i]}"); done
    dl "${part[@]}" & pids+=($!)
  done
  while read -r line; do
    group=()
    for spec in $line; do # a wheel already in the heavy lock is fetched there (no double write)
      printf '%s\n' "${reqs[@]}" | grep -qxF "$spec" || group+=("$spec")
    done
    [ ${#group[@]} -gt 0 ] && { dl "${group[@]}" & pids+=($!); }
  done < <(grep -vE '^\s*(#|$)' "$P_TOOLCHAIN_LOCK")
  for p in "${pids[@]}"; do wait "$p" || die "pip download failed"; done
  touch "$stamp"
  say "3a. wheel cache: $(since "$t")s, $(du -sh "$P_WHEELS" | cut -f1)"
fi

t=$(date +%s%N)
if ! want venv; then
  :
elif [ -x "$P_HEAVY_VENV/bin/python" ]; then
  say "3b. heavy environment: cached ($(basename "$P_HEAVY_VENV"))"
else
  tmp=$P_HEAVY_VENV.tmp
  rm -rf "$tmp" && mkdir -p "$tmp"
  # Built AT /opt/sglang-venv (the path hosts see; venvs hard-code their path), in a private
  # mount namespace where a tmpfs /opt holds only a bind mount of the cache dir. The --no-deps
  # installs run as NPROC parallel pip processes over wheel-size-balanced bins (77 s instead of
  # ~105 s on 2 cores): unpacking 6 GB is the cost, and the bins share no files.
  bins=$(/usr/bin/python3 - "$P_WHEELS" "$P_HEAVY_LOCK" "$(nproc)" <<'PY'
import os, re, sys
wheels, lock, n = sys.argv[1], sys.argv[2], max(2, min(4, int(sys.argv[3])))
reqs = [ln.strip() for ln in open(lock) if ln.strip() and not ln.startswith("#")]
files = os.listdir(wheels)
def size(req):
    name, ver = req.split("==")
    stem = f"{re.sub(r'[-_.]+', '_', name).lower()}-{ver.lower()}-"
    return sum(os.path.getsize(os.path.join(wheels, f)) for f in files if f.lower().startswith(stem))
bins, tot = [[] for _ in range(n)], [0] * n
for r in sorted(reqs, key=size, reverse=True):
    i = tot.index(min(tot))
    bins[i].append(r)
    tot[i] += size(r)
print("\n".join(" ".join(b) for b in bins if b))
PY
)
  unshare --mount --propagation private /bin/bash -euc '
    mount -t tmpfs sbx-build /opt && mkdir /opt/sglang-venv
    mount --bind "$1" /opt/sglang-venv
    /usr/bin/python3 -m venv /opt/sglang-venv
    pids=()
    while read -r bin; do
      # shellcheck disable=SC2086
      env -u PIP_CONSTRAINT -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 \
        PIP_DISABLE_PIP_VERSION_CHECK=1 /opt/sglang-venv/bin/pip install -q --no-deps --no-index \
        --find-links "$2" $bin &
      pids+=($!)
    done <<<"$3"
    for p in "${pids[@]}"; do wait "$p"; done
  ' _ "$tmp" "$P_WHEELS" "$bins" || die "heavy environment: pip install failed"
  mv "$tmp" "$P_HEAVY_VENV"
  say "3b. heavy environment: $(since "$t")s, $(du -sh "$P_HEAVY_VENV" | cut -f1)"
fi

# ---- 4. toolchain layers ---------------------------------------------------------------------
t=$(date +%s%N)
if want layers; then
  "$SBX" prepare
  say "4. toolchain layers: $(since "$t")s"
fi

if [ -n "$rootfs_pid" ]; then
  wait "$rootfs_pid" || die "rootfs build failed (log: $P_ROOTFS.log)"
  say "2. rootfs: done $(since "$t_rootfs")s after its start, $(du -sh "$P_ROOTFS" | cut -f1)"
fi

want layers && want rootfs || exit 0
"$SBX" doctor >/dev/null || die "sbx doctor: $("$SBX" doctor)"
say "ready: total $(since "$T0")s; cache $(du -sh "$P_CACHE" | cut -f1) in $P_CACHE"
