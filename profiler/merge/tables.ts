// What each column of a recording is to merge: a value copied as it is, or
// a reference that must follow its row into the merged recording (a time
// gets the input's clock shift, a process its new pid, a device, context,
// stream or string the merged row's id). Every table and column of the
// schema is listed: a migration that adds one fails the merge tests until
// it says here what its values are (test/merge/tables.test.ts).
export type Role =
  /** Copied as it is (a count, a CUPTI id, a correlation id: unique within its process, which stays one process). */
  | 'keep'
  /** Nanoseconds from the recording's origin: + the input's shift. */
  | 'time'
  /** A process: its pid here (renumbered when another input has a process of the same pid). */
  | 'pid'
  /** devices.id: the merged device (one per GPU uuid). */
  | 'device'
  /** contexts.id, streams.id: + the input's offset for the table. */
  | 'context'
  | 'stream'
  /** strings.id: the merged string of the same value. */
  | 'string'
  /** cpu_ops.id (a backward operator's forward one): + the input's offset for cpu_ops, as its own rows' ids. */
  | 'cpu-op'
  /** The table's own rowid: + the input's offset for the table (one run of ids per input). */
  | 'rowid'
  /** processes.source_id: the source it was recorded in. */
  | 'source'
  /** processes.original_pid: its pid in that source when merge renumbered it. */
  | 'original-pid';

export interface TableSpec {
  /** rows: copied by one INSERT … SELECT per input with the columns' roles; special: merge.ts copies it by hand. */
  how: 'rows' | 'special';
  columns: Record<string, Role>;
}

const k = 'keep' as const;
const t = 'time' as const;

/** The columns every GPU operation table (kernels, memcpys, memsets) starts with. */
const gpuOperation = {
  id: 'rowid',
  start_ns: t,
  end_ns: t,
  device_id: 'device',
  context_id: 'context',
  stream_id: 'stream',
  correlation_id: k,
} as const;

