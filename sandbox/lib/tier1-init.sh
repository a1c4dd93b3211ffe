# PID 1 of a tier-1 sandbox host (sourced as `bash -c`, inside `unshare --mount --uts --pid
# --fork --kill-child`): mounts the host's private view of the machine, then runs sshd.
# Everything it needs was prepared by `sbx up` under $SBX_DIR beforehand (upper dirs with the
# host key, sshd drop-in, /etc/environment, scenario files and whiteouts).
# Env: SBX_NAME SBX_DIR SBX_VENV SBX_VENV_LOWER SBX_WHEELS SBX_HIDE (colon-separated)
set -euo pipefail
mount --make-rprivate /
for d in etc usr var opt srv; do
  mount -t overlay "sbx-$d" -o "lowerdir=/$d,upperdir=$SBX_DIR/upper/$d,workdir=$SBX_DIR/work/$d" "/$d"
done
if [ -n "${SBX_VENV:-}" ]; then
  mount -t overlay sbx-venv -o "lowerdir=$SBX_VENV_LOWER,upperdir=$SBX_DIR/upper/venv,workdir=$SBX_DIR/work/venv" "$SBX_VENV"
fi
if [ -n "${SBX_WHEELS:-}" ]; then
  mount --bind "$SBX_WHEELS" /srv/wheels
  mount -o remount,bind,ro /srv/wheels
fi
# fresh root home from /etc/skel (the machine's /root runs pyenv init: ~95 ms per command)
mount --bind "$SBX_DIR/root" /root
mount --bind "$SBX_DIR/home" /home
mount -t tmpfs -o mode=755 sbx-run /run
mkdir -p /run/sshd
# hide the project's tree and the sandbox cache (the mounts above keep their own references)
IFS=: read -r -a hide <<<"${SBX_HIDE:-}"
for p in "${hide[@]}"; do
  [ -d "$p" ] && mount -t tmpfs -o mode=755,size=64k sbx-hidden "$p"
done
mount -t tmpfs -o mode=1777 sbx-tmp /tmp
mount -t proc proc /proc
hostname "$SBX_NAME"
# PID 1 stays bash: it waits for sshd; when sshd dies, the host dies.
# sshd -e logs to the inherited stderr: sandbox/run/NAME/host.log on the machine
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 /usr/sbin/sshd -D -e &
wait $!
