#include "ingest.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>

#include "demangle.h"
#include "device_inventory.h"
#include "payload_json.h"
#include "zone_tables.h"

namespace streamscope::addon {

using namespace rs;
using zone_table::threadLane;

namespace {

std::optional<int64_t> nonzero(uint64_t v) { return v ? std::optional<int64_t>(static_cast<int64_t>(v)) : std::nullopt; }

}  // namespace

Ingest::Ingest(const std::string& db_path, uint64_t origin_ns)
    : db_(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX), origin_ns_(origin_ns) {
  configureConnection(db_);
  // Only a StreamScope recording of exactly the schema this code writes.
  std::string problem;
  Statement probe = db_.tryPrepare("SELECT value FROM meta WHERE key = 'format'");
  if (!probe || sqlite3_step(probe.get()) != SQLITE_ROW ||
      std::string(reinterpret_cast<const char*>(sqlite3_column_text(probe.get(), 0))) != "streamscope-recording") {
    problem = "not a StreamScope recording";
  }
  if (problem.empty()) {
    probe = db_.tryPrepare("PRAGMA user_version");
    const int version = probe && sqlite3_step(probe.get()) == SQLITE_ROW ? sqlite3_column_int(probe.get(), 0) : -1;
    if (version != kSchemaVersion) {
      problem = "schema version " + std::to_string(version) + ", but this ingest writes version " + std::to_string(kSchemaVersion);
    }
  }
  probe.reset();
  if (!problem.empty()) throw IngestError(db_path + ": " + problem);

  st_.prepare(db_);  // a failure finalizes what was prepared (~Statements) before db_ closes
  // zones.table_id values: zone_tables.h (as SCHEMA.md and profiler/store/zone-tables.ts).
  timelineTable(kernels_, zone_table::kKernels, &Statements::kernels);
  timelineTable(memcpys_, zone_table::kMemcpys, &Statements::memcpys);
  timelineTable(memsets_, zone_table::kMemsets, &Statements::memsets);
  timelineTable(syncs_, zone_table::kSyncs, &Statements::syncs);
  timelineTable(api_calls_, zone_table::kApiCalls, &Statements::api_calls);
  timelineTable(nvtx_, zone_table::kNvtxRanges, &Statements::nvtx_ranges);
  loadExisting();
}

Ingest::~Ingest() { st_.finalize(); }

// A timeline table: its rows wait for their batch; each row has as many
// values as its insert has columns (ingest_statements.cc).
void Ingest::timelineTable(PendingTable& t, int table_id, Statements::Member insert) {
  t.table_id = table_id;
  t.insert = st_.*insert;
  t.columns = static_cast<int>(Statements::spec(insert).columns.size());
  t.copy_kind_column = Statements::columnIndex(insert, "copy_kind");
  t.text_column = Statements::columnIndex(insert, "payload");
  pending_.push_back(&t);
}

void Ingest::loadExisting() {
  // A recording ingested in several sessions keeps its ids consistent.
  // What cannot be read is left out, as a lookup that finds nothing.
  auto rows = [&](const char* sql, auto&& row) {
    Statement s = db_.tryPrepare(sql);
    while (s && sqlite3_step(s.get()) == SQLITE_ROW) row(s.get());
  };
  rows("SELECT id, value FROM strings", [&](sqlite3_stmt* s) {
    strings_.emplace(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), sqlite3_column_bytes(s, 1)),
                     sqlite3_column_int64(s, 0));
  });
  rows("SELECT id, uuid FROM devices WHERE uuid IS NOT NULL", [&](sqlite3_stmt* s) {
    devices_by_uuid_.emplace(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), sqlite3_column_int64(s, 0));
  });
  rows("SELECT id, pid, cupti_context_id, device_id, null_stream_id FROM contexts", [&](sqlite3_stmt* s) {
    contexts_[{static_cast<uint32_t>(sqlite3_column_int64(s, 1)), static_cast<uint32_t>(sqlite3_column_int64(s, 2))}] =
        KnownContext{sqlite3_column_int64(s, 0), sqlite3_column_type(s, 3) != SQLITE_NULL,
                     sqlite3_column_type(s, 4) != SQLITE_NULL ? static_cast<uint32_t>(sqlite3_column_int64(s, 4)) : kNone,
                     sqlite3_column_type(s, 3) != SQLITE_NULL ? std::optional<int64_t>(sqlite3_column_int64(s, 3)) : std::nullopt};
  });
  rows("SELECT id, context_id, cupti_stream_id FROM streams", [&](sqlite3_stmt* s) {
    streams_[{sqlite3_column_int64(s, 1), static_cast<uint32_t>(sqlite3_column_int64(s, 2))}] = sqlite3_column_int64(s, 0);
  });
}

