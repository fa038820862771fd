// The scope of a job analysed rank by rank (job.ts): the steady state's
// start-up cut and the span the scope's windows close on, found without
// loading every rank at once — from the zones (SCHEMA.md "Zones": per
// block of one stream's or thread's rows, their earliest start, latest
// end, row count and summed durations) and the few rows the zones cannot
// settle.
//
// Start-up (startup.ts) is one cut for the whole recording, as analyze()
// finds it: the last start-up call among those that start before the GPU
// has done a tenth of its work (WorkProgress.limitStart: a weighted
// quantile of the operations' starts, across every rank). So:
//
//  - the zones bound where a tenth is done: the work of the zones begun
//    by t is at least that of the operations begun by t, that of the zones
//    ended by t at most; it lies between the first zone start where the
//    former exceeds a tenth and the first zone end where the latter does
//    (the band);
//  - the calls that start by the band's end and could be start-up calls
//    (by their name's family, or lasting 1 ms or more) are read, the column
//    loader filtering them natively: a handful of some millions;
//  - only where one of them starts inside the band does it matter exactly
//    where a tenth is done: then the rows of the zones that reach into the
//    band are read (about one zone per stream) and those before it added
//    from their summed durations (tenthDoneAt, as startup.ts);
//  - start-up is found from those calls (startupOfCalls), and what it was
//    spent on from every call up to its end. The operations it left out are
//    counted by each rank (job.ts).
//
// The zones are the recording's own and every writer keeps them
// (SCHEMA.md), but a cut read from them is only as right as they are: the
// job analysis adds up every rank's work as it reads the ranks, and a
// total that differs from the zones' (or a row that ends before it starts,
// which the bounds do not hold for) makes it fall back to the whole
// recording's analysis (job.ts ZonesDisagree).
//
// What it reads of the recording it reads through load/startup.ts (the
// zones, then the rows they cannot settle): startupOfZones takes those
// reads, so it runs on zones and rows made by hand as well.
import { ColumnPool, type CallColumns, type RowRanges } from '../native/addon.ts';
import type { Db } from '../store/database.ts';
import { ZONED_TABLES } from '../store/zone-tables.ts';
import type { Startup } from '../contract/scope.ts';
import type { Ns } from '../contract/time.ts';
import { familiesByNameId } from '../cuda/call-families.ts';
import { startupReader, type StartupReader } from './load/startup.ts';

// Several recordings read as one, placed as a merge places them (job/job-cut.ts: a job's start-up from its ranks' files).
export { placedStartupReader } from './load/startup.ts';
import { callsSpan, type Zone } from './load/zones.ts';
import { SLOW_CALL_NS, STARTUP_FAMILIES, STARTUP_WORK_SHARE, startupOfCalls, tenthDoneAt } from './startup.ts';

// The span of the calls a whole or steady-state scope holds, from the zones: read by load/zones.ts.
export { callsSpan };

/** What the zones say of the GPU's work, for the check against the rows (job.ts). */
export interface ZoneWork {
  /** Summed durations of every kernel, and of every operation. */
  kernelNs: number;
  allNs: number;
  /** Rows of the three operation tables. */
  opRows: number;
}

export interface JobStartup {
  /** Start-up as analyze() finds it; `ops` 0 until the ranks are read (they count the operations before its end). */
  startup: Startup | null;
  zones: ZoneWork;
  /** Rows read besides the zones: operations of the band, calls before the cut. */
  rowsRead: { ops: number; calls: number };
  /** Where a tenth of the work is done (startup.ts WorkProgress), as far as the calls needed it: exactly where a call near it could be a start-up call (or `exact`), else the band's end. */
  limitStart: Ns;
}

const OP_TABLES = [ZONED_TABLES.kernels.id, ZONED_TABLES.memcpys.id, ZONED_TABLES.memsets.id];
const TABLE_KEY: Record<number, 'kernels' | 'memcpys' | 'memsets'> = {
  [ZONED_TABLES.kernels.id]: 'kernels',
  [ZONED_TABLES.memcpys.id]: 'memcpys',
  [ZONED_TABLES.memsets.id]: 'memsets',
};

/** The zones' id ranges as the loader takes them (flat, sorted, touching ranges joined). */
function rangesOf(zones: Zone[]): number[] {
  const sorted = zones.map((z) => [z.first, z.last] as const).sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [a, b] of sorted) {
    if (out.length && a <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, b);
    else out.push(a, b);
  }
  return out;
}

export interface JobStartupOptions {
  pool?: ColumnPool;
  /** Find where a tenth of the work is done from the band's rows whatever the calls (tests). */
  exact?: boolean;
}

/**
 * Start-up of the whole recording (startup.ts's rule, as analyze() finds
 * it on every column), from the zones and the rows they cannot settle, read
 * from `db` (its file `file`) into the options' pool, or a pool of its own.
 */
