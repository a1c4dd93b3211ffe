#!/usr/bin/env bash
# Build the Debian bookworm rootfs of the systemd tier (systemd-nspawn hosts), once.
# Adapted from shared/reference/sandbox/make_rootfs.sh, plus g++ so that a real FlashInfer /
# SGLang JIT build can run inside a systemd host after a fix (nvcc needs a host compiler).
# It uses the apt mirror configured on this machine (no hostname is hard-coded here).
# usage: make-rootfs.sh TARGET_DIR     (TARGET_DIR must not exist; built in TARGET_DIR.tmp, then renamed)
set -euo pipefail
T=${1:?usage: make-rootfs.sh TARGET_DIR}
PKGS=systemd,systemd-sysv,dbus,openssh-server,python3,python3-venv,iproute2,procps,g++,libpython3.11-dev
MIRROR=$(grep -hoE '^URIs: *\S+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$MIRROR" ] || MIRROR=$(grep -hoE '^deb +\S+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
rm -rf "$T.tmp"
debootstrap --variant=minbase --include="$PKGS" bookworm "$T.tmp" "$MIRROR" >"$T.log" 2>&1 || {
  tail -20 "$T.log" >&2
  echo "make-rootfs: debootstrap failed (full log: $T.log)" >&2
  exit 1
}
# container settings: generated per host at `sbx up` (hostname, machine-id, host key)
echo sandbox >"$T.tmp/etc/hostname"
rm -f "$T.tmp/etc/machine-id"
: >"$T.tmp/etc/machine-id"
rm -f "$T.tmp"/etc/ssh/ssh_host_*
# no getty on a console nobody reads
ln -sf /dev/null "$T.tmp/etc/systemd/system/console-getty.service"
apt-get -q clean -o RootDir="$T.tmp" 2>/dev/null || rm -rf "$T.tmp"/var/cache/apt/archives/*.deb
echo "$PKGS" >"$T.tmp/.sbx-rootfs-packages"
mv "$T.tmp" "$T"
