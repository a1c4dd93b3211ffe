#!/usr/bin/env bash
# Regenerates the example reports in docs/examples/ (what README.md links to).
#   bash docs/examples/make.sh          the built-in example's plan and an impact (offline)
#   bash docs/examples/make.sh --fleet  also a real fleet run over sandbox hosts (root, the
#                                       sandbox set up: scripts/setup-sandbox.sh; ~3 min)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=docs/examples
REMEDY=${REMEDY:-.venv/bin/remedy}
export COLUMNS=100
$REMEDY plan --example seed-sm120-pip-cu13 --report $OUT/plan-seed-sm120-pip-cu13.html >/dev/null
$REMEDY plan --example seed-sm120-pip-cu13 --report $OUT/plan-seed-sm120-pip-cu13.md >/dev/null
$REMEDY impact CUDA_HOME=/dev/null --example seed-sm120-system-cuda128 \
  --report $OUT/impact-cuda-home-dev-null.html >/dev/null
# the example's logs are named by their path in this checkout, not this machine's
sed -i "s|$PWD/||g" $OUT/plan-seed-sm120-pip-cu13.html $OUT/plan-seed-sm120-pip-cu13.md
[ "${1:-}" = --fleet ] || exit 0

# a small fleet: two hosts with seed 000's broken pip toolchain, one healthy, one that is gone
names=(fh-fleet-a0 fh-fleet-a1 fh-fleet-h0)
scen=(seed-chain-a seed-chain-a healthy)
work=$(mktemp -d)
down() { for n in "${names[@]}"; do sandbox/sbx down "$n" >/dev/null 2>&1 || true; done; rm -rf "$work"; }
trap down EXIT
{
  echo "[gpu]"
  for i in "${!names[@]}"; do
    rec=$(sandbox/sbx up "${scen[$i]}" --name "${names[$i]}" | tail -n 1)
    py() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$rec" "$1"; }
    echo "${names[$i]} ansible_host=$(py address) ansible_port=$(py port)" \
      "ansible_ssh_private_key_file=$(py identity_file) remedy_known_hosts=$(py known_hosts)"
  done
  echo "fh-fleet-gone ansible_host=127.0.9.251 ansible_port=9"
  echo "[all:vars]"
  echo "ansible_user=root"
} >"$work/hosts.ini"
set +e
$REMEDY run --inventory "$work/hosts.ini" --yes --json --verify cheap >"$work/fleet.json"
echo "fleet run: exit $?" >&2
set -e
# the inventory's temp path is this machine's: the report names it as the README does
sed "s|$work/hosts.ini|hosts.ini|g" "$work/fleet.json" >$OUT/fleet-run.json
$REMEDY report $OUT/fleet-run.json --out $OUT/fleet-run.html
