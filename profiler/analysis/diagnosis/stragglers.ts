// Stragglers (issue 13, part 4): per NCCL collective instance across ranks,
// how far apart the ranks arrived (arrival skew = latest start − earliest
// start), which rank arrived last, and how long the others sat in the
// collective waiting for it; per rank, how often it was last and the wait
// it caused; and the rank that holds the job back, when one does.
//
// Input: one recording holding several ranks — a job merged by `streamscope
// merge` (clocks aligned by the collectives' ends: merge/align.ts), or one
// recorder over a single-node torchrun — and its processes' ranks
// (readProcessFacts). A rank is a process on a GPU, as NCCL counts them.
//
// Matching. The same instance on every rank is found by its order
// (collective-order.ts, the rule merge aligns clocks with: the n-th kernel
// of a collective on each rank's s-th stream that runs collectives). Then,
// so that nothing is guessed silently:
//
//  - Leading edge. A scope that starts mid-job and cuts by start time (the
//    steady state) has an instance whose ranks started on either side of
//    the cut in the scope on some ranks only, and the order would be off by
//    one from there on. (A time window keeps what still runs at its start,
//    clipped: an instance under way there is in on every rank.) Every
//    instance ends at nearly the same moment on every rank (the last data
//    arrives; merge's premise), so per stream and collective each rank
//    starts at its kernel whose end is nearest the latest first end among
//    the ranks; the kernels before it are counted (gaps.leadingKernels).
//  - An instance some ranks of its stream and collective lack (a recording
//    that ends early, the scope's end, dropped records) is counted, not
//    analysed (gaps.partialInstances).
//  - An instance whose kernels do not end together — further apart than
//    END_SLACK_NS or END_SHARE of its shortest kernel, whichever is more —
//    is not one collective: several communicators numbered alike (tensor
//    and data parallel groups: ranks of different groups get the same
//    names), or clocks left unaligned. Counted (gaps.unsynchronizedInstances),
//    left out of every number. (A rank's kernel that arrives last is the
//    shortest: it waits for no one; the others' end with it.)
//  - Send/receive kernels are point-to-point (pipeline stages, all-to-all):
//    two ranks at a time, not a collective of all; counted, not analysed.
//
// Per analysed instance: skew = latest start − earliest start; the last
// rank (ties: one of them; none when all start at once); wait = Σ over the
// ranks of (latest start − its start), the time they sat in the collective
// waiting.
//
// The straggler is the rank last at the most instances (a tie names none),
// when all of these hold:
//  - at least MIN_INSTANCES instances were analysed;
//  - it was last at LAST_SHARE (half) or more of the instances it took part in;
//  - that is no chance: with every rank equally likely to be last (p = 1 /
//    ranks), arriving last that often or more has a probability ≤ CHANCE
//    (binomial tail; with two ranks one of them is last half the time
//    whatever happens, so a share alone would name one);
//  - it causes most of the waiting: the wait it caused is MOST_WAIT (half)
//    or more of all the wait in the analysed instances, whoever caused it;
//  - it is late by more than clocks can be wrong: MIN_LATE_NS on average
//    when last (clocks merged from several hosts keep a residual of a few
//    µs: a rank "last" by less may be last only by its host's clock).
// Whether it matters is the finding's severity (findings/straggler.ts: the
// wait per other rank against the GPU span), not whether it is named: a rank
// last at 8 of 11 collectives and causing 73% of the wait went unnamed when
// the wait was 4.7% of the others' time in them (the rule then asked for 5%);
// a data-parallel job on two H200s, the same program on both ranks, has
// rank 1 last at 73 of 98 all-reduces, named at 'info' for the little it
// costs; a rank made slower on purpose is an error (test/fixtures/ddp).
//
// Speed: one pass over the operations' columns (only if an NCCL kernel name
// exists), work per NCCL kernel in typed arrays, none per other operation.
import { COLLECTIVES, type Collective } from '../../contract/communication.ts';
import type { CollectiveInstance, CollectiveSkew, StragglerParticipant, StragglerRank, Stragglers } from '../../contract/stragglers.ts';
import { COLLECTIVE_CODE, CollectiveNumbering } from '../../cuda/collective-order.ts';
import { commKernelOf } from '../../cuda/nccl.ts';
import type { ProcessFacts } from '../communication.ts';
import { IdTable } from '../../base/id-table.ts';
import type { Context } from './findings/context.ts';
import { gpuOrdinals, OpKind, type Trace } from '../trace.ts';

