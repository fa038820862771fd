// What an analysis looks at. Every analysis — report, check, diff, the
// findings panel, the stats — runs on one scope, resolved here into the
// operations and calls it covers, so that they always agree on what they
// looked at:
//
//   steady-state (default)  everything after start-up (startup.ts)
//   whole                   the whole recording, start-up included
//   range NAME[#k]          the API calls and GPU work an NVTX range's
//                           instances own (all of them, or the k-th, from
//                           1): a call started while an instance was open
//                           on some thread of its process, and the
//                           operations it launched (rangeOwnership: whose
//                           instance, when several are open)
//   window FROM..TO         operations and calls that run in [FROM, TO)
//                           (ns from the recording's origin), clipped to
//                           it: a time range the user gave or dragged on
//                           the timeline (clipToWindow says what a clipped
//                           operation or call means to the diagnosis)
//
// The selection is made on the loaded columns before the analysis builds
// anything from them: a scope costs one pass over the columns (a range, a
// window: what started before it and still runs) or nothing at all (the
// steady state: a contiguous run of each start-ordered column, taken as
// views).
import type { Db } from '../store/database.ts';
import { rangeReader, type RangeReader } from './load/ranges.ts';
import { gather, lowerBound, sliceByStart, view, type Columns, type TimelineColumns } from '../native/columns.ts';
import { rangeOwnership, selectOwned, type RangeInstance, type RangeOwnership } from '../cuda/nvtx-ranges.ts';
import { kthSmallest } from './select.ts';
import { formatDuration, type Ns } from '../contract/time.ts';
import type { Scope, ScopeInfo, Startup } from '../contract/scope.ts';

/** A scope as the user wrote it is wrong for this recording (no such range, instance out of bounds, empty window). */
export class ScopeError extends Error {}

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
  /** For a range scope: what its notes are made of (a job adds its parts' up: job.ts). */
  facts?: RangeFacts;
  /** For a window: the operations it cut at its edges, what its note is made of (a job adds its parts' up). */
  clipped?: Clipped;
}

/**
 * Resolves `scope` on a recording's full columns (start order) and selects
 * what it covers, a range scope's instances read from `db` (load/ranges.ts),
 * as selectScopeWith does: for the callers above the analysis that hold a
 * file.
 */
export function selectScope(db: Db, file: string, scope: Scope, columns: TimelineColumns, startup: Startup | null, instances?: RangeInstance[]): Selection {
  return selectScopeWith(rangeReader(db), file, scope, columns, startup, instances);
}

/**
 * Resolves `scope` on a recording's full columns (start order) and selects
 * what it covers. `ranges`: the recording's NVTX ranges, read for a range
 * scope only (load/ranges.ts rangeReader). `file` names the recording in
 * errors. `instances`: a range scope's instances as the caller read them,
 * where it reads them for something else too — a recording being written
 * has more each time they are read, and the selection must be of the same
 * list.
 */
export function selectScopeWith(
  ranges: RangeReader,
  file: string,
  scope: Scope,
  columns: TimelineColumns,
  startup: Startup | null,
  instances?: RangeInstance[],
): Selection {
  switch (scope.kind) {
    // Whole and steady-state windows run to the recording's end, which the
    // trace knows once loaded (a pass over every end): closeWindows fills them.
    case 'whole':
      return { columns, info: { kind: 'whole', label: 'whole recording, start-up included', windows: [], startup } };
    case 'steady-state':
      return { columns: startup ? sliceByStart(columns, startup.endNs, Infinity) : columns, info: steadyStateInfo(startup) };
    case 'window': {
      const { startNs, endNs } = scope;
      if (!(Number.isFinite(startNs) && Number.isFinite(endNs)) || endNs <= startNs) {
        throw new ScopeError(`${file}: the time range ${startNs}..${endNs} ns is empty (the end must be after the start)`);
      }
      const { columns: inside, clipped } = clipToWindow(columns, startNs, endNs);
      return {
        columns: inside,
        clipped,
        info: { kind: 'window', label: windowLabel(startNs, endNs), windows: [{ startNs, endNs }], startup, ...windowNotes(clipped) },
      };
    }
    case 'range': {
      const all = instances ?? ranges.instances(scope.name);
      if (all.length === 0) throw new ScopeError(`${file}: no NVTX range named '${scope.name}'${ranges.known()}`);
      if (scope.instance !== undefined && scope.instance > all.length) {
        throw new ScopeError(`${file}: NVTX range '${scope.name}' has ${all.length} instance${all.length > 1 ? 's' : ''}; #${scope.instance} does not exist`);
      }
      // One instance is what it owns among all of them: another thread's
      // instance of the range may claim work launched while this one is open.
      const chosen = scope.instance !== undefined ? [all[scope.instance - 1]!] : all;
      const own = rangeOwnership(columns, all);
      const which = scope.instance !== undefined ? scope.instance - 1 : -1;
      const label =
        scope.instance !== undefined
          ? `NVTX range '${scope.name}' #${scope.instance} of ${all.length}`
          : `NVTX range '${scope.name}' (${all.length} instance${all.length > 1 ? 's' : ''})`;
      const facts = rangeFacts(columns, all, own, which, startup);
      const notes = columns.ops.length > 0 ? rangeNotes(facts, which, all) : [];
      return {
        facts,
        columns: selectOwned(columns, own, which < 0 ? () => true : (x) => x === which),
        info: {
          kind: 'range',
          label,
          startup,
          windows: chosen.map((r) => ({ startNs: r.startNs, endNs: r.endNs })),
          range: { name: scope.name, instances: all.length, ...(scope.instance !== undefined ? { instance: scope.instance } : {}) },
          ...(notes.length ? { notes } : {}),
        },
      };
    }
  }
}

