// Probe (not part of the product): what CUPTI reports for the per-thread
// default stream. Built on the GPU machine with
//   nvcc --default-stream per-thread -o /tmp/ptds scripts/device/probes/per_thread_stream.cu
#include <cstdio>
#include <thread>
__global__ void k(int* p) { if (p) p[threadIdx.x] = 1; }
int main() {
  auto work = [] {
    k<<<1, 32>>>(nullptr);  // the per-thread default stream of this thread
    cudaStreamSynchronize(cudaStreamPerThread);
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  k<<<1, 32, 0, cudaStreamLegacy>>>(nullptr);  // the legacy stream, explicitly
  cudaStream_t created;
  cudaStreamCreate(&created);  // an application stream, for comparison
  k<<<1, 32, 0, created>>>(nullptr);
  cudaDeviceSynchronize();
  std::printf("ptds probe done\n");
  return 0;
}
