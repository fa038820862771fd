// Record-stream files → a recording's SQLite tables, natively.
//
// Why native: from JS, better-sqlite3 inserts top out around 0.8 M rows/s
// on the 2-core development machine (one prepared statement, one
// transaction, multi-row VALUES); the SQLite C API with prepared statements
// reaches ~1.7 M rows/s on the same rows — the difference between meeting
// the 1.5 M records/s ingest target and missing it by half.
//
// The database is created (schema, migrations) by TypeScript; this only
// inserts into the tables of profiler/store/migrations.
// Not thread-safe: one call at a time (the binding enforces it).
//
// This file and ingest.cc are the orchestration: files, transactions, the
// ids of devices, contexts, streams and strings, and one record kind → its
// rows. The units it is built from: record_decoding (the byte stream),
// ingest_statements (the SQL) and zone_builder (timeline batches and zones).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ingest_error.h"
#include "ingest_statements.h"
#include "record_decoding.h"
#include "record_format.h"
#include "sqlite_db.h"
#include "zone_builder.h"

namespace streamscope::addon {

// The schema version this ingest writes (profiler/store/migrations).
inline constexpr int kSchemaVersion = 11;

struct FlushInfo {
  uint32_t reason = 0, signal = 0;
  int64_t at_ns = 0;
};

struct Truncation {
  uint64_t at_byte = 0, missing_bytes = 0;
};

struct CollectorError {
  uint32_t code = 0;
  std::string message;
};

struct FileProgress {
  uint64_t bytes_consumed = 0;
  uint64_t records = 0;
  // Records per kind, by the kind's number (rs::Kind; a kind this reader does
  // not know counts as "unknown"): counted per record, so an array, named
  // only when asked (recordsByKind). A map keyed by name cost ~4% of the ingest (perf).
  static constexpr size_t kKinds = 64;
  std::array<uint64_t, kKinds> records_of_kind{};
  uint64_t unknown_records = 0;
  bool complete = false;
  uint32_t pid = 0;
  std::optional<FlushInfo> last_flush;
  std::vector<CollectorError> errors;
  uint64_t dropped = 0;
  std::optional<Truncation> truncated;
  const char* last_kind = nullptr;  // kind of the last record stored ("Flush", "End", ...; a static name), nullptr: none yet

  // Records per kind name ("Kernel": n, "unknown": n), the kinds seen only.
  std::map<std::string, uint64_t> recordsByKind() const;
};

class Ingest {
 public:
  // A timeline table's batch: its rows are written, with their zones, when
  // this many are pending (InsertCeiling batches the same way).
  static constexpr size_t kBatchRows = 131072;

  Ingest(const std::string& db_path, uint64_t origin_ns);
  ~Ingest();
  Ingest(const Ingest&) = delete;
  Ingest& operator=(const Ingest&) = delete;

  // Reads `path` from where the last call stopped to its current end,
  // stores every complete record in one transaction, and leaves a trailing
  // partial record for the next call. With `final`, the writer is done: a
  // partial record is reported as truncation instead.
  FileProgress ingestFile(const std::string& path, bool final);
  // Stores NVTX ranges never closed (end NULL), runs `final_sql` (the
  // index DDL the bulk load postponed: built here while the freshly written
  // pages are still in this connection's cache) and closes the database.
  void finish(const std::vector<std::string>& final_sql = {});

 private:
  struct OpenMarker {
    int64_t start_ns;
    uint32_t tid, name_id, domain_id;
    std::string payload;  // nvtx_ranges.payload's JSON; empty: none
  };
  // Payloads whose marker has not come yet: CUPTI does not promise the
  // order of a MARKER_DATA record and its MARKER. A marker claims its
  // payload as it comes, so only payloads whose marker never comes pile
  // up; at this many they are dropped.
  static constexpr size_t kWaitingPayloads = 4096;
  struct FileState {
    bool header_read = false;
    uint64_t last_size = 0;
    rs::FileHeader header{};
    int64_t shift = 0;                                     // file origin - recording origin
    std::vector<int64_t> strings;                          // local string id → strings.id (0 = none)
    std::unordered_map<uint32_t, int64_t> sparse_strings;  // the same for ids far beyond the String records so far
    uint64_t string_records = 0;                           // String records read
    std::unordered_map<uint32_t, int64_t> devices;         // CUDA ordinal in the process → devices.id
    std::unordered_map<uint32_t, OpenMarker> open_markers;
    std::unordered_map<uint32_t, std::string> waiting_payloads;  // marker id → JSON
    FileProgress progress;
  };

