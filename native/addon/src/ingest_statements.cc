#include "ingest_statements.h"

#include <algorithm>

#include "ingest_error.h"
#include "sqlite_db.h"

namespace streamscope::addon {
namespace {

// INSERT INTO table (columns) VALUES (?, ...) [tail], from the columns as
// they would be written in SQL ("a, b, c"): the placeholders are counted
// from them, never written by hand.
StatementSpec insert(std::string name, std::string table, const std::string& column_list, std::string tail = "",
                     const std::string& verb = "INSERT") {
  std::vector<std::string> columns;
  std::string values;
  for (size_t at = 0; at < column_list.size();) {
    size_t end = column_list.find(',', at);
    if (end == std::string::npos) end = column_list.size();
    const size_t first = column_list.find_first_not_of(' ', at);
    const size_t last = column_list.find_last_not_of(' ', end - 1);
    columns.push_back(column_list.substr(first, last + 1 - first));
    values += values.empty() ? "?" : ",?";
    at = end + 1;
  }
  std::string sql = verb + " INTO " + table + " (" + column_list + ") VALUES (" + values + ")";
  if (!tail.empty()) sql += " " + tail;
  return StatementSpec{std::move(name), std::move(sql), std::move(table), std::move(columns)};
}

StatementSpec lookup(std::string name, std::string sql) { return StatementSpec{std::move(name), std::move(sql), "", {}}; }

struct Entry {
  Statements::Member member;
  StatementSpec spec;
};

const std::vector<Entry>& entries() {
  using S = Statements;
  static const std::vector<Entry> list = {
      {&S::strings, insert("strings", "strings", "value, demangled")},
      {&S::kernels, insert("kernels", "kernels",
                           "start_ns, end_ns, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z, block_x,"
                           " block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread,"
                           " launch_type, is_device_launched, graph_id, graph_node_id, cluster_x, cluster_y, cluster_z, channel_id")},
      {&S::memcpys, insert("memcpys", "memcpys",
                           "start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, copy_kind, src_kind, dst_kind,"
                           " is_async, src_device_id, dst_device_id, graph_id, channel_id")},
      {&S::memsets, insert("memsets", "memsets",
                           "start_ns, end_ns, device_id, context_id, stream_id, correlation_id, bytes, value, memory_kind, is_async,"
                           " graph_id, channel_id")},
      {&S::syncs,
       insert("syncs", "syncs", "start_ns, end_ns, pid, context_id, stream_id, sync_type, event_id, correlation_id, return_value")},
      {&S::cuda_events, insert("cuda_events", "cuda_events", "device_ns, pid, context_id, stream_id, device_id, event_id, correlation_id")},
      {&S::api_calls, insert("api_calls", "api_calls", "start_ns, end_ns, pid, tid, domain, cbid, name_id, correlation_id, return_value")},
      {&S::nvtx_ranges, insert("nvtx_ranges", "nvtx_ranges", "start_ns, end_ns, pid, tid, name_id, domain_id, payload")},
      {&S::zones, insert("zones", "zones",
                         "table_id, lane, start_ns, first_id, last_id, end_ns, rows, min_correlation, max_correlation, busy_ns,"
                         " max_dur_ns, max_gap_ns, copy_kind_rows")},
      {&S::overheads, insert("overheads", "overheads", "start_ns, end_ns, pid, overhead_kind, object_kind, object_id, correlation_id")},
      {&S::dropped_records, insert("dropped_records", "dropped_records", "pid, source, count, context_id, stream_id")},
      {&S::collector_errors, insert("collector_errors", "collector_errors", "pid, code, message")},
      {&S::process, insert("process", "processes",
                           "pid, ppid, command, executable, host, driver_version, runtime_version, cupti_version, cupti_api_version,"
                           " collector_version, origin_offset_ns",
                           "ON CONFLICT(pid) DO UPDATE SET ppid = excluded.ppid, command = excluded.command,"
                           " executable = excluded.executable, host = excluded.host, driver_version = excluded.driver_version,"
                           " runtime_version = coalesce(nullif(excluded.runtime_version, 0), processes.runtime_version),"
                           " cupti_version = excluded.cupti_version, cupti_api_version = excluded.cupti_api_version,"
                           " collector_version = excluded.collector_version, origin_offset_ns = excluded.origin_offset_ns")},
      // A stream's process gets its row from the header, before (or without) a Process record.
      {&S::process_from_header,
       insert("process_from_header", "processes", "pid, collector_version, stream_flags, origin_offset_ns, origin_wall_ns",
              "ON CONFLICT(pid) DO UPDATE SET stream_flags = excluded.stream_flags, origin_wall_ns = excluded.origin_wall_ns")},
      {&S::process_end,
       StatementSpec{"process_end", "UPDATE processes SET end_ns = ?, complete = 1 WHERE pid = ?", "processes", {"end_ns", "complete"}}},
      // The variables the collector read (ProcessEnvRecord); a process that initialised CUDA again after exec (same pid) keeps the latest.
      {&S::process_env,
       insert("process_env", "process_env", "pid, name, value", "ON CONFLICT(pid, name) DO UPDATE SET value = excluded.value")},
      {&S::device, insert("device", "devices",
                          "uuid, ordinal, name, cc_major, cc_minor, sm_count, async_engine_count, concurrent_kernels, total_memory_bytes,"
                          " pci_domain, pci_bus, pci_device, core_clock_khz, memory_clock_khz, memory_bus_width_bits, l2_cache_bytes,"
                          " max_threads_per_sm, max_shared_memory_per_sm, max_registers_per_sm, max_blocks_per_sm",
                          "ON CONFLICT(uuid) DO NOTHING")},
      {&S::device_by_uuid, lookup("device_by_uuid", "SELECT id FROM devices WHERE uuid = ?")},
      {&S::context, insert("context", "contexts", "pid, cupti_context_id, device_id, null_stream_id",
                           "ON CONFLICT(pid, cupti_context_id) DO UPDATE SET device_id = coalesce(excluded.device_id, contexts.device_id),"
                           " null_stream_id = coalesce(excluded.null_stream_id, contexts.null_stream_id) RETURNING id")},
      {&S::stream,
       insert("stream", "streams", "pid, context_id, device_id, cupti_stream_id, flags, priority, created_ns, created_by_correlation_id",
              "ON CONFLICT(context_id, cupti_stream_id) DO UPDATE SET"
              " device_id = coalesce(excluded.device_id, streams.device_id), flags = excluded.flags,"
              " priority = excluded.priority, created_ns = coalesce(excluded.created_ns, streams.created_ns),"
              " created_by_correlation_id = coalesce(excluded.created_by_correlation_id, streams.created_by_correlation_id)"
              " RETURNING id")},
      {&S::implicit_stream, insert("implicit_stream", "streams", "pid, context_id, device_id, cupti_stream_id, flags",
                                   "ON CONFLICT(context_id, cupti_stream_id) DO NOTHING")},
      {&S::stream_by_cupti_id, lookup("stream_by_cupti_id", "SELECT id FROM streams WHERE context_id = ? AND cupti_stream_id = ?")},
      {&S::threads, insert("threads", "threads", "pid, tid", "", "INSERT OR IGNORE")},
      {&S::text_of, lookup("text_of", "SELECT value FROM strings WHERE id = ?")},
  };
  return list;
}

const Entry& entryOf(Statements::Member m) {
  for (const Entry& e : entries()) {
    if (e.member == m) return e;
  }
  throw std::logic_error("streamscope ingest: a Statements member without a spec");
}

}  // namespace

void Statements::prepare(const Db& db) {
  for (const Entry& e : entries()) {
    Statement s = db.tryPrepare(e.spec.sql, SQLITE_PREPARE_PERSISTENT);
    if (!s) throw IngestError(db.path() + ": the recording's schema does not match this StreamScope (" + db.errmsg() + ")");
    this->*e.member = s.release();
  }
}

void Statements::finalize() {
  for (const Entry& e : entries()) {
    sqlite3_finalize(this->*e.member);  // a no-op for nullptr
    this->*e.member = nullptr;
  }
}

const StatementSpec& Statements::spec(Member m) { return entryOf(m).spec; }

int Statements::columnIndex(Member m, const std::string& column) {
  const std::vector<std::string>& c = spec(m).columns;
  const auto it = std::find(c.begin(), c.end(), column);
  return it == c.end() ? -1 : static_cast<int>(it - c.begin());
}

std::vector<StatementSpec> statementSpecs() {
  std::vector<StatementSpec> out;
  for (const Entry& e : entries()) out.push_back(e.spec);
  return out;
}

void Binder::one(int64_t v) { sqlite3_bind_int64(s_, i_++, v); }

void Binder::one(const std::string& v) { sqlite3_bind_text(s_, i_++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }

void Binder::one(const std::optional<int64_t>& v) {
  if (v) one(*v);
  else one(std::nullopt);
}

void Binder::one(const std::optional<std::string>& v) {
  if (v) one(*v);
  else one(std::nullopt);
}

void Binder::one(std::nullopt_t) { sqlite3_bind_null(s_, i_++); }

void step(const Db& db, sqlite3_stmt* s, const std::string& where) {
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) db.fail(where + ": database write failed: " + db.errmsg());
}

int64_t stepReturningId(const Db& db, sqlite3_stmt* s, const std::string& where) {
  const int rc = sqlite3_step(s);
  const int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_reset(s);
  if (rc != SQLITE_ROW) db.fail(where + ": database write failed: " + db.errmsg());
  return id;
}

void configureConnection(const Db& db) {
  sqlite3_busy_timeout(db.handle(), 5000);
  // synchronous=OFF: a crash of the OS may lose the last transactions, a
  // crash of this process cannot corrupt what was committed (the rollback
  // journal stays on). Measured on 4 M records: journal_mode=OFF/MEMORY
  // gained under 5%, not worth a database that a crash could corrupt.
  db.exec("PRAGMA synchronous = OFF");
  // 64 MiB: a bigger cache only costs first-touch page clearing (perf), the batch commits anyway.
  db.exec("PRAGMA cache_size = -65536");
  db.exec("PRAGMA temp_store = MEMORY");
}

void runFinalSql(const Db& db, const std::vector<std::string>& final_sql) {
  if (final_sql.empty()) return;
  db.exec("PRAGMA threads = 2");  // CREATE INDEX sorts on a second thread
  db.exec("BEGIN");
  for (const std::string& sql : final_sql) db.exec(sql);
  db.exec("COMMIT");
}

}  // namespace streamscope::addon
