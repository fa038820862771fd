#include "table_loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <cctype>
#include <cstring>
#include <iterator>

#include "btree_reader.h"
#include "row_rules.h"
#include "sqlite_db.h"
#include "zone_tables.h"

namespace streamscope::addon {
namespace {

// A recording opened for a load, read-only. Failure: "<path>: cannot open the recording: <why>" (SqliteError).
Db openForLoad(const std::string& path) {
  Db db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  sqlite3_busy_timeout(db.handle(), 5000);
  // Map the file instead of copying every page through read(): a 1 GB
  // recording otherwise spends more time in the kernel than in SQLite.
  sqlite3_exec(db.handle(), "PRAGMA mmap_size = 1099511627776", nullptr, nullptr, nullptr);
  return db;
}

inline int64_t i64(sqlite3_stmt* s, int c) { return sqlite3_column_int64(s, c); }

// Threads for a job over n items: all cores (at most `max_threads`, when
// not 0), but no thread with less than `min_per_thread` items (thread
// start-up would cost more than it saves).
size_t threadsFor(size_t n, size_t min_per_thread, size_t max_threads = 0) {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (max_threads > 0) cores = std::min(cores, max_threads);
  return std::max<size_t>(1, std::min(cores, n / min_per_thread));
}

// The sort's working columns: kept by loadRows's callers from one call to the next.
struct SortScratch {
  Column<uint64_t> k, k2;
  Column<uint32_t> idx2;
};

// Stable merge of the sorted runs of `k` (with their indexes): the first
// pass merges runs 2j and 2j+1, the next the pairs those made, each pass one
// sequential sweep (the pairs of a pass on all cores), the left run first
// among equal keys: the same order as the stable radix sort below. Runs
// are given by their starts, ending with n.
void mergeRuns(std::vector<size_t> runs, Column<uint64_t>& k, Column<uint32_t>& idx, SortScratch& scratch, size_t max_threads) {
  const size_t n = k.size();
  Column<uint64_t>& k2 = scratch.k2;
  Column<uint32_t>& idx2 = scratch.idx2;
  k2.reuse(n);
  idx2.reuse(n);
  while (runs.size() > 2) {
    const size_t pairs = (runs.size() - 1 + 1) / 2;  // runs.size() - 1 runs, merged two by two (an odd last one copied)
    runParallel(
        pairs,
        [&](size_t j) {
          const size_t a = runs[2 * j];
          const size_t m = std::min(runs[2 * j + 1], n);
          const size_t b = 2 * j + 2 < runs.size() ? runs[2 * j + 2] : n;
          size_t x = a, y = m, to = a;
          while (x < m && y < b) {
            // Equal keys in read order, as the radix sort leaves them: by index (runs gathered into chains,
            // chainRuns, no longer hold the lower indexes on the left).
            const bool left = k[x] < k[y] || (k[x] == k[y] && idx[x] < idx[y]);
            const size_t from = left ? x++ : y++;
            k2[to] = k[from];
            idx2[to++] = idx[from];
          }
          for (; x < m; x++, to++) k2[to] = k[x], idx2[to] = idx[x];
          for (; y < b; y++, to++) k2[to] = k[y], idx2[to] = idx[y];
        },
        max_threads);
    std::vector<size_t> next;
    for (size_t r = 0; r + 1 < runs.size(); r += 2) next.push_back(runs[r]);
    next.push_back(n);
    runs = std::move(next);
    std::swap(k, k2);
    std::swap(idx, idx2);
  }
}

// The runs (starts, ending with n) put into chains: each run after the chain whose last key is the greatest not
// above its first, so that a chain, its runs read one after another, is in order. A table is read zone by zone, each
// zone one stream's rows in time order, the streams' zones in turn: the 233 runs of the 10 M-launch bench recording
// are 5 chains, merged in 3 passes after a sweep that gathers them, where the runs took 8 (the load's sort 116 →
// 94 – 102 ms). Per chain, its runs (indexes into `runs`) in order.
std::vector<std::vector<size_t>> chainRuns(const std::vector<size_t>& runs, const Column<uint64_t>& k) {
  std::vector<uint64_t> last;  // per chain: its last key
  std::vector<std::vector<size_t>> chains;
  for (size_t r = 0; r + 1 < runs.size(); r++) {
    const uint64_t first = k[runs[r]];
    size_t best = chains.size();
    for (size_t c = 0; c < chains.size(); c++)
      if (last[c] <= first && (best == chains.size() || last[c] > last[best])) best = c;
    if (best == chains.size()) {
      chains.emplace_back();
      last.push_back(0);
    }
    last[best] = k[runs[r + 1] - 1];
    chains[best].push_back(r);
  }
  return chains;
}

// The keys and indexes copied chain after chain, each run's in one piece, on all cores; returns the chains as runs
// (starts, ending with n).
std::vector<size_t> gatherChains(const std::vector<size_t>& runs, const std::vector<std::vector<size_t>>& chains, Column<uint64_t>& k,
                                 Column<uint32_t>& idx, SortScratch& scratch, size_t max_threads) {
  const size_t n = k.size();
  Column<uint64_t>& k2 = scratch.k2;
  Column<uint32_t>& idx2 = scratch.idx2;
  k2.reuse(n);
  idx2.reuse(n);
  std::vector<size_t> from, to, starts;
  size_t at = 0;
  for (const auto& chain : chains) {
    starts.push_back(at);
    for (const size_t r : chain) {
      from.push_back(r);
      to.push_back(at);
      at += runs[r + 1] - runs[r];
    }
  }
  starts.push_back(n);
  runParallel(
      from.size(),
      [&](size_t j) {
        const size_t a = runs[from[j]], b = runs[from[j] + 1];
        std::memcpy(k2.data() + to[j], k.data() + a, (b - a) * sizeof(uint64_t));
        std::memcpy(idx2.data() + to[j], idx.data() + a, (b - a) * sizeof(uint32_t));
      },
      max_threads);
  std::swap(k, k2);
  std::swap(idx, idx2);
  return starts;
}

// Stable LSD radix sort of row indexes by an integer key, on all cores:
// each pass, every thread counts the digits of its slice, the counts are
// laid out digit-major then slice-major (so equal keys keep their read
// order), and every thread scatters its slice. Digits are at most 11 bits
// (2048 buckets per thread stay in cache; on 16 cores, 36-bit keys sorted
// in 170-210 ms with 11-bit digits, 260 ms with 16-bit, 350 ms with 8-bit),
// as many passes as the key range needs. Keys already in order (checked
// in the first pass) are not sorted: the order is the identity.
// Keys move with their indexes, so every pass reads sequentially.
// The order lands in `idx`; `scratch` and `idx` are reused where large enough.
// Returns whether that order is the identity.
// More runs than this: radix sorted (each slice stops listing them there).
constexpr size_t kMaxMergedRuns = 1024;

bool orderBy(const Column<double>& key, Column<uint32_t>& idx, SortScratch& scratch, size_t max_threads) {
  const size_t n = key.size();
  Column<uint64_t>& k = scratch.k;
  Column<uint64_t>& k2 = scratch.k2;
  Column<uint32_t>& idx2 = scratch.idx2;
  idx.reuse(n);
  if (n < 2) {
    for (size_t i = 0; i < n; i++) idx[i] = static_cast<uint32_t>(i);
    return true;
  }
  const size_t slices = threadsFor(n, 1 << 16, max_threads);
  auto slice = [&](size_t t) { return std::pair<size_t, size_t>{n * t / slices, n * (t + 1) / slices}; };
  std::vector<double> lo_of(slices), hi_of(slices);
  std::vector<uint8_t> sorted_of(slices);
  auto run = [&](const std::function<void(size_t)>& task) { runParallel(slices, task, max_threads); };
  run([&](size_t t) {
    auto [a, b] = slice(t);
    double lo = key[a], hi = key[a];
    bool sorted = true;
    for (size_t i = a; i < b; i++) {
      lo = std::min(lo, key[i]);
      hi = std::max(hi, key[i]);
      sorted &= i == a || key[i - 1] <= key[i];
    }
    lo_of[t] = lo;
    hi_of[t] = hi;
    sorted_of[t] = sorted;
  });
  // Already in order (a table written in time order, as api_calls usually is): the read order is the order.
  bool sorted = true;
  for (size_t t = 0; t < slices; t++) sorted = sorted && sorted_of[t] && (t == 0 || key[slice(t).first - 1] <= key[slice(t).first]);
  if (sorted) {
    run([&](size_t t) {
      auto [a, b] = slice(t);
      for (size_t i = a; i < b; i++) idx[i] = static_cast<uint32_t>(i);
    });
    return true;
  }
  const double lo = *std::min_element(lo_of.begin(), lo_of.end());
  const uint64_t range = static_cast<uint64_t>(*std::max_element(hi_of.begin(), hi_of.end()) - lo);
  int bits = 0;
  while (bits < 64 && (range >> bits) != 0) bits++;
  const int passes = (bits + 10) / 11;
  k.reuse(n);
  // The runs already in order, found while the keys are written: a table
  // is written nearly in time order (a recording's kernels as CUPTI's
  // buffers complete; the loader's ops are kernels, then copies, then
  // memsets), so the ops are a few sorted runs (the DDP recordings 5, the
  // bench's generated ranks 15).
  std::vector<std::vector<size_t>> starts_of(slices);
  run([&](size_t t) {
    auto [a, b] = slice(t);
    auto& starts = starts_of[t];
    for (size_t i = a; i < b; i++) {
      k[i] = static_cast<uint64_t>(key[i] - lo);
      idx[i] = static_cast<uint32_t>(i);
      if (i > 0 && key[i] < key[i - 1] && starts.size() < kMaxMergedRuns) starts.push_back(i);
    }
  });
  if (passes == 0) return true;  // every key equal: the identity
  // Merged where that takes no more sweeps than the radix sort (each of
  // its passes is two: a count and a scatter to places all over the
  // columns): ceil(log2(runs)) sequential ones. A generated rank of the job
  // bench (1 M ops in 15 runs, against 4 radix passes): its load 6% less
  // time; the 10 M-launch bench recording (232 runs, 8 sweeps against 4
  // passes): its narrow load's CPU time 1.17-1.30 -> 0.93-0.95 s.
  std::vector<size_t> runs{0};
  for (auto& starts : starts_of) runs.insert(runs.end(), starts.begin(), starts.end());
  const size_t count = runs.size();
  if (count < kMaxMergedRuns) {
    runs.push_back(n);
    const std::vector<std::vector<size_t>> chains = chainRuns(runs, k);
    // A sweep to gather the chains (where there are fewer of them than runs), then one per merge pass.
    const size_t merged = std::min(chains.size(), count);
    int sweeps = merged < count ? 1 : 0;
    for (int p = 0; (size_t{1} << p) < merged; p++) sweeps++;
    if (sweeps <= 2 * passes) {
      if (merged < count) runs = gatherChains(runs, chains, k, idx, scratch, max_threads);
      mergeRuns(std::move(runs), k, idx, scratch, max_threads);
      return false;
    }
    runs.pop_back();
  }
  const int digit_bits = (bits + passes - 1) / passes;
  const size_t buckets = size_t{1} << digit_bits;
  const uint64_t mask = buckets - 1;
  k2.reuse(n);
  idx2.reuse(n);
  std::vector<size_t> at(slices * buckets);  // at[t * buckets + d]: next slot of digit d for slice t
  for (int p = 0, shift = 0; p < passes; p++, shift += digit_bits) {
    run([&](size_t t) {
      auto [a, b] = slice(t);
      size_t* count = &at[t * buckets];
      std::fill(count, count + buckets, 0);
      for (size_t i = a; i < b; i++) count[(k[i] >> shift) & mask]++;
    });
    size_t sum = 0;
    for (size_t d = 0; d < buckets; d++) {
      for (size_t t = 0; t < slices; t++) {
        const size_t c = at[t * buckets + d];
        at[t * buckets + d] = sum;
        sum += c;
      }
    }
    run([&](size_t t) {
      auto [a, b] = slice(t);
      size_t* next = &at[t * buckets];
      for (size_t i = a; i < b; i++) {
        const size_t to = next[(k[i] >> shift) & mask]++;
        k2[to] = k[i];
        idx2[to] = idx[i];
      }
    });
    std::swap(k, k2);
    std::swap(idx, idx2);
  }
  return false;
}

// A table's rows [lo, hi] by rowid: a piece one thread reads on its own
// connection. Rowids are dense (rows are only ever appended), so equal
// rowid spans are about equal work.
struct Part {
  int table;  // 0 kernels, 1 memcpys, 2 memsets, 3 api_calls
  int64_t lo, hi;
  size_t slots;  // rows it may hold: its span, or its count where rowids are sparse
};

constexpr const char* kTables[] = {"kernels", "memcpys", "memsets", "api_calls"};
// Rows per part: large enough that opening a connection is noise (~0.1 ms
// against ~50 ms of rows), small enough that 16 cores get several parts
// each: with 1 M-row parts, 10 M ops and 10 M calls made 20 parts, and
// 16 cores spent the second half of the read waiting on the last four.
constexpr int64_t kRowsPerPart = 1 << 18;

// zones.table_id of each table in kTables.
constexpr int kZoneTableIds[] = {zone_table::kKernels, zone_table::kMemcpys, zone_table::kMemsets, zone_table::kApiCalls};

std::vector<Part> partsOf(Db& db) {
  std::vector<Part> parts;
  for (int t = 0; t < 4; t++) {
    // min and max of a rowid, each in its own subquery, are two b-tree
    // descents (SQLite optimises a lone min() or max() only: together, or
    // with count(*), they walk every page of the table on one thread, ~0.4 s
    // per 10 M rows while the other cores wait); the row count comes from
    // the zones.
    int64_t lo = 0, hi = -1, zoned = 0;
    const std::string table = kTables[t];
    db.each(("SELECT (SELECT min(id) FROM " + table + "), (SELECT max(id) FROM " + table + ")").c_str(), [&](sqlite3_stmt* s) {
      if (sqlite3_column_type(s, 0) == SQLITE_NULL) return;
      lo = i64(s, 0);
      hi = i64(s, 1);
    });
    if (hi < lo) continue;
    db.each(("SELECT coalesce(sum(rows), 0) FROM zones WHERE table_id = " + std::to_string(kZoneTableIds[t])).c_str(),
            [&](sqlite3_stmt* s) { zoned = i64(s, 0); });
    // Sparse rowids (rows deleted by hand), or rows the zones do not cover:
    // size each part by its count, not its span, so a few rows with
    // far-apart ids never ask for gigabytes. Dense: the span is exact.
    const bool sparse = hi - lo + 1 > 2 * zoned;
    for (int64_t a = lo; a <= hi; a += kRowsPerPart) {
      Part p{t, a, std::min(hi, a + kRowsPerPart - 1), 0};
      if (!sparse) p.slots = static_cast<size_t>(p.hi - p.lo + 1);
      else {
        db.each((std::string("SELECT count(*) FROM ") + kTables[t] + " WHERE id BETWEEN ? AND ?").c_str(),
                [&](sqlite3_stmt* s) { p.slots = static_cast<size_t>(i64(s, 0)); }, p.lo, p.hi);
        if (p.slots == 0) continue;
      }
      parts.push_back(p);
    }
  }
  return parts;
}

// Moves `n` rows from `from` to `to` (to <= from) in a column: closes the
// hole a part leaves when its rowid span had gaps.
template <class T>
void shift(Column<T>& v, size_t from, size_t to, size_t n) {
  if (from != to) std::copy(v.data() + from, v.data() + from + n, v.data() + to);
}

template <class F>
void eachOpColumn(OpColumns& o, F&& f) {
#define STREAMSCOPE_EACH(member, js, T) f(o.member);
  STREAMSCOPE_OP_COLUMNS(STREAMSCOPE_EACH)
#undef STREAMSCOPE_EACH
}

template <class F>
void eachCallColumn(CallColumns& c, F&& f) {
#define STREAMSCOPE_EACH(member, js, T) f(c.member);
  STREAMSCOPE_CALL_COLUMNS(STREAMSCOPE_EACH)
#undef STREAMSCOPE_EACH
}

// A column borrowed from the caller's array (Column::borrow) put in the
// order `order` says where it is: gathered by the order into `scratch`
// (the sort's keys, 8 bytes a row, free once the order is known), then
// copied back, both on all cores. Twice the traffic of one gather from a
// column of the loader's own into the caller's array, but one set of pages
// instead of two: a page first touched costs more than its copy (~2 s a GB
// on a VM whose host takes freed memory back). 10 M operations and calls:
// the load 1.27 → 1.11 s and 270 MB less at the peak (the analysis as a
// whole within the noise: what the load no longer frees, the phases after
// it fault in). A column of its own stays as read (the binding gathers it).
// A column of one value throughout (a recording's one process, its one device) is in order as it is: left as read,
// without its two sweeps (a check that stops at the first other value, for every other column).
template <class T>
void placeInOrder(Column<T>& v, const Column<uint32_t>& order, Column<uint64_t>& scratch, size_t max_threads) {
  if (!v.borrowed()) return;
  const size_t n = v.size();
  if (n > 0 && std::all_of(v.data(), v.data() + n, [first = v[0]](const T& x) { return std::memcmp(&x, &first, sizeof(T)) == 0; })) return;
  scratch.reuse(n);
  // As bytes (memcpy of one value compiles to a move): the keys' memory holds each column's type in turn.
  unsigned char* tmp = reinterpret_cast<unsigned char*>(scratch.data());
  const unsigned char* col = reinterpret_cast<const unsigned char*>(v.data());
  const uint32_t* o = order.data();
  const size_t slices = threadsFor(n, 1 << 16, max_threads);
  const auto each_slice = [&](auto&& f) {
    runParallel(
        slices, [&](size_t s) { f(n * s / slices, n * (s + 1) / slices); }, max_threads);
  };
  each_slice([&](size_t a, size_t b) {
    for (size_t i = a; i < b; i++) std::memcpy(tmp + i * sizeof(T), col + size_t{o[i]} * sizeof(T), sizeof(T));
  });
  each_slice([&](size_t a, size_t b) { std::memcpy(v.data() + a, tmp + a * sizeof(T), (b - a) * sizeof(T)); });
}

// One part of kernels, memcpys or memsets, written straight to its place
// in the final columns from slot `at` on. Returns how many rows it held.
// A part never holds more rows than its slots (its rowid span, or its count
// when sparse) unless a writer changed the table while it was read: then
// stop rather than write past the part.
void checkRoom(const std::string& path, const Part& part, size_t i, size_t at) {
  if (i >= at + part.slots)
    throw LoadError(path + ": the " + kTables[part.table] + " table changed while it was being read; close the writer and try again");
}

// Rows of some zones (RowsRequest::zones): per lane, its zones' id ranges, sorted.
class ZoneSet {
 public:
  ZoneSet() = default;
  explicit ZoneSet(const std::vector<int64_t>& triples) {
    for (size_t k = 0; k + 2 < triples.size(); k += 3) by_lane_[triples[k]].emplace_back(triples[k + 1], triples[k + 2]);
    for (auto& [lane, list] : by_lane_) std::sort(list.begin(), list.end());
  }
  bool empty() const { return by_lane_.empty(); }
  bool holds(int64_t lane, int64_t id) const {
    auto it = by_lane_.find(lane);
    if (it == by_lane_.end()) return false;
    const auto& list = it->second;
    // The last range starting at or before id.
    auto r = std::upper_bound(list.begin(), list.end(), std::pair<int64_t, int64_t>{id, INT64_MAX});
    return r != list.begin() && std::prev(r)->second >= id;
  }

