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
// measured while overlapped is scaled back by the factor (`duplexFactors`),
// and the replay slows copies down again wherever they overlap.
import type { PcieLink } from './load/tables.ts';
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
  const overlap = oppositeOverlap(trace);
  const work = uncontendedDurations(trace, duplexFactors(trace, overlap), overlap, overlap);
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

/** The direction of a copy that takes part in duplex contention (0 HtoD, 1 DtoH), -1 for any other op: isPinnedTransfer from the columns' values. */
function pinnedDirection(kind: number, category: number, detail: number): number {
  if (kind !== MEMCPY) return -1;
  if (category === HTOD) return detail >> 4 !== 1 ? 0 : -1;
  if (category === DTOH) return (detail & 15) !== 1 ? 1 : -1;
  return -1;
}

/**
 * devices.id → a dense slot, in order of first sight. A recording has a
 * few devices and its copies mostly come from one at a time, so the last
 * one found answers most lookups (a Map lookup per op cost ~0.1 s per
 * 10 M ops).
 */
class DeviceSlots {
  readonly ids: number[] = [];
  private lastId = NaN;
  private lastSlot = -1;
  slot(id: number): number {
    if (id === this.lastId) return this.lastSlot;
    let s = this.ids.indexOf(id);
    if (s < 0) s = this.ids.push(id) - 1;
    this.lastId = id;
    this.lastSlot = s;
    return s;
  }
}

/** A growable list of op indexes with its count: emptied and refilled per op without the slow path of setting a JS array's length. */
class OpList {
  ops = new Int32Array(16);
  count = 0;
  push(i: number): void {
    if (this.count === this.ops.length) {
      const grown = new Int32Array(this.count * 2);
      grown.set(this.ops);
      this.ops = grown;
    }
    this.ops[this.count++] = i;
  }
}

/**
 * Per op: time it overlapped pinned copies of the other direction on its
 * device (0 for anything else), summed over those copies: above its
 * duration where they overlapped each other (duplexFactors and
 * uncontendedDurations read it as its whole duration). Written into `out`
 * where given (any content: each op's entry is cleared when the pass
 * reaches it, before a later op adds to it), so that a caller can lend an
 * array it is done with.
 */
export function oppositeOverlap(trace: Trace, out: Float64Array = new Float64Array(trace.ops.length)): Float64Array {
  const { kind, category, detail, device, start: opStart, end: opEnd, length: n } = trace.ops;
  // One pass in start order (ops are sorted by start). Per device and
  // direction (slot * 2 + direction), the copies still running: one engine
  // per direction, so rarely more than one. Each overlapping pair is
  // counted once, when the later of the two starts, for both.
  const slots = new DeviceSlots();
  const open: OpList[] = [];
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    const dir = pinnedDirection(kind[i]!, category[i]!, detail[i]!);
    if (dir < 0) continue;
    const key = slots.slot(device[i]!) * 2;
    if (key >= open.length) open.push(new OpList(), new OpList());
    const start = opStart[i]!;
    const end = opEnd[i]!;
    const other = open[key + (1 - dir)]!;
    if (other.count) {
      const list = other.ops;
      let w = 0;
      for (let x = 0; x < other.count; x++) {
        const j = list[x]!;
        const e = opEnd[j]!;
        if (e <= start) continue;
        list[w++] = j;
        const o = Math.min(end, e) - start;
        out[i]! += o;
        out[j]! += o;
      }
      other.count = w;
    }
    const mine = open[key + dir]!;
    mine.push(i);
    if (mine.count > 8) {
      const list = mine.ops;
      let w = 0;
      for (let x = 0; x < mine.count; x++) if (opEnd[list[x]!]! > start) list[w++] = list[x]!;
      mine.count = w;
    }
  }
  return out;
}

