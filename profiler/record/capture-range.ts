// `record --capture-range`: keep only the activity inside the capture
// ranges, as `nsys --capture-range` does, so that a recording of a whole
// training run holds just the loop the user asked about.
//
//   nvtx:NAME          the instances of the NVTX range NAME (all of them,
//                      every thread)
//   cuda-profiler-api  per process, from each cudaProfilerStart /
//                      cuProfilerStart call to the next Stop call of that
//                      process (to the process's end when none follows)
//
// The collector records everything; the filter runs on the finished
// recording. Recording everything and cutting afterwards costs the run
// nothing a real capture would save, but it decides with every fact in
// hand (which call launched what), and it is the one rule the analysis
// already applies to `report --range NAME` (analysis/scope.ts, selectRange:
// what the instances own): an API call is kept when it started inside a
// window of its own process, on any thread, and GPU work with the call that
// launched it, so `report` on a capture equals `report --range NAME` on the
// whole.
import type { CallColumns } from '../native/addon.ts';
import { captureRangeSpec, type CaptureRange } from '../contract/record-request.ts';
import { loadTimelineColumns } from '../native/addon.ts';
import { profilerControl } from '../cuda/call-families.ts';
import { insideWindows, mergeWindows, overlapsWindows, selectRange, type RangeInstance } from '../cuda/nvtx-ranges.ts';
import { knownRanges, rangeInstances } from '../store/nvtx-ranges.ts';
import { readMeta, recordedDurationNs, writeMeta, type Db } from '../store/database.ts';
import { ensureZones } from '../store/zones.ts';
import { ZONED_TABLES, type ZonedTable } from '../store/zone-tables.ts';

/** The tables the filter removes rows from, in the order meta capture_dropped lists them. */
export const CAPTURE_TABLES = ['kernels', 'memcpys', 'memsets', 'syncs', 'cuda_events', 'api_calls', 'nvtx_ranges', 'overheads'] as const;
export type CaptureTable = (typeof CAPTURE_TABLES)[number];

export interface CaptureResult {
  spec: string;
  /** Capture windows found: NVTX range instances, or profiler start → stop intervals (merged per process). */
  windows: number;
  /** Rows left out, per table (also meta capture_dropped). */
  dropped: Record<CaptureTable, number>;
  /** Rows kept, per table. */
  kept: Record<CaptureTable, number>;
  /** When the range never occurred: the note (also added to meta notes). Nothing was kept. */
  neverOccurred: string | null;
}

/** Where to keep rows: the windows, as range instances of their process. */
interface CaptureWindows {
  /** For calls and GPU work: what these own (scope.ts selectRange); for the other host rows, their windows, per process. */
  instances: RangeInstance[];
  windows: number;
  /** Why there is no window, when there is none. */
  absent: string;
}

/**
 * Removes every row outside the capture range from an open, writable
 * recording, rebuilds the zones of the tables it changed, and records in
 * meta what it did (capture_range, capture_dropped; a note when the range
 * never occurred). All of it in one transaction: a failure leaves the
 * recording exactly as it was, and throws.
 */
