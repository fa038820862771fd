// libFuzzer target "record-round-trip": the collector's encoder
// (native/collector/record_encoder.h) against the ingest's decoder
// (native/addon/src/record_decoding.h), both read from record_format.h.
// The fuzz bytes are not a stream but a program: a header, then strings
// interned (new and repeated, some forgotten as a writer does after a
// failed write), records of every kind with every field's bytes from the
// input, MarkerPayloads of 0 to 32 fields. What the encoder wrote must
// decode back to exactly that: each record in order, of its kind and size,
// byte for byte, each String's id and text with zero padding, each
// payload's fields; and the stream cut anywhere must yield exactly the
// records that end before the cut, and say how many bytes the next lacks.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ingest_error.h"
#include "payload_json.h"
#include "record_decoding.h"
#include "record_encoder.h"

using namespace streamscope;
using namespace streamscope::rs;

namespace {

const std::string kPath = "round-trip.ssr";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "record-round-trip: %s\n", what.c_str());
  std::abort();
}

// A record as the encoder was asked to write it: its bytes as written (header filled in by the encoder).
struct Written {
  Kind kind;
  std::vector<uint8_t> bytes;
  uint32_t string_id = 0;  // String: its id and text
  std::string text;
};

class Program {
 public:
  explicit Program(FuzzedDataProvider& in) : in_(in), encoder_(&out_) {}

  void run() {
    FileHeader h = makeFileHeader(in_.ConsumeIntegral<uint64_t>(), in_.ConsumeIntegral<uint64_t>(), in_.ConsumeIntegral<uint32_t>(),
                                  in_.ConsumeIntegral<uint32_t>(), in_.ConsumeIntegral<uint32_t>());
    header_ = h;
    encoder_.writeHeader(h);
    while (in_.remaining_bytes() > 0 && written_.size() < 1024) step();
    if (encoder_.recordsWritten() != written_.size()) fail("recordsWritten() is not the number of records written");
  }

  const std::vector<uint8_t>& bytes() const { return out_; }
  const std::vector<Written>& written() const { return written_; }
  const FileHeader& header() const { return header_; }

 private:
  void step() {
    switch (in_.ConsumeIntegralInRange<int>(0, 21)) {
      case 0: intern(); break;
      case 1: encoder_.forgetStringsAbove(in_.ConsumeIntegralInRange<uint32_t>(0, encoder_.stringCount())); break;
      case 2: payload(); break;
      case 3: fixed<ProcessRecord>(); break;
      case 4: fixed<DeviceRecord>(); break;
      case 5: fixed<ContextRecord>(); break;
      case 6: fixed<StreamRecord>(); break;
      case 7: fixed<KernelRecord>(); break;
      case 8: fixed<MemcpyRecord>(); break;
      case 9: fixed<MemsetRecord>(); break;
      case 10: fixed<SynchronizationRecord>(); break;
      case 11: fixed<CudaEventRecord>(); break;
      case 12: fixed<ApiCallRecord>(); break;
      case 13: fixed<MarkerRecord>(); break;
      case 14: fixed<OverheadRecord>(); break;
      case 15: fixed<DroppedRecord>(); break;
      case 16: fixed<ErrorRecord>(); break;
      case 17: fixed<FlushRecord>(); break;
      case 18: fixed<EndRecord>(); break;
      case 19: fixed<ProcessEnvRecord>(); break;
      default: intern(); break;  // strings are the commonest record of a real stream
    }
  }

  void intern() {
    // Short strings mostly, from a small alphabet so that they repeat; now and then one as long as a mangled template name.
    std::string s = in_.ConsumeRandomLengthString(in_.ConsumeBool() ? 12 : 4096);
    const uint32_t before = encoder_.stringCount();
    const size_t at = out_.size();
    const uint32_t id = encoder_.intern(s);
    auto it = ids_.find(s);
    const bool emitted = out_.size() != at;
    if (emitted) {
      // New, or forgotten: a String record with the next id, or the id it had (forgetStringsAbove gives ids out again).
      if (encoder_.stringCount() != before + 1 || id != before + 1) fail("a string interned anew did not get the next id");
      Written w{Kind::String, std::vector<uint8_t>(out_.begin() + static_cast<long>(at), out_.end()), id, s};
      written_.push_back(std::move(w));
      ids_[s] = id;
    } else {
      if (it == ids_.end() || it->second != id) fail("a string not emitted again has an id it was never given");
    }
    if (id == 0) fail("a string got id 0 (\"no string\")");
  }

  template <class R>
  void fixed() {
    R r{};
    in_.ConsumeData(&r, sizeof r);
    encoder_.write(r);
    if (r.h.size != sizeof(R) || r.h.kind != static_cast<uint16_t>(KindOf<R>::value)) fail("write() set a wrong header");
    std::vector<uint8_t> bytes(sizeof r);
    std::memcpy(bytes.data(), &r, sizeof r);
    written_.push_back(Written{KindOf<R>::value, std::move(bytes)});
  }