 private:
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_lane_;
};

// Which rows and columns a read keeps (loadRows); the default keeps all.
struct ReadFilter {
  // Only these processes' rows; null: every row.
  const std::vector<int32_t>* pids = nullptr;
  // Ops: correlation, asynchrony and shape not read (0).
  bool narrow = false;
  int64_t max_start = INT64_MAX;
  // Per table (kernels, memcpys, memsets, api_calls): only rows of these zones, where not empty.
  const ZoneSet* zones = nullptr;
  // Calls: by name or duration (RowsRequest::call_names, call_min_ns).
  const std::vector<int32_t>* call_names = nullptr;
  int64_t call_min_ns = -1;
  // Narrow ops: each stream's pid and device (its context's), so that a
  // row's are not looked up by its own device and context (which are read,
  // and checked, all the same); null: they are.
  const std::unordered_map<int64_t, std::pair<int32_t, int32_t>>* place_of_stream = nullptr;
  bool keeps(int32_t pid) const { return !pids || std::find(pids->begin(), pids->end(), pid) != pids->end(); }
  bool inZones(int table, int64_t lane, int64_t id) const { return !zones || zones[table].empty() || zones[table].holds(lane, id); }
  bool keepsCall(int32_t name, int64_t duration) const {
    if (!call_names && call_min_ns < 0) return true;
    return (call_min_ns >= 0 && duration >= call_min_ns) ||
           (call_names && std::find(call_names->begin(), call_names->end(), name) != call_names->end());
  }
};

// A row on a stream place_of_stream does not know: read the part again with the rows' own columns.
struct UnplacedStream {};

// What a part's read asks of its table: columns by name, in the order the
// row is read back (row.i64(k)); "0" is the constant 0. Both ways of reading
// take it: as the SELECT it spells (SqlSource) and as the record columns it
// names (PageSource).
struct Query {
  int table;
  std::vector<const char*> columns;
  std::string sql() const {
    std::string s = "SELECT ";
    for (size_t k = 0; k < columns.size(); k++) s += (k ? ", " : "") + std::string(columns[k]);
    return s + " FROM " + kTables[table] + " WHERE id BETWEEN ? AND ? ORDER BY id";
  }
};

// The part's queries. Narrow ops leave out what the job analysis does not
// read (each column SQLite decodes costs ~12 ns a row). Ops placed by
// stream (their process and device their stream's) still read their own
// device and context: RowCheck refuses an id naming no row in every load,
// so that a job read rank by rank is refused as one read whole.
const Query kKernelsNarrow{0, {"id", "start_ns", "end_ns", "stream_id", "device_id", "0", "context_id", "name_id"}};
// Raw shape columns, multiplied here: SQLite's arithmetic opcodes cost more per row than the column reads themselves.
const Query kKernels{0,
                     {"id", "start_ns", "end_ns", "stream_id", "device_id", "correlation_id", "context_id", "name_id", "grid_x", "grid_y",
                      "grid_z", "block_x", "block_y", "block_z", "registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes"}};
const Query kMemcpysNarrow{
    1, {"id", "start_ns", "end_ns", "stream_id", "device_id", "0", "context_id", "bytes", "src_kind", "dst_kind", "copy_kind", "0"}};
const Query kMemcpys{1,
                     {"id", "start_ns", "end_ns", "stream_id", "device_id", "correlation_id", "context_id", "bytes", "src_kind", "dst_kind",
                      "copy_kind", "is_async"}};
const Query kMemsetsNarrow{2, {"id", "start_ns", "end_ns", "stream_id", "device_id", "0", "context_id", "bytes", "memory_kind", "0"}};
const Query kMemsets{
    2, {"id", "start_ns", "end_ns", "stream_id", "device_id", "correlation_id", "context_id", "bytes", "memory_kind", "is_async"}};
const Query kCalls{3, {"id", "start_ns", "end_ns", "pid", "tid", "name_id", "correlation_id", "domain"}};
constexpr size_t kMaxQueryColumns = 17;

// Rows through SQLite: the query's SELECT on the part's own connection.
struct SqlSource {
  Db& db;
  struct Row {
    sqlite3_stmt* s;
    int64_t i64(int k) const { return sqlite3_column_int64(s, k); }
    // Bit k set: column k holds something other than an integer (refused: row_rules.h).
    uint32_t odd() const {
      uint32_t m = 0;
      for (int k = 0, n = sqlite3_column_count(s); k < n; k++)
        if (sqlite3_column_type(s, k) != SQLITE_INTEGER) m |= uint32_t{1} << k;
      return m;
    }
  };
  template <class F>
  void each(const Query& q, int64_t lo, int64_t hi, F&& row) {
    db.each(
        q.sql().c_str(), [&](sqlite3_stmt* s) { row(Row{s}); }, lo, hi);
  }
};

// What the pages need of a table's schema: its root page, where each
// column sits in its records, which one is the rowid, and what a record
// written before a column was added reads for it.
struct TableLayout {
  uint32_t root = 0;
  int rowid_column = -1;  // the INTEGER PRIMARY KEY's position
  std::unordered_map<std::string, int> position;
  std::vector<int64_t> dflt;      // per column: what a record that lacks it reads
  std::vector<uint8_t> dflt_odd;  // per column: that value is not an integer (NULL: no default)
};

// Rows straight from the file's table b-trees (btree_reader.h), through
// SQLite's own map of the file, while `db` holds a read transaction: the
// pages cannot change underneath (a writer's commit waits for the shared
// lock), and they are the pages SQLite itself would read. Each value is
// what sqlite3_column_int64 gives for it: integers of every width; a column
// a record lacks (written before an ALTER TABLE ADD COLUMN) its default, as
// SQLite computes it. A value that is not an integer (NULL, a REAL, TEXT,
// a BLOB) is marked in the row's odd(), as SqlSource marks it: the caller
// refuses the row (row_rules.h) whichever way it was read. What this cannot
// give exactly (a record overflowing its page, a table that is not a rowid
// table) throws btree::Unsupported, a file that is not what its tree says
// btree::Damaged: the caller then reads the whole load through SQLite
// (which reports a damaged file as it always has).
class PageSource {
 public:
  // Maps the file; nullopt when ready, else why not.
  std::optional<std::string> open(Db& db, const bool (&tables)[4]);
  ~PageSource() {
    if (mapped_) file_->pMethods->xUnfetch(file_, 0, mapped_);
  }

