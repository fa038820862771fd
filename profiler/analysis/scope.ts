// What an analysis looks at. Every analysis — report, check, diff, the
// findings panel, the stats — runs on one scope, resolved here into the
// operations and calls it covers, so that they always agree on what they
// looked at:
//
//   steady-state (default)  everything after start-up (startup.ts)
//   whole                   the whole recording, start-up included
//   range NAME[#k]          the GPU work launched inside the instances of an
//                           NVTX range (all of them, or the k-th, from 1):
//                           operations whose launching API call started
//                           inside an instance, on that instance's thread,
//                           and the API calls (any thread) that started
//                           inside one
//   window FROM..TO         operations and calls that start in [FROM, TO)
//                           (ns from the recording's origin): a time range
//                           the user gave or dragged on the timeline
//
// The selection is made on the loaded columns before the analysis builds
// anything from them: a scope costs one pass over the columns (a range) or
// nothing at all (a window or the steady state: both are a contiguous run of
// each start-ordered column, taken as views).
import type { CallColumns, OpColumns } from '../native/addon.ts';
import type { Db } from '../store/database.ts';
import { IdTable } from './id-table.ts';
import { formatDuration, type Ns } from '../contract/time.ts';
import type { Scope, ScopeInfo, Startup } from '../contract/scope.ts';
import { THREAD_LANE_FACTOR } from '../store/zone-tables.ts';

/** A scope as the user wrote it is wrong for this recording (no such range, instance out of bounds, empty window). */
export class ScopeError extends Error {}

export interface TimelineColumns {
  ops: OpColumns;
  calls: CallColumns;
}

/** An NVTX range instance: where, and on which thread. */
export interface RangeInstance {
  pid: number;
  tid: number;
  startNs: Ns;
  endNs: Ns;
}

/** The closed instances of the NVTX range `name`, in start order. */
export function rangeInstances(db: Db, name: string): RangeInstance[] {
  return db
    .prepare(
      `SELECT r.pid, r.tid, r.start_ns AS startNs, r.end_ns AS endNs FROM nvtx_ranges r
      JOIN strings s ON s.id = r.name_id WHERE s.value = ? AND r.end_ns IS NOT NULL ORDER BY r.start_ns, r.id`,
    )
    .all(name) as RangeInstance[];
}

/** `NAME` or `NAME#k` (k from 1) as a range scope. */
export function parseRangeScope(text: string): Scope {
  const m = /^(.*)#(\d+)$/.exec(text);
  if (m && m[1]) {
    const instance = Number(m[2]);
    if (instance < 1) throw new ScopeError(`--range ${text}: instances count from 1`);
    return { kind: 'range', name: m[1], instance };
  }
  if (!text) throw new ScopeError('--range: give the name of an NVTX range (NAME, or NAME#k for its k-th instance)');
  return { kind: 'range', name: text };
}

/** A selection of the columns: the views or copies the analysis runs on, and what they are. */
export interface Selection {
  columns: TimelineColumns;
  info: ScopeInfo;
}

/**
 * Resolves `scope` on a recording's full columns (start order) and selects
 * what it covers. `file` names the recording in errors.
 */
