// streamscope-collector-selftest: the translator and the writer, checked
// without a GPU. CUPTI activity records are built by hand (the CUDA 13
// structs), laid out back to back in pool buffers as CUPTI does, and go
// through ActivityTranslator and StreamWriter into a file that is decoded
// again here. libcupti is needed (cuptiActivityGetNextRecord and
// cuptiGetCallbackName work without a driver); libcuda is not.
//
// Real-GPU behaviour (what CUPTI actually delivers, callbacks, signals in a
// CUDA process) is checked separately on a GPU machine.
//
// NVTX's types only: the selftest calls none of NVTX's functions.
#define NVTX_NO_IMPL
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "activity_translator.h"
#include "buffer_pool.h"
#include "nvtx_default_domain.h"
#include "nvtx_payload.h"
#include "process_env.h"
#include "record_encoder.h"
#include "stream_writer.h"

using namespace streamscope;
using namespace streamscope::rs;

namespace {

int failures = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "selftest: %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

constexpr uint64_t kOrigin = 1763800000000000000ull;

// ---- A minimal reader of the stream ----------------------------------------------

struct Rec {
  Kind kind;
  std::vector<uint8_t> bytes;  // the whole record
  template <class R>
  R as() const {
    R r{};
    std::memcpy(&r, bytes.data(), sizeof r);
    return r;
  }
};

struct Decoded {
  FileHeader header{};
  std::vector<Rec> records;
  std::map<uint32_t, std::string> strings;
  bool clean = false;  // ends exactly at a record boundary
  const Rec* first(Kind k) const {
    for (const Rec& r : records)
      if (r.kind == k) return &r;
    return nullptr;
  }
  size_t count(Kind k) const {
    size_t n = 0;
    for (const Rec& r : records) n += r.kind == k;
    return n;
  }
};

Decoded decode(const std::vector<uint8_t>& b) {
  Decoded d;
  if (b.size() < sizeof(FileHeader)) return d;
  std::memcpy(&d.header, b.data(), sizeof d.header);
  size_t at = d.header.header_bytes;
  while (at + sizeof(RecordHeader) <= b.size()) {
    RecordHeader h;
    std::memcpy(&h, b.data() + at, sizeof h);
    if (h.size < sizeof h || h.size % 8 != 0 || at + h.size > b.size()) return d;
    Rec r{static_cast<Kind>(h.kind), std::vector<uint8_t>(b.begin() + at, b.begin() + at + h.size)};
    if (r.kind == Kind::String) {
      StringRecord s;
      std::memcpy(&s, r.bytes.data(), sizeof s);
      d.strings[s.id] = std::string(reinterpret_cast<const char*>(r.bytes.data()) + sizeof s, s.length);
    }
    d.records.push_back(std::move(r));
    at += h.size;
  }
  d.clean = at == b.size();
  return d;
}

Decoded decodeBytes(const std::vector<uint8_t>& bytes) { return decode(bytes); }

std::vector<uint8_t> readFile(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

// ---- Hand-built CUPTI buffers --------------------------------------------------

struct CuptiBuffer {
  uint8_t* data;
  size_t size = 0;
  template <class T>
  void add(const T& record) {
    std::memcpy(data + size, &record, sizeof record);
    size += sizeof record;
  }
};

CUpti_ActivityKernel10 kernel(uint64_t start, uint64_t end, const char* name, uint32_t corr) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 13;
  k.correlationId = corr;
  k.gridX = 64;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.localMemoryPerThread = 8;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  k.clusterX = k.clusterY = k.clusterZ = 1;
  k.channelID = 5;
  k.graphId = 0;
  k.graphNodeId = 0;
  k.name = name;
  return k;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint32_t corr) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = start + 1500;
  a.processId = 77;
  a.threadId = 4321;
  a.correlationId = corr;
  a.returnValue = 0;
  return a;
}

// ---- Translator ------------------------------------------------------------------

// One record of every kind the translator handles (kernels, API calls,
// copies, a memset, a synchronization, a CUDA event, a marker range, an
// overhead) and one it does not; the kernels named `name`.
void fillTranslatorBuffer(CuptiBuffer& b, char* name) {
  b.add(kernel(kOrigin + 1000, kOrigin + 3000, name, 1));
  b.add(kernel(kOrigin - 500, kOrigin + 10, name, 2));  // before the origin: negative
  b.add(kernel(kOrigin + 4000, 0, name, 3));            // incomplete: no end
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kOrigin + 900, 1));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, kOrigin + 950, 4));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, kOrigin + 960, 4));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kOrigin + 990, 5));

  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = kOrigin + 5000;
  m.end = kOrigin + 6000;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 14;
  m.correlationId = 4;
  m.channelID = 3;
  b.add(m);

  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 4096;
  p.start = kOrigin + 7000;
  p.end = kOrigin + 7100;
  p.deviceId = 0;
  p.contextId = 1;
  p.streamId = 15;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.correlationId = 6;
  b.add(p);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xab;
  s.bytes = 512;
  s.start = kOrigin + 8000;
  s.end = kOrigin + 8100;
  s.streamId = 13;
  s.contextId = 1;
  s.correlationId = 7;
  s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  b.add(s);

  CUpti_ActivitySynchronization2 sy{};
  sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sy.start = kOrigin + 9000;
  sy.end = kOrigin + 9500;
  sy.contextId = 1;
  sy.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sy.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sy.correlationId = 8;
  b.add(sy);

  CUpti_ActivityCudaEvent2 ev{};
  ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  ev.correlationId = 9;
  ev.contextId = 1;
  ev.streamId = 13;
  ev.eventId = 3;
  ev.deviceId = 0;
  ev.deviceTimestamp = 0;  // not collected
  b.add(ev);

  CUpti_ActivityMarker2 mk{};
  mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
  mk.flags = static_cast<CUpti_ActivityFlag>(CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB << 8);
  mk.timestamp = kOrigin + 100;
  mk.id = 11;
  mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  mk.objectId.pt.processId = 77;
  mk.objectId.pt.threadId = 4321;
  mk.name = "step 1";
  mk.domain = nullptr;
  b.add(mk);
  CUpti_ActivityMarker2 mk_end = mk;
  mk_end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  mk_end.timestamp = kOrigin + 20000;
  mk_end.name = nullptr;
  b.add(mk_end);

  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  o.objectId.pt.processId = 77;
  o.start = kOrigin + 30000;
  o.end = kOrigin + 31000;
  b.add(o);

  CUpti_ActivityContext3 unknown{};  // a kind the translator does not handle
  unknown.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  b.add(unknown);
}

