// Pinned-copy bandwidth per device and direction: what a pageable copy
// would run at once its host buffer is pinned (whatif.ts, pinPageableCopies).
// In order of trust:
//  1. the recording's own pinned copies of that device and direction
//     (median rate of the large ones: small copies measure latency);
//  2. a reference the caller passes: pinned bandwidth measured in another
//     recording on the same kind of machine (`referenceFrom`);
//  3. the device's PCIe link (devices.pcie_generation / pcie_width, schema
//     v4) × 0.806 — the share of the link's rate pinned copies reached on
//     the H100 fixtures: 50.8 GB/s measured against gen5 x16's 63.0 GB/s;
//  4. null: unknown (the caller says the estimate is unavailable).
// Rates are bytes per ns, which is GB/s (10^9 bytes per second).
//
// Duplex contention: a pinned HtoD copy and a pinned DtoH copy of one
// device running at the same time slow each other down (same PCIe link and
// host memory). On the H100 fixtures: 54.6 GB/s alone in both directions,
// ~51 GB/s HtoD and ~49 GB/s DtoH while the other direction runs (factors
// 0.935 and 0.89; normalise and transpose, concurrent / events / priority /
// default-stream runs). Rates here are uncontended ("alone") rates: a copy
// measured while overlapped is scaled back by the factor (`uncontendedWork`),
// and the replay slows copies down again wherever they overlap.
import type { PcieLink } from './load/tables.ts';
import { duplexSamplesNatively, uncontendedDurationsNatively } from '../native/addon.ts';
import { OpCategory, OpKind, type Trace } from './trace.ts';

// Enum values as module constants: the hot loops read them per op, and a test
// runner that rewrites imports into property reads (vitest) made each read a
// lookup on the imported module's namespace.
const MEMCPY = OpKind.Memcpy;
const HTOD = OpCategory.HtoD;
const DTOH = OpCategory.DtoH;

export type Direction = 'HtoD' | 'DtoH';

export interface PinnedBandwidth {
  deviceId: number;
  direction: Direction;
  /** Bytes per ns (= GB/s), or null if unknown. */
  gbPerS: number | null;
  source: 'recording' | 'reference' | 'pcie' | null;
  /** Pinned copies the rate was measured from (source 'recording'). */
  copies: number;
}

/** Measured pinned bandwidth from another recording (e.g. the same workload's run with pinned memory). */
export interface BandwidthReference {
  HtoD: number | null;
  DtoH: number | null;
  /** Where it was measured, for the estimate's notes. */
  from: string;
}

const PINNED = 2;
/** Copies below this measure per-copy latency rather than bandwidth. */
const LARGE_COPY_BYTES = 1 << 20;
/** PCIe per-lane GB/s per direction by generation, after line encoding (8b/10b to gen 2, 128b/130b gen 3–5, FLIT gen 6). */
const LANE_GBPS: Record<number, number> = { 1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563 };
/** Pinned copies reach this share of the link's rate: 50.8 GB/s of 63.0 on an H100 (gen5 x16), measured in the runner fixtures. */
export const PCIE_EFFICIENCY = 0.806;

/**
 * Pinned bandwidth of each device of `trace` in both directions. `stored`,
 * if given, is the recording's PCIe links as its file stores them
 * (load/tables.ts readPcieLinks): taken where the loaded devices lack them
 * (a Trace built by hand or by an older loader).
 */
