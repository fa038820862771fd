// The Kineto importer's rows, natively: a 1 GiB trace took 35 s in
// JavaScript (a character-by-character scan, JSON.parse of each event, one
// better-sqlite3 call per row); here the scan is a byte loop, each event is
// parsed by simdjson (Debian's libsimdjson-dev: validating, SIMD) and the rows
// go into SQLite's C API on a second thread while the next events are parsed.
//
// What must not change is what the JavaScript importer did with any input,
// down to the odd ones fuzzing found (profiler/README.md,
// "streamscope import"):
//   - the scan is the state machine json-events.ts had in JavaScript, byte for byte (its choices
//     only ever depend on ASCII characters, so bytes and UTF-16 agree): events
//     are the object elements of `traceEvents` (or of a bare array), other
//     top-level members are captured up to 16 MiB and parsed by JSON.parse
//     (through the `parse` callback), errors carry the byte offset that the
//     caller turns into the character offset it always reported;
//   - an event simdjson refuses (a number JSON.parse makes Infinity or rounds,
//     a lone surrogate escape, invalid UTF-8, nesting past 1024 levels) or
//     whose fields need JavaScript's own conversions (Number() of a string,
//     String() of a number) is parsed again by JSON.parse through the same
//     callback and its fields read from the object it returns, converted by
//     Node itself (napi_coerce_to_number, napi_coerce_to_string): a few events
//     of a fuzzed file, none of a real one;
//   - the mapping (mapEvent) is the only definition of Kineto's conventions:
//     what each category becomes, which fields of the wrong type skip an event;
//     since schema 11 also cpu_op / python_function events as cpu_ops rather
//     than ranges, cuda_sync and cuda_event events as syncs and cuda_events,
//     and fwdbwd flow ends handed back for kineto-dependencies.ts to bind (the
//     recorded outputs were written again for that, once: kineto-golden.ts);
//   - ids are handed out in the order the JavaScript writer created them
//     (strings, devices, contexts, streams on first use), rows are inserted
//     in file order: the recording is the same, row for row, whichever path
//     an event took (test/import/kineto-native.test.ts, parseAllInJs).
#include "trace_import.h"

#include <fcntl.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "demangle.h"
#include "sqlite_db.h"
#include "zone_builder.h"