FileProgress Ingest::ingestFile(const std::string& path, bool final) {
  if (!db_.isOpen()) throw IngestError(db_.path() + ": ingest already finished");
  FileState& f = files_[path];
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IngestError(path + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  fstat(fd, &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < f.last_size) {
    throw IngestError(path + ": the file shrank from " + std::to_string(f.last_size) + " to " + std::to_string(size) +
                      " bytes between reads (replaced or rewritten while recording?)");
  }
  f.last_size = size;
  f.progress.truncated.reset();

  if (!f.header_read) {
    if (size < sizeof(FileHeader)) {
      // Too short for a header: still being written, or foreign data.
      char head[sizeof kMagic] = {};
      const ssize_t n = size > 0 ? pread(fd, head, std::min<uint64_t>(size, sizeof head), 0) : 0;
      if (n > 0 && !magicMatches(head, static_cast<size_t>(n))) throw IngestError(path + ": not a StreamScope record stream (bad magic)");
      if (final) f.progress.truncated = Truncation{0, sizeof(FileHeader) - size};
      return f.progress;
    }
    FileHeader h;
    if (pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) throw IngestError(path + ": cannot read the header");
    checkHeader(h, path);
    f.header = h;
    f.header_read = true;
    f.shift = static_cast<int64_t>(h.origin_ns - origin_ns_);
    f.progress.pid = h.pid;
    f.progress.bytes_consumed = h.header_bytes;
    f.strings.assign(1, 0);
    Binder{st_.process_from_header}(int64_t{h.pid}, int64_t{h.collector_version}, int64_t{h.flags}, f.shift,
                                    std::to_string(h.origin_wall_ns));
    step(db_, st_.process_from_header, path);
  }

  // The new bytes are mapped, not read: a pread copy of every byte cost ~10%
  // of the ingest (perf, 4 M records). The stream only ever grows (checked
  // above), so the mapped range stays valid while we read it.
  const uint64_t from = f.progress.bytes_consumed;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t map_at = from / page * page;
  const size_t map_len = static_cast<size_t>(size - map_at);
  void* map = size > from ? mmap(nullptr, map_len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(map_at)) : nullptr;
  if (map == MAP_FAILED) throw IngestError(path + ": cannot map the file: " + std::strerror(errno));
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() {
      if (p) munmap(p, n);
    }
  } unmap{map, map_len};
  if (map) madvise(map, map_len, MADV_SEQUENTIAL);
  // A failed write (disk full, I/O error: a SqliteError) undoes the whole
  // call, and the caches and this file's state are made to match what is
  // stored again.
  const FileState before = f;
  auto undo = [&] {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    f = before;
    resetCaches();
  };
  db_.exec("BEGIN");
  try {
    if (map) {
      // bytes_consumed advances record by record, so after an error it
      // points at the bad record; a partial record at the end waits for the
      // next call (or is reported below).
      RecordReader reader(path, static_cast<const uint8_t*>(map) + (from - map_at), static_cast<size_t>(size - from), from);
      for (Record rec{}; reader.next(&rec);) {
        store(f, path, rec);
        f.progress.bytes_consumed = reader.offset();
      }
    }
  } catch (const SqliteError&) {
    undo();
    throw;
  } catch (const IngestError&) {
    // Malformed input: keep every valid record before it, never lose what was recorded.
    try {
      writePending(path);
      db_.exec("COMMIT");
    } catch (const SqliteError&) {
      undo();
    }
    throw;
  }
  try {
    writePending(path);
    db_.exec("COMMIT");
  } catch (const SqliteError&) {
    undo();
    throw;
  }
  if (final && f.progress.bytes_consumed < size) {
    const uint64_t at = f.progress.bytes_consumed;
    f.progress.truncated = Truncation{at, missingBytes(fd, at, size)};
  }
  return f.progress;
}

// The record being stored, and what its rows need besides its bytes: its
// file's state, the stream's path (errors and failed writes name it) and
// its process.
struct Ingest::Incoming {
  FileState& f;
  const std::string& path;
  const Record& record;
  uint32_t pid;

  // The record's fixed part (record_format.h), copied out of the stream.
  template <class R>
  R fixed() const {
    return load<R>(record.bytes);
  }
  // A time of the record on the recording's clock. Relative times stay
  // within 2^53 ns of the origin (SCHEMA.md "Time": exact as JS numbers; 104
  // days): one beyond comes only from a corrupt record, and the arithmetic
  // on it (this shift, the zones' durations and gaps) would overflow int64,
  // so the record is malformed input like any other.
  int64_t at(int64_t t) const {
    constexpr int64_t kLimit = int64_t{1} << 53;
    int64_t v;
    if (__builtin_add_overflow(t, f.shift, &v) || v <= -kLimit || v >= kLimit) {
      throw IngestError(path + ": corrupt record at byte " + std::to_string(record.offset) + ": " + record.name + " time " +
                        std::to_string(t) + " ns is more than 2^53 ns from the recording's origin");
    }
    return v;
  }
};

