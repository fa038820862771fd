// The edits of the compare view's state (CompareState: which recordings,
// the base, the alignment, the offsets, linked or independent zoom, the
// diff's scope), each built on the newest state: two quick edits (an
// occurrence typed, then a name entered) must not build the second on the
// state from before the first, or the first is lost.
import { useRef, type RefObject } from 'react';
import type { Scope } from '../scope/scope.ts';
import type { View } from '../timeline/Timeline.tsx';
import type { Alignment } from './align.ts';
import type { CompareState } from './compare-state.ts';

export interface CompareEdits {
  /** The newest state, including an edit made since the last render. */
  latest: RefObject<CompareState>;
  update: (edit: (s: CompareState) => CompareState) => void;
  setAlign: (a: Alignment) => void;
  /** A name or occurrence edit keeps the other half as it is now, not as it was rendered. */
  editNamed: (edit: { name?: string; occurrence?: number }) => void;
  setScope: (scope: Scope) => void;
  setOffset: (i: number, ns: number) => void;
  /** Linked: the focused lane's view for all; independent: each lane starts from the shared one. */
  setLinked: (linked: boolean) => void;
  /** A recording in or out of the comparison. */
  toggle: (id: string) => void;
  makeBase: (id: string) => void;
}

export function useCompareEdits(
  state: CompareState,
  onState: (s: CompareState) => void,
  ids: string[],
  /** The independent lanes' views, and the focused lane's index. */
  lanes: { views: Map<string, View>; setViews: (v: Map<string, View>) => void; focused: number },
): CompareEdits {
  const latest = useRef(state);
  latest.current = state;
  const update = (edit: (s: CompareState) => CompareState) => {
    latest.current = edit(latest.current);
    onState(latest.current);
  };
  const setAlign = (a: Alignment) => update((s) => ({ ...s, align: a, view: null }));
  const editNamed = (edit: { name?: string; occurrence?: number }) =>
    update((s) => (s.align.by === 'kernel' || s.align.by === 'nvtx' ? { ...s, align: { ...s.align, ...edit }, view: null } : s));
  const setScope = (scope: Scope) => update((s) => ({ ...s, scope }));
  const setOffset = (i: number, ns: number) => update((s) => ({ ...s, offsets: ids.map((_, j) => (j === i ? ns : (s.offsets[j] ?? 0))) }));
  const setLinked = (linked: boolean) => {
    if (!linked && state.view) lanes.setViews(new Map(ids.map((id) => [id, state.view!])));
    if (linked) {
      const v = lanes.views.get(ids[lanes.focused] ?? '') ?? state.view;
      update((s) => ({ ...s, linked, view: v ?? null }));
    } else update((s) => ({ ...s, linked }));
  };
  const toggle = (id: string) => {
    const next = ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id];
    if (next.length >= 1) update((s) => ({ ...s, ids: next, offsets: next.map((x) => s.offsets[ids.indexOf(x)] ?? 0) }));
  };
  const makeBase = (id: string) => {
    const next = [id, ...ids.filter((x) => x !== id)];
    update((s) => ({ ...s, ids: next, offsets: next.map(() => 0), view: null }));
  };
  return { latest, update, setAlign, editNamed, setScope, setOffset, setLinked, toggle, makeBase };
}