/** Ends of one instance's kernels may lie this far apart (clocks merged from several hosts keep a residual of microseconds) … */
export const END_SLACK_NS = 50_000;
/** … or this share of its shortest kernel, whichever is more. */
export const END_SHARE = 0.5;
export const MIN_INSTANCES = 3;
export const LAST_SHARE = 0.5;
export const CHANCE = 0.01;
export const MOST_WAIT = 0.5;
export const MIN_LATE_NS = 5_000;
/** Instances kept in Stragglers.worst. */
const WORST = 10;

const SEND_RECV = COLLECTIVE_CODE.get('send-recv')!;
const C = COLLECTIVES.length;

export function noStragglers(): Stragglers {
  return {
    present: false,
    ranks: [],
    instances: 0,
    collectives: [],
    worst: [],
    gaps: { partialInstances: 0, partialKernels: 0, leadingKernels: 0, unsynchronizedInstances: 0, pointToPointKernels: 0 },
    straggler: null,
  };
}

const codesOfStrings = new WeakMap<Map<number, string>, IdTable | null>();

/**
 * Collective code (COLLECTIVE_CODE) of each kernel name id, −1 for names
 * that are not NCCL's; null when no name is. Once per strings table: every
 * scope of a file shares it (readTraceTables), and `report --iterations`
 * diagnoses each instance of a range.
 */
function collectiveCodes(trace: Trace): IdTable | null {
  const known = codesOfStrings.get(trace.strings);
  if (known !== undefined) return known;
  const codes = readCodes(trace);
  codesOfStrings.set(trace.strings, codes);
  return codes;
}

function readCodes(trace: Trace): IdTable | null {
  const code = IdTable.of(trace.strings.keys(), -1);
  let any = false;
  for (const [id, value] of trace.strings) {
    // commKernelOf needs a function name starting with 'nccl': most strings are skipped without parsing.
    if (!value.includes('nccl')) continue;
    const k = commKernelOf(value);
    if (!k) continue;
    code.set(id, COLLECTIVE_CODE.get(k.collective)!);
    any = true;
  }
  return any ? code : null;
}

/** A stream and collective's instances: op index of rank r's instance n at n * R + r (−1: none). */
interface Series {
  stream: number;
  collective: number;
  counts: Int32Array;
  ops: Int32Array;
  /** Per rank, its first instance (after the leading edge). */
  first: Int32Array;
}

/** The stragglers of a trace of several ranks (as the header says); `processes`: readProcessFacts, to name the ranks. Nothing present for one rank. */
export function stragglersOf(trace: Trace, processes: ReadonlyMap<number, ProcessFacts>): Stragglers {
  const codes = collectiveCodes(trace);
  if (!codes) return noStragglers();
  const kernels = collectiveKernels(trace, codes);
  const R = kernels.participants.length;
  if (R < 2) return { ...noStragglers(), gaps: { ...noStragglers().gaps, pointToPointKernels: kernels.pointToPoint } };
  const measures = new InstanceMeasures(trace, R);
  for (const s of seriesOf(kernels, R).values()) measures.measureSeries(s);
  const named = namedParticipants(trace, kernels.participants, processes);
  const order = rankOrder(named);
  const ranks = rankRows(order, named, measures);
  const { analysed } = measures;
  return {
    present: analysed > 0,
    ranks,
    instances: analysed,
    collectives: collectiveRows(measures),
    worst: worstInstances(trace, measures.worst, order, kernels.participants),
    gaps: {
      partialInstances: measures.partialInstances,
      partialKernels: measures.partialKernels,
      leadingKernels: measures.leadingKernels,
      unsynchronizedInstances: measures.unsynchronized,
      pointToPointKernels: kernels.pointToPoint,
    },
    straggler: pickStraggler(ranks, analysed),
  };
}

