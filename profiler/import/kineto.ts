// PyTorch profiler / Kineto Chrome-trace JSON → StreamScope recording.
//
// Kineto writes GPU work as complete events ("ph": "X") with cat `kernel`,
// `gpu_memcpy`, `gpu_memset` and args {device, context, stream,
// correlation, ...}; CUDA calls as cat `cuda_runtime` / `cuda_driver` with
// args {cbid, correlation}; PyTorch operators as `cpu_op`,
// `user_annotation`, `python_function` (stored as host ranges, like NVTX);
// `ac2g` flows only repeat the correlation ids, so they are not needed.
// Times are microseconds (fractions keep the nanoseconds).
//
// The events themselves are read and mapped natively
// (native/addon/src/trace_import.cc: the scan, simdjson, the rows on a second
// thread, and the only definition of the conventions above): a 1 GiB trace
// took 35 s here in JavaScript, 6.4 s there. What follows the rows stays here: device facts from
// deviceProperties, the command, meta, zones and indexes (RecordingWriter).
import { idField, intField, nativeTraceError, parseEventBytes, textField, TraceFormatError } from './json-events.ts';
import { COPY_KIND_NAMES } from '../store/enums.ts';
import { RecordingWriter } from './recording-writer.ts';
import { importKinetoTrace, type KinetoTraceOptions, type KinetoTraceRows } from '../native/addon.ts';
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
/** Host events kept as ranges on their thread. */
const HOST_RANGES = ['cpu_op', 'user_annotation', 'python_function', 'cuda_profiler_range', 'nvtx'];

/** The native reader's options; `output` null: stop at the first timed event. */
function options(output: string | null): KinetoTraceOptions {
  return {
    output,
    copyKinds: COPY_KIND,
    memoryKinds: MEMORY_KIND,
    hostRanges: HOST_RANGES,
    parse: parseEventBytes,
  };
}

function readRows(file: string, output: string | null): KinetoTraceRows {
  try {
    return importKinetoTrace(file, options(output));
  } catch (err) {
    throw nativeTraceError(file, err) ?? err;
  }
}

export async function importKineto(file: string, out: string, opts: { overwrite?: boolean } = {}): Promise<ImportResult> {
  // The writer comes first (the native rows go into its file), but its
  // refusals — the output exists, or cannot be created — were said at the
  // first timed event, after whatever is wrong with the trace before it: a
  // first pass that stops there keeps that order.
  let writer: RecordingWriter;
  try {
    writer = new RecordingWriter(out, { overwrite: opts.overwrite, originNs: 0 });
  } catch (err) {
    if (!(err instanceof RecordingFileError)) throw err;
    const probe = readRows(file, null);
    if (!probe.any) throw new TraceFormatError(file, 'no trace events');
    if (!probe.timed) throw new TraceFormatError(file, 'no timed events (ph "X") to import');
    throw err;
  }
  try {
    const rows = writer.handOver((partial) => readRows(file, partial));
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
    writer.finish({
      imported_from: 'kineto',
      imported_file: file,
      cupti_version: textField(header.members.cupti_version),
      driver_version: version(header.members.cuda_driver_version),
      runtime_version: version(header.members.cuda_runtime_version),
      command: hostPid !== null ? (processNames.get(hostPid) ?? null) : null,
    });
    return { format: 'kineto', counts: writer.counts, skipped: rows.skipped };
  } catch (err) {
    writer.abandon();
    throw err;
  }
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
