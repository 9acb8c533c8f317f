// Kernels of piper-gpu-bench (bench/gpu/GpuBench.cpp), compiled here with
// nvcc to a cubin for sm_90 and loaded through the driver API on the GPU
// machine. A grid-stride copy: the bandwidth-bound kernel of the
// SM-partition benchmark and the reference elementwise kernel of the HBM
// row (16-byte loads and stores, as a generated kernel at its best would).

extern "C" __global__ void piper_bench_copy(const float4 *__restrict__ in,
                                            float4 *__restrict__ out,
                                            unsigned long long n) {
  unsigned long long stride =
      static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
           threadIdx.x;
       i < n; i += stride)
    out[i] = in[i];
}
