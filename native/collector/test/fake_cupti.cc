// A stand-in for libcupti.so.13, for testing the injection library on a
// machine without a GPU (run-fake-cupti-tests.sh). It implements exactly
// the CUPTI functions the collector calls, with CUPTI's signatures (from
// cupti.h), and behaves like CUPTI where the collector depends on it:
// one subscriber per process, buffers requested from and completed through
// the registered callbacks, cuptiActivityFlushAll completing the buffer in
// use on the calling thread, dropped records counted when a request is
// refused. The test program drives it through the fake_* functions below.
#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
std::mutex mu;
CUpti_CallbackFunc subscriber_cb = nullptr;
bool subscribed = false;
bool stream_kind_enabled = false;  // CUPTI_ACTIVITY_KIND_STREAM enabled by the collector
CUpti_BuffersCallbackRequestFunc requested = nullptr;
CUpti_BuffersCallbackCompleteFunc completed = nullptr;
uint8_t* current = nullptr;
size_t current_size = 0, current_used = 0;
size_t dropped = 0;
std::atomic<int> flushes{0};

uint64_t now() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
}

// Completes the buffer in use (called without mu held: the collector's
// callback may call back into us).
void completeCurrent() {
  uint8_t* b;
  size_t size, used;
  {
    std::lock_guard<std::mutex> lock(mu);
    b = current;
    size = current_size;
    used = current_used;
    current = nullptr;
    current_used = 0;
  }
  if (b) completed(nullptr, 0, b, size, used);
}

template <class T>
void append(const T& r) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (current && current_used + sizeof r <= current_size) {
        std::memcpy(current + current_used, &r, sizeof r);
        current_used += sizeof r;
        return;
      }
    }
    completeCurrent();
    uint8_t* b = nullptr;
    size_t size = 0, max = 0;
    requested(&b, &size, &max);
    std::lock_guard<std::mutex> lock(mu);
    if (!b || size < sizeof r) {
      ++dropped;  // as CUPTI: no buffer, the record is dropped and counted
      return;
    }
    current = b;
    current_size = size;
    current_used = 0;
  }
}
}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  const char* v = std::getenv("FAKE_CUPTI_VERSION");
  *version = v ? uint32_t(std::strtoul(v, nullptr, 10)) : CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = now();
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
  }
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void*,
                                       CUpti_SubscriberParams* params) {
  if (!params || params->structSize != CUpti_SubscriberParams_STRUCT_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  if (const char* other = std::getenv("FAKE_CUPTI_OTHER")) {
    if (params->oldSubscriberName && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, other, params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscribed = true;
  subscriber_cb = callback;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  subscribed = false;
  subscriber_cb = nullptr;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) {
  requested = r;
  completed = c;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  // OVERHEAD refused, to check that a failing kind is reported and the rest goes on.
  if (kind == CUPTI_ACTIVITY_KIND_OVERHEAD) return CUPTI_ERROR_NOT_SUPPORTED;
  if (kind == CUPTI_ACTIVITY_KIND_STREAM) stream_kind_enabled = true;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  ++flushes;
  if (completed) completeCurrent();
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* n) {
  std::lock_guard<std::mutex> lock(mu);
  *n = dropped;
  dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t at = 0;
  if (*record) {
    at = size_t(reinterpret_cast<uint8_t*>(*record) - buffer);
    switch ((*record)->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: at += sizeof(CUpti_ActivityKernel10); break;
      case CUPTI_ACTIVITY_KIND_STREAM: at += sizeof(CUpti_ActivityStream); break;
      default: at += sizeof(CUpti_ActivityAPI); break;
    }
  }
  if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + at);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t, const char** name) {
  *name = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaLaunchKernel_v7000" : "cuLaunchKernel";
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetContextId(CUcontext ctx, uint32_t* id) {
  *id = uint32_t(reinterpret_cast<uintptr_t>(ctx));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext, uint32_t* id) {
  *id = 0;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t, uint32_t* id) {
  *id = stream ? uint32_t(reinterpret_cast<uintptr_t>(stream)) : 7;  // 7: the NULL stream
  return CUPTI_SUCCESS;
}

// ---- Driven by the test program -----------------------------------------------

void fake_resource(CUpti_CallbackId cbid, CUcontext ctx, CUstream stream) {
  if (!subscriber_cb) return;
  CUpti_ResourceData d{};
  d.context = ctx;
  d.resourceHandle.stream = stream;
  subscriber_cb(nullptr, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
  // Like CUPTI: with STREAM activity on, a created stream also yields a record.
  if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED && stream_kind_enabled && requested) {
    CUpti_ActivityStream r{};
    r.kind = CUPTI_ACTIVITY_KIND_STREAM;
    r.contextId = uint32_t(reinterpret_cast<uintptr_t>(ctx));
    r.streamId = uint32_t(reinterpret_cast<uintptr_t>(stream));
    r.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
    r.priority = uint32_t(-1);  // as fake_cuda.cc reports for cuStreamGetPriority
    append(r);
  }
}

void fake_profiler_stop() {
  if (!subscriber_cb) return;
  CUpti_CallbackData d{};
  d.callbackSite = CUPTI_API_EXIT;
  d.functionName = "cuProfilerStop";
  subscriber_cb(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, &d);
}

// n launches: a runtime API record and its kernel each.
void fake_launches(uint32_t first_correlation, int n, uint32_t stream) {
  if (!requested) return;
  for (int i = 0; i < n; i++) {
    const uint64_t t = now();
    CUpti_ActivityAPI a{};
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = t;
    a.end = t + 2000;
    a.threadId = 99;
    a.correlationId = first_correlation + uint32_t(i);
    append(a);
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t + 5000;
    k.end = t + 6000;
    k.contextId = 1;
    k.streamId = stream;
    k.correlationId = first_correlation + uint32_t(i);
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    k.name = "fake_kernel";
    append(k);
  }
}

// Holds on to the buffer in use without completing it and asks for another,
// as per-thread buffers do: with STREAMSCOPE_MAX_BUFFERS=1 it is refused.
void fake_request_extra_buffer() {
  uint8_t* b = nullptr;
  size_t size = 0, max = 0;
  requested(&b, &size, &max);
  if (!b) {
    std::lock_guard<std::mutex> lock(mu);
    dropped += 10;
  } else {
    completed(nullptr, 0, b, size, 0);
  }
}

int fake_flushes() { return flushes.load(); }

}  // extern "C"