/**
 * What a range scope's notes are made of, counted on the columns it was
 * selected from: where those are one rank's of a job (job.ts), the parts'
 * facts add up (mergeRangeFacts) to the whole recording's.
 */
export interface RangeFacts {
  /** The scope's operations that start before start-up's end, and their GPU time (ns). */
  inStartup: { ops: number; ns: number };
  /** Operations of the steady state, and those of them the scope holds (all instances only; else 0). */
  steady: { ops: number; ns: number };
  owned: { ops: number; ns: number };
  /** Per instance (rangeInstances' order): the first start and last end of the operations it owns (±Infinity: none). */
  first: Float64Array;
  last: Float64Array;
}

/** The facts of a range scope: the instance `which` (from 0), or all of them (-1). */
export function rangeFacts(c: TimelineColumns, all: RangeInstance[], own: RangeOwnership, which: number, startup: Startup | null): RangeFacts {
  const cut = startup ? startup.endNs : -Infinity;
  const facts: RangeFacts = {
    inStartup: { ops: 0, ns: 0 },
    steady: { ops: 0, ns: 0 },
    owned: { ops: 0, ns: 0 },
    first: new Float64Array(all.length).fill(Infinity),
    last: new Float64Array(all.length).fill(-Infinity),
  };
  for (let x = 0; x < own.ops.length; x++) {
    const i = own.ops[x]!;
    const o = own.opOwner[x]!;
    const start = c.ops.start[i]!;
    const end = c.ops.end[i]!;
    if (start < facts.first[o]!) facts.first[o] = start;
    if (end > facts.last[o]!) facts.last[o] = end;
    if (which >= 0 && o !== which) continue;
    const add = start < cut ? facts.inStartup : facts.owned;
    add.ops++;
    add.ns += end - start;
  }
  if (which < 0) {
    for (let i = lowerBound(c.ops.start, c.ops.length, cut); i < c.ops.length; i++) {
      facts.steady.ops++;
      facts.steady.ns += c.ops.end[i]! - c.ops.start[i]!;
    }
  }
  return facts;
}

/** The facts of a job's parts together (each part holds other processes' rows; the instances are the recording's). */
export function mergeRangeFacts(parts: RangeFacts[]): RangeFacts | null {
  if (parts.length === 0) return null;
  const sum = (a: { ops: number; ns: number }, b: { ops: number; ns: number }) => ({ ops: a.ops + b.ops, ns: a.ns + b.ns });
  return parts.reduce((a, b) => ({
    inStartup: sum(a.inStartup, b.inStartup),
    steady: sum(a.steady, b.steady),
    owned: sum(a.owned, b.owned),
    first: a.first.map((v, x) => Math.min(v, b.first[x]!)),
    last: a.last.map((v, x) => Math.max(v, b.last[x]!)),
  }));
}

/**
 * Why a range scope's answer may differ from the steady state's or from
 * the other instances', said with it (ScopeInfo.notes): start-up inside it
 * (the steady state leaves that out), the steady state's work no instance
 * owns (its findings are not this scope's), a warm-up instance (its
 * one-time work weighs in its findings). `which`: the instance (from 0),
 * or -1 for all. Nothing where nothing was loaded (a job's scope before its
 * ranks are read).
 */
