// Pinned-copy bandwidth the pageable-copy finding measures against: the
// recording's own pinned copies of the same direction if there are any
// (median of the larger ones), else the device's PCIe link. Kept small and
// separate from the what-if replay's bandwidth model so that findings work
// without it.
import type { Context } from './context.ts';
import { OpCategory, OpKind } from '../trace.ts';

const PINNED = 2;
/** Per-lane GB/s per direction by PCIe generation (after line encoding). */
const LANE_GBPS: Record<number, number> = { 1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563 };
/** Pinned copies reach this share of the link's rate: 50.8 GB/s of 63.0 on an H100 (gen5 x16), measured in the runner fixtures. */
const LINK_EFFICIENCY = 0.806;

const cache = new WeakMap<Context, Map<string, number | null>>();

/** Bytes per ns (= GB/s) of pinned copies of this direction on this device, or null if unknown. */
export function pinnedGbps(ctx: Context, deviceId: number, category: number): number | null {
  let m = cache.get(ctx);
  if (!m) cache.set(ctx, (m = new Map()));
  const key = `${deviceId}:${category}`;
  if (m.has(key)) return m.get(key)!;
  const { ops } = ctx.trace;
  const rates: number[] = [];
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== OpKind.Memcpy || ops.device[i] !== deviceId || ops.category[i] !== category) continue;
    const src = ops.detail[i]! >> 4;
    const dst = ops.detail[i]! & 15;
    const host = category === OpCategory.HtoD ? src : dst;
    const d = ops.end[i]! - ops.start[i]!;
    // Small copies are latency, not bandwidth.
    if (host === PINNED && ops.bytes[i]! >= 1 << 20 && d > 0) rates.push(ops.bytes[i]! / d);
  }
  let rate: number | null = null;
  if (rates.length) {
    rates.sort((a, b) => a - b);
    rate = rates[Math.floor(rates.length / 2)]!;
  } else {
    const dev = ctx.devices.get(deviceId);
    const lane = dev?.pcieGeneration ? LANE_GBPS[dev.pcieGeneration] : undefined;
    if (lane && dev?.pcieWidth) rate = lane * dev.pcieWidth * LINK_EFFICIENCY;
  }
  m.set(key, rate);
  return rate;
}