export function applyCaptureRange(db: Db, range: CaptureRange): CaptureResult {
  const spec = captureRangeSpec(range);
  // Read before the transaction: the native loader opens its own connections.
  const columns = loadTimelineColumns(db.name);
  const capture = range.kind === 'nvtx' ? nvtxWindows(db, range.name) : profilerWindows(db, columns.calls);
  const host = hostRule(capture);
  const selected = selectRange(columns, capture.instances);

  const kept = {} as Record<CaptureTable, number[]>;
  const dropped = {} as Record<CaptureTable, number[]>;
  for (const t of CAPTURE_TABLES) {
    kept[t] = [];
    dropped[t] = [];
  }

  // GPU work: scope.ts's range selection, as report --range makes it.
  const OP_TABLES = [null, 'kernels', 'memcpys', 'memsets'] as const;
  const keptOps = [new Set<number>(), new Set<number>(), new Set<number>(), new Set<number>()];
  for (let i = 0; i < selected.ops.length; i++) keptOps[selected.ops.kind[i]!]!.add(selected.ops.rowId[i]!);
  for (let i = 0; i < columns.ops.length; i++) {
    const kind = columns.ops.kind[i]!;
    const id = columns.ops.rowId[i]!;
    (keptOps[kind]!.has(id) ? kept : dropped)[OP_TABLES[kind]!].push(id);
  }

  // API calls: the range selection's.
  const keptCalls = new Set<number>();
  for (let k = 0; k < selected.calls.length; k++) keptCalls.add(selected.calls.rowId[k]!);
  // CUDA events go with their cudaEventRecord call (pid and correlation id).
  const eventKey = (pid: number, corr: number) => pid * 2 ** 32 + corr;
  const events = new Map<number, { ids: number[]; hasCall: boolean; callKept: boolean }>();
  for (const e of db.prepare('SELECT id, pid, correlation_id AS corr FROM cuda_events').all() as { id: number; pid: number; corr: number }[]) {
    const key = eventKey(e.pid, e.corr);
    const entry = events.get(key) ?? { ids: [], hasCall: false, callKept: false };
    entry.ids.push(e.id);
    events.set(key, entry);
  }
  const calls = columns.calls;
  for (let k = 0; k < calls.length; k++) {
    const id = calls.rowId[k]!;
    const isKept = keptCalls.has(id);
    (isKept ? kept : dropped).api_calls.push(id);
    const event = events.size ? events.get(eventKey(calls.pid[k]!, calls.correlation[k]!)) : undefined;
    if (event) {
      event.hasCall = true;
      event.callKept ||= isKept;
    }
  }
  // An event whose call was never recorded (an imported trace) is not the filter's to judge: kept.
  for (const e of events.values()) {
    const to = (e.hasCall && !e.callKept ? dropped : kept).cuda_events;
    for (const id of e.ids) to.push(id);
  }

  // Host rows with a start: kept when they start inside a window of their
  // process, as the API calls are.
  for (const table of ['syncs', 'overheads'] as const) {
    for (const [id, pid, start] of db.prepare(`SELECT id, pid, start_ns FROM ${table}`).raw().iterate() as Iterable<[number, number, number]>) {
      (host.inside(pid, start) ? kept : dropped)[table].push(id);
    }
  }
  // NVTX ranges: kept when they share time with a window of their process (a
  // marker: its instant), so the ranges around and inside the capture stay.
  for (const [id, pid, start, end] of db.prepare('SELECT id, pid, start_ns, coalesce(end_ns, start_ns) FROM nvtx_ranges').raw().iterate() as Iterable<
    [number, number, number, number]
  >) {
    (host.overlaps(pid, start, end) ? kept : dropped).nvtx_ranges.push(id);
  }

  const neverOccurred = capture.windows === 0 ? `capture range ${spec} never occurred (${capture.absent}): nothing was kept` : null;
  db.transaction(() => {
    for (const t of CAPTURE_TABLES) deleteAllBut(db, t, dropped[t], kept[t]);
    // Zones of the changed tables are built again from the rows that are
    // left: every row in exactly one zone of its lane (SCHEMA.md).
    const rezone = CAPTURE_TABLES.filter((t) => dropped[t].length > 0 && t in ZONED_TABLES) as ZonedTable[];
    if (rezone.length) {
      db.prepare(`DELETE FROM zones WHERE table_id IN (${rezone.map((t) => ZONED_TABLES[t].id).join(', ')})`).run();
      ensureZones(db);
    }
    const counts = Object.fromEntries(CAPTURE_TABLES.map((t) => [t, dropped[t].length]));
    writeMeta(db, { capture_range: spec, capture_dropped: JSON.stringify(counts) });
    const duration = recordedDurationNs(db);
    if (duration === null) db.prepare("DELETE FROM meta WHERE key = 'duration_ns'").run();
    else writeMeta(db, { duration_ns: duration });
    if (neverOccurred) addNote(db, neverOccurred);
  })();

  const count = (lists: Record<CaptureTable, number[]>) => Object.fromEntries(CAPTURE_TABLES.map((t) => [t, lists[t].length])) as Record<CaptureTable, number>;
  return { spec, windows: capture.windows, dropped: count(dropped), kept: count(kept), neverOccurred };
}

const TABLE_WORDS: Record<CaptureTable, string> = {
  kernels: 'kernels',
  memcpys: 'copies',
  memsets: 'memsets',
  syncs: 'synchronizations',
  cuda_events: 'CUDA events',
  api_calls: 'API calls',
  nvtx_ranges: 'NVTX ranges',
  overheads: 'overheads',
};

/** One line for the record command: "capture range nvtx:step (12 instances): kept 60 kernels, …; left out 4 copies, …". */
export function formatCaptureResult(r: CaptureResult): string {
  if (r.neverOccurred) return r.neverOccurred;
  const list = (counts: Record<CaptureTable, number>) =>
    CAPTURE_TABLES.filter((t) => counts[t] > 0)
      .map((t) => `${counts[t].toLocaleString('en-US')} ${TABLE_WORDS[t]}`)
      .join(', ') || 'nothing';
  const windows = `${r.windows} ${r.spec.startsWith('nvtx:') ? 'instance' : 'start-to-stop interval'}${r.windows === 1 ? '' : 's'}`;
  return `capture range ${r.spec} (${windows}): kept ${list(r.kept)}; left out ${list(r.dropped)}`;
}

