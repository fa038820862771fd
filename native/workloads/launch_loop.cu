// launch-loop: a launch-bound loop of empty kernels round-robin over a few
// streams, for measuring a profiler's cost per launch. Prints
//   launch-loop: launches=N streams=S seconds=T us_per_launch=U
#include <chrono>
#include <cstdio>
#include <vector>

#include "check.h"
#include "launch_loop.h"

namespace runner {
namespace {

__global__ void emptyKernel() {}

void launches(const std::vector<cudaStream_t>& streams, long n) {
  for (long i = 0; i < n; i++) emptyKernel<<<1, 32, 0, streams[i % streams.size()]>>>();
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int runLaunchLoop(const Options& o) {
  const int stream_count = o.streams ? o.streams : 4;
  // --iterations is the number of launches here; the default of 1 means the
  // benchmark's usual 200k.
  const long n = o.iterations > 1 ? o.iterations : 200000;
  std::vector<cudaStream_t> streams(stream_count);
  for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  launches(streams, 1000);  // warm up: module load, first-launch costs
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  launches(streams, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& s : streams) CUDA_CHECK(cudaStreamDestroy(s));
  std::printf("launch-loop: launches=%ld streams=%d seconds=%.6f us_per_launch=%.4f\n", n, stream_count, seconds, seconds / n * 1e6);
  return kExitOk;
}

}  // namespace runner