  struct Row {
    const int64_t* v;
    uint32_t odd_;
    int64_t i64(int k) const { return v[k]; }
    uint32_t odd() const { return odd_; }
  };

  template <class F>
  void each(const Query& q, int64_t lo, int64_t hi, F&& row) {
    if (!tables_[q.table]) throw btree::Unsupported(std::string(kTables[q.table]) + " not prepared");
    const TableLayout& t = *tables_[q.table];
    // slot_of[c]: where schema column c goes in the row (-1: not read).
    int8_t slot_of[64];
    int last = -1;
    int64_t v[kMaxQueryColumns] = {};
    int64_t dflt[kMaxQueryColumns] = {};
    uint32_t dflt_odd[kMaxQueryColumns] = {};
    std::fill(std::begin(slot_of), std::end(slot_of), int8_t(-1));
    for (size_t k = 0; k < q.columns.size(); k++) {
      if (std::strcmp(q.columns[k], "0") == 0) continue;
      auto it = t.position.find(q.columns[k]);
      if (it == t.position.end()) throw btree::Unsupported(std::string(kTables[q.table]) + " has no column " + q.columns[k]);
      const int c = it->second;
      if (c >= 64) throw btree::Unsupported(std::string(kTables[q.table]) + "." + q.columns[k] + " is beyond column 64");
      slot_of[c] = int8_t(k);
      dflt[k] = t.dflt[c];
      dflt_odd[k] = t.dflt_odd[c] ? uint32_t{1} << k : 0;
      last = std::max(last, c);
    }
    const int id = t.rowid_column;
    // Where the mapped file ends: a value is read as the 8 bytes from its start where those lie within it.
    const uint8_t* const mapEnd = pages_.base + size_t(pages_.count) * pages_.pageSize;
    // Columns from `c` on that the record lacks (written before an ALTER TABLE ADD COLUMN): their defaults.
    auto defaultsFrom = [&](int c, int64_t rowid, uint32_t& odd) {
      for (; c <= last; c++) {
        const int k = slot_of[c];
        if (k < 0) continue;
        v[k] = c == id ? rowid : dflt[k];
        if (c != id) odd |= dflt_odd[k];
      }
    };
    // A value that is not an integer (NULL, a REAL, TEXT or a BLOB) at `at`: read as SQLite reads it as an integer, and marked.
    auto notInteger = [&](int k, uint64_t type, const uint8_t* at, uint32_t& odd) {
      v[k] = type == 7 ? btree::realToInt(btree::readReal(at)) : 0;
      odd |= uint32_t{1} << k;
    };
    // The usual record, read without the general walk below: one-byte serial types up to the last column read (an
    // integer, NULL, a REAL, a TEXT or BLOB of under 58 bytes: the timeline tables' every row as written), widths from
    // btree::serialLen, each integer loaded as 8 bytes and shifted down to its width. Whatever else (a longer serial type, a
    // reserved one, a value past the record, an id stored in its record, the file's last bytes): false, and the
    // general walk reads the record, saying what is wrong with it. The 10 M-operation load read 675 → 620 ms on both
    // cores of the development VM (user time 1.38 → 1.29 s).
    auto fast = [&](int64_t rowid, const uint8_t* p, uint32_t len) {
      const uint32_t hdr = len > 0 ? p[0] : 0;
      if (hdr == 0 || hdr >= 0x80 || hdr > len) return false;
      const uint8_t* h = p + 1;
      const uint32_t upto = std::min<uint32_t>(hdr - 1, uint32_t(last + 1));
      uint32_t off = hdr;
      uint32_t odd = 0;
      for (uint32_t c = 0; c < upto; c++) {
        const uint32_t type = h[c];
        if (type >= 0x80) return false;
        const int64_t width = btree::serialLen(type);  // -1: reserved
        if (width < 0 || width > int64_t(len - off)) return false;
        const int k = slot_of[c];
        if (int(c) == id) {
          if (type != 0) return false;
          if (k >= 0) v[k] = rowid;
        } else if (k >= 0) {
          if (type >= 1 && type <= 6) {
            if (p + off + 8 > mapEnd) return false;
            uint64_t raw;
            std::memcpy(&raw, p + off, 8);
            v[k] = int64_t(__builtin_bswap64(raw)) >> (64 - 8 * width);
          } else if (type == 8 || type == 9) {
            v[k] = type - 8;
          } else {
            notInteger(k, type, p + off, odd);
          }
        }
        off += uint32_t(width);
      }
      defaultsFrom(int(upto), rowid, odd);
      row(Row{v, odd});
      return true;
    };
    btree::readAhead(pages_, t.root, lo, hi);
    btree::scanTable(pages_, t.root, lo, hi, [&](int64_t rowid, const uint8_t* p, uint32_t len) {
      if (fast(rowid, p, len)) return;
      int c = 0;
      uint32_t odd = 0;
      for (btree::Record r(p, len); c <= last && r.next(); c++) {
        const int k = slot_of[c];
        if (c == id) {
          // The INTEGER PRIMARY KEY: NULL in the record, the rowid in the cell.
          if (r.type != 0) throw btree::Unsupported(std::string(kTables[q.table]) + ".id stored in its record");
          if (k >= 0) v[k] = rowid;
          continue;
        }
        if (k < 0) continue;
        const uint64_t type = r.type;
        if (btree::isInteger(type)) v[k] = btree::readInt(type, r.value);
        else notInteger(k, type, r.value, odd);
      }
      defaultsFrom(c, rowid, odd);
      row(Row{v, odd});
    });
  }