/**
 * Duplex factors per device (devices.id): the median rate of large pinned
 * copies that overlapped the other direction (> 95% of their time) over
 * the median of those that ran alone (< 5%), where the recording has at
 * least MIN_SAMPLES of each; else DEFAULT_DUPLEX. An overlap above the
 * op's duration counts as its whole duration. (One or two samples gave
 * 0.92 for DtoH in transpose-default-stream against 0.88 in the
 * concurrent run, and the prediction for the fix came out 2% short.)
 */
const MIN_SAMPLES = 3;
export function duplexFactors(trace: Trace, overlap = oppositeOverlap(trace)): Map<number, DuplexFactor> {
  const { kind, category, detail, device, bytes, start: opStart, end: opEnd, length: n } = trace.ops;
  const SAMPLES = 10_000; // plenty for a median
  const slots = new DeviceSlots();
  const samples: { alone: number[]; over: number[] }[] = []; // slot * 2 + direction
  // Devices of the table, then those only ops name, in order of first sight
  // (consecutive ops mostly share a device: the Set sees each run once).
  const ids = new Set(trace.devices.map((d) => d.id));
  for (let i = 0; i < n; i++) {
    if (i === 0 || device[i] !== device[i - 1]) ids.add(device[i]!);
    const d = opEnd[i]! - opStart[i]!;
    if (bytes[i]! < LARGE_COPY_BYTES || d <= 0) continue;
    const dir = pinnedDirection(kind[i]!, category[i]!, detail[i]!);
    if (dir < 0) continue;
    const key = slots.slot(device[i]!) * 2 + dir;
    while (samples.length <= key) samples.push({ alone: [], over: [] });
    const s = samples[key]!;
    const share = overlap[i]! / d; // above 1: "over", as 1 is
    if (share < 0.05) {
      if (s.alone.length < SAMPLES) s.alone.push(bytes[i]! / d);
    } else if (share > 0.95 && s.over.length < SAMPLES) s.over.push(bytes[i]! / d);
  }
  const median = (l: number[]) => l.sort((a, b) => a - b)[l.length >> 1]!;
  const out = new Map<number, DuplexFactor>();
  for (const id of ids) {
    const f: DuplexFactor = { ...DEFAULT_DUPLEX };
    const slot = slots.ids.indexOf(id);
    for (const [dir, name] of [
      [0, 'HtoD'],
      [1, 'DtoH'],
    ] as const) {
      const s = slot >= 0 ? samples[slot * 2 + dir] : undefined;
      if (s && s.alone.length >= MIN_SAMPLES && s.over.length >= MIN_SAMPLES) {
        f[name] = Math.min(1, Math.max(0.5, median(s.over) / median(s.alone)));
        f.measured = true;
      }
    }
    out.set(id, f);
  }
  return out;
}

/**
 * Per op: its duration had it run alone. A pinned copy that overlapped the
 * other direction for `a` ns of its recorded duration D did D − a(1 − f)
 * ns of uncontended work. Other ops: their recorded duration. `out` may be
 * `overlap` itself (each op's duration is written after its overlap is read).
 * An overlap above the op's duration (oppositeOverlap) is clamped here.
 */
export function uncontendedDurations(
  trace: Trace,
  factors: Map<number, DuplexFactor>,
  overlap = oppositeOverlap(trace),
  out: Float64Array = new Float64Array(trace.ops.length),
): Float64Array {
  const { category, device, start: opStart, end: opEnd, length: n } = trace.ops;
  // Only copies that overlapped look their device's factors up, the last device's kept.
  let lastDevice = NaN;
  let f = DEFAULT_DUPLEX;
  for (let i = 0; i < n; i++) {
    const d = opEnd[i]! - opStart[i]!;
    let a = overlap[i]!;
    if (a <= 0) {
      out[i] = d;
      continue;
    }
    a = Math.min(a, d);
    if (device[i] !== lastDevice) {
      lastDevice = device[i]!;
      f = factors.get(lastDevice) ?? DEFAULT_DUPLEX;
    }
    out[i] = d - a * (1 - (category[i] === HTOD ? f.HtoD : f.DtoH));
  }
  return out;
}
