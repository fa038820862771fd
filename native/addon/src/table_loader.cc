#include "table_loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sqlite3.h"
#include "zone_tables.h"

namespace streamscope::addon {
namespace {

struct Db {
  sqlite3* db = nullptr;
  std::string path;
  explicit Db(const std::string& p) : path(p) {
    if (sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
      const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
      sqlite3_close(db);
      throw LoadError(p + ": cannot open the recording: " + why);
    }
    sqlite3_busy_timeout(db, 5000);
    // Map the file instead of copying every page through read(): a 1 GB
    // recording otherwise spends more time in the kernel than in SQLite.
    sqlite3_exec(db, "PRAGMA mmap_size = 17179869184", nullptr, nullptr, nullptr);
  }

  int64_t count(const char* sql) {
    int64_t n = 0;
    each(sql, [&](sqlite3_stmt* s) { n = sqlite3_column_int64(s, 0); });
    return n;
  }
  ~Db() { sqlite3_close(db); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs `sql`, calling row(stmt) for each result row.
  // `lo`/`hi`, when given, bind the statement's two parameters (a rowid range).
  template <class F>
  void each(const char* sql, F&& row, int64_t lo = 0, int64_t hi = -1) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) throw LoadError(path + ": " + sqlite3_errmsg(db));
    // Finalized however this ends (row() may throw).
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> s(raw, sqlite3_finalize);
    if (sqlite3_bind_parameter_count(raw) == 2) {
      sqlite3_bind_int64(raw, 1, lo);
      sqlite3_bind_int64(raw, 2, hi);
    }
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) row(raw);
    if (rc != SQLITE_DONE) throw LoadError(path + ": " + sqlite3_errmsg(db));
  }
};

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

// Stable LSD radix sort of row indexes by an integer key, on all cores:
// each pass, every thread counts the digits of its slice, the counts are
// laid out digit-major then slice-major (so equal keys keep their read
// order), and every thread scatters its slice. Digits are at most 11 bits
// (2048 buckets per thread stay in cache; on 16 cores, 36-bit keys sorted
// in 170-210 ms with 11-bit digits, 260 ms with 16-bit, 350 ms with 8-bit),
// as many passes as the key range needs.
// Keys move with their indexes, so every pass reads sequentially.
// The order lands in `idx`; `scratch` and `idx` are reused where large enough.
void orderBy(const Column<double>& key, Column<uint32_t>& idx, SortScratch& scratch, size_t max_threads) {
  const size_t n = key.size();
  Column<uint64_t>& k = scratch.k;
  Column<uint64_t>& k2 = scratch.k2;
  Column<uint32_t>& idx2 = scratch.idx2;
  idx.reuse(n);
  if (n < 2) {
    for (size_t i = 0; i < n; i++) idx[i] = static_cast<uint32_t>(i);
    return;
  }
  const size_t slices = threadsFor(n, 1 << 16, max_threads);
  auto slice = [&](size_t t) { return std::pair<size_t, size_t>{n * t / slices, n * (t + 1) / slices}; };
  std::vector<double> lo_of(slices), hi_of(slices);
  auto run = [&](const std::function<void(size_t)>& task) { runParallel(slices, task, max_threads); };
  run([&](size_t t) {
    auto [a, b] = slice(t);
    double lo = key[a], hi = key[a];
    for (size_t i = a; i < b; i++) {
      lo = std::min(lo, key[i]);
      hi = std::max(hi, key[i]);
    }
    lo_of[t] = lo;
    hi_of[t] = hi;
  });
  const double lo = *std::min_element(lo_of.begin(), lo_of.end());
  const uint64_t range = static_cast<uint64_t>(*std::max_element(hi_of.begin(), hi_of.end()) - lo);
  int bits = 0;
  while (bits < 64 && (range >> bits) != 0) bits++;
  const int passes = (bits + 10) / 11;
  k.reuse(n);
  run([&](size_t t) {
    auto [a, b] = slice(t);
    for (size_t i = a; i < b; i++) {
      k[i] = static_cast<uint64_t>(key[i] - lo);
      idx[i] = static_cast<uint32_t>(i);
    }
  });
  if (passes == 0) return;
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
}

