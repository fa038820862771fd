// The visible range and the moves made on it. Every way the view changes —
// keys, the wheel, a drag, the Fit/+/− buttons, the overview, a search or
// dependency jump, a finding's evidence, a URL read back — ends in
// clampView, so no path can leave the recording: a view never starts before
// the recording (nor before time 0, the recording origin, when the recording
// starts after it: no negative times on the ruler), never ends after it by
// more than EDGE of its own width, and is never narrower than MIN_SPAN_NS.
import type { RecordingSummary } from '../../../profiler/contract/api.ts';

export interface View {
  start: number;
  end: number;
}

/**
 * The narrowest view: 100 ns across the canvas. Times are whole
 * nanoseconds, so at about 1000 px this is ~0.1 ns a pixel already — one
 * nanosecond is ten pixels wide; narrower would only magnify nothing.
 */
export const MIN_SPAN_NS = 100;
/** How far past either end of the recording a view may reach, as a share of its own width: an item at the very edge is not drawn against it. */
export const EDGE = 0.02;

/** The recording's ends a view is kept within (a live recording's are what it holds now). */
export type Bounds = Pick<RecordingSummary, 'startNs' | 'endNs'>;

/**
 * `v` moved and narrowed into `b`: a view wider than the recording (with its
 * margins) becomes that wide, around its middle; one that reaches past an
 * end keeps its width and is moved back in. An empty or inverted view is the
 * whole recording.
 */
export function clampView(v: View, b: Bounds): View {
  const full = Math.max(MIN_SPAN_NS, b.endNs - b.startNs);
  let span = v.end - v.start;
  if (!(span > 0)) return { start: b.startNs, end: b.startNs + full };
  span = Math.max(span, MIN_SPAN_NS);
  const margin = EDGE * Math.min(span, full);
  // Before the origin only when the recording itself starts there (a job's rank aligned to another's clock can).
  const lo = Math.min(b.startNs, Math.max(0, b.startNs - margin));
  const hi = b.startNs + full + margin;
  // As wide as it may be: from the low bound exactly (hi - span could round below it).
  if (span >= hi - lo) return { start: lo, end: hi };
  const start = Math.min(Math.max((v.start + v.end) / 2 - span / 2, lo), hi - span);
  return { start, end: start + span };
}

/**
 * The view zoomed by `factor` (< 1: in) around the point `frac` (0..1)
 * across it, which stays where it is — down to MIN_SPAN_NS, not past it:
 * clampView would widen a narrower view around its middle, and the view
 * would creep towards the cursor with each further step.
 */
export function zoomView(v: View, factor: number, frac: number): View {
  const t = v.start + frac * (v.end - v.start);
  const span = Math.max(MIN_SPAN_NS, (v.end - v.start) * factor);
  return { start: t - span * frac, end: t + span * (1 - frac) };
}

/** The view moved by `fraction` of its width (> 0: later). */
export function panView(v: View, fraction: number): View {
  const d = (v.end - v.start) * fraction;
  return { start: v.start + d, end: v.end + d };
}
