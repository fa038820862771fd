// The test and benchmark hooks, `window.__streamscope`: only for what the
// canvas hides from the DOM (renderer/README.md, "Test hooks"). Every
// mounted timeline registers itself (the compare view stacks several); the
// page-wide object answers over all of them. Each answer is computed from
// the frame the timeline holds now, with the geometry that drew it
// (draw.ts), in page coordinates (coords.ts).
import { useEffect, type RefObject } from 'react';
import type { DependencyKind, ItemRef } from '../../../profiler/contract/api.ts';
import { contentToPage } from './coords.ts';
import { arrowPath, type Box } from './dependency-overlay.ts';
import { endBox, itemHit, iterationRect, waitSpanBox } from './draw.ts';
import type { RulerDrawn } from './Ruler.tsx';
import { frameTimes, geometryOf, type Frame } from './use-frames.ts';
import type { View } from './view.ts';

/** Test and benchmark hooks, only for what the canvas hides from the DOM. */
export interface TestHooks {
  /** The visible range (ns since the recording origin) of the first timeline on the page. */
  view(): View;
  /** The visible range of every timeline on the page (the compare view stacks several), top first. */
  views(): View[];
  /** Where an item is drawn now, in page (client) coordinates; null if not drawn (the first timeline that draws it). */
  itemRect(table: string, id: number): { x: number; y: number; w: number; h: number } | null;
  /** Durations (ms) of the last frames drawn, oldest first. */
  frames: number[];
  /** Frames drawn with window data (the first one is the first complete frame). */
  dataFrames: number;
  /** True when no fetch is pending and no frame is scheduled. */
  idle(): boolean;
  /**
   * True when no window is being fetched and no frame is scheduled: the rows
   * in view are drawn with their data (the wait spans and the selection's
   * dependencies, which come from the analysis side, may still be on their
   * way: idle() waits for them too).
   */
  windowsIdle(): boolean;
  /**
   * The iterations row's boxes of the first timeline that has one, in
   * instance order: page coordinates where drawn now (null: off screen or
   * row not shown); null when no timeline has the row.
   */
  iterationBoxes(): IterationBox[] | null;
  /** What each timeline's ruler drew last (Ruler.tsx draws it on a canvas), top first; null for one not drawn yet. */
  rulers(): (RulerDrawn | null)[];
  /**
   * The first timeline's dependency overlay as drawn now (page coordinates):
   * the selection's arrows whose ends are both on shown rows, with each end's
   * box and the path's first and last points; the critical chain's items;
   * the hatched wait spans in view.
   */
  dependencies(): DrawnDependencies | null;
}

export interface DrawnDependencies {
  arrows: {
    kind: DependencyKind;
    from: ItemRef;
    to: ItemRef;
    label: string | null;
    critical: boolean;
    fromRect: Box;
    toRect: Box;
    start: { x: number; y: number };
    end: { x: number; y: number };
  }[];
  chain: { ref: ItemRef; rect: Box | null }[];
  waitSpans: { rowId: string; startNs: number; endNs: number; waiting: ItemRef; awaited: ItemRef; rect: Box }[];
}

export interface IterationBox {
  instance: number;
  warmUp: boolean;
  outlier: boolean;
  rect: { x: number; y: number; w: number; h: number } | null;
}

declare global {
  interface Window {
    __streamscope?: TestHooks;
  }
}

/** One mounted timeline, as the page-wide hooks see it. */
interface TimelineHooks {
  view(): View;
  itemRect(table: string, id: number): { x: number; y: number; w: number; h: number } | null;
  dataFrames(): number;
  idle(): boolean;
  windowsIdle(): boolean;
  iterationBoxes(): IterationBox[] | null;
  dependencies(): DrawnDependencies;
  ruler(): RulerDrawn | null;
}

/**
 * The page-wide hooks over every mounted timeline (the compare view stacks
 * several): view() is the first one's, views() all, idle() all of them.
 */
const mounted: TimelineHooks[] = [];

function registerHooks(t: TimelineHooks): () => void {
  mounted.push(t);
  window.__streamscope ??= {
    view: () => mounted[0]?.view() ?? { start: 0, end: 0 },
    views: () => mounted.map((m) => m.view()),
    itemRect: (table, id) => {
      for (const m of mounted) {
        const r = m.itemRect(table, id);
        if (r) return r;
      }
      return null;
    },
    frames: frameTimes,
    get dataFrames() {
      return mounted.reduce((n, m) => n + m.dataFrames(), 0);
    },
    idle: () => mounted.every((m) => m.idle()),
    windowsIdle: () => mounted.every((m) => m.windowsIdle()),
    iterationBoxes: () => {
      for (const m of mounted) {
        const b = m.iterationBoxes();
        if (b) return b;
      }
      return null;
    },
    dependencies: () => mounted[0]?.dependencies() ?? null,
    rulers: () => mounted.map((m) => m.ruler()),
  };
  return () => {
    mounted.splice(mounted.indexOf(t), 1);
  };
}