  void loadExisting();

  // One record → its rows: a dispatch on its kind to the kind's own storing.
  void store(FileState& f, const std::string& path, const Record& rec);
  struct Incoming;  // the record being stored (ingest.cc)
  void storeString(const Incoming& in);
  void storeProcess(const Incoming& in);
  void storeDevice(const Incoming& in);
  void storeContext(const Incoming& in);
  void storeStream(const Incoming& in);
  void storeKernel(const Incoming& in);
  void storeMemcpy(const Incoming& in);
  void storeMemset(const Incoming& in);
  void storeSynchronization(const Incoming& in);
  void storeCudaEvent(const Incoming& in);
  void storeApiCall(const Incoming& in);
  void storeMarker(const Incoming& in);
  void storeMarkerPayload(const Incoming& in);
  void storeOverhead(const Incoming& in);
  void storeDropped(const Incoming& in);
  void storeError(const Incoming& in);
  void storeFlush(const Incoming& in);
  void storeProcessEnv(const Incoming& in);
  void storeEnd(const Incoming& in);
  void pendRange(uint32_t pid, int64_t start, std::optional<int64_t> end, uint32_t tid, uint32_t name_id, uint32_t domain_id,
                 std::string payload);

  int64_t stringId(FileState& f, uint32_t local);
  int64_t internGlobal(const std::string& value);
  std::optional<int64_t> deviceId(FileState& f, uint32_t cupti_device);
  int64_t deviceForOp(FileState& f, uint32_t cupti_device);
  std::string textOf(int64_t string_id);
  std::string takeWaitingPayload(FileState& f, uint32_t marker_id);
  int64_t contextId(FileState& f, uint32_t cupti_context, std::optional<int64_t> device);
  std::optional<int64_t> contextIdOrNull(FileState& f, uint32_t cupti_context);
  int64_t streamId(FileState& f, int64_t context, uint32_t cupti_stream, std::optional<int64_t> device);
  std::optional<int64_t> streamIdOrNull(FileState& f, std::optional<int64_t> context, uint32_t cupti_stream, std::optional<int64_t> device);
  void resetCaches();
  void thread(uint32_t pid, uint32_t tid);

  // Timeline rows (kernels, copies, memsets, syncs, API calls, NVTX ranges)
  // wait in a PendingTable until kBatchRows of a table are pending, then
  // the batch is written with its zones (zone_builder.h).
  PendingTable::Appender pend(PendingTable& t, int64_t lane, int64_t start, int64_t end, int64_t correlation);
  void timelineTable(PendingTable& t, int table_id, Statements::Member insert);
  void writePending(const std::string& where);
  void writePending(PendingTable& t, const std::string& where);
  void dropPending();
  std::vector<PendingTable*> pending_;
  PendingTable kernels_, memcpys_, memsets_, syncs_, api_calls_, nvtx_;

  Db db_;  // closed by finish(); declared before st_, so that its statements are finalized before it closes
  uint64_t origin_ns_;
  Statements st_;
  std::map<std::string, FileState> files_;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<std::string, int64_t> devices_by_uuid_;
  struct KnownContext {
    int64_t id;
    bool has_device;
    uint32_t null_stream = rs::kNone;  // CUPTI id of its legacy default stream, if known
    std::optional<int64_t> device;     // devices.id, if known
  };
  std::map<std::pair<uint32_t, uint32_t>, KnownContext> contexts_;  // (pid, CUPTI context) → contexts row
  std::map<std::pair<int64_t, uint32_t>, int64_t> streams_;         // (contexts.id, CUPTI stream) → streams.id
  std::unordered_set<uint64_t> threads_;                            // pid << 32 | tid
  // The last stream and thread looked up: consecutive records are mostly on the same ones (a hash or tree lookup per
  // record was ~2% of the ingest, perf). Reset with the maps.
  std::optional<std::pair<std::pair<int64_t, uint32_t>, int64_t>> last_stream_;
  std::optional<uint64_t> last_thread_;
};

}  // namespace streamscope::addon
