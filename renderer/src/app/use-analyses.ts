// The shown recording's analyses: its findings on the scope, and its
// overlays (start-up, NVTX ranges, iterations). They start after the
// timeline's first frame, which they must not delay (another tab draws no
// timeline: nothing to wait for there); a recording being written is
// analysed again at most every LIVE_ANALYSIS_MS as it grows (and once more
// when it is finished). Start-up known, the first view narrows to the
// steady state's GPU span (first-view.ts).
import { useEffect } from 'react';
import { useOverlays, type Overlays } from '../scope/overlays.ts';
import { useScopedAnswer, type ScopedState, type AnswerOf } from '../scope/scoped-answer.ts';
import type { IterationTrack } from '../timeline/iterations.ts';
import { LIVE_ANALYSIS_MS, useThrottled } from './use-live.ts';
import type { RecordingUi } from './use-recording-ui.ts';

export interface Analyses {
  /** Bumped when a live recording's analyses are asked again (the Stats tab's refresh). */
  analysed: number;
  findings: ScopedState<AnswerOf<'findings'>>;
  overlays: Overlays;
  iterations: IterationTrack | null;
  /** The iterations row's instance that is the scope (null: none). */
  chosenInstance: number | null;
}

export function useAnalyses(ui: Pick<RecordingUi, 'summary' | 'scope' | 'ready' | 'startupKnown'>, timelineShown: boolean, revision: number): Analyses {
  const { summary, scope, startupKnown } = ui;
  const analyse = ui.ready || !timelineShown;
  const analysed = useThrottled(revision, LIVE_ANALYSIS_MS);
  const findings = useScopedAnswer('findings', summary?.recordingId ?? null, scope, analyse, analysed);
  const overlays = useOverlays(summary?.recordingId ?? null, analyse, analysed);
  useEffect(() => {
    if (summary && overlays.startup !== undefined) startupKnown(summary.recordingId, overlays.startup);
  }, [summary, overlays.startup, startupKnown]);
  const iterations = overlays.iterations ?? null;
  const chosenInstance = scope.kind === 'range' && iterations && scope.name === iterations.name ? (scope.instance ?? null) : null;
  return { analysed, findings, overlays, iterations, chosenInstance };
}
