// Kernels before, inside and after a cudaProfilerStart/Stop region; inside,
// three NVTX 'loop' ranges with 4 kernels and a memset each. A second
// thread launches 2 kernels inside the profiler region (any thread counts).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <cstdio>
#include <thread>
__global__ void k(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
int main() {
  const int n = 1 << 20;
  float* d;
  cudaMalloc(&d, n * sizeof(float));
  for (int i = 0; i < 5; i++) k<<<n / 256, 256>>>(d, n);
  cudaDeviceSynchronize();
  cudaProfilerStart();
  for (int it = 0; it < 3; it++) {
    nvtxRangePushA("loop");
    for (int i = 0; i < 4; i++) k<<<n / 256, 256>>>(d, n);
    cudaMemsetAsync(d, 0, 1024);
    nvtxRangePop();
  }
  std::thread t([&] { for (int i = 0; i < 2; i++) k<<<n / 256, 256>>>(d, n); cudaDeviceSynchronize(); });
  t.join();
  cudaDeviceSynchronize();
  cudaProfilerStop();
  for (int i = 0; i < 7; i++) k<<<n / 256, 256>>>(d, n);
  cudaDeviceSynchronize();
  printf("probe ok\n");
  return 0;
}
