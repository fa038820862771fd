// The minimap of a whole recording, and a folded rank's GPU-busy row over
// the timeline's window, from the zones (OverviewResponse in api.ts): per
// device and bucket, the average number of kernels, copies and other
// operations in flight. A zone is a block of one stream's rows with
// its span and busy time (schema 5); spreading the busy time evenly over the
// span is exact for a block that was busy throughout and smooths one with
// gaps — fine for a strip a few pixels high that says where the work is.
import type { Database } from 'better-sqlite3';
import { ZONED_TABLES } from '../store/zone-tables.ts';
import { OVERVIEW_TOTAL_DEVICE, type OverviewDevices, type OverviewResponse } from '../contract/api.ts';

const MAX_BUCKETS = 8192;

type Track = 'kernels' | 'copies' | 'other';
const TRACK_OF_TABLE = new Map<number, Track>([
  [ZONED_TABLES.kernels.id, 'kernels'],
  [ZONED_TABLES.memcpys.id, 'copies'],
  [ZONED_TABLES.memsets.id, 'other'],
]);

/** A zone of GPU operations as the overview reads it: its table, its stream's device, its span and busy time. */
export interface GpuZone {
  t: number;
  device: number;
  s: number;
  e: number;
  busy: number | null;
}

/** The zones of GPU operations (on a stream of a device) that overlap [startNs, endNs]; every one without a range. */
export function gpuZones(db: Database, range: { startNs: number; endNs: number } | null = null): GpuZone[] {
  return db
    .prepare(
      `SELECT z.table_id AS t, s.device_id AS device, z.start_ns AS s, z.end_ns AS e, z.busy_ns AS busy
      FROM zones z JOIN streams s ON s.id = z.lane WHERE z.table_id IN (${[...TRACK_OF_TABLE.keys()].join(',')}) AND s.device_id IS NOT NULL
      AND z.end_ns >= ? AND z.start_ns <= ?`,
    )
    .all(range?.startNs ?? -Number.MAX_SAFE_INTEGER, range?.endNs ?? Number.MAX_SAFE_INTEGER) as GpuZone[];
}

export function overviewOf(db: Database, startNs: number, endNs: number, bucketCount: number, which: OverviewDevices | null = null): OverviewResponse {
  return overviewOfZones(gpuZones(db, { startNs, endNs }), startNs, endNs, bucketCount, which);
}

/**
 * The overview of `zones` over [startNs, endNs] (zones outside it add
 * nothing): also a job's, whose zones come from each rank's file already
 * on the job's clock (query/job-query.ts).
 */
export function overviewOfZones(
  zones: Iterable<GpuZone>,
  startNs: number,
  endNs: number,
  bucketCount: number,
  which: OverviewDevices | null = null,
): OverviewResponse {
  const buckets = Math.max(1, Math.min(MAX_BUCKETS, Math.floor(bucketCount)));
  const width = Math.max(endNs - startNs, 1) / buckets;
  const devices = new Map<number, OverviewResponse['devices'][number]>();
  // Only the devices asked (a page's busy rows in view: a job of 1,024 GPUs at 2,000 buckets each was 32 MB of JSON).
  const only = which?.ids ? new Set(which.ids) : null;
  for (const z of zones) {
    if (z.e < startNs || z.s > endNs || (only && !only.has(z.device))) continue;
    const id = which?.total ? OVERVIEW_TOTAL_DEVICE : z.device;
    let d = devices.get(id);
    if (!d) devices.set(id, (d = { deviceId: id, kernels: new Array(buckets).fill(0), copies: new Array(buckets).fill(0), other: new Array(buckets).fill(0) }));
    const out = d[TRACK_OF_TABLE.get(z.t)!];
    const busy = z.busy ?? 0;
    const span = Math.max(1, z.e - z.s);
    // The zone's busy time, spread over its span, added to each bucket it overlaps by the overlap's share.
    const first = Math.max(0, Math.floor((z.s - startNs) / width));
    const last = Math.min(buckets - 1, Math.floor((z.e - startNs) / width));
    for (let b = first; b <= last; b++) {
      const a = Math.max(z.s, startNs + b * width);
      const e = Math.min(z.e, startNs + (b + 1) * width);
      if (e > a) out[b]! += (busy * (e - a)) / span / width;
      else if (z.e === z.s) out[b]! += busy / width; // an instant zone
    }
  }
  return { startNs, endNs, bucketNs: width, devices: [...devices.values()].sort((a, b) => a.deviceId - b.deviceId) };
}
