// Where the panels' links go: an item related to the selection (its launch,
// its GPU work), a dependency's end (shown with the selection in view), a
// finding (its evidence highlighted and shown, on the timeline), a stream
// of the Stats tab (its row shown on the timeline).
import { useCallback } from 'react';
import type { DependencyEnd, Finding, ItemDetails, ItemRef, RecordingSummary } from '../../../profiler/contract/api.ts';
import { clampView, type View } from '../timeline/Timeline.tsx';
import type { GoTo } from '../base/callbacks.ts';

export interface Navigation {
  onGoRelated: (ref: ItemRef, startNs: number, endNs: number) => void;
  onGoDependency: (e: DependencyEnd) => void;
  showFinding: (f: Finding) => void;
  onShowStream: (rowId: string) => void;
}

export function useNavigation(p: {
  summary: RecordingSummary | null;
  details: ItemDetails | null;
  goTo: GoTo;
  showEvidence: (f: Finding) => void;
  setView: (v: View) => void;
  showTimeline: () => void;
  showRow: (rowId: string) => void;
}): Navigation {
  const { summary, details, goTo, showEvidence, setView, showTimeline, showRow } = p;
  const onGoRelated = useCallback(
    (ref: ItemRef, s: number, e: number) => {
      const r = details?.related.find((x) => x.ref.table === ref.table && x.ref.id === ref.id);
      goTo(ref, r?.rowId, s, e);
    },
    [details, goTo],
  );
  const onGoDependency = useCallback(
    (e: DependencyEnd) => goTo(e.ref, e.rowId, Math.min(e.startNs, details?.startNs ?? e.startNs), Math.max(e.endNs, details?.endNs ?? e.endNs)),
    [details, goTo],
  );
  const showFinding = useCallback(
    (f: Finding) => {
      if (!summary) return;
      showEvidence(f);
      const pad = Math.max(f.evidence.window.end - f.evidence.window.start, 1000) * 0.05;
      setView(clampView({ start: f.evidence.window.start - pad, end: f.evidence.window.end + pad }, summary));
      showTimeline();
    },
    [summary, showEvidence, setView, showTimeline],
  );
  const onShowStream = useCallback(
    (rowId: string) => {
      showTimeline();
      showRow(rowId);
    },
    [showRow, showTimeline],
  );
  return { onGoRelated, onGoDependency, showFinding, onShowStream };
}
