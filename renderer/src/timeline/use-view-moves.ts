// The moves of the view the timeline's input makes (the wheel, a drag, the
// keys, the Fit/+/− buttons, a click on a merged span or an iteration), each
// ending in clampView (view.ts): clamped to the recording, or to what a live
// one holds now (its summary is asked again only every second).
import { useCallback, type RefObject } from 'react';
import type { RecordingSummary } from '../../../profiler/contract/api.ts';
import { clampView, panView, zoomView, type View } from './view.ts';

/** What the moves read when they happen (the timeline's latest props). */
export interface ViewOwner {
  summary: Pick<RecordingSummary, 'startNs' | 'endNs'>;
  view: View;
  onView: (v: View) => void;
  live?: { endNs: number; following: boolean } | null;
}

export interface ViewMoves {
  /** Any view, clamped. */
  setView: (v: View) => void;
  /** Zoom by `factor` around canvas x `at`, then pan by `fraction` of the width: one view, clamped. */
  moveView: (factor: number, fraction: number, at: number) => void;
  zoomAt: (factor: number, at: number) => void;
  panBy: (fraction: number) => void;
  /** The range, whichever way round (it stays selected: in the app it is what the findings and stats analyse). */
  zoomToRange: (r: [number, number]) => void;
  /** The whole recording. */
  fit: () => void;
  /** Around [startNs, endNs] with `margin` of its length (at least `minNs`) on each side. */
  zoomAround: (startNs: number, endNs: number, margin: number, minNs?: number) => void;
}

/** The moves over `owner`'s view, on a canvas `width()` CSS pixels wide. All stable. */
export function useViewMoves(owner: RefObject<ViewOwner>, width: () => number): ViewMoves {
  const setView = useCallback(
    (v: View) => {
      const { summary: s, live } = owner.current;
      owner.current.onView(clampView(v, { startNs: s.startNs, endNs: Math.max(s.endNs, live?.endNs ?? s.endNs) }));
    },
    [owner],
  );
  const moveView = useCallback(
    (factor: number, fraction: number, at: number) => {
      const w = width();
      // Following a live recording's end, zooming keeps the end where it is (still followed).
      const frac = owner.current.live?.following ? 1 : Math.min(1, Math.max(0, at / w));
      setView(panView(zoomView(owner.current.view, factor, frac), fraction));
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps -- width reads a ref of the timeline's; a new function for it each render is no new move
    [setView, owner],
  );
  const zoomAt = useCallback((factor: number, at: number) => moveView(factor, 0, at), [moveView]);
  const panBy = useCallback((fraction: number) => moveView(1, fraction, 0), [moveView]);
  const zoomToRange = useCallback((r: [number, number]) => setView({ start: Math.min(r[0], r[1]), end: Math.max(r[0], r[1]) }), [setView]);
  const fit = useCallback(() => {
    const s = owner.current.summary;
    setView({ start: s.startNs, end: s.endNs });
  }, [setView, owner]);
  const zoomAround = useCallback(
    (startNs: number, endNs: number, margin: number, minNs = 0) => {
      const pad = Math.max(endNs - startNs, minNs) * margin;
      setView({ start: startNs - pad, end: endNs + pad });
    },
    [setView],
  );
  return { setView, moveView, zoomAt, panBy, zoomToRange, fit, zoomAround };
}