 private:
  // Null where the table is not read (or not prepared).
  std::shared_ptr<const TableLayout> tables_[4];
  btree::Pages pages_;
  sqlite3_file* file_ = nullptr;
  void* mapped_ = nullptr;
};

// A column's default as SQLite reads it (column_int64) from a row written
// before the column was added: computed by SQLite, on a table in memory
// given the same column by ALTER TABLE ADD COLUMN.
// `odd`: set where that value is not an integer.
int64_t defaultValue(const std::string& type, const std::string& dflt, bool& odd) {
  sqlite3* m = nullptr;
  if (sqlite3_open_v2(":memory:", &m, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(m);
    throw btree::Unsupported("cannot compute a column's default");
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> own(m, sqlite3_close);
  const std::string sql = "CREATE TABLE t(a); INSERT INTO t VALUES (1); ALTER TABLE t ADD COLUMN x " + type + " DEFAULT " + dflt + ";";
  if (sqlite3_exec(m, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    throw btree::Unsupported("cannot compute the default " + dflt + ": " + sqlite3_errmsg(m));
  int64_t v = 0;
  odd = true;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(m, "SELECT x FROM t", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
    v = sqlite3_column_int64(s, 0);
    odd = sqlite3_column_type(s, 0) != SQLITE_INTEGER;
  }
  sqlite3_finalize(s);
  return v;
}

// A table's layout as its schema says it (the caller's `db` in its read
// transaction); null, and why in `why`, where the pages cannot read it.
// A WITHOUT ROWID table's root is an index page, which the walk refuses; a
// key that is not the rowid (INTEGER PRIMARY KEY DESC) is stored in the
// record, which the read refuses.
std::shared_ptr<const TableLayout> readLayout(Db& db, const std::string& name, uint32_t root, std::string& why) {
  auto table = std::make_shared<TableLayout>();
  table->root = root;
  int pks = 0;
  db.each(("SELECT cid, name, upper(coalesce(type, '')), dflt_value, pk FROM pragma_table_info('" + name + "')").c_str(),
          [&](sqlite3_stmt* s) {
            const int cid = static_cast<int>(sqlite3_column_int64(s, 0));
            const std::string col = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
            const std::string type = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
            std::string lower = col;
            for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            table->position[lower] = cid;
            if (table->dflt.size() <= size_t(cid)) table->dflt.resize(cid + 1, 0);
            // No DEFAULT: a record that lacks the column reads NULL.
            if (table->dflt_odd.size() <= size_t(cid)) table->dflt_odd.resize(cid + 1, 1);
            if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
              bool odd = true;
              table->dflt[cid] = defaultValue(type, reinterpret_cast<const char*>(sqlite3_column_text(s, 3)), odd);
              table->dflt_odd[cid] = odd;
            }
            if (sqlite3_column_int64(s, 4) > 0) {
              pks++;
              if (lower == "id" && type == "INTEGER") table->rowid_column = cid;
            }
          });
  if (pks != 1 || table->rowid_column < 0) {
    why = name + ".id is not its rowid (INTEGER PRIMARY KEY)";
    return nullptr;
  }
  return table;
}

// The layouts of the tables read lately. Each load used to read every
// table's pragma_table_info again and compute its defaults, each on an
// in-memory database of its own: a loadRows of a few rows took 0.56–0.64 ms
// with it, 0.42 ms without (development VM), and the job analysis calls
// loadRows rank after rank, on every JS worker.
// An entry is keyed by what its layout is derived from, the table's
// sqlite_schema row (name, root page, CREATE TABLE text), read again on
// every load (one small query for all four tables, PageSource::open): a
// migrated table's text changed (ALTER TABLE rewrites it, a rebuilt table
// has a new root), a replaced file's row is its own. Path, inode, mtime, schema cookie or user_version would each
// miss a case: a file copied over another keeps its path and inode, and two
// files migrated differently can share a cookie and a user_version.
// Ranks of one job share their entries (the same schema, usually the same roots).
// Shared by every thread that loads (loadRows runs on the JS worker that calls it).
class LayoutCache {
 public:
  std::shared_ptr<const TableLayout> find(const std::string& key) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (size_t i = 0; i < entries_.size(); i++) {
      if (entries_[i].first != key) continue;
      // Most recently used first: the least recently used is evicted.
      std::rotate(entries_.begin(), entries_.begin() + i, entries_.begin() + i + 1);
      return entries_.front().second;
    }
    return nullptr;
  }
  void put(const std::string& key, std::shared_ptr<const TableLayout> layout) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const auto& e : entries_)
      if (e.first == key) return;  // another thread read it meanwhile
    entries_.emplace(entries_.begin(), key, std::move(layout));
    if (entries_.size() > kEntries) entries_.pop_back();
  }

 private:
  // Four tables of a few schemas at a time (a job's ranks, a recording and its merge).
  static constexpr size_t kEntries = 16;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const TableLayout>>> entries_;
};

LayoutCache layout_cache;

// The table's layout: from the cache where its sqlite_schema row (`root`,
// `sql`: its CREATE TABLE text) is the one cached, else read and cached.
std::shared_ptr<const TableLayout> layoutOf(Db& db, const std::string& name, uint32_t root, const std::string& sql, std::string& why) {
  const std::string key = name + '\0' + std::to_string(root) + '\0' + sql;
  if (auto cached = layout_cache.find(key)) return cached;
  auto layout = readLayout(db, name, root, why);
  if (layout) layout_cache.put(key, layout);
  return layout;
}

std::optional<std::string> PageSource::open(Db& db, const bool (&tables)[4]) {
  try {
    if (sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_FILE_POINTER, &file_) != SQLITE_OK || !file_ || !file_->pMethods)
      return "no file to map";
    const sqlite3_io_methods* io = file_->pMethods;
    if (io->iVersion < 3 || !io->xFetch || !io->xUnfetch) return "the file cannot be mapped (VFS without xFetch)";
    sqlite3_int64 size = 0;
    if (io->xFileSize(file_, &size) != SQLITE_OK) return "cannot size the file";
    if (size < 1024) return "the file is too small";
    // xFetch keeps 256 bytes past what it hands out: asking for all but those proves the whole file is mapped.
    if (io->xFetch(file_, 0, int(std::min<sqlite3_int64>(size - 256, INT32_MAX)), &mapped_) != SQLITE_OK || !mapped_)
      return "the file is not memory-mapped (beyond SQLite's map limit)";
    if (size - 256 > INT32_MAX) {
      // Larger than one xFetch can ask for: ask for the end too (its map is one region from the start).
      void* tail = nullptr;
      if (io->xFetch(file_, size - 256 - (1 << 20), 1 << 20, &tail) != SQLITE_OK || !tail)
        return "the file is not memory-mapped (beyond SQLite's map limit)";
      io->xUnfetch(file_, size - 256 - (1 << 20), tail);
      if (static_cast<uint8_t*>(tail) != static_cast<uint8_t*>(mapped_) + (size - 256 - (1 << 20))) return "the file is mapped in pieces";
    }
    const uint8_t* base = static_cast<const uint8_t*>(mapped_);
    if (base[18] == 2 || base[19] == 2) {
      struct stat st {};
      if (::stat((db.path() + "-wal").c_str(), &st) == 0 && st.st_size > 0)
        return "WAL mode with a non-empty -wal file (a recording still being written)";
    }
    pages_.init(base, size_t(size));
    // The tables' sqlite_schema rows, all in one query: root page and CREATE TABLE text.
    uint32_t root[4] = {};
    std::string sql[4];
    db.each("SELECT name, rootpage, sql FROM sqlite_schema WHERE type = 'table'", [&](sqlite3_stmt* s) {
      const char* name = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      for (int t = 0; t < 4; t++) {
        if (!name || std::strcmp(name, kTables[t]) != 0) continue;
        root[t] = static_cast<uint32_t>(sqlite3_column_int64(s, 1));
        const unsigned char* text = sqlite3_column_text(s, 2);
        sql[t] = text ? reinterpret_cast<const char*>(text) : "";
      }
    });
    for (int t = 0; t < 4; t++) {
      if (!tables[t]) continue;
      if (root[t] == 0) return std::string(kTables[t]) + " is not a table";
      std::string why;
      tables_[t] = layoutOf(db, kTables[t], root[t], sql[t], why);
      if (!tables_[t]) return why;
    }
    return std::nullopt;
  } catch (const btree::Damaged& e) {
    return e.what();
  } catch (const btree::Unsupported& e) {
    return e.what();
  } catch (const SqliteError& e) {
    return e.what();
  }
}

// What a load knows of the recording before it reads a row: each context's
// process, and the rows that ids in the timeline tables may name
// (row_rules.h: an id naming none refuses the file).
struct Recording {
  std::unordered_map<int64_t, int32_t> pid_of_context;
  IdSet streams, devices, strings;
};

// The checks of row_rules.h on the rows one query reads: refuse() throws
// MalformedRow for a row the load refuses, leftOut() says whether a row is
// left out and counts it in `left`. A query's "0" columns are not read, so
// not checked. Ids come in long runs (a stream's rows, a context's): each
// is looked up when it changes.
class RowCheck {
 public:
  RowCheck(const Recording& rec, const Query& q, LeftOut& left) : rec_(rec), q_(q), left_(left) {
    for (size_t k = 0; k < q.columns.size(); k++) read_[k] = std::strcmp(q.columns[k], "0") != 0;
    name_ = q.table == 0 ? 7 : q.table == 3 ? 5 : -1;
    bytes_ = q.table == 1 || q.table == 2 ? 7 : -1;
  }