// One record → its rows, one kind per line (as libkineto's
// handleCuptiActivity): each kind's storing is a function of its own below.
// Timeline rows wait for their batch (pend); the rest is written at once.
void Ingest::store(FileState& f, const std::string& path, const Record& record) {
  FileProgress& p = f.progress;
  if (!record.name) {
    ++p.records;
    ++p.unknown_records;
    return;  // a newer kind: skipped by size, as the format promises
  }
  const Incoming in{f, path, record, f.header.pid};
  switch (static_cast<Kind>(record.kind)) {
    case Kind::String: storeString(in); break;
    case Kind::Process: storeProcess(in); break;
    case Kind::Device: storeDevice(in); break;
    case Kind::Context: storeContext(in); break;
    case Kind::Stream: storeStream(in); break;
    case Kind::Kernel: storeKernel(in); break;
    case Kind::Memcpy: storeMemcpy(in); break;
    case Kind::Memset: storeMemset(in); break;
    case Kind::Synchronization: storeSynchronization(in); break;
    case Kind::CudaEvent: storeCudaEvent(in); break;
    case Kind::ApiCall: storeApiCall(in); break;
    case Kind::Marker: storeMarker(in); break;
    case Kind::MarkerPayload: storeMarkerPayload(in); break;
    case Kind::Overhead: storeOverhead(in); break;
    case Kind::Dropped: storeDropped(in); break;
    case Kind::Error: storeError(in); break;
    case Kind::Flush: storeFlush(in); break;
    case Kind::ProcessEnv: storeProcessEnv(in); break;
    case Kind::End: storeEnd(in); break;
  }
  ++p.records;
  if (record.kind < FileProgress::kKinds) ++p.records_of_kind[record.kind];
  else ++p.unknown_records;  // a named kind beyond the array (none yet: kinds end at 19)
  p.last_kind = record.name;
}

// ---- each kind's rows ------------------------------------------------------

void Ingest::storeString(const Incoming& in) {
  FileState& f = in.f;
  const auto r = in.fixed<StringRecord>();
  const int64_t id = internGlobal(std::string(stringText(in.record, in.path)));
  // The encoder gives ids out dense from 1 (record_encoder.h), so a table indexed by id is the lookup. An id far
  // beyond the String records so far comes from a corrupt record (id 0xFFFFFFFE asked for a 32 GiB table; 0xFFFFFFFF
  // wrapped the size to 0 and wrote past it): it goes to a map, and the table stays within 8 bytes per record read.
  if (r.id <= 2 * ++f.string_records + 1024) {
    if (f.strings.size() <= r.id) f.strings.resize(size_t{r.id} + 1, 0);
    f.strings[r.id] = id;
  } else {
    f.sparse_strings[r.id] = id;
  }
}

void Ingest::storeProcess(const Incoming& in) {
  const auto r = in.fixed<ProcessRecord>();
  auto text = [&](uint32_t sid) { return sid ? textOf(stringId(in.f, sid)) : std::string(); };
  Binder{st_.process}(int64_t{in.pid}, int64_t{r.ppid}, text(r.command_sid), text(r.executable_sid), text(r.hostname_sid),
                      int64_t{r.driver_version}, int64_t{r.runtime_version}, int64_t{r.cupti_version}, int64_t{r.cupti_api_version},
                      int64_t{in.f.header.collector_version}, in.f.shift);
  step(db_, st_.process, in.path);
}

