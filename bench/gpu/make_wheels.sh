#!/usr/bin/env bash
# Builds, here (not on the device), the wheel sets the GPU run carries (the device has no
# network). Both folders are git-ignored (/.whl2/, /.whl3/ in .gitignore).
#   .whl2/w      sglang 0.5.12 + flashinfer-python 0.6.11.post1 + apache-tvm-ffi 0.1.9 and the
#                module-level deps of SGLang's launch path the device image lacks (pydantic
#                among them, which remedy needs too)                              (~40 MB)
#   .whl2/extra  sgl_kernel_sm90_only.zip: sglang-kernel 0.4.2.post2 without flash_ops (FA3)
#                and sm100 ops (the full wheel is 322 MB)                          (~20 MB)
#   .whl3        the small CUDA wheels scenario (d) and its fix use: nvidia-cuda-runtime
#                13.2.75 (the skew) and 13.0.96 (the fix), nvidia-cuda-cccl 13.0.85  (~8 MB)
#   .whl4        transformers 5.6.0 + tokenizers 0.22.2, SGLang 0.5.12's pins      (~14 MB)
# The sets follow the lab's recorded closure (shared/reference/gpu-device/make_wheelsets.sh).
set -eu
cd "$(dirname "$0")/../.."
P="--no-deps --only-binary=:all: --python-version 3.12 --implementation cp
   --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
   --platform manylinux_2_26_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
   --platform manylinux2014_x86_64 --platform manylinux1_x86_64"
dl() { python3 -m pip download -q $P -d "$@"; }
FI="flashinfer-python==0.6.11.post1 apache-tvm-ffi==0.1.9 cuda-tile==1.7.0"
dl .whl2/w $FI sglang==0.5.12 \
  ipython==9.18.1 ipython-pygments-lexers==1.1.1 jedi==0.20.1 parso==0.8.7 traitlets==5.16.1 \
  pexpect==4.9.0 ptyprocess==0.7.0 prompt-toolkit==3.0.53 wcwidth==0.9.4 stack-data==0.6.3 \
  asttokens==3.0.2 executing==2.3.0 pure-eval==0.2.4 matplotlib-inline==0.2.2 \
  compressed-tensors==0.20.1 loguru==0.7.3 dill==0.4.1 fastapi==0.165.0 starlette==1.10.0 \
  pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
  opentelemetry-api==1.45.2 gguf==0.19.0 jsonschema==4.26.0 referencing==0.37.0 rpds-py==2026.9.1 \
  jsonschema-specifications==2025.9.1 msgspec==0.23.0 openai==2.6.1 jiter==0.19.0 distro==1.9.0 \
  sniffio==1.3.1 orjson==3.13.0 partial-json-parser==0.2.1.1.post7 pybase64==1.5.1 \
  setproctitle==1.3.8 soundfile==0.13.1 cffi==2.1.1 pycparser==3.12 pyzmq==27.3.0 \
  uvicorn==0.54.0 python-multipart==0.0.34 torch-memory-saver==0.0.10
tmp=$(mktemp -d); dl "$tmp" sglang-kernel==0.4.2.post2
mkdir -p .whl2/extra "$tmp/x"
(cd "$tmp/x" && unzip -q "$tmp"/sglang_kernel-*.whl 'sgl_kernel/*' 'sglang_kernel-*.dist-info/*' \
   -x 'sgl_kernel/flash_ops.abi3.so' 'sgl_kernel/sm100/*' && zip -q -r -9 sk.zip sgl_kernel sglang_kernel-*.dist-info)
mv "$tmp/x/sk.zip" .whl2/extra/sgl_kernel_sm90_only.zip; rm -rf "$tmp"
dl .whl3 nvidia-cuda-runtime==13.2.75 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 2>/dev/null || {
  for w in nvidia-cuda-runtime==13.2.75 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85; do dl .whl3 "$w"; done; }
dl .whl4 transformers==5.6.0 tokenizers==0.22.2   # SGLang 0.5.12's pins (~14 MB)
du -sh .whl2 .whl3 .whl4
