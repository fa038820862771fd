// Entry point of the injection library. CUDA loads it through
// CUDA_INJECTION64_PATH and calls InitializeInjection() from inside cuInit,
// before any context exists. With buffer_pool.cc, the first of the
// collector's three layers: everything that talks to CUPTI's subscription,
// callback and buffer APIs lives here, and the exit handler; encoding and
// I/O live in stream_writer.cc, CUPTI record translation in
// activity_translator.cc, signal handling in signals.cc.
//
// Rules every function here keeps, because it runs inside someone else's
// process:
//  * Never crash or stop the target: every CUPTI entry point catches
//    everything; every failure is one stderr line (and an Error record when
//    the file is open); InitializeInjection returns 1 whatever happens, so
//    the target runs on, recorded or not.
//  * Never block a target thread on the disk: callbacks only enqueue.
//  * Never hold a lock of ours while calling into CUPTI (see stream_writer.h).
//  * Silent unless something is wrong, or STREAMSCOPE_LOG=1.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <cupti.h>

#include "buffer_pool.h"
#include "collector_version.h"
#include "driver_api.h"
#include "nvtx_default_domain.h"
#include "process_env.h"
#include "record_encoder.h"
#include "signals.h"
#include "stream_writer.h"

namespace streamscope {
namespace {

struct Collector {
  pid_t pid = 0;
  uint64_t origin_ns = 0;
  std::string path;
  bool discard = false;
  bool verbose = false;
  uint32_t flush_ms = 500;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<StreamWriter> writer;
  DriverApi driver;
  CUpti_SubscriberHandle subscriber = nullptr;
  // CUPTI_ACTIVITY_KIND_STREAM is on: stream flags/priority come from CUPTI's
  // records; the stream-created callback then only does bookkeeping.
  bool stream_activity = false;
  // NVTX calls on the default domain that CUPTI's MARKER activity misses.
  NvtxDefaultDomain nvtx_default_domain;

  // Guards the three containers below (resource callbacks come from any
  // thread). Never held across a CUPTI or driver call.
  std::mutex mu;
  std::set<uint32_t> devices_seen;
  std::map<CUcontext, uint32_t> live_contexts;                // handle → CUPTI context id
  std::map<uint32_t, std::vector<uint32_t>> context_streams;  // context id → stream ids

