// The stream scenarios, implemented once for every workload. A workload
// (workload.h) only says how big its buffers are and how to launch its
// kernel on a given stream; everything about streams, host memory, issue
// order and synchronization lives here.
//
// Every scenario follows the same three phases, each under an NVTX range:
//   setup        streams, events, device and host memory, inputs, kernel
//                preload, then a device synchronize: nothing of it leaks
//                into the issued work;
//   issue        per chunk (range "issue chunk k"): H2D copies of its
//                inputs, its kernel, the D2H copy of its output;
//   synchronize  one cudaDeviceSynchronize per device used.
// wall_ms covers issue + synchronize. Then "verify" (CPU reference) and
// "teardown". All inside "workload <name> <scenario>".
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
  bool priorities = false;        // priority: streams alternate lowest/highest priority
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
  size_t out_bytes = 0;
  cudaStream_t stream = nullptr;  // its copies and (unless legacy / events) its kernel
  int priority = 0;               // of `stream` (priority scenario)
  // events scenario only
  cudaEvent_t inputs_ready = nullptr;  // on copy-in after the H2D copies
  cudaEvent_t kernel_done = nullptr;   // on compute after the kernel
  cudaEvent_t output_read = nullptr;   // on copy-out after the D2H copy (--iterations > 1)
};

// Streams of one device.
struct DeviceStreams {
  std::vector<cudaStream_t> streams;                                      // chunk j of this device uses streams[j % size]
  std::vector<int> priorities;                                            // of each stream
  cudaStream_t copy_in = nullptr, compute = nullptr, copy_out = nullptr;  // events scenario
};

