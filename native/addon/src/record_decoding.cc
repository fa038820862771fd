#include "record_decoding.h"

#include <unistd.h>

#include <algorithm>

#include "ingest_error.h"

namespace streamscope::addon {

using namespace rs;

const char* kindName(uint16_t kind) { return rs::kindName(static_cast<Kind>(kind)); }

uint32_t fixedSize(uint16_t kind) {
  switch (static_cast<Kind>(kind)) {
    case Kind::String: return sizeof(StringRecord);
    case Kind::Process: return sizeof(ProcessRecord);
    case Kind::Device: return sizeof(DeviceRecord);
    case Kind::Context: return sizeof(ContextRecord);
    case Kind::Stream: return sizeof(StreamRecord);
    case Kind::Kernel: return sizeof(KernelRecord);
    case Kind::Memcpy: return sizeof(MemcpyRecord);
    case Kind::Memset: return sizeof(MemsetRecord);
    case Kind::Synchronization: return sizeof(SynchronizationRecord);
    case Kind::CudaEvent: return sizeof(CudaEventRecord);
    case Kind::ApiCall: return sizeof(ApiCallRecord);
    case Kind::Marker: return sizeof(MarkerRecord);
    case Kind::Overhead: return sizeof(OverheadRecord);
    case Kind::Dropped: return sizeof(DroppedRecord);
    case Kind::Error: return sizeof(ErrorRecord);
    case Kind::Flush: return sizeof(FlushRecord);
    case Kind::End: return sizeof(EndRecord);
    case Kind::ProcessEnv: return sizeof(ProcessEnvRecord);
    case Kind::MarkerPayload: return sizeof(MarkerPayloadRecord);
  }
  return 0;
}

bool magicMatches(const char* head, size_t n) { return std::memcmp(head, kMagic, std::min(n, sizeof kMagic)) == 0; }

void checkHeader(const FileHeader& h, const std::string& path) {
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw IngestError(path + ": not a StreamScope record stream (bad magic)");
  if (h.format_version != kFormatVersion) {
    throw IngestError(path + ": record stream format version " + std::to_string(h.format_version) +
                      " is not supported (this StreamScope reads version " + std::to_string(kFormatVersion) + ")");
  }
  if (h.header_bytes < sizeof(FileHeader) || h.header_bytes % 8 != 0) {
    throw IngestError(path + ": corrupt header: header size " + std::to_string(h.header_bytes));
  }
}

bool RecordReader::next(Record* r) {
  if (size_ - at_ < sizeof(RecordHeader)) return false;
  const RecordHeader rh = load<RecordHeader>(data_ + at_);
  const uint64_t offset = base_ + at_;
  if (rh.size < sizeof(RecordHeader) || rh.size % 8 != 0) {
    throw IngestError(path_ + ": corrupt record at byte " + std::to_string(offset) + ": size " + std::to_string(rh.size) +
                      " is not a positive multiple of 8");
  }
  if (rh.size > size_ - at_) return false;  // partial: the rest is still being written
  const char* name = kindName(rh.kind);
  const uint32_t need = fixedSize(rh.kind);
  if (name && rh.size < need) {
    throw IngestError(path_ + ": corrupt record at byte " + std::to_string(offset) + ": " + name + " record of " + std::to_string(rh.size) +
                      " bytes, expected at least " + std::to_string(need));
  }
  *r = Record{rh.kind, name, data_ + at_, rh.size, offset};
  at_ += rh.size;
  return true;
}

std::string_view stringText(const Record& r, const std::string& path) {
  const auto s = load<StringRecord>(r.bytes);
  if (sizeof(StringRecord) + static_cast<uint64_t>(s.length) > r.size) {
    throw IngestError(path + ": corrupt record at byte " + std::to_string(r.offset) + ": String length " + std::to_string(s.length) +
                      " exceeds its record (" + std::to_string(r.size) + " bytes)");
  }
  return std::string_view(reinterpret_cast<const char*>(r.bytes + sizeof(StringRecord)), s.length);
}

uint64_t missingBytes(int fd, uint64_t at, uint64_t size) {
  uint64_t missing = sizeof(RecordHeader) - std::min<uint64_t>(size - at, sizeof(RecordHeader));
  if (size - at >= sizeof(RecordHeader)) {
    RecordHeader rh;
    if (pread(fd, &rh, sizeof rh, static_cast<off_t>(at)) == sizeof rh) missing = at + rh.size - size;
  }
  return missing;
}

}  // namespace streamscope::addon
