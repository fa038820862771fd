// The In-flight row (a GPU's concurrency track): its lanes — kernels, and
// copies each way — and its label. draw.ts draws the lanes, each as stepped
// bars scaled to its own peak; the label column shows the peaks.
import type { ConcurrencyResponse, ItemKind } from '../../../profiler/contract/api.ts';

type Lane = keyof Pick<ConcurrencyResponse, 'kernels' | 'h2d' | 'd2h'>;

/** The lanes, top to bottom, with the kind whose colour each is drawn in. */
export const LANES: [Lane, ItemKind][] = [
  ['kernels', 'kernel'],
  ['h2d', 'memcpy-h2d'],
  ['d2h', 'memcpy-d2h'],
];
/** Each lane's name in the label, for one and for many. */
const LANE_NAMES: Record<Lane, [string, string]> = { kernels: ['kernel', 'kernels'], h2d: ['HtoD', 'HtoD'], d2h: ['DtoH', 'DtoH'] };

/**
 * The row's label: the most of each lane in flight at once over the
 * loaded window, lanes with none left out ("≤3 kernels · ≤1 HtoD"; a
 * "≤0 DtoH" said nothing), or that none of its lanes had any (other copies
 * and memsets have no lane of their own).
 */
export function inFlightPeaks(c: Pick<ConcurrencyResponse, Lane>): string {
  const parts: string[] = [];
  for (const [lane] of LANES) {
    let peak = 0;
    for (const v of c[lane]) peak = Math.max(peak, v);
    if (peak > 0) parts.push(`≤${peak} ${LANE_NAMES[lane][peak === 1 ? 0 : 1]}`);
  }
  return parts.length ? parts.join(' · ') : 'no kernels, HtoD or DtoH here';
}
