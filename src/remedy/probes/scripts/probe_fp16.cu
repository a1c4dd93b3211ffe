// remedy preprocess-probe: the first lines of every SGLang jit_kernel source (through
// sgl_kernel/utils.cuh). Missing CCCL shows as "cuda_fp16.h:NNNN: fatal error: nv/target: No
// such file or directory", a partial copy as "nv/target:NNN: fatal error:
// nv/detail/__target_macros: No such file or directory" (F4).
#include <cuda_fp16.h>
#include <nv/target>