void Ingest::storeDevice(const Incoming& in) {
  const auto r = in.fixed<DeviceRecord>();
  static const uint8_t kZero[16] = {};
  // An all-zero UUID says "unknown": never merge such devices across processes.
  const std::string uuid = std::memcmp(r.uuid, kZero, 16) == 0
                               ? "unknown-pid" + std::to_string(in.pid) + "-device" + std::to_string(r.device_id)
                               : formatUuid(r.uuid);
  auto it = devices_by_uuid_.find(uuid);
  int64_t id;
  if (it != devices_by_uuid_.end()) {
    id = it->second;
  } else {
    const std::string name_text = r.name_sid ? textOf(stringId(in.f, r.name_sid)) : std::string();
    Binder{st_.device}(uuid, int64_t{r.device_id}, name_text, int64_t{r.cc_major}, int64_t{r.cc_minor}, int64_t{r.sm_count},
                       int64_t{r.async_engine_count}, int64_t{r.concurrent_kernels}, static_cast<int64_t>(r.total_memory_bytes),
                       int64_t{r.pci_domain}, int64_t{r.pci_bus}, int64_t{r.pci_device}, int64_t{r.core_clock_khz},
                       int64_t{r.memory_clock_khz}, int64_t{r.memory_bus_width_bits}, int64_t{r.l2_cache_bytes},
                       int64_t{r.max_threads_per_sm}, int64_t{r.max_shared_memory_per_sm}, int64_t{r.max_registers_per_sm},
                       int64_t{r.max_blocks_per_sm});
    step(db_, st_.device, in.path);
    Binder{st_.device_by_uuid}(uuid);
    id = stepReturningId(db_, st_.device_by_uuid, in.path);
    devices_by_uuid_.emplace(uuid, id);
  }
  in.f.devices[r.device_id] = id;
}

void Ingest::storeContext(const Incoming& in) {
  const auto r = in.fixed<ContextRecord>();
  const auto key = std::make_pair(in.pid, r.context_id);
  const auto device = deviceId(in.f, r.device_id);
  Binder{st_.context}(int64_t{in.pid}, int64_t{r.context_id}, device, int64_t{r.null_stream_id});
  contexts_[key] = KnownContext{stepReturningId(db_, st_.context, in.path), device.has_value(), r.null_stream_id, device};
}

void Ingest::storeStream(const Incoming& in) {
  const auto r = in.fixed<StreamRecord>();
  // kNone: the stream lives on its context's device (CUPTI's stream records).
  std::optional<int64_t> device = r.device_id == kNone ? std::nullopt : deviceId(in.f, r.device_id);
  const int64_t ctx = contextId(in.f, r.context_id, device);
  if (!device) device = contexts_[std::make_pair(in.pid, r.context_id)].device;
  Binder{st_.stream}(int64_t{in.pid}, ctx, device, int64_t{r.stream_id}, int64_t{r.flags}, int64_t{r.priority},
                     r.created_ns == INT64_MIN ? std::nullopt : std::optional<int64_t>(in.at(r.created_ns)), nonzero(r.correlation_id));
  streams_[{ctx, r.stream_id}] = stepReturningId(db_, st_.stream, in.path);
  last_stream_.reset();
}

void Ingest::storeKernel(const Incoming& in) {
  const auto r = in.fixed<KernelRecord>();
  const int64_t device = deviceForOp(in.f, r.device_id);
  const int64_t ctx = contextId(in.f, r.context_id, device);
  const int64_t stream = streamId(in.f, ctx, r.stream_id, device);
  pend(kernels_, stream, in.at(r.start_ns), in.at(r.end_ns), r.correlation_id)(
      in.at(r.start_ns), in.at(r.end_ns), device, ctx, stream, int64_t{r.correlation_id}, stringId(in.f, r.name_sid), int64_t{r.grid_x},
      int64_t{r.grid_y}, int64_t{r.grid_z}, int64_t{r.block_x}, int64_t{r.block_y}, int64_t{r.block_z}, int64_t{r.registers_per_thread},
      int64_t{r.static_shared_bytes}, int64_t{r.dynamic_shared_bytes}, int64_t{r.local_memory_per_thread}, int64_t{r.launch_type},
      int64_t{r.is_device_launched}, nonzero(r.graph_id), nonzero(r.graph_node_id), int64_t{r.cluster_x}, int64_t{r.cluster_y},
      int64_t{r.cluster_z}, int64_t{r.channel_id});
}

void Ingest::storeMemcpy(const Incoming& in) {
  const auto r = in.fixed<MemcpyRecord>();
  const int64_t device = deviceForOp(in.f, r.device_id);
  const int64_t ctx = contextId(in.f, r.context_id, device);
  const int64_t stream = streamId(in.f, ctx, r.stream_id, device);
  pend(memcpys_, stream, in.at(r.start_ns), in.at(r.end_ns), r.correlation_id)(
      in.at(r.start_ns), in.at(r.end_ns), device, ctx, stream, int64_t{r.correlation_id}, static_cast<int64_t>(r.bytes),
      int64_t{r.copy_kind}, int64_t{r.src_kind}, int64_t{r.dst_kind}, int64_t{r.flags & 1},
      r.src_device_id == kNone ? std::nullopt : std::optional<int64_t>(deviceForOp(in.f, r.src_device_id)),
      r.dst_device_id == kNone ? std::nullopt : std::optional<int64_t>(deviceForOp(in.f, r.dst_device_id)), nonzero(r.graph_id),
      int64_t{r.channel_id});
}

