#!/bin/sh
# remedy launch-probe, command path (runs ON the host, under `env -i <workload env>`).
# Prints its pid, then becomes the server (exec): that pid is the root of the process tree
# whose compilers (ninja, nvcc, cicc, ptxas, cc1plus, ...) tell "still building" apart from
# "hung", and the pid a graceful stop (SIGTERM) is sent to.
# Usage: launch_cmd.sh PROGRAM [ARG...]
echo "REMEDY-LAUNCH-PID $$"
exec "$@"
