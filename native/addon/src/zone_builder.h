// Zone building (SCHEMA.md, "Zones"). Timeline rows wait in a PendingTable
// until their batch is written; then they go in grouped by lane (stream or
// thread) and sorted by start, so that each lane's rows form contiguous
// rowid runs, and ZoneBuilder makes one `zones` row per run (at most
// kZoneRows rows): lane, rowid range, time span, correlation range, busy
// time and shape. This replaces B-tree indexes on (stream, start) and on
// correlation ids, which cost more to build than the rows themselves.
//
// No SQLite here: ingest.cc inserts the rows in the order this leaves them
// and hands each row's rowid to the builder.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zone_tables.h"

struct sqlite3_stmt;

namespace streamscope::addon {

// A pending value that binds NULL.
inline constexpr int64_t kNull = INT64_MIN;

struct PendingTable {
  int table_id = 0;                // zones.table_id
  sqlite3_stmt* insert = nullptr;  // where its rows go
  int columns = 0;                 // values per row: the insert's columns
  int copy_kind_column = -1;       // memcpys: where copy_kind is in a row, for the zones' rows per copy kind
  int text_column = -1;            // nvtx_ranges: where payload is; its value indexes `texts` (kNull: NULL)
  struct Key {
    int64_t lane, start, end, correlation;  // correlation kNull: none
    uint32_t row;
  };
  std::vector<Key> keys;
  std::vector<Key> scratch;        // sortByLane's
  std::vector<int64_t> values;     // `columns` per row; kNull binds NULL
  std::vector<std::string> texts;  // the text column's values, by index
  // Where in `values` a kNull is a real INT64_MIN, not NULL: a 64-bit unsigned field of 2^63 (a corrupt copy's bytes)
  // read as int64 made a NOT NULL column NULL, and the schema's refusal rolled back the whole call. Rare: a list,
  // ascending as the values are appended.
  std::vector<size_t> literal_min;

  // Appends a row's values, in the insert's column order, in one call:
  // integers, or optional integers (nullopt binds NULL), or the text column's
  // optional text. The row's room is made once and its values stored in
  // place (a push_back per value, not inlined, was ~7% of the ingest: perf).
  struct Appender {
    std::vector<int64_t>& values;
    std::vector<std::string>& texts;
    std::vector<size_t>& literal_min;
    int columns;
    template <class... V>
    void operator()(V&&... v) {
      if (sizeof...(V) != static_cast<size_t>(columns)) {
        // A row of the wrong width: appended as it is, and consistent() refuses the batch.
        values.insert(values.end(), sizeof...(V), kNull);
        return;
      }
      size_t at = values.size();
      values.resize(at + sizeof...(V));
      (one(at++, std::forward<V>(v)), ...);
    }
    void one(size_t at, int64_t v) {
      if (v == kNull) [[unlikely]]
        literal_min.push_back(at);
      values[at] = v;
    }
    void one(size_t at, const std::optional<int64_t>& v) {
      if (v) one(at, *v);
      else values[at] = kNull;
    }
    void one(size_t at, std::nullopt_t) { values[at] = kNull; }
    void one(size_t at, std::optional<std::string>&& text) {
      if (!text) {
        values[at] = kNull;
        return;
      }
      values[at] = static_cast<int64_t>(texts.size());
      texts.push_back(std::move(*text));
    }
  };
  // A new row: its zone key now, its values through the Appender.
  Appender append(int64_t lane, int64_t start, int64_t end, int64_t correlation) {
    keys.push_back(Key{lane, start, end, correlation, static_cast<uint32_t>(keys.size())});
    return Appender{values, texts, literal_min, columns};
  }
  const int64_t* valuesOf(const Key& k) const { return values.data() + static_cast<size_t>(k.row) * columns; }
  // Whether value `column` of the row binds NULL.
  bool isNull(const Key& k, int column) const {
    const size_t at = static_cast<size_t>(k.row) * columns + column;
    return values[at] == kNull && (literal_min.empty() || !std::binary_search(literal_min.begin(), literal_min.end(), at));
  }
  // Every row has exactly `columns` values (a row appended with too few or too many would shift every row after it).
  bool consistent() const { return values.size() == keys.size() * static_cast<size_t>(columns); }
  // Groups the keys by lane, keeping arrival order inside a lane, then sorts a lane by start only where CUPTI
  // delivered it out of order (rare: the check is linear, the sort is not).
  void sortByLane();
  void clear() {
    keys.clear();
    values.clear();
    literal_min.clear();
    texts.clear();
  }
};

// A zone's row (SCHEMA.md "Zones").
struct Zone {
  int64_t lane, first, last, start, end, rows, min_corr, max_corr, busy, max_dur, max_gap;
};

// Cuts the rows of one batch, in the order PendingTable::sortByLane left them, into zones: a zone ends at a new lane,
// at a gap in rowids, or at kZoneRows rows.
class ZoneBuilder {
 public:
  explicit ZoneBuilder(bool count_copy_kinds) : count_copy_kinds_(count_copy_kinds) {}

  // The next row, stored with rowid `id`; `copy_kind` counts only for memcpys. emit(zone, copy_kind_rows) gets each
  // zone this closes; copy_kind_rows is the JSON of rows per copy kind for memcpys, nullopt otherwise.
  template <class Emit>
  void add(const PendingTable::Key& k, int64_t id, int64_t copy_kind, Emit&& emit) {
    if (z_.rows == zone_table::kZoneRows || (z_.rows > 0 && (z_.lane != k.lane || id != z_.last + 1))) close(emit);
    // Rows come in start order here, so the widest gap is each start minus the latest end before it.
    if (z_.rows == 0) {
      z_ = Zone{k.lane, id, id, k.start, k.end, 0, k.correlation, k.correlation, 0, 0, 0};
    } else {
      z_.max_gap = std::max(z_.max_gap, k.start - z_.end);
    }
    z_.max_dur = std::max(z_.max_dur, k.end - k.start);
    if (count_copy_kinds_) ++copy_kinds_[copy_kind];
    z_.last = id;
    z_.start = std::min(z_.start, k.start);
    z_.end = std::max(z_.end, k.end);
    // Saturated, not wrapped: times are within 2^53 ns of the origin (ingest.cc), so a duration is below 2^54, but a
    // corrupt stream's 4096 rows of a zone can still sum past 2^63 (signed overflow: undefined behaviour).
    if (__builtin_add_overflow(z_.busy, k.end - k.start, &z_.busy)) z_.busy = k.end > k.start ? INT64_MAX : INT64_MIN;
    if (k.correlation != kNull) {
      z_.min_corr = z_.min_corr == kNull ? k.correlation : std::min(z_.min_corr, k.correlation);
      z_.max_corr = z_.max_corr == kNull ? k.correlation : std::max(z_.max_corr, k.correlation);
    }
    ++z_.rows;
  }

  // Closes the last zone.
  template <class Emit>
  void finish(Emit&& emit) {
    close(emit);
  }

 private:
  template <class Emit>
  void close(Emit& emit) {
    if (z_.rows == 0) return;
    emit(static_cast<const Zone&>(z_), count_copy_kinds_ ? std::optional<std::string>(copyKindRows()) : std::nullopt);
    z_.rows = 0;
    copy_kinds_.clear();
  }
  // The JSON SQLite's json_group_object writes: {"1":2048,"2":2048}.
  std::string copyKindRows() const;

  bool count_copy_kinds_;
  Zone z_{};
  std::map<int64_t, int64_t> copy_kinds_;  // rows per copy kind (a handful of kinds)
};

}  // namespace streamscope::addon