  template <class R>
  void refuse(const R& s) {
    const int64_t id = s.i64(0);
    if (const uint32_t odd = s.odd()) throw at(id, __builtin_ctz(odd), MalformedRow::Type);
    for (int k : {1, 2})
      if (!holdsTime(s.i64(k))) throw at(id, k, MalformedRow::Time, s.i64(k));
    if (name_ >= 0 && read_[name_] && !rec_.strings.contains(s.i64(name_)))
      throw at(id, name_, MalformedRow::Reference, s.i64(name_), "strings");
    if (q_.table == 3) return;
    // Operations: stream 3, device 4, context 6.
    if (!stream_.is(s.i64(3))) {
      if (!rec_.streams.contains(s.i64(3))) throw at(id, 3, MalformedRow::Reference, s.i64(3), "streams");
      stream_.set(s.i64(3));
    }
    if (read_[4] && !device_.is(s.i64(4))) {
      if (!rec_.devices.contains(s.i64(4))) throw at(id, 4, MalformedRow::Reference, s.i64(4), "devices");
      device_.set(s.i64(4));
    }
    if (read_[6] && !context_.is(s.i64(6))) {
      if (rec_.pid_of_context.find(s.i64(6)) == rec_.pid_of_context.end()) throw at(id, 6, MalformedRow::Reference, s.i64(6), "contexts");
      context_.set(s.i64(6));
    }
  }

