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
//  - it matters: the wait it caused is WAIT_SHARE or more of the other
//    ranks' time in the analysed instances' kernels (a rank last by a
//    microsecond every time costs nothing), and, per other rank, RUN_SHARE
//    or more of the stretch of the run the analysed instances cover (first
//    start to last end). Collectives issued one after the other after the
//    computation (a hand-written loop's all-reduces) are short and fully
//    exposed, so a rank a few tens of µs behind every time is a large share
//    of their time and a small one of the run: a data-parallel job on two
//    H200s, the same program on both ranks, had rank 1 last at 73 of 98
//    all-reduces, 30% of rank 0's time in them, 3.6% of the run; a rank
//    made slower on purpose, 69% (test/fixtures/ddp).
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
export const WAIT_SHARE = 0.05;
export const RUN_SHARE = 0.05;
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
  const { ops } = trace;
  const { kind, detail, pid, device, stream, start, end } = ops;

  // 1. Every collective kernel named (rank, series = s * C + collective, n), in start order.
  const rankOfKey = new Map<number, number>();
  const participants: { pid: number; deviceId: number }[] = [];
  const kOp: number[] = [];
  const kRank: number[] = [];
  const kSeries: number[] = [];
  const kN: number[] = [];
  let pointToPoint = 0;
  const numbering = new CollectiveNumbering();
  let lastKey = NaN;
  let lastRank = -1;
  for (let i = 0; i < ops.length; i++) {
    if (kind[i] !== OpKind.Kernel) continue;
    const d = detail[i]!;
    const c = codes.get(d);
    if (c < 0) continue;
    if (c === SEND_RECV) {
      pointToPoint++;
      continue;
    }
    // Devices are few (ids well under 2^16); pids under 2^22: the key is exact.
    const key = pid[i]! * 65536 + device[i]!;
    if (key !== lastKey) {
      let r = rankOfKey.get(key);
      if (r === undefined) {
        rankOfKey.set(key, (r = participants.length));
        participants.push({ pid: pid[i]!, deviceId: device[i]! });
      }
      lastKey = key;
      lastRank = r;
    }
    const n = numbering.next(lastRank, stream[i]!, c);
    kOp.push(i);
    kRank.push(lastRank);
    kSeries.push(numbering.stream * C + c);
    kN.push(n);
  }
  const R = participants.length;
  if (R < 2) return { ...noStragglers(), gaps: { ...noStragglers().gaps, pointToPointKernels: pointToPoint } };

  // 2. Per series, each rank's kernels by n.
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

  // 3. Per instance, across ranks.
  const acc = {
    instances: new Float64Array(R),
    last: new Float64Array(R),
    caused: new Float64Array(R),
    waited: new Float64Array(R),
    collective: new Float64Array(R),
    late: new Float64Array(R),
    skewLast: new Float64Array(R),
    skewLastMax: new Float64Array(R),
  };
  const perCollective = { instances: new Float64Array(C), skew: new Float64Array(C), skewMax: new Float64Array(C), wait: new Float64Array(C) };
  let partialInstances = 0;
  let partialKernels = 0;
  let leadingKernels = 0;
  let unsynchronized = 0;
  let analysed = 0;
  // The stretch of the run the analysed instances cover.
  let coverStart = Infinity;
  let coverEnd = -Infinity;
  const worst: { waitNs: number; s: Series; m: number; skewNs: number; last: number }[] = [];
  const members: number[] = [];
  for (const s of series.values()) {
    members.length = 0;
    for (let r = 0; r < R; r++) if (s.counts[r]! > 0) members.push(r);
    const at = (r: number, n: number) => s.ops[n * R + r]!;
    // Leading edge: each rank from its kernel ending nearest the latest first end.
    let firstEnd = -Infinity;
    for (const r of members) firstEnd = Math.max(firstEnd, end[at(r, 0)]!);
    let instances = 0;
    for (const r of members) {
      let f = 0;
      while (f + 1 < s.counts[r]! && Math.abs(end[at(r, f + 1)]! - firstEnd) < Math.abs(end[at(r, f)]! - firstEnd)) f++;
      s.first[r] = f;
      leadingKernels += f;
      instances = Math.max(instances, s.counts[r]! - f);
    }
    for (let m = 0; m < instances; m++) {
      let present = 0;
      let minStart = Infinity;
      let maxStart = -Infinity;
      let lastR = -1;
      let minEnd = Infinity;
      let maxEnd = -Infinity;
      let minDur = Infinity;
      for (const r of members) {
        const n = s.first[r]! + m;
        if (n >= s.counts[r]!) continue;
        present++;
        const i = at(r, n);
        const a = start[i]!;
        const b = end[i]!;
        if (a < minStart) minStart = a;
        if (a > maxStart) {
          maxStart = a;
          lastR = r;
        }
        if (b < minEnd) minEnd = b;
        if (b > maxEnd) maxEnd = b;
        if (b - a < minDur) minDur = b - a;
      }
      if (present < members.length || members.length < 2) {
        partialInstances++;
        partialKernels += present;
        continue;
      }
      if (maxEnd - minEnd > Math.max(END_SLACK_NS, END_SHARE * minDur)) {
        unsynchronized++;
        continue;
      }
      analysed++;
      const skew = maxStart - minStart;
      let wait = 0;
      for (const r of members) {
        const i = at(r, s.first[r]! + m);
        wait += maxStart - start[i]!;
        acc.instances[r]!++;
        acc.waited[r]! += maxStart - start[i]!;
        acc.collective[r]! += end[i]! - start[i]!;
        acc.late[r]! += start[i]! - minStart;
        if (start[i]! < coverStart) coverStart = start[i]!;
        if (end[i]! > coverEnd) coverEnd = end[i]!;
      }
      // All arriving at once (skew 0), none is last.
      if (skew > 0) {
        acc.last[lastR]!++;
        acc.caused[lastR]! += wait;
        acc.skewLast[lastR]! += skew;
        if (skew > acc.skewLastMax[lastR]!) acc.skewLastMax[lastR] = skew;
      }
      const c = s.collective;
      perCollective.instances[c]!++;
      perCollective.skew[c]! += skew;
      perCollective.wait[c]! += wait;
      if (skew > perCollective.skewMax[c]!) perCollective.skewMax[c] = skew;
      // The worst WORST instances by wait (none without one): an object only for one that enters the list.
      if (wait > 0 && (worst.length < WORST || wait > worst[worst.length - 1]!.waitNs)) {
        if (worst.length === WORST) worst.pop();
        let p = worst.length;
        while (p > 0 && worst[p - 1]!.waitNs < wait) p--;
        worst.splice(p, 0, { waitNs: wait, s, m, skewNs: skew, last: lastR });
      }
    }
  }

  // 4. Names, order, the straggler.
  const gpu = gpuOrdinals(trace.devices);
  const named: StragglerParticipant[] = participants.map((p) => {
    const f = processes.get(p.pid);
    return { pid: p.pid, rank: f?.rank ?? null, worldSize: f?.worldSize ?? null, host: f?.host ?? null, deviceId: p.deviceId, gpu: gpu(p.deviceId) };
  });
  const order = [...named.keys()].sort(
    (x, y) => (named[x]!.rank ?? Infinity) - (named[y]!.rank ?? Infinity) || named[x]!.pid - named[y]!.pid || named[x]!.gpu - named[y]!.gpu,
  );
  const ranks: StragglerRank[] = order.map((r) => {
    const n = acc.instances[r]!;
    const last = acc.last[r]!;
    return {
      ...named[r]!,
      instances: n,
      lastCount: last,
      causedWaitNs: acc.caused[r]!,
      waitedNs: acc.waited[r]!,
      collectiveNs: acc.collective[r]!,
      meanLateNs: n > 0 ? acc.late[r]! / n : 0,
      meanSkewWhenLastNs: last > 0 ? acc.skewLast[r]! / last : null,
      maxSkewWhenLastNs: last > 0 ? acc.skewLastMax[r]! : null,
    };
  });
  const position = new Int32Array(R);
  order.forEach((r, p) => (position[r] = p));

  const collectives: CollectiveSkew[] = [];
  for (let c = 0; c < C; c++) {
    const n = perCollective.instances[c]!;
    if (n === 0) continue;
    collectives.push({
      collective: COLLECTIVES[c]!,
      instances: n,
      meanSkewNs: perCollective.skew[c]! / n,
      maxSkewNs: perCollective.skewMax[c]!,
      waitNs: perCollective.wait[c]!,
    });
  }
  collectives.sort((a, b) => b.waitNs - a.waitNs);

  const worstInstances: CollectiveInstance[] = worst.map(({ waitNs, s, m, skewNs, last }) => {
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
        return { pid: participants[r]!.pid, deviceId: participants[r]!.deviceId, kernelId: ops.rowId[i]!, startNs: start[i]!, endNs: end[i]! };
      }),
    };
  });

  return {
    present: analysed > 0,
    ranks,
    instances: analysed,
    collectives,
    worst: worstInstances,
    gaps: { partialInstances, partialKernels, leadingKernels, unsynchronizedInstances: unsynchronized, pointToPointKernels: pointToPoint },
    straggler: pickStraggler(ranks, analysed, coverEnd - coverStart),
  };
}

/** The straggler by the rules in the header, or null. */
function pickStraggler(ranks: StragglerRank[], analysed: number, coverNs: number): Stragglers['straggler'] {
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
  const othersNs = ranks.reduce((t, o) => t + o.collectiveNs, 0) - r.collectiveNs;
  const waitShare = othersNs > 0 ? r.causedWaitNs / othersNs : 0;
  if (waitShare < WAIT_SHARE) return null;
  if (r.causedWaitNs / (ranks.length - 1) < RUN_SHARE * coverNs) return null;
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

const memo = new WeakMap<Context, Stragglers>();

/** stragglersOf the diagnosis context's trace and processes, computed once per context (the finding and the report share it). */
export function stragglersOfContext(ctx: Context): Stragglers {
  let s = memo.get(ctx);
  if (!s) memo.set(ctx, (s = stragglersOf(ctx.trace, ctx.processes)));
  return s;
}
