// What the compare view shows (CompareView.tsx): the recordings compared,
// how they are aligned and offset, linked or independent zoom, the view, the
// diff's scope; and that state as a reload reads it back from the URL
// (app/url-state.ts: cmp, align, offs, linked, start/end, cscope).
import { parseScope, type Scope } from '../scope/scope.ts';
import type { View } from '../timeline/Timeline.tsx';
import { parseAlignment, type Alignment } from './align.ts';

export interface CompareState {
  /** Recording ids, the base first. */
  ids: string[];
  align: Alignment;
  /** Extra offset (ns) per recording, in `ids` order. */
  offsets: number[];
  linked: boolean;
  /** Linked: the aligned view shared by all. */
  view: View | null;
  /** What the diff analyses, in every recording alike. */
  scope: Scope;
}

export function initialCompareState(url: {
  cmp: string[];
  align?: string;
  offs: number[];
  linked: boolean;
  start?: number;
  end?: number;
  tab: string;
  cscope?: string;
}): CompareState {
  // A window means nothing across recordings (their times differ): only the other scopes are kept.
  const scope = parseScope(url.cscope);
  return {
    scope: scope.kind === 'window' ? { kind: 'steady-state' } : scope,
    ids: url.cmp,
    align: parseAlignment(url.align),
    offsets: url.offs,
    linked: url.linked,
    view: url.tab === 'compare' && url.start !== undefined && url.end !== undefined ? { start: url.start, end: url.end } : null,
  };
}
