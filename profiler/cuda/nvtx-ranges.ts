// NVTX range instances and what each owns: the one rule by which a range
// scope (`report --range NAME`, an iteration) and a capture range
// (`record --capture-range nvtx:NAME`) select the API calls and the GPU work
// of a range, over the loaded columns. Reading the instances from a
// recording is store/nvtx-ranges.ts's.
import { groupOrder } from '../base/group-order.ts';
import { IdTable } from '../base/id-table.ts';
import type { Ns } from '../contract/time.ts';
import { gather, lowerBound, type TimelineColumns } from '../native/columns.ts';

/** An NVTX range instance: where, and on which thread. */
export interface RangeInstance {
  pid: number;
  tid: number;
  startNs: Ns;
  endNs: Ns;
}

/**
 * Who owns what among the instances of one range (indices into the
 * `instances` given, in start order): the calls and the operations owned by
 * one, each with its owner. The rule (docs/ANALYSIS.md, "Scopes"):
 *
 *  - a call belongs to an instance open when it started (start ≤ t < end)
 *    in its own process, on any thread: the framework's threads launch work
 *    on behalf of the thread that pushed the range (PyTorch's autograd
 *    thread runs the backward pass of the step the main thread opened);
 *  - an instance on the call's own thread comes first: a thread that has an
 *    open instance of its own is doing its own step, not another's;
 *  - otherwise, and among several on its own thread (nested instances),
 *    the most recently opened one: nested, that is the innermost, the one
 *    a thread's range stack would name; overlapping, the older one has had
 *    its own time to launch its work, and a helper thread starts on work
 *    after it was asked for, so it serves the newest step more likely than
 *    an older one still waiting for its results. Equal starts: the later in
 *    rangeInstances' order (start, then row id);
 *  - an operation belongs to the owner of the call that launched it, as
 *    recorded (correlation id, per process); one with no launch recorded
 *    (correlation 0: imported traces) to the instance its own start falls
 *    in, by the same rule without a thread.
 *
 * Each call and operation has one owner at most, so the instances'
 * selections partition the range's: the iterations add up to `--range
 * NAME`.
 */
export interface RangeOwnership {
  /** Indices of the owned calls, ascending, and each one's owner. */
  calls: Int32Array;
  callOwner: Int32Array;
  /** Indices of the owned operations, ascending, and each one's owner. */
  ops: Int32Array;
  opOwner: Int32Array;
}

/**
 * Who owns what (the rule above), kept per columns and list of instances:
 * the range's scope and its instances' share of the findings (attribution.ts)
 * ask for the same one, a few seconds at 10 M operations.
 */
export function rangeOwnership(c: TimelineColumns, instances: RangeInstance[]): RangeOwnership {
  let byInstances = owned.get(c);
  if (!byInstances) owned.set(c, (byInstances = new WeakMap()));
  let own = byInstances.get(instances);
  if (!own) byInstances.set(instances, (own = ownershipOf(c, instances)));
  return own;
}
const owned = new WeakMap<TimelineColumns, WeakMap<RangeInstance[], RangeOwnership>>();

/** rangeOwnership, computed: one pass over the calls inside the instances, one over the operations. */
function ownershipOf(c: TimelineColumns, instances: RangeInstance[]): RangeOwnership {
  const windows = mergeWindows(instances);
  const inWindow = insideWindows(windows);
  // Typed, at most every row: arrays grown a push at a time cost seconds at 10 M rows.
  const calls = new Int32Array(c.calls.length);
  const callOwner = new Int32Array(c.calls.length);
  let nc = 0;
  // Calls in start order, windows in time order: the sweep's times never go back.
  const open = openInstances(instances);
  for (const w of windows) {
    for (let k = lowerBound(c.calls.start, c.calls.length, w.start); k < c.calls.length && c.calls.start[k]! < w.end; k++) {
      const owner = open(c.calls.pid[k]!, c.calls.tid[k]!, c.calls.start[k]!);
      if (owner < 0) continue; // inside another process's instance only
      calls[nc] = k;
      callOwner[nc++] = owner;
    }
  }
  // The launches' owners by correlation id, per process: the owned calls counted per process, then placed.
  // Rows come process after process, or one process alone: each pass keeps the last process's entry at hand.
  type Launches = { ids: Int32Array; owners: Int32Array; n: number };
  const perPid = new Map<number, Launches>();
  const entryOf = (pid: number) => {
    let entry = perPid.get(pid);
    if (!entry) perPid.set(pid, (entry = { ids: new Int32Array(0), owners: new Int32Array(0), n: 0 }));
    return entry;
  };
  let lastPid = NaN;
  let last: Launches | undefined;
  for (let x = 0; x < nc; x++) {
    const pid = c.calls.pid[calls[x]!]!;
    if (pid !== lastPid) [lastPid, last] = [pid, entryOf(pid)];
    last!.n++;
  }
  for (const entry of perPid.values()) {
    entry.ids = new Int32Array(entry.n);
    entry.owners = new Int32Array(entry.n);
    entry.n = 0;
  }
  lastPid = NaN;
  for (let x = 0; x < nc; x++) {
    const k = calls[x]!;
    const pid = c.calls.pid[k]!;
    if (pid !== lastPid) [lastPid, last] = [pid, perPid.get(pid)!];
    last!.ids[last!.n] = c.calls.correlation[k]!;
    last!.owners[last!.n++] = callOwner[x]!;
  }
  const ownerOf = new Map<number, IdTable>();
  for (const [pid, { ids, owners }] of perPid) {
    const table = IdTable.of(ids, -1);
    for (let x = 0; x < ids.length; x++) table.set(ids[x]!, owners[x]!);
    ownerOf.set(pid, table);
  }
  const ops = new Int32Array(c.ops.length);
  const opOwner = new Int32Array(c.ops.length);
  let no = 0;
  // Operations without a launch, in start order: a sweep of their own.
  const openAtStart = openInstances(instances);
  let tablePid = NaN;
  let table: IdTable | undefined;
  for (let i = 0; i < c.ops.length; i++) {
    const corr = c.ops.correlation[i]!;
    const pid = c.ops.pid[i]!;
    let owner = -1;
    if (pid !== tablePid) [tablePid, table] = [pid, ownerOf.get(pid)];
    if (corr !== 0) owner = table?.get(corr) ?? -1;
    else if (inWindow(c.ops.start[i]!)) owner = openAtStart(pid, NO_THREAD, c.ops.start[i]!);
    if (owner < 0) continue;
    ops[no] = i;
    opOwner[no++] = owner;
  }
  // Copies of the rows used: the full-length arrays are let go.
  return { calls: calls.slice(0, nc), callOwner: callOwner.slice(0, nc), ops: ops.slice(0, no), opOwner: opOwner.slice(0, no) };
}