export function rangeNotes(facts: RangeFacts, which: number, all: RangeInstance[] | null = null): string[] {
  const notes: string[] = [];
  const { inStartup, steady, owned } = facts;
  if (inStartup.ops > 0) {
    notes.push(`${operations(inStartup.ops)} of it (${formatDuration(inStartup.ns)} of GPU time) ran during start-up, which the steady state leaves out`);
  }
  if (which < 0 && steady.ops > owned.ops) {
    notes.push(
      `${operations(steady.ops - owned.ops)} of the steady state (${formatDuration(steady.ns - owned.ns)} of GPU time) belong to no instance ` +
        '(launched before the first, between instances or after the last): what the steady state finds there is not in this scope',
    );
  }
  if (which >= 0) {
    // Among its own process's instances, as the iterations flag warm-up: a job's ranks each warm up.
    const lengths = instanceLengths(facts, all);
    const own = all ? lengths.flatMap((_, x) => (all[x]!.pid === all[which]!.pid ? [x] : [])) : lengths.map((_, x) => x);
    const ownLengths = own.map((x) => lengths[x]!);
    const at = own.indexOf(which);
    if (at < warmUpCount(ownLengths)) {
      notes.push(
        `a warm-up instance: its GPU span, ${formatDuration(lengths[which]!)}, is over ${WARM_UP_FACTOR} × the median of the instances after it ` +
          `(${formatDuration(median(ownLengths.slice(at + 1)))}): one-time work (loading, initialisation, allocator growth) weighs in its findings`,
      );
    }
  }
  return notes;
}

/** "1 operation", "1,234 operations". */
function operations(n: number): string {
  return `${n.toLocaleString('en-US')} operation${n === 1 ? '' : 's'}`;
}

/** Leading instances this much slower than the median of those after them are warm-up. */
export const WARM_UP_FACTOR = 1.5;

/**
 * Each instance's length as the iterations measure it (iterations.ts
 * lengthNs): the GPU span of the operations it owns, first start to last
 * end, or its own length where it owns none (0 where `all` is not given).
 */
function instanceLengths(facts: RangeFacts, all: RangeInstance[] | null): number[] {
  return Array.from(facts.first, (first, x) => (Number.isFinite(first) ? facts.last[x]! - first : all ? all[x]!.endNs - all[x]!.startNs : 0));
}

/**
 * How many leading instances are warm-up: from the first, without a gap,
 * each longer than WARM_UP_FACTOR × the median of those after it (JIT,
 * cuBLAS/cuDNN initialisation, allocator growth). The last is never.
 */
export function warmUpCount(lengths: number[]): number {
  let warm = 0;
  while (warm < lengths.length - 1) {
    if (lengths[warm]! > WARM_UP_FACTOR * median(lengths.slice(warm + 1))) warm++;
    else break;
  }
  return warm;
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const v = Float64Array.from(values);
  const k = (v.length - 1) >> 1;
  const lo = kthSmallest(v, k);
  return v.length % 2 ? lo : (lo + kthSmallest(v, k + 1)) / 2;
}

/** A window that cut operations says so: their numbers are the part inside it (clipToWindow). */
export function windowNotes(clipped: Clipped): Pick<ScopeInfo, 'notes'> {
  if (clipped.ops === 0) return {};
  return {
    notes: [
      `${operations(clipped.ops)} ran across its edges (${formatDuration(clipped.ns)} of GPU time, ${formatDuration(clipped.keptNs)} of it inside): ` +
        'only the part inside is analysed',
    ],
  };
}

/** Open ends (--from or --to alone) are ±MAX_SAFE_INTEGER. */
function windowLabel(startNs: Ns, endNs: Ns): string {
  const open = Number.MAX_SAFE_INTEGER;
  if (startNs <= -open) return `up to ${formatDuration(endNs)}`;
  if (endNs >= open) return `from ${formatDuration(startNs)} on`;
  return `${formatDuration(startNs)} to ${formatDuration(endNs)}`;
}