struct Range {
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

void* hostAlloc(size_t bytes, bool pinned) {
  if (pinned) {
    // Page-locked: the copy engines DMA straight from it, so cudaMemcpyAsync
    // returns at once and the copy runs alongside other streams' work.
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  // Pageable on purpose. The DMA engines cannot read memory the OS may move,
  // so the driver stages a pageable cudaMemcpyAsync through its own pinned
  // buffer, and the call returns only once the data is staged (H2D) or has
  // arrived in the user's buffer (D2H): the host cannot issue the next
  // chunk meanwhile, so nothing overlaps.
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

// How many created streams a device gets for its `chunks_here` chunks.
int streamsFor(const Plan& plan, const Options& o, int chunks_here) {
  if (plan.single_stream) return 1;
  // Default one per chunk; --streams N shares N streams round-robin; never
  // more streams than chunks (an idle stream only clutters the timeline).
  int n = std::min(o.streams ? o.streams : chunks_here, chunks_here);
  if (plan.priorities) {
    // Two priorities need two streams; with fewer streams than chunks an
    // even count keeps chunks strictly alternating low/high.
    if (n < chunks_here && n % 2 == 1) n -= 1;
    n = std::max(n, 2);
  }
  return std::max(n, 1);
}

// The streams of each device: the events pipeline's three, or the plan's
// created streams with their priorities.
void createStreams(const Plan& plan, const Options& o, const Workload& w, int chunks, std::vector<DeviceStreams>& ds) {
  const int devices = static_cast<int>(ds.size());
  for (int d = 0; d < devices; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    w.preload();
    DeviceStreams& s = ds[d];
    if (plan.event_pipeline) {
      // Blocking (default-flag) streams, like the rest; the ordering
      // between them comes only from the events below.
      CUDA_CHECK(cudaStreamCreate(&s.copy_in));
      CUDA_CHECK(cudaStreamCreate(&s.compute));
      CUDA_CHECK(cudaStreamCreate(&s.copy_out));
      continue;
    }
    const int chunks_here = (chunks - d + devices - 1) / devices;  // chunks k with k % devices == d
    int lowest = 0, highest = 0;
    // CUDA priorities: lower numbers are higher priorities; the range is
    // [greatest, least], e.g. [-5, 0] on Hopper.
    if (plan.priorities) CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    for (int i = 0; i < streamsFor(plan, o, chunks_here); i++) {
      cudaStream_t st = nullptr;
      int priority = 0;
      if (plan.priorities) {
        priority = i % 2 ? highest : lowest;
        CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamDefault, priority));
      } else {
        // cudaStreamCreate: a blocking stream, i.e. one that synchronizes
        // with the legacy default stream (what default-stream relies on).
        CUDA_CHECK(cudaStreamCreate(&st));
      }
      s.streams.push_back(st);
      s.priorities.push_back(priority);
    }
  }
}

// Each chunk's device, stream (and events), memory and inputs.
void setUpChunks(const Plan& plan, const Options& o, const Workload& w, const std::vector<DeviceStreams>& ds, std::vector<Chunk>& cs) {
  const int devices = static_cast<int>(ds.size());
  for (int k = 0; k < static_cast<int>(cs.size()); k++) {
    Chunk& c = cs[k];
    c.device = k % devices;
    CUDA_CHECK(cudaSetDevice(c.device));
    const DeviceStreams& s = ds[c.device];
    if (plan.event_pipeline) {
      c.stream = s.copy_in;
      CUDA_CHECK(cudaEventCreateWithFlags(&c.inputs_ready, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&c.kernel_done, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&c.output_read, cudaEventDisableTiming));
    } else {
      const size_t i = static_cast<size_t>(k / devices) % s.streams.size();
      c.stream = s.streams[i];
      c.priority = s.priorities[i];
    }
    c.in_bytes = w.inputBytes();
    for (size_t b : c.in_bytes) {
      c.host_in.push_back(hostAlloc(b, plan.pinned));
      void* d = nullptr;
      CUDA_CHECK(cudaMalloc(&d, b));
      c.dev_in.push_back(d);
    }
    c.out_bytes = w.outputBytes();
    c.host_out = hostAlloc(c.out_bytes, plan.pinned);
    CUDA_CHECK(cudaMalloc(&c.dev_out, c.out_bytes));
    w.fillInputs(k, c.host_in);
    if (o.verbose) {
      std::printf("chunk %d: device %d, stream %p%s\n", k, c.device, static_cast<void*>(c.stream),
                  plan.priorities ? (" priority " + std::to_string(c.priority)).c_str() : "");
    }
  }
}

void synchronizeDevices(int devices) {
  for (int d = 0; d < devices; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

// Chunk k's work of pass `it`: its H2D copies, its kernel, its D2H copy, on
// the streams (and with the events) of the plan.
void issueChunk(const Plan& plan, const Workload& w, long it, long iterations, int k, Chunk& c, const DeviceStreams& s) {
  Range r("issue chunk " + std::to_string(k));
  CUDA_CHECK(cudaSetDevice(c.device));
  if (plan.event_pipeline && it > 0) {
    // A later pass reuses the chunk's device buffers: its H2D copy must
    // not overwrite the inputs before the previous pass's kernel has
    // read them (other streams, so stream order does not see to it).
    CUDA_CHECK(cudaStreamWaitEvent(s.copy_in, c.kernel_done, 0));
  }
  for (size_t i = 0; i < c.host_in.size(); i++) {
    CUDA_CHECK(cudaMemcpyAsync(c.dev_in[i], c.host_in[i], c.in_bytes[i], cudaMemcpyHostToDevice, c.stream));
  }
  cudaStream_t out_stream = c.stream;
  if (plan.event_pipeline) {
    // The intended cross-stream dependencies: the kernel (compute
    // stream) waits for its inputs (copy-in stream), the D2H copy
    // (copy-out stream) for the kernel. Chunk k's copies still overlap
    // chunk k-1's kernel, which is the point of the pipeline.
    CUDA_CHECK(cudaEventRecord(c.inputs_ready, s.copy_in));
    CUDA_CHECK(cudaStreamWaitEvent(s.compute, c.inputs_ready, 0));
    // And a later pass's kernel must not overwrite the output before the
    // previous pass's D2H copy has read it.
    if (it > 0) CUDA_CHECK(cudaStreamWaitEvent(s.compute, c.output_read, 0));
    w.launch(c.dev_in, c.dev_out, s.compute);
    CUDA_CHECK(cudaEventRecord(c.kernel_done, s.compute));
    CUDA_CHECK(cudaStreamWaitEvent(s.copy_out, c.kernel_done, 0));
    out_stream = s.copy_out;
  } else if (plan.kernel_on_legacy) {
    // No stream argument: stream 0, the legacy default stream (this file
    // is compiled with --default-stream legacy). It waits for all prior
    // work in every blocking stream, and all later work in blocking
    // streams waits for it: the kernels serialize with every copy.
    w.launch(c.dev_in, c.dev_out, 0);
  } else {
    w.launch(c.dev_in, c.dev_out, c.stream);
  }
  CUDA_CHECK(cudaMemcpyAsync(c.host_out, c.dev_out, c.out_bytes, cudaMemcpyDeviceToHost, out_stream));
  if (plan.event_pipeline && it + 1 < iterations) CUDA_CHECK(cudaEventRecord(c.output_read, s.copy_out));
  // sync-each: the host waits for the whole device before it issues the
  // next chunk, so the next chunk's copies cannot overlap this one's work.
  if (plan.sync_each) CUDA_CHECK(cudaDeviceSynchronize());
}

// Every chunk against the CPU reference, up to the first wrong one.
bool verifyChunks(const Workload& w, const std::vector<Chunk>& cs) {
  for (size_t k = 0; k < cs.size(); k++) {
    std::string why;
    if (!w.verify(cs[k].host_in, cs[k].host_out, &why)) {
      std::fprintf(stderr, "streamscope-runner: wrong result in chunk %d: %s\n", static_cast<int>(k), why.c_str());
      return false;
    }
  }
  return true;
}

// Frees every chunk's memory and events and destroys the streams; returns
// how many streams were created.
int tearDown(const Plan& plan, std::vector<Chunk>& cs, std::vector<DeviceStreams>& ds) {
  int used_streams = 0;
  for (Chunk& c : cs) {
    CUDA_CHECK(cudaSetDevice(c.device));
    for (size_t i = 0; i < c.host_in.size(); i++) {
      hostFree(c.host_in[i], plan.pinned);
      CUDA_CHECK(cudaFree(c.dev_in[i]));
    }
    hostFree(c.host_out, plan.pinned);
    CUDA_CHECK(cudaFree(c.dev_out));
    if (plan.event_pipeline) {
      CUDA_CHECK(cudaEventDestroy(c.inputs_ready));
      CUDA_CHECK(cudaEventDestroy(c.kernel_done));
      CUDA_CHECK(cudaEventDestroy(c.output_read));
    }
  }
  for (int d = 0; d < static_cast<int>(ds.size()); d++) {
    CUDA_CHECK(cudaSetDevice(d));
    for (cudaStream_t st : ds[d].streams) CUDA_CHECK(cudaStreamDestroy(st));
    used_streams += static_cast<int>(ds[d].streams.size());
    if (plan.event_pipeline) {
      CUDA_CHECK(cudaStreamDestroy(ds[d].copy_in));
      CUDA_CHECK(cudaStreamDestroy(ds[d].compute));
      CUDA_CHECK(cudaStreamDestroy(ds[d].copy_out));
      used_streams += 3;
    }
  }
  return used_streams;
}

}  // namespace

// Setup, issue, synchronize, verify, teardown: each an NVTX range of its
// own (each chunk's issue too), so the recording shows the phases.
int runScenario(const Workload& w, const Options& o) {
  const Plan plan = planFor(o.scenario);
  const int chunks = o.chunks;
  const long iterations = o.iterations ? o.iterations : 1;
  int device_count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&device_count));
  // multi-gpu: every device that gets at least one chunk.
  const int devices = plan.all_devices ? std::min(device_count, chunks) : 1;
  if (plan.all_devices && device_count == 1) {
    std::printf("note: multi-gpu found one device: it runs like concurrent on device 0\n");
  } else if (plan.all_devices && device_count > chunks) {
    std::printf("note: multi-gpu with %d chunks uses %d of %d devices\n", chunks, devices, device_count);
  }

