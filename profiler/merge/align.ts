// Clock alignment across hosts from the collectives themselves.
//
// Each recording's times are nanoseconds from its origin, and its origin is
// a CUPTI timestamp (meta origin_ns), which follows its host's
// CLOCK_REALTIME. Recordings of one host therefore already share a clock;
// hosts' clocks differ by what their synchronisation (NTP, PTP) left, often
// milliseconds. An NCCL collective ends at nearly the same time on every
// rank it joins: its kernel ends once the last data has arrived, which for
// the ring and tree algorithms is within microseconds on every rank,
// however late each rank arrived. So the same collective's end times on two
// hosts differ by their clocks' offset, plus a little.
//
// The same collective is recognised by its order: on each rank (a process
// on a GPU), the n-th collective of a kind on its k-th stream that runs
// collectives (streams numbered by their first collective). Every rank of a
// communicator issues its collectives in the same order, so for a job with
// one communicator (data parallel) the keys match exactly; with several,
// streams are numbered alike on every rank only if the communicators are
// first used in the same order, and ranks of different groups may be
// matched to collectives that do not synchronise them: the residual shows it.
//
// Each recording gets the correction that best lines up its collectives'
// end times with the others': the median of the differences (robust to a
// few mismatched or delayed ones), first against the reference (the first
// input) or the recordings already aligned, then refined against the median
// of all the others. What is left after the shift, per recording (the
// residual), is how far its collectives' ends still lie from the other
// recordings' ranks: the median and the largest |difference|. It bounds the
// alignment error only if the collectives really end together; it is the
// number a user judges the alignment by.

/** One rank's collectives: key (stream#kind#n) → end time, ns from its recording's origin. */
export type RankCollectives = Map<string, number>;

export interface ClockInput {
  /** Its ranks (a process on a GPU) that ran collectives. */
  ranks: RankCollectives[];
  /** Its origin on the common timeline before any correction (the difference of origins): added to every end. */
  baseNs?: number;
}

// How a source's clock was placed: named once, in the contract the views read it from.
export type { ClockMethod } from '../contract/job.ts';
import type { ClockMethod } from '../contract/job.ts';

export interface InputAlignment {
  /**
   * reference: the first input, whose clock every other is corrected to;
   * collectives: corrected by its collectives; same-host: none of its own
   * matched, corrected as the other recordings of its host were (merge.ts);
   * wall-clock: times as recorded.
   */
  clock: ClockMethod;
  /** Added to every time of the input beyond the difference of origins: minus its clock's offset from the reference's. */
  correctionNs: number;
  /** Its collectives compared with other recordings' ranks after the shift (rank × collective). */
  collectives: number;
  /** Median and largest |end − the median end of the other recordings' ranks| of those; null when none. */
  residualNs: number | null;
  residualMaxNs: number | null;
}

export interface AlignOptions {
  /** Collectives two recordings must share before one is corrected by the other. */
  minMatched?: number;
  /** Rounds of refinement against all the others. */
  rounds?: number;
}

/** With fewer shared collectives than this a recording stays on its own clock. */
export const MIN_MATCHED = 3;

