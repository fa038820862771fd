// streamscope-runner: the bundled CUDA workloads under stream scenarios.
#include <cstdio>
#include <random>

#include "check.h"
#include "launch_loop.h"
#include "options.h"
#include "scenarios.h"
#include "workload.h"

namespace runner {

void fillUniform(float* p, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (size_t i = 0; i < n; i++) p[i] = u(rng);
}

void fillUniform(double* p, size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t i = 0; i < n; i++) p[i] = u(rng);
}

}  // namespace runner

int main(int argc, char** argv) {
  using namespace runner;
  const Options o = parseOptions(argc, argv);
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "streamscope-runner: no CUDA device available (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return kExitCudaError;
  }
  if (o.workload == "launch-loop") return runLaunchLoop(o);
  std::unique_ptr<Workload> w = o.workload == "normalise" ? makeNormalise(o) : o.workload == "matmul" ? makeMatmul(o) : makeTranspose(o);
  if (o.verbose) std::printf("%s, %d chunks, scenario %s\n", w->describe().c_str(), o.chunks, o.scenario.c_str());
  return runScenario(*w, o);
}
