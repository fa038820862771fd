// Entry point of the injection library: CUDA loads it through
// CUDA_INJECTION64_PATH and calls InitializeInjection() inside cuInit, before
// any context exists. First of the collector's three layers: everything that
// talks to CUPTI's subscription, callback and buffer APIs lives here.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <cupti.h>

#include "buffer_pool.h"
#include "driver_api.h"
#include "record_encoder.h"
#include "stream_writer.h"

#define STREAMSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace streamscope {
namespace {

constexpr uint32_t kCollectorVersion = 100;  // 0.1.0

struct Collector {
  pid_t pid = 0;
  uint64_t origin_ns = 0;
  int fd = -1;
  bool discard = false;
  bool verbose = false;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<StreamWriter> writer;
  DriverApi driver;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::mutex mu;                 // guards devices_seen (callbacks come from any thread)
  std::set<uint32_t> devices_seen;
  std::atomic<bool> finished{false};
  struct sigaction previous[2] = {};  // SIGINT, SIGTERM
};

Collector* g = nullptr;  // leaked on purpose: CUPTI may call back during process teardown

void log(const char* fmt, const char* a = "", const char* b = "") {
  if (g && g->verbose) {
    std::fprintf(stderr, "streamscope: ");
    std::fprintf(stderr, fmt, a, b);
    std::fputc('\n', stderr);
  }
}

size_t envSize(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? static_cast<size_t>(n) : fallback;
}

int64_t nowRel() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<int64_t>(t - g->origin_ns);
}

std::string cuptiError(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : ("CUPTI error " + std::to_string(static_cast<int>(r)));
}

std::string readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

rs::ProcessRecord processRecord(rs::RecordEncoder& enc, uint32_t runtime_version) {
  std::string cmd = readFile("/proc/self/cmdline");
  for (char& c : cmd) if (c == '\0') c = ' ';
  while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  rs::ProcessRecord p{};
  p.pid = static_cast<uint32_t>(getpid());
  p.ppid = static_cast<uint32_t>(getppid());
  p.command_sid = enc.intern(cmd);
  p.executable_sid = enc.intern(std::string_view(exe, n > 0 ? static_cast<size_t>(n) : 0));
  p.hostname_sid = enc.intern(host);
  p.driver_version = static_cast<uint32_t>(g->driver.driverVersion());
  p.runtime_version = runtime_version;
  p.cupti_version = cupti_version;
  p.cupti_api_version = CUPTI_API_VERSION;
  return p;
}

void errorRecord(uint32_t code, const std::string& message) {
  std::fprintf(stderr, "streamscope: %s\n", message.c_str());
  if (!g->writer) return;
  auto fn = [code, message](rs::RecordEncoder& enc) {
    rs::ErrorRecord e{};
    e.code = code;
    e.message_sid = enc.intern(message);
    enc.write(e);
  };
  g->writer->enqueue(fn);
}

void writeEnd(rs::RecordEncoder& enc, uint64_t buffers) {
  rs::EndRecord e{};
  e.reason = 1;
  e.end_ns = nowRel();
  e.records_written = enc.recordsWritten();
  e.buffers_completed = buffers;
  enc.write(e);
}

// ---- CUPTI buffer callbacks (any thread) --------------------------------

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = g->pool->acquire();
  *size = *buffer ? g->pool->buffer_bytes() : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid_size) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    uint32_t ctx_id = rs::kNone;
    if (ctx) cuptiGetContextId(ctx, &ctx_id);
    g->writer->enqueue([dropped, ctx_id, stream_id](rs::RecordEncoder& enc) {
      rs::DroppedRecord d{};
      d.count = dropped;
      d.source = rs::kDropCupti;
      d.context_id = ctx_id;
      d.stream_id = stream_id;
      enc.write(d);
    });
  }
  if (g->discard) {
    g->pool->release(buffer);  // the benchmark floor: CUPTI's cost without ours
    return;
  }
  g->writer->enqueueBuffer(buffer, valid_size);
}

// ---- Resource and API callbacks ------------------------------------------

