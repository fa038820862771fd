// CUDA error checking for the runner: every call site reports file:line and
// the CUDA error string, and the runner exits with code 3.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace runner {

constexpr int kExitOk = 0;
constexpr int kExitWrongResult = 1;
constexpr int kExitBadArguments = 2;
constexpr int kExitCudaError = 3;

[[noreturn]] inline void cudaFailed(cudaError_t e, const char* call, const char* file, int line) {
  std::fprintf(stderr, "streamscope-runner: CUDA error at %s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
               cudaGetErrorString(e));
  std::exit(kExitCudaError);
}

}  // namespace runner

#define CUDA_CHECK(call)                                                            \
  do {                                                                              \
    const cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) ::runner::cudaFailed(err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