void Ingest::storeMemset(const Incoming& in) {
  const auto r = in.fixed<MemsetRecord>();
  const int64_t device = deviceForOp(in.f, r.device_id);
  const int64_t ctx = contextId(in.f, r.context_id, device);
  const int64_t stream = streamId(in.f, ctx, r.stream_id, device);
  pend(memsets_, stream, in.at(r.start_ns), in.at(r.end_ns), r.correlation_id)(
      in.at(r.start_ns), in.at(r.end_ns), device, ctx, stream, int64_t{r.correlation_id}, static_cast<int64_t>(r.bytes), int64_t{r.value},
      int64_t{r.memory_kind}, int64_t{r.flags & 1}, nonzero(r.graph_id), int64_t{r.channel_id});
}

void Ingest::storeSynchronization(const Incoming& in) {
  const auto r = in.fixed<SynchronizationRecord>();
  const auto ctx = contextIdOrNull(in.f, r.context_id);
  const auto stream = streamIdOrNull(in.f, ctx, r.stream_id, std::nullopt);
  // Lane 0: synchronizations of no stream (context / event synchronize).
  pend(syncs_, stream.value_or(0), in.at(r.start_ns), in.at(r.end_ns), r.correlation_id)(
      in.at(r.start_ns), in.at(r.end_ns), int64_t{in.pid}, ctx, stream, int64_t{r.type},
      r.event_id == kNone ? std::nullopt : std::optional<int64_t>(r.event_id), int64_t{r.correlation_id}, int64_t{r.return_value});
}

void Ingest::storeCudaEvent(const Incoming& in) {
  const auto r = in.fixed<CudaEventRecord>();
  const auto device = deviceId(in.f, r.device_id);
  const auto ctx = contextIdOrNull(in.f, r.context_id);
  const auto stream = streamIdOrNull(in.f, ctx, r.stream_id, device);
  Binder{st_.cuda_events}(r.device_ns == INT64_MIN ? std::nullopt : std::optional<int64_t>(in.at(r.device_ns)), int64_t{in.pid}, ctx,
                          stream, device, int64_t{r.event_id}, int64_t{r.correlation_id});
  step(db_, st_.cuda_events, in.path);
}

void Ingest::storeApiCall(const Incoming& in) {
  const auto r = in.fixed<ApiCallRecord>();
  thread(in.pid, r.thread_id);
  pend(api_calls_, threadLane(in.pid, r.thread_id), in.at(r.start_ns), in.at(r.end_ns), r.correlation_id)(
      in.at(r.start_ns), in.at(r.end_ns), int64_t{in.pid}, int64_t{r.thread_id}, int64_t{r.domain}, int64_t{r.cbid},
      stringId(in.f, r.name_sid), int64_t{r.correlation_id}, int64_t{r.return_value});
}

// A range's Start opens it (with the payload that came before it, if one
// did), its End stores it; an instant marker is stored at once, end NULL.
void Ingest::storeMarker(const Incoming& in) {
  FileState& f = in.f;
  const auto r = in.fixed<MarkerRecord>();
  if (r.thread_id != 0) thread(in.pid, r.thread_id);  // 0: a process-scoped marker
  const uint32_t name = r.name_sid ? static_cast<uint32_t>(stringId(f, r.name_sid)) : 0;
  const uint32_t domain = r.domain_sid ? static_cast<uint32_t>(stringId(f, r.domain_sid)) : 0;
  if (r.flags & kMarkerStart) {
    f.open_markers[r.id] = OpenMarker{in.at(r.timestamp_ns), r.thread_id, name, domain, takeWaitingPayload(f, r.id)};
  } else if (r.flags & kMarkerEnd) {
    auto it = f.open_markers.find(r.id);
    if (it != f.open_markers.end()) {
      pendRange(in.pid, it->second.start_ns, in.at(r.timestamp_ns), it->second.tid, it->second.name_id, it->second.domain_id,
                std::move(it->second.payload));
      f.open_markers.erase(it);
    }
  } else {
    pendRange(in.pid, in.at(r.timestamp_ns), std::nullopt, r.thread_id, name, domain, takeWaitingPayload(f, r.id));
  }
}

void Ingest::storeMarkerPayload(const Incoming& in) {
  FileState& f = in.f;
  const auto r = in.fixed<MarkerPayloadRecord>();
  std::string json = payloadJson(payloadFields(in.record, in.path), [&](uint32_t sid) { return textOf(stringId(f, sid)); });
  // With its range's Start (the usual order), or before it: it waits.
  auto it = f.open_markers.find(r.marker_id);
  if (it != f.open_markers.end()) {
    it->second.payload = std::move(json);
  } else {
    if (f.waiting_payloads.size() >= kWaitingPayloads) f.waiting_payloads.clear();
    f.waiting_payloads[r.marker_id] = std::move(json);
  }
}

