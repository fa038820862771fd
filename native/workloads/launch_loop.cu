// launch-loop: a launch-bound loop of empty kernels (1 block x 32 threads)
// round-robin over a few streams, for measuring what a profiler adds to each
// launch. The kernels do nothing, so the time is the host's launch path
// (runtime + driver + any injected collector). Prints one line:
//   launch-loop: launches=N streams=S seconds=T us_per_launch=U
// No result to check: exits 0 unless CUDA fails.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "check.h"
#include "launch_loop.h"

namespace runner {
namespace {

constexpr long kDefaultLaunches = 200000;
constexpr long kWarmUpLaunches = 1000;

__global__ void emptyKernel() {}

void launches(const std::vector<cudaStream_t>& streams, long n) {
  for (long i = 0; i < n; i++) emptyKernel<<<1, 32, 0, streams[i % streams.size()]>>>();
  // Launch-configuration errors would repeat on every launch: one check at
  // the end keeps the loop itself free of extra API calls.
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int runLaunchLoop(const Options& o) {
  const int stream_count = o.streams ? o.streams : 4;
  const long n = o.iterations ? o.iterations : kDefaultLaunches;  // --iterations: launches in total
  nvtxRangePushA("workload launch-loop");
  // Non-blocking streams: no implicit ordering with the legacy default
  // stream, so nothing but the launch path limits the rate.
  std::vector<cudaStream_t> streams(stream_count);
  for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  nvtxRangePushA("warm-up");
  launches(streams, kWarmUpLaunches);  // module load, first-launch costs: not timed
  CUDA_CHECK(cudaDeviceSynchronize());
  nvtxRangePop();
  nvtxRangePushA("launches");
  const auto t0 = std::chrono::steady_clock::now();
  launches(streams, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nvtxRangePop();
  for (auto& s : streams) CUDA_CHECK(cudaStreamDestroy(s));
  nvtxRangePop();
  std::printf("launch-loop: launches=%ld streams=%d seconds=%.6f us_per_launch=%.4f\n", n, stream_count, seconds,
              seconds / static_cast<double>(n) * 1e6);
  return kExitOk;
}

}  // namespace runner
