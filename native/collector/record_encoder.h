// Appends record-stream bytes (record_format.h) to a byte vector.
//
// Header-only and free of CUDA/CUPTI so that the contract test can build it
// on machines without a GPU. Not thread-safe: the collector uses one encoder,
// owned by its writer thread.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "record_format.h"

namespace streamscope::rs {

template <class R>
struct KindOf;
#define STREAMSCOPE_KIND_OF(Type, K)       \
  template <>                              \
  struct KindOf<Type> {                    \
    static constexpr Kind value = Kind::K; \
  }
STREAMSCOPE_KIND_OF(ProcessRecord, Process);
STREAMSCOPE_KIND_OF(DeviceRecord, Device);
STREAMSCOPE_KIND_OF(ContextRecord, Context);
STREAMSCOPE_KIND_OF(StreamRecord, Stream);
STREAMSCOPE_KIND_OF(KernelRecord, Kernel);
STREAMSCOPE_KIND_OF(MemcpyRecord, Memcpy);
STREAMSCOPE_KIND_OF(MemsetRecord, Memset);
STREAMSCOPE_KIND_OF(SynchronizationRecord, Synchronization);
STREAMSCOPE_KIND_OF(CudaEventRecord, CudaEvent);
STREAMSCOPE_KIND_OF(ApiCallRecord, ApiCall);
STREAMSCOPE_KIND_OF(MarkerRecord, Marker);
STREAMSCOPE_KIND_OF(OverheadRecord, Overhead);
STREAMSCOPE_KIND_OF(DroppedRecord, Dropped);
STREAMSCOPE_KIND_OF(ErrorRecord, Error);
STREAMSCOPE_KIND_OF(FlushRecord, Flush);
STREAMSCOPE_KIND_OF(EndRecord, End);
STREAMSCOPE_KIND_OF(ProcessEnvRecord, ProcessEnv);
STREAMSCOPE_KIND_OF(MarkerPayloadRecord, MarkerPayload);
#undef STREAMSCOPE_KIND_OF

inline FileHeader makeFileHeader(uint64_t origin_ns, uint64_t origin_wall_ns, uint32_t pid, uint32_t flags, uint32_t collector_version) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format_version = kFormatVersion;
  h.header_bytes = sizeof(FileHeader);
  h.origin_ns = origin_ns;
  h.origin_wall_ns = origin_wall_ns;
  h.pid = pid;
  h.flags = flags;
  h.collector_version = collector_version;
  return h;
}

class RecordEncoder {
 public:
  explicit RecordEncoder(std::vector<uint8_t>* out) : out_(out) {}

  void writeHeader(const FileHeader& h) { append(&h, sizeof h); }

  // Returns the id of `s`, emitting a String record the first time it is
  // seen. A null pointer is "no string" (id 0).
  uint32_t intern(const char* s) { return s ? intern(std::string_view(s)) : 0; }
  uint32_t intern(std::string_view s) {
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(ids_.size()) + 1;
    ids_.emplace(std::string(s), id);
    StringRecord r{};
    r.h.kind = static_cast<uint16_t>(Kind::String);
    r.h.size = align8(static_cast<uint32_t>(sizeof r + s.size()));
    r.id = id;
    r.length = static_cast<uint32_t>(s.size());
    const size_t at = out_->size();
    out_->resize(at + r.h.size, 0);  // zero padding
    std::memcpy(out_->data() + at, &r, sizeof r);
    std::memcpy(out_->data() + at + sizeof r, s.data(), s.size());
    ++records_;
    return id;
  }

  // Fills in the record header and appends the fixed-size record.
  template <class R>
  void write(R& r) {
    static_assert(std::is_trivially_copyable_v<R> && sizeof(R) % 8 == 0);
    r.h.kind = static_cast<uint16_t>(KindOf<R>::value);
    r.h.reserved = 0;
    r.h.size = sizeof(R);
    append(&r, sizeof r);
    ++records_;
  }

  // A record followed by `n` items of a fixed size (MarkerPayload and its
  // fields), as one record whose size covers both.
  template <class R, class T>
  void writeWithItems(R& r, const T* items, uint32_t n) {
    static_assert(std::is_trivially_copyable_v<R> && sizeof(R) % 8 == 0);
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0);
    r.h.kind = static_cast<uint16_t>(KindOf<R>::value);
    r.h.reserved = 0;
    r.h.size = static_cast<uint32_t>(sizeof(R) + n * sizeof(T));
    append(&r, sizeof r);
    if (n > 0) append(items, n * sizeof(T));
    ++records_;
  }

  uint64_t recordsWritten() const { return records_; }

  // Number of strings interned so far; ids are dense, 1..stringCount().
  uint32_t stringCount() const { return static_cast<uint32_t>(ids_.size()); }

  // Forgets the strings with ids above `count`, so that they are emitted
  // again (with the same ids) the next time they are interned. For a writer
  // whose bytes after some point never reached the file: the String records
  // of those ids are not in the file, so their ids may be given out again.
  void forgetStringsAbove(uint32_t count) {
    for (auto it = ids_.begin(); it != ids_.end();) {
      if (it->second > count) it = ids_.erase(it);
      else ++it;
    }
  }

 private:
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }

  std::vector<uint8_t>* out_;
  std::unordered_map<std::string, uint32_t> ids_;
  uint64_t records_ = 0;
};

}  // namespace streamscope::rs
