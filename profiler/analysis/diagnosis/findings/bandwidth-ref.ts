// Pinned-copy bandwidth the pageable-copy finding measures against: one
// lookup per device and direction over analysis/bandwidth.ts (the
// recording's own pinned copies, else the PCIe link), computed once per
// diagnosis.
import { bandwidthFor, pinnedBandwidth, type PinnedBandwidth } from '../../bandwidth.ts';
import { OpCategory } from '../../trace.ts';
import type { Context } from './context.ts';

const cache = new WeakMap<Context, PinnedBandwidth[]>();

/** Bytes per ns (= GB/s) of pinned copies of this direction on this device, or null if unknown. */
export function pinnedGbps(ctx: Context, deviceId: number, category: number): number | null {
  let list = cache.get(ctx);
  if (!list) cache.set(ctx, (list = pinnedBandwidth(ctx.trace)));
  return bandwidthFor(list, deviceId, category === OpCategory.HtoD ? 'HtoD' : 'DtoH')?.gbPerS ?? null;
}