namespace streamscope::addon {
namespace {

// ---- errors -----------------------------------------------------------------

// A problem with the trace: said by the caller as a TraceFormatError naming the file; `at` is a byte offset (-1: none)
// that it turns into the character offset json-events.ts always reported.
struct FormatError {
  std::string problem;
  int64_t at;
};
// The fast path cannot decide this event the way JavaScript would: parse it again through JSON.parse.
struct NeedJs {};

// ---- values -----------------------------------------------------------------

// One field of an event as the mapping reads it: what JavaScript's `typeof`
// and Array.isArray would say, and the value. From simdjson (`js` false) or
// from the object JSON.parse returned (`js` true: conversions done by Node).
struct Val {
  enum Kind : uint8_t { Missing, Null, Bool, Num, Str, Arr, Obj } kind = Missing;
  bool js = false;
  bool b = false;
  double num = 0;
  std::string_view str;
  double str_num = NAN;       // js: Number(str), NaN when str.trim() === ''
  std::string_view num_text;  // js: String(num) for Num and Bool
  uint32_t len = 0;           // Arr
};

// Names to numbers and name sets, looked up by string_view (std::less<>):
// an event's fields are views into the parser's buffer, and a std::string
// made for each lookup cost an allocation per event.
using NameTable = std::map<std::string, int64_t, std::less<>>;
using NameSet = std::set<std::string, std::less<>>;

// JavaScript's Math.round: the nearest integer, halves toward +∞.
double jsRound(double x) {
  if (!std::isfinite(x)) return x;
  const double f = std::floor(x);
  return x - f >= 0.5 ? f + 1 : f;
}

constexpr double kMaxSafe = 9007199254740991.0;
bool isSafeInteger(double n) { return std::isfinite(n) && std::trunc(n) == n && std::fabs(n) <= kMaxSafe; }

// `typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN` (json-events.ts).
double numberOf(const Val& v) {
  if (v.kind == Val::Num) return v.num;
  if (v.kind == Val::Str) {
    if (!v.js) throw NeedJs{};
    return v.str_num;
  }
  return NAN;
}
// idField: an integer, or a string of one.
std::optional<int64_t> idField(const Val& v) {
  const double n = numberOf(v);
  if (!isSafeInteger(n)) return std::nullopt;
  return static_cast<int64_t>(n);
}
// nsField: microseconds as nanoseconds, null unless finite.
std::optional<double> nsField(const Val& v) {
  const double ns = jsRound(numberOf(v) * 1000);
  if (!std::isfinite(ns)) return std::nullopt;
  return ns;
}
// intField, 0 when null (kineto.ts's int()).
int64_t intOr0(const Val& v) {
  const double t = std::trunc(numberOf(v));
  return isSafeInteger(t) ? static_cast<int64_t>(t) : 0;
}
// A copy's or memset's `bytes`: 0 when the trace does not say (missing or null), the size when it is a whole number
// of bytes a double holds exactly (intField's conversions: a string of one, a fraction truncated); nullopt for
// anything else — 1e400 (Infinity), 2^53 and beyond, a negative size, text, an array —, which skips the event as a
// field of the wrong type does, rather than store a size of 0 bytes that was never measured.
std::optional<int64_t> sizeField(const Val& v) {
  if (v.kind == Val::Missing || v.kind == Val::Null) return 0;
  const double t = std::trunc(numberOf(v));
  if (!isSafeInteger(t) || t < 0) return std::nullopt;
  return static_cast<int64_t>(t);
}
// textField: a string, or a number or boolean as String() writes it.
std::optional<std::string_view> textField(const Val& v) {
  if (v.kind == Val::Str) return v.str;
  if (v.kind == Val::Num || v.kind == Val::Bool) {
    if (v.js) return v.num_text;
    if (v.kind == Val::Bool) return v.b ? std::string_view("true") : std::string_view("false");
    throw NeedJs{};
  }
  return std::nullopt;
}
bool isString(const Val& v, std::string_view s) { return v.kind == Val::Str && v.str == s; }

// The fields of an event that the mapping reads (kineto.ts read these and no others; `id` and the synchronization
// fields since cuda_sync events and fwdbwd flows are imported).
struct Event {
  Val ph, cat, name, pid, tid, ts, dur, id;
  // args (e.args ?? {}): missing unless args is an object
  Val a_name, a_labels, a_cbid, a_correlation, a_device, a_context, a_stream, a_bytes, a_registers, a_shared, a_grid, a_block;
  // cuda_sync (wait_on_*) and cuda_event (event_id)
  Val a_wait_stream, a_wait_record, a_wait_event, a_event_id;
  std::array<Val, 3> grid, block;  // when a_grid / a_block is an array of 3
};

enum EventKey : int { kNone = -1, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs, kId };
int eventKey(std::string_view k) {
  switch (k.size()) {
    case 2: return k == "ph" ? kPh : k == "ts" ? kTs : k == "id" ? kId : kNone;
    case 3: return k == "cat" ? kCat : k == "pid" ? kPid : k == "tid" ? kTid : k == "dur" ? kDur : kNone;
    case 4: return k == "name" ? kName : k == "args" ? kArgs : kNone;
    default: return kNone;
  }
}
Val Event::*argSlot(std::string_view k) {
  if (k == "name") return &Event::a_name;
  if (k == "labels") return &Event::a_labels;
  if (k == "cbid") return &Event::a_cbid;
  if (k == "correlation") return &Event::a_correlation;
  if (k == "device") return &Event::a_device;
  if (k == "context") return &Event::a_context;
  if (k == "stream") return &Event::a_stream;
  if (k == "bytes") return &Event::a_bytes;
  if (k == "registers per thread") return &Event::a_registers;
  if (k == "shared memory") return &Event::a_shared;
  if (k == "grid") return &Event::a_grid;
  if (k == "block") return &Event::a_block;
  if (k == "wait_on_stream") return &Event::a_wait_stream;
  if (k == "wait_on_cuda_event_record_corr_id") return &Event::a_wait_record;
  if (k == "wait_on_cuda_event_id") return &Event::a_wait_event;
  if (k == "event_id") return &Event::a_event_id;
  return nullptr;
}

// ---- the fast path: simdjson's DOM --------------------------------------------

Val fromDom(simdjson::dom::element e) {
  Val v;
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY:
      v.kind = Val::Arr;
      v.len = static_cast<uint32_t>(simdjson::dom::array(e).size());
      break;
    case simdjson::dom::element_type::OBJECT: v.kind = Val::Obj; break;
    case simdjson::dom::element_type::INT64:
      v.kind = Val::Num;
      v.num = static_cast<double>(int64_t(e));
      break;
    case simdjson::dom::element_type::UINT64:
      v.kind = Val::Num;
      v.num = static_cast<double>(uint64_t(e));
      break;
    case simdjson::dom::element_type::DOUBLE:
      v.kind = Val::Num;
      v.num = double(e);
      break;
    case simdjson::dom::element_type::STRING:
      v.kind = Val::Str;
      v.str = std::string_view(e);
      break;
    case simdjson::dom::element_type::BOOL:
      v.kind = Val::Bool;
      v.b = bool(e);
      break;
    case simdjson::dom::element_type::NULL_VALUE: v.kind = Val::Null; break;
  }
  return v;
}

void tripleFromDom(simdjson::dom::element e, std::array<Val, 3>& out) {
  size_t i = 0;
  for (simdjson::dom::element item : simdjson::dom::array(e)) out[i++] = fromDom(item);
}

// Reads an event parsed by simdjson; duplicate keys: the last wins, as in JSON.parse.
void eventFromDom(simdjson::dom::object obj, Event& ev) {
  std::optional<simdjson::dom::element> args;
  for (auto field : obj) {
    switch (eventKey(field.key)) {
      case kPh: ev.ph = fromDom(field.value); break;
      case kCat: ev.cat = fromDom(field.value); break;
      case kName: ev.name = fromDom(field.value); break;
      case kPid: ev.pid = fromDom(field.value); break;
      case kTid: ev.tid = fromDom(field.value); break;
      case kTs: ev.ts = fromDom(field.value); break;
      case kDur: ev.dur = fromDom(field.value); break;
      case kId: ev.id = fromDom(field.value); break;
      case kArgs: args = field.value; break;
      default: break;
    }
  }
  if (!args || args->type() != simdjson::dom::element_type::OBJECT) return;
  std::optional<simdjson::dom::element> grid, block;
  for (auto field : simdjson::dom::object(*args)) {
    Val Event::*slot = argSlot(field.key);
    if (!slot) continue;
    ev.*slot = fromDom(field.value);
    if (slot == &Event::a_grid) grid = field.value;
    if (slot == &Event::a_block) block = field.value;
  }
  if (ev.a_grid.kind == Val::Arr && ev.a_grid.len == 3) tripleFromDom(*grid, ev.grid);
  if (ev.a_block.kind == Val::Arr && ev.a_block.len == 3) tripleFromDom(*block, ev.block);
}

// ---- the slow path: the object JSON.parse returned ----------------------------

// Strings read from JavaScript values live here until the event is mapped.
struct JsStrings {
  std::deque<std::string> texts;
  std::string_view keep(std::string s) { return texts.emplace_back(std::move(s)); }
};

Val fromJs(Napi::Value x, JsStrings& strings) {
  Val v;
  v.js = true;
  switch (x.Type()) {
    case napi_undefined: v.kind = Val::Missing; break;
    case napi_null: v.kind = Val::Null; break;
    case napi_boolean:
      v.kind = Val::Bool;
      v.b = x.As<Napi::Boolean>().Value();
      v.num_text = strings.keep(x.ToString().Utf8Value());
      break;
    case napi_number:
      v.kind = Val::Num;
      v.num = x.As<Napi::Number>().DoubleValue();
      v.num_text = strings.keep(x.ToString().Utf8Value());
      break;
    case napi_string: {
      v.kind = Val::Str;
      v.str = strings.keep(x.As<Napi::String>().Utf8Value());
      // Number(s), except that s.trim() === '' is NaN for the field rules: a whitespace-only string is the only one
      // Number() makes 0 without a '0' in it (both use the same white space).
      const double n = x.ToNumber().DoubleValue();
      v.str_num = n == 0 && v.str.find('0') == std::string_view::npos ? NAN : n;
      break;
    }
    case napi_object:
      if (x.IsArray()) {
        v.kind = Val::Arr;
        v.len = x.As<Napi::Array>().Length();
      } else {
        v.kind = Val::Obj;
      }
      break;
    default: v.kind = Val::Obj; break;  // JSON.parse makes nothing else
  }
  return v;
}

void eventFromJs(Napi::Object obj, Event& ev, JsStrings& strings) {
  ev.ph = fromJs(obj.Get("ph"), strings);
  ev.cat = fromJs(obj.Get("cat"), strings);
  ev.name = fromJs(obj.Get("name"), strings);
  ev.pid = fromJs(obj.Get("pid"), strings);
  ev.tid = fromJs(obj.Get("tid"), strings);
  ev.ts = fromJs(obj.Get("ts"), strings);
  ev.dur = fromJs(obj.Get("dur"), strings);
  ev.id = fromJs(obj.Get("id"), strings);
  Napi::Value args = obj.Get("args");
  if (!args.IsObject() || args.IsArray()) return;  // `e.args ?? {}`: a number, string or array has none of these keys
  Napi::Object a = args.As<Napi::Object>();
  static const char* const keys[] = {"name",
                                     "labels",
                                     "cbid",
                                     "correlation",
                                     "device",
                                     "context",
                                     "stream",
                                     "bytes",
                                     "grid",
                                     "registers per thread",
                                     "shared memory",
                                     "block",
                                     "wait_on_stream",
                                     "wait_on_cuda_event_record_corr_id",
                                     "wait_on_cuda_event_id",
                                     "event_id"};
  for (const char* k : keys) ev.*argSlot(k) = fromJs(a.Get(k), strings);
  auto triple = [&](const Val& v, const char* key, std::array<Val, 3>& out) {
    if (v.kind != Val::Arr || v.len != 3) return;
    Napi::Array arr = a.Get(key).As<Napi::Array>();
    for (uint32_t i = 0; i < 3; i++) out[i] = fromJs(arr.Get(i), strings);
  };
  triple(ev.a_grid, "grid", ev.grid);
  triple(ev.a_block, "block", ev.block);
}

// ---- rows and the writer thread -------------------------------------------------

enum Table : uint8_t {
  kString,
  kDevice,
  kContext,
  kStream,
  kProcess,
  kThread,
  kKernel,
  kMemcpy,
  kMemset,
  kApi,
  kRange,
  kSync,
  kCudaEvent,
  kCpuOp,
  kTables
};

// The statements: those of profiler/import/recording-writer.ts, with the ids it would have got from lastInsertRowid
// given explicitly (the tables start empty, so they are the same).
const char* const kSql[kTables] = {
    "INSERT INTO strings (id, value, demangled) VALUES (?, ?, ?)",
    "INSERT INTO devices (id, ordinal, name) VALUES (?, ?, NULL)",
    "INSERT INTO contexts (id, pid, cupti_context_id, device_id) VALUES (?, ?, ?, ?)",
    "INSERT INTO streams (id, pid, context_id, device_id, cupti_stream_id, flags) VALUES (?, ?, ?, ?, ?, 8)",
    "INSERT OR IGNORE INTO processes (pid, complete) VALUES (?, 1)",
    "INSERT OR IGNORE INTO threads (pid, tid) VALUES (?, ?)",
    "INSERT INTO kernels (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z, "
    "block_x, block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, "
    "launch_type) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,0)",
    "INSERT INTO memcpys (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, copy_kind, src_kind, "
    "dst_kind, is_async) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO memsets (start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, value, memory_kind, "
    "is_async) VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO api_calls (start_ns, end_ns, pid, tid, domain, cbid, name_id, correlation_id, return_value) VALUES "
    "(?,?,?,?,?,?,?,?,?)",
    "INSERT INTO nvtx_ranges (start_ns, end_ns, pid, tid, name_id, domain_id, payload) VALUES (?,?,?,?,?,?,NULL)",
    "INSERT INTO syncs (start_ns, end_ns, pid, context_id, stream_id, sync_type, event_id, correlation_id, return_value) VALUES "
    "(?,?,?,?,?,?,?,?,0)",
    "INSERT INTO cuda_events (device_ns, pid, context_id, stream_id, device_id, event_id, correlation_id) VALUES (NULL,?,?,?,?,?,?)",
    "INSERT INTO cpu_ops (start_ns, end_ns, pid, tid, kind, name_id) VALUES (?,?,?,?,?,?)",
};
constexpr int kWidth[kTables] = {3, 2, 4, 5, 1, 2, 16, 11, 10, 9, 6, 8, 6, 6};
// A value bound as NULL (a synchronization of no stream, an event id CUPTI did not give): zone_builder.h's kNull.

// A row: its table and integer values in the statement's order (kNull: NULL); for strings, v[1] and v[2] index the
// batch's texts (v[2] -1: demangled is NULL).
struct Row {
  Table table;
  int64_t v[16];
};
struct Batch {
  std::vector<Row> rows;
  std::vector<std::string> texts;
};
constexpr size_t kBatchRows = 32768;
constexpr size_t kQueued = 4;  // batches waiting at most: memory stays flat whatever the file's size

// The timeline tables' zones (SCHEMA.md "Zones"), built by the writer thread as their rows go in (BlockZones, exactly
// the zones ensureZones would build in SQL afterwards: 4.6 s of a 1 GiB trace's 6.4 s import there).
constexpr int kZonedTables = 6;
constexpr int kZoneTableIds[kZonedTables] = {zone_table::kKernels, zone_table::kMemcpys,  zone_table::kMemsets,
                                             zone_table::kSyncs,   zone_table::kApiCalls, zone_table::kNvtxRanges};
// Where a table's zones are (an index of kZoneTableIds), -1 for a table that has none.
constexpr int zoneSlot(Table t) {
  switch (t) {
    case kKernel: return 0;
    case kMemcpy: return 1;
    case kMemset: return 2;
    case kSync: return 3;
    case kApi: return 4;
    case kRange: return 5;
    default: return -1;
  }
}
// The row's zone key as profiler/store/zone-tables.ts's ZONED_TABLES reads it in SQL (lane, end and correlation
// expressions over the statement's values); false where SQL would not make an integer lane of it (pid * 4194304 + tid
// past int64: a REAL; a NULL), so that the table is left to ensureZones.
bool zoneKey(const Row& r, BlockZones::Row& k) {
  const int64_t* v = r.v;
  k.start = v[0];
  k.end = v[1];
  k.copy_kind = r.table == kMemcpy ? v[7] : 0;
  switch (r.table) {
    case kKernel:
    case kMemcpy:
    case kMemset:
      k.lane = v[4];
      k.correlation = v[5];
      break;
    case kSync:  // coalesce(stream_id, 0)
      k.lane = v[4] == kNull ? 0 : v[4];
      k.correlation = v[7];
      break;
    case kApi:
    case kRange:  // pid * 4194304 + tid; ranges: coalesce(end_ns, start_ns), no correlation
      if (v[2] == kNull || v[3] == kNull || __builtin_mul_overflow(v[2], zone_table::kThreadLaneFactor, &k.lane) ||
          __builtin_add_overflow(k.lane, v[3], &k.lane))
        return false;
      k.correlation = r.table == kApi ? v[7] : kNull;
      if (r.table == kRange && k.end == kNull) k.end = k.start;
      break;
    default: return false;
  }
  return k.lane != kNull && k.start != kNull && k.end != kNull;
}

class Writer {
 public:
  // SQLite's failures are SqliteErrors that JS reads the code of (sqlite_db.h): the caller says a full disk about the
  // output, anything else as an internal error.
  explicit Writer(const std::string& path) : db_(path, SQLITE_OPEN_READWRITE, Db::Codes::InJsErrors) {
    // The recording was created (schema, 64 KiB pages, journal mode) by recording-writer.ts; its connection is closed.
    exec("PRAGMA cache_size = -32768");
    next_ids = {nextId("strings"), nextId("devices"), nextId("contexts"), nextId("streams")};
    for (int t = 0; t < kTables; t++) {
      if (sqlite3_prepare_v3(db_.handle(), kSql[t], -1, SQLITE_PREPARE_PERSISTENT, &stmt_[t], nullptr) != SQLITE_OK) fail("prepare");
    }
    if (sqlite3_prepare_v3(db_.handle(), kZonesSql, -1, 0, &zones_stmt_, nullptr) != SQLITE_OK) fail("prepare");
    exec("BEGIN");
    thread_ = std::thread([this] { loop(); });
  }
  ~Writer() {
    stop();
    for (sqlite3_stmt* s : stmt_) sqlite3_finalize(s);
    sqlite3_finalize(zones_stmt_);
  }
  // The next value of the INTEGER PRIMARY KEY of strings, devices, contexts
  // and streams as the file held them when opened (what lastInsertRowid
  // would say after each table's next insert).
  struct NextIds {
    int64_t string, device, context, stream;
  } next_ids{};