  Range top("workload " + o.workload + " " + o.scenario);

  // ---- setup: streams, events, memory, inputs (outside the issued work) ----
  std::vector<Chunk> cs(chunks);
  std::vector<DeviceStreams> ds(devices);
  {
    Range r("setup");
    createStreams(plan, o, w, chunks, ds);
    setUpChunks(plan, o, w, ds, cs);
    synchronizeDevices(devices);
  }

  // ---- issue: depth-first, chunk by chunk ----
  const auto t0 = std::chrono::steady_clock::now();
  for (long it = 0; it < iterations; it++) {
    for (int k = 0; k < chunks; k++) issueChunk(plan, w, it, iterations, k, cs[k], ds[cs[k].device]);
  }
  {
    Range r("synchronize");
    synchronizeDevices(devices);
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // ---- verify: every chunk against the CPU reference ----
  bool ok = true;
  {
    Range r("verify");
    ok = verifyChunks(w, cs);
  }

  // ---- teardown ----
  int used_streams = 0;
  {
    Range r("teardown");
    used_streams = tearDown(plan, cs, ds);
  }

  // Machine-readable, the last line: the GPU tests compare these counts
  // (streams = streams created, all of them used; the legacy default stream
  // of default-stream is not counted) with the recording.
  const long total = static_cast<long>(chunks) * iterations;
  std::printf("workload=%s scenario=%s chunks=%d iterations=%ld streams=%d devices=%d kernels=%ld h2d=%ld d2h=%ld %s wall_ms=%.3f\n",
              o.workload.c_str(), o.scenario.c_str(), chunks, iterations, used_streams, devices, total,
              total * static_cast<long>(w.inputBytes().size()), total, ok ? "ok" : "WRONG", wall_ms);
  return ok ? kExitOk : kExitWrongResult;
}

}  // namespace runner
