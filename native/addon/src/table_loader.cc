#include "table_loader.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "sqlite3.h"

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
  template <class F>
  void each(const char* sql, F&& row) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) throw LoadError(path + ": " + sqlite3_errmsg(db));
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) row(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) throw LoadError(path + ": " + sqlite3_errmsg(db));
  }
};

inline int64_t i64(sqlite3_stmt* s, int c) { return sqlite3_column_int64(s, c); }

// Stable LSD radix sort of row indexes by an integer key (16 bits a pass,
// only as many passes as the key range needs): millions of rows in tens of
// milliseconds, and rows with equal keys keep their read order.
std::vector<uint32_t> orderBy(const std::vector<double>& key) {
  const size_t n = key.size();
  std::vector<uint32_t> idx(n), tmp(n);
  std::iota(idx.begin(), idx.end(), 0u);
  if (n < 2) return idx;
  const double lo = *std::min_element(key.begin(), key.end());
  const double hi = *std::max_element(key.begin(), key.end());
  const uint64_t range = static_cast<uint64_t>(hi - lo);
  std::vector<uint64_t> k(n);
  for (size_t i = 0; i < n; i++) k[i] = static_cast<uint64_t>(key[i] - lo);
  std::vector<size_t> count(65537);
  for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; i++) count[((k[idx[i]] >> shift) & 0xffff) + 1]++;
    for (size_t b = 1; b < count.size(); b++) count[b] += count[b - 1];
    for (size_t i = 0; i < n; i++) tmp[count[(k[idx[i]] >> shift) & 0xffff]++] = idx[i];
    idx.swap(tmp);
  }
  return idx;
}

}  // namespace

OpColumns loadOps(const std::string& db_path) {
  Db db(db_path);
  std::unordered_map<int64_t, int32_t> pid_of_context;
  db.each("SELECT id, pid FROM contexts", [&](sqlite3_stmt* s) { pid_of_context[i64(s, 0)] = static_cast<int32_t>(i64(s, 1)); });
  OpColumns o;
  const size_t total = static_cast<size_t>(db.count("SELECT (SELECT count(*) FROM kernels) + (SELECT count(*) FROM memcpys) + (SELECT count(*) FROM memsets)"));
  for (auto* v : {&o.row_id, &o.start, &o.end, &o.bytes, &o.blocks}) v->reserve(total);
  for (auto* v : {&o.stream, &o.device, &o.detail, &o.pid, &o.block_threads, &o.registers, &o.shared_bytes}) v->reserve(total);
  for (auto* v : {&o.kind, &o.copy_kind, &o.is_async}) v->reserve(total);
  o.correlation.reserve(total);
  auto push = [&](sqlite3_stmt* s, uint8_t kind) {
    // Columns shared by the three queries: id, start, end, stream, device, correlation, context.
    o.kind.push_back(kind);
    o.row_id.push_back(static_cast<double>(i64(s, 0)));
    o.start.push_back(static_cast<double>(i64(s, 1)));
    o.end.push_back(static_cast<double>(i64(s, 2)));
    o.stream.push_back(static_cast<int32_t>(i64(s, 3)));
    o.device.push_back(static_cast<int32_t>(i64(s, 4)));
    o.correlation.push_back(static_cast<uint32_t>(i64(s, 5)));
    auto it = pid_of_context.find(i64(s, 6));
    o.pid.push_back(it == pid_of_context.end() ? 0 : it->second);
  };
  auto noShape = [&] {
    o.blocks.push_back(0);
    o.block_threads.push_back(0);
    o.registers.push_back(0);
    o.shared_bytes.push_back(0);
  };
  db.each(
      "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, name_id,"
      " grid_x * grid_y * grid_z, block_x * block_y * block_z, registers_per_thread, static_shared_bytes + dynamic_shared_bytes"
      " FROM kernels ORDER BY id",
      [&](sqlite3_stmt* s) {
        push(s, 1);
        o.bytes.push_back(0);
        o.detail.push_back(static_cast<int32_t>(i64(s, 7)));
        o.copy_kind.push_back(0);
        o.is_async.push_back(1);
        o.blocks.push_back(static_cast<double>(i64(s, 8)));
        o.block_threads.push_back(static_cast<int32_t>(i64(s, 9)));
        o.registers.push_back(static_cast<int32_t>(i64(s, 10)));
        o.shared_bytes.push_back(static_cast<int32_t>(i64(s, 11)));
      });
  db.each(
      "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, bytes, src_kind * 16 + dst_kind, copy_kind, is_async"
      " FROM memcpys ORDER BY id",
      [&](sqlite3_stmt* s) {
        push(s, 2);
        o.bytes.push_back(static_cast<double>(i64(s, 7)));
        o.detail.push_back(static_cast<int32_t>(i64(s, 8)));
        o.copy_kind.push_back(static_cast<uint8_t>(i64(s, 9)));
        o.is_async.push_back(static_cast<uint8_t>(i64(s, 10)));
        noShape();
      });
  db.each(
      "SELECT id, start_ns, end_ns, stream_id, device_id, correlation_id, context_id, bytes, memory_kind, is_async"
      " FROM memsets ORDER BY id",
      [&](sqlite3_stmt* s) {
        push(s, 3);
        o.bytes.push_back(static_cast<double>(i64(s, 7)));
        o.detail.push_back(static_cast<int32_t>(i64(s, 8)));
        o.copy_kind.push_back(0);
        o.is_async.push_back(static_cast<uint8_t>(i64(s, 9)));
        noShape();
      });
  o.order = orderBy(o.start);
  return o;
}

CallColumns loadCalls(const std::string& db_path) {
  Db db(db_path);
  CallColumns c;
  const size_t total = static_cast<size_t>(db.count("SELECT count(*) FROM api_calls"));
  for (auto* v : {&c.row_id, &c.start, &c.end}) v->reserve(total);
  for (auto* v : {&c.pid, &c.tid, &c.name_id}) v->reserve(total);
  c.correlation.reserve(total);
  c.domain.reserve(total);
  db.each("SELECT id, start_ns, end_ns, pid, tid, name_id, correlation_id, domain FROM api_calls ORDER BY id", [&](sqlite3_stmt* s) {
    c.row_id.push_back(static_cast<double>(i64(s, 0)));
    c.start.push_back(static_cast<double>(i64(s, 1)));
    c.end.push_back(static_cast<double>(i64(s, 2)));
    c.pid.push_back(static_cast<int32_t>(i64(s, 3)));
    c.tid.push_back(static_cast<int32_t>(i64(s, 4)));
    c.name_id.push_back(static_cast<int32_t>(i64(s, 5)));
    c.correlation.push_back(static_cast<uint32_t>(i64(s, 6)));
    c.domain.push_back(static_cast<uint8_t>(i64(s, 7)));
  });
  c.order = orderBy(c.start);
  return c;
}

}  // namespace streamscope::addon