/** Every collective kernel of a trace, in start order: its op, rank, series (s * C + collective) and n; the ranks met; the point-to-point kernels left out. */
interface CollectiveKernels {
  participants: { pid: number; deviceId: number }[];
  kOp: number[];
  kRank: number[];
  kSeries: number[];
  kN: number[];
  pointToPoint: number;
}

/** The collective kernels, each named (rank, series, n) by the order merge aligns clocks with (CollectiveNumbering). */
function collectiveKernels(trace: Trace, codes: IdTable): CollectiveKernels {
  const { ops } = trace;
  const { kind, detail, pid, device, stream } = ops;
  const rankOfKey = new Map<number, number>();
  const out: CollectiveKernels = { participants: [], kOp: [], kRank: [], kSeries: [], kN: [], pointToPoint: 0 };
  const numbering = new CollectiveNumbering();
  let lastKey = NaN;
  let lastRank = -1;
  for (let i = 0; i < ops.length; i++) {
    if (kind[i] !== OpKind.Kernel) continue;
    const c = codes.get(detail[i]!);
    if (c < 0) continue;
    if (c === SEND_RECV) {
      out.pointToPoint++;
      continue;
    }
    // Devices are few (ids well under 2^16); pids under 2^22: the key is exact.
    const key = pid[i]! * 65536 + device[i]!;
    if (key !== lastKey) {
      let r = rankOfKey.get(key);
      if (r === undefined) {
        rankOfKey.set(key, (r = out.participants.length));
        out.participants.push({ pid: pid[i]!, deviceId: device[i]! });
      }
      lastKey = key;
      lastRank = r;
    }
    const n = numbering.next(lastRank, stream[i]!, c);
    out.kOp.push(i);
    out.kRank.push(lastRank);
    out.kSeries.push(numbering.stream * C + c);
    out.kN.push(n);
  }
  return out;
}

/** Per series, each rank's kernels by n. */
function seriesOf(kernels: CollectiveKernels, R: number): Map<number, Series> {
  const { kOp, kRank, kSeries, kN } = kernels;
  const series = new Map<number, Series>();
  for (let k = 0; k < kOp.length; k++) {
    let s = series.get(kSeries[k]!);
    if (!s)
      series.set(
        kSeries[k]!,
        (s = { stream: Math.floor(kSeries[k]! / C), collective: kSeries[k]! % C, counts: new Int32Array(R), ops: new Int32Array(0), first: new Int32Array(R) }),
      );
    s.counts[kRank[k]!]!++;
  }
  for (const s of series.values()) {
    let most = 0;
    for (let r = 0; r < R; r++) if (s.counts[r]! > most) most = s.counts[r]!;
    s.ops = new Int32Array(most * R).fill(-1);
  }
  for (let k = 0; k < kOp.length; k++) series.get(kSeries[k]!)!.ops[kN[k]! * R + kRank[k]!] = kOp[k]!;
  return series;
}

/** One of the worst instances by wait: its series and number after the leading edge. */
interface WorstInstance {
  waitNs: number;
  s: Series;
  m: number;
  skewNs: number;
  last: number;
}

/**
 * Each instance measured across ranks, series by series, and what the
 * measures add up to: per rank, per collective, the instances left out and
 * why, the stretch of the run the analysed ones cover, the worst. Work per
 * NCCL kernel in typed arrays; the span of the instance being measured is
 * kept in fields, not an object per instance.
 */
class InstanceMeasures {
  // Per rank.
  readonly instances: Float64Array;
  readonly last: Float64Array;
  readonly caused: Float64Array;
  readonly waited: Float64Array;
  readonly collective: Float64Array;
  readonly late: Float64Array;
  readonly skewLast: Float64Array;
  readonly skewLastMax: Float64Array;
  // Per collective.
  readonly collectiveInstances = new Float64Array(C);
  readonly collectiveSkew = new Float64Array(C);
  readonly collectiveSkewMax = new Float64Array(C);
  readonly collectiveWait = new Float64Array(C);
  partialInstances = 0;
  partialKernels = 0;
  leadingKernels = 0;
  unsynchronized = 0;
  analysed = 0;
  /** The worst WORST instances by wait, most first. */
  readonly worst: WorstInstance[] = [];

