// The compare view's state (compare/CompareView.tsx: the recordings
// compared, their alignment and offsets, linked zoom, its range and scope),
// first from the URL, and opening it: by default every open recording, in
// tab order (the first is the base), up to four.
import { useCallback, useState } from 'react';
import type { RecordingHandle } from '../../../profiler/contract/api.ts';
import { initialCompareState, type CompareState } from '../compare/compare-state.ts';
import { readUrl } from './url-state.ts';

export interface Compare {
  compare: CompareState;
  setCompare: (s: CompareState) => void;
  /** The Compare tab: compares the open recordings unless two of them are already chosen. */
  openCompare: () => void;
}

export function useCompare(recordings: RecordingHandle[], showTab: (tab: 'compare') => void): Compare {
  const [compare, setCompare] = useState<CompareState>(() => initialCompareState(readUrl()));
  const openCompare = useCallback(() => {
    if (compare.ids.filter((id) => recordings.some((r) => r.recordingId === id)).length < 2) {
      setCompare((c) => ({ ...c, ids: recordings.slice(0, 4).map((r) => r.recordingId), offsets: [], view: null }));
    }
    showTab('compare');
  }, [compare.ids, recordings, showTab]);
  return { compare, setCompare, openCompare };
}