void Ingest::storeOverhead(const Incoming& in) {
  const auto r = in.fixed<OverheadRecord>();
  Binder{st_.overheads}(in.at(r.start_ns), in.at(r.end_ns), int64_t{in.pid}, int64_t{r.overhead_kind}, int64_t{r.object_kind},
                        int64_t{r.object_id}, nonzero(r.correlation_id));
  step(db_, st_.overheads, in.path);
}

void Ingest::storeDropped(const Incoming& in) {
  const auto r = in.fixed<DroppedRecord>();
  const auto ctx = r.context_id == kNone ? std::nullopt : contextIdOrNull(in.f, r.context_id);
  const auto stream = streamIdOrNull(in.f, ctx, r.stream_id, std::nullopt);
  Binder{st_.dropped_records}(int64_t{in.pid}, int64_t{r.source}, static_cast<int64_t>(r.count), ctx, stream);
  step(db_, st_.dropped_records, in.path);
  in.f.progress.dropped += r.count;
}

void Ingest::storeError(const Incoming& in) {
  const auto r = in.fixed<ErrorRecord>();
  const std::string message = r.message_sid ? textOf(stringId(in.f, r.message_sid)) : std::string();
  Binder{st_.collector_errors}(int64_t{in.pid}, int64_t{r.code}, message);
  step(db_, st_.collector_errors, in.path);
  in.f.progress.errors.push_back(CollectorError{r.code, message});
}

void Ingest::storeFlush(const Incoming& in) {
  const auto r = in.fixed<FlushRecord>();
  in.f.progress.last_flush = FlushInfo{r.reason, r.signal, in.at(r.at_ns)};
}

void Ingest::storeProcessEnv(const Incoming& in) {
  const auto r = in.fixed<ProcessEnvRecord>();
  // Rank, local rank and world size are read from these rows when the
  // recording is finished (profiler/store/ranks.ts): one definition of
  // which launcher's variables count, shared with `record -o %r`.
  Binder{st_.process_env}(int64_t{in.pid}, textOf(stringId(in.f, r.name_sid)), textOf(stringId(in.f, r.value_sid)));
  step(db_, st_.process_env, in.path);
}

void Ingest::storeEnd(const Incoming& in) {
  const auto r = in.fixed<EndRecord>();
  Binder{st_.process_end}(in.at(r.end_ns), int64_t{in.pid});
  step(db_, st_.process_end, in.path);
  in.f.progress.complete = true;
}

// An NVTX range (or instant marker: `end` none) of process `pid`, pending
// for its batch; `name_id` 0: no name (the empty string's id).
void Ingest::pendRange(uint32_t pid, int64_t start, std::optional<int64_t> end, uint32_t tid, uint32_t name_id, uint32_t domain_id,
                       std::string payload) {
  pend(nvtx_, threadLane(pid, tid), start, end.value_or(start), kNull)(
      start, end, int64_t{pid}, int64_t{tid}, int64_t{name_id ? name_id : internGlobal("")},
      domain_id ? std::optional<int64_t>(domain_id) : std::nullopt,
      payload.empty() ? std::nullopt : std::optional<std::string>(std::move(payload)));
}

std::map<std::string, uint64_t> FileProgress::recordsByKind() const {
  std::map<std::string, uint64_t> out;
  for (size_t k = 0; k < kKinds; k++) {
    if (records_of_kind[k] == 0) continue;
    const char* name = kindName(static_cast<uint16_t>(k));
    out[name ? name : "unknown"] += records_of_kind[k];
  }
  if (unknown_records) out["unknown"] += unknown_records;
  return out;
}

int64_t Ingest::internGlobal(const std::string& value) {
  auto it = strings_.find(value);
  if (it != strings_.end()) return it->second;
  // Kernel names arrive mangled; the readable form is stored beside them
  // (schema 7) so that every reader, the renderer included, has it without
  // a demangler of its own. Once per distinct string.
  Binder{st_.strings}(value, demangle(value));
  step(db_, st_.strings, db_.path());
  const int64_t id = sqlite3_last_insert_rowid(db_.handle());
  strings_.emplace(value, id);
  return id;
}

int64_t Ingest::stringId(FileState& f, uint32_t local) {
  if (local == 0) return internGlobal("");  // "no string"
  if (local < f.strings.size() && f.strings[local] != 0) return f.strings[local];
  if (!f.sparse_strings.empty()) {
    auto it = f.sparse_strings.find(local);
    if (it != f.sparse_strings.end()) return it->second;
  }
  // A reference to a string never defined: keep the row, name it honestly.
  return internGlobal("<undefined string " + std::to_string(local) + ">");
}

