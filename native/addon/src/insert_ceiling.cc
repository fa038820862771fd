#include "insert_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "ingest.h"
#include "ingest_statements.h"
#include "js_error.h"
#include "sqlite_db.h"
#include "zone_tables.h"

namespace streamscope::addon {
namespace {

std::string joined(const std::vector<std::string>& columns) {
  std::string out;
  for (const std::string& c : columns) out += (out.empty() ? "" : ", ") + c;
  return out;
}

// Every row of `select` (run on `src`) into `t`, cell by cell as it was stored.
void load(const Db& src, const std::string& select, CeilingTable& t, std::vector<int64_t>* first_column = nullptr) {
  Statement s = src.prepare(select);
  const int skip = first_column ? 1 : 0;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    if (first_column) first_column->push_back(sqlite3_column_int64(s.get(), 0));
    for (int c = skip; c < skip + t.columns; c++) {
      const int type = sqlite3_column_type(s.get(), c);
      t.types.push_back(static_cast<uint8_t>(type));
      if (type == SQLITE_INTEGER) {
        t.values.push_back(sqlite3_column_int64(s.get(), c));
      } else if (type == SQLITE_FLOAT) {
        const double d = sqlite3_column_double(s.get(), c);
        int64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        t.values.push_back(bits);
      } else if (type == SQLITE_NULL) {
        t.values.push_back(0);
      } else {  // text (the ingest writes no blobs)
        t.values.push_back(static_cast<int64_t>(t.texts.size()));
        t.texts.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), c)), sqlite3_column_bytes(s.get(), c));
      }
    }
    ++t.rows;
  }
}

