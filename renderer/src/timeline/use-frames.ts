// Frame scheduling: the timeline's canvas is drawn in requestAnimationFrame,
// once per burst of changes (a layout effect asks for one frame whenever
// anything drawn changed; more changes before it comes ask for nothing
// more), from what the frame holds then; nothing redraws when nothing
// changed. The frame also answers hit tests and the test hooks: it is what
// the last render decided to draw.
import { useCallback, useEffect, useLayoutEffect, useRef, type RefObject } from 'react';
import type { Startup } from '../../../profiler/contract/api.ts';
import { drawTimeline, type DrawInput, type Geometry } from './draw.ts';
import type { Layout } from './rows.ts';
import type { WaitSpansState } from './wait-spans.ts';

/**
 * Everything one frame draws from, as the timeline holds it: draw.ts's
 * DrawInput where the two agree, and what the frame keeps besides (the
 * layout, its size, the wait spans' state).
 */
export interface Frame extends Pick<
  DrawInput,
  'view' | 'loaded' | 'selected' | 'details' | 'search' | 'hover' | 'range' | 'cursorX' | 'scrollTop' | 'iterations' | 'chosenInstance' | 'overlay'
> {
  lay: Layout;
  /** The canvas column's width and the scrolling body's height (CSS pixels). */
  size: { width: number; height: number };
  /** The canvas's height: the body's, or the rows' when they are fewer. */
  canvasH: number;
  startup: Startup | null;
  waits: WaitSpansState;
}

const FRAME_HISTORY = 240;

/** How long the last FRAME_HISTORY frames of every timeline on the page took to draw (ms), oldest first: the test hooks' `frames`. */
export const frameTimes: number[] = [];

function recordFrame(ms: number): void {
  frameTimes.push(ms);
  if (frameTimes.length > FRAME_HISTORY) frameTimes.splice(0, frameTimes.length - FRAME_HISTORY);
}

/** What a frame drew where: the inputs hit testing needs (draw.ts). */
export function geometryOf(f: Frame): Geometry {
  return { width: f.size.width, view: f.view, layout: f.lay, loaded: f.loaded, iterations: f.iterations };
}

export interface Frames {
  /** Whether a frame is asked for and not drawn yet. */
  pending: () => boolean;
  /** Frames drawn with window data. */
  dataFrames: () => number;
}

/**
 * Draws `f` in the next animation frame when anything in it changed.
 * `frame` keeps it for what reads it between renders (the frame drawn, hit
 * tests, the test hooks): the frame of the last render.
 */
export function useFrames(canvasRef: RefObject<HTMLCanvasElement | null>, f: Frame, frame: RefObject<Frame | null>, dpr: number): Frames {
  frame.current = f;
  const request = useRef<number | null>(null);
  const dataFrames = useRef(0);
  const draw = useCallback(() => {
    request.current = null;
    const canvas = canvasRef.current;
    if (!canvas) return;
    const s = frame.current!;
    const t0 = performance.now();
    const w = Math.round(s.size.width * dpr);
    const h = Math.round(s.canvasH * dpr);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
      canvas.style.width = `${s.size.width}px`;
      canvas.style.height = `${s.canvasH}px`;
    }
    const g = canvas.getContext('2d');
    if (!g) return;
    drawTimeline(g, {
      width: s.size.width,
      height: s.canvasH,
      dpr,
      scrollTop: s.scrollTop,
      view: s.view,
      layout: s.lay,
      loaded: s.loaded,
      selected: s.selected,
      details: s.details,
      search: s.search,
      hover: s.hover,
      range: s.range,
      cursorX: s.cursorX,
      startup: s.startup,
      iterations: s.iterations,
      chosenInstance: s.chosenInstance,
      overlay: s.overlay,
      waitSpans: s.waits.spans,
    });
    recordFrame(performance.now() - t0);
    if (s.loaded) dataFrames.current++;
  }, [canvasRef, frame, dpr]);
  useLayoutEffect(() => {
    if (request.current === null) request.current = requestAnimationFrame(draw);
  }, [
    draw,
    f.view,
    f.lay,
    f.loaded,
    f.selected,
    f.details,
    f.search,
    f.hover,
    f.range,
    f.cursorX,
    f.scrollTop,
    f.size,
    f.canvasH,
    f.startup,
    f.iterations,
    f.chosenInstance,
    f.overlay,
    f.waits,
  ]);
  useEffect(
    () => () => {
      if (request.current !== null) cancelAnimationFrame(request.current);
      request.current = null;
    },
    [],
  );
  return { pending: () => request.current !== null, dataFrames: () => dataFrames.current };
}