// The order of `key`'s rows, on every core, in columns of its own.
Column<uint32_t> orderBy(const Column<double>& key) {
  Column<uint32_t> idx;
  SortScratch scratch;
  orderBy(key, idx, scratch, 0);
  return idx;
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

// One part of kernels, memcpys or memsets, written straight to its place
// in the final columns from slot `at` on. Returns how many rows it held.
// A part never holds more rows than its slots (its rowid span, or its count
// when sparse) unless a writer changed the table while it was read: then
// stop rather than write past the part.
void checkRoom(const Db& db, const Part& part, size_t i, size_t at) {
  if (i >= at + part.slots)
    throw LoadError(db.path + ": the " + kTables[part.table] + " table changed while it was being read; close the writer and try again");
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
  // Narrow ops: each stream's pid and device (its context's), so that the
  // rows' own device and context columns need not be read; null: read them.
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

size_t readOps(Db& db, const Part& part, const std::unordered_map<int64_t, int32_t>& pid_of_context, OpColumns& o, size_t at,
               const ReadFilter& filter = {}) {
  size_t i = at;
  int64_t last_context = INT64_MIN, last_stream = INT64_MIN;
  int32_t last_pid = 0, last_device = 0;
  const bool by_stream = filter.narrow && filter.place_of_stream;
  // Whether the row is kept (its process's, when only some are asked for).
  auto common = [&](sqlite3_stmt* s, uint8_t kind) {
    checkRoom(db, part, i, at);
    if (i64(s, 1) > filter.max_start || !filter.inZones(part.table, i64(s, 3), i64(s, 0))) return false;
    // Rows of one context (or stream) come in long runs: look its pid up when it changes.
    int32_t device;
    if (by_stream) {
      const int64_t stream = i64(s, 3);
      if (stream != last_stream) {
        auto it = filter.place_of_stream->find(stream);
        if (it == filter.place_of_stream->end()) throw UnplacedStream{};
        last_pid = it->second.first;
        last_device = it->second.second;
        last_stream = stream;
      }
      device = last_device;
    } else {
      const int64_t context = i64(s, 6);
      if (context != last_context) {
        auto it = pid_of_context.find(context);
        last_pid = it == pid_of_context.end() ? 0 : it->second;
        last_context = context;
      }
      device = static_cast<int32_t>(i64(s, 4));
    }
    const int32_t pid = last_pid;
    if (!filter.keeps(pid)) return false;
    o.pid[i] = pid;
    // Columns shared by the three queries: id, start, end, stream, device, correlation, context.
    o.kind[i] = kind;
    o.row_id[i] = static_cast<double>(i64(s, 0));
    o.start[i] = static_cast<double>(i64(s, 1));
    o.end[i] = static_cast<double>(i64(s, 2));
    o.stream[i] = static_cast<int32_t>(i64(s, 3));
    o.device[i] = device;
    o.correlation[i] = static_cast<uint32_t>(i64(s, 5));
    return true;
  };
  auto noShape = [&] {
    o.blocks[i] = 0;
    o.block_threads[i] = 0;
    o.registers[i] = 0;
    o.shared_bytes[i] = 0;
  };
  // Narrow, placed by stream: device and context not read (each column SQLite decodes costs ~12 ns a row here).
  if (part.table == 0 && filter.narrow) {
    db.each(
        by_stream
            ? "SELECT id, start_ns, end_ns, stream_id, 0, 0, 0, name_id FROM kernels WHERE id BETWEEN ? AND ? ORDER BY id"
            : "SELECT id, start_ns, end_ns, stream_id, device_id, 0, context_id, name_id FROM kernels WHERE id BETWEEN ? AND ? ORDER BY id",
        [&](sqlite3_stmt* s) {
          if (!common(s, 1)) return;
          o.bytes[i] = 0;
          o.detail[i] = static_cast<int32_t>(i64(s, 7));
          o.copy_kind[i] = 0;
          o.is_async[i] = 1;
          noShape();
          i++;
        },
        part.lo, part.hi);
  } else if (part.table == 0) {
    // Raw shape columns, multiplied here: SQLite's arithmetic opcodes cost
    // more per row than the column reads themselves.
    db.each(
        "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, name_id,"
        " grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes"
        " FROM kernels WHERE id BETWEEN ? AND ? ORDER BY id",
        [&](sqlite3_stmt* s) {
          if (!common(s, 1)) return;
          o.bytes[i] = 0;
          o.detail[i] = static_cast<int32_t>(i64(s, 7));
          o.copy_kind[i] = 0;
          o.is_async[i] = 1;
          o.blocks[i] = static_cast<double>(i64(s, 8)) * static_cast<double>(i64(s, 9)) * static_cast<double>(i64(s, 10));
          o.block_threads[i] = static_cast<int32_t>(i64(s, 11) * i64(s, 12) * i64(s, 13));
          o.registers[i] = static_cast<int32_t>(i64(s, 14));
          o.shared_bytes[i] = static_cast<int32_t>(i64(s, 15) + i64(s, 16));
          i++;
        },
        part.lo, part.hi);
  } else if (part.table == 1) {
    db.each(
        by_stream       ? "SELECT id, start_ns, end_ns, stream_id, 0, 0, 0, bytes, src_kind, dst_kind, copy_kind, 0"
                          " FROM memcpys WHERE id BETWEEN ? AND ? ORDER BY id"
        : filter.narrow ? "SELECT id, start_ns, end_ns, stream_id, device_id, 0, context_id, bytes, src_kind, dst_kind, copy_kind, 0"
                          " FROM memcpys WHERE id BETWEEN ? AND ? ORDER BY id"
                        : "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, bytes, src_kind, dst_kind, "
                          "copy_kind, is_async"
                          " FROM memcpys WHERE id BETWEEN ? AND ? ORDER BY id",
        [&](sqlite3_stmt* s) {
          if (!common(s, 2)) return;
          o.bytes[i] = static_cast<double>(i64(s, 7));
          o.detail[i] = static_cast<int32_t>(i64(s, 8) * 16 + i64(s, 9));
          o.copy_kind[i] = static_cast<uint8_t>(i64(s, 10));
          o.is_async[i] = static_cast<uint8_t>(i64(s, 11));
          noShape();
          i++;
        },
        part.lo, part.hi);
  } else {
    db.each(
        by_stream
            ? "SELECT id, start_ns, end_ns, stream_id, 0, 0, 0, bytes, memory_kind, 0 FROM memsets WHERE id BETWEEN ? AND ? ORDER BY id"
        : filter.narrow ? "SELECT id, start_ns, end_ns, stream_id, device_id, 0, context_id, bytes, memory_kind, 0"
                          " FROM memsets WHERE id BETWEEN ? AND ? ORDER BY id"
                        : "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, bytes, memory_kind, is_async"
                          " FROM memsets WHERE id BETWEEN ? AND ? ORDER BY id",
        [&](sqlite3_stmt* s) {
          if (!common(s, 3)) return;
          o.bytes[i] = static_cast<double>(i64(s, 7));
          o.detail[i] = static_cast<int32_t>(i64(s, 8));
          o.copy_kind[i] = 0;
          o.is_async[i] = static_cast<uint8_t>(i64(s, 9));
          noShape();
          i++;
        },
        part.lo, part.hi);
  }
  return i - at;
}

size_t readCalls(Db& db, const Part& part, CallColumns& c, size_t at, const ReadFilter& filter = {}) {
  size_t i = at;
  db.each(
      "SELECT id, start_ns, end_ns, pid, tid, name_id, correlation_id, domain FROM api_calls WHERE id BETWEEN ? AND ? ORDER BY id",
      [&](sqlite3_stmt* s) {
        checkRoom(db, part, i, at);
        if (!filter.keeps(static_cast<int32_t>(i64(s, 3))) || i64(s, 1) > filter.max_start ||
            !filter.keepsCall(static_cast<int32_t>(i64(s, 5)), i64(s, 2) - i64(s, 1)) ||
            !filter.inZones(3, zone_table::threadLane(static_cast<uint32_t>(i64(s, 3)), static_cast<uint32_t>(i64(s, 4))), i64(s, 0)))
          return;
        c.row_id[i] = static_cast<double>(i64(s, 0));
        c.start[i] = static_cast<double>(i64(s, 1));
        c.end[i] = static_cast<double>(i64(s, 2));
        c.pid[i] = static_cast<int32_t>(i64(s, 3));
        c.tid[i] = static_cast<int32_t>(i64(s, 4));
        c.name_id[i] = static_cast<int32_t>(i64(s, 5));
        c.correlation[i] = static_cast<uint32_t>(i64(s, 6));
        c.domain[i] = static_cast<uint8_t>(i64(s, 7));
        i++;
      },
      part.lo, part.hi);
  return i - at;
}

}  // namespace

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

// Every table is cut into rowid parts read in parallel, each on its own
// read-only connection (SQLite connections are not shared across threads),
// then the parts are joined in rowid order and both results sorted by start
// at once: the wait is the slowest core's share, not the sum.
Timeline loadTimeline(const std::string& db_path, bool want_ops, bool want_calls) {
  const bool timing = std::getenv("STREAMSCOPE_LOAD_TIMING") != nullptr;
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](const char* what) {
    if (!timing) return;
    auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "load %-8s %7.0f ms\n", what, std::chrono::duration<double, std::milli>(t1 - t0).count());
    t0 = t1;
  };
  Db db(db_path);
  std::unordered_map<int64_t, int32_t> pid_of_context;
  db.each("SELECT id, pid FROM contexts", [&](sqlite3_stmt* s) { pid_of_context[i64(s, 0)] = static_cast<int32_t>(i64(s, 1)); });
  std::vector<Part> parts;
  for (const Part& p : partsOf(db))
    if ((p.table == 3 && want_calls) || (p.table != 3 && want_ops)) parts.push_back(p);
  lap("parts");
  // Each part's slots in the final columns: its rowid span, after the spans before it.
  std::vector<size_t> base(parts.size()), got(parts.size());
  size_t op_slots = 0, call_slots = 0;
  for (size_t i = 0; i < parts.size(); i++) {
    size_t& slots = parts[i].table == 3 ? call_slots : op_slots;
    base[i] = slots;
    slots += parts[i].slots;
  }
  Timeline t;
  eachOpColumn(t.ops, [&](auto& v) { v.allocate(op_slots); });
  eachCallColumn(t.calls, [&](auto& v) { v.allocate(call_slots); });
  lap("allocate");
  runParallel(parts.size(), [&](size_t i) {
    Db own(db_path);
    got[i] = parts[i].table == 3 ? readCalls(own, parts[i], t.calls, base[i]) : readOps(own, parts[i], pid_of_context, t.ops, base[i]);
  });
  lap("read");
  // Rowids with gaps (rows deleted by hand, say) leave unused slots: close them.
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
  t.ops.order = orderBy(t.ops.start);
  t.calls.order = orderBy(t.calls.start);
  lap("sort");
  return t;
}

