// Summaries of repeated timings, shared by the benchmarks.
//
// Timings of GPU programs do not spread like a bell: the CUPTI floor's cost
// per launch falls into two clusters about 2 µs apart, from one process to
// the next, on the same host (bench/RESULTS.md, collector overhead). A median
// of a few such runs jumps between the clusters; a trimmed mean over many
// short runs settles, and a bootstrap interval says how far it can be trusted.

/** The middle value; the mean of the two middle values for an even count. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The value at fraction p of the sorted values (p = 0.95: the 95th percentile, nearest rank below); NaN for none. */
export function quantile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  return [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
}

/** The mean after dropping `fraction` of the values at each end (0.1: the lowest and highest tenth). */
export function trimmedMean(xs: readonly number[], fraction = 0.1): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const cut = Math.floor(s.length * fraction);
  const kept = s.slice(cut, s.length - cut);
  return kept.reduce((sum, x) => sum + x, 0) / kept.length;
}

/** A small seeded generator (mulberry32), so an interval printed twice from the same runs is the same interval. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function resampledTrimmedMeans(n: number, resamples: number, seed: number, ...columns: readonly number[][]): number[][] {
  const random = seeded(seed);
  const out = columns.map(() => [] as number[]);
  for (let r = 0; r < resamples; r++) {
    const picked = columns.map(() => [] as number[]);
    for (let k = 0; k < n; k++) {
      const i = Math.floor(random() * n);
      columns.forEach((c, j) => picked[j]!.push(c[i]!));
    }
    picked.forEach((p, j) => out[j]!.push(trimmedMean(p)));
  }
  return out;
}

const central90 = (xs: number[]): [number, number] => {
  const s = [...xs].sort((a, b) => a - b);
  return [s[Math.floor(s.length * 0.05)]!, s[Math.floor(s.length * 0.95)]!];
};

export interface AddedEstimate {
  /** The trimmed mean of x[i] − base[i] over rounds. */
  added: number;
  /** The central 90% of it over bootstrap resamples of whole rounds. */
  low: number;
  high: number;
}

/** What x adds over base, from rounds in which both ran side by side (for when a ratio has nothing to divide by). */
export function pairedAdded(base: readonly number[], x: readonly number[], resamples = 2000, seed = 16): AddedEstimate {
  const n = Math.min(base.length, x.length);
  const d = Array.from({ length: n }, (_, i) => x[i]! - base[i]!);
  const [low, high] = central90(resampledTrimmedMeans(n, resamples, seed, d)[0]!);
  return { added: trimmedMean(d), low, high };
}

export interface RatioEstimate {
  /** trimmedMean(b − base) / trimmedMean(a − base), taken round by round. */
  ratio: number;
  /** What each mode adds over the base: the trimmed mean of the per-round differences. */
  aAdded: number;
  bAdded: number;
  /** The central 90% of the ratio over bootstrap resamples of whole rounds. */
  low: number;
  high: number;
}

/**
 * How much b adds over base, as a multiple of what a adds over base, from
 * rounds in which all three ran side by side (base[i], a[i], b[i] in round
 * i). Differences are taken within a round, so drifts between rounds cancel;
 * rounds are resampled whole, so what a round shares stays paired.
 */
export function pairedAddedRatio(base: readonly number[], a: readonly number[], b: readonly number[], resamples = 2000, seed = 16): RatioEstimate {
  const n = Math.min(base.length, a.length, b.length);
  const da = Array.from({ length: n }, (_, i) => a[i]! - base[i]!);
  const db = Array.from({ length: n }, (_, i) => b[i]! - base[i]!);
  const aAdded = trimmedMean(da);
  const bAdded = trimmedMean(db);
  const [ra, rb] = resampledTrimmedMeans(n, resamples, seed, da, db);
  const [low, high] = central90(ra!.map((a, i) => rb![i]! / a));
  return { ratio: bAdded / aAdded, aAdded, bAdded, low, high };
}