std::optional<int64_t> Ingest::deviceId(FileState& f, uint32_t cupti_device) {
  auto it = f.devices.find(cupti_device);
  if (it != f.devices.end()) return it->second;
  return std::nullopt;
}

int64_t Ingest::contextId(FileState& f, uint32_t cupti_context, std::optional<int64_t> device) {
  const auto key = std::make_pair(f.header.pid, cupti_context);
  auto it = contexts_.find(key);
  // Hot path (every operation): only touch the database for a new context
  // or when its device becomes known.
  if (it != contexts_.end() && (it->second.has_device || !device)) return it->second.id;
  Binder{st_.context}(int64_t{f.header.pid}, int64_t{cupti_context}, device, std::nullopt);
  const int64_t id = stepReturningId(db_, st_.context, db_.path());
  const uint32_t null_stream = it != contexts_.end() ? it->second.null_stream : kNone;
  contexts_[key] = KnownContext{id, device.has_value(), null_stream, device};
  return id;
}

int64_t Ingest::deviceForOp(FileState& f, uint32_t cupti_device) {
  if (auto id = deviceId(f, cupti_device)) return *id;
  // An operation on a device the stream never described (its Device record
  // was lost): a placeholder row keeps the operation, honestly labelled.
  const std::string key = "unknown-pid" + std::to_string(f.header.pid) + "-device" + std::to_string(cupti_device);
  auto it = devices_by_uuid_.find(key);
  int64_t id;
  if (it != devices_by_uuid_.end()) {
    id = it->second;
  } else {
    Binder b{st_.device};
    b(key, int64_t{cupti_device}, std::string("unknown device"));
    for (int i = 0; i < 17; i++) b(std::nullopt);
    step(db_, st_.device, db_.path());
    Binder{st_.device_by_uuid}(key);
    id = stepReturningId(db_, st_.device_by_uuid, db_.path());
    devices_by_uuid_.emplace(key, id);
  }
  f.devices[cupti_device] = id;
  return id;
}

// The payload that came before marker `marker_id`, if one did (and no longer waiting).
std::string Ingest::takeWaitingPayload(FileState& f, uint32_t marker_id) {
  if (f.waiting_payloads.empty()) return std::string();  // the usual case: nothing to look up
  auto it = f.waiting_payloads.find(marker_id);
  if (it == f.waiting_payloads.end()) return std::string();
  std::string json = std::move(it->second);
  f.waiting_payloads.erase(it);
  return json;
}

std::string Ingest::textOf(int64_t string_id) {
  sqlite3_bind_int64(st_.text_of, 1, string_id);
  std::string out;
  if (sqlite3_step(st_.text_of) == SQLITE_ROW) {
    out.assign(reinterpret_cast<const char*>(sqlite3_column_text(st_.text_of, 0)), sqlite3_column_bytes(st_.text_of, 0));
  }
  sqlite3_reset(st_.text_of);
  return out;
}

std::optional<int64_t> Ingest::contextIdOrNull(FileState& f, uint32_t cupti_context) {
  if (cupti_context == 0 || cupti_context == kNone) return std::nullopt;
  return contextId(f, cupti_context, std::nullopt);
}

int64_t Ingest::streamId(FileState& f, int64_t context, uint32_t cupti_stream, std::optional<int64_t> device) {
  const auto key = std::make_pair(context, cupti_stream);
  if (last_stream_ && last_stream_->first == key) return last_stream_->second;
  auto it = streams_.find(key);
  if (it != streams_.end()) {
    last_stream_.emplace(key, it->second);
    return it->second;
  }
  // Seen only through its operations: created before tracing, or a
  // per-thread default stream. Flagged implicit — and legacy default when it
  // is its context's NULL stream.
  uint32_t flags = kStreamImplicit;
  for (const auto& [key, ctx] : contexts_) {
    if (ctx.id == context && ctx.null_stream == cupti_stream) flags |= kStreamLegacyDefault;
  }
  Binder{st_.implicit_stream}(int64_t{f.header.pid}, context, device, int64_t{cupti_stream}, int64_t{flags});
  step(db_, st_.implicit_stream, db_.path());
  Binder{st_.stream_by_cupti_id}(context, int64_t{cupti_stream});
  const int64_t id = stepReturningId(db_, st_.stream_by_cupti_id, db_.path());
  streams_[key] = id;
  return id;
}

