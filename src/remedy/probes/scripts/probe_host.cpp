// remedy link-probe host object: calls the CUDA runtime and the driver API so the link needs
// libcudart and libcuda exactly like a FlashInfer/tvm-ffi extension does (F3). Compiled with
// the host compiler only: the link is tested even when nvcc itself is broken.
#include <cuda.h>
#include <cuda_runtime_api.h>

extern "C" int remedy_probe_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return -1;
  return cuInit(0) == CUDA_SUCCESS ? n : -2;
}
