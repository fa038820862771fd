// streamscope-runner: the bundled CUDA workloads under stream scenarios.
// Parses the options, makes sure there is a device (a run without one exits 3
// with the reason), and hands the workload to the scenario code.
#include <cstdio>

#include "check.h"
#include "launch_loop.h"
#include "options.h"
#include "scenarios.h"
#include "workload.h"

int main(int argc, char** argv) {
  using namespace runner;
  const Options o = parseOptions(argc, argv);  // --help / --list / bad arguments end here, without touching CUDA
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    // Without a GPU, or without the NVIDIA driver (libcuda), the runtime
    // answers cudaErrorNoDevice or cudaErrorInsufficientDriver here.
    if (e != cudaSuccess) {
      std::fprintf(stderr, "streamscope-runner: no CUDA device available: cudaGetDeviceCount: %s (%s)\n", cudaGetErrorName(e),
                   cudaGetErrorString(e));
    } else {
      std::fprintf(stderr, "streamscope-runner: no CUDA device available: cudaGetDeviceCount found 0 devices\n");
    }
    return kExitCudaError;
  }
  if (o.workload == "launch-loop") return runLaunchLoop(o);
  std::unique_ptr<Workload> w = o.workload == "normalise" ? makeNormalise(o) : o.workload == "matmul" ? makeMatmul(o) : makeTranspose(o);
  if (o.verbose) std::printf("%s, %d chunks, scenario %s\n", w->describe().c_str(), o.chunks, o.scenario.c_str());
  return runScenario(*w, o);
}