void onContextCreated(CUcontext ctx) {
  uint32_t ctx_id = 0, device_id = 0, null_stream = 0;
  cuptiGetContextId(ctx, &ctx_id);
  cuptiGetDeviceId(ctx, &device_id);
  cuptiGetStreamIdEx(ctx, nullptr, 0, &null_stream);
  bool new_device;
  {
    std::lock_guard<std::mutex> lock(g->mu);
    new_device = g->devices_seen.insert(device_id).second;
  }
  auto info = std::make_shared<DeviceInfo>();
  const bool have_info = new_device && g->driver.deviceInfo(static_cast<int>(device_id), info.get());
  const int64_t created = nowRel();
  g->writer->enqueue([=](rs::RecordEncoder& enc) {
    if (have_info) {
      rs::DeviceRecord d{};
      d.name_sid = enc.intern(info->name);
      d.device_id = device_id;
      std::memcpy(d.uuid, info->uuid, 16);
      d.cc_major = info->cc_major;
      d.cc_minor = info->cc_minor;
      d.sm_count = info->sm_count;
      d.async_engine_count = info->async_engine_count;
      d.concurrent_kernels = info->concurrent_kernels;
      d.pci_domain = info->pci_domain;
      d.pci_bus = info->pci_bus;
      d.pci_device = info->pci_device;
      d.core_clock_khz = info->core_clock_khz;
      d.memory_clock_khz = info->memory_clock_khz;
      d.memory_bus_width_bits = info->memory_bus_width_bits;
      d.l2_cache_bytes = info->l2_cache_bytes;
      d.max_threads_per_sm = info->max_threads_per_sm;
      d.max_shared_memory_per_sm = info->max_shared_memory_per_sm;
      d.max_registers_per_sm = info->max_registers_per_sm;
      d.max_blocks_per_sm = info->max_blocks_per_sm;
      d.total_memory_bytes = info->total_memory_bytes;
      enc.write(d);
    }
    rs::ContextRecord c{};
    c.context_id = ctx_id;
    c.device_id = device_id;
    c.null_stream_id = null_stream;
    enc.write(c);
    rs::StreamRecord s{};
    s.context_id = ctx_id;
    s.stream_id = null_stream;
    s.device_id = device_id;
    s.flags = rs::kStreamLegacyDefault;
    s.priority = 0;
    s.created_ns = created;
    enc.write(s);
  });
}

void onStreamCreated(CUcontext ctx, CUstream stream) {
  uint32_t ctx_id = 0, device_id = 0, stream_id = 0;
  cuptiGetContextId(ctx, &ctx_id);
  cuptiGetDeviceId(ctx, &device_id);
  if (cuptiGetStreamIdEx(ctx, stream, 0, &stream_id) != CUPTI_SUCCESS) return;
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

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!g || g->finished.load()) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* r = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) onContextCreated(r->context);
    else if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) onStreamCreated(r->context, r->resourceHandle.stream);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
    const auto* c = static_cast<const CUpti_CallbackData*>(data);
    // Flushing inside a CUPTI callback is not allowed: the writer thread does it.
    if (c->callbackSite == CUPTI_API_EXIT) g->writer->requestFlush(rs::kFlushProfilerStop);
  }
}

// ---- Exit and signals ------------------------------------------------------

void finish() {
  if (!g || g->finished.exchange(true)) return;
  // A forked child inherits this handler but not the writer thread or CUPTI.
  if (getpid() != g->pid) return;
  if (g->subscriber) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g->writer->stop();
  const uint64_t refusals = g->pool->refusals();
  const uint64_t buffers = g->writer->buffersCompleted();
  using RV = int (*)(int*);
  int runtime_version = 0;
  if (auto fn = reinterpret_cast<RV>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"))) fn(&runtime_version);
  g->writer->writeNow([&](rs::RecordEncoder& enc) {
    if (refusals > 0) {
      rs::DroppedRecord d{};
      d.count = refusals;
      d.source = rs::kDropBufferCap;
      d.context_id = rs::kNone;
      d.stream_id = rs::kNone;
      enc.write(d);
    }
    rs::ProcessRecord p = processRecord(enc, static_cast<uint32_t>(runtime_version));
    enc.write(p);
    writeEnd(enc, buffers);
  });
  if (refusals > 0) {
    std::fprintf(stderr, "streamscope: %llu activity buffer requests were refused at the cap of %zu buffers; records were dropped (raise STREAMSCOPE_MAX_BUFFERS)\n",
                 static_cast<unsigned long long>(refusals), g->pool->allocated());
  }
  ::close(g->fd);
  log("stream finished: %s", std::to_string(buffers).c_str());
}

int signalIndex(int sig) { return sig == SIGINT ? 0 : 1; }

void onSignal(int sig, siginfo_t* info, void* uctx) {
  // Async-signal-safe only: an atomic store. The writer thread flushes.
  if (g && g->writer) g->writer->signalArrived(sig);
  const struct sigaction& prev = g->previous[signalIndex(sig)];
  // The target had its own handler (Python's KeyboardInterrupt, say): run it
  // now so the target behaves exactly as it would unprofiled.
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uctx);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
    prev.sa_handler(sig);
  }
}

// Called on the writer thread after the flush that a signal triggered.
void afterSignalFlush(int sig) {
  const struct sigaction& prev = g->previous[signalIndex(sig)];
  const bool was_default = !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL;
  if (!was_default) return;
  // The target would have died of this signal: everything delivered is on
  // disk now, so restore the default action and let it die the same way.
  signal(sig, SIG_DFL);
  kill(getpid(), sig);
}

void installSignalHandlers() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction sa = {};
    sa.sa_sigaction = onSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, &g->previous[signalIndex(sig)]);
    if (!(g->previous[signalIndex(sig)].sa_flags & SA_SIGINFO) && g->previous[signalIndex(sig)].sa_handler == SIG_IGN) {
      sigaction(sig, &g->previous[signalIndex(sig)], nullptr);  // ignored before: keep it ignored
    }
  }
}

