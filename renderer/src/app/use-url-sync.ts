// Mirrors what survives a reload into the URL hash (url-state.ts), 120 ms
// after it last changed: the shown recording, its range (the compare view's
// aligned range in the compare tab), selection, hidden rows, folded groups,
// scope, the tab, and the compare view's state.
import { useEffect } from 'react';
import type { ItemRef } from '../../../profiler/contract/api.ts';
import { formatAlignment } from '../compare/align.ts';
import type { CompareState } from '../compare/compare-state.ts';
import { scopeKey, type Scope } from '../scope/scope.ts';
import type { View } from '../timeline/Timeline.tsx';
import { writeUrl, type UrlState } from './url-state.ts';

export interface UrlSource {
  recordingId: string | null;
  view: View | null;
  selected: ItemRef | null;
  hidden: Set<string>;
  folded: Set<string>;
  /** What the recording opens folded (rows.ts defaultFolded): left out of the URL while it is what is folded. */
  foldedByDefault: Set<string>;
  scope: Scope;
  tab: UrlState['tab'];
  compare: CompareState;
}

export function useUrlSync({ recordingId, view, selected, hidden, folded, foldedByDefault, scope, tab, compare }: UrlSource): void {
  useEffect(() => {
    if (!recordingId) return;
    // The compare view keeps its own (aligned) range in start/end.
    const shown = tab === 'compare' ? compare.view : view;
    const t = setTimeout(
      () =>
        writeUrl({
          rec: recordingId,
          start: shown?.start,
          end: shown?.end,
          sel: selected ?? undefined,
          hide: [...hidden],
          fold: folded.size === foldedByDefault.size && [...folded].every((id) => foldedByDefault.has(id)) ? null : [...folded],
          tab,
          scope: scopeKey(scope),
          cmp: compare.ids,
          align: formatAlignment(compare.align),
          offs: compare.offsets,
          linked: compare.linked,
          cscope: scopeKey(compare.scope),
        }),
      120,
    );
    return () => clearTimeout(t);
  }, [recordingId, view, selected, hidden, folded, foldedByDefault, scope, tab, compare]);
}