  Batch& batch() { return current_; }
  // Hands the current batch to the writer thread once it is full (waits while kQueued are pending).
  void maybeFlush() {
    if (current_.rows.size() >= kBatchRows) flush();
  }
  void flush() {
    if (current_.rows.empty()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return queue_.size() < kQueued || error_; });
    if (error_) throw *error_;
    queue_.push_back(std::move(current_));
    current_ = Batch{};
    current_.rows.reserve(kBatchRows);
    ready_.notify_one();
  }
  // Everything written, with its zones, and committed; throws what the writer thread met.
  void finish() {
    flush();
    stop();
    if (error_) throw *error_;
    writeZones();
    exec("COMMIT");
  }

 private:
  void loop() {
    for (;;) {
      Batch b;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        b = std::move(queue_.front());
        queue_.pop_front();
        space_.notify_one();
      }
      try {
        write(b);
      } catch (const SqliteError& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = e;
        queue_.clear();
        space_.notify_all();
        return;
      }
    }
  }
  void write(const Batch& b) {
    for (const Row& r : b.rows) {
      sqlite3_stmt* s = stmt_[r.table];
      if (r.table == kString) {
        const std::string& value = b.texts[static_cast<size_t>(r.v[1])];
        sqlite3_bind_int64(s, 1, r.v[0]);
        sqlite3_bind_text(s, 2, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
        if (r.v[2] < 0) {
          sqlite3_bind_null(s, 3);
        } else {
          const std::string& d = b.texts[static_cast<size_t>(r.v[2])];
          sqlite3_bind_text(s, 3, d.data(), static_cast<int>(d.size()), SQLITE_STATIC);
        }
      } else {
        for (int i = 0; i < kWidth[r.table]; i++) {
          if (r.v[i] == kNull) {
            sqlite3_bind_null(s, i + 1);
          } else {
            sqlite3_bind_int64(s, i + 1, r.v[i]);
          }
        }
      }
      const int rc = sqlite3_step(s);
      sqlite3_reset(s);
      if (rc != SQLITE_DONE) fail("insert");
      const int slot = zoneSlot(r.table);
      if (slot < 0) continue;
      BlockZones::Row k;
      if (!zoneKey(r, k)) {
        zones_[slot].invalidate();
        continue;
      }
      k.id = sqlite3_last_insert_rowid(db_.handle());
      zones_[slot].add(k);
    }
  }
  // The zones of every row written, each table's in the order GROUP BY emits them (zones is WITHOUT ROWID: the same
  // table whatever the order); a table BlockZones left to SQL has none, and ensureZones (endBulkLoad) makes them.
  void writeZones() {
    sqlite3_stmt* s = zones_stmt_;
    for (int i = 0; i < kZonedTables; i++) {
      BlockZones& zones = zones_[i];
      zones.finish();
      if (!zones.valid()) continue;
      for (const auto& [z, copy_kind_rows] : zones.zones()) {
        const int64_t values[] = {kZoneTableIds[i], z.lane,     z.start,    z.first, z.last,    z.end,
                                  z.rows,           z.min_corr, z.max_corr, z.busy,  z.max_dur, z.max_gap};
        for (int c = 0; c < 12; c++) {
          if (values[c] == kNull && (c == 7 || c == 8)) {
            sqlite3_bind_null(s, c + 1);
          } else {
            sqlite3_bind_int64(s, c + 1, values[c]);
          }
        }
        if (copy_kind_rows) {
          sqlite3_bind_text(s, 13, copy_kind_rows->data(), static_cast<int>(copy_kind_rows->size()), SQLITE_STATIC);
        } else {
          sqlite3_bind_null(s, 13);
        }
        const int rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) fail("insert zones");
      }
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      ready_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  void exec(const char* sql) {
    if (sqlite3_exec(db_.handle(), sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
  }
  // "<what>: <SQLite's message>", as profiler/import/index.ts says it after the output's name.
  [[noreturn]] void fail(const char* what) { db_.fail(std::string(what) + ": " + db_.errmsg()); }

  int64_t nextId(const char* table) {
    sqlite3_stmt* s = nullptr;
    const std::string sql = std::string("SELECT coalesce(max(id), 0) + 1 FROM ") + table;
    if (sqlite3_prepare_v2(db_.handle(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK) fail("prepare");
    const int rc = sqlite3_step(s);
    const int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 1;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW) fail("read ids");
    return id;
  }

  static constexpr const char* kZonesSql =
      "INSERT INTO zones (table_id, lane, start_ns, first_id, last_id, end_ns, rows, min_correlation, max_correlation, busy_ns, "
      "max_dur_ns, max_gap_ns, copy_kind_rows) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";

  Db db_;
  sqlite3_stmt* stmt_[kTables] = {};
  sqlite3_stmt* zones_stmt_ = nullptr;
  // The zoned tables' zones, by zoneSlot (memcpys count their rows per copy kind); the writer thread's until finish.
  BlockZones zones_[kZonedTables] = {BlockZones(false), BlockZones(true),  BlockZones(false),
                                     BlockZones(false), BlockZones(false), BlockZones(false)};
  Batch current_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<Batch> queue_;
  bool done_ = false;
  std::optional<SqliteError> error_;
  std::thread thread_;
};

// ---- the mapping (was kineto.ts's loop) ------------------------------------------

constexpr int64_t kUnknownPid = -1;  // host pid of GPU events seen before any host event named it

bool isWordChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
// The end of the run of /[\w ]/ characters from `i` (JavaScript's \w without the u flag: ASCII letters, digits, _).
size_t wordsAndSpaces(std::string_view s, size_t i) {
  while (i < s.size() && (isWordChar(s[i]) || s[i] == ' ')) i++;
  return i;
}
// /^Memcpy (\w+) \(([\w ]+) -> ([\w ]+)\)/ (kineto.ts had it so): '-', '>' and ')' are not in [\w ], so each group
// is its run of [\w ] characters, less the space that " -> " takes back.
bool memcpyName(std::string_view n, std::string_view& kind, std::string_view& src, std::string_view& dst) {
  constexpr std::string_view head = "Memcpy ";
  if (n.substr(0, head.size()) != head) return false;
  const size_t k0 = head.size();
  size_t k = k0;
  while (k < n.size() && isWordChar(n[k])) k++;
  if (k == k0 || n.substr(k, 2) != " (") return false;
  const size_t s = k + 2;
  const size_t r = wordsAndSpaces(n, s);  // n[r - 1] must be the space of " -> "
  if (r < s + 2 || n[r - 1] != ' ' || n.substr(r, 3) != "-> ") return false;
  const size_t d = r + 3;
  const size_t f = wordsAndSpaces(n, d);
  if (f == d || f >= n.size() || n[f] != ')') return false;
  kind = n.substr(k0, k - k0);
  src = n.substr(s, r - 1 - s);
  dst = n.substr(d, f - d);
  return true;
}
// /^Memset \(([\w ]+)\)/
bool memsetName(std::string_view n, std::string_view& kind) {
  constexpr std::string_view head = "Memset (";
  if (n.substr(0, head.size()) != head) return false;
  const size_t s = head.size();
  const size_t f = wordsAndSpaces(n, s);
  if (f == s || f >= n.size() || n[f] != ')') return false;
  kind = n.substr(s, f - s);
  return true;
}

struct Counts {
  int64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0, syncs = 0, cuda_events = 0, cpu_ops = 0;
};

// One end of a flow between CPU operations (Kineto's fwdbwd: `s` on a forward operator, `f` on the backward one
// autograd made for it), in the trace's clock: bound to its operation once every row is written (kineto.ts).
struct FlowEnd {
  int64_t id;
  bool finish;
  int64_t pid, tid;
  double ns;
};

// CUPTI_ActivitySynchronizationType by the name Kineto gives it (syncTypeString); 0: not a synchronization it names.
int64_t syncType(std::string_view name) {
  if (name == "Event Sync") return 1;
  if (name == "Stream Wait Event") return 2;
  if (name == "Stream Sync") return 3;
  if (name == "Context Sync") return 4;
  return 0;
}

// An id CUPTI gave (a stream, an event, a correlation): a non-negative integer. Kineto writes CUPTI's invalid value
// as -1 (streams, correlations it could not find) or 2^32 - 1 (an event id as an unsigned number): none, kNull.
int64_t cuptiId(const Val& v) {
  if (v.kind == Val::Missing || v.kind == Val::Null) return kNull;
  const double t = std::trunc(numberOf(v));
  if (!isSafeInteger(t) || t < 0 || t >= 4294967295.0) return kNull;
  return static_cast<int64_t>(t);
}

class KinetoRows {
 public:
  KinetoRows(std::optional<std::string> output, NameTable copy_kinds, NameTable memory_kinds, NameSet host_ranges, NameTable cpu_ops)
      : output_(std::move(output)),
        copy_kinds_(std::move(copy_kinds)),
        memory_kinds_(std::move(memory_kinds)),
        host_ranges_(std::move(host_ranges)),
        cpu_ops_(std::move(cpu_ops)) {}

  bool any = false;
  bool timed = false;  // a first timed event was met (the writer exists)
  double origin = 0;
  Counts counts;
  int64_t skipped = 0;
  std::optional<int64_t> host_pid, gpu_pid;
  std::vector<std::pair<int64_t, std::string>> process_names;  // in the order Map.set first saw them; last value wins
  std::vector<FlowEnd> flows;                                  // fwdbwd flow ends, in file order

  // Maps one event. Throws NeedJs (before any effect) when JavaScript must decide; returns false to stop (probe mode
  // reached the first timed event).
  bool map(const Event& e) {
    any = true;
    if (isString(e.ph, "M")) {
      metadata(e);
      return true;
    }
    // Flows between CPU operations: autograd's forward → backward (fwdbwd). Kineto's ac2g flows (a launch → its GPU
    // operation) only repeat the correlation ids, which join them already: skipped with the other events not imported.
    if ((isString(e.ph, "s") || isString(e.ph, "f")) && isString(e.cat, "fwdbwd")) {
      flow(e);
      return true;
    }
    // Every conversion first: NeedJs must come before any effect.
    const std::optional<Fields> f = fieldsOf(e);
    if (!f) {
      skipped++;
      return true;
    }
    // The first timed event is time zero; later events may be earlier (negative times are fine).
    if (!timed) {
      timed = true;
      origin = f->start;
      if (!output_) return false;  // probe: the caller only wanted to know that the import gets this far
      writer_ = std::make_unique<Writer>(*output_);
      next_string_ = writer_->next_ids.string;
      next_device_ = writer_->next_ids.device;
      next_context_ = writer_->next_ids.context;
      next_stream_ = writer_->next_ids.stream;
    }
    const double end = f->start + f->dur;
    const auto t_start = rebased(f->start), t_end = rebased(end);
    if (!t_start || !t_end) {
      skipped++;
      return true;
    }
    store(e, *f, *t_start, *t_end);
    if (writer_) writer_->maybeFlush();
    return true;
  }

  void finish() {
    if (writer_) writer_->finish();
  }

  // recording-writer.ts's #t and holds(): the time relative to the origin, when it is a safe integer.
  std::optional<int64_t> rebased(double ns) const {
    const double t = jsRound(ns - origin);
    if (!isSafeInteger(t)) return std::nullopt;
    return static_cast<int64_t>(t);
  }

 private:
  // A complete event ('X') as the mapping reads it, every conversion done (fieldsOf): what it is, and its values.
  struct Fields {
    double start = 0, dur = 0;
    std::string_view name;
    std::optional<int64_t> pid, tid;
    bool api = false, kernel = false, memcpy = false, memset = false, gpu = false, cuda_event = false;
    int64_t sync_type = 0;  // syncType(): 0, not a synchronization
    int64_t cbid = 0, correlation = 0;
    int64_t device = 0, context = 0, stream = 0, registers = 0, shared = 0, bytes = 0;
    std::array<int64_t, 3> grid{}, block{};
    int64_t sync_stream = kNull, event_id = kNull, record_stream = kNull, record_correlation = kNull;
  };

  // The process name or the host's pid from a metadata event ('M').
  void metadata(const Event& e) {
    const auto pid = idField(e.pid);
    if (!pid) return;
    if (isString(e.name, "process_name") && e.a_name.kind == Val::Str) setProcessName(*pid, std::string(e.a_name.str));
    if (isString(e.name, "process_labels") && isString(e.a_labels, "CPU") && !host_pid) host_pid = *pid;
  }

  // One end of a fwdbwd flow, kept for kineto.ts; one it cannot place is skipped.
  void flow(const Event& e) {
    const auto id = idField(e.id);
    const auto pid = idField(e.pid);
    const auto tid = idField(e.tid);
    const auto at = nsField(e.ts);
    if (!id || !pid || !tid || !at || e.ts.kind != Val::Num) {
      skipped++;
      return;
    }
    flows.push_back(FlowEnd{*id, isString(e.ph, "f"), *pid, *tid, *at});
  }

  // An event's fields, with no effect (a conversion JavaScript must decide throws NeedJs); none for an event that is
  // not imported (not complete, no time, no name, a size that is no size).
  static std::optional<Fields> fieldsOf(const Event& e) {
    Fields f;
    const auto start = nsField(e.ts);
    const std::optional<double> dur = e.dur.kind == Val::Missing ? std::optional<double>(0) : nsField(e.dur);
    const auto name = textField(e.name);
    if (!isString(e.ph, "X") || e.ts.kind != Val::Num || !start || !dur || !name) return std::nullopt;
    f.start = *start;
    f.dur = *dur;
    f.name = *name;
    f.pid = idField(e.pid);
    f.tid = idField(e.tid);
    f.api = isString(e.cat, "cuda_runtime") || isString(e.cat, "cuda_driver");
    f.kernel = isString(e.cat, "kernel");
    f.memcpy = isString(e.cat, "gpu_memcpy");
    f.memset = isString(e.cat, "gpu_memset");
    f.gpu = f.kernel || f.memcpy || f.memset;
    // CUDA synchronizations (Kineto's cuda_sync, with enable_cuda_sync_events) and CUDA event records (cuda_event):
    // on the device's pid like GPU work, CUPTI's SYNCHRONIZATION and CUDA_EVENT records as the collector writes them.
    f.sync_type = isString(e.cat, "cuda_sync") && e.name.kind == Val::Str ? syncType(e.name.str) : 0;
    f.cuda_event = isString(e.cat, "cuda_event");
    const bool device_side = f.gpu || f.sync_type || f.cuda_event;
    f.cbid = f.api ? intOr0(e.a_cbid) : 0;
    f.correlation = f.api || device_side ? intOr0(e.a_correlation) : 0;
    const std::optional<int64_t> bytes = f.memcpy || f.memset ? sizeField(e.a_bytes) : std::optional<int64_t>(0);
    if (device_side) {
      // `args.device ?? e.pid`, `args.stream ?? e.tid`
      f.device = intOr0(e.a_device.kind == Val::Missing || e.a_device.kind == Val::Null ? e.pid : e.a_device);
      f.context = intOr0(e.a_context);
      f.stream = intOr0(e.a_stream.kind == Val::Missing || e.a_stream.kind == Val::Null ? e.tid : e.a_stream);
    }
    if (f.sync_type || f.cuda_event) {
      // A context or event synchronize involves no stream (Kineto writes -1); an event wait or synchronize names the
      // event, and where Kineto found the cudaEventRecord it was recorded by, that call and its stream.
      f.sync_stream = cuptiId(e.a_stream);
      f.event_id = cuptiId(f.cuda_event ? e.a_event_id : e.a_wait_event);
      if (f.sync_type == 1 || f.sync_type == 2) {
        f.record_correlation = cuptiId(e.a_wait_record);
        f.record_stream = cuptiId(e.a_wait_stream);
      } else if (f.sync_type) {
        f.event_id = kNull;
      }
    }
    if (f.kernel) {
      f.registers = intOr0(e.a_registers);
      f.shared = intOr0(e.a_shared);
      if (e.a_grid.kind == Val::Arr && e.a_grid.len == 3) f.grid = {intOr0(e.grid[0]), intOr0(e.grid[1]), intOr0(e.grid[2])};
      if (e.a_block.kind == Val::Arr && e.a_block.len == 3) f.block = {intOr0(e.block[0]), intOr0(e.block[1]), intOr0(e.block[2])};
    }
    if (!bytes) return std::nullopt;
    f.bytes = *bytes;
    return f;
  }

  // An imported event's rows, by what it is, at its times on the recording's clock.
  void store(const Event& e, const Fields& f, int64_t t_start, int64_t t_end) {
    const bool host = f.pid && f.tid;
    if (f.api && host) {
      if (!host_pid) host_pid = *f.pid;
      thread(*f.pid, *f.tid);
      const int64_t name_id = string(f.name);
      row(kApi, {t_start, t_end, *f.pid, *f.tid, isString(e.cat, "cuda_runtime") ? 1 : 2, f.cbid, name_id, f.correlation, 0});
      counts.api_calls++;
    } else if (f.gpu) {
      // Kineto puts GPU events under the device's pid; their host process is the one making CUDA calls, which may
      // only show up later in the file.
      if (!gpu_pid) gpu_pid = host_pid ? *host_pid : kUnknownPid;
      const auto [dev, ctx, str] = lane(f.device, f.context, f.stream, *gpu_pid);
      if (f.kernel) {
        const int64_t name_id = string(f.name);
        row(kKernel, {t_start, t_end, dev, ctx, str, f.correlation, name_id, f.grid[0], f.grid[1], f.grid[2], f.block[0], f.block[1],
                      f.block[2], f.registers, f.shared, 0});
        counts.kernels++;
      } else if (f.memcpy) {
        std::string_view kind, src, dst;
        const bool m = memcpyName(f.name, kind, src, dst);
        row(kMemcpy, {t_start, t_end, dev, ctx, str, f.correlation, f.bytes, m ? lookup(copy_kinds_, kind) : 0,
                      m ? lookup(memory_kinds_, src) : 0, m ? lookup(memory_kinds_, dst) : 0, 1});
        counts.memcpys++;
      } else {
        std::string_view kind;
        const bool m = memsetName(f.name, kind);
        row(kMemset, {t_start, t_end, dev, ctx, str, f.correlation, f.bytes, 0, m ? lookup(memory_kinds_, kind) : 0, 1});
        counts.memsets++;
      }
    } else if (f.sync_type) {
      if (!gpu_pid) gpu_pid = host_pid ? *host_pid : kUnknownPid;
      const int64_t ctx = contextId(f.device, f.context, *gpu_pid);
      const int64_t str = f.sync_stream != kNull ? lane(f.device, f.context, f.sync_stream, *gpu_pid)[2] : kNull;
      row(kSync, {t_start, t_end, *gpu_pid, ctx, str, f.sync_type, f.event_id, f.correlation});
      counts.syncs++;
      if (f.record_correlation != kNull && f.event_id != kNull)
        cudaEvent(f.device, f.context, f.record_stream, f.event_id, f.record_correlation);
    } else if (f.cuda_event) {
      if (!gpu_pid) gpu_pid = host_pid ? *host_pid : kUnknownPid;
      if (f.event_id != kNull) {
        cudaEvent(f.device, f.context, f.sync_stream, f.event_id, f.correlation);
      } else {
        skipped++;
      }
    } else if (e.cat.kind == Val::Str && cpu_ops_.count(e.cat.str) && host) {
      // PyTorch's operators and Python functions: CPU operations, not ranges (schema 11, cpu_ops).
      thread(*f.pid, *f.tid);
      const int64_t name_id = string(f.name);
      row(kCpuOp, {t_start, t_end, *f.pid, *f.tid, lookup(cpu_ops_, e.cat.str), name_id});
      counts.cpu_ops++;
    } else if (e.cat.kind == Val::Str && host_ranges_.count(e.cat.str) && host) {
      thread(*f.pid, *f.tid);
      const int64_t name_id = string(f.name);
      const int64_t domain_id = string(e.cat.str);
      row(kRange, {t_start, t_end, *f.pid, *f.tid, name_id, domain_id});
      counts.ranges++;
    } else {
      skipped++;
    }
  }
  static int64_t lookup(const NameTable& m, std::string_view k) {
    const auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  }
  void setProcessName(int64_t pid, std::string name) {
    for (auto& [p, n] : process_names) {
      if (p == pid) {
        n = std::move(name);
        return;
      }
    }
    process_names.emplace_back(pid, std::move(name));
  }
  void row(Table t, std::initializer_list<int64_t> values) {
    Row r;
    r.table = t;
    std::copy(values.begin(), values.end(), r.v);
    writer_->batch().rows.push_back(r);
  }
  int64_t string(std::string_view value) {
    // Keyed by the text: JavaScript keyed its Map by the string, and stored it as this UTF-8.
    auto it = strings_.find(value);
    if (it != strings_.end()) return it->second;
    const int64_t id = next_string_++;
    const std::string& key = string_store_.emplace_back(value);
    strings_.emplace(key, id);
    Batch& b = writer_->batch();
    const auto value_at = static_cast<int64_t>(b.texts.size());
    b.texts.emplace_back(key);
    int64_t demangled_at = -1;
    if (auto d = demangle(key)) {
      demangled_at = static_cast<int64_t>(b.texts.size());
      b.texts.push_back(std::move(*d));
    }
    row(kString, {id, value_at, demangled_at});
    return id;
  }
  void process(int64_t pid) {
    if (processes_.insert(pid).second) row(kProcess, {pid});
  }
  void thread(int64_t pid, int64_t tid) {
    process(pid);
    if (threads_.insert({pid, tid}).second) row(kThread, {pid, tid});
  }
  int64_t deviceId(int64_t ordinal) {
    auto it = devices_.find(ordinal);
    if (it != devices_.end()) return it->second;
    const int64_t id = next_device_++;
    devices_.emplace(ordinal, id);
    row(kDevice, {id, ordinal});
    return id;
  }
  // contexts.id of the process's CUPTI context (created on first use, on the device given).
  int64_t contextId(int64_t device, int64_t context, int64_t pid) {
    const int64_t dev = deviceId(device);
    process(pid);
    auto c = contexts_.find({pid, context});
    if (c == contexts_.end()) {
      c = contexts_.emplace(std::make_pair(pid, context), next_context_++).first;
      row(kContext, {c->second, pid, context, dev});
    }
    return c->second;
  }
  std::array<int64_t, 3> lane(int64_t device, int64_t context, int64_t stream, int64_t pid) {
    if (last_lane_ && last_lane_key_ == std::array<int64_t, 4>{device, context, stream, pid}) return *last_lane_;
    const int64_t dev = deviceId(device);
    const int64_t ctx = contextId(device, context, pid);
    auto s = streams_.find({ctx, stream});
    if (s == streams_.end()) {
      s = streams_.emplace(std::make_pair(ctx, stream), next_stream_++).first;
      row(kStream, {s->second, pid, ctx, dev, stream});
    }
    last_lane_key_ = {device, context, stream, pid};
    last_lane_ = {dev, ctx, s->second};
    return *last_lane_;
  }
  // A cudaEventRecord, once per call: Kineto repeats the record of an event on every synchronization that waited for
  // it. `stream` unknown (kNull): NULL (the analysis then ties nothing to it, as to a record the collector saw on no stream).
  void cudaEvent(int64_t device, int64_t context, int64_t stream, int64_t event_id, int64_t correlation) {
    const int64_t pid = *gpu_pid;
    if (!records_.insert({pid, context, event_id, correlation}).second) return;
    const int64_t ctx = contextId(device, context, pid);
    const int64_t dev = deviceId(device);
    const int64_t str = stream != kNull ? lane(device, context, stream, pid)[2] : kNull;
    row(kCudaEvent, {pid, ctx, str, dev, event_id, correlation});
    counts.cuda_events++;
  }

  std::optional<std::string> output_;
  NameTable copy_kinds_, memory_kinds_;
  NameSet host_ranges_;
  NameTable cpu_ops_;
  std::set<std::array<int64_t, 4>> records_;  // (pid, CUPTI context, event id, correlation) of the cuda_events written
  std::unique_ptr<Writer> writer_;
  int64_t next_string_ = 1, next_device_ = 1, next_context_ = 1, next_stream_ = 1;
  std::deque<std::string> string_store_;  // the keys of strings_ (a deque: they never move)
  std::unordered_map<std::string_view, int64_t> strings_;
  std::map<int64_t, int64_t> devices_;
  std::map<std::pair<int64_t, int64_t>, int64_t> contexts_, streams_;
  std::set<int64_t> processes_;
  std::set<std::pair<int64_t, int64_t>> threads_;
  std::array<int64_t, 4> last_lane_key_{};
  std::optional<std::array<int64_t, 3>> last_lane_;
};

// ---- the scan (was json-events.ts's; the generic Chrome importer reads through it too: scanTraceEvents)
// ----------------------------------------------------

constexpr size_t kMemberCap = 16u << 20;  // top-level members other than traceEvents larger than this are skipped
constexpr size_t kChunk = 4u << 20;

// 1234567 → "1,234,567", for messages.
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > (digits[0] == '-' ? 1 : 0); i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

class Scanner {
 public:
  // `max_event`: the most bytes one event may have (json-events.ts MAX_EVENT_BYTES says why; tests lower it).
  explicit Scanner(size_t max_event) : max_event_(max_event) {}

  // on_event(ptr, len, offset of its closing brace); on_member(name, text, offset where it ended)
  template <class OnEvent, class OnMember>
  void run(int fd, OnEvent&& on_event, OnMember&& on_member) {
    std::vector<char> buf(kChunk + simdjson::SIMDJSON_PADDING);
    size_t have = 0;         // bytes in buf
    int64_t base = 0;        // file offset of buf[0]
    size_t keep = SIZE_MAX;  // start of the event being captured (kept across reads)
    size_t pos = 0;
    for (;;) {
      // Make room: drop what is consumed, keep the open event.
      const size_t from = keep != SIZE_MAX ? keep : pos;
      if (from > 0) {
        std::memmove(buf.data(), buf.data() + from, have - from);
        have -= from;
        pos -= from;
        base += static_cast<int64_t>(from);
        if (keep != SIZE_MAX) keep = 0;
      }
      // An event still open past the limit is refused before more of it is read (keep is 0 here: it starts at base).
      if (keep != SIZE_MAX && have > max_event_) tooLarge(base);
      if (buf.size() - simdjson::SIMDJSON_PADDING - have < kChunk / 2) buf.resize(buf.size() * 2);
      readAhead(fd, base + static_cast<int64_t>(have));
      const ssize_t n = ::read(fd, buf.data() + have, buf.size() - simdjson::SIMDJSON_PADDING - have);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw FormatError{std::string(errno == EISDIR ? "is a directory" : std::string("cannot read: ") + std::strerror(errno)), -1};
      }
      if (n == 0) break;
      have += static_cast<size_t>(n);
      std::memset(buf.data() + have, 0, simdjson::SIMDJSON_PADDING);
      size_t seg_start = pos;  // where this read's unseen bytes start (members: the part still to append)
      const char* text = buf.data();
      for (size_t i = pos; i < have; i++) {
        const char ch = text[i];
        if (in_string_) {
          if (escape_) {
            escape_ = false;
          } else if (ch == '\\') {
            escape_ = true;
          } else if (ch == '"') {
            in_string_ = false;
            if (reading_key_) reading_key_ = false;
          } else if (reading_key_) {
            key_text_ += ch;
          }
          continue;
        }
        switch (ch) {
          case '"':
            in_string_ = true;
            if (depth_ == 1 && !bare_array_ && !after_colon_ && !capture_) {
              reading_key_ = true;
              key_text_.clear();
            }
            break;
          case ':':
            if (depth_ == 1 && !bare_array_ && !capture_) {
              key_ = key_text_;
              has_key_ = true;
              after_colon_ = true;
              if (key_ != "traceEvents") {
                capture_ = true;
                capture_member_ = true;
                member_name_ = key_;
                member_text_.clear();
                capture_size_ = 0;
                seg_start = i + 1;
              }
            }
            break;
          case '{':
          case '[':
            if (!saw_root_) {
              saw_root_ = true;
              if (ch == '[') {
                bare_array_ = true;
                in_events_ = true;
              }
            } else if (in_events_ && !capture_ && depth_ == (bare_array_ ? 1 : 2) && ch == '{') {
              capture_ = true;
              capture_member_ = false;
              capture_depth_ = depth_;
              keep = i;
            } else if (depth_ == 1 && has_key_ && key_ == "traceEvents" && after_colon_ && ch == '[') {
              in_events_ = true;
            }
            depth_++;
            break;
          case '}':
          case ']':
            depth_--;
            if (depth_ < 0) throw FormatError{std::string("unbalanced '") + ch + "'", base + static_cast<int64_t>(i)};
            if (capture_ && !capture_member_ && depth_ == capture_depth_) {
              capture_ = false;
              if (i + 1 - keep > max_event_) tooLarge(base + static_cast<int64_t>(keep));
              on_event(text + keep, i + 1 - keep, base + static_cast<int64_t>(i));
              keep = SIZE_MAX;
            } else if (in_events_ && depth_ == (bare_array_ ? 0 : 1) && ch == ']') {
              in_events_ = false;
            }
            if (depth_ == 0 && !bare_array_ && capture_ && capture_member_) {
              // The root closed while capturing its last member's value.
              member_text_.append(text + seg_start, i - seg_start);
              finishMember(on_member, base + static_cast<int64_t>(i));
            }
            break;
          case ',':
            if (depth_ == 1 && !bare_array_) {
              if (capture_ && capture_member_) {
                member_text_.append(text + seg_start, i - seg_start);
                finishMember(on_member, base + static_cast<int64_t>(i));
              }
              after_colon_ = false;
              has_key_ = false;
            }
            break;
          default: break;
        }
      }
      if (capture_ && capture_member_) {
        capture_size_ += have - seg_start;
        if (capture_size_ > kMemberCap) {
          capture_ = false;  // too big to be metadata: skip it
          member_text_.clear();
          member_text_.shrink_to_fit();
        } else {
          member_text_.append(text + seg_start, have - seg_start);
        }
      }
      pos = have;
    }
    end_ = base + static_cast<int64_t>(have);
    if (!saw_root_) throw FormatError{"empty file or not JSON (expected a Chrome trace: {\"traceEvents\": [...]})", -1};
    if (depth_ != 0 || in_string_) {
      throw FormatError{std::string("truncated JSON: the file ends inside ") + (in_string_ ? "a string" : "an object or array"), end_};
    }
  }

 private:
  // A trace not in the page cache: each read waited for its 4 MiB from the disk while nothing was parsed (1 GiB: 1 to
  // 1.5 s more than warm on the 2-core VM). The next kReadAhead bytes past `at` are asked for ahead of the parse
  // (posix_fadvise WILLNEED starts their reads and returns), so that the reads find them cached. Not a regular file (a
  // pipe): refused, and nothing changes.
  void readAhead(int fd, int64_t at) {
    constexpr int64_t kReadAhead = 64 << 20;
    if (advised_ >= at + kReadAhead / 2) return;
    const int64_t from = std::max(advised_, at);
    ::posix_fadvise(fd, from, at + kReadAhead - from, POSIX_FADV_WILLNEED);
    advised_ = at + kReadAhead;
  }

  [[noreturn]] void tooLarge(int64_t start) const {
    throw FormatError{"the event starting at byte " + grouped(start) + " is larger than " + grouped(static_cast<int64_t>(max_event_)) +
                          " bytes, the most one event can be (the longest text JSON.parse can read); nothing was imported",
                      -1};
  }

  template <class OnMember>
  void finishMember(OnMember& on_member, int64_t at) {
    capture_ = false;
    on_member(member_name_, member_text_, at);
    member_text_.clear();
  }

  size_t max_event_;
  int depth_ = 0;
  bool in_string_ = false, escape_ = false, saw_root_ = false, bare_array_ = false;
  std::string key_, key_text_;
  bool has_key_ = false, reading_key_ = false, after_colon_ = false, in_events_ = false;
  bool capture_ = false, capture_member_ = false;
  int capture_depth_ = 0;
  size_t capture_size_ = 0;
  std::string member_name_, member_text_;
  int64_t end_ = 0;
  int64_t advised_ = 0;  // readAhead: the file is asked for up to here
};

// ---- the binding --------------------------------------------------------------------

NameTable numberTable(Napi::Value v) {
  NameTable out;
  if (!v.IsObject()) return out;
  Napi::Object o = v.As<Napi::Object>();
  Napi::Array keys = o.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); i++) {
    const std::string k = keys.Get(i).ToString().Utf8Value();
    out[k] = o.Get(k).ToNumber().Int64Value();
  }
  return out;
}

Napi::Error formatError(Napi::Env env, const FormatError& e) {
  Napi::Error err = Napi::Error::New(env, e.problem);
  err.Set("code", Napi::String::New(env, "TRACE_FORMAT"));
  err.Set("problem", Napi::String::New(env, e.problem));
  err.Set("at", Napi::Number::New(env, static_cast<double>(e.at)));
  return err;
}

// JSON.parse, through the `parse` callback the caller gave (bytes → value):
// a malformed text is the trace's problem at `at`.
Napi::Value parseWithJs(Napi::Env env, const Napi::Function& parse, const char* p, size_t len, int64_t at) {
  try {
    return parse.Call({Napi::Buffer<char>::Copy(env, p, len)});
  } catch (const Napi::Error& e) {
    throw FormatError{"malformed JSON: " + e.Message(), at};
  }
}

// The trace file, open for the scan and closed when it ends, whichever way;
// one that cannot be opened is the trace's problem, said as the JavaScript
// reader said it.
class TraceFile {
 public:
  TraceFile(Napi::Env env, const std::string& file) : fd_(::open(file.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) {
      const int err = errno;
      throw formatError(env, FormatError{err == ENOENT ? "no such file" : std::string("cannot read: ") + std::strerror(err), -1});
    }
  }
  ~TraceFile() { ::close(fd_); }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// The options' maxEventBytes: the most bytes one event may have (profiler/import/json-events.ts MAX_EVENT_BYTES, the
// longest string V8 makes, which JavaScript passes; tests pass less).
size_t maxEventBytes(Napi::Env env, const Napi::Object& opts) {
  const Napi::Value v = opts.Get("maxEventBytes");
  const double n = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : 0;
  if (!(n >= 1 && n <= kMaxSafe)) throw Napi::TypeError::New(env, "options.maxEventBytes: a number of bytes");
  return static_cast<size_t>(n);
}

// Out of memory while reading (a buffer for an event near the limit, on a small machine): the trace's import fails
// with a message, and the caller removes its file. Uncaught, std::bad_alloc ends the process (std::terminate).
const FormatError kOutOfMemory{"not enough memory to read it (an event too large for this machine?); nothing was imported", -1};

}  // namespace

// importKinetoTrace(file, { output: string | null, copyKinds, memoryKinds, hostRanges: string[], parse(bytes), maxEventBytes })
Napi::Value importKinetoTrace(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsObject()) {
    throw Napi::TypeError::New(env, "importKinetoTrace(file: string, options: object)");
  }
  const std::string file = info[0].As<Napi::String>().Utf8Value();
  Napi::Object opts = info[1].As<Napi::Object>();
  Napi::Function parse = opts.Get("parse").As<Napi::Function>();
  std::optional<std::string> output;
  if (opts.Get("output").IsString()) output = opts.Get("output").As<Napi::String>().Utf8Value();
  NameSet host_ranges;
  if (opts.Get("hostRanges").IsArray()) {
    Napi::Array a = opts.Get("hostRanges").As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) host_ranges.insert(a.Get(i).ToString().Utf8Value());
  }
  KinetoRows rows(output, numberTable(opts.Get("copyKinds")), numberTable(opts.Get("memoryKinds")), std::move(host_ranges),
                  numberTable(opts.Get("cpuOps")));
  // Every event through JSON.parse, as one simdjson refuses: the tests hold the two paths to the same rows.
  const bool js_only = opts.Get("parseAllInJs").ToBoolean().Value();
  const size_t max_event = maxEventBytes(env, opts);
  Napi::Object members = Napi::Object::New(env);

  // JSON.parse of `len` bytes at `p` (decoded as UTF-8 with replacement, as the stream was).
  auto jsParse = [&](const char* p, size_t len, int64_t at) { return parseWithJs(env, parse, p, len, at); };

  const TraceFile trace(env, file);
  simdjson::dom::parser parser;
  int64_t js_events = 0;
  try {
    Scanner scanner(max_event);
    struct Stop {};
    try {
      scanner.run(
          trace.fd(),
          [&](const char* p, size_t len, int64_t at) {
            Event ev;
            simdjson::dom::element root;
            if (!js_only && parser.parse(p, len, false).get(root) == simdjson::SUCCESS &&
                root.type() == simdjson::dom::element_type::OBJECT) {
              eventFromDom(simdjson::dom::object(root), ev);
              try {
                if (!rows.map(ev)) throw Stop{};
                return;
              } catch (const NeedJs&) {
              }
            }
            // What simdjson refused or JavaScript must convert: JSON.parse decides (and says what is malformed).
            js_events++;
            Napi::Value v = jsParse(p, len, at);
            if (!v.IsObject() || v.IsArray()) return;  // cannot happen for '{…}', as json-events.ts checked
            JsStrings strings;
            Event slow;
            eventFromJs(v.As<Napi::Object>(), slow, strings);
            if (!rows.map(slow)) throw Stop{};
          },
          [&](const std::string& name, const std::string& text, int64_t at) { members.Set(name, jsParse(text.data(), text.size(), at)); });
    } catch (const Stop&) {
      // probe mode: the first timed event was reached
    }
    rows.finish();
  } catch (const FormatError& e) {
    throw formatError(env, e);
  } catch (const std::bad_alloc&) {
    throw formatError(env, kOutOfMemory);
  }

  Napi::Object out = Napi::Object::New(env);
  out.Set("any", Napi::Boolean::New(env, rows.any));
  out.Set("timed", Napi::Boolean::New(env, rows.timed));
  out.Set("originNs", Napi::Number::New(env, rows.origin));
  Napi::Object counts = Napi::Object::New(env);
  counts.Set("kernels", static_cast<double>(rows.counts.kernels));
  counts.Set("memcpys", static_cast<double>(rows.counts.memcpys));
  counts.Set("memsets", static_cast<double>(rows.counts.memsets));
  counts.Set("apiCalls", static_cast<double>(rows.counts.api_calls));
  counts.Set("ranges", static_cast<double>(rows.counts.ranges));
  counts.Set("syncs", static_cast<double>(rows.counts.syncs));
  counts.Set("cudaEvents", static_cast<double>(rows.counts.cuda_events));
  counts.Set("cpuOps", static_cast<double>(rows.counts.cpu_ops));
  out.Set("counts", counts);
  // The fwdbwd flow ends with their times as stored (relative to the origin); one the recording cannot hold is left
  // out, as an event would be.
  Napi::Array flows = Napi::Array::New(env);
  uint32_t n_flows = 0;
  for (const FlowEnd& f : rows.flows) {
    const auto t = rows.timed ? rows.rebased(f.ns) : std::nullopt;
    if (!t) continue;
    Napi::Array end = Napi::Array::New(env, 5);
    end.Set(0u, static_cast<double>(f.id));
    end.Set(1u, f.finish ? 1.0 : 0.0);
    end.Set(2u, static_cast<double>(f.pid));
    end.Set(3u, static_cast<double>(f.tid));
    end.Set(4u, static_cast<double>(*t));
    flows.Set(n_flows++, end);
  }
  out.Set("flows", flows);
  out.Set("skipped", static_cast<double>(rows.skipped));
  out.Set("hostPid", rows.host_pid ? Napi::Number::New(env, static_cast<double>(*rows.host_pid)) : env.Null());
  out.Set("gpuPid", rows.gpu_pid ? Napi::Number::New(env, static_cast<double>(*rows.gpu_pid)) : env.Null());
  Napi::Array names = Napi::Array::New(env, rows.process_names.size());
  for (size_t i = 0; i < rows.process_names.size(); i++) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, static_cast<double>(rows.process_names[i].first));
    pair.Set(1u, rows.process_names[i].second);
    names.Set(static_cast<uint32_t>(i), pair);
  }
  out.Set("processNames", names);
  out.Set("members", members);
  out.Set("slowEvents", static_cast<double>(js_events));
  return out;
}