/** The steady state's scope after `startup` (none: the whole recording), its windows not yet closed (closeWindows). */
export function steadyStateInfo(startup: Startup | null): ScopeInfo {
  const label = startup
    ? `steady state, after ${formatDuration(startup.endNs - startup.startNs)} of start-up`
    : 'steady state (no start-up detected: the whole recording)';
  return { kind: 'steady-state', label, windows: [], startup };
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

/**
 * The operations and calls that run in [from, to), clipped to it: those
 * that start in it, and those that started before and still run at
 * `from` (a long copy, a synchronize the host sits in), their start moved
 * to `from`; any that runs past `to` ends there. A window is what the user
 * looked at, so everything in it is analysed as the part of it that ran
 * there — a window inside a 50 ms copy holds that copy, not nothing:
 *
 *  - an operation keeps what it is: a clipped pageable copy is still
 *    pageable and async (detail, isAsync), so it is still found and pinned
 *    by the what-if; a kernel keeps its grid. Its bytes are counted pro
 *    rata to the time kept, so its bandwidth (bytes / time) is the one
 *    measured and what pinning would save is the window's share;
 *  - a call keeps what it is too: a clipped cudaMemcpy, synchronize or
 *    pageable cudaMemcpyAsync still holds its thread, for the part of it
 *    in the window (the GPU idle while it does is measured there), and it
 *    still launched the operation with its correlation id;
 *  - a call that ended before `from` is not in the window, though an
 *    operation it launched runs there: that operation has no launch in
 *    scope, as one that starts in the window after a launch before it
 *    always had;
 *  - durations, busy time, overlap and counts are the window's: an
 *    operation across its edge is counted once in each window it reaches.
 *
 * Row ids, correlation ids and every other column are kept, so evidence
 * still names the stored rows. Views where nothing needs clipping (no
 * copy: the common case of a window over many short operations); views
 * with the clipped columns copied where the rows kept are contiguous (those
 * in flight at `from` just before the rest); else copies in start order:
 * the clipped starts are `from`, the earliest.
 */
export function clipToWindow(c: TimelineColumns, from: number, to: number): { columns: TimelineColumns; clipped: Clipped } {
  const clipped: Clipped = { ops: 0, ns: 0, keptNs: 0 };
  return { columns: { ops: clipRows(c.ops, from, to, clipped), calls: clipRows(c.calls, from, to, null) }, clipped };
}

/** The operations a window cut (clipToWindow): how many, their GPU time, and the part of it inside. */
export interface Clipped {
  ops: number;
  ns: number;
  keptNs: number;
}

/**
 * Rows lo..to as views but for the columns the clip writes (start, end,
 * bytes), copied: where the rows kept are contiguous, as where the ones
 * still running at the window's start are those just before it (the op or
 * call in flight then). A copy of every column was ~0.25 s of a window's
 * analysis at 10 M operations.
 */
function clippedView<T extends Columns>(c: T, lo: number, to: number): T {
  const out = view(c, lo, to) as unknown as Record<string, Float64Array>;
  for (const key of ['start', 'end', 'bytes']) if (out[key]) out[key] = out[key].slice();
  return out as unknown as T;
}

/** The rows a window keeps: those still running at its start (`before`), then first..last. */
function keptRows(before: number[], first: number, last: number): Int32Array {
  const index = new Int32Array(before.length + last - first);
  index.set(before);
  for (let i = first; i < last; i++) index[before.length + i - first] = i;
  return index;
}

function clipRows<T extends Columns>(c: T, from: number, to: number, clipped: Clipped | null): T {
  const first = lowerBound(c.start, c.length, from);
  const last = lowerBound(c.start, c.length, to);
  // Ends are in no order: one that started long before may still be running.
  const before: number[] = [];
  for (let i = 0; i < first; i++) if (c.end[i]! > from) before.push(i);
  let pastEnd = false;
  for (let i = first; i < last && !pastEnd; i++) pastEnd = c.end[i]! > to;
  if (before.length === 0 && !pastEnd) return view(c, first, last);
  const out =
    before.length === 0 || before[0] === first - before.length ? clippedView(c, first - before.length, last) : gather(c, keptRows(before, first, last));
  const bytes = 'bytes' in out ? out.bytes : null;
  for (let x = 0; x < out.length; x++) {
    const start = out.start[x]!;
    const end = out.end[x]!;
    const kept = Math.min(end, to) - Math.max(start, from);
    if (start >= from && end <= to) continue;
    if (bytes && end > start) bytes[x] = Math.round((bytes[x]! * kept) / (end - start));
    if (clipped) {
      clipped.ops++;
      clipped.ns += end - start;
      clipped.keptNs += kept;
    }
    out.start[x] = Math.max(start, from);
    out.end[x] = Math.min(end, to);
  }
  return out;
}
