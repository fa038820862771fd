// Generic Chrome trace events (the Trace Event Format: Chromium's own
// traces, TensorFlow/XLA's trace viewer JSON, hand-rolled tracers) →
// StreamScope recording. Unlike Kineto's, these traces say nothing
// CUDA-specific, so what is known is kept and nothing is guessed beyond
// two conventions:
//   - host work: complete events ("X") and begin/end pairs ("B"/"E", matched
//     per thread as a stack) become ranges on their thread, named by the
//     trace's thread_name / process_name metadata, like NVTX ranges;
//   - GPU work: a process whose name says GPU ("/device:GPU:0", "GPU 1")
//     with threads named as streams ("Stream #14(Compute)", "stream 7")
//     holds device operations: copies and memsets by name (Memcpy HtoD,
//     memset…), kernels otherwise, on that device and stream.
// Instant, counter, async and flow events are counted as skipped.
import { forEachTraceEvent, idField, nsField, textField, TraceFormatError, type TraceHeader } from './json-events.ts';
import type { ImportResult } from './kineto.ts';
import { RecordingWriter } from './recording-writer.ts';

/** CUPTI copy kinds (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP) by the direction a copy's name gives. */
function copyKindOf(name: string): number {
  if (/htod|h2d|host.?to.?device/i.test(name)) return 1;
  if (/dtoh|d2h|device.?to.?host/i.test(name)) return 2;
  if (/ptop|p2p|peer/i.test(name)) return 10;
  if (/dtod|d2d|device.?to.?device/i.test(name)) return 8;
  return 0;
}

const GPU_PROCESS = /(^|[^a-z])gpu([^a-z]|$)/i;
const STREAM_THREAD = /stream/i;
const firstInt = (s: string): number | null => {
  const m = /\d+/.exec(s);
  return m ? Number(m[0]) : null;
};

interface Open {
  start: number;
  name: string;
  cat: string | undefined;
}

/** `maxEventBytes`: lower than json-events.ts MAX_EVENT_BYTES, for the tests. */
export async function importChrome(
  file: string,
  out: string,
  opts: { overwrite?: boolean; maxEventBytes?: number } = {},
): Promise<ImportResult & { unterminated: number }> {
  const header: TraceHeader = { members: {} };
  let writer = null as RecordingWriter | null; // set inside the scan's callback (not narrowed to null)
  const processNames = new Map<number, string>();
  const threadNames = new Map<string, string>();
  const open = new Map<string, Open[]>();
  let skipped = 0;
  let any = false;
  let last = -Infinity;

  /** Where an event of (pid, tid) goes: a GPU stream, or a host thread. */
  const laneOf = (pid: number, tid: number): { device: number; stream: number } | null => {
    const p = processNames.get(pid);
    const t = threadNames.get(`${pid}:${tid}`);
    if (!p || !t || !GPU_PROCESS.test(p) || !STREAM_THREAD.test(t)) return null;
    return { device: firstInt(p) ?? 0, stream: firstInt(t) ?? tid };
  };

  const emit = (pid: number, tid: number, start: number, end: number, name: string, cat: string | undefined) => {
    const w = writer!;
    const lane = laneOf(pid, tid);
    if (!lane) {
      w.range({ start, end, pid, tid, name, domain: cat ?? 'chrome' });
      return;
    }
    const where = { device: lane.device, context: 0, stream: lane.stream, pid, correlation: 0, start, end };
    if (/memcpy|copy/i.test(name)) w.memcpy({ ...where, bytes: 0, copyKind: copyKindOf(name), srcKind: 0, dstKind: 0, async: true });
    else if (/memset/i.test(name)) w.memset({ ...where, bytes: 0, value: 0, memoryKind: 0, async: true });
    else w.kernel({ ...where, name });
  };

  try {
    // First pass: the names. Metadata may come anywhere in the file
    // (Chromium writes it last), and a lane is known by its names before
    // its first event is stored. Streaming twice keeps memory flat.
    forEachTraceEvent(file, { header, maxEventBytes: opts.maxEventBytes }, (e) => {
      any = true;
      if (e.ph !== 'M') return;
      const name = (e.args as { name?: unknown } | null | undefined)?.name;
      const pid = idField(e.pid ?? 0);
      const tid = idField(e.tid ?? 0);
      if (typeof name !== 'string' || pid === null || tid === null) return;
      if (e.name === 'process_name') processNames.set(pid, name);
      else if (e.name === 'thread_name') threadNames.set(`${pid}:${tid}`, name);
    });
    if (!any) throw new TraceFormatError(file, 'no trace events');
    forEachTraceEvent(file, { maxEventBytes: opts.maxEventBytes }, (e) => {
      const ph = e.ph as string | undefined;
      if (ph === 'M') return;
      // Fields of the wrong type skip the event (json-events.ts says why).
      const pid = idField(e.pid ?? 0);
      const tid = idField(e.tid ?? 0);
      const start = nsField(e.ts);
      const dur = e.dur === undefined ? 0 : nsField(e.dur);
      const name = textField(e.name ?? '');
      if (
        (ph !== 'X' && ph !== 'B' && ph !== 'E') ||
        typeof e.ts !== 'number' ||
        pid === null ||
        tid === null ||
        start === null ||
        dur === null ||
        name === null
      ) {
        skipped++;
        return;
      }
      // The first timed event is time zero; later events may be earlier (negative times are fine).
      writer ??= new RecordingWriter(out, { overwrite: opts.overwrite, originNs: start, inputs: [file] });
      if (!writer.holds(start) || !writer.holds(start + dur)) {
        skipped++;
        return;
      }
      const cat = typeof e.cat === 'string' ? e.cat : undefined;
      if (ph === 'X') {
        const end = start + dur;
        last = Math.max(last, end);
        emit(pid, tid, start, end, name, cat);
        return;
      }
      last = Math.max(last, start);
      const key = `${pid}:${tid}`;
      let stack = open.get(key);
      if (!stack) open.set(key, (stack = []));
      if (ph === 'B') stack.push({ start, name, cat });
      else {
        // An E closes the innermost open B of its thread (names may be omitted on E).
        const b = stack.pop();
        if (b) emit(pid, tid, b.start, start, b.name, b.cat);
        else skipped++;
      }
    });
    if (!writer) throw new TraceFormatError(file, 'no timed events (ph "X", or "B"/"E" pairs) to import');
    // Begins never ended (the trace was cut): kept, ending at the trace's last time.
    let unterminated = 0;
    for (const [key, stack] of open) {
      const [pid, tid] = key.split(':').map(Number) as [number, number];
      for (const b of stack) {
        emit(pid, tid, b.start, Math.max(b.start, last), b.name, b.cat);
        unterminated++;
      }
    }
    for (const [key, name] of threadNames) {
      const [pid, tid] = key.split(':').map(Number) as [number, number];
      writer.threadName(pid, tid, name);
    }
    for (const [pid, name] of processNames) writer.knownCommand(pid, name);
    writer.finish({ imported_from: 'chrome', imported_file: file, command: writer.mainCommand() });
    return { format: 'chrome', counts: writer.counts, skipped, unterminated };
  } catch (err) {
    writer?.abandon();
    throw err;
  }
}
