// remedy compile-probe, translation unit 2: what every consumer's kernels include.
// <cuda/std/version> reaches CCCL's compiler-vs-toolkit-headers check
// (cuda/std/__cccl/cuda_toolkit.h, F2) through whichever CCCL the consumer's flags select
// (FlashInfer: its vendored copy with -I; tvm-ffi/torch: the toolkit's include/cccl);
// <cuda_fp16.h> includes <nv/target>, which only the CCCL wheel provides (F4).
#include <cuda/std/version>
#include <cuda_fp16.h>
#include <nv/target>

extern "C" __global__ void remedy_probe_half(__half* h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  NV_IF_TARGET(NV_PROVIDES_SM_80,
               (if (i < n) h[i] = __hadd(h[i], __float2half(1.0f));),
               (if (i < n) h[i] = __float2half(__half2float(h[i]) + 1.0f);))
}