// The records testTranslator's buffers became, field by field.
void checkTranslatedRecords(const Decoded& d) {
  std::vector<KernelRecord> kernels;
  std::vector<ApiCallRecord> apis;
  for (const Rec& r : d.records) {
    if (r.kind == Kind::Kernel) kernels.push_back(r.as<KernelRecord>());
    if (r.kind == Kind::ApiCall) apis.push_back(r.as<ApiCallRecord>());
  }
  if (kernels.size() == 3) {
    CHECK(kernels[0].start_ns == 1000 && kernels[0].end_ns == 3000);
    CHECK(kernels[1].start_ns == -500 && kernels[1].end_ns == 10);
    CHECK(kernels[0].name_sid == kernels[1].name_sid);
    CHECK(d.strings.at(kernels[0].name_sid) == "void k<1>(float*)");
    CHECK(d.strings.at(kernels[2].name_sid) == "void k<2>(float*)");
    CHECK(kernels[0].grid_x == 64 && kernels[0].grid_y == 2 && kernels[0].block_x == 256);
    CHECK(kernels[0].registers_per_thread == 40 && kernels[0].dynamic_shared_bytes == 2048);
    CHECK(kernels[0].static_shared_bytes == 1024 && kernels[0].channel_id == 5 && kernels[0].stream_id == 13);
  }
  if (apis.size() == 4) {
    CHECK(d.strings.at(apis[0].name_sid) == "cudaLaunchKernel");
    CHECK(d.strings.at(apis[1].name_sid) == "cudaMemcpyAsync_ptsz");
    CHECK(d.strings.at(apis[2].name_sid) == "cuMemcpyHtoDAsync_v2");
    CHECK(apis[0].name_sid == apis[3].name_sid);
    CHECK(apis[0].domain == kApiRuntime && apis[2].domain == kApiDriver);
    CHECK(apis[0].thread_id == 4321 && apis[0].correlation_id == 1 && apis[0].start_ns == 900 && apis[0].end_ns == 2400);
  }
  for (const Rec& r : d.records) {
    if (r.kind == Kind::Memcpy) {
      const auto mc = r.as<MemcpyRecord>();
      if (mc.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
        CHECK(mc.src_device_id == 0 && mc.dst_device_id == 1 && mc.bytes == 4096 && mc.flags == 0);
      } else {
        CHECK(mc.copy_kind == 1 && mc.src_kind == 2 && mc.dst_kind == 3 && mc.flags == 1 && mc.bytes == (1u << 20));
        CHECK(mc.src_device_id == 0 && mc.dst_device_id == 0 && mc.stream_id == 14 && mc.start_ns == 5000);
      }
    }
  }
  if (const Rec* r = d.first(Kind::Memset)) {
    const auto ms = r->as<MemsetRecord>();
    CHECK(ms.value == 0xab && ms.bytes == 512 && ms.flags == 1 && ms.memory_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  } else CHECK(!"memset");
  if (const Rec* r = d.first(Kind::Synchronization)) {
    const auto sr = r->as<SynchronizationRecord>();
    CHECK(sr.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE && sr.stream_id == kNone && sr.event_id == kNone);
    CHECK(sr.start_ns == 9000 && sr.end_ns == 9500 && sr.correlation_id == 8);
  } else CHECK(!"sync");
  if (const Rec* r = d.first(Kind::CudaEvent)) {
    const auto er = r->as<CudaEventRecord>();
    CHECK(er.device_ns == INT64_MIN && er.event_id == 3 && er.stream_id == 13);
  } else CHECK(!"event");
  std::vector<MarkerRecord> markers;
  for (const Rec& r : d.records)
    if (r.kind == Kind::Marker) markers.push_back(r.as<MarkerRecord>());
  CHECK(markers.size() == 2);
  if (markers.size() == 2) {
    CHECK(markers[0].flags == kMarkerStart && markers[0].thread_id == 4321 && markers[0].domain_sid == 0);
    CHECK(d.strings.at(markers[0].name_sid) == "step 1" && markers[0].timestamp_ns == 100 && markers[0].id == 11);
    CHECK(markers[1].flags == kMarkerEnd && markers[1].name_sid == 0 && markers[1].id == 11);
  }
  if (const Rec* r = d.first(Kind::Overhead)) {
    const auto ov = r->as<OverheadRecord>();
    CHECK(ov.object_kind == CUPTI_ACTIVITY_OBJECT_PROCESS && ov.object_id == 77 && ov.start_ns == 30000);
  } else CHECK(!"overhead");
  // Every String precedes its first use.
  std::map<uint32_t, bool> seen;
  for (const Rec& r : d.records) {
    if (r.kind == Kind::String) seen[r.as<StringRecord>().id] = true;
    if (r.kind == Kind::Kernel) CHECK(seen[r.as<KernelRecord>().name_sid]);
    if (r.kind == Kind::ApiCall) CHECK(seen[r.as<ApiCallRecord>().name_sid]);
  }
}

void testTranslator() {
  std::vector<uint8_t> out;
  RecordEncoder enc(&out);
  ActivityTranslator t(enc, kOrigin);
  alignas(64) static uint8_t storage[1 << 16];
  CuptiBuffer b{storage};

  char name[] = "void k<1>(float*)";
  fillTranslatorBuffer(b, name);
  t.translateBuffer(b.data, b.size);
  // The same name pointer with new content (a module unloaded, memory reused).
  std::strcpy(name, "void k<2>(float*)");
  b.size = 0;
  b.add(kernel(kOrigin + 40000, kOrigin + 41000, name, 12));
  t.translateBuffer(b.data, b.size);

  CHECK(t.badBuffers() == 0);
  CHECK(t.unknownRecords() == 1);
  CHECK(t.incompleteRecords() == 1);
  CHECK(t.recordsTranslated() == 15);

  // Decode (prepend a header for the reader).
  std::vector<uint8_t> file(sizeof(FileHeader));
  const FileHeader h = makeFileHeader(kOrigin, 0, 1, 0, 100);
  std::memcpy(file.data(), &h, sizeof h);
  file.insert(file.end(), out.begin(), out.end());
  const Decoded d = decodeBytes(file);
  CHECK(d.clean);
  CHECK(d.count(Kind::Kernel) == 3);
  CHECK(d.count(Kind::ApiCall) == 4);
  CHECK(d.count(Kind::Memcpy) == 2);
  checkTranslatedRecords(d);
}

// ---- Writer ------------------------------------------------------------------------

std::string tempPath(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/streamscope-selftest-" + std::to_string(getpid()) + "-" + name + ".ssr";
}

void fillBuffer(CuptiBuffer& b, uint32_t first_corr, int launches) {
  for (int i = 0; i < launches; i++) {
    b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kOrigin + 4000ull * (first_corr + i),
              first_corr + i));
    b.add(kernel(kOrigin + 4000ull * (first_corr + i) + 6000, kOrigin + 4000ull * (first_corr + i) + 7000, "empty", first_corr + i));
  }
}

