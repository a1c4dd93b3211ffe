#!/usr/bin/env bash
# One device call: install what the call carries (once per warm machine), then run scenarios.
#   bash bench/gpu/call.sh a b      (carry .whl2: SGLang/FlashInfer wheel set, first call)
#   bash bench/gpu/call.sh c d      (carry .whl3: scenario d's CUDA wheels, a chained call)
# The device has no network; see bench/gpu/make_wheels.sh for the carried sets.
set -u
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/gpuout/call-$(date +%H%M%S); mkdir -p "$OUT"; export OUT   # many files: tarred below
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=$(command -v python3)
SITE=$($PY -c 'import site; print(site.getsitepackages()[0])')
echo "python: $PY site: $SITE"
if ! $PY -c 'import sglang, flashinfer' 2>/dev/null; then
  if [ ! -d .whl2/w ]; then echo "no SGLang in the image and no .whl2 carried: fresh machine; cannot run"; exit 3; fi
  s=$SECONDS
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl2/w/*.whl || exit 2
  $PY - .whl2/extra/sgl_kernel_sm90_only.zip "$SITE" <<'PYEOF'
import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PYEOF
  echo "installed the carried wheels in $((SECONDS - s)) s"
else
  echo "warm machine: SGLang already installed by the previous call"
fi
if [ -d .whl4 ]; then  # SGLang 0.5.12's pinned transformers/tokenizers (the image's newer
  # transformers registers qwen3_asr, which SGLang 0.5.12 registers again: ValueError at start)
  $PY -m pip install -q --no-index --no-deps --no-compile --upgrade .whl4/*.whl && echo "pinned transformers installed"
fi
if [ -d .whl3 ]; then mkdir -p /opt/remedy-wheels && cp .whl3/*.whl /opt/remedy-wheels/; fi
# remedy's fix commands run pip offline, from the carried wheels
export PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/remedy-wheels PIP_DISABLE_PIP_VERSION_CHECK=1
nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv,noheader | tee "$OUT/nvidia-smi.csv"
GPU_BUDGET_S=${GPU_BUDGET_S:-540} timeout 575 $PY bench/gpu/scenarios.py "$@"
echo "scenarios rc=$?"
cp "$OUT/results.json" "$FINAL/results-$(echo "$@" | tr -d ' ').json" 2>/dev/null
tar czf "$FINAL/gpu-$(echo "$@" | tr -d ' ').tgz" -C "$OUT" . && ls -la "$FINAL"
cat "$OUT/results.json" 2>/dev/null | head -c 6000