  // True from the end of setup until exit: signals are handled through the
  // writer thread (signals.h) and NVTX default-domain calls are recorded.
  std::atomic<bool> collecting{false};
  std::atomic<bool> finished{false};
  std::atomic<uint64_t> cupti_dropped{0};  // reported in Dropped records as they were seen
};

// Leaked on purpose: CUPTI may still call back (bufferRequested,
// bufferCompleted) while the process tears down, after our atexit handler.
Collector* g = nullptr;

void logLine(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void logLine(const char* fmt, ...) {
  if (!g || !g->verbose) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "streamscope: %s\n", line);
}

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

uint64_t envNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (errno != 0 || !end || *end != '\0' || *v == '-') {
    std::fprintf(stderr, "streamscope: ignoring %s=%s (not a number); using %llu\n", name, v, static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return n;
}

uint64_t wallNs() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// Now, relative to the origin, on CUPTI's clock (the clock of every
// activity timestamp).
int64_t nowRel() {
  uint64_t t = 0;
  if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) t = wallNs();
  return static_cast<int64_t>(t - g->origin_ns);
}

std::string cuptiError(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "CUPTI error " + std::to_string(static_cast<int>(r));
  return s;
}

std::string readWholeFile(const char* path) {
  std::string out;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// ---- Records the collector writes itself ----------------------------------------

void writeProcess(rs::RecordEncoder& enc, uint32_t runtime_version) {
  std::string cmd = readWholeFile("/proc/self/cmdline");  // arguments, each NUL-terminated
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  rs::ProcessRecord p{};
  p.pid = static_cast<uint32_t>(getpid());
  p.ppid = static_cast<uint32_t>(getppid());
  p.command_sid = enc.intern(std::string_view(cmd));
  p.executable_sid = enc.intern(std::string_view(exe, n > 0 ? static_cast<size_t>(n) : 0));
  p.hostname_sid = enc.intern(host);
  p.driver_version = static_cast<uint32_t>(g->driver.driverVersion());
  p.runtime_version = runtime_version;
  p.cupti_version = cupti_version;
  p.cupti_api_version = CUPTI_API_VERSION;
  enc.write(p);
}

void writeError(rs::RecordEncoder& enc, uint32_t code, const std::string& message) {
  rs::ErrorRecord e{};
  e.code = code;
  e.message_sid = enc.intern(std::string_view(message));
  enc.write(e);
}

void writeDropped(rs::RecordEncoder& enc, uint64_t count, uint32_t source, uint32_t context_id, uint32_t stream_id) {
  rs::DroppedRecord d{};
  d.count = count;
  d.source = source;
  d.context_id = context_id;
  d.stream_id = stream_id;
  enc.write(d);
}

void writeEnd(rs::RecordEncoder& enc) {
  rs::EndRecord e{};
  e.reason = 1;  // process exit
  e.end_ns = nowRel();
  e.records_written = g->writer->recordsInFile();
  e.buffers_completed = g->writer->buffersCompleted();
  enc.write(e);
}

// During setup only (the writer thread is not running yet).
void setupError(uint32_t code, const std::string& message) {
  std::fprintf(stderr, "streamscope: %s\n", message.c_str());
  g->writer->writeNow([&](rs::RecordEncoder& enc) { writeError(enc, code, message); });
}

// A setup step failed: the file says why (the Error record before this)
// and ends; the target runs on unprofiled.
int abandonSetup() {
  if (g->subscriber) {
    cuptiUnsubscribe(g->subscriber);  // leave CUPTI to whoever comes next
    g->subscriber = nullptr;
  }
  g->writer->writeFinal([](rs::RecordEncoder& enc) { writeEnd(enc); });
  g->writer->close();
  g->finished = true;
  return 1;
}

// ---- CUPTI buffer callbacks ---------------------------------------------------
// Called by CUPTI from any thread, concurrently: the target's threads,
// CUPTI's worker thread, and whichever thread is inside cuptiActivityFlushAll.

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  uint8_t* b = g ? g->pool->acquire() : nullptr;
  // A refusal (*size = 0): CUPTI drops records and counts them; the pool
  // counts the refusal (Dropped, kDropBufferCap, at exit).
  *buffer = b;
  *size = b ? g->pool->bufferBytes() : 0;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid_size) {
  if (!g || !buffer) return;
  // Every buffer must go back to the pool eventually: the writer does it
  // after reading; in discard mode, or if enqueueing fails, it happens here.
  try {
    // As CUPTI's samples do: records dropped since the last look (the
    // global queue: since CUDA 6 ctx is always null here).
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
      g->cupti_dropped += dropped;
      uint32_t ctx_id = rs::kNone;
      if (ctx) cuptiGetContextId(ctx, &ctx_id);
      const uint32_t sid = ctx ? stream_id : rs::kNone;
      g->writer->enqueue([dropped, ctx_id, sid](rs::RecordEncoder& enc) { writeDropped(enc, dropped, rs::kDropCupti, ctx_id, sid); });
    }
    if (g->discard) {
      // STREAMSCOPE_DISCARD=1, the benchmark's CUPTI floor: the records are
      // never read. The only difference from a real recording.
      g->pool->release(buffer);
      return;
    }
    g->writer->enqueueBuffer(buffer, valid_size);
  } catch (...) {
    g->pool->release(buffer);
  }
}

// ---- Resource and driver API callbacks -------------------------------------------

void onContextCreated(CUcontext ctx) {
  uint32_t ctx_id = 0, device_id = 0, null_stream = rs::kNone;
  const CUptiResult r = cuptiGetContextId(ctx, &ctx_id);
  if (r != CUPTI_SUCCESS) {
    std::fprintf(stderr, "streamscope: cuptiGetContextId failed on a new context: %s\n", cuptiError(r).c_str());
    return;
  }
  cuptiGetDeviceId(ctx, &device_id);
  // The legacy default (NULL) stream of this context.
  if (cuptiGetStreamIdEx(ctx, nullptr, 0, &null_stream) != CUPTI_SUCCESS) null_stream = rs::kNone;
  bool new_device;
  {
    std::lock_guard<std::mutex> lock(g->mu);
    g->live_contexts[ctx] = ctx_id;
    if (null_stream != rs::kNone) g->context_streams[ctx_id].push_back(null_stream);
    new_device = g->devices_seen.insert(device_id).second;
  }
  const int64_t created = nowRel();
  g->writer->markCudaReady();
  // The device's attributes are queried on the writer thread (in the
  // closure), not on the target's thread that is creating the context.
  g->writer->enqueue([=](rs::RecordEncoder& enc) {
    if (new_device) {
      DeviceInfo info;
      if (g->driver.deviceInfo(static_cast<int>(device_id), &info)) {
        rs::DeviceRecord d{};
        d.device_id = device_id;
        d.name_sid = enc.intern(std::string_view(info.name));
        std::memcpy(d.uuid, info.uuid, 16);
        d.cc_major = static_cast<uint32_t>(info.cc_major);
        d.cc_minor = static_cast<uint32_t>(info.cc_minor);
        d.sm_count = static_cast<uint32_t>(info.sm_count);
        d.async_engine_count = static_cast<uint32_t>(info.async_engine_count);
        d.concurrent_kernels = static_cast<uint32_t>(info.concurrent_kernels);
        d.pci_domain = static_cast<uint32_t>(info.pci_domain);
        d.pci_bus = static_cast<uint32_t>(info.pci_bus);
        d.pci_device = static_cast<uint32_t>(info.pci_device);
        d.core_clock_khz = static_cast<uint32_t>(info.core_clock_khz);
        d.memory_clock_khz = static_cast<uint32_t>(info.memory_clock_khz);
        d.memory_bus_width_bits = static_cast<uint32_t>(info.memory_bus_width_bits);
        d.l2_cache_bytes = static_cast<uint32_t>(info.l2_cache_bytes);
        d.max_threads_per_sm = static_cast<uint32_t>(info.max_threads_per_sm);
        d.max_shared_memory_per_sm = static_cast<uint32_t>(info.max_shared_memory_per_sm);
        d.max_registers_per_sm = static_cast<uint32_t>(info.max_registers_per_sm);
        d.max_blocks_per_sm = static_cast<uint32_t>(info.max_blocks_per_sm);
        d.total_memory_bytes = info.total_memory_bytes;
        enc.write(d);
      } else {
        std::fprintf(stderr, "streamscope: cannot query device %u through the CUDA driver; its Device record is missing\n", device_id);
      }
    }
    rs::ContextRecord c{};
    c.context_id = ctx_id;
    c.device_id = device_id;
    c.null_stream_id = null_stream;
    enc.write(c);
    if (null_stream != rs::kNone) {
      rs::StreamRecord s{};
      s.context_id = ctx_id;
      s.stream_id = null_stream;
      s.device_id = device_id;
      s.flags = rs::kStreamLegacyDefault;
      s.priority = 0;
      s.created_ns = created;
      enc.write(s);
    }
  });
}

void onContextDestroyStarting(CUcontext ctx) {
  // Only bookkeeping: the handle must not be used at exit once destroyed.
  std::lock_guard<std::mutex> lock(g->mu);
  g->live_contexts.erase(ctx);
}

void onStreamCreated(CUcontext ctx, CUstream stream) {
  uint32_t ctx_id = 0, device_id = 0, stream_id = 0;
  if (cuptiGetContextId(ctx, &ctx_id) != CUPTI_SUCCESS) return;
  cuptiGetDeviceId(ctx, &device_id);
  const CUptiResult r = cuptiGetStreamIdEx(ctx, stream, 0, &stream_id);
  if (r != CUPTI_SUCCESS) {
    logLine("cuptiGetStreamIdEx failed on a new stream: %s", cuptiError(r).c_str());
    return;  // its operations still arrive; the ingest marks the stream implicit
  }
  {
    std::lock_guard<std::mutex> lock(g->mu);
    g->context_streams[ctx_id].push_back(stream_id);
  }
  if (g->stream_activity) return;
  // Fallback when CUPTI cannot report streams: ask the driver now, while the
  // handle is certainly valid (these two calls then show up in the trace).
  unsigned cu_flags = 0;
  int priority = 0;
  uint32_t flags = 0;
  if (g->driver.streamFlags(stream, &cu_flags) && (cu_flags & CU_STREAM_NON_BLOCKING)) flags |= rs::kStreamNonBlocking;
  g->driver.streamPriority(stream, &priority);
  const int64_t created = nowRel();
  g->writer->enqueue([=](rs::RecordEncoder& enc) {
    rs::StreamRecord s{};
    s.context_id = ctx_id;
    s.stream_id = stream_id;
    s.device_id = device_id;
    s.flags = flags;
    s.priority = priority;
    s.created_ns = created;
    enc.write(s);
  });
}

void CUPTIAPI onCallback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!g || g->finished.load(std::memory_order_acquire) || !data) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      const auto* r = static_cast<const CUpti_ResourceData*>(data);
      switch (cbid) {
        case CUPTI_CBID_RESOURCE_CU_INIT_FINISHED: g->writer->markCudaReady(); break;
        case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: onContextCreated(r->context); break;
        case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: onContextDestroyStarting(r->context); break;
        case CUPTI_CBID_RESOURCE_STREAM_CREATED: onStreamCreated(r->context, r->resourceHandle.stream); break;
        default: break;
      }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
      // cudaProfilerStop ends in cuProfilerStop too. Flushing inside a CUPTI
      // callback is not allowed: the writer thread does it.
      const auto* c = static_cast<const CUpti_CallbackData*>(data);
      if (c->callbackSite == CUPTI_API_EXIT) g->writer->requestFlush(rs::kFlushProfilerStop);
    }
  } catch (...) {
    // Out of memory in a callback: the record is lost, the target is not.
  }
}

}  // namespace
}  // namespace streamscope

