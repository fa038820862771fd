// Interval arithmetic over GPU operations: the busy union of a device,
// its idle gaps, and how much of a time range was busy. Intervals are
// [start, end) in ns, kept as flat sorted arrays (start0, end0, start1, ...)
// so that millions of operations cost two numbers each.
import type { Ns } from '../contract/time.ts';
import type { GpuOps } from './trace.ts';

/** Disjoint, sorted intervals as [s0, e0, s1, e1, ...]. */
export type IntervalList = Float64Array;

/**
 * Union of the ops of `device` (of one category if given). GpuOps is sorted
 * by start, so one pass; the filter is plain arguments rather than a
 * callback, and the output is one typed array, because this runs over every op
 * of a recording (a per-op closure call and a JS array of millions of
 * numbers cost half a second at 10 M ops).
 */
export function unionOf(ops: GpuOps, device: number, category = -1, onDevice?: Int32Array): IntervalList {
  // Room for the worst case (every op its own interval): the pages are
  // only touched as intervals are written.
  const out = new Float64Array(2 * (onDevice?.length ?? ops.length) + 2);
  let n = 0;
  let s = 0;
  let e = -Infinity;
  const { start, end } = ops;
  // `onDevice`: the device's ops (Context.opsOnDevice), so that a job of many GPUs is not read once per GPU.
  const count = onDevice ? onDevice.length : ops.length;
  for (let k = 0; k < count; k++) {
    const i = onDevice ? onDevice[k]! : k;
    if (ops.device[i] !== device || (category >= 0 && ops.category[i] !== category)) continue;
    const a = start[i]!;
    const b = end[i]!;
    if (b < a) continue;
    if (a > e) {
      if (e > s) {
        out[n++] = s;
        out[n++] = e;
      }
      s = a;
      e = b;
    } else if (b > e) e = b;
  }
  if (e > s) {
    out[n++] = s;
    out[n++] = e;
  }
  // Mostly used (ops that rarely overlap): keep it rather than copy 100s of MB.
  return n >= out.length / 2 ? out.subarray(0, n) : out.slice(0, n);
}

/**
 * First start and last end of the operations that last (end > start: those
 * unionOf keeps), or null: the span of their union, which is the GPU span
 * of the diagnosis (findings/context.ts buildContext, from each device's
 * union) without building a union.
 */
export function extentOf(ops: Pick<GpuOps, 'length' | 'start' | 'end'>): { start: Ns; end: Ns } | null {
  const { length, start, end } = ops;
  let s = Infinity;
  let e = -Infinity;
  for (let i = 0; i < length; i++) {
    const a = start[i]!;
    const b = end[i]!;
    if (b <= a) continue;
    if (a < s) s = a;
    if (b > e) e = b;
  }
  return Number.isFinite(s) ? { start: s, end: e } : null;
}

/** Total length of a list. */
export function lengthOf(list: IntervalList): Ns {
  let t = 0;
  for (let k = 0; k < list.length; k += 2) t += list[k + 1]! - list[k]!;
  return t;
}

/** Busy time of `list` inside [from, to) (binary search to the first interval, then a walk). */
export function busyWithin(list: IntervalList, from: Ns, to: Ns): Ns {
  if (to <= from || list.length === 0) return 0;
  let lo = 0;
  let hi = list.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[2 * mid + 1]! <= from) lo = mid + 1;
    else hi = mid;
  }
  let t = 0;
  for (let k = 2 * lo; k < list.length && list[k]! < to; k += 2) {
    t += Math.min(list[k + 1]!, to) - Math.max(list[k]!, from);
  }
  return t;
}

/** Idle time of `list` inside [from, to). */
export function idleWithin(list: IntervalList, from: Ns, to: Ns): Ns {
  return to > from ? to - from - busyWithin(list, from, to) : 0;
}

export interface Gap {
  start: Ns;
  end: Ns;
}

/** The idle gaps between the first and the last busy interval, longest first if `minLength` filters. */
export function gapsOf(list: IntervalList, minLength: Ns = 0): Gap[] {
  const gaps: Gap[] = [];
  for (let k = 2; k < list.length; k += 2) {
    const start = list[k - 1]!;
    const end = list[k]!;
    if (end - start >= minLength) gaps.push({ start, end });
  }
  return gaps;
}

/** Length of the intersection of two lists (merge walk). */
export function intersectionLength(a: IntervalList, b: IntervalList): Ns {
  let i = 0;
  let j = 0;
  let t = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i]!, b[j]!);
    const e = Math.min(a[i + 1]!, b[j + 1]!);
    if (e > s) t += e - s;
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return t;
}

/**
 * Union of the intervals [start[i], end[i]) for i = index[from..to), given
 * in start order (as unionOfPairs takes them, without copying them out
 * first): one stream's operations, in a trace sorted by start.
 */
export function unionOfIndexed(start: ArrayLike<number>, end: ArrayLike<number>, index: Int32Array, from: number, to: number): IntervalList {
  const out = new Float64Array(2 * (to - from));
  let n = 0;
  let s = 0;
  let e = -Infinity;
  for (let k = from; k < to; k++) {
    const a = start[index[k]!]!;
    const b = end[index[k]!]!;
    if (b <= a) continue;
    if (a > e) {
      if (e > s) {
        out[n++] = s;
        out[n++] = e;
      }
      s = a;
      e = b;
    } else if (b > e) e = b;
  }
  if (e > s) {
    out[n++] = s;
    out[n++] = e;
  }
  return out.slice(0, n);
}

/** Union of arbitrary (unsorted, overlapping) intervals given as pairs. */
export function unionOfPairs(starts: ArrayLike<number>, ends: ArrayLike<number>): IntervalList {
  // Mostly called with intervals already in start order: sort only when not.
  const n = starts.length;
  let sorted = true;
  for (let k = 1; k < n && sorted; k++) sorted = starts[k - 1]! <= starts[k]!;
  const idx = new Int32Array(n);
  for (let k = 0; k < n; k++) idx[k] = k;
  if (!sorted) {
    const keys = Float64Array.from({ length: n }, (_, k) => starts[k]!);
    idx.set(Array.from(idx).sort((x, y) => keys[x]! - keys[y]!));
  }
  return unionOfIndexed(starts, ends, idx, 0, n);
}

/** a minus b. */
export function subtract(a: IntervalList, b: IntervalList): IntervalList {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let s = a[i]!;
    const e = a[i + 1]!;
    while (j < b.length && b[j + 1]! <= s) j += 2;
    let k = j;
    while (k < b.length && b[k]! < e) {
      if (b[k]! > s) out.push(s, b[k]!);
      s = Math.max(s, b[k + 1]!);
      k += 2;
    }
    if (s < e) out.push(s, e);
  }
  return Float64Array.from(out);
}

/** a ∩ b as a list (merge walk). */
export function intersect(a: IntervalList, b: IntervalList): IntervalList {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i]!, b[j]!);
    const e = Math.min(a[i + 1]!, b[j + 1]!);
    if (e > s) out.push(s, e);
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return Float64Array.from(out);
}

/** Union of several lists. */
export function unionOfLists(lists: IntervalList[]): IntervalList {
  const starts: number[] = [];
  const ends: number[] = [];
  for (const l of lists)
    for (let k = 0; k < l.length; k += 2) {
      starts.push(l[k]!);
      ends.push(l[k + 1]!);
    }
  return unionOfPairs(starts, ends);
}