void testWriter() {
  const std::string path = tempPath("writer");
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  CHECK(fd >= 0);
  BufferPool pool(1 << 16, 4);
  StreamWriter w(fd, path, kOrigin, 20, pool);
  CHECK(w.writeHeader(makeFileHeader(kOrigin, 1, 42, 0, 100)));
  w.writeNow([](RecordEncoder& enc) {
    ErrorRecord e{};
    e.code = kErrorActivityEnable;
    e.message_sid = enc.intern("first");
    enc.write(e);
  });
  std::atomic<int> after_signal{0};
  w.start([&](int sig) { after_signal = sig; });

  // 10 buffers of 100 launches each, through a pool of 4: buffers must come back.
  for (int i = 0; i < 10; i++) {
    uint8_t* buf = nullptr;
    for (int tries = 0; tries < 1000 && !(buf = pool.acquire()); tries++) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(buf != nullptr);
    if (!buf) break;
    CuptiBuffer b{buf};
    fillBuffer(b, static_cast<uint32_t>(1 + i * 100), 100);
    w.enqueueBuffer(buf, b.size);
    w.enqueue([i](RecordEncoder& enc) {
      DroppedRecord d{};
      d.count = static_cast<uint64_t>(i);
      d.source = kDropCupti;
      d.context_id = kNone;
      d.stream_id = kNone;
      enc.write(d);
    });
  }
  // A signal: flushed without CUPTI (CUDA never became ready here), then the callback.
  w.signalArrived(SIGTERM);
  for (int i = 0; i < 100 && after_signal == 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(after_signal == SIGTERM);
  // Periodic flushes once CUDA is ready (cuptiActivityFlushAll fails without a driver: harmless).
  w.markCudaReady();
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  w.stop();
  w.drainNow();
  CHECK(pool.outstanding() == 0);
  CHECK(pool.allocated() <= 4);
  CHECK(w.buffersCompleted() == 10);
  const bool final_ok = w.writeFinal([&](RecordEncoder& enc) {
    EndRecord e{};
    e.reason = 1;
    e.records_written = w.recordsInFile();
    e.buffers_completed = w.buffersCompleted();
    enc.write(e);
  });
  CHECK(final_ok);
  w.close();
  w.enqueueBuffer(pool.acquire(), 0);  // after close: straight back to the pool
  CHECK(pool.outstanding() == 0);

  const Decoded d = decode(readFile(path));
  CHECK(d.clean);
  CHECK(d.header.pid == 42 && d.header.origin_ns == kOrigin);
  CHECK(d.count(Kind::Kernel) == 1000);
  CHECK(d.count(Kind::ApiCall) == 1000);
  CHECK(d.count(Kind::Dropped) == 10);
  CHECK(d.count(Kind::End) == 1);
  CHECK(d.records.back().kind == Kind::End);
  bool signal_flush = false, periodic_flush = false;
  for (const Rec& r : d.records) {
    if (r.kind != Kind::Flush) continue;
    const auto f = r.as<FlushRecord>();
    if (f.reason == kFlushSignal && f.signal == SIGTERM) signal_flush = true;
    if (f.reason == kFlushPeriodic) periodic_flush = true;
  }
  CHECK(signal_flush);
  CHECK(periodic_flush);
  const auto end = d.records.back().as<EndRecord>();
  CHECK(end.records_written == d.records.size() - 1);
  CHECK(end.buffers_completed == 10);
  // Kernels in correlation order: the queue keeps CUPTI's delivery order.
  uint32_t last = 0;
  bool ordered = true;
  for (const Rec& r : d.records) {
    if (r.kind != Kind::Kernel) continue;
    const uint32_t c = r.as<KernelRecord>().correlation_id;
    ordered = ordered && c == last + 1;
    last = c;
  }
  CHECK(ordered);
  std::remove(path.c_str());
}

// The disk fills up (RLIMIT_FSIZE stands in for it, in a child process):
// one stderr line, the file cut back to whole records, and at exit an
// Error, a Dropped (kDropWriter) and the End if they fit.
void testOutputError() {
  const std::string path = tempPath("full");
  const pid_t child = fork();
  if (child == 0) {
    // The writer's one stderr line about the failure is expected here.
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    signal(SIGXFSZ, SIG_IGN);  // write(2) then fails with EFBIG instead of killing
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) _exit(3);
    BufferPool pool(1 << 20, 2);
    StreamWriter w(fd, path, kOrigin, 0, pool);
    if (!w.writeHeader(makeFileHeader(kOrigin, 1, 43, 0, 100))) _exit(4);
    // Room for the first buffer's records, not for the second.
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 150 * 1024;
    setrlimit(RLIMIT_FSIZE, &lim);
    w.start(nullptr);
    for (int i = 0; i < 3; i++) {
      uint8_t* buf = nullptr;
      while (!(buf = pool.acquire())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      CuptiBuffer b{buf};
      fillBuffer(b, static_cast<uint32_t>(1 + i * 1000), 1000);  // ~160 KB in the stream each
      w.enqueueBuffer(buf, b.size);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // one batch each
    }
    w.stop();
    w.drainNow();
    // Make room again, as if the disk had been cleaned up, for the final records.
    lim.rlim_cur = lim.rlim_max = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);
    const uint64_t lost = w.recordsLost();
    const bool ok = w.writeFinal([&](RecordEncoder& enc) {
      EndRecord e{};
      e.reason = 1;
      e.records_written = w.recordsInFile();
      enc.write(e);
    });
    w.close();
    _exit(ok && lost > 0 && w.outputFailed() == false ? 0 : 5);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const Decoded d = decode(readFile(path));
  CHECK(d.clean);
  CHECK(d.count(Kind::Error) >= 1);
  bool writer_drop = false;
  for (const Rec& r : d.records) {
    if (r.kind == Kind::Dropped && r.as<DroppedRecord>().source == kDropWriter) writer_drop = r.as<DroppedRecord>().count > 0;
    if (r.kind == Kind::Error) CHECK(r.as<ErrorRecord>().code == kErrorOutput);
  }
  CHECK(writer_drop);
  CHECK(!d.records.empty() && d.records.back().kind == Kind::End);
  if (!d.records.empty() && d.records.back().kind == Kind::End) {
    CHECK(d.records.back().as<EndRecord>().records_written == d.records.size() - 1);
  }
  // Every string referenced is defined in the file.
  for (const Rec& r : d.records) {
    if (r.kind == Kind::ApiCall) CHECK(d.strings.count(r.as<ApiCallRecord>().name_sid) == 1);
    if (r.kind == Kind::Error) CHECK(d.strings.count(r.as<ErrorRecord>().message_sid) == 1);
  }
  std::remove(path.c_str());
}

// NVTX's domain API on the default domain becomes our own Marker records;
// named domains are left to CUPTI.
void testNvtxDefaultDomain() {
  NvtxDefaultDomain nvtx;
  NvtxDefaultDomain::Marker m;
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step";
  auto call = [&](CUpti_CallbackId cbid, const void* params, const void* ret, int64_t t, uint32_t tid) {
    CUpti_NvtxData data{"", params, ret};
    return nvtx.onCallback(cbid, data, t, tid, &m);
  };
  // Push on a named domain: CUPTI's business.
  nvtxDomainRangePushEx_params named{reinterpret_cast<nvtxDomainHandle_t>(0x10), {&a}};
  CHECK(!call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &named, nullptr, 1, 7));
  // Nested pushes on two threads, popped in order.
  nvtxDomainRangePushEx_params push{nullptr, {&a}};
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &push, nullptr, 10, 7));
  const uint32_t outer = m.id;
  CHECK(m.flags == kMarkerStart && m.name == "step" && m.timestamp_ns == 10 && m.thread_id == 7);
  CHECK(outer >= NvtxDefaultDomain::kOwnIdBase);
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"f\u00fcr";
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &push, nullptr, 11, 7));
  const uint32_t inner = m.id;
  CHECK(m.name == "f\xc3\xbcr" && inner != outer);
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &push, nullptr, 12, 8));
  const uint32_t other = m.id;
  nvtxDomainRangePop_params pop{nullptr};
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, nullptr, 20, 7));
  CHECK(m.id == inner && m.flags == kMarkerEnd && m.name.empty());
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, nullptr, 21, 8));
  CHECK(m.id == other);
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, nullptr, 22, 7));
  CHECK(m.id == outer);
  CHECK(!call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pop, nullptr, 23, 7));  // nothing of ours open
  nvtxDomainRangePop_params named_pop{reinterpret_cast<nvtxDomainHandle_t>(0x10)};
  CHECK(!call(CUPTI_CBID_NVTX_nvtxDomainRangePop, &named_pop, nullptr, 24, 7));
  // Start/end, paired through the id NVTX returned, on another thread.
  nvtxStringHandle_t handle = reinterpret_cast<nvtxStringHandle_t>(0x99);
  nvtxDomainRegisterStringA_params reg{nullptr, "registered"};
  CHECK(!call(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &reg, &handle, 29, 7));
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = handle;
  nvtxDomainRangeStartEx_params start{nullptr, {&a}};
  const nvtxRangeId_t nvtx_id = 4242;
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &start, &nvtx_id, 30, 7));
  const uint32_t started = m.id;
  CHECK(m.name == "registered" && m.flags == kMarkerStart);
  nvtxDomainRangeEnd_params end{nullptr, {4242}};
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &end, nullptr, 40, 8));
  CHECK(m.id == started && m.flags == kMarkerEnd && m.thread_id == 8);
  CHECK(!call(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &end, nullptr, 41, 8));  // ended already
  // A mark.
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "here";
  nvtxDomainMarkEx_params mark{nullptr, {&a}};
  CHECK(call(CUPTI_CBID_NVTX_nvtxDomainMarkEx, &mark, nullptr, 50, 7));
  CHECK(m.flags == kMarkerInstantaneous && m.name == "here");
}

