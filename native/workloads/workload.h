// What a workload supplies to the scenarios: buffer sizes per chunk, how to
// fill its inputs, how to enqueue its kernel, how to check a result. The
// scenarios (scenarios.cu) own streams, memory and issue order, once for
// every workload.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "options.h"

namespace runner {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string describe() const = 0;
  // Bytes of each input (one H2D copy each) and of the output (one D2H copy), per chunk.
  virtual std::vector<size_t> inputBytes() const = 0;
  virtual size_t outputBytes() const = 0;
  virtual void fillInputs(int chunk, const std::vector<void*>& host_inputs) const = 0;
  // Loads the kernel that launch() uses on the current device, without
  // launching it. CUDA loads modules lazily (CUDA_MODULE_LOADING=LAZY is the
  // default since 12.2) on a kernel's first launch, and loading may
  // synchronize the context; the scenarios call this during setup so that
  // the issued work holds no hidden loading or synchronization.
  virtual void preload() const = 0;
  // Enqueues the chunk's kernel on `stream` (0 = the legacy default stream).
  virtual void launch(const std::vector<void*>& device_inputs, void* device_output, cudaStream_t stream) const = 0;
  // Checks a chunk's output against a CPU reference; false with `why` when wrong.
  virtual bool verify(const std::vector<void*>& host_inputs, const void* host_output, std::string* why) const = 0;
};

std::unique_ptr<Workload> makeNormalise(const Options& o);
std::unique_ptr<Workload> makeMatmul(const Options& o);
std::unique_ptr<Workload> makeTranspose(const Options& o);

// Fills `n` values in [0, 1) from a fixed-seed generator (inputs.cc); the
// workloads derive a chunk-specific seed from --seed.
void fillUniform(float* p, size_t n, unsigned seed);
void fillUniform(double* p, size_t n, unsigned seed);

}  // namespace runner
