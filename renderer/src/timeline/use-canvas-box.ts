// Where the timeline's canvas sits: the width of the canvas column and the
// height of the scrolling body (measured, and again whenever either
// resizes), the body's vertical scroll, and scrolling a row into view when
// asked to reveal it.
import { useEffect, useLayoutEffect, useState, type RefObject } from 'react';
import type { Layout } from './rows.ts';

export interface CanvasBox {
  size: { width: number; height: number };
  scrollTop: number;
  /** The body scrolled (its onScroll). */
  onScroll: (scrollTop: number) => void;
}

export function useCanvasBox(body: RefObject<HTMLDivElement | null>, column: RefObject<HTMLDivElement | null>): CanvasBox {
  const [size, setSize] = useState({ width: 800, height: 400 });
  const [scrollTop, setScrollTop] = useState(0);
  useLayoutEffect(() => {
    const b = body.current!;
    const col = column.current!;
    const measure = () => setSize({ width: Math.max(100, col.clientWidth), height: Math.max(50, b.clientHeight) });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(b);
    ro.observe(col);
    return () => ro.disconnect();
  }, [body, column]);
  return { size, scrollTop, onScroll: setScrollTop };
}

/** Scrolls the body so that the row asked for (a new object each time it is asked) is in view, a third down when it was not. */
export function useRevealRow(body: RefObject<HTMLDivElement | null>, lay: Layout, reveal: { rowId: string } | null | undefined): void {
  useEffect(() => {
    const r = reveal && lay.byId.get(reveal.rowId);
    const b = body.current;
    if (!r || !b) return;
    if (r.y < b.scrollTop || r.y + r.h > b.scrollTop + b.clientHeight) b.scrollTop = Math.max(0, r.y - b.clientHeight / 3);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- scrolls when asked to reveal a row, not whenever the layout changes under the user's own scrolling
  }, [reveal]);
}