// ---- NVTX payloads ------------------------------------------------------------------
//
// NCCL 2.28.9's schemas (src/include/nvtx_payload_schemas.h, nvtx.h,
// init_nvtx.cc), registered as NCCL registers them: static schemas of the
// structs below with offsetof offsets, the reduction an enum of int size,
// all in domain "NCCL". CUPTI hands the registrations back in these
// structs (cuptiActivityGetNvtxExtPayloadAttr), so the selftest's registry
// converts them with the collector's own schemaOf / enumOf.

constexpr uint64_t kStatic = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START;
constexpr uint64_t kNcclAllReduce = kStatic + 5;  // NVTX_SID_AllReduce
constexpr uint64_t kNcclSend = kStatic + 9;       // NVTX_SID_Send
constexpr uint64_t kNcclCommInit = kStatic + 11;  // NVTX_SID_CommInitRankConfig
constexpr uint64_t kNcclRedOp = kStatic + 20;     // NVTX_PAYLOAD_ENTRY_NCCL_REDOP in 2.28.9
constexpr uint64_t kNatural = kStatic + 100;      // CUPTI's sample: offsets left to natural alignment
constexpr uint64_t kAwkward = kStatic + 101;      // entries that cannot or must not be decoded
constexpr uint64_t kUnion = kStatic + 102;
constexpr uint64_t kWide = kStatic + 103;  // more entries than a record carries
constexpr uint32_t kNcclDomain = 7;        // CUPTI's id of the domain