/** A thread id no instance has: work whose thread is not known. */
const NO_THREAD = -1;

/**
 * The owner, by rangeOwnership's rule, of work of thread `tid` of process
 * `pid` that started at `t` (an index into `instances`, in start order;
 * -1: none open in that process). The times asked must not decrease: the
 * instances open at t are kept as the sweep goes, per process, in start
 * order (few at a time: a thread's steps follow each other).
 */
function openInstances(instances: RangeInstance[]): (pid: number, tid: number, t: number) => number {
  // rangeInstances gives them in start order; the capture's profiler windows come per process.
  const order = instances.map((_, x) => x).sort((a, b) => instances[a]!.startNs - instances[b]!.startNs || a - b);
  // Asked once per call and operation (millions): the instances' ends and threads as typed columns, the last process's list at hand.
  const ends = Float64Array.from(instances, (r) => r.endNs);
  const tids = Float64Array.from(instances, (r) => r.tid);
  let next = 0;
  const open = new Map<number, number[]>();
  let lastPid = NaN;
  let lastList: number[] | undefined;
  return (pid, tid, t) => {
    while (next < order.length && instances[order[next]!]!.startNs <= t) {
      const x = order[next++]!;
      const p = instances[x]!.pid;
      let list = open.get(p);
      if (!list) open.set(p, (list = []));
      list.push(x);
      if (p === lastPid) lastList = list;
    }
    if (pid !== lastPid) {
      lastPid = pid;
      lastList = open.get(pid);
    }
    const list = lastList;
    if (!list) return -1;
    let n = 0;
    for (let y = 0; y < list.length; y++) if (ends[list[y]!]! > t) list[n++] = list[y]!;
    if (n !== list.length) list.length = n;
    for (let y = n - 1; y >= 0; y--) if (tids[list[y]!] === tid) return list[y]!;
    return n > 0 ? list[n - 1]! : -1;
  };
}

/** The calls and operations owned by the instances `keep` accepts (indices into the instances rangeOwnership was given). */
export function selectOwned(c: TimelineColumns, own: RangeOwnership, keep: (instance: number) => boolean): TimelineColumns {
  const pick = (index: Int32Array, owner: Int32Array) => {
    const out = new Int32Array(index.length);
    let n = 0;
    for (let x = 0; x < index.length; x++) if (keep(owner[x]!)) out[n++] = index[x]!;
    return n === index.length ? index : out.slice(0, n);
  };
  // Indices ascending and distinct: as many as the rows means every row, in order, and the columns serve as they are.
  const select = <T extends TimelineColumns['ops'] | TimelineColumns['calls']>(cols: T, index: Int32Array): T =>
    index.length === cols.length ? cols : gather(cols, index);
  return { ops: select(c.ops, pick(own.ops, own.opOwner)), calls: select(c.calls, pick(own.calls, own.callOwner)) };
}

/**
 * Every instance's own operations, from one ownership pass (the iterations:
 * one pass for all rows, where selecting each alone would pass over every
 * operation once per instance). Its calls are not copied out: an iteration's
 * row is of its GPU work, and copying ten million calls' columns by instance
 * cost seconds.
 */
export function opsOfEachInstance(c: TimelineColumns, instances: RangeInstance[]): TimelineColumns['ops'][] {
  const own = rangeOwnership(c, instances);
  const { offset, order } = groupOrder(own.opOwner, instances.length);
  const ops = order.map((x) => own.ops[x]!);
  return instances.map((_, k) => gather(c.ops, ops.subarray(offset[k]!, offset[k + 1]!)));
}

/** What `instances` own together (rangeOwnership): the range scope of all of them, and the capture range's GPU work. */
export function selectRange(c: TimelineColumns, instances: RangeInstance[]): TimelineColumns {
  return selectOwned(c, rangeOwnership(c, instances), () => true);
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