export function selectScope(db: Db, file: string, scope: Scope, columns: TimelineColumns, startup: Startup | null): Selection {
  switch (scope.kind) {
    // Whole and steady-state windows run to the recording's end, which the
    // trace knows once loaded (a pass over every end): closeWindows fills them.
    case 'whole':
      return { columns, info: { kind: 'whole', label: 'whole recording, start-up included', windows: [], startup } };
    case 'steady-state': {
      if (!startup) {
        return { columns, info: { kind: 'steady-state', label: 'steady state (no start-up detected: the whole recording)', windows: [], startup } };
      }
      return {
        columns: sliceByStart(columns, startup.endNs, Infinity),
        info: { kind: 'steady-state', label: `steady state, after ${formatDuration(startup.endNs - startup.startNs)} of start-up`, windows: [], startup },
      };
    }
    case 'window': {
      const { startNs, endNs } = scope;
      if (!(Number.isFinite(startNs) && Number.isFinite(endNs)) || endNs <= startNs) {
        throw new ScopeError(`${file}: the time range ${startNs}..${endNs} ns is empty (the end must be after the start)`);
      }
      return {
        columns: sliceByStart(columns, startNs, endNs),
        info: { kind: 'window', label: windowLabel(startNs, endNs), windows: [{ startNs, endNs }], startup },
      };
    }
    case 'range': {
      const all = rangeInstances(db, scope.name);
      if (all.length === 0) throw new ScopeError(`${file}: no NVTX range named '${scope.name}'${knownRanges(db)}`);
      if (scope.instance !== undefined && scope.instance > all.length) {
        throw new ScopeError(`${file}: NVTX range '${scope.name}' has ${all.length} instance${all.length > 1 ? 's' : ''}; #${scope.instance} does not exist`);
      }
      const chosen = scope.instance !== undefined ? [all[scope.instance - 1]!] : all;
      const label =
        scope.instance !== undefined
          ? `NVTX range '${scope.name}' #${scope.instance} of ${all.length}`
          : `NVTX range '${scope.name}' (${all.length} instance${all.length > 1 ? 's' : ''})`;
      return {
        columns: selectRange(columns, chosen),
        info: {
          kind: 'range',
          label,
          startup,
          windows: chosen.map((r) => ({ startNs: r.startNs, endNs: r.endNs })),
          range: { name: scope.name, instances: all.length, ...(scope.instance !== undefined ? { instance: scope.instance } : {}) },
        },
      };
    }
  }
}

/** Open ends (--from or --to alone) are ±MAX_SAFE_INTEGER. */
function windowLabel(startNs: Ns, endNs: Ns): string {
  const open = Number.MAX_SAFE_INTEGER;
  if (startNs <= -open) return `up to ${formatDuration(endNs)}`;
  if (endNs >= open) return `from ${formatDuration(startNs)} on`;
  return `${formatDuration(startNs)} to ${formatDuration(endNs)}`;
}

/** For a message about a range name that is not there: "; its ranges: 'step', 'compute'" (closed ranges, most frequent first), or that there are none. */
export function knownRanges(db: Db): string {
  const names = db
    .prepare(
      `SELECT s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
      WHERE r.end_ns IS NOT NULL GROUP BY s.value ORDER BY count(*) DESC, s.value LIMIT 8`,
    )
    .pluck()
    .all() as string[];
  return names.length ? `; its ranges: ${names.map((n) => `'${n}'`).join(', ')}` : '; it has no NVTX ranges';
}

/**
 * The windows of a whole or steady-state scope, from the span of the
 * trace loaded for it (the recording's end is the trace's end); other
 * scopes' windows are set by selectScope.
 */
export function closeWindows(info: ScopeInfo, span: { start: Ns; end: Ns }): void {
  if (info.kind === 'whole' || (info.kind === 'steady-state' && !info.startup)) info.windows = [{ startNs: span.start, endNs: span.end }];
  else if (info.kind === 'steady-state') info.windows = [{ startNs: info.startup!.endNs, endNs: Math.max(span.end, info.startup!.endNs) }];
}