  template <class R>
  bool leftOut(const R& s) {
    if (s.i64(2) < s.i64(1)) {
      count(s, [&] { return "end_ns " + std::to_string(s.i64(2)) + " is before start_ns " + std::to_string(s.i64(1)); });
      return true;
    }
    if (bytes_ >= 0 && read_[bytes_] && s.i64(bytes_) < 0) {
      count(s, [&] { return "bytes " + std::to_string(s.i64(bytes_)) + " is negative"; });
      return true;
    }
    return false;
  }

 private:
  MalformedRow at(int64_t rowid, int k, MalformedRow::Kind kind, int64_t value = 0, const char* refers_to = nullptr) const {
    return MalformedRow{q_.table, rowid, q_.columns[k], kind, value, refers_to};
  }
  // One more row left out; the first is said (a part is read in rowid order).
  template <class R, class Why>
  void count(const R& s, Why&& why) {
    if (left_.rows++ > 0) return;
    left_.table = q_.table;
    left_.rowid = s.i64(0);
    left_.first = std::string(kTables[q_.table]) + " row " + std::to_string(s.i64(0)) + ": " + why();
  }

  const Recording& rec_;
  const Query& q_;
  LeftOut& left_;
  bool read_[kMaxQueryColumns] = {};
  int name_, bytes_;
  // The last id found, if any (no sentinel value: every int64 may be stored, -2^63 too, found by fuzzing).
  struct Last {
    int64_t id = 0;
    bool any = false;
    bool is(int64_t v) const { return any && id == v; }
    void set(int64_t v) {
      id = v;
      any = true;
    }
  };
  Last stream_, device_, context_;
};

// The query each table is read with: the ops' narrow ones (what the job
// analysis reads; placed by stream, without device and context) or whole.
const Query& queryOf(int table, const ReadFilter& filter) {
  switch (table) {
    case 0: return filter.narrow ? kKernelsNarrow : kKernels;
    case 1: return filter.narrow ? kMemcpysNarrow : kMemcpys;
    case 2: return filter.narrow ? kMemsetsNarrow : kMemsets;
    default: return kCalls;
  }
}

// One part of kernels, memcpys or memsets, written straight to its place
// in the final columns from slot `at` on. Returns how many rows it kept.
// Every row read is checked (RowCheck): one refused throws MalformedRow,
// whatever the filter; of the rows the filter keeps, those left out are
// counted in `left` (the part's own).
template <class Source>
size_t readOps(Source& src, const std::string& path, const Part& part, const Recording& rec, OpColumns& o, size_t at,
               const ReadFilter& filter, LeftOut& left) {
  left = LeftOut{};
  size_t i = at;
  // Never a stored id: RowCheck refuses any id of no stream or context, and ids are at least 1 (database.ts checkRowIds).
  int64_t last_context = INT64_MIN, last_stream = INT64_MIN;
  int32_t last_pid = 0, last_device = 0;
  const bool by_stream = filter.narrow && filter.place_of_stream;
  const Query& q = queryOf(part.table, filter);
  RowCheck check(rec, q, left);
  // Whether the row is kept (its process's, when only some are asked for, and not left out).
  auto common = [&](const auto& s, uint8_t kind) {
    checkRoom(path, part, i, at);
    check.refuse(s);
    if (s.i64(1) > filter.max_start || !filter.inZones(part.table, s.i64(3), s.i64(0))) return false;
    // Rows of one context (or stream) come in long runs: look its pid up when it changes.
    int32_t device;
    if (by_stream) {
      const int64_t stream = s.i64(3);
      if (stream != last_stream) {
        auto it = filter.place_of_stream->find(stream);
        if (it == filter.place_of_stream->end()) throw UnplacedStream{};
        last_pid = it->second.first;
        last_device = it->second.second;
        last_stream = stream;
      }
      device = last_device;
    } else {
      const int64_t context = s.i64(6);
      if (context != last_context) {
        last_pid = rec.pid_of_context.at(context);  // there: RowCheck refused any other
        last_context = context;
      }
      device = static_cast<int32_t>(s.i64(4));
    }
    const int32_t pid = last_pid;
    if (!filter.keeps(pid) || check.leftOut(s)) return false;
    o.pid[i] = pid;
    // Columns shared by the queries: id, start, end, stream, device, correlation, context.
    o.kind[i] = kind;
    o.row_id[i] = static_cast<double>(s.i64(0));
    o.start[i] = static_cast<double>(s.i64(1));
    o.end[i] = static_cast<double>(s.i64(2));
    o.stream[i] = static_cast<int32_t>(s.i64(3));
    o.device[i] = device;
    o.correlation[i] = static_cast<uint32_t>(s.i64(5));
    return true;
  };
  auto noShape = [&] {
    o.blocks[i] = 0;
    o.block_threads[i] = 0;
    o.registers[i] = 0;
    o.shared_bytes[i] = 0;
  };
  if (part.table == 0) {
    const bool shape = !filter.narrow;
    src.each(q, part.lo, part.hi, [&](const auto& s) {
      if (!common(s, 1)) return;
      o.bytes[i] = 0;
      o.detail[i] = static_cast<int32_t>(s.i64(7));
      o.copy_kind[i] = 0;
      o.is_async[i] = 1;
      if (shape) {
        o.blocks[i] = static_cast<double>(s.i64(8)) * static_cast<double>(s.i64(9)) * static_cast<double>(s.i64(10));
        o.block_threads[i] = static_cast<int32_t>(s.i64(11) * s.i64(12) * s.i64(13));
        o.registers[i] = static_cast<int32_t>(s.i64(14));
        o.shared_bytes[i] = static_cast<int32_t>(s.i64(15) + s.i64(16));
      } else {
        noShape();
      }
      i++;
    });
  } else if (part.table == 1) {
    src.each(q, part.lo, part.hi, [&](const auto& s) {
      if (!common(s, 2)) return;
      o.bytes[i] = static_cast<double>(s.i64(7));
      o.detail[i] = static_cast<int32_t>(s.i64(8) * 16 + s.i64(9));
      o.copy_kind[i] = static_cast<uint8_t>(s.i64(10));
      o.is_async[i] = static_cast<uint8_t>(s.i64(11));
      noShape();
      i++;
    });
  } else {
    src.each(q, part.lo, part.hi, [&](const auto& s) {
      if (!common(s, 3)) return;
      o.bytes[i] = static_cast<double>(s.i64(7));
      o.detail[i] = static_cast<int32_t>(s.i64(8));
      o.copy_kind[i] = 0;
      o.is_async[i] = static_cast<uint8_t>(s.i64(9));
      noShape();
      i++;
    });
  }
  return i - at;
}

template <class Source>
size_t readCalls(Source& src, const std::string& path, const Part& part, const Recording& rec, CallColumns& c, size_t at,
                 const ReadFilter& filter, LeftOut& left) {
  left = LeftOut{};
  size_t i = at;
  RowCheck check(rec, kCalls, left);
  src.each(kCalls, part.lo, part.hi, [&](const auto& s) {
    checkRoom(path, part, i, at);
    check.refuse(s);
    if (!filter.keeps(static_cast<int32_t>(s.i64(3))) || s.i64(1) > filter.max_start ||
        !filter.keepsCall(static_cast<int32_t>(s.i64(5)), s.i64(2) - s.i64(1)) ||
        !filter.inZones(3, zone_table::threadLane(static_cast<uint32_t>(s.i64(3)), static_cast<uint32_t>(s.i64(4))), s.i64(0)) ||
        check.leftOut(s))
      return;
    c.row_id[i] = static_cast<double>(s.i64(0));
    c.start[i] = static_cast<double>(s.i64(1));
    c.end[i] = static_cast<double>(s.i64(2));
    c.pid[i] = static_cast<int32_t>(s.i64(3));
    c.tid[i] = static_cast<int32_t>(s.i64(4));
    c.name_id[i] = static_cast<int32_t>(s.i64(5));
    c.correlation[i] = static_cast<uint32_t>(s.i64(6));
    c.domain[i] = static_cast<uint8_t>(s.i64(7));
    i++;
  });
  return i - at;
}

}  // namespace

