// How far the analysis a panel waits for has got (api.analysisProgress,
// contract/progress.ts), polled while it waits: a diagnosis of ten million
// operations takes seconds to a minute, and "Diagnosing…" alone for that
// long reads as stuck. The query side answers from what the analysis
// thread told as it went, beside the windows, so a poll never waits for
// the analysis itself.
import { useEffect, useState } from 'react';
import type { AnalysisProgress, Finding } from '../../../profiler/contract/api.ts';
import { scopeKey, type Scope } from './scope.ts';
import { getApi } from '../api/client.ts';

/** Between two polls while an answer is awaited. */
export const PROGRESS_POLL_MS = 500;

export interface Waiting {
  /** The analysis running now for the recording (maybe another scope's, ahead of ours), or null: none yet, or none reported. */
  progress: AnalysisProgress | null;
  /** When the wait began (performance.now()). */
  since: number;
  /** When progress was last asked (performance.now()): the elapsed time shown moves with the polls. */
  at: number;
}

/** While `waiting`, the progress of `recordingId`'s analysis, asked every PROGRESS_POLL_MS; null while not waiting. */
export function useAnalysisProgress(recordingId: string | null, waiting: boolean): Waiting | null {
  const [state, setState] = useState<Waiting | null>(null);
  useEffect(() => {
    if (!recordingId || !waiting) {
      setState(null);
      return;
    }
    const api = getApi();
    const since = performance.now();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const poll = () => {
      api.analysisProgress(recordingId).then(
        (progress) => {
          if (stopped) return;
          setState({ progress, since, at: performance.now() });
          timer = setTimeout(poll, PROGRESS_POLL_MS);
        },
        // Progress is a courtesy: a failed poll shows the time waited alone, and tries again.
        () => {
          if (stopped) return;
          setState((s) => ({ progress: s?.progress ?? null, since, at: performance.now() }));
          timer = setTimeout(poll, PROGRESS_POLL_MS * 2);
        },
      );
    };
    setState({ progress: null, since, at: since });
    poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [recordingId, waiting]);
  return state;
}

/**
 * The rules' findings of `scope` told before the what-if replays
 * (ProgressStep.findings), while the panel waits for the answer: the
 * analysis running is this scope's. Null when none were told yet.
 */
export function findingsSoFar(waiting: Waiting | null, scope: Scope): Finding[] | null {
  const p = waiting?.progress;
  if (!p?.findings || p.scope === null || scopeKey(p.scope) !== scopeKey(scope)) return null;
  return p.findings;
}
