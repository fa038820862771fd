// The view a recording opens on: its GPU work, which is what the timeline is
// opened to see, not the whole recording — in a Python program start-up
// (imports, CUDA initialisation, JIT) easily lasts hundreds of times longer
// than the kernels, which would then be a few one-pixel lines. At once the
// summary's GPU span (first operation to last); once start-up is known
// (scopeInfo of the steady state, asked after the first frame), the steady
// state's part of it: the time the findings look at. A small margin on each
// side keeps the first and last operations off the edges.
import type { RecordingSummary, Startup } from '../../../profiler/contract/api.ts';
import { clampView, type View } from '../timeline/Timeline.tsx';

/** Share of the span added on each side. */
export const FIRST_VIEW_MARGIN = 0.03;

/**
 * The first view of `s`: its GPU span, from start-up's end where start-up
 * overlaps it (`startup`: undefined or null while unknown or none); the
 * whole recording where there is no GPU operation.
 */
export function firstView(s: Pick<RecordingSummary, 'startNs' | 'endNs' | 'gpuSpan'>, startup?: Pick<Startup, 'endNs'> | null): View {
  const gpu = s.gpuSpan;
  if (!gpu || !(gpu.endNs > gpu.startNs)) return clampView({ start: s.startNs, end: s.endNs }, s);
  // Start-up ending inside the GPU span leaves its first part out; one ending after all GPU work (nothing steady) does not.
  const start = startup && startup.endNs > gpu.startNs && startup.endNs < gpu.endNs ? startup.endNs : gpu.startNs;
  const margin = FIRST_VIEW_MARGIN * (gpu.endNs - start);
  // The margin stops at the recording's ends: no time before its first event on the ruler.
  return clampView({ start: Math.max(s.startNs, start - margin), end: Math.min(s.endNs, gpu.endNs + margin) }, s);
}