void* allocateColumn(size_t bytes) {
  void* p = std::malloc(std::max<size_t>(bytes, 1));
  if (!p) throw std::bad_alloc();
  return p;
}

// Runs task(0..n-1) on up to hardware_concurrency threads; the first
// exception (in task order) is rethrown after all have finished.
void runParallel(size_t n, const std::function<void(size_t)>& task, size_t max_threads) {
  std::vector<std::exception_ptr> failed(n);
  std::atomic<size_t> next{0};
  size_t workers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (max_threads > 0) workers = std::min(workers, max_threads);
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        task(i);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; w++) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (auto& e : failed)
    if (e) std::rethrow_exception(e);
}

namespace {

// What is refused of a row (row_rules.h), in words, the value quoted as
// stored: asked of the file on `db` once a part has met it.
std::string describeMalformed(Db& db, const MalformedRow& m) {
  const std::string where = std::string(kTables[m.table]) + " row " + std::to_string(m.rowid) + ": " + m.column;
  if (m.kind == MalformedRow::Time)
    return where + " " + std::to_string(m.value) + " is beyond the ±2^53 ns (104 days) from its origin that a recording's times hold";
  if (m.kind == MalformedRow::Reference) return where + " " + std::to_string(m.value) + " names no row of " + m.refers_to;
  std::string holds = "a value";
  try {
    const std::string c = m.column;
    db.each(("SELECT typeof(" + c + "), CASE typeof(" + c + ") WHEN 'text' THEN substr(" + c + ", 1, 41) WHEN 'blob' THEN length(" + c +
             ") ELSE " + c + " END FROM " + kTables[m.table] + " WHERE id BETWEEN ? AND ?")
                .c_str(),
            [&](sqlite3_stmt* s) {
              const std::string type = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
              const unsigned char* text = sqlite3_column_text(s, 1);
              const std::string value = text ? reinterpret_cast<const char*>(text) : "";
              if (type == "null") holds = "NULL";
              else if (type == "real") holds = "the real " + value;
              else if (type == "blob") holds = "a blob of " + value + " bytes";
              else if (type == "text") holds = "the text '" + (value.size() > 40 ? value.substr(0, 40) + "…" : value) + "'";
            },
            m.rowid, m.rowid);
  } catch (const SqliteError&) {
    // The value cannot be read back: said without it.
  }
  return where + " holds " + holds + ", not an integer";
}

// Runs read(source, b) for every batch b in [0, batches) on up to `threads`
// cores: through the file's pages (PageSource, of the tables `wanted`,
// under the read transaction `db` holds) where `via` allows and the file
// can be read that way, else through SQLite, one connection per batch
// (SqlSource) — from the start again, `progress` set back to 0 — after
// ending the transaction. A row refused (MalformedRow) throws
// MalformedRowError naming it. Returns why the rows were read through
// SQLite ("asked for" where `via` said so); none: through the pages.
template <class Read>
std::optional<std::string> readBatches(Db& db, const bool (&wanted)[4], size_t batches, size_t threads, LoadVia via, int32_t* progress,
                                       Read&& read) {
  if (via == LoadVia::Auto) {
    const char* env = std::getenv("STREAMSCOPE_LOAD_VIA");
    if (env && std::string(env) == "sql") via = LoadVia::Sql;
    if (env && std::string(env) == "pages") via = LoadVia::Pages;
  }
  std::optional<std::string> sql_because;
  try {
    if (via == LoadVia::Sql) {
      sql_because = "asked for";
    } else {
      PageSource pages;
      if (batches > 0) sql_because = pages.open(db, wanted);
      if (!sql_because) {
        std::atomic<bool> failed{false};
        try {
          runParallel(
              batches,
              [&](size_t b) {
                if (failed) return;
                try {
                  read(pages, b);
                } catch (...) {
                  failed = true;
                  throw;
                }
              },
              threads);
        } catch (const btree::Damaged& e) {
          sql_because = e.what();
        } catch (const btree::Unsupported& e) {
          sql_because = e.what();
        }
      }
      if (sql_because && via == LoadVia::Pages) throw LoadError(db.path() + ": cannot be read as pages: " + *sql_because);
    }
    // SQLite's way reads without the transaction, as it always has: a live recorder's commits need not wait for it.
    db.exec("COMMIT");
    if (sql_because) {
      // Read again from the start: what the pages read before they failed is counted again.
      if (progress) __atomic_store_n(progress, 0, __ATOMIC_RELAXED);
      runParallel(
          batches,
          [&](size_t b) {
            Db own = openForLoad(db.path());
            SqlSource sql{own};
            read(sql, b);
          },
          threads);
    }
  } catch (const MalformedRow& m) {
    throw MalformedRowError(db.path(), "not a StreamScope recording as written: " + describeMalformed(db, m));
  }
  return sql_because;
}

// Reads `parts` into `t` (its columns reused where large enough), each
// part into its slots, in batches of about kRowsPerPart rows (a process's
// zones are often many short ranges) on up to `threads` cores
// (readBatches: the pages or SQLite), then closes the gaps and orders ops
// and calls by start. Every row is checked as it is read (RowCheck): one
// refused throws MalformedRowError naming it; those left out are counted in
// t.left_out. Returns how it read (Timeline::via): "pages", or "sql: " and
// why not pages.
std::string readParts(Db& db, const std::vector<Part>& parts, const Recording& rec, const ReadFilter& filter, const ReadFilter& by_rows,
                      Timeline& t, SortScratch& scratch, size_t threads, LoadVia via, const std::function<void(const char*)>& lap,
                      int32_t* progress) {
  std::vector<size_t> base(parts.size()), got(parts.size());
  std::vector<LeftOut> left(parts.size());
  size_t op_slots = 0, call_slots = 0;
  std::vector<size_t> batch_start{0};
  size_t in_batch = 0;
  bool wanted[4] = {false, false, false, false};
  for (size_t i = 0; i < parts.size(); i++) {
    size_t& slots = parts[i].table == 3 ? call_slots : op_slots;
    base[i] = slots;
    slots += parts[i].slots;
    wanted[parts[i].table] = true;
    in_batch += parts[i].slots;
    if (in_batch >= static_cast<size_t>(kRowsPerPart) && i + 1 < parts.size()) {
      batch_start.push_back(i + 1);
      in_batch = 0;
    }
  }
  batch_start.push_back(parts.size());
  eachOpColumn(t.ops, [&](auto& v) { v.reuse(op_slots); });
  eachCallColumn(t.calls, [&](auto& v) { v.reuse(call_slots); });
  lap("plan");
  // One batch from `src` (a part with a row on a stream not placed is read again with the rows' own device and context).
  // Each part read adds its planned rows to `progress` (a caller's counter another thread reads while this call runs).
  const auto told = [progress](size_t rows) {
    if (progress) __atomic_add_fetch(progress, static_cast<int32_t>(std::min<size_t>(rows, INT32_MAX)), __ATOMIC_RELAXED);
  };
  const size_t batches = parts.empty() ? 0 : batch_start.size() - 1;
  const auto sql_because = readBatches(db, wanted, batches, threads, via, progress, [&](auto& src, size_t b) {
    for (size_t i = batch_start[b]; i < batch_start[b + 1]; i++) {
      if (parts[i].table == 3) {
        got[i] = readCalls(src, db.path(), parts[i], rec, t.calls, base[i], filter, left[i]);
        told(parts[i].slots);
        continue;
      }
      try {
        got[i] = readOps(src, db.path(), parts[i], rec, t.ops, base[i], filter, left[i]);
      } catch (const UnplacedStream&) {
        got[i] = readOps(src, db.path(), parts[i], rec, t.ops, base[i], by_rows, left[i]);
      }
      told(parts[i].slots);
    }
  });
  t.left_out = LeftOut{};
  for (const LeftOut& l : left) t.left_out.add(l);
  lap("read");
  // Rowids with gaps (rows deleted by hand, rows of other processes) leave unused slots: close them.
  size_t ops = 0, calls = 0;
  for (size_t i = 0; i < parts.size(); i++) {
    if (parts[i].table == 3) {
      eachCallColumn(t.calls, [&](auto& v) { shift(v, base[i], calls, got[i]); });
      calls += got[i];
    } else {
      eachOpColumn(t.ops, [&](auto& v) { shift(v, base[i], ops, got[i]); });
      ops += got[i];
    }
  }
  eachOpColumn(t.ops, [&](auto& v) { v.truncate(ops); });
  eachCallColumn(t.calls, [&](auto& v) { v.truncate(calls); });
  lap("compact");
  // One after the other: each sort uses every core.
  t.ops.in_order = orderBy(t.ops.start, t.ops.order, scratch, threads);
  t.calls.in_order = orderBy(t.calls.start, t.calls.order, scratch, threads);
  lap("sort");
  if (!t.ops.in_order) eachOpColumn(t.ops, [&](auto& v) { placeInOrder(v, t.ops.order, scratch.k, threads); });
  if (!t.calls.in_order) eachCallColumn(t.calls, [&](auto& v) { placeInOrder(v, t.calls.order, scratch.k, threads); });
  lap("place");
  return sql_because ? "sql: " + *sql_because : "pages";
}

// Before a load: every column borrowed from an earlier call let go, then
// the caller's arrays lent (Lend).
void lendColumns(Timeline& t, const Lend& lend) {
  const auto let_go = [](auto& v) {
    if (v.borrowed()) v.release();
  };
  eachOpColumn(t.ops, let_go);
  eachCallColumn(t.calls, let_go);
  if (lend) lend(t);
}

// Prints each phase's time to stderr under STREAMSCOPE_LOAD_TIMING.
std::function<void(const char*)> lapTimer(const char* prefix) {
  if (std::getenv("STREAMSCOPE_LOAD_TIMING") == nullptr) return [](const char*) {};
  auto t0 = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [t0, prefix](const char* what) {
    auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%s %-8s %7.1f ms\n", prefix, what, std::chrono::duration<double, std::milli>(t1 - *t0).count());
    *t0 = t1;
  };
}

// The ids of one table's rows.
IdSet idsOf(Db& db, const char* table) {
  std::vector<int64_t> ids;
  db.each((std::string("SELECT id FROM ") + table).c_str(), [&](sqlite3_stmt* s) { ids.push_back(i64(s, 0)); });
  return IdSet(std::move(ids));
}

// The recording, in a read transaction (what is planned and what is read
// agree): its contexts' processes, and the ids of the rows the timeline
// tables name (a few thousand at most but for strings: ~1 ms per 100 k).
Recording begin(Db& db) {
  db.exec("BEGIN");
  Recording rec;
  db.each("SELECT id, pid FROM contexts", [&](sqlite3_stmt* s) { rec.pid_of_context[i64(s, 0)] = static_cast<int32_t>(i64(s, 1)); });
  rec.streams = idsOf(db, "streams");
  rec.devices = idsOf(db, "devices");
  rec.strings = idsOf(db, "strings");
  return rec;
}

// loadRows's columns and sort scratch, one set per calling thread (a JS
// worker each), kept from one call to the next.
struct RowsState {
  Timeline t;
  SortScratch scratch;
};
thread_local RowsState rows_state;

}  // namespace