// Called by nvtx_forward.cc's wrappers of NVTX's domain API for calls on the
// default domain, which CUPTI drops (nvtx_default_domain.h). Any thread, at
// any time: before the collector is set up (NVTX used before cuInit) and
// after it finished, the call is not recorded.
void streamscope::recordDefaultDomainNvtx(CUpti_CallbackId cbid, const void* params, const void* return_value) {
  Collector* c = g;
  if (!c || !c->collecting.load(std::memory_order_acquire) || c->finished.load(std::memory_order_acquire)) return;
  try {
    const CUpti_NvtxData data{"", params, return_value};
    NvtxDefaultDomain::Marker m;
    if (!c->nvtx_default_domain.onCallback(cbid, data, nowRel(), static_cast<uint32_t>(gettid()), &m)) return;
    c->writer->enqueue([m = std::move(m)](rs::RecordEncoder& enc) {
      rs::MarkerRecord r{};
      r.timestamp_ns = m.timestamp_ns;
      r.id = m.id;
      r.flags = m.flags;
      r.object_kind = CUPTI_ACTIVITY_OBJECT_THREAD;
      r.thread_id = m.thread_id;
      r.name_sid = m.name.empty() ? 0 : enc.intern(m.name);
      r.domain_sid = 0;
      enc.write(r);
    });
  } catch (...) {
    // Out of memory: the range is lost, the target is not.
  }
}

