// PyTorch profiler / Kineto Chrome-trace JSON → StreamScope recording.
//
// Kineto writes GPU work as complete events ("ph": "X") with cat `kernel`,
// `gpu_memcpy`, `gpu_memset` and args {device, context, stream,
// correlation, ...}; CUDA calls as cat `cuda_runtime` / `cuda_driver` with
// args {cbid, correlation}; PyTorch's operators (`cpu_op`: aten::mm, …) and
// Python functions (`python_function`) as CPU operations (cpu_ops, schema
// 11), the program's own annotations (`user_annotation`: record_function,
// ProfilerStep#N; `cuda_profiler_range`, `nvtx`) as host ranges, like NVTX:
// only those are what `--range` and the iterations mean. With
// enable_cuda_sync_events, `cuda_sync` events are CUPTI's synchronization
// records (syncs: stream and event waits, stream, event and context
// synchronizes) and name the cudaEventRecord each wait waited for where
// Kineto found it (cuda_events), as does a newer Kineto's `cuda_event`:
// the rows the collector writes, so the dependency view and the what-if
// replay see the same waits (kineto-dependencies.ts ties the waits whose
// record the trace does not name). `ac2g` flows only repeat the correlation
// ids, so they are not needed; `fwdbwd` flows tie a backward operator to
// its forward one (cpu_ops.forward_id). Times are microseconds (fractions
// keep the nanoseconds).
//
// The events themselves are read and mapped natively
// (native/addon/src/trace_import.cc: the scan, simdjson, the rows and their
// zones on a second thread, and the only definition of the conventions above): a 1 GiB trace
// took 35 s here in JavaScript, 6.4 s there. What follows the rows stays here: device facts from
// deviceProperties, the command, meta, zones and indexes (RecordingWriter).
import { idField, intField, MAX_EVENT_BYTES, nativeTraceError, parseEventBytes, textField, TraceFormatError } from './json-events.ts';
import { COPY_KIND_NAMES } from '../cuda/cupti-kinds.ts';
import { RecordingWriter } from './recording-writer.ts';
import { bindForwardOps, inferEventRecords, type EventRecordInference } from './kineto-dependencies.ts';
import { NO_SYNC_EVENTS_NOTE } from '../contract/dependencies.ts';
import { importKinetoTrace, type KinetoTraceOptions, type KinetoTraceRows } from '../native/addon.ts';
import { DISTRIBUTED_INFO } from '../contract/ranks.ts';
import { RecordingFileError } from '../store/recording-error.ts';

export interface ImportResult {
  format: string;
  counts: RecordingWriter['counts'];
  skipped: number;
}

/** CUPTI memcpy kinds by Kineto's name token ("Memcpy HtoD (Pinned -> Device)"). */
const COPY_KIND: Record<string, number> = Object.fromEntries(Object.entries(COPY_KIND_NAMES).map(([k, v]) => [v, Number(k)]));
/** CUPTI memory kinds by Kineto's names. */
const MEMORY_KIND: Record<string, number> = { Pageable: 1, Pinned: 2, Device: 3, Array: 4, Managed: 5, 'Device Static': 6, 'Managed Static': 7 };
/** Host events kept as ranges on their thread: the program's own annotations. */
const HOST_RANGES = ['user_annotation', 'cuda_profiler_range', 'nvtx'];
/** Host events that are CPU operations, by cpu_ops.kind: the framework's operators and Python's functions. */
const CPU_OPS: Record<string, number> = { cpu_op: 1, python_function: 2 };

/** How the trace is read: every event through JSON.parse (the tests), the most bytes one event may have (json-events.ts). */
interface ReadOptions {
  parseAllInJs?: boolean;
  maxEventBytes?: number;
}

/** The native reader's options; `output` null: stop at the first timed event. */
export function kinetoTraceOptions(output: string | null, read: ReadOptions = {}): KinetoTraceOptions {
  return {
    output,
    copyKinds: COPY_KIND,
    memoryKinds: MEMORY_KIND,
    hostRanges: HOST_RANGES,
    cpuOps: CPU_OPS,
    parse: parseEventBytes,
    parseAllInJs: read.parseAllInJs ?? false,
    maxEventBytes: read.maxEventBytes ?? MAX_EVENT_BYTES,
  };
}

function readRows(file: string, output: string | null, read: ReadOptions): KinetoTraceRows {
  try {
    return importKinetoTrace(file, kinetoTraceOptions(output, read));
  } catch (err) {
    throw nativeTraceError(file, err) ?? err;
  }
}

/**
 * `parseAllInJs`: every event parsed by JSON.parse and read from the object
 * it returns, none by simdjson (the path an event simdjson refuses takes):
 * for the tests, which hold both paths to the same recording; `maxEventBytes`
 * lower than MAX_EVENT_BYTES, for the tests too.
 */
