// Schema version 1: the tables of a StreamScope recording.
//
// Conventions (documented for users in profiler/store/SCHEMA.md):
//  * Every time column (*_ns) is INTEGER nanoseconds relative to the
//    recording origin, meta 'origin_ns' (an exact decimal string of the
//    CUPTI timestamp). Relative values stay far below 2^53, so they are exact
//    as JS numbers.
//  * Enum columns store fixed integers that never change meaning. copy_kind,
//    src_kind/dst_kind/memory_kind and sync_type reuse CUPTI's numbering
//    (as the Nsight Systems export does); StreamScope's own enums are listed
//    in SCHEMA.md.
//  * CUPTI context, stream and correlation ids are unique only within one
//    process. Rows get recording-wide ids (contexts.id, streams.id); the
//    CUPTI ids are kept for display (streams.cupti_stream_id) and for joining
//    API calls to GPU operations within a process (correlation_id + pid).

export const version = 1;

export const sql = /* sql */ `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);

CREATE TABLE processes (
  pid               INTEGER PRIMARY KEY,
  ppid              INTEGER,
  command           TEXT,
  executable        TEXT,
  host              TEXT,
  driver_version    INTEGER,
  runtime_version   INTEGER,
  cupti_version     INTEGER,
  cupti_api_version INTEGER,
  collector_version INTEGER,
  stream_flags      INTEGER NOT NULL DEFAULT 0, -- record stream header flags: 1 = bench floor mode (activity discarded)
  origin_offset_ns  INTEGER NOT NULL DEFAULT 0, -- this process's stream origin minus the recording origin
  origin_wall_ns    TEXT,                       -- wall clock at this process's stream origin (exact decimal ns since the epoch)
  end_ns            INTEGER,                    -- NULL if the process's stream has no End record
  complete          INTEGER NOT NULL DEFAULT 0  -- 1 once its End record was ingested
);

CREATE TABLE threads (
  pid  INTEGER NOT NULL,
  tid  INTEGER NOT NULL,
  name TEXT,
  PRIMARY KEY (pid, tid)
) WITHOUT ROWID;

CREATE TABLE devices (
  id                       INTEGER PRIMARY KEY,  -- recording-wide
  uuid                     TEXT UNIQUE,          -- 'GPU-xxxxxxxx-xxxx-...' as nvidia-smi prints it
  ordinal                  INTEGER,              -- CUDA ordinal in the first process that used it
  name                     TEXT,
  cc_major                 INTEGER,
  cc_minor                 INTEGER,
  sm_count                 INTEGER,
  async_engine_count       INTEGER,
  concurrent_kernels       INTEGER,
  total_memory_bytes       INTEGER,
  pci_domain               INTEGER,
  pci_bus                  INTEGER,
  pci_device               INTEGER,
  core_clock_khz           INTEGER,
  memory_clock_khz         INTEGER,
  memory_bus_width_bits    INTEGER,
  l2_cache_bytes           INTEGER,
  max_threads_per_sm       INTEGER,
  max_shared_memory_per_sm INTEGER,
  max_registers_per_sm     INTEGER,
  max_blocks_per_sm        INTEGER
);

CREATE TABLE contexts (
  id               INTEGER PRIMARY KEY,
  pid              INTEGER NOT NULL,
  cupti_context_id INTEGER NOT NULL,
  device_id        INTEGER REFERENCES devices(id),
  null_stream_id   INTEGER,  -- CUPTI id of this context's legacy default stream
  UNIQUE (pid, cupti_context_id)
);

CREATE TABLE streams (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  context_id      INTEGER NOT NULL REFERENCES contexts(id),
  device_id       INTEGER REFERENCES devices(id),
  cupti_stream_id INTEGER NOT NULL,
  flags           INTEGER NOT NULL DEFAULT 0, -- 1 legacy default, 2 non-blocking, 4 per-thread default, 8 implicit
  priority        INTEGER,
  created_ns      INTEGER,
  UNIQUE (context_id, cupti_stream_id)
);

CREATE TABLE kernels (
  id                      INTEGER PRIMARY KEY,
  start_ns                INTEGER NOT NULL,
  end_ns                  INTEGER NOT NULL,
  device_id               INTEGER NOT NULL,
  context_id              INTEGER NOT NULL,
  stream_id               INTEGER NOT NULL,
  correlation_id          INTEGER NOT NULL,
  name_id                 INTEGER NOT NULL REFERENCES strings(id),
  grid_x                  INTEGER NOT NULL,
  grid_y                  INTEGER NOT NULL,
  grid_z                  INTEGER NOT NULL,
  block_x                 INTEGER NOT NULL,
  block_y                 INTEGER NOT NULL,
  block_z                 INTEGER NOT NULL,
  registers_per_thread    INTEGER NOT NULL,
  static_shared_bytes     INTEGER NOT NULL,
  dynamic_shared_bytes    INTEGER NOT NULL,
  local_memory_per_thread INTEGER NOT NULL,
  launch_type             INTEGER NOT NULL,
  is_device_launched      INTEGER NOT NULL DEFAULT 0,
  graph_id                INTEGER,          -- NULL unless launched from a CUDA graph
  graph_node_id           INTEGER,
  cluster_x               INTEGER,
  cluster_y               INTEGER,
  cluster_z               INTEGER,
  channel_id              INTEGER
);

CREATE TABLE memcpys (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device_id      INTEGER NOT NULL,
  context_id     INTEGER NOT NULL,
  stream_id      INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  copy_kind      INTEGER NOT NULL, -- CUPTI: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP
  src_kind       INTEGER NOT NULL, -- CUPTI: 1 pageable, 2 pinned, 3 device, 4 array, 5 managed, 6 device static, 7 managed static
  dst_kind       INTEGER NOT NULL,
  is_async       INTEGER NOT NULL,
  src_device_id  INTEGER,
  dst_device_id  INTEGER,
  graph_id       INTEGER,
  channel_id     INTEGER
);

CREATE TABLE memsets (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device_id      INTEGER NOT NULL,
  context_id     INTEGER NOT NULL,
  stream_id      INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  value          INTEGER NOT NULL,
  memory_kind    INTEGER NOT NULL,
  is_async       INTEGER NOT NULL,
  graph_id       INTEGER,
  channel_id     INTEGER
);

CREATE TABLE syncs (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  pid            INTEGER NOT NULL,
  context_id     INTEGER,
  stream_id      INTEGER,          -- NULL unless a stream is involved
  sync_type      INTEGER NOT NULL, -- CUPTI: 1 event synchronize, 2 stream wait event, 3 stream synchronize, 4 context synchronize
  event_id       INTEGER,
  correlation_id INTEGER NOT NULL,
  return_value   INTEGER NOT NULL
);

CREATE TABLE cuda_events (
  id             INTEGER PRIMARY KEY,
  device_ns      INTEGER,          -- when the GPU passed the record point; NULL if unknown
  pid            INTEGER NOT NULL,
  context_id     INTEGER,
  stream_id      INTEGER,
  device_id      INTEGER,
  event_id       INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL
);

CREATE TABLE api_calls (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  pid            INTEGER NOT NULL,
  tid            INTEGER NOT NULL,
  domain         INTEGER NOT NULL, -- 1 runtime, 2 driver
  cbid           INTEGER NOT NULL, -- CUPTI callback id within the domain
  name_id        INTEGER NOT NULL REFERENCES strings(id),
  correlation_id INTEGER NOT NULL,
  return_value   INTEGER NOT NULL
);

CREATE TABLE nvtx_ranges (
  id        INTEGER PRIMARY KEY,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER,               -- NULL: instantaneous marker, or a range never closed
  pid       INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  name_id   INTEGER NOT NULL REFERENCES strings(id),
  domain_id INTEGER REFERENCES strings(id)
);

CREATE TABLE overheads (
  id            INTEGER PRIMARY KEY,
  start_ns      INTEGER NOT NULL,
  end_ns        INTEGER NOT NULL,
  pid           INTEGER NOT NULL,
  overhead_kind INTEGER NOT NULL, -- CUpti_ActivityOverheadKind
  object_kind   INTEGER NOT NULL,
  object_id     INTEGER NOT NULL,
  correlation_id INTEGER
);

CREATE TABLE dropped_records (
  id         INTEGER PRIMARY KEY,
  pid        INTEGER NOT NULL,
  source     INTEGER NOT NULL, -- 1 CUPTI, 2 buffer pool cap (count = refused requests), 3 writer, 4 incomplete records
  count      INTEGER NOT NULL,
  context_id INTEGER,         -- contexts.id, NULL if not per context
  stream_id  INTEGER          -- streams.id, NULL if not per stream
);

CREATE TABLE collector_errors (
  id      INTEGER PRIMARY KEY,
  pid     INTEGER NOT NULL,
  code    INTEGER NOT NULL,
  message TEXT NOT NULL
);

-- Range queries by stream and time (timeline rows), by correlation id
-- (API call <-> GPU operation), by thread and time (API and NVTX rows).
CREATE INDEX kernels_stream_start ON kernels (stream_id, start_ns);
CREATE INDEX kernels_correlation ON kernels (correlation_id);
CREATE INDEX memcpys_stream_start ON memcpys (stream_id, start_ns);
CREATE INDEX memcpys_correlation ON memcpys (correlation_id);
CREATE INDEX memsets_stream_start ON memsets (stream_id, start_ns);
CREATE INDEX memsets_correlation ON memsets (correlation_id);
CREATE INDEX syncs_start ON syncs (pid, start_ns);
CREATE INDEX syncs_correlation ON syncs (correlation_id);
CREATE INDEX api_calls_thread_start ON api_calls (pid, tid, start_ns);
CREATE INDEX api_calls_correlation ON api_calls (correlation_id);
CREATE INDEX nvtx_ranges_thread_start ON nvtx_ranges (pid, tid, start_ns);
CREATE INDEX cuda_events_correlation ON cuda_events (correlation_id);
`;
