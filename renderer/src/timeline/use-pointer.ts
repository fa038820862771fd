// The pointer on the timeline's canvas: the wheel zooms around the cursor
// (shift+wheel or a horizontal swipe pans); a drag pans (horizontally; it
// scrolls the rows vertically), a shift-drag selects a time range; a click
// selects what is under it (an iteration: shown whole and made the scope;
// a merged span: zoomed into so its operations come apart; nothing: no
// selection); hovering names what is under the cursor and draws the cursor
// line. Hit tests ask the frame last drawn (draw.ts hitAt).
import { useEffect, useRef, useState, type RefObject } from 'react';
import type { ItemRef } from '../../../profiler/contract/api.ts';
import { TimeAxis } from './coords.ts';
import { hitAt, type Hit } from './draw.ts';
import { geometryOf, type Frame } from './use-frames.ts';
import type { ViewMoves } from './use-view-moves.ts';
import type { View } from './view.ts';

/** What a click tells the timeline's parent (read when it happens). */
export interface ClickTargets {
  view: View;
  onSelect: (r: ItemRef | null) => void;
  onIteration?: (name: string, instance: number) => void;
}

export interface Pointer {
  /** What is under the pointer, and where the pointer is on the page (for the tooltip). */
  hover: { hit: Hit; clientX: number; clientY: number } | null;
  /** The pointer's x on the canvas (the cursor line), null when it is not over it. */
  cursorX: number | null;
  /** The same, read by the keys when they zoom (around the pointer while it is over the rows). */
  mouseX: RefObject<number | null>;
  onMouseDown: (e: React.MouseEvent<HTMLCanvasElement>) => void;
  onMouseMove: (e: React.MouseEvent<HTMLCanvasElement>) => void;
  onMouseLeave: () => void;
}

interface Drag {
  x: number;
  y: number;
  view: View;
  scroll: number;
  moved: boolean;
  /** A shift-drag: selects a range from t0. */
  range: boolean;
  t0: number;
}

export function usePointer(
  canvas: RefObject<HTMLCanvasElement | null>,
  body: RefObject<HTMLDivElement | null>,
  /** The frame last rendered (use-frames.ts; stable). */
  frame: () => Frame,
  targets: RefObject<ClickTargets>,
  moves: ViewMoves,
  setRange: (r: [number, number] | null, done: boolean) => void,
): Pointer {
  const [hover, setHover] = useState<Pointer['hover']>(null);
  const [cursorX, setCursorX] = useState<number | null>(null);
  const mouseX = useRef<number | null>(null);
  const drag = useRef<Drag | null>(null);
  const hitUnder = (x: number, yContent: number): Hit | undefined => hitAt(geometryOf(frame()), x, yContent);
  const { setView, zoomAt, panBy, zoomAround } = moves;

  // Wheel: a non-passive listener, so the page does not scroll while zooming.
  useEffect(() => {
    const c = canvas.current!;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const w = frame().size.width;
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        panBy(((e.shiftKey ? e.deltaY : e.deltaX) / w) * 1.0);
        return;
      }
      const unit = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? 400 : 1;
      zoomAt(Math.exp(Math.max(-1, Math.min(1, (e.deltaY * unit) / 500))), e.offsetX);
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  }, [canvas, frame, zoomAt, panBy]);

  useEffect(() => {
    const onMove = (e: MouseEvent) => {
      const d = drag.current;
      if (!d) return;
      if (!(e.buttons & 1)) return;
      const dx = e.clientX - d.x;
      const dy = e.clientY - d.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) d.moved = true;
      if (!d.moved) return;
      const c = canvas.current!.getBoundingClientRect();
      if (d.range) {
        const px = Math.max(0, Math.min(c.width, e.clientX - c.left));
        setRange([d.t0, new TimeAxis(targets.current.view, c.width).viewXToTime(px)], false);
        return;
      }
      const dt = new TimeAxis(d.view, c.width).viewPxToDuration(dx);
      setView({ start: d.view.start - dt, end: d.view.end - dt });
      body.current!.scrollTop = d.scroll - dy;
    };
    const onUp = (e: MouseEvent) => {
      const d = drag.current;
      drag.current = null;
      if (!d || d.moved) return;
      const c = canvas.current!.getBoundingClientRect();
      const h = hitUnder(e.clientX - c.left, e.clientY - c.top + frame().scrollTop);
      const t = frame().iterations;
      if (h?.instance !== undefined && t) {
        // An iteration: shown whole with a margin, and made the scope.
        zoomAround(h.startNs, h.endNs, 0.05);
        targets.current.onIteration?.(t.name, t.rows[h.instance]!.instance);
      } else if (h?.ref) targets.current.onSelect(h.ref);
      // A merged span: zoom into it so its operations come apart.
      else if (h && h.count) zoomAround(h.startNs, h.endNs, 0.1);
      else targets.current.onSelect(null);
    };
    window.addEventListener('mousemove', onMove);
    window.addEventListener('mouseup', onUp);
    return () => {
      window.removeEventListener('mousemove', onMove);
      window.removeEventListener('mouseup', onUp);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the window listeners read what changes through refs (targets, frame, drag); re-adding them per render would drop a drag in flight
  }, [setView]);

  const onMouseDown = (e: React.MouseEvent<HTMLCanvasElement>) => {
    if (e.button !== 0) return;
    const { view, size } = frame();
    const t0 = new TimeAxis(view, size.width).viewXToTime(e.nativeEvent.offsetX);
    drag.current = { x: e.clientX, y: e.clientY, view, scroll: body.current!.scrollTop, moved: false, range: e.shiftKey, t0 };
  };
  const onMouseMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    mouseX.current = e.nativeEvent.offsetX;
    setCursorX(e.nativeEvent.offsetX);
    if (drag.current?.moved) {
      setHover(null);
      return;
    }
    const h = hitUnder(e.nativeEvent.offsetX, e.nativeEvent.offsetY + frame().scrollTop);
    setHover(h ? { hit: h, clientX: e.clientX, clientY: e.clientY } : null);
  };
  const onMouseLeave = () => {
    setHover(null);
    setCursorX(null);
    mouseX.current = null;
  };
  return { hover, cursorX, mouseX, onMouseDown, onMouseMove, onMouseLeave };
}
