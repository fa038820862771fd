// What the column loader checks of every row it reads (profiler/store/
// SCHEMA.md, "Rows a reader refuses or leaves out"): the loader reads every
// operation and API call of a recording anyway, so the checks cost a few
// comparisons per row, not a pass of their own.
//
// Refused — the file cannot be trusted, and the load throws MalformedRow:
// a value of a storage class no writer stores (a TEXT, REAL or BLOB where
// an integer is read, a NULL in a NOT NULL column), a time beyond what a
// recording holds, an id naming a row of another table that is not there
// (a stream, device, context, name).
// Left out, and counted (LeftOut) — the row's own values contradict each
// other, the rest of the file is sound: an end before its start, a negative
// size. An importer writes them as the trace gave them (a negative `dur`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace streamscope::addon {

// Times a recording holds: within ±(2^53 − 1) ns of its origin (104 days),
// exact as JS numbers. The importers' RecordingWriter.holds keeps to it;
// the ingest's times are CUPTI's, relative to the collector's start.
inline constexpr int64_t kMaxTimeNs = (int64_t{1} << 53) - 1;
inline bool holdsTime(int64_t t) { return t >= -kMaxTimeNs && t <= kMaxTimeNs; }

// A row the load refuses (thrown from the parts' threads; the message,
// which quotes the stored value, is made afterwards on the caller's
// connection: describeMalformed in table_loader.cc).
struct MalformedRow {
  enum Kind { Type, Time, Reference };
  int table;  // index in the loader's table list (kernels, memcpys, memsets, api_calls)
  int64_t rowid;
  const char* column;  // as the loader's query names it
  Kind kind;
  int64_t value = 0;                // Time, Reference: the value read
  const char* refers_to = nullptr;  // Reference: the table it names a row of
};

// Rows a load left out, and the first of them (in table, then rowid order:
// parts are read in that order), said as "kernels row 3: end_ns … is
// before start_ns …".
struct LeftOut {
  size_t rows = 0;
  int table = -1;
  int64_t rowid = 0;
  std::string first;
  // Another part's count and first row added (this one's rows come first unless it has none).
  void add(const LeftOut& o) {
    if (o.rows == 0) return;
    if (rows == 0 || o.table < table || (o.table == table && o.rowid < rowid)) {
      table = o.table;
      rowid = o.rowid;
      first = o.first;
    }
    rows += o.rows;
  }
};

// The rowids of a small table (streams, devices, contexts, strings), for
// "is there such a row": a range test where they are dense, as every
// writer makes them; a bitmap over a span not much wider than the count;
// else a binary search.
class IdSet {
 public:
  IdSet() = default;
  explicit IdSet(std::vector<int64_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.empty()) return;
    lo_ = ids.front();
    hi_ = ids.back();
    const uint64_t span = uint64_t(hi_) - uint64_t(lo_) + 1;
    if (span == ids.size()) {
      dense_ = true;
    } else if (span <= 64 * ids.size() + 4096) {
      bits_.assign(span, 0);
      for (int64_t id : ids) bits_[size_t(id - lo_)] = 1;
    } else {
      sorted_ = std::move(ids);
    }
  }
  bool contains(int64_t id) const {
    if (id < lo_ || id > hi_) return false;
    if (dense_) return true;
    if (!bits_.empty()) return bits_[size_t(id - lo_)] != 0;
    return std::binary_search(sorted_.begin(), sorted_.end(), id);
  }

 private:
  int64_t lo_ = 1, hi_ = 0;  // empty: nothing is in [1, 0]
  bool dense_ = false;
  std::vector<uint8_t> bits_;
  std::vector<int64_t> sorted_;
};

}  // namespace streamscope::addon