function median(xs: ArrayLike<number>): number {
  const s = Float64Array.from(xs).sort();
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

/** The median of a sorted array without its element at index p. */
function medianWithout(sorted: readonly number[], p: number): number {
  const n = sorted.length - 1;
  const at = (i: number) => sorted[i < p ? i : i + 1]!;
  return n % 2 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
}

/**
 * The correction of each input's clock and the residual after it, from the
 * end times of the collectives its ranks share with the other inputs'.
 */
export function alignClocks(inputs: readonly ClockInput[], opts: AlignOptions = {}): InputAlignment[] {
  const minMatched = opts.minMatched ?? MIN_MATCHED;
  const rounds = opts.rounds ?? 2;
  const N = inputs.length;
  // Keys as numbers; each input's end per key as a dense column (NaN: it has no such collective): the median over its ranks.
  const keyIds = new Map<string, number>();
  for (const input of inputs) for (const rank of input.ranks) for (const key of rank.keys()) if (!keyIds.has(key)) keyIds.set(key, keyIds.size);
  const K = keyIds.size;
  const ends: Float64Array[] = inputs.map(() => new Float64Array(K).fill(NaN));
  const counts = new Int32Array(N);
  const base = inputs.map((input) => input.baseNs ?? 0);
  inputs.forEach((input, i) => {
    const perKey: number[][] = [];
    for (const rank of input.ranks) for (const [key, end] of rank) (perKey[keyIds.get(key)!] ??= []).push(end + base[i]!);
    perKey.forEach((xs, k) => {
      ends[i]![k] = xs.length === 1 ? xs[0]! : median(xs);
      counts[i]!++;
    });
  });
  const differences = (a: Float64Array, b: Float64Array): number[] => {
    const d: number[] = [];
    for (let k = 0; k < K; k++) if (!Number.isNaN(a[k]!) && !Number.isNaN(b[k]!)) d.push(a[k]! - b[k]!);
    return d;
  };

  // Clusters of inputs joined by shared collectives, each anchored at its first input.
  const delta = new Float64Array(N);
  const cluster = new Int32Array(N).fill(-1);
  const anchors: number[] = [];
  const waiting = () => [...Array(N).keys()].filter((i) => cluster[i] === -1 && counts[i]! > 0);
  for (let anchor = waiting()[0]; anchor !== undefined; anchor = waiting()[0]) {
    const c = anchors.length;
    anchors.push(anchor);
    cluster[anchor] = c;
    // Straight against the anchor (a job's recordings all share its collectives, as a rule) …
    for (const i of waiting()) {
      const d = differences(ends[anchor]!, ends[i]!);
      if (d.length < minMatched) continue;
      cluster[i] = c;
      delta[i] = median(d);
    }
    // … then the rest against the median of those aligned, until none joins.
    for (let joined = waiting().length > 0; joined;) {
      joined = false;
      const aligned = clusterEnds(c);
      for (const i of waiting()) {
        const d = differences(aligned, ends[i]!);
        if (d.length < minMatched) continue;
        cluster[i] = c;
        delta[i] = median(d);
        joined = true;
      }
    }
    // Refinement: each against the median of the cluster's others, all at once; the anchor stays at 0.
    const members = [...Array(N).keys()].filter((i) => cluster[i] === c);
    if (members.length < 2) continue;
    for (let round = 0; round < rounds; round++) {
      const others = leaveOneOut(members);
      const next = new Float64Array(N);
      for (const i of members) {
        const d = differences(others.get(i)!, ends[i]!);
        next[i] = d.length ? median(d) : delta[i]!;
      }
      const shift = next[anchor]!;
      for (const i of members) delta[i] = next[i]! - shift;
    }
  }

  /** Per key, the median corrected end over cluster c's inputs. */
  function clusterEnds(c: number): Float64Array {
    const out = new Float64Array(K).fill(NaN);
    const xs: number[] = [];
    for (let k = 0; k < K; k++) {
      xs.length = 0;
      for (let i = 0; i < N; i++) if (cluster[i] === c && !Number.isNaN(ends[i]![k]!)) xs.push(ends[i]![k]! + delta[i]!);
      if (xs.length) out[k] = median(xs);
    }
    return out;
  }

  /** For each member, per key, the median corrected end over the other members: where its own end should be. */
  function leaveOneOut(members: number[]): Map<number, Float64Array> {
    const out = new Map(members.map((i) => [i, new Float64Array(K).fill(NaN)]));
    const vals: { v: number; i: number }[] = [];
    for (let k = 0; k < K; k++) {
      vals.length = 0;
      for (const i of members) if (!Number.isNaN(ends[i]![k]!)) vals.push({ v: ends[i]![k]! + delta[i]!, i });
      if (vals.length < 2) continue;
      vals.sort((a, b) => a.v - b.v);
      const sorted = vals.map((x) => x.v);
      vals.forEach((x, p) => {
        out.get(x.i)![k] = medianWithout(sorted, p);
      });
    }
    return out;
  }

  // Residuals: each rank's corrected end against the median of the other recordings' ranks (of its cluster).
  const residuals = inputs.map(() => [] as number[]);
  const perKey: { v: number; input: number }[][] = [];
  inputs.forEach((input, i) => {
    if (cluster[i] === -1) return;
    for (const rank of input.ranks) for (const [key, end] of rank) (perKey[keyIds.get(key)!] ??= []).push({ v: end + base[i]! + delta[i]!, input: i });
  });
  for (const entries of perKey) {
    if (!entries || entries.length < 2) continue;
    const byCluster = new Map<number, { v: number; input: number }[]>();
    for (const e of entries) {
      const c = cluster[e.input]!;
      let list = byCluster.get(c);
      if (!list) byCluster.set(c, (list = []));
      list.push(e);
    }
    for (const list of byCluster.values()) {
      list.sort((a, b) => a.v - b.v);
      const sorted = list.map((e) => e.v);
      const own = new Map<number, number>();
      for (const e of list) own.set(e.input, (own.get(e.input) ?? 0) + 1);
      list.forEach((e, p) => {
        const mine = own.get(e.input)!;
        if (mine === list.length) return; // no other recording has it
        const ref = mine === 1 ? medianWithout(sorted, p) : median(list.filter((o) => o.input !== e.input).map((o) => o.v));
        residuals[e.input]!.push(Math.abs(e.v - ref));
      });
    }
  }

  return inputs.map((_, i) => {
    const c = cluster[i]!;
    const res = residuals[i]!;
    let max = 0;
    for (const r of res) if (r > max) max = r;
    return {
      clock: c !== -1 && anchors[c] !== i ? 'collectives' : i === 0 ? 'reference' : 'wall-clock',
      correctionNs: c === -1 ? 0 : Math.round(delta[i]!),
      collectives: res.length,
      residualNs: res.length ? Math.round(median(res)) : null,
      residualMaxNs: res.length ? Math.round(max) : null,
    };
  });
}