namespace streamscope {
namespace {

// ---- Exit -----------------------------------------------------------------------

// atexit handler. Registered inside cuInit, i.e. after the CUDA runtime
// registered its own teardown, so it runs before it: contexts still exist.
// Idempotent.
void finish() {
  Collector* c = g;
  if (!c || c->finished.exchange(true)) return;
  // A forked child inherits this handler, but neither the writer thread
  // nor the file are its own: the parent finishes them.
  if (getpid() != c->pid) return;
  c->collecting = false;  // from now on a signal acts as it would without us
  try {
    // 1. The writer thread processes what it has and ends, so that no
    //    flush of ours overlaps the final one.
    c->writer->stop();
    // 2. Everything CUPTI still holds, complete or not (records still in
    //    flight have no GPU timestamps: counted, see kDropIncomplete). In odd
    //    programs CUDA may already be partly torn down: tolerate errors.
    const CUptiResult fr = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (fr != CUPTI_SUCCESS) logLine("final cuptiActivityFlushAll: %s", cuptiError(fr).c_str());
    c->writer->drainNow();
    // 3. What CUPTI dropped: the global queue, and every context still alive
    //    with the streams we saw on it. (Since CUDA 6 all buffers are global
    //    and the per-context counts are expected to be 0.)
    struct Drop {
      uint64_t count;
      uint32_t ctx_id, stream_id;
    };
    std::vector<Drop> drops;
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &n) == CUPTI_SUCCESS && n > 0) drops.push_back({n, rs::kNone, rs::kNone});
    std::map<CUcontext, uint32_t> contexts;
    std::map<uint32_t, std::vector<uint32_t>> streams;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      contexts = c->live_contexts;
      streams = c->context_streams;
    }
    constexpr size_t kMaxStreamsAsked = 1024;  // per context; keeps exit fast for stream-churning targets
    for (const auto& [ctx, ctx_id] : contexts) {
      n = 0;
      if (cuptiActivityGetNumDroppedRecords(ctx, 0, &n) == CUPTI_SUCCESS && n > 0) drops.push_back({n, ctx_id, rs::kNone});
      const auto& ids = streams[ctx_id];
      for (size_t i = 0; i < ids.size() && i < kMaxStreamsAsked; i++) {
        n = 0;
        if (ids[i] != 0 && cuptiActivityGetNumDroppedRecords(ctx, ids[i], &n) == CUPTI_SUCCESS && n > 0) {
          drops.push_back({n, ctx_id, ids[i]});
        }
      }
    }
    // 4. The runtime version, now that the runtime is surely loaded (0 when
    //    it is linked statically into the executable and not exported).
    int runtime_version = 0;
    using RuntimeGetVersion = int (*)(int*);
    if (auto fn = reinterpret_cast<RuntimeGetVersion>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"))) {
      if (fn(&runtime_version) != 0) runtime_version = 0;
    }
    const uint64_t refusals = c->pool->refusals();
    const uint64_t incomplete = c->writer->translator().incompleteRecords();
    uint64_t cupti_dropped = c->cupti_dropped.load();
    for (const Drop& d : drops) cupti_dropped += d.count;
    // 5. Dropped, Process (again, with the runtime version), End.
    c->writer->writeFinal([&](rs::RecordEncoder& enc) {
      for (const Drop& d : drops) writeDropped(enc, d.count, rs::kDropCupti, d.ctx_id, d.stream_id);
      if (refusals > 0) writeDropped(enc, refusals, rs::kDropBufferCap, rs::kNone, rs::kNone);
      if (incomplete > 0) writeDropped(enc, incomplete, rs::kDropIncomplete, rs::kNone, rs::kNone);
      writeProcess(enc, static_cast<uint32_t>(runtime_version));
      writeEnd(enc);
    });
    if (refusals > 0) {
      std::fprintf(stderr,
                   "streamscope: %llu activity buffer requests were refused at the cap of %zu buffers of %zu bytes; "
                   "CUPTI dropped records (raise STREAMSCOPE_MAX_BUFFERS or STREAMSCOPE_BUFFER_BYTES)\n",
                   static_cast<unsigned long long>(refusals), c->pool->maxBuffers(), c->pool->bufferBytes());
    }
    if (cupti_dropped > 0) {
      std::fprintf(stderr, "streamscope: CUPTI dropped %llu activity records (counted in the recording)\n",
                   static_cast<unsigned long long>(cupti_dropped));
    }
    const ActivityTranslator& t = c->writer->translator();
    if (t.badBuffers() > 0) {
      std::fprintf(stderr, "streamscope: %llu activity buffers ended in a record CUPTI reported as invalid; the rest of each was skipped\n",
                   static_cast<unsigned long long>(t.badBuffers()));
    }
    logLine(
        "%s: %llu records, %llu CUPTI buffers (%zu of %zu allocated, %zu not returned by CUPTI), "
        "%llu records of unknown kind, %llu without GPU timestamps, %llu lost to output errors, "
        "%llu NVTX payloads decoded, %llu not decodable",
        c->path.c_str(), static_cast<unsigned long long>(c->writer->recordsInFile()),
        static_cast<unsigned long long>(c->writer->buffersCompleted()), c->pool->allocated(), c->pool->maxBuffers(), c->pool->outstanding(),
        static_cast<unsigned long long>(t.unknownRecords()), static_cast<unsigned long long>(incomplete),
        static_cast<unsigned long long>(c->writer->recordsLost()), static_cast<unsigned long long>(t.payloadsWritten()),
        static_cast<unsigned long long>(t.payloadsUndecoded()));
    c->writer->close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streamscope: finishing the record stream failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "streamscope: finishing the record stream failed\n");
  }
}