/** What a timeline tells its hooks, each read when a hook is called. */
export interface HookSources {
  view: () => View;
  /** The frame last rendered (use-frames.ts). */
  frame: () => Frame;
  canvas: RefObject<HTMLCanvasElement | null>;
  ruler: RefObject<RulerDrawn | null>;
  dataFrames: () => number;
  /** Nothing to fetch, draw or wait for (the loader, the frame, the wait spans, the selection's dependencies). */
  idle: () => boolean;
  /** No window to fetch and no frame to draw. */
  windowsIdle: () => boolean;
}

/** Registers the timeline's hooks while it is mounted. */
export function useTestHooks(sources: HookSources): void {
  useEffect(() => {
    const { frame, canvas } = sources;
    return registerHooks({
      view: () => ({ ...sources.view() }),
      itemRect: (table, id) => itemRect(frame(), canvas.current, { table: table as ItemRef['table'], id }),
      dataFrames: sources.dataFrames,
      ruler: () => sources.ruler.current,
      idle: sources.idle,
      windowsIdle: sources.windowsIdle,
      iterationBoxes: () => iterationBoxes(frame(), canvas.current),
      dependencies: () => drawnDependencies(frame(), canvas.current),
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- registered once per mount; every source is read through a ref or a function that reads one
  }, []);
}

/** Where an item is drawn now, clipped to the canvas (page coordinates); null where it is not drawn. */
function itemRect(s: Frame, canvas: HTMLCanvasElement | null, ref: ItemRef): Box | null {
  const h = itemHit(geometryOf(s), ref);
  const c = canvas?.getBoundingClientRect();
  // Only where it is drawn now: inside the canvas, horizontally and vertically.
  if (!h || !c || h.x + h.w < -1 || h.x > s.size.width + 1 || h.y + h.h <= s.scrollTop || h.y >= s.scrollTop + s.canvasH) return null;
  const x0 = Math.max(0, h.x);
  const x1 = Math.min(s.size.width, h.x + h.w);
  return contentToPage({ x: x0, y: h.y, w: Math.max(1, x1 - x0), h: h.h }, c, s.scrollTop);
}

function iterationBoxes(s: Frame, canvas: HTMLCanvasElement | null): IterationBox[] | null {
  if (!s.iterations) return null;
  const c = canvas?.getBoundingClientRect();
  const geo = geometryOf(s);
  return s.iterations.rows.map((row, i) => {
    const b = iterationRect(geo, i);
    // Only where it is drawn now (as itemRect), clipped to the canvas.
    const shown = b && c && b.x + b.w >= 0 && b.x <= s.size.width && b.y + b.h > s.scrollTop && b.y < s.scrollTop + s.canvasH;
    const x0 = shown ? Math.max(0, b.x) : 0;
    return {
      instance: row.instance,
      warmUp: row.warmUp,
      outlier: row.outlier,
      rect: shown ? contentToPage({ x: x0, y: b.y, w: Math.max(1, Math.min(s.size.width, b.x + b.w) - x0), h: b.h }, c, s.scrollTop) : null,
    };
  });
}

/** The selection's overlay as drawn: the same geometry drawTimeline placed it with (draw.ts endBox, waitSpanBox). */
function drawnDependencies(s: Frame, canvas: HTMLCanvasElement | null): DrawnDependencies {
  const geo = geometryOf(s);
  const c = canvas?.getBoundingClientRect() ?? { left: 0, top: 0 };
  const page = (b: Box): Box => contentToPage(b, c, s.scrollTop);
  const arrows: DrawnDependencies['arrows'] = [];
  for (const a of s.overlay.arrows) {
    const from = endBox(geo, a.from);
    const to = endBox(geo, a.to);
    if (!from || !to) continue;
    const p = arrowPath(a.kind, page(from), page(to));
    arrows.push({
      kind: a.kind,
      from: a.from.ref,
      to: a.to.ref,
      label: a.label,
      critical: a.critical,
      fromRect: page(from),
      toRect: page(to),
      start: { x: p.sx, y: p.sy },
      end: { x: p.ex, y: p.ey },
    });
  }
  const chain = s.overlay.chain.map((e) => {
    const b = endBox(geo, e);
    return { ref: e.ref, rect: b && page(b) };
  });
  const waitSpans: DrawnDependencies['waitSpans'] = [];
  for (const w of s.waits.spans) {
    const b = waitSpanBox(geo, w);
    if (b && b.y + b.h > s.scrollTop && b.y < s.scrollTop + s.canvasH) waitSpans.push({ ...w, rect: page(b) });
  }
  return { arrows, chain, waitSpans };
}
