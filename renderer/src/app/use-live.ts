// Following a recording while it is being written (docs/COMMANDS.md,
// "Live recordings"): the page polls recordingState() and, when its
// revision moves, the parts that grew are asked for again — the windows at
// once (the timeline), the summary and the overview at most every second,
// the findings, stats and overlays at most every LIVE_ANALYSIS_MS and never
// while the last request is on its way (scoped-answer.ts). A finished
// recording is asked once and never again.
//
// The view follows the end: while it shows the newest data, new data moves
// it along (its width kept; a view that shows the whole of a short
// recording keeps showing all of it until it spans LIVE_SPAN_NS). Panning
// or zooming away from the end stops that; "Jump to now" comes back.
import { useCallback, useEffect, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import type { RecordingState } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import type { View } from '../timeline/Timeline.tsx';

/** Between two polls of recordingState: with the recorder's 100 ms ingest polls and the collector's 500 ms flushes, new work shows within a second of the GPU doing it. */
export const LIVE_POLL_MS = 250;
/** The summary (rows, labels) and the minimap are asked again at most this often. */
export const LIVE_SUMMARY_MS = 1000;
/** Findings, stats and overlays at most this often (the query side bounds its analyses the same way: recording-query.ts LIVE_ANALYSIS_MS). */
export const LIVE_ANALYSIS_MS = 5000;
/** A followed view that shows a short recording whole keeps showing all of it up to this span, then slides with it. */
export const LIVE_SPAN_NS = 10e9;

/**
 * The recording's state, polled while it is live. The same object while
 * nothing changed (the app re-renders on every pan). null before the first
 * answer, and for no recording.
 */
export function useRecordingState(recordingId: string | null): RecordingState | null {
  const [state, setState] = useState<{ id: string; state: RecordingState } | null>(null);
  useEffect(() => {
    if (!recordingId) return;
    const api = getApi();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const poll = () => {
      api.recordingState(recordingId).then(
        (s) => {
          if (stopped) return;
          setState((old) => (old?.id === recordingId && old.state.revision === s.revision && old.state.live === s.live ? old : { id: recordingId, state: s }));
          if (s.live) timer = setTimeout(poll, LIVE_POLL_MS);
        },
        // A poll that failed (the recorder's commit held the file a while): try again.
        () => {
          if (!stopped) timer = setTimeout(poll, LIVE_POLL_MS * 4);
        },
      );
    };
    poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [recordingId]);
  return state && state.id === recordingId ? state.state : null;
}

/**
 * `value`, changed at most every `ms` (the last change always comes
 * through, `ms` after the one before it at most).
 */
export function useThrottled<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const wait = last.current + ms - performance.now();
    const take = () => {
      last.current = performance.now();
      setShown(value);
    };
    if (wait <= 0) {
      take();
      return;
    }
    const t = setTimeout(take, wait);
    return () => clearTimeout(t);
  }, [value, shown, ms]);
  return shown;
}

export interface Follow {
  /** The view shows the newest data and moves with it. */
  following: boolean;
  /** Back to the end, keeping the width. */
  jumpToNow: () => void;
}

/** Keeps the view at the end of a live recording while it is there (above). */
export function useFollowEnd(state: RecordingState | null, view: View | null, setView: Dispatch<SetStateAction<View | null>>): Follow {
  // The data end the view was last moved to (and the one before): a view that ends before it was moved away by the user.
  const pinned = useRef<{ end: number; previous: number | null } | null>(null);
  const endNs = state?.endNs ?? null;
  const startNs = state?.startNs ?? 0;
  const revision = state?.revision ?? -1;
  const followed = !!state && (state.live || pinned.current !== null);
  // Another recording (or none): nothing pinned yet.
  useEffect(() => {
    if (!state) pinned.current = null;
  }, [state]);
  useEffect(() => {
    if (!followed || endNs === null || endNs <= startNs) return;
    // Moved here, outside the updater: React may run an updater twice (an input's update
    // taken first, this one replayed after it), so the updater only reads what it was given.
    const before = pinned.current;
    pinned.current = { end: endNs, previous: before?.end ?? null };
    setView((v) => {
      // Never pinned yet: the view is the one the recording opened with, at its end as the summary had it.
      if (!v || (before && !atEnd(v, before))) return v;
      const span = v.end - v.start;
      if (v.start <= startNs + span * 0.02) {
        // The whole recording is shown: while it is short, keep showing all of it.
        const width = Math.max(span, Math.min(endNs - startNs, LIVE_SPAN_NS));
        return endNs - startNs <= width ? { start: startNs, end: endNs } : { start: endNs - width, end: endNs };
      }
      return { start: endNs - span, end: endNs };
    });
  }, [followed, revision, endNs, startNs, setView]);
  const following = !!state?.live && !!view && atEnd(view, pinned.current ?? { end: endNs ?? 0, previous: null });
  const jumpToNow = useCallback(() => {
    if (endNs === null) return;
    pinned.current = { end: endNs, previous: pinned.current?.end ?? null };
    setView((v) => (v ? { start: endNs - (v.end - v.start), end: endNs } : v));
  }, [endNs, setView]);
  return { following, jumpToNow };
}

/**
 * Whether a view is at the end it was moved to: ending there or later
 * (2% of its width of slack), or where it was moved the time before — a
 * zoom at the right edge computed from the view just before the last move
 * lands there, and the user did not mean to leave the end by it.
 */
function atEnd(v: View, pinned: { end: number; previous: number | null }): boolean {
  const tol = (v.end - v.start) * 0.02;
  return v.end >= pinned.end - tol || (pinned.previous !== null && Math.abs(v.end - pinned.previous) <= tol);
}
