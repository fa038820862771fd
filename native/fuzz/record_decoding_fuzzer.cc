// libFuzzer target "record-decoding": arbitrary bytes as a record-stream
// file, read the way the native ingest reads one (native/addon/src/
// record_decoding.h, payload_json.h), without SQLite: the header's checks,
// the record framing, each known kind's fixed part, a String's text, a
// MarkerPayload's fields and their JSON, and what a cut stream lacks.
//
// The bytes are copied one past a 16-byte boundary, so that a load that
// assumes the alignment of a mapped file trips UBSan, and end exactly at the
// allocation's end, so that ASan sees any read past the data.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "ingest_error.h"
#include "payload_json.h"
#include "record_decoding.h"

using namespace streamscope;
using addon::IngestError;

namespace {

const std::string kPath = "fuzz.ssr";

[[noreturn]] void fail(const char* what, uint64_t offset) {
  std::fprintf(stderr, "record-decoding: %s (byte %llu)\n", what, static_cast<unsigned long long>(offset));
  std::abort();
}

// One record as ingest.cc reads it: the fixed part of its kind, then the
// variable part of the two kinds that have one.
void readRecord(const addon::Record& r) {
  using rs::Kind;
  if (r.size < sizeof(rs::RecordHeader) || r.size % 8 != 0) fail("record size not a positive multiple of 8", r.offset);
  if (!r.name) return;  // a newer kind: skipped by its size
  if (r.size < addon::fixedSize(r.kind)) fail("record smaller than its kind's fixed part", r.offset);
  switch (static_cast<Kind>(r.kind)) {
    case Kind::String: {
      const auto text = addon::stringText(r, kPath);
      const auto s = addon::load<rs::StringRecord>(r.bytes);
      if (text.size() != s.length) fail("String text of the wrong length", r.offset);
      break;
    }
    case Kind::MarkerPayload: {
      const auto fields = addon::payloadFields(r, kPath);
      const std::string json = addon::payloadJson(fields, [](uint32_t sid) { return "s" + std::to_string(sid); });
      if (json.empty() || json.front() != '{' || json.back() != '}') fail("payload JSON is not an object", r.offset);
      break;
    }
    default: {
      // The fixed part, as the ingest copies it out (the largest kind's worth at most).
      alignas(8) uint8_t fixed[sizeof(rs::KernelRecord)];
      std::memcpy(fixed, r.bytes, addon::fixedSize(r.kind));
      break;
    }
  }
}

// What the ingest reports as missing when a final read stops at `at` of `size` bytes.
void checkMissing(const uint8_t* data, uint64_t at, uint64_t size) {
  const int fd = memfd_create("record-decoding", MFD_CLOEXEC);
  if (fd < 0) return;
  if (write(fd, data, size) == static_cast<ssize_t>(size)) {
    const uint64_t missing = addon::missingBytes(fd, at, size);
    if (missing == 0 || missing > UINT32_MAX) fail("a cut record said to lack no or impossibly many bytes", at);
  }
  close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[size + 1]);
  uint8_t* data = buffer.get() + 1;
  if (size) std::memcpy(data, input, size);

  // A file too short for a header is foreign only when its first bytes already differ from the magic.
  const bool magic = addon::magicMatches(reinterpret_cast<const char*>(data), size);
  if (size < sizeof(rs::FileHeader)) return 0;
  const auto header = addon::load<rs::FileHeader>(data);
  try {
    addon::checkHeader(header, kPath);
  } catch (const IngestError&) {
    return 0;
  }
  if (!magic) fail("a header with a bad magic passed its checks", 0);
  const uint64_t from = header.header_bytes;
  if (from > size) return 0;  // records start beyond the end: nothing yet

  addon::RecordReader reader(kPath, data + from, size - from, from);
  try {
    uint64_t expected_offset = from;
    for (addon::Record r{}; reader.next(&r);) {
      if (r.offset != expected_offset || r.bytes != data + r.offset || r.offset + r.size > size) fail("record out of place", r.offset);
      expected_offset += r.size;
      if (reader.offset() != expected_offset) fail("reader offset not after the record", r.offset);
      readRecord(r);
    }
  } catch (const IngestError&) {
    return 0;  // malformed: rejected with its offset, as the ingest does
  }
  if (reader.offset() < size) checkMissing(data, reader.offset(), size);
  return 0;
}
