// remedy compile-probe, translation unit 1: no includes at all, so nothing but
// cicc -> PTX -> ptxas is exercised. A ptxas older than the cicc that wrote the PTX stops
// here with "Unsupported .version X.Y; current version is 'X.Z'" (F1).
extern "C" __global__ void remedy_probe_axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