  private readonly R: number;
  private readonly start: Float64Array;
  private readonly end: Float64Array;
  /** The ranks of the series being measured. */
  private readonly members: number[] = [];
  // The span of the instance being measured: its ranks present, earliest and latest start (the last rank), ends, shortest kernel.
  private present = 0;
  private minStart = Infinity;
  private maxStart = -Infinity;
  private lastR = -1;
  private minEnd = Infinity;
  private maxEnd = -Infinity;
  private minDur = Infinity;

  constructor(trace: Trace, R: number) {
    this.R = R;
    this.start = trace.ops.start;
    this.end = trace.ops.end;
    this.instances = new Float64Array(R);
    this.last = new Float64Array(R);
    this.caused = new Float64Array(R);
    this.waited = new Float64Array(R);
    this.collective = new Float64Array(R);
    this.late = new Float64Array(R);
    this.skewLast = new Float64Array(R);
    this.skewLastMax = new Float64Array(R);
  }

  /** Every instance of series s. */
  measureSeries(s: Series): void {
    const { members } = this;
    members.length = 0;
    for (let r = 0; r < this.R; r++) if (s.counts[r]! > 0) members.push(r);
    const instances = this.leadingEdge(s);
    for (let m = 0; m < instances; m++) {
      this.spanOf(s, m);
      if (this.present < members.length || members.length < 2) {
        this.partialInstances++;
        this.partialKernels += this.present;
      } else if (this.maxEnd - this.minEnd > Math.max(END_SLACK_NS, END_SHARE * this.minDur)) this.unsynchronized++;
      else this.analyse(s, m);
    }
  }

  /** Each rank's first instance of series s: its kernel ending nearest the latest first end (s.first); returns the instances after the edge. */
  private leadingEdge(s: Series): number {
    const { end, R } = this;
    let firstEnd = -Infinity;
    for (const r of this.members) firstEnd = Math.max(firstEnd, end[s.ops[r]!]!);
    let instances = 0;
    for (const r of this.members) {
      let f = 0;
      while (f + 1 < s.counts[r]! && Math.abs(end[s.ops[(f + 1) * R + r]!]! - firstEnd) < Math.abs(end[s.ops[f * R + r]!]! - firstEnd)) f++;
      s.first[r] = f;
      this.leadingKernels += f;
      instances = Math.max(instances, s.counts[r]! - f);
    }
    return instances;
  }

  /** The span of instance m of series s, over the ranks that have it. */
  private spanOf(s: Series, m: number): void {
    const { start, end, R } = this;
    this.present = 0;
    this.minStart = this.minEnd = this.minDur = Infinity;
    this.maxStart = this.maxEnd = -Infinity;
    this.lastR = -1;
    for (const r of this.members) {
      const n = s.first[r]! + m;
      if (n >= s.counts[r]!) continue;
      this.present++;
      const i = s.ops[n * R + r]!;
      const a = start[i]!;
      const b = end[i]!;
      if (a < this.minStart) this.minStart = a;
      if (a > this.maxStart) {
        this.maxStart = a;
        this.lastR = r;
      }
      if (b < this.minEnd) this.minEnd = b;
      if (b > this.maxEnd) this.maxEnd = b;
      if (b - a < this.minDur) this.minDur = b - a;
    }
  }