enum NcclRedOp { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };
struct NcclAllReduce {
  uint64_t comm;
  size_t bytes;
  NcclRedOp op;
};
struct NcclSendRecv {
  uint64_t comm;
  size_t bytes;
  int peer;
};
struct NcclCommInitRank {
  uint64_t newcomm;
  int nranks;
  int myrank;
  int cudaDev;
};
struct Natural {  // CUPTI's cupti_nvtx_ext_payload sample: an enum, then u32, int, size_t
  int op;
  uint32_t device;
  int elements;
  size_t bytes;
};

constexpr uint64_t kNcclSchemaFields = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
                                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;

nvtxPayloadSchemaAttr_t schemaAttr(const nvtxPayloadSchemaEntry_t* entries, size_t n, size_t size, uint64_t id,
                                   uint64_t type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC) {
  nvtxPayloadSchemaAttr_t a{};
  a.fieldMask = kNcclSchemaFields;
  a.type = type;
  a.flags = NVTX_PAYLOAD_SCHEMA_FLAG_NONE;
  a.entries = entries;
  a.numEntries = n;
  a.payloadStaticSize = size;
  a.schemaId = id;
  return a;
}

// The registry as CUPTI would answer for the NCCL domain.
nvtx_payload::Registration ncclRegistration(uint32_t domain, uint64_t id) {
  static const nvtxPayloadSchemaEntry_t all_reduce[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(NcclAllReduce, comm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(NcclAllReduce, bytes), nullptr, nullptr},
      {0, kNcclRedOp, "Reduction operation", nullptr, 0, offsetof(NcclAllReduce, op), nullptr, nullptr}};
  static const nvtxPayloadSchemaEntry_t send_recv[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(NcclSendRecv, comm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(NcclSendRecv, bytes), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Peer rank", nullptr, 0, offsetof(NcclSendRecv, peer), nullptr, nullptr}};
  static const nvtxPayloadSchemaEntry_t comm_init[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(NcclCommInitRank, newcomm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "No. of ranks", nullptr, 0, offsetof(NcclCommInitRank, nranks), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Rank", nullptr, 0, offsetof(NcclCommInitRank, myrank), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "CUDA device", nullptr, 0, offsetof(NcclCommInitRank, cudaDev), nullptr, nullptr}};
  static const nvtxPayloadSchemaEntry_t natural[] = {{0, kNcclRedOp, "VectorAddOp", nullptr, 0, 0, nullptr, nullptr},
                                                     {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "Device ID", nullptr, 0, 0, nullptr, nullptr},
                                                     {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "No. of elements", nullptr, 0, 0, nullptr, nullptr},
                                                     {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Size of vector", nullptr, 0, 0, nullptr, nullptr}};
  // Skipped, each for its reason, while the entries after them are still
  // placed where they belong; the last lies past the end of any payload.
  static const nvtxPayloadSchemaEntry_t awkward[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "first", nullptr, 0, 0, nullptr, nullptr},            // 0..4
      {0, NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS, "pointer value", nullptr, 0, 0, nullptr, nullptr},  // 8..16, skipped
      {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_UINT16, "array", nullptr, 3, 0, nullptr, nullptr},  // 16..22
      {0, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "name", nullptr, 5, 0, nullptr, nullptr},                                         // 22..27
      {NVTX_PAYLOAD_ENTRY_FLAG_HIDE, NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "hidden", nullptr, 0, 0, nullptr, nullptr},              // 27
      {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, nullptr, nullptr, 0, 0, nullptr, nullptr},  // 32..40, unnamed
      {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "terminated", nullptr, 0, 0, nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT16, "lost after it", nullptr, 0, 0, nullptr, nullptr},  // no offset: unplaceable
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT16, "own offset", nullptr, 0, 48, nullptr, nullptr},    // 48..50
      {0, kStatic + 999, "unregistered type", nullptr, 0, 52, nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, "float", nullptr, 0, 56, nullptr, nullptr},  // 56..60
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "past the end", nullptr, 0, 1ull << 62, nullptr, nullptr}};
  static const nvtxPayloadSchemaEntry_t one_int[] = {{0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "member", nullptr, 0, 0, nullptr, nullptr}};
  static const std::vector<nvtxPayloadSchemaEntry_t> wide = [] {
    std::vector<nvtxPayloadSchemaEntry_t> w(
        40, nvtxPayloadSchemaEntry_t{0, NVTX_PAYLOAD_ENTRY_TYPE_UINT8, nullptr, nullptr, 0, 0, nullptr, nullptr});
    static const std::string long_name = std::string(150, 'n') + "\xc3\xbc";  // cut inside nothing: 128 bytes of 'n'
    w[0].name = long_name.c_str();
    return w;
  }();
  static const nvtxPayloadEnum_t red_ops[] = {
      {"Sum", ncclSum, 0}, {"Product", ncclProd, 0}, {"Max", ncclMax, 0}, {"Min", ncclMin, 0}, {"Avg", ncclAvg, 0}};

  nvtx_payload::Registration r;
  if (domain != kNcclDomain) return r;
  auto schema = [&](const nvtxPayloadSchemaAttr_t& a) {
    r.kind = nvtx_payload::Registration::kSchema;
    r.schema = nvtx_payload::schemaOf(a);
  };
  switch (id) {
    case kNcclAllReduce: schema(schemaAttr(all_reduce, 3, sizeof(NcclAllReduce), id)); break;
    case kNcclSend: schema(schemaAttr(send_recv, 3, sizeof(NcclSendRecv), id)); break;
    case kNcclCommInit: schema(schemaAttr(comm_init, 4, sizeof(NcclCommInitRank), id)); break;
    case kNatural: schema(schemaAttr(natural, 4, sizeof(Natural), id)); break;
    case kAwkward: schema(schemaAttr(awkward, sizeof awkward / sizeof awkward[0], 64, id)); break;
    case kUnion: schema(schemaAttr(one_int, 1, 4, id, NVTX_PAYLOAD_SCHEMA_TYPE_UNION)); break;
    case kWide: schema(schemaAttr(wide.data(), wide.size(), wide.size(), id)); break;
    case kNcclRedOp: {
      nvtxPayloadEnumAttr_t e{};
      e.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE |
                    NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID;
      e.entries = red_ops;
      e.numEntries = 5;
      e.sizeOfEnum = sizeof(NcclRedOp);
      e.schemaId = id;
      r.kind = nvtx_payload::Registration::kEnum;
      r.enumeration = nvtx_payload::enumOf(e);
      break;
    }
    default: break;
  }
  return r;
}

// A MARKER_DATA record as CUPTI delivers one: the payload copied with malloc, for the translator to free.
template <class T>
CUpti_ActivityMarkerData2 markerData(uint32_t marker_id, uint64_t schema_id, const T& payload, size_t size = sizeof(T),
                                     uint32_t domain = kNcclDomain) {
  auto* blob = static_cast<uint8_t*>(std::calloc(1, sizeof(T)));
  std::memcpy(blob, &payload, sizeof(T));
  auto* data = static_cast<nvtxPayloadData_t*>(std::malloc(sizeof(nvtxPayloadData_t)));
  *data = nvtxPayloadData_t{schema_id, size, blob};
  CUpti_ActivityMarkerData2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  m.id = marker_id;
  m.payloadKind = CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD;
  m.payload.metricValueNvtxExtendedPayload = reinterpret_cast<uintptr_t>(data);
  m.cuptiDomainId = domain;
  return m;
}

struct DecodedField {
  std::string name;
  uint32_t kind;
  uint64_t value;
  std::string label;
  uint32_t entry;
  bool operator==(const DecodedField& o) const {
    return name == o.name && kind == o.kind && value == o.value && label == o.label && entry == o.entry;
  }
};

// Every MarkerPayload record of a stream: marker id → its fields.
std::map<uint32_t, std::vector<DecodedField>> payloadsOf(const Decoded& d, std::map<uint32_t, uint64_t>* schemas = nullptr) {
  std::map<uint32_t, std::vector<DecodedField>> out;
  for (const Rec& r : d.records) {
    if (r.kind != Kind::MarkerPayload) continue;
    const auto p = r.as<MarkerPayloadRecord>();
    CHECK(r.bytes.size() == sizeof p + p.field_count * sizeof(MarkerPayloadField) && p.h.size == r.bytes.size());
    if (schemas) (*schemas)[p.marker_id] = p.schema_id;
    auto& fields = out[p.marker_id];
    for (uint32_t i = 0; i < p.field_count; i++) {
      MarkerPayloadField f;
      std::memcpy(&f, r.bytes.data() + sizeof p + i * sizeof f, sizeof f);
      fields.push_back(
          {f.name_sid ? d.strings.at(f.name_sid) : "", f.kind, f.value, f.label_sid ? d.strings.at(f.label_sid) : "", f.entry_index});
    }
  }
  return out;
}

uint64_t bitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

void testNvtxPayloads() {
  std::vector<uint8_t> out(sizeof(FileHeader));
  const FileHeader h = makeFileHeader(kOrigin, 0, 1, 0, 100);
  std::memcpy(out.data(), &h, sizeof h);
  std::vector<uint8_t> records;
  RecordEncoder enc(&records);
  ActivityTranslator t(enc, kOrigin);
  t.setPayloadRegistrations(ncclRegistration);
  alignas(64) static uint8_t storage[1 << 14];
  CuptiBuffer b{storage};

  const uint64_t comm = 0xfedcba9876543210ull;  // a communicator hash above 2^53
  b.add(markerData(1, kNcclAllReduce, NcclAllReduce{comm, 16777216, ncclMax}));
  b.add(markerData(2, kNcclSend, NcclSendRecv{comm, 4096, -1}));
  b.add(markerData(3, kNcclCommInit, NcclCommInitRank{comm, 2, 1, 0}));
  b.add(markerData(4, kNatural, Natural{ncclAvg, 3, -7, size_t{1} << 40}));
  NcclAllReduce unknown_op{comm, 8, static_cast<NcclRedOp>(77)};
  b.add(markerData(5, kNcclAllReduce, unknown_op));
  // Cut short by the program: only what lies wholly inside is read.
  b.add(markerData(6, kNcclAllReduce, NcclAllReduce{comm, 99, ncclSum}, 12));
  uint8_t awkward[64] = {};
  const int32_t first = -5;
  const double unnamed = 2.5;
  const int16_t own = -300;
  const float fl = 0.25f;
  std::memcpy(awkward, &first, 4);
  std::memcpy(awkward + 32, &unnamed, 8);
  std::memcpy(awkward + 48, &own, 2);
  std::memcpy(awkward + 56, &fl, 4);
  b.add(markerData(7, kAwkward, awkward));
  uint8_t wide[40];
  for (int i = 0; i < 40; i++) wide[i] = static_cast<uint8_t>(i);
  b.add(markerData(8, kWide, wide));
  const uint64_t lone = 12345;
  b.add(markerData(9, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, lone));  // a predefined type as the schema: one unnamed value
  // Not decodable, each freed all the same: unknown schema, unknown domain,
  // a union, a size left to the tool, nothing.
  b.add(markerData(20, kStatic + 4242, lone));
  b.add(markerData(21, kNcclAllReduce, NcclAllReduce{comm, 1, ncclSum}, sizeof(NcclAllReduce), 99));
  b.add(markerData(22, kUnion, first));
  b.add(markerData(23, kNcclAllReduce, NcclAllReduce{comm, 1, ncclSum}, SIZE_MAX));
  b.add(markerData(24, kNcclAllReduce, NcclAllReduce{comm, 1, ncclSum}, 0));
  // Other marker data (a color) and a null payload: no record, nothing counted.
  CUpti_ActivityMarkerData2 color{};
  color.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  color.id = 30;
  color.payloadKind = CUPTI_METRIC_VALUE_KIND_DOUBLE;
  color.color = 0xff00ff00;
  b.add(color);
  CUpti_ActivityMarkerData2 null_payload = color;
  null_payload.payloadKind = CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD;
  null_payload.payload.metricValueNvtxExtendedPayload = 0;
  b.add(null_payload);
  t.translateBuffer(storage, b.size);

  out.insert(out.end(), records.begin(), records.end());
  const Decoded d = decode(out);
  CHECK(d.clean);
  CHECK(t.payloadsWritten() == 9);
  CHECK(t.payloadsUndecoded() == 5);
  std::map<uint32_t, uint64_t> schemas;
  const auto p = payloadsOf(d, &schemas);
  CHECK(p.size() == 9);
  CHECK(schemas[1] == kNcclAllReduce && schemas[9] == NVTX_PAYLOAD_ENTRY_TYPE_UINT64);
  using F = DecodedField;
  const uint32_t S = kPayloadSigned, U = kPayloadUnsigned, E = kPayloadEnum, D = kPayloadFloat;
  CHECK(p.at(1) == (std::vector<F>{{"NCCL communicator ID", U, comm, "", 0},
                                   {"Message size [bytes]", U, 16777216, "", 1},
                                   {"Reduction operation", E, ncclMax, "Max", 2}}));
  CHECK(p.at(2) == (std::vector<F>{{"NCCL communicator ID", U, comm, "", 0},
                                   {"Message size [bytes]", U, 4096, "", 1},
                                   {"Peer rank", S, static_cast<uint64_t>(-1), "", 2}}));
  CHECK(p.at(3) ==
        (std::vector<F>{
            {"NCCL communicator ID", U, comm, "", 0}, {"No. of ranks", S, 2, "", 1}, {"Rank", S, 1, "", 2}, {"CUDA device", S, 0, "", 3}}));
  CHECK(p.at(4) == (std::vector<F>{{"VectorAddOp", E, ncclAvg, "Avg", 0},
                                   {"Device ID", U, 3, "", 1},
                                   {"No. of elements", S, static_cast<uint64_t>(-7), "", 2},
                                   {"Size of vector", U, uint64_t{1} << 40, "", 3}}));
  CHECK(p.at(5).size() == 3 && p.at(5)[2] == (F{"Reduction operation", E, 77, "", 2}));
  CHECK(p.at(6) == (std::vector<F>{{"NCCL communicator ID", U, comm, "", 0}}));
  CHECK(p.at(7) == (std::vector<F>{{"first", S, static_cast<uint64_t>(-5), "", 0},
                                   {"", D, bitsOf(2.5), "", 5},
                                   {"own offset", S, static_cast<uint64_t>(-300), "", 8},
                                   {"float", D, bitsOf(0.25), "", 10}}));
  CHECK(p.at(8).size() == kMarkerPayloadMaxFields && p.at(8)[31] == (F{"", U, 31, "", 31}));
  CHECK(p.at(8)[0].name == std::string(nvtx_payload::kMaxNameBytes, 'n'));
  CHECK(p.at(9) == (std::vector<F>{{"", U, 12345, "", 0}}));

  // The registry asks once per (domain, id), unknown ids included.
  std::map<std::pair<uint32_t, uint64_t>, int> asked;
  nvtx_payload::Registry counting([&](uint32_t domain, uint64_t id) {
    ++asked[{domain, id}];
    return ncclRegistration(domain, id);
  });
  std::vector<nvtx_payload::Field> fields;
  const NcclAllReduce ar{comm, 64, ncclSum};
  for (int i = 0; i < 3; i++) CHECK(nvtx_payload::decode(counting, kNcclDomain, kNcclAllReduce, &ar, sizeof ar, &fields));
  CHECK(!nvtx_payload::decode(counting, kNcclDomain, kStatic + 4242, &ar, sizeof ar, &fields) && fields.empty());
  CHECK(!nvtx_payload::decode(counting, kNcclDomain, kStatic + 4242, &ar, sizeof ar, &fields));
  const std::map<std::pair<uint32_t, uint64_t>, int> once = {
      {{kNcclDomain, kNcclAllReduce}, 1}, {{kNcclDomain, kNcclRedOp}, 1}, {{kNcclDomain, kStatic + 4242}, 1}};
  CHECK(asked == once);
  CHECK(!nvtx_payload::decode(counting, kNcclDomain, kNcclAllReduce, nullptr, sizeof ar, &fields));
  // Null pointers in a registration read as empty.
  nvtxPayloadSchemaAttr_t no_entries = schemaAttr(nullptr, 5, 8, kStatic);
  CHECK(nvtx_payload::schemaOf(no_entries).entries.empty());
  nvtxPayloadSchemaEntry_t nameless{0, NVTX_PAYLOAD_ENTRY_TYPE_INT, nullptr, nullptr, 0, 0, nullptr, nullptr};
  nvtxPayloadSchemaAttr_t one = schemaAttr(&nameless, 1, 4, kStatic);
  CHECK(nvtx_payload::schemaOf(one).entries.at(0).name.empty());
}

// The launcher variables: only process_env.h's names, in its order, each
// that is set (empty included), values cut at kProcessEnvValueBytes.
void testProcessEnv() {
  const std::string long_value(kProcessEnvValueBytes + 100, 'x');
  const std::map<std::string, std::string> env = {
      {"WORLD_SIZE", "8"}, {"RANK", "3"}, {"CUDA_VISIBLE_DEVICES", ""}, {"SLURM_JOB_ID", long_value}, {"HOME", "/root"}};
  std::vector<uint8_t> out(sizeof(FileHeader));
  const FileHeader h = makeFileHeader(kOrigin, 0, 1, 0, 100);
  std::memcpy(out.data(), &h, sizeof h);
  std::vector<uint8_t> records;
  RecordEncoder enc(&records);
  writeProcessEnv(enc, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  out.insert(out.end(), records.begin(), records.end());
  const Decoded d = decode(out);
  CHECK(d.clean);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Rec& r : d.records) {
    if (r.kind != Kind::ProcessEnv) continue;
    const auto e = r.as<ProcessEnvRecord>();
    got.emplace_back(d.strings.at(e.name_sid), d.strings.at(e.value_sid));
  }
  const std::vector<std::pair<std::string, std::string>> want = {
      {"RANK", "3"}, {"WORLD_SIZE", "8"}, {"SLURM_JOB_ID", long_value.substr(0, kProcessEnvValueBytes)}, {"CUDA_VISIBLE_DEVICES", ""}};
  CHECK(got == want);
}

void testPool() {
  BufferPool pool(100, 2);  // rounded up to the minimum
  CHECK(pool.bufferBytes() == BufferPool::kMinBufferBytes);
  uint8_t* a = pool.acquire();
  uint8_t* b = pool.acquire();
  CHECK(a && b && reinterpret_cast<uintptr_t>(a) % 8 == 0);
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.refusals() == 1);
  pool.release(a);
  CHECK(pool.acquire() == a);
  CHECK(pool.outstanding() == 2);
}

}  // namespace

int main() {
  testPool();
  testProcessEnv();
  testNvtxDefaultDomain();
  testNvtxPayloads();
  testTranslator();
  testWriter();
  testOutputError();
  if (failures) {
    std::fprintf(stderr, "selftest: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("collector selftest: all checks passed\n");
  return 0;
}
