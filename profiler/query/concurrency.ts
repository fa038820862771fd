// The concurrency track of a device: per bucket of the view, the most
// kernels / HtoD copies / DtoH copies / other operations in flight at any
// instant in it. A maximum, not an average: a bucket where eight kernels
// overlapped for a microsecond must show eight at any zoom.
import { OpCategory, type Trace } from '../analysis/trace.ts';
import type { ConcurrencyRequest, ConcurrencyResponse } from '../contract/api.ts';

/** More buckets than any screen has pixels is a mistake, not a wish. */
const MAX_BUCKETS = 8192;

type Track = 'kernels' | 'h2d' | 'd2h' | 'other';
const TRACKS: readonly Track[] = ['kernels', 'h2d', 'd2h', 'other'];

function trackOf(category: number): Track {
  return category === OpCategory.Compute ? 'kernels' : category === OpCategory.HtoD ? 'h2d' : category === OpCategory.DtoH ? 'd2h' : 'other';
}

export function concurrencyOf(trace: Trace, req: ConcurrencyRequest): ConcurrencyResponse {
  const { ops } = trace;
  const buckets = Math.max(1, Math.min(MAX_BUCKETS, Math.floor(req.buckets)));
  const width = Math.max(req.endNs - req.startNs, 1) / buckets;
  const out: Record<Track, number[]> = {
    kernels: new Array(buckets).fill(0),
    h2d: new Array(buckets).fill(0),
    d2h: new Array(buckets).fill(0),
    other: new Array(buckets).fill(0),
  };
  // Start (+1) and end (−1) events of the device's ops in the window, in time
  // order; at equal times ends first, so back-to-back ops do not count as two.
  const events: [number, number, Track][] = [];
  for (let i = 0; i < ops.length; i++) {
    if (ops.device[i] !== req.deviceId || ops.end[i]! < req.startNs || ops.start[i]! > req.endNs) continue;
    const track = trackOf(ops.category[i]!);
    events.push([ops.start[i]!, 1, track], [ops.end[i]!, -1, track]);
  }
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const now: Record<Track, number> = { kernels: 0, h2d: 0, d2h: 0, other: 0 };
  const bucketOf = (t: number) => Math.min(buckets - 1, Math.max(0, Math.floor((t - req.startNs) / width)));
  let last = req.startNs;
  // Each level holds from one event to the next: every bucket it spans sees it.
  const hold = (until: number) => {
    if (until <= req.startNs || last >= req.endNs) return;
    for (let b = bucketOf(last); b <= bucketOf(Math.min(until, req.endNs) - 1e-9); b++) {
      for (const k of TRACKS) if (now[k] > out[k][b]!) out[k][b] = now[k];
    }
  };
  for (const [t, d, track] of events) {
    if (t > last) hold(t);
    last = Math.max(last, t);
    now[track] += d;
  }
  return { deviceId: req.deviceId, startNs: req.startNs, endNs: req.endNs, bucketNs: width, ...out };
}