export function jobStartup(db: Db, file: string, meta: Map<string, string>, strings: Map<number, string>, options: JobStartupOptions = {}): JobStartup {
  return startupOfZones(startupReader(db, file, options.pool ?? new ColumnPool()), meta, strings, options);
}

/** Start-up of the whole recording, as jobStartup finds it, from what `read` reads. */
export function startupOfZones(
  read: StartupReader,
  meta: Map<string, string>,
  strings: Map<number, string>,
  options: Pick<JobStartupOptions, 'exact'> = {},
): JobStartup {
  const zones = read.zones(OP_TABLES);
  let kernelNs = 0;
  let allNs = 0;
  let opRows = 0;
  let firstOpStart = Infinity;
  for (const z of zones) {
    if (z.table === ZONED_TABLES.kernels.id) kernelNs += z.busy;
    allNs += z.busy;
    opRows += z.rows;
    if (z.rows > 0 && z.start < firstOpStart) firstOpStart = z.start;
  }
  const onlyKernels = kernelNs > 0;
  const totalWork = onlyKernels ? kernelNs : allNs;
  const limit = totalWork * STARTUP_WORK_SHARE;
  const counted = onlyKernels ? zones.filter((z) => z.table === ZONED_TABLES.kernels.id) : zones;
  const rowsRead = { ops: 0, calls: 0 };

  // Where a tenth of the work is done lies in [from, to]: from the first
  // zone start where the zones begun so far hold more than a tenth, to the
  // first zone end where the zones ended so far do.
  const thresholdOf = (key: 'start' | 'end') => {
    if (!(totalWork > 0)) return Infinity;
    const sorted = [...counted].sort((a, b) => a[key] - b[key]);
    let sum = 0;
    for (const z of sorted) {
      sum += z.busy;
      if (sum > limit) return z[key];
    }
    return Infinity;
  };
  const from = thresholdOf('start');
  const to = thresholdOf('end');

  // The calls that could be start-up calls (startup.ts: by their name's
  // family, or lasting 1 ms or more) among those that start by `to`, read
  // by the zones of the threads that start by then; in (start, id) order.
  const callZones = read.zones([ZONED_TABLES.api_calls.id]);
  let firstStart = firstOpStart;
  for (const z of callZones) if (z.rows > 0 && z.start < firstStart) firstStart = z.start;
  const callsUpTo = (upTo: Ns, only?: { callNames: number[]; callMinNs: number }): CallColumns => {
    const ranges = rangesOf(callZones.filter((z) => z.start <= upTo));
    const calls = read.calls(ranges, { ...(Number.isFinite(upTo) ? { maxStart: upTo } : {}), ...only });
    rowsRead.calls += calls.length;
    return calls;
  };
  const families = familiesByNameId(strings);
  const startupNames = [...strings.keys()].filter((id) => STARTUP_FAMILIES.has(families.family(id)));
  const candidates = callsUpTo(to, { callNames: startupNames, callMinNs: SLOW_CALL_NS });

  // Which of them start after a tenth of the work is done matters only for
  // those in [from, to]; where there are any, it is found exactly from the
  // rows of the zones that reach into the band, those before it adding their
  // summed durations.
  let limitStart = to;
  let inBand = false;
  for (let k = 0; k < candidates.length; k++) if (candidates.start[k]! >= from) inBand = true;
  if (inBand || (options.exact && totalWork > 0)) {
    let base = 0;
    const band: Zone[] = [];
    for (const z of counted) {
      if (z.end < from) base += z.busy;
      else if (z.start <= to) band.push(z);
    }
    // Each table's rows by the ranges of its band zones, of those zones only
    // (a range may hold other lanes' rows: zones of one lane only never
    // overlap), in start order.
    const ranges: RowRanges = {};
    const keep: RowRanges = {};
    for (const t of onlyKernels ? [ZONED_TABLES.kernels.id] : OP_TABLES) {
      const zs = band.filter((z) => z.table === t);
      ranges[TABLE_KEY[t]!] = rangesOf(zs);
      keep[TABLE_KEY[t]!] = zs.flatMap((z) => [z.lane, z.first, z.last]);
    }
    const ops = read.ops(ranges, keep);
    rowsRead.ops = ops.length;
    limitStart = tenthDoneAt(ops, onlyKernels, limit, totalWork, base);
  }
  const progress = { limitStart };
  let startup = startupOfCalls(candidates, read.names(candidates), meta, progress, firstStart);
  // What start-up was spent on: every call up to its end (its cut is the same from them).
  if (startup) {
    const calls = callsUpTo(startup.endNs);
    startup = startupOfCalls(calls, read.names(calls), meta, progress, firstStart);
  }
  return { startup, zones: { kernelNs, allNs, opRows }, rowsRead, limitStart };
}