export async function importKineto(file: string, out: string, opts: { overwrite?: boolean } & ReadOptions = {}): Promise<ImportResult> {
  // The writer comes first (the native rows go into its file), but its
  // refusals — the output exists, or cannot be created — were said at the
  // first timed event, after whatever is wrong with the trace before it: a
  // first pass that stops there keeps that order.
  let writer: RecordingWriter;
  try {
    writer = new RecordingWriter(out, { overwrite: opts.overwrite, originNs: 0, inputs: [file] });
  } catch (err) {
    if (!(err instanceof RecordingFileError)) throw err;
    const probe = readRows(file, null, opts);
    if (!probe.any) throw new TraceFormatError(file, 'no trace events');
    if (!probe.timed) throw new TraceFormatError(file, 'no timed events (ph "X") to import');
    throw err;
  }
  try {
    const rows = writer.handOver((partial) => readRows(file, partial, opts));
    if (!rows.any) throw new TraceFormatError(file, 'no trace events');
    if (!rows.timed) throw new TraceFormatError(file, 'no timed events (ph "X") to import');
    const processNames = new Map(rows.processNames);
    const { hostPid, gpuPid } = rows;
    const header = { members: rows.members };
    // GPU facts from deviceProperties.
    const devices = header.members.deviceProperties;
    for (const d of (Array.isArray(devices) ? devices : []) as Record<string, unknown>[]) {
      const id = d && typeof d === 'object' ? idField(d.id) : null;
      if (id === null) continue; // not a device we can name
      writer.device(id, {
        name: textField(d.name),
        ccMajor: num(d.computeMajor),
        ccMinor: num(d.computeMinor),
        smCount: num(d.numSms),
        totalMemoryBytes: num(d.totalGlobalMem),
        maxThreadsPerSm: num(d.maxThreadsPerMultiprocessor),
        maxRegistersPerSm: num(d.regsPerMultiprocessor),
        maxSharedMemoryPerSm: num(d.sharedMemPerMultiprocessor),
      });
    }
    if (gpuPid === UNKNOWN_PID && hostPid !== null) writer.reassignPid(UNKNOWN_PID, hostPid);
    if (hostPid !== null && processNames.has(hostPid)) writer.setCommand(hostPid, processNames.get(hostPid)!);
    // A rank of a distributed job: PyTorch's profiler writes the process group's rank and size (distributedInfo), so the
    // traces of one job's ranks open, merge and report as that job's (without it they were unrelated recordings).
    const rank = distributedRank(header.members.distributedInfo);
    if (rank && hostPid !== null) writer.setRank(hostPid, rank.rank, rank.worldSize, DISTRIBUTED_INFO);
    // The passes that need every row (with the pids as final): waits tied to records, backward operators to forward ones.
    const records = inferEventRecords(writer.db);
    writer.counts.cudaEvents += records.inferred;
    bindForwardOps(writer.db, rows.flows);
    const notes: string[] = [];
    const { kernels, memcpys, memsets, syncs } = writer.counts;
    if (syncs === 0 && kernels + memcpys + memsets > 0) notes.push(NO_SYNC_EVENTS_NOTE);
    if (records.inferred + records.unresolved > 0) notes.push(recordNote(records));
    writer.finish({
      imported_from: 'kineto',
      imported_file: file,
      cupti_version: textField(header.members.cupti_version),
      driver_version: version(header.members.cuda_driver_version),
      runtime_version: version(header.members.cuda_runtime_version),
      command: hostPid !== null ? (processNames.get(hostPid) ?? null) : null,
      // Synchronization events the trace held (cuda_sync): 0 is a trace taken without enable_cuda_sync_events.
      sync_events: syncs,
      notes: notes.length ? JSON.stringify(notes) : null,
    });
    return { format: 'kineto', counts: writer.counts, skipped: rows.skipped };
  } catch (err) {
    writer.abandon();
    throw err;
  }
}

/** What the recording's notes say of stream waits whose event record the trace did not name (kineto-dependencies.ts). */
function recordNote(r: EventRecordInference): string {
  const open = r.inferred + r.unresolved;
  const parts = [
    `the trace does not say which cudaEventRecord (and stream) ${open} of ${r.waits} stream wait${r.waits === 1 ? '' : 's'} waited for ` +
      '(Kineto wrote wait_on_cuda_event_record_corr_id -1)',
  ];
  if (r.inferred) parts.push(`${r.inferred} tied, each to the record call before it on its thread and the only stream that call could have captured work of`);
  if (r.unresolved) parts.push(`${r.unresolved} left without one (more than one stream fitted, or none), so the dependency view has no event wait for them`);
  return parts.join('; ');
}

/** The rank and world size of a trace's distributedInfo ({backend, rank, world_size, …}), when it holds a rank. */
function distributedRank(info: unknown): { rank: number; worldSize: number | null } | null {
  if (!info || typeof info !== 'object') return null;
  const { rank, world_size: worldSize } = info as { rank?: unknown; world_size?: unknown };
  if (!Number.isSafeInteger(rank) || (rank as number) < 0) return null;
  return { rank: rank as number, worldSize: Number.isSafeInteger(worldSize) && (worldSize as number) > 0 ? (worldSize as number) : null };
}

/** Host pid of GPU events seen before any host event named it. */
const UNKNOWN_PID = -1;

/** A device fact: an integer, else unknown. */
function num(v: unknown): number | null {
  return Number.isSafeInteger(v) ? (v as number) : null;
}

/** Kineto writes CUDA versions as 13000 → "13.0", like the recorder. */
function version(v: unknown): string | null {
  const n = intField(v);
  return n !== null && n > 0 ? `${Math.floor(n / 1000)}.${Math.floor((n % 1000) / 10)}` : null;
}