// ---- Setup ---------------------------------------------------------------------

struct KindToEnable {
  CUpti_ActivityKind kind;
  const char* name;
};

// CONCURRENT_KERNEL, not KERNEL: tracing with KERNEL serializes kernels.
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
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
};

// Writes the End record after a setup failure: the stream then says exactly
// why nothing else follows.
int abandon() {
  g->writer->stop();
  g->writer->writeNow([](rs::RecordEncoder& enc) { writeEnd(enc, 0); });
  ::close(g->fd);
  g->finished = true;
  return 1;  // the target itself must run on, unprofiled
}

int initialize() {
  const char* dir = std::getenv("STREAMSCOPE_OUTPUT_DIR");
  if (!dir || !*dir) {
    std::fprintf(stderr, "streamscope: STREAMSCOPE_OUTPUT_DIR not set; not recording\n");
    return 1;
  }
  g = new Collector();
  g->pid = getpid();
  g->verbose = std::getenv("STREAMSCOPE_LOG") && std::strcmp(std::getenv("STREAMSCOPE_LOG"), "1") == 0;
  g->discard = std::getenv("STREAMSCOPE_DISCARD") && std::strcmp(std::getenv("STREAMSCOPE_DISCARD"), "1") == 0;
  cuptiGetTimestamp(&g->origin_ns);
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  const uint64_t origin_wall = static_cast<uint64_t>(wall.tv_sec) * 1000000000ull + static_cast<uint64_t>(wall.tv_nsec);

  const std::string path = std::string(dir) + "/" + std::to_string(g->pid) + ".ssr";
  g->fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (g->fd < 0) {
    std::fprintf(stderr, "streamscope: cannot create %s: %s; not recording\n", path.c_str(), std::strerror(errno));
    g->finished = true;
    return 1;
  }
  g->pool = std::make_unique<BufferPool>(envSize("STREAMSCOPE_BUFFER_BYTES", 8u << 20), envSize("STREAMSCOPE_MAX_BUFFERS", 64));
  g->writer = std::make_unique<StreamWriter>(g->fd, g->origin_ns, *g->pool);
  g->writer->writeHeader(rs::makeFileHeader(g->origin_ns, origin_wall, static_cast<uint32_t>(g->pid),
                                            g->discard ? static_cast<uint32_t>(rs::kHeaderDiscard) : 0u, kCollectorVersion));
  g->writer->writeNow([](rs::RecordEncoder& enc) {
    rs::ProcessRecord p = processRecord(enc, 0);
    enc.write(p);
  });
  g->writer->setSignalHandler(afterSignalFlush);
  g->writer->start();

  uint32_t version = 0;
  cuptiGetVersion(&version);
  if (version < CUPTI_API_VERSION) {
    errorRecord(rs::kErrorCuptiVersion, "CUPTI " + std::to_string(version) + " is older than the " +
                                            std::to_string(CUPTI_API_VERSION) + " StreamScope was built for; nothing recorded");
    return abandon();
  }

  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "StreamScope";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = sizeof other - 1;
  const CUptiResult sub = cuptiSubscribe_v2(&g->subscriber, onCallback, nullptr, &params);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    errorRecord(rs::kErrorCuptiSubscribe, std::string("another CUPTI client is active in this process (") +
                                              (other[0] ? other : "another profiler, e.g. Nsight Systems") +
                                              "); StreamScope recorded nothing");
    g->subscriber = nullptr;
    return abandon();
  }
  if (sub != CUPTI_SUCCESS) {
    errorRecord(rs::kErrorCupti, "CUPTI subscription failed: " + cuptiError(sub) + "; nothing recorded");
    g->subscriber = nullptr;
    return abandon();
  }
  cuptiEnableCallback(1, g->subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  cuptiEnableCallback(1, g->subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED);
  cuptiEnableCallback(1, g->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);

  const CUptiResult reg = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  if (reg != CUPTI_SUCCESS) {
    errorRecord(rs::kErrorCupti, "cuptiActivityRegisterCallbacks failed: " + cuptiError(reg) + "; nothing recorded");
    return abandon();
  }
  for (const KindToEnable& k : kKinds) {
    const CUptiResult r = cuptiActivityEnable(k.kind);
    if (r != CUPTI_SUCCESS) errorRecord(rs::kErrorActivityEnable, std::string("activity kind ") + k.name + " could not be enabled: " + cuptiError(r));
    else log("enabled %s", k.name);
  }
  const size_t flush_ms = envSize("STREAMSCOPE_FLUSH_MS", 500);
  if (flush_ms > 0) cuptiActivityFlushPeriod(static_cast<uint32_t>(flush_ms));

  // Registered inside cuInit, after the CUDA runtime registered its own
  // teardown, so this runs first: contexts still exist when we flush.
  std::atexit(finish);
  installSignalHandlers();
  return 1;
}

}  // namespace
}  // namespace streamscope

STREAMSCOPE_EXPORT int InitializeInjection(void) {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] { result = streamscope::initialize(); });
  return result;
}
