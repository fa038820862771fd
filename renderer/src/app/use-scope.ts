// What the findings panel and the stats analyse (scope/), for the shown
// recording. The steady state by default; the menu picks the whole
// recording or an NVTX range; a range selected on the timeline becomes the
// scope (a window) while it lasts, and clearing it goes back to the scope
// picked before; a click on a box of the iterations row picks that instance.
import { useCallback, useMemo, useState } from 'react';
import { STEADY_STATE, windowScope, type Scope } from '../scope/scope.ts';

export interface ScopeState {
  scope: Scope;
  /** The range selected on the timeline (ns), if any. */
  range: [number, number] | null;
  /** The selection as a window scope (for the menus' "the selection" entry). */
  selection: Scope | null;
  setScope: (s: Scope) => void;
  /** A selection on the ruler or the canvas: while in progress (`done` false) and when released. */
  onRange: (r: [number, number] | null, done: boolean) => void;
  /** A box of the iterations row: that instance is the scope. */
  onIteration: (name: string, instance: number) => void;
  /** Another recording is shown: its scope and selection (what clearing it goes back to: the steady state, or the scope itself). */
  restore: (scope: Scope, range: [number, number] | null) => void;
}

export function useScope(): ScopeState {
  // `picked`: the last scope picked that is not a selection, what clearing the selection goes back to.
  const [state, setState] = useState<{ scope: Scope; picked: Scope }>({ scope: STEADY_STATE, picked: STEADY_STATE });
  const [range, setRange] = useState<[number, number] | null>(null);
  const setScope = useCallback((s: Scope) => setState((p) => ({ scope: s, picked: s.kind === 'window' ? p.picked : s })), []);
  // A selection in progress on the ruler (mouse down, not dragged yet) keeps
  // the scope: it becomes the new window as soon as it has a width.
  const onRange = useCallback(
    (r: [number, number] | null, done: boolean) => {
      setRange(r);
      const w = r && windowScope(r[0], r[1]);
      if (w) setScope(w);
      else if (!r && done) setState((p) => (p.scope.kind === 'window' ? { scope: p.picked, picked: p.picked } : p));
    },
    [setScope],
  );
  const onIteration = useCallback((name: string, instance: number) => setScope({ kind: 'range', name, instance }), [setScope]);
  const restore = useCallback((scope: Scope, r: [number, number] | null) => {
    setState({ scope, picked: scope.kind === 'window' ? STEADY_STATE : scope });
    setRange(r);
  }, []);
  const selection = useMemo(() => (range ? windowScope(range[0], range[1]) : null), [range]);
  return { scope: state.scope, range, selection, setScope, onRange, onIteration, restore };
}