// Binds row `r` of `t` to `s` and steps it with the ingest's step: what
// Ingest::writePending does for each row, less the zones. A failure names
// the target's path, as the ingest's do.
inline void insertRow(const Db& db, sqlite3_stmt* s, const CeilingTable& t, size_t r) {
  const size_t at = r * static_cast<size_t>(t.columns);
  for (int c = 0; c < t.columns; c++) {
    const int64_t v = t.values[at + c];
    switch (t.types[at + c]) {
      case SQLITE_INTEGER: sqlite3_bind_int64(s, c + 1, v); break;
      case SQLITE_FLOAT: {
        double d;
        std::memcpy(&d, &v, sizeof d);
        sqlite3_bind_double(s, c + 1, d);
        break;
      }
      case SQLITE_NULL: sqlite3_bind_null(s, c + 1); break;
      default: {
        const std::string& text = t.texts[static_cast<size_t>(v)];
        sqlite3_bind_text(s, c + 1, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      }
    }
  }
  step(db, s, db.path());
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

InsertCeiling::InsertCeiling(const std::string& source) {
  Db src(source, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  // The rows of the tables the ingest writes as records arrive: every column, as stored.
  for (const char* name : {"strings", "processes", "process_env", "threads", "devices", "contexts", "streams", "cuda_events", "overheads",
                           "dropped_records", "collector_errors"}) {
    CeilingTable t;
    t.name = name;
    std::vector<std::string> columns;
    {
      Statement s = src.prepare(std::string("SELECT * FROM ") + name + " LIMIT 0");
      for (int c = 0; c < sqlite3_column_count(s.get()); c++) columns.push_back(sqlite3_column_name(s.get(), c));
    }
    t.columns = static_cast<int>(columns.size());
    std::string values;
    for (size_t c = 0; c < columns.size(); c++) values += c ? ",?" : "?";
    t.sql = "INSERT INTO " + t.name + " (" + joined(columns) + ") VALUES (" + values + ")";
    load(src, "SELECT " + joined(columns) + " FROM " + t.name, t);
    small_.push_back(std::move(t));
  }
  // The timeline tables and zones: the ingest's own INSERTs, their columns read in rowid order.
  using S = Statements;
  const std::tuple<S::Member, int> timeline[] = {
      {&S::kernels, zone_table::kKernels}, {&S::memcpys, zone_table::kMemcpys},    {&S::memsets, zone_table::kMemsets},
      {&S::syncs, zone_table::kSyncs},     {&S::api_calls, zone_table::kApiCalls}, {&S::nvtx_ranges, zone_table::kNvtxRanges},
  };
  for (const auto& [member, table_id] : timeline) {
    const StatementSpec& spec = Statements::spec(member);
    CeilingTable t;
    t.name = spec.table;
    t.sql = spec.sql;
    t.columns = static_cast<int>(spec.columns.size());
    t.table_id = table_id;
    load(src, "SELECT " + joined(spec.columns) + " FROM " + t.name + " ORDER BY id", t);
    timeline_.push_back(std::move(t));
  }
  const StatementSpec& zones = Statements::spec(&S::zones);
  zones_.name = zones.table;
  zones_.sql = zones.sql;
  zones_.columns = static_cast<int>(zones.columns.size());
  if (zones.columns[0] != "table_id" || zones.columns[3] != "first_id" || zones.columns[4] != "last_id") {
    throw std::logic_error("InsertCeiling: the zones INSERT's columns moved");
  }
  load(src, "SELECT " + joined(zones.columns) + " FROM zones ORDER BY table_id, first_id", zones_);
}

uint64_t InsertCeiling::rows() const {
  uint64_t n = zones_.rows;
  for (const auto& t : small_) n += t.rows;
  for (const auto& t : timeline_) n += t.rows;
  return n;
}

CeilingTimings InsertCeiling::insert(const std::string& target, const std::vector<std::string>& final_sql) const {
  const auto t0 = std::chrono::steady_clock::now();
  Db db(target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  configureConnection(db);  // Ingest::Ingest's settings
  std::vector<Statement> small, timeline;
  for (const auto& t : small_) small.emplace_back(db.prepare(t.sql, SQLITE_PREPARE_PERSISTENT));
  for (const auto& t : timeline_) timeline.emplace_back(db.prepare(t.sql, SQLITE_PREPARE_PERSISTENT));
  Statement zones = db.prepare(zones_.sql, SQLITE_PREPARE_PERSISTENT);

  // The ingest writes a table's batch when kBatchRows of its rows are pending,
  // so batches of different tables alternate as their records arrive; the
  // rest at the end of the call, in table order. Here each full batch goes
  // where its table's rows would fill it if they arrived evenly through the
  // stream (the share of the table's rows up to its end).
  struct Batch {
    double at;
    size_t table, first, end;
  };
  std::vector<Batch> batches;
  for (size_t ti = 0; ti < timeline_.size(); ti++) {
    const size_t n = timeline_[ti].rows;
    for (size_t first = 0; first < n; first += Ingest::kBatchRows) {
      const size_t end = std::min(n, first + Ingest::kBatchRows);
      batches.push_back(Batch{end - first == Ingest::kBatchRows ? static_cast<double>(end) / n : 2.0, ti, first, end});
    }
  }
  std::stable_sort(batches.begin(), batches.end(), [](const Batch& a, const Batch& b) { return a.at < b.at; });
  // Each table's zones, by first row: a zone's rows are a run of one batch (table rows are ids 1…n of a fresh recording).
  std::vector<std::pair<size_t, size_t>> zones_of(timeline_.size(), {0, 0});
  for (size_t z = 0, ti = 0; ti < timeline_.size(); ti++) {
    while (z < zones_.rows && zones_.values[z * zones_.columns] < timeline_[ti].table_id) ++z;
    zones_of[ti].first = z;
    while (z < zones_.rows && zones_.values[z * zones_.columns] == timeline_[ti].table_id) ++z;
    zones_of[ti].second = z;
  }

  CeilingTimings out;
  db.exec("BEGIN");
  for (size_t ti = 0; ti < small_.size(); ti++) {
    for (size_t r = 0; r < small_[ti].rows; r++) insertRow(db, small[ti].get(), small_[ti], r);
    out.rows += small_[ti].rows;
  }
  for (const Batch& b : batches) {
    const CeilingTable& t = timeline_[b.table];
    auto& [z, z_end] = zones_of[b.table];
    for (size_t r = b.first; r < b.end; r++) {
      insertRow(db, timeline[b.table].get(), t, r);
      // A zone's row goes in after its last row, as the ingest writes it.
      const int64_t id = static_cast<int64_t>(r) + 1;
      while (z < z_end && zones_.values[z * zones_.columns + 4] == id) {
        insertRow(db, zones.get(), zones_, z++);
        ++out.rows;
      }
    }
    out.rows += b.end - b.first;
  }
  db.exec("COMMIT");
  out.rows_seconds = secondsSince(t0);
  const auto t1 = std::chrono::steady_clock::now();
  runFinalSql(db, final_sql);  // as Ingest::finish runs it
  small.clear();
  timeline.clear();
  zones.reset();
  out.index_seconds = secondsSince(t1);
  return out;
}

namespace {

class InsertCeilingWrap : public Napi::ObjectWrap<InsertCeilingWrap> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "InsertCeiling",
                       {InstanceMethod("insert", &InsertCeilingWrap::insert), InstanceAccessor("rows", &InsertCeilingWrap::rows, nullptr)});
  }

  explicit InsertCeilingWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<InsertCeilingWrap>(info) {
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "new InsertCeiling(source: string)");
    withJsErrors(info.Env(), [&] { ceiling_ = std::make_unique<InsertCeiling>(info[0].As<Napi::String>().Utf8Value()); });
  }

 private:
  // insert(target, { finalSql }) → { rows, rowsSeconds, indexSeconds }, synchronously.
  Napi::Value insert(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "insert(target: string, { finalSql?: string[] })");
    std::vector<std::string> sql;
    if (info.Length() > 1 && info[1].IsObject()) {
      Napi::Value v = info[1].As<Napi::Object>().Get("finalSql");
      if (v.IsArray()) {
        Napi::Array a = v.As<Napi::Array>();
        for (uint32_t i = 0; i < a.Length(); i++) sql.push_back(a.Get(i).As<Napi::String>().Utf8Value());
      }
    }
    const CeilingTimings t = withJsErrors(env, [&] { return ceiling_->insert(info[0].As<Napi::String>().Utf8Value(), sql); });
    Napi::Object o = Napi::Object::New(env);
    o.Set("rows", Napi::Number::New(env, static_cast<double>(t.rows)));
    o.Set("rowsSeconds", Napi::Number::New(env, t.rows_seconds));
    o.Set("indexSeconds", Napi::Number::New(env, t.index_seconds));
    return o;
  }

  Napi::Value rows(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(ceiling_->rows())); }

  std::unique_ptr<InsertCeiling> ceiling_;
};

}  // namespace

void initInsertCeiling(Napi::Env env, Napi::Object exports) { exports.Set("InsertCeiling", InsertCeilingWrap::define(env)); }

}  // namespace streamscope::addon
