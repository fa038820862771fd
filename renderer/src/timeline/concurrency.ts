// The concurrency track ("In flight") from the window the timeline already
// holds, instead of a query of its own: work on one stream runs one
// operation at a time, so the kernels (or copies of a direction) in flight
// at an instant are the device's streams busy with one then. A sweep over
// the device's rows gives, per bucket, the most in flight at any instant in
// it — exact where the window holds items. Where sub-pixel operations were
// merged into coverage spans, a span counts as busy throughout, under its
// most frequent kind: every busy stream is counted, though within a pixel
// a copy may be counted as the kernel it was merged with.
import type { ConcurrencyResponse, ItemKind, WindowRow } from '../../../profiler/query/api.ts';

type Track = 'kernels' | 'h2d' | 'd2h' | 'other';
const TRACKS: readonly Track[] = ['kernels', 'h2d', 'd2h', 'other'];

/**
 * The track of an item, or of a merged span by its most frequent kind. A
 * synchronization is not GPU work in flight; but a merged span of mostly
 * synchronizations may hide an operation, so it counts as 'other'.
 */
function trackOf(kind: ItemKind, merged: boolean): Track | null {
  switch (kind) {
    case 'kernel': return 'kernels';
    case 'memcpy-h2d': return 'h2d';
    case 'memcpy-d2h': return 'd2h';
    case 'api': case 'nvtx': return null;
    case 'sync': return merged ? 'other' : null;
    default: return 'other';
  }
}

export function concurrencyFromRows(deviceId: number, rows: readonly WindowRow[], startNs: number, endNs: number, bucketCount: number): ConcurrencyResponse {
  const buckets = Math.max(1, Math.floor(bucketCount));
  const width = Math.max(endNs - startNs, 1) / buckets;
  const out: Record<Track, number[]> = { kernels: new Array(buckets).fill(0), h2d: new Array(buckets).fill(0), d2h: new Array(buckets).fill(0), other: new Array(buckets).fill(0) };
  // +1 at each start, −1 at each end; at equal times ends first, so back-to-back operations do not count as two.
  const events: [number, number, Track][] = [];
  const add = (kind: ItemKind, s: number, e: number, merged: boolean) => {
    const track = trackOf(kind, merged);
    if (!track || e < startNs || s > endNs || e < s) return;
    events.push([s, 1, track], [e, -1, track]);
  };
  for (const row of rows) {
    for (const it of row.items) add(it.kind, it.startNs, it.endNs, false);
    for (const c of row.coverage) add(c.kind, c.startNs, c.endNs, true);
  }
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const now: Record<Track, number> = { kernels: 0, h2d: 0, d2h: 0, other: 0 };
  const bucketOf = (t: number) => Math.min(buckets - 1, Math.max(0, Math.floor((t - startNs) / width)));
  let last = startNs;
  // A level holds from one event to the next: every bucket it spans sees it.
  const hold = (until: number) => {
    if (until <= startNs || last >= endNs) return;
    for (let b = bucketOf(last); b <= bucketOf(Math.min(until, endNs) - 1e-9); b++) {
      for (const k of TRACKS) if (now[k] > out[k][b]!) out[k][b] = now[k];
    }
  };
  for (const [t, d, track] of events) {
    if (t > last) hold(t);
    last = Math.max(last, t);
    now[track] += d;
  }
  return { deviceId, startNs, endNs, bucketNs: width, ...out };
}