/** First index whose start is ≥ t (columns in start order). */
export function lowerBound(start: Float64Array, length: number, t: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

type Columns = OpColumns | CallColumns;

/** Every column of `c` as a view of rows [from, to). */
function view<T extends Columns>(c: T, from: number, to: number): T {
  const out: Record<string, unknown> = { length: to - from };
  for (const [key, value] of Object.entries(c)) {
    if (ArrayBuffer.isView(value)) out[key] = (value as Float64Array).subarray(from, to);
  }
  return out as unknown as T;
}

/** Every column of `c` at the rows `index` (in order), copied. */
function gather<T extends Columns>(c: T, index: Int32Array): T {
  const out: Record<string, unknown> = { length: index.length };
  for (const [key, value] of Object.entries(c)) {
    if (!ArrayBuffer.isView(value)) continue;
    const src = value as Float64Array;
    const dst = new (src.constructor as Float64ArrayConstructor)(index.length);
    for (let x = 0; x < index.length; x++) dst[x] = src[index[x]!]!;
    out[key] = dst;
  }
  return out as unknown as T;
}

/** Operations and calls that start in [from, to): a contiguous run of each, as views. */
export function sliceByStart(c: TimelineColumns, from: number, to: number): TimelineColumns {
  const o0 = lowerBound(c.ops.start, c.ops.length, from);
  const o1 = to === Infinity ? c.ops.length : lowerBound(c.ops.start, c.ops.length, to);
  const c0 = lowerBound(c.calls.start, c.calls.length, from);
  const c1 = to === Infinity ? c.calls.length : lowerBound(c.calls.start, c.calls.length, to);
  return { ops: view(c.ops, o0, o1), calls: view(c.calls, c0, c1) };
}

/**
 * The calls that start inside one of `instances` (any thread), and the
 * operations launched by a call that started inside an instance on that
 * instance's own thread. An operation with no launch recorded (correlation
 * id 0: imported traces) counts when it starts inside an instance.
 */
export function selectRange(c: TimelineColumns, instances: RangeInstance[]): TimelineColumns {
  const windows = mergeWindows(instances);
  const inWindow = insideWindows(windows);
  const callIndex: number[] = [];
  for (const w of windows) {
    for (let k = lowerBound(c.calls.start, c.calls.length, w.start); k < c.calls.length && c.calls.start[k]! < w.end; k++) callIndex.push(k);
  }
  // Launches inside an instance on its thread: correlation ids by process.
  const byThread = new Map<number, RangeInstance[]>();
  for (const r of instances) {
    const key = r.pid * THREAD_LANE_FACTOR + r.tid;
    const list = byThread.get(key) ?? [];
    list.push(r);
    byThread.set(key, list);
  }
  const launched = new Map<number, number[]>(); // pid → correlation ids of launches inside
  for (const k of callIndex) {
    const list = byThread.get(c.calls.pid[k]! * THREAD_LANE_FACTOR + c.calls.tid[k]!);
    if (!list) continue;
    const t = c.calls.start[k]!;
    if (!list.some((r) => t >= r.startNs && t < r.endNs)) continue;
    const pid = c.calls.pid[k]!;
    let ids = launched.get(pid);
    if (!ids) launched.set(pid, (ids = []));
    ids.push(c.calls.correlation[k]!);
  }
  const member = new Map([...launched].map(([pid, ids]) => [pid, idSet(ids)]));
  const opIndex: number[] = [];
  for (let i = 0; i < c.ops.length; i++) {
    const corr = c.ops.correlation[i]!;
    // Correlation 0: no launch recorded (imported traces); placed by its own start.
    if (corr === 0 ? inWindow(c.ops.start[i]!) : member.get(c.ops.pid[i]!)?.(corr)) opIndex.push(i);
  }
  callIndex.sort((a, b) => a - b);
  return { ops: gather(c.ops, Int32Array.from(opIndex)), calls: gather(c.calls, Int32Array.from(callIndex)) };
}

/** Membership of correlation ids (a process hands them out in sequence: IdTable's array). */
function idSet(ids: number[]): (id: number) => boolean {
  const member = IdTable.of(ids, 0);
  for (const id of ids) member.set(id, 1);
  return (id) => member.get(id) === 1;
}

/** Instances as disjoint windows in time order (nested or overlapping instances merge). */
export function mergeWindows(instances: RangeInstance[]): { start: number; end: number }[] {
  const sorted = instances.map((r) => ({ start: r.startNs, end: r.endNs })).sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const w of sorted) {
    const last = out[out.length - 1];
    if (last && w.start <= last.end) last.end = Math.max(last.end, w.end);
    else out.push({ ...w });
  }
  return out;
}

/** Whether a time lies inside one of `windows` (mergeWindows' output; a window holds its start, not its end). */
export function insideWindows(windows: { start: number; end: number }[]): (t: number) => boolean {
  return (t) => {
    const x = upperBoundWindow(windows, t);
    return x >= 0 && t < windows[x]!.end;
  };
}

/**
 * Whether an interval [start, end] shares time with one of `windows`
 * (mergeWindows' output). The last window starting at or before `end` is
 * the only candidate: the windows are disjoint and in order, so every
 * earlier one ends before it starts.
 */
export function overlapsWindows(windows: { start: number; end: number }[]): (start: number, end: number) => boolean {
  return (start, end) => {
    const x = upperBoundWindow(windows, end);
    return x >= 0 && windows[x]!.end > start;
  };
}

/** Index of the last window starting at or before t, or -1. */
function upperBoundWindow(windows: { start: number; end: number }[], t: number): number {
  let lo = 0;
  let hi = windows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (windows[mid]!.start <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
