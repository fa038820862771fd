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

// A row's duration added to a zone's busy time. Saturated, not wrapped: times are within 2^53 ns of the origin
// (ingest.cc), so a duration is below 2^54, but a corrupt stream's 4096 rows of a zone can still sum past 2^63 (signed
// overflow: undefined behaviour). Returns whether it saturated (SQL's sum() would have refused: BlockZones).
inline bool addBusy(int64_t& busy, int64_t start, int64_t end) {
  if (!__builtin_add_overflow(busy, end - start, &busy)) return false;
  busy = end > start ? INT64_MAX : INT64_MIN;
  return true;
}

// The JSON SQLite's json_group_object writes of rows per copy kind, in copy kind order: {"1":2048,"2":2048}.
std::string copyKindRowsJson(const std::map<int64_t, int64_t>& rows_per_kind);

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
    addBusy(z_.busy, k.start, k.end);
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
    emit(static_cast<const Zone&>(z_), count_copy_kinds_ ? std::optional<std::string>(copyKindRowsJson(copy_kinds_)) : std::nullopt);
    z_.rows = 0;
    copy_kinds_.clear();
  }
  bool count_copy_kinds_;
  Zone z_{};
  std::map<int64_t, int64_t> copy_kinds_;  // rows per copy kind (a handful of kinds)
};

// The zones of rows written in rowid order but not grouped by lane (the Kineto importer's, in file order), exactly as
// the SQL zone builder makes them (profiler/store/zone-tables.ts zonesFromRowsSql, then zoneShapeSql): one zone per
// lane and block of kZoneRows rowids (GROUP BY lane, id / 4096), so a zone's rowid range may hold other lanes' rows;
// its shape over its own rows in (start, id) order. Built as the rows are written, so that ensureZones finds nothing
// left to do: a block's zones when the first row of the next block comes. Where SQL would not have made integers of
// it (a duration or a zone's busy time past int64: SQLite's sum() refuses it), the table is left to SQL: valid() false.
class BlockZones {
 public:
  explicit BlockZones(bool count_copy_kinds) : count_copy_kinds_(count_copy_kinds) {}
  // A row of the table as its ZONED_TABLES entry reads it (correlation kNull: NULL); copy_kind counts for memcpys only.
  struct Row {
    int64_t lane, start, end, correlation, copy_kind, id;
  };
  struct Out {
    Zone zone;
    std::optional<std::string> copy_kind_rows;  // memcpys: copyKindRowsJson; nullopt otherwise
  };
  // The next row, its rowid above the last one's.
  void add(const Row& r) {
    if (broken_) return;
    if (!block_.empty() && r.id <= block_.back().id) return invalidate();
    const int64_t block = r.id / zone_table::kZoneRows;
    if (block != block_no_) {
      closeBlock();
      block_no_ = block;
    }
    block_.push_back(r);
  }
  // Closes the last block and sorts the zones by lane, then block, as SQLite's GROUP BY emits them.
  void finish();
  // The table's zones are left to SQL.
  void invalidate() {
    broken_ = true;
    block_.clear();
    zones_.clear();
  }
  bool valid() const { return !broken_; }
  const std::vector<Out>& zones() const { return zones_; }

 private:
  void closeBlock();
  // One lane's rows of the block, in rowid order.
  void zoneOf(std::vector<Row>::const_iterator first, std::vector<Row>::const_iterator last);

  bool count_copy_kinds_;
  bool broken_ = false;
  int64_t block_no_ = -1;
  std::vector<Row> block_;     // the current block's rows, in rowid order
  std::vector<Row> by_start_;  // zoneOf's: a lane's rows in (start, id) order, where they were not
  std::map<int64_t, int64_t> copy_kinds_;
  std::vector<Out> zones_;
};

}  // namespace streamscope::addon
