// PyTorch profiler / Kineto Chrome-trace JSON → StreamScope recording.
//
// Kineto writes GPU work as complete events ("ph": "X") with cat `kernel`,
// `gpu_memcpy`, `gpu_memset` and args {device, context, stream,
// correlation, ...}; CUDA calls as cat `cuda_runtime` / `cuda_driver` with
// args {cbid, correlation}; PyTorch operators as `cpu_op`,
// `user_annotation`, `python_function` (stored as host ranges, like NVTX);
// `ac2g` flows only repeat the correlation ids, so they are not needed.
// Times are microseconds (fractions keep the nanoseconds).
import { idField, intField, nsField, textField, traceEvents, TraceFormatError, type TraceHeader } from './json-events.ts';
import { COPY_KIND_NAMES } from '../store/enums.ts';
import { RecordingWriter } from './recording-writer.ts';

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
const HOST_RANGES = new Set(['cpu_op', 'user_annotation', 'python_function', 'cuda_profiler_range', 'nvtx']);

export async function importKineto(file: string, out: string, opts: { overwrite?: boolean } = {}): Promise<ImportResult> {
  const header: TraceHeader = { members: {} };
  let writer: RecordingWriter | null = null;
  let hostPid: number | null = null;
  let gpuPid: number | null = null; // fixed at the first GPU event, so one process owns every context
  const processNames = new Map<number, string>();
  let skipped = 0;
  let any = false;
  try {
    for await (const e of traceEvents(file, header)) {
      any = true;
      const ph = e.ph as string | undefined;
      const cat = e.cat as string | undefined;
      const args = (e.args ?? {}) as Record<string, unknown>;
      if (ph === 'M') {
        const pid = idField(e.pid);
        if (pid === null) continue; // metadata of no process we could store
        if (e.name === 'process_name' && typeof args.name === 'string') processNames.set(pid, args.name);
        if (e.name === 'process_labels' && args.labels === 'CPU' && hostPid === null) hostPid = pid;
        continue;
      }
      // Fields of the wrong type skip the event (json-events.ts says why).
      const start = nsField(e.ts);
      const dur = e.dur === undefined ? 0 : nsField(e.dur);
      const name = textField(e.name);
      if (ph !== 'X' || typeof e.ts !== 'number' || start === null || dur === null || name === null) {
        skipped++;
        continue;
      }
      // The first timed event is time zero; later events may be earlier (negative times are fine).
      writer ??= new RecordingWriter(out, { overwrite: opts.overwrite, originNs: start });
      const end = start + dur;
      if (!writer.holds(start) || !writer.holds(end)) {
        skipped++;
        continue;
      }
      const pid = idField(e.pid);
      const tid = idField(e.tid);
      const host = pid !== null && tid !== null ? { pid, tid } : null;
      if ((cat === 'cuda_runtime' || cat === 'cuda_driver') && host) {
        hostPid ??= host.pid;
        writer.apiCall({
          start,
          end,
          ...host,
          name,
          domain: cat === 'cuda_runtime' ? 1 : 2,
          cbid: int(args.cbid),
          correlation: int(args.correlation),
          returnValue: 0,
        });
      } else if (cat === 'kernel' || cat === 'gpu_memcpy' || cat === 'gpu_memset') {
        // Kineto puts GPU events under the device's pid; their host process is
        // the one making CUDA calls, which may only show up later in the file.
        const lane = {
          device: int(args.device ?? e.pid),
          context: int(args.context),
          stream: int(args.stream ?? e.tid),
          pid: (gpuPid ??= hostPid ?? UNKNOWN_PID),
          correlation: int(args.correlation),
        };
        if (cat === 'kernel') {
          writer.kernel({
            ...lane,
            start,
            end,
            name,
            grid: triple(args.grid),
            block: triple(args.block),
            registers: int(args['registers per thread']),
            staticShared: int(args['shared memory']),
          });
        } else if (cat === 'gpu_memcpy') {
          const m = /^Memcpy (\w+) \(([\w ]+) -> ([\w ]+)\)/.exec(name);
          writer.memcpy({
            ...lane,
            start,
            end,
            bytes: int(args.bytes),
            copyKind: COPY_KIND[m?.[1] ?? ''] ?? 0,
            srcKind: MEMORY_KIND[m?.[2] ?? ''] ?? 0,
            dstKind: MEMORY_KIND[m?.[3] ?? ''] ?? 0,
            async: true,
          });
        } else {
          const m = /^Memset \(([\w ]+)\)/.exec(name);
          writer.memset({ ...lane, start, end, bytes: int(args.bytes), value: 0, memoryKind: MEMORY_KIND[m?.[1] ?? ''] ?? 0, async: true });
        }
      } else if (cat && HOST_RANGES.has(cat) && host) {
        writer.range({ start, end, ...host, name, domain: cat });
      } else {
        skipped++;
      }
    }
    if (!any) throw new TraceFormatError(file, 'no trace events');
    if (!writer) throw new TraceFormatError(file, 'no timed events (ph "X") to import');
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
    return { format: 'kineto', counts: writer.counts, skipped };
  } catch (err) {
    writer?.abandon();
    throw err;
  }
}

/** Host pid of GPU events seen before any host event named it. */
const UNKNOWN_PID = -1;

/** An integer arg, 0 when absent or not an integer (never Number() of an array: a deep one overflows the stack). */
function int(v: unknown): number {
  return intField(v) ?? 0;
}

function triple(v: unknown): [number, number, number] | undefined {
  return Array.isArray(v) && v.length === 3 ? [int(v[0]), int(v[1]), int(v[2])] : undefined;
}

/** A device fact: an integer, else unknown. */
function num(v: unknown): number | null {
  return Number.isSafeInteger(v) ? (v as number) : null;
}

/** Kineto writes CUDA versions as 13000 → "13.0", like the recorder. */
function version(v: unknown): string | null {
  const n = intField(v);
  return n !== null && n > 0 ? `${Math.floor(n / 1000)}.${Math.floor((n % 1000) / 10)}` : null;
}