/** In the order merge copies them: what a table refers to is there before it. */
export const MERGE_TABLES: Record<string, TableSpec> = {
  // Each input's meta goes to sources.meta; the merged recording gets meta of its own.
  meta: { how: 'special', columns: { key: k, value: k } },
  // One row per distinct value.
  strings: { how: 'special', columns: { id: k, value: k, demangled: k } },
  // One row per GPU uuid; a device without one (imported traces) stays its input's.
  devices: {
    how: 'special',
    columns: Object.fromEntries(
      [
        'id',
        'uuid',
        'ordinal',
        'name',
        'cc_major',
        'cc_minor',
        'sm_count',
        'async_engine_count',
        'concurrent_kernels',
        'total_memory_bytes',
        'pci_domain',
        'pci_bus',
        'pci_device',
        'core_clock_khz',
        'memory_clock_khz',
        'memory_bus_width_bits',
        'l2_cache_bytes',
        'max_threads_per_sm',
        'max_shared_memory_per_sm',
        'max_registers_per_sm',
        'max_blocks_per_sm',
        'pcie_generation',
        'pcie_width',
      ].map((c) => [c, k]),
    ),
  },
  // A merged input's sources (schema 9) follow it, ids and parents renumbered.
  sources: {
    how: 'special',
    columns: {
      id: k,
      parent_id: k,
      file: k,
      host: k,
      meta: k,
      clock: k,
      shift_ns: k,
      correction_ns: k,
      collectives: k,
      residual_ns: k,
      residual_max_ns: k,
    },
  },
  source_rows: { how: 'special', columns: { source_id: k, table_name: k, first_id: k, last_id: k, rows: k } },
  processes: {
    how: 'rows',
    columns: {
      pid: 'pid',
      // The parent's pid: renumbered with it when the parent is in the same input.
      ppid: 'pid',
      command: k,
      executable: k,
      host: k,
      driver_version: k,
      runtime_version: k,
      cupti_version: k,
      cupti_api_version: k,
      collector_version: k,
      stream_flags: k,
      origin_offset_ns: t,
      // The wall clock at the process's origin, ns since the epoch: absolute, as recorded.
      origin_wall_ns: k,
      end_ns: t,
      complete: k,
      rank: k,
      local_rank: k,
      world_size: k,
      rank_variable: k,
      source_id: 'source',
      original_pid: 'original-pid',
    },
  },
  threads: { how: 'rows', columns: { pid: 'pid', tid: k, name: k } },
  process_env: { how: 'rows', columns: { pid: 'pid', name: k, value: k } },
  contexts: { how: 'rows', columns: { id: 'context', pid: 'pid', cupti_context_id: k, device_id: 'device', null_stream_id: k } },
  streams: {
    how: 'rows',
    columns: {
      id: 'stream',
      pid: 'pid',
      context_id: 'context',
      device_id: 'device',
      cupti_stream_id: k,
      flags: k,
      priority: k,
      created_ns: t,
      created_by_correlation_id: k,
    },
  },
  kernels: {
    how: 'rows',
    columns: {
      ...gpuOperation,
      name_id: 'string',
      grid_x: k,
      grid_y: k,
      grid_z: k,
      block_x: k,
      block_y: k,
      block_z: k,
      registers_per_thread: k,
      static_shared_bytes: k,
      dynamic_shared_bytes: k,
      local_memory_per_thread: k,
      launch_type: k,
      is_device_launched: k,
      graph_id: k,
      graph_node_id: k,
      cluster_x: k,
      cluster_y: k,
      cluster_z: k,
      channel_id: k,
    },
  },
  memcpys: {
    how: 'rows',
    columns: {
      ...gpuOperation,
      bytes: k,
      copy_kind: k,
      src_kind: k,
      dst_kind: k,
      is_async: k,
      src_device_id: 'device',
      dst_device_id: 'device',
      graph_id: k,
      channel_id: k,
    },
  },
  memsets: {
    how: 'rows',
    columns: {
      ...gpuOperation,
      bytes: k,
      value: k,
      memory_kind: k,
      is_async: k,
      graph_id: k,
      channel_id: k,
    },
  },
  syncs: {
    how: 'rows',
    columns: {
      id: 'rowid',
      start_ns: t,
      end_ns: t,
      pid: 'pid',
      context_id: 'context',
      stream_id: 'stream',
      sync_type: k,
      event_id: k,
      correlation_id: k,
      return_value: k,
    },
  },
  cuda_events: {
    how: 'rows',
    columns: { id: 'rowid', device_ns: t, pid: 'pid', context_id: 'context', stream_id: 'stream', device_id: 'device', event_id: k, correlation_id: k },
  },
  api_calls: {
    how: 'rows',
    columns: {
      id: 'rowid',
      start_ns: t,
      end_ns: t,
      pid: 'pid',
      tid: k,
      domain: k,
      cbid: k,
      name_id: 'string',
      correlation_id: k,
      return_value: k,
    },
  },
  nvtx_ranges: { how: 'rows', columns: { id: 'rowid', start_ns: t, end_ns: t, pid: 'pid', tid: k, name_id: 'string', domain_id: 'string', payload: k } },
  // (v11) An imported PyTorch trace's operators and Python functions.
  cpu_ops: { how: 'rows', columns: { id: 'rowid', start_ns: t, end_ns: t, pid: 'pid', tid: k, kind: k, name_id: 'string', forward_id: 'cpu-op' } },
  // object_id is CUPTI's (a thread or device id in the process).
  overheads: {
    how: 'rows',
    columns: { id: 'rowid', start_ns: t, end_ns: t, pid: 'pid', overhead_kind: k, object_kind: k, object_id: k, correlation_id: k },
  },
  dropped_records: { how: 'rows', columns: { id: 'rowid', pid: 'pid', source: k, count: k, context_id: 'context', stream_id: 'stream' } },
  collector_errors: { how: 'rows', columns: { id: 'rowid', pid: 'pid', code: k, message: k } },
  // Copied from each input with its lanes, rowid ranges and times moved (merge.ts), not built again.
  zones: {
    how: 'special',
    columns: {
      table_id: k,
      lane: k,
      start_ns: t,
      first_id: k,
      last_id: k,
      end_ns: t,
      rows: k,
      min_correlation: k,
      max_correlation: k,
      busy_ns: k,
      max_dur_ns: k,
      max_gap_ns: k,
      copy_kind_rows: k,
    },
  },
};

/**
 * The tables of rows with their own rowids — the big ones (operations,
 * calls, ranges): written as pages on all cores (merge.ts, pages), in SQL
 * otherwise.
 */
export const BULK_TABLES = Object.entries(MERGE_TABLES)
  .filter(([, spec]) => spec.how === 'rows' && spec.columns.id === 'rowid')
  .map(([table]) => table);