// Every table is cut into rowid parts read in parallel, then both results
// sorted by start at once: the wait is the slowest core's share, not the sum.
Timeline loadTimeline(const std::string& db_path, bool want_ops, bool want_calls, LoadVia via, int32_t* progress, const Lend& lend) {
  const auto lap = lapTimer("load");
  Db db = openForLoad(db_path);
  const Recording rec = begin(db);
  std::vector<Part> parts;
  for (const Part& p : partsOf(db))
    if ((p.table == 3 && want_calls) || (p.table != 3 && want_ops)) parts.push_back(p);
  lap("parts");
  Timeline t;
  lendColumns(t, lend);
  SortScratch scratch;
  t.via = readParts(db, parts, rec, {}, {}, t, scratch, 0, via, lap, progress);
  return t;
}

// As loadTimeline, over the request's rowid ranges only, in parts of at most kRowsPerPart rows.
Timeline& loadRows(const std::string& db_path, const RowsRequest& request, const Lend& lend) {
  const auto lap = lapTimer("loadRows");
  Db db = openForLoad(db_path);
  const Recording rec = begin(db);
  const auto& pid_of_context = rec.pid_of_context;
  std::vector<Part> parts;
  for (int table = 0; table < 4; table++) {
    for (const auto& [lo, hi] : request.ranges[table]) {
      for (int64_t a = lo; a <= hi; a += kRowsPerPart) {
        Part p{table, a, std::min(hi, a + kRowsPerPart - 1), 0};
        p.slots = static_cast<size_t>(p.hi - p.lo + 1);
        parts.push_back(p);
      }
    }
  }
  ZoneSet zones[4];
  bool any_zones = false;
  for (int table = 0; table < 4; table++) {
    zones[table] = ZoneSet(request.zones[table]);
    any_zones = any_zones || !zones[table].empty();
  }
  const bool by_call = !request.call_names.empty() || request.call_min_ns >= 0;
  // Narrow: each stream's process and device, as its context has them, where the stream names its device.
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> place_of_stream;
  if (request.narrow)
    db.each("SELECT id, context_id, device_id FROM streams WHERE device_id IS NOT NULL", [&](sqlite3_stmt* s) {
      auto it = pid_of_context.find(i64(s, 1));
      if (it != pid_of_context.end()) place_of_stream[i64(s, 0)] = {it->second, static_cast<int32_t>(i64(s, 2))};
    });
  ReadFilter filter;
  filter.pids = request.pids.empty() ? nullptr : &request.pids;
  filter.narrow = request.narrow;
  filter.max_start = request.max_start;
  filter.zones = any_zones ? zones : nullptr;
  filter.call_names = by_call ? &request.call_names : nullptr;
  filter.call_min_ns = request.call_min_ns;
  // A part with a row on a stream not placed is read again with the rows' own device and context.
  ReadFilter by_rows = filter;
  filter.place_of_stream = request.narrow ? &place_of_stream : nullptr;
  Timeline& t = rows_state.t;
  lendColumns(t, lend);
  t.via = readParts(db, parts, rec, filter, by_rows, t, rows_state.scratch, request.threads, request.via, lap, nullptr);
  return t;
}

// The checks of a load (RowCheck) on every operation and call, the rows
// kept nowhere: one pass on all cores, for a reader that reads them its own
// way (the Chrome-trace export).
LeftOut checkTimeline(const std::string& db_path) {
  Db db = openForLoad(db_path);
  const Recording rec = begin(db);
  const std::vector<Part> parts = partsOf(db);
  bool wanted[4] = {false, false, false, false};
  for (const Part& p : parts) wanted[p.table] = true;
  std::vector<LeftOut> left(parts.size());
  readBatches(db, wanted, parts.size(), 0, LoadVia::Auto, nullptr, [&](auto& src, size_t i) {
    const Query& q = queryOf(parts[i].table, ReadFilter{});
    RowCheck check(rec, q, left[i]);
    src.each(q, parts[i].lo, parts[i].hi, [&](const auto& s) {
      check.refuse(s);
      check.leftOut(s);
    });
  });
  LeftOut all;
  for (const LeftOut& l : left) all.add(l);
  return all;
}

OpColumns loadOps(const std::string& db_path) { return std::move(loadTimeline(db_path, true, false, LoadVia::Auto).ops); }

CallColumns loadCalls(const std::string& db_path) { return std::move(loadTimeline(db_path, false, true, LoadVia::Auto).calls); }

}  // namespace streamscope::addon
