// The concurrency track ("In flight") from the rows of a window answer
// (RecordingQuery.window computes it with the rows it sends; the page's
// main thread never does, see window-loader.ts), instead of a sweep over the
// whole recording: work on one stream runs one
// operation at a time, so the kernels (or copies of a direction) in flight
// at an instant are the device's streams busy with one then. A sweep over
// the device's rows gives, per bucket, the most in flight at any instant in
// it — exact where the window holds items. Where sub-pixel operations were
// merged into coverage spans, a span counts as busy throughout, under its
// most frequent kind: every busy stream is counted, though within a pixel
// a copy may be counted as the kernel it was merged with.
import type { ConcurrencyResponse, ItemKind, WindowRow } from '../contract/api.ts';

type Track = 'kernels' | 'h2d' | 'd2h' | 'other';
const TRACKS: readonly Track[] = ['kernels', 'h2d', 'd2h', 'other'];

/**
 * The track (index into TRACKS) of an item, or of a merged span by its most
 * frequent kind; -1 for none. A synchronization is not GPU work in flight;
 * but a merged span of mostly synchronizations may hide an operation, so it
 * counts as 'other'.
 */
function trackOf(kind: ItemKind, merged: boolean): number {
  switch (kind) {
    case 'kernel':
      return 0;
    case 'memcpy-h2d':
      return 1;
    case 'memcpy-d2h':
      return 2;
    case 'api':
    case 'nvtx':
      return -1;
    case 'sync':
      return merged ? 3 : -1;
    default:
      return 3;
  }
}

export function concurrencyFromRows(deviceId: number, rows: readonly WindowRow[], startNs: number, endNs: number, bucketCount: number): ConcurrencyResponse {
  const buckets = Math.max(1, Math.floor(bucketCount));
  const width = Math.max(endNs - startNs, 1) / buckets;
  // Tracks are independent (each bucket holds each track's own maximum), so
  // each is one sweep over its own events. An event is one number, its
  // time × 2 plus 1 for a start, so that numeric order puts ends first at
  // equal times (back-to-back operations do not count as two). No event
  // objects, no comparator, no sort of the whole, tracks by index, not by
  // name: zoomed in, a window holds ~250 k items, and sorting 500 k tuples
  // with a comparator took ~40 ms of the frame that received them (a
  // native sort of the keys, still ~30 ms).
  const spans: { kind: ItemKind; startNs: number; endNs: number }[][] = [];
  const merged: boolean[] = [];
  for (const row of rows) {
    spans.push(row.items, row.coverage);
    merged.push(false, true);
  }
  // Runs per list and track: a stream runs one operation at a time, so each
  // list's events (start, end, start, ...) come already in order, and the
  // runs of a track only need merging. (A run found out of order — clocks
  // of imported traces can overlap — is sorted first.)
  const T = TRACKS.length;
  // The track an item or span counts in: -1 when none, or when it lies outside the window.
  const trackIn = (x: { kind: ItemKind; startNs: number; endNs: number }, isMerged: boolean) =>
    x.endNs < startNs || x.startNs > endNs || x.endNs < x.startNs ? -1 : trackOf(x.kind, isMerged);
  const counts = new Int32Array(spans.length * T);
  for (let l = 0; l < spans.length; l++) {
    for (const x of spans[l]!) {
      const t = trackIn(x, merged[l]!);
      if (t >= 0) counts[l * T + t]! += 2;
    }
  }
  const runs: Float64Array[][] = TRACKS.map(() => []);
  for (let l = 0; l < spans.length; l++) {
    const own: (Float64Array | null)[] = [];
    const at = new Int32Array(T);
    for (let t = 0; t < T; t++) own.push(counts[l * T + t]! > 0 ? new Float64Array(counts[l * T + t]!) : null);
    for (const x of spans[l]!) {
      const t = trackIn(x, merged[l]!);
      if (t < 0) continue;
      // Whole ns (stored times are; an imported sub-ns fraction would break the parity).
      own[t]![at[t]!++] = Math.round(x.startNs) * 2 + 1;
      own[t]![at[t]!++] = Math.round(x.endNs) * 2;
    }
    for (let t = 0; t < T; t++) {
      const r = own[t];
      if (!r) continue;
      for (let i = 1; i < r.length; i++) {
        if (r[i]! < r[i - 1]!) {
          r.sort();
          break;
        }
      }
      runs[t]!.push(r);
    }
  }
  const out = {} as Record<Track, number[]>;
  TRACKS.forEach((track, t) => {
    const levels: number[] = new Array(buckets).fill(0);
    const k = mergeRuns(runs[t]!);
    let now = 0;
    let last = startNs;
    // A level holds from one event to the next: every bucket it spans sees it.
    for (let i = 0; i < k.length; i++) {
      const at = Math.floor(k[i]! / 2); // (not %: a float modulo per event costs more than the rest)
      const isStart = k[i]! !== at * 2;
      if (at > last && now > 0 && at > startNs && last < endNs) {
        const from = Math.min(buckets - 1, Math.max(0, Math.floor((last - startNs) / width)));
        const to = Math.min(buckets - 1, Math.max(0, Math.floor((Math.min(at, endNs) - 1e-9 - startNs) / width)));
        for (let b = from; b <= to; b++) if (now > levels[b]!) levels[b] = now;
      }
      last = Math.max(last, at);
      now += isStart ? 1 : -1;
    }
    out[track] = levels;
  });
  return { deviceId, startNs, endNs, bucketNs: width, ...out };
}

/** Sorted runs merged into one, pairwise (log2(runs) passes over the events). */
function mergeRuns(input: Float64Array[]): Float64Array {
  let runs = input;
  while (runs.length > 1) {
    const next: Float64Array[] = [];
    for (let i = 0; i < runs.length; i += 2) next.push(i + 1 < runs.length ? merge2(runs[i]!, runs[i + 1]!) : runs[i]!);
    runs = next;
  }
  return runs[0] ?? new Float64Array(0);
}

function merge2(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length) out[o++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[o++] = a[i++]!;
  while (j < b.length) out[o++] = b[j++]!;
  return out;
}