  /** Instance m of series s, present on every rank and ending together: its skew, the wait of each rank, the last one. */
  private analyse(s: Series, m: number): void {
    const { start, end, R, minStart, maxStart, lastR } = this;
    this.analysed++;
    const skew = maxStart - minStart;
    let wait = 0;
    for (const r of this.members) {
      const i = s.ops[(s.first[r]! + m) * R + r]!;
      wait += maxStart - start[i]!;
      this.instances[r]!++;
      this.waited[r]! += maxStart - start[i]!;
      this.collective[r]! += end[i]! - start[i]!;
      this.late[r]! += start[i]! - minStart;
    }
    // All arriving at once (skew 0), none is last.
    if (skew > 0) {
      this.last[lastR]!++;
      this.caused[lastR]! += wait;
      this.skewLast[lastR]! += skew;
      if (skew > this.skewLastMax[lastR]!) this.skewLastMax[lastR] = skew;
    }
    const c = s.collective;
    this.collectiveInstances[c]!++;
    this.collectiveSkew[c]! += skew;
    this.collectiveWait[c]! += wait;
    if (skew > this.collectiveSkewMax[c]!) this.collectiveSkewMax[c] = skew;
    this.keepIfWorst(wait, s, m, skew, lastR);
  }

  /** The worst WORST instances by wait (none without one): an object only for one that enters the list. */
  private keepIfWorst(wait: number, s: Series, m: number, skew: number, last: number): void {
    const { worst } = this;
    if (wait > 0 && (worst.length < WORST || wait > worst[worst.length - 1]!.waitNs)) {
      if (worst.length === WORST) worst.pop();
      let p = worst.length;
      while (p > 0 && worst[p - 1]!.waitNs < wait) p--;
      worst.splice(p, 0, { waitNs: wait, s, m, skewNs: skew, last });
    }
  }
}

/** Each participant named: its rank, world size and host from its process's facts, its GPU's ordinal. */
function namedParticipants(
  trace: Trace,
  participants: CollectiveKernels['participants'],
  processes: ReadonlyMap<number, ProcessFacts>,
): StragglerParticipant[] {
  const gpu = gpuOrdinals(trace.devices);
  return participants.map((p) => {
    const f = processes.get(p.pid);
    return { pid: p.pid, rank: f?.rank ?? null, worldSize: f?.worldSize ?? null, host: f?.host ?? null, deviceId: p.deviceId, gpu: gpu(p.deviceId) };
  });
}

/** The participants' indexes in the order they are shown: by rank, then pid, then GPU. */
function rankOrder(named: StragglerParticipant[]): number[] {
  return [...named.keys()].sort(
    (x, y) => (named[x]!.rank ?? Infinity) - (named[y]!.rank ?? Infinity) || named[x]!.pid - named[y]!.pid || named[x]!.gpu - named[y]!.gpu,
  );
}

/** Each rank's row, in `order`. */
function rankRows(order: number[], named: StragglerParticipant[], measures: InstanceMeasures): StragglerRank[] {
  return order.map((r) => {
    const n = measures.instances[r]!;
    const last = measures.last[r]!;
    return {
      ...named[r]!,
      instances: n,
      lastCount: last,
      causedWaitNs: measures.caused[r]!,
      waitedNs: measures.waited[r]!,
      collectiveNs: measures.collective[r]!,
      meanLateNs: n > 0 ? measures.late[r]! / n : 0,
      meanSkewWhenLastNs: last > 0 ? measures.skewLast[r]! / last : null,
      maxSkewWhenLastNs: last > 0 ? measures.skewLastMax[r]! : null,
    };
  });
}

/** Each collective with an analysed instance, the most wait first. */
function collectiveRows(measures: InstanceMeasures): CollectiveSkew[] {
  const collectives: CollectiveSkew[] = [];
  for (let c = 0; c < C; c++) {
    const n = measures.collectiveInstances[c]!;
    if (n === 0) continue;
    collectives.push({
      collective: COLLECTIVES[c]!,
      instances: n,
      meanSkewNs: measures.collectiveSkew[c]! / n,
      maxSkewNs: measures.collectiveSkewMax[c]!,
      waitNs: measures.collectiveWait[c]!,
    });
  }
  return collectives.sort((a, b) => b.waitNs - a.waitNs);
}

