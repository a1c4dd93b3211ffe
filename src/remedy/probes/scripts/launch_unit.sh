#!/bin/sh
# remedy launch-probe, systemd path (runs ON the host).
# Restarts the unit, then follows the journal of THIS invocation only (_SYSTEMD_INVOCATION_ID
# of the service's own lines, INVOCATION_ID of systemd's lines about it): the old instance's
# shutdown lines ("SIGTERM received", "crashed with exit code -15") are never mistaken for a
# failure of the new one. `systemctl restart` blocks until the old instance is stopped and the
# new one started (SGLang units are Type=simple/exec: it does not wait for readiness).
# Usage: launch_unit.sh UNIT
u=$1
systemctl restart -- "$u" || { echo "REMEDY-LAUNCH-ERROR systemctl restart $u failed (exit $?)"; exit 1; }
id=$(systemctl show -p InvocationID --value -- "$u")
pid=$(systemctl show -p MainPID --value -- "$u")
echo "REMEDY-LAUNCH-PID ${pid:-0}"
if [ -z "$id" ]; then
  echo "REMEDY-LAUNCH-ERROR no InvocationID for $u after restart"
  exit 1
fi
echo "REMEDY-LAUNCH-INVOCATION $id"
exec journalctl --no-pager -f -n all -o cat "_SYSTEMD_INVOCATION_ID=$id" + "INVOCATION_ID=$id"