// ---- Setup -----------------------------------------------------------------------

struct KindToEnable {
  CUpti_ActivityKind kind;
  const char* name;
};

// CONCURRENT_KERNEL, not KERNEL: KERNEL serializes all kernels, which would
// destroy exactly the concurrency StreamScope is there to show.
constexpr KindToEnable kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    // The payloads of NVTX ranges and marks (NCCL's collectives: message
    // size, reduction, ...), decoded into MarkerPayload records
    // (nvtx_payload.h); one record per marker with event attributes.
    {CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
    // Stream flags and priority, without calling the driver on the target's
    // thread (CUPTI would record such calls as the target's own).
    {CUPTI_ACTIVITY_KIND_STREAM, "STREAM"},
};

// <dir>/<pid>.ssr, created exclusively. If it exists (the same pid
// initialised CUDA again after exec, or a pid was reused), <pid>-1.ssr ...
int createStreamFile(const std::string& dir, pid_t pid, std::string* path) {
  int fd = -1;
  for (int n = 0; n < 100; n++) {
    *path = dir + "/" + std::to_string(pid) + (n ? "-" + std::to_string(n) : std::string()) + ".ssr";
    fd = ::open(path->c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) break;
  }
  return fd;
}

int initialize() {
  const char* dir = std::getenv("STREAMSCOPE_OUTPUT_DIR");
  if (!dir || !*dir) {
    std::fprintf(stderr, "streamscope: STREAMSCOPE_OUTPUT_DIR not set; not recording\n");
    return 1;
  }
  g = new Collector();
  g->pid = getpid();
  g->verbose = envFlag("STREAMSCOPE_LOG");
  g->discard = envFlag("STREAMSCOPE_DISCARD");
  const uint64_t buffer_bytes = envNumber("STREAMSCOPE_BUFFER_BYTES", 8u << 20);
  const uint64_t max_buffers = envNumber("STREAMSCOPE_MAX_BUFFERS", 64);
  g->flush_ms = static_cast<uint32_t>(std::min<uint64_t>(envNumber("STREAMSCOPE_FLUSH_MS", 500), 3600 * 1000));

  // The origin: every record time is relative to it, on CUPTI's clock;
  // the wall clock read right after it places it in calendar time.
  const bool have_origin = cuptiGetTimestamp(&g->origin_ns) == CUPTI_SUCCESS && g->origin_ns != 0;
  const uint64_t origin_wall = wallNs();
  if (!have_origin) g->origin_ns = origin_wall;

  const int fd = createStreamFile(dir, g->pid, &g->path);
  if (fd < 0) {
    std::fprintf(stderr, "streamscope: cannot create %s: %s; not recording\n", g->path.c_str(), std::strerror(errno));
    g->finished = true;
    return 1;
  }
  g->pool = std::make_unique<BufferPool>(buffer_bytes, max_buffers);
  g->writer = std::make_unique<StreamWriter>(fd, g->path, g->origin_ns, g->flush_ms, *g->pool);
  if (!g->writer->writeHeader(rs::makeFileHeader(g->origin_ns, origin_wall, static_cast<uint32_t>(g->pid),
                                                 g->discard ? static_cast<uint32_t>(rs::kHeaderDiscard) : 0u, kCollectorVersion))) {
    g->writer->close();
    g->finished = true;
    return 1;
  }
  g->writer->writeNow([](rs::RecordEncoder& enc) {
    writeProcess(enc, 0);
    // Who launched it, as which rank: a fixed list of variables, read once
    // with getenv (process_env.h).
    writeProcessEnv(enc, [](const char* name) { return std::getenv(name); });
  });
  logLine("recording process %d to %s%s", static_cast<int>(g->pid), g->path.c_str(),
          g->discard ? " (discard mode: activity buffers are thrown away unread)" : "");

  // The CUPTI library loaded must be at least the one we were built against:
  // the record structs we read are those of CUPTI_API_VERSION.
  uint32_t version = 0;
  cuptiGetVersion(&version);
  if (version < CUPTI_API_VERSION) {
    setupError(rs::kErrorCuptiVersion, "the CUPTI library in this process has API version " + std::to_string(version) +
                                           ", older than the version " + std::to_string(CUPTI_API_VERSION) +
                                           " StreamScope was built against; nothing recorded");
    return abandonSetup();
  }

  // One CUPTI subscriber per process. If another tool (Nsight Systems,
  // Nsight Compute, a profiler inside the target) has it, say so and record
  // nothing: half a recording that looks whole would be worse than none.
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "StreamScope";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  const CUptiResult sub = cuptiSubscribe_v2(&g->subscriber, onCallback, nullptr, &params);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    g->subscriber = nullptr;
    setupError(rs::kErrorCuptiSubscribe, std::string("another CUPTI client is active in this process: ") +
                                             (other[0] ? other : "(it did not give its name)") + "; nothing recorded");
    return abandonSetup();
  }
  if (sub != CUPTI_SUCCESS) {
    g->subscriber = nullptr;
    setupError(rs::kErrorCupti, "CUPTI subscription failed: " + cuptiError(sub) + "; nothing recorded");
    return abandonSetup();
  }

  // Thread ids as the system knows them (gettid), the same in API and NVTX
  // records; CUPTI's default is pthread_self() cut to 32 bits. Must be set
  // before any activity is enabled.
  if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
    logLine("cuptiSetThreadIdType(SYSTEM) failed; thread ids are CUPTI's default");
  }

  struct Callback {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    const char* name;
  };
  const Callback callbacks[] = {
      {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CU_INIT_FINISHED, "CU_INIT_FINISHED"},
      {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, "CONTEXT_CREATED"},
      {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, "CONTEXT_DESTROY_STARTING"},
      {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED, "STREAM_CREATED"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop"},
  };
  for (const Callback& cb : callbacks) {
    const CUptiResult r = cuptiEnableCallback(1, g->subscriber, cb.domain, cb.cbid);
    if (r != CUPTI_SUCCESS) {
      setupError(rs::kErrorCupti, std::string("the CUPTI callback ") + cb.name + " could not be enabled: " + cuptiError(r));
    }
  }
  const CUptiResult reg = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  if (reg != CUPTI_SUCCESS) {
    setupError(rs::kErrorCupti, "cuptiActivityRegisterCallbacks failed: " + cuptiError(reg) + "; nothing recorded");
    return abandonSetup();
  }
  std::string enabled;
  for (const KindToEnable& k : kKinds) {
    const CUptiResult r = cuptiActivityEnable(k.kind);
    if (r != CUPTI_SUCCESS) {
      setupError(rs::kErrorActivityEnable, std::string("activity kind ") + k.name + " could not be enabled: " + cuptiError(r));
    } else {
      if (k.kind == CUPTI_ACTIVITY_KIND_STREAM) g->stream_activity = true;
      enabled += enabled.empty() ? "" : " ";
      enabled += k.name;
    }
  }
  if (g->flush_ms > 0) {
    const CUptiResult r = cuptiActivityFlushPeriod(g->flush_ms);
    if (r != CUPTI_SUCCESS) logLine("cuptiActivityFlushPeriod(%u): %s", g->flush_ms, cuptiError(r).c_str());
  }
  logLine("activity kinds enabled: %s", enabled.c_str());
  logLine("CUPTI %u (built against %u); buffers of %zu bytes, at most %zu; flush every %u ms", version,
          static_cast<unsigned>(CUPTI_API_VERSION), g->pool->bufferBytes(), g->pool->maxBuffers(), g->flush_ms);

  std::atexit(finish);
  signals::install(g->writer.get(), g->pid, &g->collecting);
  g->writer->start(signals::afterFlush);
  g->collecting = true;
  return 1;
}

}  // namespace
}  // namespace streamscope

// Called by the CUDA driver inside cuInit, once per process. Returns 1 in
// every case: a profiler that cannot record must not stop the target.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      streamscope::initialize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "streamscope: setup failed: %s; not recording\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "streamscope: setup failed; not recording\n");
    }
  });
  return 1;
}
