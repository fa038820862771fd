// Fetching the spans event waits held operations' starts (api.waitSpans),
// for the window the loader has just loaded: the same rows, range and
// resolution, so they come and go with the rest of what is drawn, and a
// pan inside the loaded window asks for nothing. Asked apart from the
// window itself: the answer comes from the analysis thread (the first one
// walks the recording's dependencies), and the timeline must not wait for
// it. A recording without any stops being asked.
import { useEffect, useState } from 'react';
import type { WaitSpan } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import type { Loaded } from './window-loader.ts';

export interface WaitSpansState {
  spans: readonly WaitSpan[];
  /** An answer is on its way (the test hooks' idle() waits for it). */
  pending: boolean;
}

const NONE: readonly WaitSpan[] = [];

export function useWaitSpans(recordingId: string, loaded: Loaded | null, onError: (err: unknown) => void): WaitSpansState {
  const [state, setState] = useState<WaitSpansState>({ spans: NONE, pending: false });
  // Per recording: false once it answered that it has no span at all.
  const [has, setHas] = useState<{ recordingId: string; any: boolean }>({ recordingId, any: true });
  const any = has.recordingId !== recordingId || has.any;
  useEffect(() => {
    if (!loaded || !any) {
      setState({ spans: NONE, pending: false });
      return;
    }
    const rows = [...loaded.byRow.keys()].filter((r) => r.startsWith('stream:'));
    if (rows.length === 0) {
      setState({ spans: NONE, pending: false });
      return;
    }
    let live = true;
    setState((s) => ({ spans: s.spans, pending: true }));
    getApi()
      .waitSpans(recordingId, { rows, startNs: loaded.startNs, endNs: loaded.endNs, resolutionNs: loaded.resolutionNs })
      .then((r) => {
        if (!live) return;
        setState({ spans: r.spans, pending: false });
        if (!r.any) setHas({ recordingId, any: false });
      })
      .catch((err: unknown) => {
        if (!live) return;
        setState({ spans: NONE, pending: false });
        onError(err);
      });
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- asked again when another window is loaded, not when the parent hands a new error callback
  }, [recordingId, loaded, any]);
  return state;
}
