// The columns the loader reads a recording into (addon.ts loadTimelineColumns:
// operations and API calls, each a typed array per column, in start order),
// and the ways every reader cuts them: by start time, as views, and by a
// list of rows, copied.
import type { CallColumns, LeftOutRows, OpColumns } from './addon.ts';

/** A recording's operations and API calls as loaded. */
export interface TimelineColumns {
  ops: OpColumns;
  calls: CallColumns;
  /** Rows the loader read and left out (store/row-checks.ts); null or absent: none. */
  leftOut?: LeftOutRows | null;
  /** Where the columns are mapped from a cache entry (analysis/load/column-cache.ts): its path and the recording's state it holds. */
  cache?: { entry: string; key: string };
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

/** Either table's columns. */
export type Columns = OpColumns | CallColumns;

/** Every column of `c` as a view of rows [from, to). */
export function view<T extends Columns>(c: T, from: number, to: number): T {
  const out: Record<string, unknown> = { length: to - from };
  for (const [key, value] of Object.entries(c)) {
    if (ArrayBuffer.isView(value)) out[key] = (value as Float64Array).subarray(from, to);
  }
  return out as unknown as T;
}

/** Every column of `c` at the rows `index` (in order), copied. */
export function gather<T extends Columns>(c: T, index: Int32Array): T {
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

/** The operations and calls of processes `pids`, copied, in their order: what a load of those processes' rows alone gives. */
export function ofProcesses(c: TimelineColumns, pids: ReadonlySet<number>): TimelineColumns {
  const rows = (pid: Int32Array, length: number) => {
    const index = new Int32Array(length);
    let n = 0;
    for (let i = 0; i < length; i++) if (pids.has(pid[i]!)) index[n++] = i;
    return index.subarray(0, n);
  };
  return { ops: gather(c.ops, rows(c.ops.pid, c.ops.length)), calls: gather(c.calls, rows(c.calls.pid, c.calls.length)) };
}
