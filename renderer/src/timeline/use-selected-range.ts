// The time range selected on the timeline (a shift-drag on the canvas, a
// drag on the ruler): the parent's when it holds it (the app: it is the
// analysis scope), else the timeline's own.
import { useCallback, useState, type RefObject } from 'react';

export interface RangeOwner {
  range?: [number, number] | null;
  /** done: false while the pointer is still down. */
  onRange?: (r: [number, number] | null, done: boolean) => void;
}

/** `props`: the parent's this render; `owner`: the same, latest, read when the range is set. */
export function useSelectedRange(
  props: RangeOwner,
  owner: RefObject<RangeOwner>,
): {
  range: [number, number] | null;
  /** Stable. */
  setRange: (r: [number, number] | null, done?: boolean) => void;
} {
  const [ownRange, setOwnRange] = useState<[number, number] | null>(null);
  const range = props.onRange ? (props.range ?? null) : ownRange;
  const setRange = useCallback(
    (r: [number, number] | null, done = true) => {
      const on = owner.current.onRange;
      if (on) on(r, done);
      else setOwnRange(r);
    },
    [owner],
  );
  return { range, setRange };
}