/** The worst instances, each with its ranks' kernels in `order`. */
function worstInstances(trace: Trace, worst: WorstInstance[], order: number[], participants: CollectiveKernels['participants']): CollectiveInstance[] {
  const { rowId, start, end } = trace.ops;
  const R = participants.length;
  return worst.map(({ waitNs, s, m, skewNs, last }) => {
    const rs = order.filter((r) => s.counts[r]! > 0);
    return {
      collective: COLLECTIVES[s.collective]! as Collective,
      stream: s.stream,
      n: m,
      skewNs,
      waitNs,
      last: rs.indexOf(last),
      ranks: rs.map((r) => {
        const i = s.ops[(s.first[r]! + m) * R + r]!;
        return { pid: participants[r]!.pid, deviceId: participants[r]!.deviceId, kernelId: rowId[i]!, startNs: start[i]!, endNs: end[i]! };
      }),
    };
  });
}

/** The straggler by the rules in the header, or null. */
function pickStraggler(ranks: StragglerRank[], analysed: number): Stragglers['straggler'] {
  if (analysed < MIN_INSTANCES || ranks.length < 2) return null;
  let best = -1;
  let tied = false;
  ranks.forEach((r, x) => {
    if (best < 0 || r.lastCount > ranks[best]!.lastCount) {
      best = x;
      tied = false;
    } else if (r.lastCount === ranks[best]!.lastCount) tied = true;
  });
  const r = ranks[best]!;
  if (tied || r.instances === 0 || r.lastCount < LAST_SHARE * r.instances) return null;
  const chance = binomialTail(r.instances, r.lastCount, 1 / ranks.length);
  if (chance > CHANCE) return null;
  const allWaitNs = ranks.reduce((t, o) => t + o.causedWaitNs, 0);
  if (r.causedWaitNs <= 0 || r.causedWaitNs < MOST_WAIT * allWaitNs) return null;
  if ((r.meanSkewWhenLastNs ?? 0) < MIN_LATE_NS) return null;
  const othersNs = ranks.reduce((t, o) => t + o.collectiveNs, 0) - r.collectiveNs;
  const waitShare = othersNs > 0 ? r.causedWaitNs / othersNs : 0;
  const { pid, rank, worldSize, host, deviceId, gpu, lastCount, instances, causedWaitNs } = r;
  return { pid, rank, worldSize, host, deviceId, gpu, lastCount, instances, causedWaitNs, waitShare, chance };
}

/** P(X ≥ k) for X ~ Binomial(n, p), in log space (n may be a million). */
export function binomialTail(n: number, k: number, p: number): number {
  if (k <= 0 || p >= 1) return 1;
  if (k > n || p <= 0) return 0;
  // Summed from the end nearer the mean outwards, where the terms fall: the upper tail above the mean, else 1 − the lower tail.
  return k >= n * p ? tailSum(n, k, p, 1) : 1 - tailSum(n, k - 1, p, -1);
}

/** Σ P(X = j) from j = from, stepping by `step` (+1: up to n, −1: down to 0), the terms falling. */
function tailSum(n: number, from: number, p: number, step: 1 | -1): number {
  const odds = p / (1 - p);
  // log P(X = from), from log P(X = 0) up.
  let logAt = n * Math.log1p(-p);
  for (let j = 0; j < from; j++) logAt += Math.log(((n - j) / (j + 1)) * odds);
  let sum = 0;
  let term = 1; // P(X = j) / P(X = from)
  for (let j = from; j >= 0 && j <= n; j += step) {
    sum += term;
    if (term < sum * 1e-17) break;
    term *= step === 1 ? ((n - j) / (j + 1)) * odds : j / (n - j + 1) / odds;
  }
  return Math.min(1, Math.exp(logAt) * sum);
}

const memo = new WeakMap<Trace, Stragglers>();

/**
 * stragglersOf the diagnosis context's trace and processes, computed once per trace (the finding, the report and the
 * Stats tab share it; the tab asks before any context is built: analyze.ts).
 */
export function stragglersOfContext(ctx: Pick<Context, 'trace' | 'processes'>): Stragglers {
  let s = memo.get(ctx.trace);
  if (!s) memo.set(ctx.trace, (s = stragglersOf(ctx.trace, ctx.processes)));
  return s;
}