/** Appends to meta `notes` (a JSON list). */
export function addNote(db: Db, note: string): void {
  const existing = readMeta(db).get('notes');
  const notes = existing ? (JSON.parse(existing) as string[]) : [];
  notes.push(note);
  writeMeta(db, { notes: JSON.stringify(notes) });
}

function nvtxWindows(db: Db, name: string): CaptureWindows {
  const instances = rangeInstances(db, name);
  return { instances, windows: instances.length, absent: `no closed NVTX range named '${name}' was recorded${knownRanges(db)}` };
}

/**
 * Per process, [start of a Start call, end of the next Stop call): both
 * calls belong to the capture, as the marks the program placed. A program
 * that calls both APIs, or Start twice, gets overlapping intervals, which
 * merge (the H100 recording of cudaProfilerStart holds no cuProfilerStart
 * under it, but a driver-API program calls that one). A Stop before any
 * Start ends nothing.
 */
function profilerWindows(db: Db, calls: CallColumns): CaptureWindows {
  const control = new Map<number, 'start' | 'stop'>();
  for (const s of db.prepare("SELECT id, value FROM strings WHERE value LIKE 'cu%Profiler%'").all() as { id: number; value: string }[]) {
    const c = profilerControl(s.value);
    if (c) control.set(s.id, c);
  }
  const starts = new Map<number, { t: number; tid: number }[]>(); // pid → Start calls
  const stops = new Map<number, { start: number; end: number }[]>(); // pid → Stop calls, in start order
  for (let k = 0; k < calls.length; k++) {
    const c = control.size ? control.get(calls.nameId[k]!) : undefined;
    if (!c) continue;
    const pid = calls.pid[k]!;
    if (c === 'start') {
      if (!starts.has(pid)) starts.set(pid, []);
      starts.get(pid)!.push({ t: calls.start[k]!, tid: calls.tid[k]! });
    } else {
      if (!stops.has(pid)) stops.set(pid, []);
      stops.get(pid)!.push({ start: calls.start[k]!, end: calls.end[k]! });
    }
  }
  const instances: RangeInstance[] = [];
  let windows = 0;
  for (const [pid, list] of starts) {
    const pidStops = stops.get(pid) ?? [];
    // On the Start call's thread; what any thread of the process launches
    // inside is the window's all the same (scope.ts: an instance owns the
    // work of every thread of its process).
    const intervals: RangeInstance[] = list.map(({ t, tid }) => {
      const stop = pidStops.find((s) => s.start >= t);
      // No Stop: to the process's end. Nothing of the process comes after its
      // end, so an open end keeps exactly that.
      return { pid, tid, startNs: t, endNs: stop ? stop.end : Number.MAX_SAFE_INTEGER };
    });
    windows += mergeWindows(intervals).length;
    for (const interval of intervals) instances.push(interval);
  }
  return { instances, windows, absent: 'no cudaProfilerStart or cuProfilerStart call was recorded' };
}

/** Whether a host row (its process, its start or its span) lies in a window of its process. */
function hostRule(capture: CaptureWindows): { inside: (pid: number, t: number) => boolean; overlaps: (pid: number, start: number, end: number) => boolean } {
  const byPid = new Map<number, RangeInstance[]>();
  for (const r of capture.instances) {
    if (!byPid.has(r.pid)) byPid.set(r.pid, []);
    byPid.get(r.pid)!.push(r);
  }
  const rules = new Map(
    [...byPid].map(([pid, list]) => {
      const windows = mergeWindows(list);
      return [pid, { inside: insideWindows(windows), overlaps: overlapsWindows(windows) }];
    }),
  );
  return {
    inside: (pid, t) => rules.get(pid)?.inside(t) ?? false,
    overlaps: (pid, s, e) => rules.get(pid)?.overlaps(s, e) ?? false,
  };
}

/**
 * Deletes the `dropped` rows of `table`, as rowid ranges that hold no kept
 * row: rows outside a capture come in long runs (before, between and after
 * its windows), so this is a few statements, not one per row.
 */
function deleteAllBut(db: Db, table: CaptureTable, dropped: number[], kept: number[]): void {
  if (dropped.length === 0) return;
  const gone = Float64Array.from(dropped).sort();
  const stay = Float64Array.from(kept).sort();
  const del = db.prepare(`DELETE FROM ${table} WHERE id BETWEEN ? AND ?`);
  let k = 0;
  for (let i = 0; i < gone.length;) {
    const first = gone[i]!;
    while (k < stay.length && stay[k]! < first) k++;
    const nextKept = k < stay.length ? stay[k]! : Infinity;
    let j = i;
    while (j + 1 < gone.length && gone[j + 1]! < nextKept) j++;
    del.run(first, gone[j]!);
    i = j + 1;
  }
}