// scanTraceEvents(file, { parse(bytes), onEvents(events[]), maxEventBytes }) → members: the same scan for the generic Chrome
// importer (profiler/import/chrome.ts), which maps events in JavaScript: every event parsed by `parse` (JSON.parse),
// handed over in batches; the top-level members parsed likewise and returned. Errors as importKinetoTrace's.
Napi::Value scanTraceEvents(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsObject()) {
    throw Napi::TypeError::New(env, "scanTraceEvents(file: string, { parse, onEvents, maxEventBytes })");
  }
  const std::string file = info[0].As<Napi::String>().Utf8Value();
  Napi::Object opts = info[1].As<Napi::Object>();
  Napi::Function parse = opts.Get("parse").As<Napi::Function>();
  Napi::Function on_events = opts.Get("onEvents").As<Napi::Function>();
  const size_t max_event = maxEventBytes(env, opts);
  Napi::Object members = Napi::Object::New(env);
  auto jsParse = [&](const char* p, size_t len, int64_t at) { return parseWithJs(env, parse, p, len, at); };
  const TraceFile trace(env, file);
  constexpr uint32_t kEventsPerCall = 4096;
  Napi::Array batch = Napi::Array::New(env);
  uint32_t n = 0;
  auto handOver = [&] {
    if (n == 0) return;
    on_events.Call({batch});
    batch = Napi::Array::New(env);
    n = 0;
  };
  try {
    Scanner scanner(max_event);
    scanner.run(
        trace.fd(),
        [&](const char* p, size_t len, int64_t at) {
          // A batch's events were all parsed before any is mapped, as json-events.ts's chunks were.
          batch.Set(n++, jsParse(p, len, at));
          if (n == kEventsPerCall) handOver();
        },
        [&](const std::string& name, const std::string& text, int64_t at) { members.Set(name, jsParse(text.data(), text.size(), at)); });
    handOver();
  } catch (const FormatError& e) {
    throw formatError(env, e);
  } catch (const std::bad_alloc&) {
    throw formatError(env, kOutOfMemory);
  }
  return members;
}

}  // namespace streamscope::addon
