#include "scenarios.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"

namespace runner {
namespace {

// What each scenario changes; everything else is shared.
struct Plan {
  bool pinned = true;             // pageable: plain heap memory instead of cudaMallocHost
  bool single_stream = false;     // serial: every chunk on one created stream
  bool kernel_on_legacy = false;  // default-stream: kernels launched without a stream
  bool sync_each = false;         // sync-each: cudaDeviceSynchronize after each chunk is issued
  bool event_pipeline = false;    // events: copy-in / compute / copy-out streams ordered by events
  bool priorities = false;        // priority: streams alternate low/high priority
  bool all_devices = false;       // multi-gpu: chunks round-robin over every device
};

Plan planFor(const std::string& s) {
  Plan p;
  if (s == "serial") p.single_stream = true;
  else if (s == "default-stream") p.kernel_on_legacy = true;
  else if (s == "pageable") p.pinned = false;
  else if (s == "events") p.event_pipeline = true;
  else if (s == "priority") p.priorities = true;
  else if (s == "sync-each") p.sync_each = true;
  else if (s == "multi-gpu") p.all_devices = true;
  return p;  // concurrent: the defaults
}

struct Chunk {
  int device = 0;
  std::vector<void*> host_in, dev_in;
  std::vector<size_t> in_bytes;
  void* host_out = nullptr;
  void* dev_out = nullptr;
  cudaStream_t stream = nullptr;  // where its copies (and, unless legacy, its kernel) go
};

struct Range {
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
};

void* hostAlloc(size_t bytes, bool pinned) {
  if (pinned) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  // Pageable on purpose: cudaMemcpyAsync from/to such memory is staged
  // through a driver buffer and does not return before the copy is done, so
  // nothing can overlap it.
  void* p = std::malloc(bytes);
  if (!p) {
    std::fprintf(stderr, "streamscope-runner: out of host memory (%zu bytes)\n", bytes);
    std::exit(kExitCudaError);
  }
  return p;
}

void hostFree(void* p, bool pinned) {
  if (pinned) CUDA_CHECK(cudaFreeHost(p));
  else std::free(p);
}

}  // namespace

int runScenario(const Workload& w, const Options& o) {
  const Plan plan = planFor(o.scenario);
  int device_count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&device_count));
  const int devices = plan.all_devices ? device_count : 1;
  if (plan.all_devices && device_count == 1) std::printf("note: multi-gpu with one device behaves like concurrent\n");

  const int chunks = o.chunks;
  const int streams_per_device = plan.single_stream ? 1 : std::max(1, o.streams ? o.streams : chunks);
  Range top("workload " + w.describe() + " " + o.scenario);

  // ---- setup: streams, events, memory (outside the issued work) ----
  std::vector<Chunk> cs(chunks);
  std::vector<std::vector<cudaStream_t>> streams(devices);
  // events scenario: one copy-in, one compute, one copy-out stream per device.
  std::vector<cudaStream_t> copy_in(devices), compute(devices), copy_out(devices);
  std::vector<cudaEvent_t> in_ready(chunks), out_ready(chunks);
  {
    Range r("setup");
    for (int d = 0; d < devices; d++) {
      CUDA_CHECK(cudaSetDevice(d));
      if (plan.event_pipeline) {
        CUDA_CHECK(cudaStreamCreate(&copy_in[d]));
        CUDA_CHECK(cudaStreamCreate(&compute[d]));
        CUDA_CHECK(cudaStreamCreate(&copy_out[d]));
        continue;
      }
      int least = 0, greatest = 0;
      if (plan.priorities) CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      for (int s = 0; s < streams_per_device; s++) {
        cudaStream_t st;
        // Lower numbers are higher priorities in CUDA; alternate the two ends.
        if (plan.priorities) CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamDefault, s % 2 ? greatest : least));
        else CUDA_CHECK(cudaStreamCreate(&st));
        streams[d].push_back(st);
      }
    }
    for (int k = 0; k < chunks; k++) {
      Chunk& c = cs[k];
      c.device = k % devices;
      CUDA_CHECK(cudaSetDevice(c.device));
      c.stream = plan.event_pipeline ? copy_in[c.device] : streams[c.device][(k / devices) % streams[c.device].size()];
      c.in_bytes = w.inputBytes();
      for (size_t b : c.in_bytes) {
        c.host_in.push_back(hostAlloc(b, plan.pinned));
        void* d = nullptr;
        CUDA_CHECK(cudaMalloc(&d, b));
        c.dev_in.push_back(d);
      }
      c.host_out = hostAlloc(w.outputBytes(), plan.pinned);
      CUDA_CHECK(cudaMalloc(&c.dev_out, w.outputBytes()));
      w.fillInputs(k, c.host_in);
      if (plan.event_pipeline) {
        CUDA_CHECK(cudaEventCreateWithFlags(&in_ready[k], cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&out_ready[k], cudaEventDisableTiming));
      }
    }
    for (int d = 0; d < devices; d++) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  // ---- issue ----
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < o.iterations; it++) {
    for (int k = 0; k < chunks; k++) {
      Chunk& c = cs[k];
      Range r("issue chunk " + std::to_string(k));
      CUDA_CHECK(cudaSetDevice(c.device));
      for (size_t i = 0; i < c.host_in.size(); i++) {
        CUDA_CHECK(cudaMemcpyAsync(c.dev_in[i], c.host_in[i], c.in_bytes[i], cudaMemcpyHostToDevice, c.stream));
      }
      cudaStream_t kernel_stream = c.stream;
      cudaStream_t out_stream = c.stream;
      if (plan.event_pipeline) {
        // The kernel waits for its inputs on another stream, the copy-out for
        // the kernel: dependencies across streams, intended.
        CUDA_CHECK(cudaEventRecord(in_ready[k], copy_in[c.device]));
        CUDA_CHECK(cudaStreamWaitEvent(compute[c.device], in_ready[k], 0));
        kernel_stream = compute[c.device];
        w.launch(c.dev_in, c.dev_out, kernel_stream);
        CUDA_CHECK(cudaEventRecord(out_ready[k], compute[c.device]));
        CUDA_CHECK(cudaStreamWaitEvent(copy_out[c.device], out_ready[k], 0));
        out_stream = copy_out[c.device];
      } else {
        // default-stream: stream 0 is the legacy default stream, which waits
        // for all work in blocking streams and makes them wait for it.
        w.launch(c.dev_in, c.dev_out, plan.kernel_on_legacy ? cudaStream_t(0) : kernel_stream);
      }
      CUDA_CHECK(cudaMemcpyAsync(c.host_out, c.dev_out, w.outputBytes(), cudaMemcpyDeviceToHost, out_stream));
      if (plan.sync_each) CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  {
    Range r("synchronize");
    for (int d = 0; d < devices; d++) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // ---- verify ----
  bool ok = true;
  {
    Range r("verify");
    for (int k = 0; k < chunks && ok; k++) {
      std::string why;
      if (!w.verify(cs[k].host_in, cs[k].host_out, &why)) {
        std::fprintf(stderr, "streamscope-runner: wrong result in chunk %d: %s\n", k, why.c_str());
        ok = false;
      }
    }
  }

  // ---- teardown ----
  for (Chunk& c : cs) {
    CUDA_CHECK(cudaSetDevice(c.device));
    for (size_t i = 0; i < c.host_in.size(); i++) {
      hostFree(c.host_in[i], plan.pinned);
      CUDA_CHECK(cudaFree(c.dev_in[i]));
    }
    hostFree(c.host_out, plan.pinned);
    CUDA_CHECK(cudaFree(c.dev_out));
  }
  for (int k = 0; k < chunks && plan.event_pipeline; k++) {
    CUDA_CHECK(cudaEventDestroy(in_ready[k]));
    CUDA_CHECK(cudaEventDestroy(out_ready[k]));
  }
  for (int d = 0; d < devices; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    for (cudaStream_t s : streams[d]) CUDA_CHECK(cudaStreamDestroy(s));
    if (plan.event_pipeline) {
      CUDA_CHECK(cudaStreamDestroy(copy_in[d]));
      CUDA_CHECK(cudaStreamDestroy(compute[d]));
      CUDA_CHECK(cudaStreamDestroy(copy_out[d]));
    }
  }

  const int total = chunks * o.iterations;
  const int used_streams = plan.event_pipeline ? 3 * devices : devices * streams_per_device;
  // Machine-readable: the GPU tests compare these counts with the recording.
  std::printf("workload=%s scenario=%s chunks=%d iterations=%d streams=%d devices=%d kernels=%d h2d=%d d2h=%d %s wall_ms=%.3f\n",
              o.workload.c_str(), o.scenario.c_str(), chunks, o.iterations, used_streams, devices, total,
              total * static_cast<int>(w.inputBytes().size()), total, ok ? "ok" : "WRONG", wall_ms);
  return ok ? kExitOk : kExitWrongResult;
}

}  // namespace runner