  void payload() {
    MarkerPayloadRecord r{};
    in_.ConsumeData(&r, sizeof r);
    const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, kMarkerPayloadMaxFields);
    std::vector<MarkerPayloadField> fields(n);
    for (auto& f : fields) in_.ConsumeData(&f, sizeof f);
    r.field_count = n;
    encoder_.writeWithItems(r, fields.data(), n);
    std::vector<uint8_t> bytes(sizeof r + n * sizeof(MarkerPayloadField));
    std::memcpy(bytes.data(), &r, sizeof r);
    if (n) std::memcpy(bytes.data() + sizeof r, fields.data(), n * sizeof(MarkerPayloadField));
    written_.push_back(Written{Kind::MarkerPayload, std::move(bytes)});
  }

  FuzzedDataProvider& in_;
  std::vector<uint8_t> out_;
  RecordEncoder encoder_;
  FileHeader header_{};
  std::vector<Written> written_;
  std::map<std::string, uint32_t> ids_;  // every string's current id, as the encoder should have it
};

// The record decoded at position `i` must be exactly what was written there.
void expectSame(const addon::Record& r, const Written& w, size_t i) {
  const std::string at = "record " + std::to_string(i) + " (" + (r.name ? r.name : "?") + ")";
  if (r.kind != static_cast<uint16_t>(w.kind) || !r.name) fail(at + ": decoded as another kind");
  if (r.size != w.bytes.size()) fail(at + ": decoded with another size");
  if (std::memcmp(r.bytes, w.bytes.data(), r.size) != 0) fail(at + ": bytes differ");
  if (w.kind == Kind::String) {
    const auto s = addon::load<StringRecord>(r.bytes);
    if (s.id != w.string_id || addon::stringText(r, kPath) != w.text) fail(at + ": id or text differ");
    for (uint32_t b = sizeof(StringRecord) + s.length; b < r.size; b++) {
      if (r.bytes[b] != 0) fail(at + ": padding not zero");
    }
  }
  if (w.kind == Kind::MarkerPayload) {
    const auto head = addon::load<MarkerPayloadRecord>(r.bytes);
    const auto fields = addon::payloadFields(r, kPath);
    if (fields.size() != head.field_count ||
        (!fields.empty() && std::memcmp(fields.data(), r.bytes + sizeof(MarkerPayloadRecord), fields.size() * sizeof fields[0]) != 0)) {
      fail(at + ": payload fields differ");
    }
    addon::payloadJson(fields, [](uint32_t sid) { return std::to_string(sid); });
  }
}

// Decodes data[0, size) of the written stream; returns how many records came out (each checked), stopping before a cut record.
size_t decode(const std::vector<uint8_t>& all, size_t size, const std::vector<Written>& written, uint64_t* end) {
  const uint8_t* data = all.data();
  addon::RecordReader reader(kPath, data + sizeof(FileHeader), size - sizeof(FileHeader), sizeof(FileHeader));
  size_t n = 0;
  for (addon::Record r{}; reader.next(&r); n++) {
    if (n >= written.size()) fail("more records decoded than written");
    expectSame(r, written[n], n);
  }
  *end = reader.offset();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint32_t cut_choice = in.ConsumeIntegral<uint32_t>();  // where the stream is cut below (from the input's end)
  Program program(in);
  program.run();
  const std::vector<uint8_t>& out = program.bytes();
  const auto& written = program.written();

  const auto header = addon::load<FileHeader>(out.data());
  try {
    addon::checkHeader(header, kPath);
  } catch (const addon::IngestError& e) {
    fail(std::string("the encoder's header is refused: ") + e.what());
  }
  if (std::memcmp(&header, &program.header(), sizeof header) != 0) fail("the header differs");
  if (header.header_bytes != sizeof(FileHeader)) fail("header_bytes is not the header's size");

  try {
    uint64_t end = 0;
    if (decode(out, out.size(), written, &end) != written.size() || end != out.size()) fail("the whole stream did not decode to its end");
    if (out.size() == sizeof(FileHeader)) return 0;

    // Cut anywhere after the header: the records that end before the cut, and what the next one lacks.
    const size_t cut = sizeof(FileHeader) + cut_choice % (out.size() - sizeof(FileHeader));
    const size_t n = decode(out, cut, written, &end);
    uint64_t expected_end = sizeof(FileHeader);
    for (size_t i = 0; i < n; i++) expected_end += written[i].bytes.size();
    if (end != expected_end) fail("a cut stream stopped elsewhere than after its last whole record");
    if (n == written.size() || expected_end + written[n].bytes.size() <= cut) fail("a whole record before the cut was not decoded");
    if (end == cut) return 0;
    const uint64_t have = cut - end;
    const uint64_t expected_missing = have >= sizeof(RecordHeader) ? written[n].bytes.size() - have : sizeof(RecordHeader) - have;
    const int fd = memfd_create("round-trip", MFD_CLOEXEC);
    if (fd < 0) return 0;
    const bool complete = write(fd, out.data(), cut) == static_cast<ssize_t>(cut);
    const uint64_t missing = complete ? addon::missingBytes(fd, end, cut) : expected_missing;
    close(fd);
    if (missing != expected_missing) fail("the bytes a cut record lacks are miscounted");
  } catch (const addon::IngestError& e) {
    fail(std::string("the encoder's stream is refused: ") + e.what());
  }
  return 0;
}