export function pinnedBandwidth(trace: Trace, stored?: PcieLink[], reference?: BandwidthReference): PinnedBandwidth[] {
  const measured = measuredRates(trace);
  const links = new Map<number, { generation: number | null; width: number | null }>();
  for (const d of trace.devices) links.set(d.id, { generation: d.pcieGeneration ?? null, width: d.pcieWidth ?? null });
  // None from a file older than schema v4, which has no PCIe columns: the link stays unknown.
  for (const r of stored ?? []) {
    const l = links.get(r.id);
    if (!l || l.generation === null || l.width === null) links.set(r.id, { generation: l?.generation ?? r.generation, width: l?.width ?? r.width });
  }
  const deviceIds = new Set<number>(trace.devices.map((d) => d.id));
  for (let i = 0; i < trace.ops.length; i++) deviceIds.add(trace.ops.device[i]!);
  const out: PinnedBandwidth[] = [];
  for (const deviceId of [...deviceIds].sort((a, b) => a - b)) {
    for (const direction of ['HtoD', 'DtoH'] as const) {
      const m = measured.get(`${deviceId}:${direction}`);
      if (m) {
        out.push({ deviceId, direction, gbPerS: m.rate, source: 'recording', copies: m.copies });
        continue;
      }
      const ref = reference?.[direction] ?? null;
      if (ref !== null && ref > 0) {
        out.push({ deviceId, direction, gbPerS: ref, source: 'reference', copies: 0 });
        continue;
      }
      const link = links.get(deviceId);
      const lane = link?.generation ? LANE_GBPS[link.generation] : undefined;
      if (lane && link?.width) out.push({ deviceId, direction, gbPerS: lane * link.width * PCIE_EFFICIENCY, source: 'pcie', copies: 0 });
      else out.push({ deviceId, direction, gbPerS: null, source: null, copies: 0 });
    }
  }
  return out;
}

/** The rate for one device and direction from pinnedBandwidth's list (null if unknown). */
export function bandwidthFor(list: PinnedBandwidth[], deviceId: number, direction: Direction): PinnedBandwidth | null {
  return list.find((b) => b.deviceId === deviceId && b.direction === direction) ?? null;
}

/**
 * A reference from another recording's own pinned copies (median over its
 * devices' measured rates), to pass to pinnedBandwidth / the what-if
 * estimate for a recording that has no pinned copies of its own.
 */
export function referenceFrom(trace: Trace, from: string): BandwidthReference {
  const measured = measuredRates(trace);
  const pick = (direction: Direction): number | null => {
    const rates = [...measured]
      .filter(([k]) => k.endsWith(`:${direction}`))
      .map(([, v]) => v.rate)
      .sort((a, b) => a - b);
    return rates.length ? rates[Math.floor(rates.length / 2)]! : null;
  };
  return { HtoD: pick('HtoD'), DtoH: pick('DtoH'), from };
}

