// The ingest's ceiling, for `npm run bench -- --only ingest` (issue 16): the
// rows a finished recording holds, read into memory first, then inserted
// into a fresh recording through SQLite's C API with the ingest's own
// prepared INSERTs (ingest_statements.cc: same tables, columns and SQL), its
// pragmas, its transactions (the rows in one, the index DDL in another, as
// ingestFile and finish run them), its batches (Ingest::kBatchRows rows of a table, the
// batch's zone rows among them where the ingest writes them) — and nothing
// else: no record decoding, no zone building, no sorting, no interning, no
// id lookups. What SQLite alone takes to store what the ingest stores.
//
// Bench only: `new InsertCeiling(source)` loads the rows, `insert(target,
// { finalSql })` stores them synchronously and returns its timings.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace streamscope::addon {

// One table's rows, as the ingest holds them before writing: a value per
// cell, row after row, with its type (text: an index into `texts`).
struct CeilingTable {
  std::string name;
  std::string sql;  // the INSERT
  int columns = 0;
  int table_id = 0;  // zones.table_id for a timeline table, 0 otherwise
  size_t rows = 0;
  std::vector<int64_t> values;
  std::vector<uint8_t> types;  // SQLITE_INTEGER, SQLITE_FLOAT (bits in values), SQLITE_TEXT, SQLITE_NULL
  std::vector<std::string> texts;
};

struct CeilingTimings {
  uint64_t rows = 0;
  double rows_seconds = 0;   // open, pragmas, prepare, BEGIN, every row, COMMIT
  double index_seconds = 0;  // the final SQL (the indexes the bulk load postponed), as Ingest::finish runs it
};

class InsertCeiling {
 public:
  // Reads every row the ingest writes from `source` (a finished recording).
  explicit InsertCeiling(const std::string& source);
  // Stores them in `target` (a fresh recording, its indexes dropped for the load), then runs `final_sql`.
  CeilingTimings insert(const std::string& target, const std::vector<std::string>& final_sql) const;
  uint64_t rows() const;

 private:
  std::vector<CeilingTable> small_;     // tables written as records arrive (strings, processes, streams, …)
  std::vector<CeilingTable> timeline_;  // kernels, memcpys, memsets, syncs, api_calls, nvtx_ranges, in the ingest's order
  CeilingTable zones_;
};

// Registers class InsertCeiling on `exports`.
void initInsertCeiling(Napi::Env env, Napi::Object exports);

}  // namespace streamscope::addon
