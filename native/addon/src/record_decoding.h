// The record stream as the native ingest reads it (the format is
// native/collector/record_format.h): the file header's checks, the framing of
// records (size, alignment, a partial record at the end), each kind's name
// and fixed size, and alignment-safe loads. No SQLite; malformed input is an
// IngestError naming the file and the byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "record_format.h"

namespace streamscope::addon {

// The kind's name as progress reports and errors give it ("Kernel"), nullptr for a kind this reader does not know.
const char* kindName(uint16_t kind);
// sizeof the kind's fixed part; 0 for unknown kinds.
uint32_t fixedSize(uint16_t kind);

// Copies a record (or any struct) out of the byte stream: records are only 8-byte aligned in the file, and a map
// may not be aligned for wider types.
template <class R>
R load(const uint8_t* p) {
  R r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

// True when the first n bytes of a file (n < the magic's size is allowed) match the stream's magic.
bool magicMatches(const char* head, size_t n);
// Throws unless `h`, read from the start of `path`, opens a record stream this ingest reads.
void checkHeader(const rs::FileHeader& h, const std::string& path);

// One complete record of the stream.
struct Record {
  uint16_t kind;
  const char* name;  // nullptr: a kind newer than this reader, to be skipped (the format promises its size)
  const uint8_t* bytes;
  uint32_t size;    // bytes of the whole record, header included
  uint64_t offset;  // in the file
};

// The complete records of data[0, size), which starts at byte `base` of the file `path`. Stops before a record that
// is not all there yet (the writer is still writing it).
class RecordReader {
 public:
  RecordReader(const std::string& path, const uint8_t* data, size_t size, uint64_t base)
      : path_(path), data_(data), size_(size), base_(base) {}
  // The next record; false at the end of the complete records. Throws on a size that is not a positive multiple of
  // 8, or a known kind smaller than its fixed part.
  bool next(Record* r);
  // File offset just after the last record returned.
  uint64_t offset() const { return base_ + at_; }

 private:
  const std::string& path_;
  const uint8_t* data_;
  size_t size_;
  uint64_t base_;
  size_t at_ = 0;
};

// The text of a String record; throws when its length exceeds the record.
std::string_view stringText(const Record& r, const std::string& path);

// How many bytes a stream that ends at `size` lacks to complete the record that starts at `at` (read through `fd`).
uint64_t missingBytes(int fd, uint64_t at, uint64_t size);

}  // namespace streamscope::addon