/** Median uncontended rate of the large pinned copies, per `${deviceId}:${direction}`. */
function measuredRates(trace: Trace): Map<string, { rate: number; copies: number }> {
  const { ops } = trace;
  const { work } = uncontendedWork(trace);
  const rates = new Map<string, number[]>();
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== MEMCPY) continue;
    const cat = ops.category[i]!;
    if (cat !== HTOD && cat !== DTOH) continue;
    const hostKind = cat === HTOD ? ops.detail[i]! >> 4 : ops.detail[i]! & 15;
    const d = work[i]!;
    if (hostKind !== PINNED || ops.bytes[i]! < LARGE_COPY_BYTES || d <= 0) continue;
    const key = `${ops.device[i]}:${cat === HTOD ? 'HtoD' : 'DtoH'}`;
    (rates.get(key) ?? rates.set(key, []).get(key)!).push(ops.bytes[i]! / d);
  }
  const out = new Map<string, { rate: number; copies: number }>();
  for (const [key, l] of rates) {
    l.sort((a, b) => a - b);
    out.set(key, { rate: l[Math.floor(l.length / 2)]!, copies: l.length });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Duplex contention

/** Speed of a pinned copy while the other direction runs, as a share of its speed alone (per direction). */
export interface DuplexFactor {
  HtoD: number;
  DtoH: number;
  measured: boolean;
}

/** Measured on the H100 fixtures (see the top of this file); used where a recording cannot show it. */
export const DEFAULT_DUPLEX: DuplexFactor = { HtoD: 0.935, DtoH: 0.89, measured: false };

/** A copy that takes part in duplex contention: HtoD/DtoH with pinned host memory (pageable ones are bound by staging, not the link). */
export function isPinnedTransfer(trace: Trace, i: number): boolean {
  const { ops } = trace;
  return pinnedDirection(ops.kind[i]!, ops.category[i]!, ops.detail[i]!) >= 0;
}

/**
 * The direction of a copy that takes part in duplex contention (0 HtoD, 1
 * DtoH), -1 for any other op: isPinnedTransfer from the columns' values.
 * native/addon/src/trace_codes.h has its own for the passes over every op
 * (test/addon/duplex-work.test.ts holds the two to each other).
 */
function pinnedDirection(kind: number, category: number, detail: number): number {
  if (kind !== MEMCPY) return -1;
  if (category === HTOD) return detail >> 4 !== 1 ? 0 : -1;
  if (category === DTOH) return (detail & 15) !== 1 ? 1 : -1;
  return -1;
}

/**
 * Duplex factors per device: the median rate of large pinned copies that
 * overlapped the other direction (more than OVER_ABOVE of their time) over
 * the median of those that ran alone (less than ALONE_BELOW), where the
 * recording has at least MIN_SAMPLES of each; else DEFAULT_DUPLEX. An
 * overlap above a copy's duration (copies of the other direction
 * overlapping each other) counts as its whole duration. (One or two
 * samples gave 0.92 for DtoH in transpose-default-stream against 0.88 in
 * the concurrent run, and the prediction for the fix came out 2% short.)
 */
const MIN_SAMPLES = 3;
const ALONE_BELOW = 0.05;
const OVER_ABOVE = 0.95;
/** The first this many samples of each device and direction: plenty for a median. */
const SAMPLES = 10_000;

/**
 * Per op its uncontended work, and the duplex factors per device
 * (devices.id). A pinned copy that overlapped the other direction for `a`
 * ns of its recorded duration D did D − a(1 − f) ns of uncontended work, f
 * its device's factor for its direction; other ops their recorded
 * duration. Three passes over every op, native
 * (native/addon/src/duplex_work.cc: ~0.25 s of JavaScript at 10 M); the
 * policy (the samples, their medians, the bounds) here. Written into `out`
 * where given (any content), so that a caller can lend an array it is done
 * with. `clipBy`: each op's dense stream, for the replay's work, which ends
 * where the next op on its stream began (replay-host.ts deviceWork).
 */
export function uncontendedWork(
  trace: Trace,
  out: Float64Array = new Float64Array(trace.ops.length),
  clipBy?: { streamOf: Int32Array; streams: number },
): { work: Float64Array; factors: Map<number, DuplexFactor> } {
  const { kind, category, detail, device, bytes, start, end, length: n } = trace.ops;
  const columns = { ops: n, kind, category, detail, device, start, end };
  const s = duplexSamplesNatively({
    ...columns,
    bytes,
    overlap: out,
    largeBytes: LARGE_COPY_BYTES,
    aloneBelow: ALONE_BELOW,
    overAbove: OVER_ABOVE,
    samples: SAMPLES,
  });
  const median = (l: number[]) => l.sort((a, b) => a - b)[l.length >> 1]!;
  const factors = new Map<number, DuplexFactor>();
  // Devices of the table, then those only ops name, in order of first sight.
  for (const id of new Set([...trace.devices.map((d) => d.id), ...s.devices])) {
    const f: DuplexFactor = { ...DEFAULT_DUPLEX };
    const slot = s.slots.indexOf(id);
    for (const [dir, name] of [
      [0, 'HtoD'],
      [1, 'DtoH'],
    ] as const) {
      const alone = slot >= 0 ? s.alone[slot * 2 + dir] : undefined;
      const over = slot >= 0 ? s.over[slot * 2 + dir] : undefined;
      if (alone && over && alone.length >= MIN_SAMPLES && over.length >= MIN_SAMPLES) {
        f[name] = Math.min(1, Math.max(0.5, median(over) / median(alone)));
        f.measured = true;
      }
    }
    factors.set(id, f);
  }
  const ids = [...factors.keys()];
  uncontendedDurationsNatively({
    ...columns,
    overlap: out,
    out,
    factorDevices: Int32Array.from(ids),
    htod: Float64Array.from(ids, (id) => factors.get(id)!.HtoD),
    dtoh: Float64Array.from(ids, (id) => factors.get(id)!.DtoH),
    defaultHtoD: DEFAULT_DUPLEX.HtoD,
    defaultDtoH: DEFAULT_DUPLEX.DtoH,
    streamOf: clipBy?.streamOf ?? null,
    streams: clipBy?.streams ?? 0,
  });
  return { work: out, factors };
}