namespace {
// loadRows's columns and sort scratch, one set per calling thread (a JS
// worker each), kept from one call to the next.
struct RowsState {
  Timeline t;
  SortScratch scratch;
};
thread_local RowsState rows_state;
}  // namespace

// As loadTimeline, over the request's rowid ranges only: parts of at most
// kRowsPerPart rows, read in batches of about that many rows (a process's
// zones are often many short ranges), each batch on one connection.
Timeline& loadRows(const std::string& db_path, const RowsRequest& request) {
  const bool timing = std::getenv("STREAMSCOPE_LOAD_TIMING") != nullptr;
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](const char* what) {
    if (!timing) return;
    auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "loadRows %-8s %7.1f ms\n", what, std::chrono::duration<double, std::milli>(t1 - t0).count());
    t0 = t1;
  };
  Db db(db_path);
  std::unordered_map<int64_t, int32_t> pid_of_context;
  db.each("SELECT id, pid FROM contexts", [&](sqlite3_stmt* s) { pid_of_context[i64(s, 0)] = static_cast<int32_t>(i64(s, 1)); });
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
  std::vector<size_t> base(parts.size()), got(parts.size());
  size_t op_slots = 0, call_slots = 0;
  std::vector<size_t> batch_start{0};
  size_t in_batch = 0;
  for (size_t i = 0; i < parts.size(); i++) {
    size_t& slots = parts[i].table == 3 ? call_slots : op_slots;
    base[i] = slots;
    slots += parts[i].slots;
    in_batch += parts[i].slots;
    if (in_batch >= static_cast<size_t>(kRowsPerPart) && i + 1 < parts.size()) {
      batch_start.push_back(i + 1);
      in_batch = 0;
    }
  }
  batch_start.push_back(parts.size());
  Timeline& t = rows_state.t;
  eachOpColumn(t.ops, [&](auto& v) { v.reuse(op_slots); });
  eachCallColumn(t.calls, [&](auto& v) { v.reuse(call_slots); });
  lap("plan");
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
  runParallel(
      batch_start.size() - 1,
      [&](size_t b) {
        if (batch_start[b] == batch_start[b + 1]) return;
        Db own(db_path);
        for (size_t i = batch_start[b]; i < batch_start[b + 1]; i++) {
          if (parts[i].table == 3) {
            got[i] = readCalls(own, parts[i], t.calls, base[i], filter);
            continue;
          }
          try {
            got[i] = readOps(own, parts[i], pid_of_context, t.ops, base[i], filter);
          } catch (const UnplacedStream&) {
            got[i] = readOps(own, parts[i], pid_of_context, t.ops, base[i], by_rows);
          }
        }
      },
      request.threads);
  lap("read");
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
  orderBy(t.ops.start, t.ops.order, rows_state.scratch, request.threads);
  orderBy(t.calls.start, t.calls.order, rows_state.scratch, request.threads);
  lap("sort");
  return t;
}

OpColumns loadOps(const std::string& db_path) { return std::move(loadTimeline(db_path, true, false).ops); }

CallColumns loadCalls(const std::string& db_path) { return std::move(loadTimeline(db_path, false, true).calls); }

}  // namespace streamscope::addon
