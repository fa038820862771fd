// The SQL of the native ingest, in one place: every statement it prepares,
// with the table and the columns each one writes, and the helpers that bind
// values and run them.
//
// An INSERT's SQL is built from its column list, so the number of `?`, the
// width of a pending timeline row and the position of a column in it
// (ingest.cc) all come from that one list. Tables and columns are those of
// profiler/store/migrations; the addon exports these specs
// (`ingestStatements`), and test/addon/ingest-schema.test.ts prepares each
// statement on a freshly migrated recording and checks that every column of
// every table the ingest writes is either written or has a stated reason
// not to be.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3_stmt;

namespace streamscope::addon {

class Db;

struct StatementSpec {
  std::string name;  // the Statements member it is prepared into
  std::string sql;
  std::string table;                 // the table it writes; empty for a lookup
  std::vector<std::string> columns;  // the columns it writes; for an INSERT in bind order
};

// The prepared statements of one ingest session, one member per spec.
struct Statements {
  // Timeline tables: their rows are written in batches, with their zones.
  sqlite3_stmt *kernels = nullptr, *memcpys = nullptr, *memsets = nullptr, *syncs = nullptr, *api_calls = nullptr, *nvtx_ranges = nullptr,
               *zones = nullptr;
  // Other rows, written as they arrive.
  sqlite3_stmt *strings = nullptr, *cuda_events = nullptr, *overheads = nullptr, *dropped_records = nullptr, *collector_errors = nullptr,
               *threads = nullptr;
  // Processes, devices, contexts and streams: upserts, and lookups of their ids.
  sqlite3_stmt *process_from_header = nullptr, *process = nullptr, *process_end = nullptr, *process_env = nullptr, *device = nullptr,
               *device_by_uuid = nullptr, *context = nullptr, *stream = nullptr, *implicit_stream = nullptr, *stream_by_cupti_id = nullptr,
               *text_of = nullptr;

  using Member = sqlite3_stmt* Statements::*;

  Statements() = default;
  Statements(const Statements&) = delete;
  Statements& operator=(const Statements&) = delete;
  ~Statements() { finalize(); }

  // Prepares every statement on `db`. A table or column the recording lacks
  // throws IngestError naming the recording.
  void prepare(const Db& db);
  void finalize();

  static const StatementSpec& spec(Member m);
  // Position of `column` among the columns `m` writes (its bind index - 1), -1 if it writes none of that name.
  static int columnIndex(Member m, const std::string& column);
};

// Every statement's spec, in a fixed order.
std::vector<StatementSpec> statementSpecs();

// Binds values to a statement by position, from 1, in the order given:
// Binder{s}(a, b, c), or in several calls. Each value is an integer, a
// string, or an optional of either; nullopt binds NULL.
class Binder {
 public:
  explicit Binder(sqlite3_stmt* s) : s_(s) {}
  template <class... V>
  Binder& operator()(const V&... values) {
    (one(values), ...);
    return *this;
  }

 private:
  void one(int64_t v);
  void one(const std::string& v);
  void one(const std::optional<int64_t>& v);
  void one(const std::optional<std::string>& v);
  void one(std::nullopt_t);

  sqlite3_stmt* s_;
  int i_ = 1;
};

// Runs a statement of `db` to completion and resets it; a failure is a
// failed write (SqliteError: "<where>: database write failed: <why>").
void step(const Db& db, sqlite3_stmt* s, const std::string& where);
// The same for a statement that returns one row: its first column.
int64_t stepReturningId(const Db& db, sqlite3_stmt* s, const std::string& where);
// The ingest's connection settings: busy timeout and pragmas (Ingest's, and
// the InsertCeiling's that measures it against SQLite alone).
void configureConnection(const Db& db);
// Runs `final_sql` (the index DDL the bulk load postponed) in a transaction
// of its own, CREATE INDEX sorting on a second thread; nothing when empty.
void runFinalSql(const Db& db, const std::vector<std::string>& final_sql);

}  // namespace streamscope::addon