std::optional<int64_t> Ingest::streamIdOrNull(FileState& f, std::optional<int64_t> context, uint32_t cupti_stream,
                                              std::optional<int64_t> device) {
  if (!context || cupti_stream == kNone) return std::nullopt;
  return streamId(f, *context, cupti_stream, device);
}

void Ingest::resetCaches() {
  dropPending();
  strings_.clear();
  devices_by_uuid_.clear();
  contexts_.clear();
  streams_.clear();
  threads_.clear();
  last_stream_.reset();
  last_thread_.reset();
  loadExisting();
  for (auto& [path, f] : files_) {
    // Per-file maps point at rows that may be gone; they are rebuilt from
    // the ids that survive in the database where possible.
    (void)path;
    for (auto it = f.devices.begin(); it != f.devices.end();) {
      bool known = false;
      for (const auto& [uuid, id] : devices_by_uuid_) known = known || id == it->second;
      it = known ? std::next(it) : f.devices.erase(it);
    }
  }
}

void Ingest::thread(uint32_t pid, uint32_t tid) {
  const uint64_t key = (static_cast<uint64_t>(pid) << 32) | tid;
  if (key == last_thread_) return;  // the usual case: the same thread as the record before
  last_thread_ = key;
  if (!threads_.insert(key).second) return;
  Binder{st_.threads}(int64_t{pid}, int64_t{tid});
  step(db_, st_.threads, db_.path());
}

void Ingest::finish(const std::vector<std::string>& final_sql) {
  if (!db_.isOpen()) return;
  db_.exec("BEGIN");
  for (auto& [path, f] : files_) {
    for (auto& [id, m] : f.open_markers)
      pendRange(f.header.pid, m.start_ns, std::nullopt, m.tid, m.name_id, m.domain_id, std::move(m.payload));
    f.open_markers.clear();
    f.waiting_payloads.clear();
  }
  writePending(db_.path());
  db_.exec("COMMIT");
  runFinalSql(db_, final_sql);
  st_.finalize();
  db_.close();
  // No fsync: synchronous=OFF protects committed data against a crash of
  // this process (the rollback journal), not against a crash of the OS; an
  // fsync of a 300 MB recording costs seconds on slow disks, and the
  // collector's raw streams are what a lost recording can be rebuilt from.
}

PendingTable::Appender Ingest::pend(PendingTable& t, int64_t lane, int64_t start, int64_t end, int64_t correlation) {
  if (t.keys.size() >= kBatchRows) writePending(t, db_.path());
  return t.append(lane, start, end, correlation);
}

void Ingest::writePending(const std::string& where) {
  for (PendingTable* t : pending_) writePending(*t, where);
}

void Ingest::dropPending() {
  for (PendingTable* t : pending_) t->clear();
}

// A batch of one timeline table: its rows grouped by lane and sorted by
// start, inserted in that order, and their zones after them.
void Ingest::writePending(PendingTable& t, const std::string& where) {
  if (t.keys.empty()) return;
  if (!t.consistent()) {
    throw std::logic_error("streamscope ingest: pending row width does not match table " + std::to_string(t.table_id));
  }
  t.sortByLane();
  auto emit = [&](const Zone& z, const std::optional<std::string>& copy_kind_rows) {
    Binder{st_.zones}(int64_t{t.table_id}, z.lane, z.start, z.first, z.last, z.end, z.rows,
                      z.min_corr == kNull ? std::nullopt : std::optional<int64_t>(z.min_corr),
                      z.max_corr == kNull ? std::nullopt : std::optional<int64_t>(z.max_corr), z.busy, z.max_dur, z.max_gap,
                      copy_kind_rows);
    step(db_, st_.zones, where);
  };
  ZoneBuilder zones(t.copy_kind_column >= 0);
  for (const PendingTable::Key& k : t.keys) {
    const int64_t* v = t.valuesOf(k);
    for (int c = 0; c < t.columns; c++) {
      if (v[c] == kNull && t.isNull(k, c)) {
        sqlite3_bind_null(t.insert, c + 1);
      } else if (c == t.text_column) {
        const std::string& text = t.texts[static_cast<size_t>(v[c])];
        sqlite3_bind_text(t.insert, c + 1, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      } else {
        sqlite3_bind_int64(t.insert, c + 1, v[c]);
      }
    }
    step(db_, t.insert, where);
    // Rowids are consecutive within a batch (nothing else inserts into the
    // table meanwhile), so a zone is a [first, last] range of one lane.
    zones.add(k, sqlite3_last_insert_rowid(db_.handle()), t.copy_kind_column >= 0 ? v[t.copy_kind_column] : 0, emit);
  }
  zones.finish(emit);
  t.clear();
}

}  // namespace streamscope::addon
