// The timeline: a DOM label column (row names, fold and hide buttons, test
// hooks) next to one canvas that draws every visible row. Drawing happens in
// requestAnimationFrame, only when something changed (view, data, selection,
// hover, size, scroll), from data the WindowLoader already holds.
//
// Interaction (Perfetto / Nsight Systems conventions; the shortcut sheet, `?`,
// lists them all from keys.ts):
//   wheel            zoom around the cursor (shift+wheel or a horizontal swipe pans)
//   drag             pan (horizontally; vertically it scrolls the rows)
//   W / S, A / D     zoom in / out around the cursor, pan left / right; held, they
//                    keep moving (use-timeline-keys.ts); the arrows, + and - too
//   shift-drag, or drag on the ruler: select a time range; Z zooms to it, Esc clears
//                    (the app analyses the selection: findings and stats of that window)
//   click            select an operation (its launch arrow, its dependencies and its
//                    critical chain are drawn: dependency-overlay.ts); F zooms to it;
//                    on the iterations row, zoom to that instance and make it the scope
//   0                the whole recording (F too, with nothing selected)
// Every change of the view goes through clampView (view.ts): none leaves the recording.
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { DependencyKind, ItemDependencies, ItemDetails, ItemRef, RecordingSummary, Startup } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import { formatPercent } from '../base/time.ts';
import { useSettled } from '../base/use-settled.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { contentToPage, TimeAxis } from './coords.ts';
import { arrowPath, overlayOf, type Box } from './dependency-overlay.ts';
import {
  describeHit,
  drawTimeline,
  endBox,
  hitAt as hitAtGeometry,
  itemHit,
  iterationRect,
  waitSpanBox,
  type Geometry,
  type Hit,
  type SearchHighlight,
} from './draw.ts';
import { inFlightPeaks } from './in-flight.ts';
import { describeIteration, type IterationTrack } from './iterations.ts';
import { Overview } from './Overview.tsx';
import { Ruler, type RulerDrawn } from './Ruler.tsx';
import { buildGroups, layout as layOut, windowed, type Layout, type TrackGroup } from './rows.ts';
import { ShortcutSheet } from './ShortcutSheet.tsx';
import { useTimelineKeys } from './use-timeline-keys.ts';
import { clampView, panView, zoomView, type View } from './view.ts';
import { useWaitSpans } from './wait-spans.ts';
import { WindowLoader, type Loaded } from './window-loader.ts';

export type { View };
export { clampView };

export const LABEL_W = 310;
const FRAME_HISTORY = 240;

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
  iterationBoxes(): IterationBox[] | null;
  dependencies(): DrawnDependencies;
  ruler(): RulerDrawn | null;
}

/**
 * The page-wide hooks over every mounted timeline (the compare view stacks
 * several): view() is the first one's, views() all, idle() all of them.
 */
const mounted: TimelineHooks[] = [];
const allFrames: number[] = [];
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
    frames: allFrames,
    get dataFrames() {
      return mounted.reduce((n, m) => n + m.dataFrames(), 0);
    },
    idle: () => mounted.every((m) => m.idle()),
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

export function Timeline(props: {
  summary: RecordingSummary;
  view: View;
  onView: (v: View) => void;
  selected: ItemRef | null;
  onSelect: (r: ItemRef | null) => void;
  details: ItemDetails | null;
  search: SearchHighlight | null;
  hidden: Set<string>;
  onHidden: (h: Set<string>) => void;
  folded: Set<string>;
  onFolded: (f: Set<string>) => void;
  onFirstData?: () => void;
  onError: (err: unknown) => void;
  onStatus?: (s: { items: number; coverage: number; resolutionNs: number; loading: boolean }) => void;
  /** Scroll this row into view (a new object each time it is asked). */
  reveal?: { rowId: string } | null;
  /** The ruler shows time since this point (compare view: the alignment anchor); default the recording origin. */
  timeOrigin?: number;
  /** Whether W/A/S/D, Z, F and Esc act on this timeline (false for all but the focused one of a compare view). */
  keyboard?: boolean;
  /**
   * The selected time range, when the parent holds it (the app: it is the
   * analysis scope); without onRange the timeline keeps its own.
   */
  range?: [number, number] | null;
  /** done: false while the pointer is still down (a drag on the ruler starts by clearing the range). */
  onRange?: (r: [number, number] | null, done: boolean) => void;
  /** Start-up as detected: a band across the ruler and the rows. */
  startup?: Startup | null;
  /** The iterations row (iterations.ts), the instance that is the scope, and what a click on one does besides zooming to it. */
  iterations?: IterationTrack | null;
  chosenInstance?: number | null;
  onIteration?: (name: string, instance: number) => void;
  /** The selection's dependencies (api.dependencies), drawn with its launch arrows; pending while they are on their way. */
  dependencies?: ItemDependencies | null;
  dependenciesPending?: boolean;
  /** A recording being written (app/use-live.ts): a new revision asks for the view again; the view follows the end, or offers to jump back to it. */
  live?: { revision: number; endNs: number; following: boolean; onJumpToNow: () => void } | null;
}) {
  const { summary, view, selected, details, search, hidden, folded } = props;
  const latest = useRef(props);
  latest.current = props;

  const iterations = props.iterations ?? null;
  const startup = props.startup ?? null;
  const chosenInstance = props.chosenInstance ?? null;
  const groups = useMemo(() => buildGroups(summary, iterations), [summary, iterations]);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [nvtxDepth, setNvtxDepth] = useState<Map<string, number>>(new Map());
  const lay = useMemo(() => layOut(groups, folded, hidden, nvtxDepth), [groups, folded, hidden, nvtxDepth]);
  const fetchRows = useMemo(() => lay.rows.filter((r) => r.type === 'row' && windowed(r.row!.kind)).map((r) => r.id), [lay]);
  // Devices whose concurrency track shows, with all their stream rows (hidden ones too).
  const devices = useMemo(() => {
    const m = new Map<number, string[]>();
    for (const r of lay.rows) if (r.row?.kind === 'conc') m.set(r.row.deviceId!, []);
    for (const g of groups)
      for (const r of g.rows) if (r.kind === 'stream' && r.stream?.deviceId != null && m.has(r.stream.deviceId)) m.get(r.stream.deviceId)!.push(r.id);
    return m;
  }, [lay, groups]);
  // Devices of the busy rows shown (folded ranks), as one stable list.
  const busyKey = lay.rows
    .flatMap((r) => r.row?.deviceIds ?? [])
    .sort((a, b) => a - b)
    .join(',');
  const busyDevices = useMemo(() => (busyKey ? [...new Set(busyKey.split(',').map(Number))] : []), [busyKey]);

  const canvasRef = useRef<HTMLCanvasElement>(null);
  const rulerDrawn = useRef<RulerDrawn | null>(null);
  const shownView = useSettled(view);
  const bodyRef = useRef<HTMLDivElement>(null);
  const colRef = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 800, height: 400 });
  const [scrollTop, setScrollTop] = useState(0);
  const [hover, setHover] = useState<{ hit: Hit; clientX: number; clientY: number } | null>(null);
  const [cursorX, setCursorX] = useState<number | null>(null);
  const [ownRange, setOwnRange] = useState<[number, number] | null>(null);
  const range = props.onRange ? (props.range ?? null) : ownRange;
  const setRange = useCallback((r: [number, number] | null, done = true) => {
    const on = latest.current.onRange;
    if (on) on(r, done);
    else setOwnRange(r);
  }, []);
  const dataFrames = useRef(0);
  const firstData = useRef(false);
  const frameRequest = useRef<number | null>(null);
  const dpr = window.devicePixelRatio || 1;

  // One loader per recording.
  const loaderRef = useRef<WindowLoader | null>(null);
  useEffect(() => {
    const loader = new WindowLoader(
      getApi(),
      summary.recordingId,
      (l) => {
        setLoaded(l);
        setNvtxDepth((prev) => {
          let changed = false;
          const next = new Map(prev);
          for (const [row, d] of l.nvtxDepth)
            if ((prev.get(row) ?? -1) < d) {
              next.set(row, d);
              changed = true;
            }
          return changed ? next : prev;
        });
        if (!firstData.current) {
          firstData.current = true;
          latest.current.onFirstData?.();
        }
      },
      (err) => latest.current.onError(err),
    );
    loaderRef.current = loader;
    setLoaded(null);
    firstData.current = false;
    return () => loader.dispose();
  }, [summary.recordingId]);

  // The recording grew (before the update below, which then asks again).
  const revision = props.live?.revision;
  useEffect(() => {
    if (revision !== undefined) loaderRef.current?.refresh();
  }, [revision]);

  useEffect(() => {
    loaderRef.current?.update(view, size.width, dpr, fetchRows, devices, busyDevices);
  }, [view, size.width, dpr, fetchRows, devices, busyDevices, loaded, revision]);

  useEffect(() => {
    props.onStatus?.({ items: loaded?.itemCount ?? 0, coverage: loaded?.coverageCount ?? 0, resolutionNs: loaded?.resolutionNs ?? 0, loading: !loaded });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reports when the loaded window changes; a new onStatus callback from the parent is no reason to report again
  }, [loaded]);

  // Size of the canvas column and of the scrolling body.
  useLayoutEffect(() => {
    const body = bodyRef.current!;
    const col = colRef.current!;
    const measure = () => setSize({ width: Math.max(100, col.clientWidth), height: Math.max(50, body.clientHeight) });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(body);
    ro.observe(col);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const r = props.reveal && lay.byId.get(props.reveal.rowId);
    const body = bodyRef.current;
    if (!r || !body) return;
    if (r.y < body.scrollTop || r.y + r.h > body.scrollTop + body.clientHeight) body.scrollTop = Math.max(0, r.y - body.clientHeight / 3);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- scrolls when asked to reveal a row, not whenever the layout changes under the user's own scrolling
  }, [props.reveal]);

  const canvasH = Math.min(size.height, Math.max(lay.height, 1));

  // The selection's arrows, made once per selection (not per frame); the wait spans of the loaded window.
  const dependencies = props.dependencies ?? null;
  const overlay = useMemo(() => overlayOf(selected, details, dependencies), [selected, details, dependencies]);
  const onWaitSpansError = useCallback((err: unknown) => latest.current.onError(err), []);
  const waits = useWaitSpans(summary.recordingId, loaded, onWaitSpansError);

  // Draw in the next animation frame, once, whatever changed in between.
  const frameState = {
    view,
    lay,
    loaded,
    selected,
    details,
    search,
    hover: hover?.hit ?? null,
    range,
    cursorX,
    scrollTop,
    size,
    canvasH,
    startup,
    iterations,
    chosenInstance,
    overlay,
    waits,
  };
  const drawState = useRef(frameState);
  drawState.current = frameState;
  /** What the last frame drew from, for hit testing (draw.ts). */
  const geometry = (): Geometry => {
    const s = drawState.current;
    return { width: s.size.width, view: s.view, layout: s.lay, loaded: s.loaded, iterations: s.iterations };
  };
  const draw = useCallback(() => {
    frameRequest.current = null;
    const canvas = canvasRef.current;
    if (!canvas) return;
    const s = drawState.current;
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
    allFrames.push(performance.now() - t0);
    if (allFrames.length > FRAME_HISTORY) allFrames.splice(0, allFrames.length - FRAME_HISTORY);
    if (s.loaded) dataFrames.current++;
  }, [dpr]);
  useLayoutEffect(() => {
    if (frameRequest.current === null) frameRequest.current = requestAnimationFrame(draw);
  }, [
    draw,
    view,
    lay,
    loaded,
    selected,
    details,
    search,
    hover,
    range,
    cursorX,
    scrollTop,
    size,
    canvasH,
    startup,
    iterations,
    chosenInstance,
    overlay,
    waits,
  ]);
  useEffect(
    () => () => {
      if (frameRequest.current !== null) cancelAnimationFrame(frameRequest.current);
      frameRequest.current = null;
    },
    [],
  );

  useEffect(() => {
    const self: TimelineHooks = {
      view: () => ({ ...latest.current.view }),
      itemRect: (table, id) => {
        const s = drawState.current;
        const h = itemHit(geometry(), { table: table as ItemRef['table'], id });
        const c = canvasRef.current?.getBoundingClientRect();
        // Only where it is drawn now: inside the canvas, horizontally and vertically.
        if (!h || !c || h.x + h.w < -1 || h.x > s.size.width + 1 || h.y + h.h <= s.scrollTop || h.y >= s.scrollTop + s.canvasH) return null;
        const x0 = Math.max(0, h.x);
        const x1 = Math.min(s.size.width, h.x + h.w);
        return { x: c.left + x0, y: c.top + h.y - s.scrollTop, w: Math.max(1, x1 - x0), h: h.h };
      },
      dataFrames: () => dataFrames.current,
      ruler: () => rulerDrawn.current,
      idle: () =>
        frameRequest.current === null && (loaderRef.current?.idle() ?? true) && !drawState.current.waits.pending && !latest.current.dependenciesPending,
      iterationBoxes: () => {
        const s = drawState.current;
        if (!s.iterations) return null;
        const c = canvasRef.current?.getBoundingClientRect();
        return s.iterations.rows.map((row, i) => {
          const b = iterationRect(geometry(), i);
          // Only where it is drawn now (as itemRect), clipped to the canvas.
          const shown = b && c && b.x + b.w >= 0 && b.x <= s.size.width && b.y + b.h > s.scrollTop && b.y < s.scrollTop + s.canvasH;
          const x0 = shown ? Math.max(0, b.x) : 0;
          return {
            instance: row.instance,
            warmUp: row.warmUp,
            outlier: row.outlier,
            rect: shown ? { x: c.left + x0, y: c.top + b.y - s.scrollTop, w: Math.max(1, Math.min(s.size.width, b.x + b.w) - x0), h: b.h } : null,
          };
        });
      },
      dependencies: () => {
        // The same geometry drawTimeline placed them with (draw.ts endBox, waitSpanBox).
        const s = drawState.current;
        const geo = geometry();
        const c = canvasRef.current?.getBoundingClientRect() ?? { left: 0, top: 0 };
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
      },
    };
    return registerHooks(self);
  }, []);

  // View changes.
  // Clamped to the recording, or to what a live one holds now (its summary is asked again only every second).
  const setView = useCallback((v: View) => {
    const { summary: s, live } = latest.current;
    latest.current.onView(clampView(v, { startNs: s.startNs, endNs: Math.max(s.endNs, live?.endNs ?? s.endNs) }));
  }, []);
  /** Zoom by `factor` around canvas x `at`, then pan by `fraction` of the width: one view, clamped. */
  const moveView = useCallback(
    (factor: number, fraction: number, at: number) => {
      const w = drawState.current.size.width;
      // Following a live recording's end, zooming keeps the end where it is (still followed).
      const frac = latest.current.live?.following ? 1 : Math.min(1, Math.max(0, at / w));
      setView(panView(zoomView(latest.current.view, factor, frac), fraction));
    },
    [setView],
  );
  const zoomAt = useCallback((factor: number, at: number) => moveView(factor, 0, at), [moveView]);
  const panBy = useCallback((fraction: number) => moveView(1, fraction, 0), [moveView]);
  // The range stays selected: in the app it is what the findings and stats analyse.
  const zoomToRange = useCallback(
    (r: [number, number]) => {
      setView({ start: Math.min(r[0], r[1]), end: Math.max(r[0], r[1]) });
    },
    [setView],
  );
  const fit = useCallback(() => {
    const s = latest.current.summary;
    setView({ start: s.startNs, end: s.endNs });
  }, [setView]);

  // Keys zoom around the mouse while it is over the rows, else around the view's middle.
  const mouseX = useRef<number | null>(null);
  const keys = useTimelineKeys({
    enabled: () => latest.current.keyboard !== false,
    move: (factor, fraction) => moveView(factor, fraction, mouseX.current ?? drawState.current.size.width / 2),
    act: (a) => {
      const { details, onSelect } = latest.current;
      const { range: r } = drawState.current;
      if (a === 'fit') fit();
      else if (a === 'zoom-range') {
        if (r) zoomToRange(r);
      } else if (a === 'focus') {
        if (!details) return fit();
        const pad = Math.max(details.endNs - details.startNs, 100) * 0.5;
        setView({ start: details.startNs - pad, end: details.endNs + pad });
      } else if (r) setRange(null);
      else onSelect(null);
    },
  });

  // Wheel: a non-passive listener, so the page does not scroll while zooming.
  useEffect(() => {
    const c = canvasRef.current!;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const w = drawState.current.size.width;
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        panBy(((e.shiftKey ? e.deltaY : e.deltaX) / w) * 1.0);
        return;
      }
      const unit = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? 400 : 1;
      zoomAt(Math.exp(Math.max(-1, Math.min(1, (e.deltaY * unit) / 500))), e.offsetX);
    };
    c.addEventListener('wheel', onWheel, { passive: false });
    return () => c.removeEventListener('wheel', onWheel);
  }, [zoomAt, panBy]);

  const hitAt = (x: number, yContent: number): Hit | undefined => hitAtGeometry(geometry(), x, yContent);

  const drag = useRef<{ x: number; y: number; view: View; scroll: number; moved: boolean; range: boolean; t0: number } | null>(null);
  const toNs = (px: number) => new TimeAxis(view, size.width).viewXToTime(px);

  const onMouseDown = (e: React.MouseEvent<HTMLCanvasElement>) => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, y: e.clientY, view, scroll: bodyRef.current!.scrollTop, moved: false, range: e.shiftKey, t0: toNs(e.nativeEvent.offsetX) };
  };
  useEffect(() => {
    const onMove = (e: MouseEvent) => {
      const d = drag.current;
      if (!d) return;
      if (!(e.buttons & 1)) return;
      const dx = e.clientX - d.x;
      const dy = e.clientY - d.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) d.moved = true;
      if (!d.moved) return;
      const c = canvasRef.current!.getBoundingClientRect();
      const v = latest.current.view;
      if (d.range) {
        const px = Math.max(0, Math.min(c.width, e.clientX - c.left));
        setRange([d.t0, new TimeAxis(v, c.width).viewXToTime(px)], false);
        return;
      }
      const dt = new TimeAxis(d.view, c.width).viewPxToDuration(dx);
      setView({ start: d.view.start - dt, end: d.view.end - dt });
      bodyRef.current!.scrollTop = d.scroll - dy;
    };
    const onUp = (e: MouseEvent) => {
      const d = drag.current;
      drag.current = null;
      if (!d || d.moved) return;
      const c = canvasRef.current!.getBoundingClientRect();
      const h = hitAt(e.clientX - c.left, e.clientY - c.top + drawState.current.scrollTop);
      const t = drawState.current.iterations;
      if (h?.instance !== undefined && t) {
        // An iteration: shown whole with a margin, and made the scope.
        const pad = (h.endNs - h.startNs) * 0.05;
        setView({ start: h.startNs - pad, end: h.endNs + pad });
        latest.current.onIteration?.(t.name, t.rows[h.instance]!.instance);
      } else if (h?.ref) latest.current.onSelect(h.ref);
      else if (h && h.count) {
        // A merged span: zoom into it so its operations come apart.
        const pad = (h.endNs - h.startNs) * 0.1;
        setView({ start: h.startNs - pad, end: h.endNs + pad });
      } else latest.current.onSelect(null);
    };
    window.addEventListener('mousemove', onMove);
    window.addEventListener('mouseup', onUp);
    return () => {
      window.removeEventListener('mousemove', onMove);
      window.removeEventListener('mouseup', onUp);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the window listeners read what changes through refs (latest, drawState, drag); re-adding them per render would drop a drag in flight
  }, [setView]);

  const onHoverMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    mouseX.current = e.nativeEvent.offsetX;
    setCursorX(e.nativeEvent.offsetX);
    if (drag.current?.moved) {
      setHover(null);
      return;
    }
    const h = hitAt(e.nativeEvent.offsetX, e.nativeEvent.offsetY + scrollTop);
    setHover(h ? { hit: h, clientX: e.clientX, clientY: e.clientY } : null);
  };

  const onRulerRange = useCallback((r: [number, number] | null, done: boolean) => setRange(r, done), [setRange]);

  const toggleFold = (id: string) => {
    const f = new Set(folded);
    if (f.has(id)) f.delete(id);
    else f.add(id);
    props.onFolded(f);
  };

  const tip = !hover
    ? null
    : hover.hit.instance !== undefined && iterations
      ? describeIteration(iterations, hover.hit.instance)
      : describeHit(hover.hit, loaded ?? { strings: {}, kernelLabels: {} });
  const axis = new TimeAxis(view, size.width);
  const rangeBox: [number, number] | null = range ? [axis.timeToViewX(Math.min(range[0], range[1])), axis.timeToViewX(Math.max(range[0], range[1]))] : null;
  const concPeaks = useMemo(() => {
    const m = new Map<number, string>();
    for (const [dev, c] of loaded?.concurrency ?? []) m.set(dev, inFlightPeaks(c));
    return m;
  }, [loaded]);

  return (
    <div className="timeline">
      <div className="tl-top">
        <div className="tl-corner" style={{ width: LABEL_W }}>
          <button data-testid="zoom-all" title="Show the whole recording (0)" onClick={fit}>
            Fit
          </button>
          <button data-testid="zoom-in" title="Zoom in (W)" onClick={() => zoomAt(0.5, size.width / 2)}>
            +
          </button>
          <button data-testid="zoom-out" title="Zoom out (S)" onClick={() => zoomAt(2, size.width / 2)}>
            −
          </button>
          <button data-testid="shortcuts" title="Keys and mouse gestures (?)" onClick={() => keys.setSheet(true)}>
            ?
          </button>
          <span className="tl-span" data-testid="view-span" title="Visible time span">
            {formatDuration(shownView.end - shownView.start)}
          </span>
          {props.live && !props.live.following && (
            <button className="jump-now" data-testid="jump-to-now" title="Back to the newest data, and follow it" onClick={props.live.onJumpToNow}>
              Jump to now ▸|
            </button>
          )}
        </div>
        <div className="tl-ruler-col">
          <Ruler view={view} width={size.width} range={range} onRange={onRulerRange} origin={props.timeOrigin} startup={startup} drawn={rulerDrawn} />
        </div>
      </div>
      <div className="tl-top tl-overview-row">
        <div className="tl-corner tl-corner-label" style={{ width: LABEL_W }}>
          Overview · whole recording
        </div>
        <div className="tl-ruler-col">
          <Overview summary={summary} view={view} onView={setView} width={size.width} />
        </div>
      </div>
      <div className="tl-body" ref={bodyRef} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
        <Labels
          layout={lay}
          groups={groups}
          folded={folded}
          onFold={toggleFold}
          onHide={(id) => props.onHidden(new Set(hidden).add(id))}
          concPeaks={concPeaks}
        />
        <div className="tl-canvas-col" ref={colRef} style={{ height: lay.height }}>
          <canvas
            ref={canvasRef}
            data-testid="timeline-canvas"
            className="tl-canvas"
            onMouseDown={onMouseDown}
            onMouseMove={onHoverMove}
            onMouseLeave={() => {
              setHover(null);
              setCursorX(null);
              mouseX.current = null;
            }}
            onDoubleClick={() => {
              if (range) zoomToRange(range);
            }}
          />
        </div>
      </div>
      {range && rangeBox && (
        <div className="range-actions" style={{ left: LABEL_W + Math.max(0, Math.min(size.width - 200, rangeBox[1] + 6)) }}>
          <button data-testid="zoom-to-range" onClick={() => zoomToRange(range)} title="Zoom to the selected range (Z, or double-click)">
            Zoom to range · {formatDuration(Math.abs(range[1] - range[0]))}
          </button>
          <button onClick={() => setRange(null)} title="Clear the range (Esc)">
            ×
          </button>
        </div>
      )}
      {keys.sheet && <ShortcutSheet onClose={() => keys.setSheet(false)} />}
      {hover && tip && (
        <div className="tooltip" data-testid="tooltip" style={{ left: Math.min(hover.clientX + 14, window.innerWidth - 320), top: hover.clientY + 16 }}>
          <div className="tt-title">{tip.title}</div>
          {tip.lines.map((l) => (
            <div key={l}>{l}</div>
          ))}
        </div>
      )}
    </div>
  );
}

/** The label column: one DOM row per canvas row, at the same y. */
const Labels = memo(function Labels(props: {
  layout: Layout;
  groups: TrackGroup[];
  folded: Set<string>;
  onFold: (id: string) => void;
  onHide: (id: string) => void;
  concPeaks: Map<number, string>;
}) {
  const { layout, folded, onFold, onHide, concPeaks } = props;
  return (
    <div className="tl-labels" style={{ width: LABEL_W, height: layout.height }}>
      {layout.rows.map((r) =>
        r.type === 'group' ? (
          <div
            key={r.id}
            className={`tl-group depth-${r.group.depth} tl-group-${r.group.kind}`}
            data-testid={`group-${r.id}`}
            style={{ top: r.y, height: r.h }}
            title={`${r.group.title}${r.group.subtitle ? ` · ${r.group.subtitle}` : ''}`}
          >
            <button className="fold" data-testid={`fold-${r.id}`} aria-expanded={!folded.has(r.id)} onClick={() => onFold(r.id)}>
              {folded.has(r.id) ? '▸' : '▾'}
            </button>
            <span className="g-title">{r.group.title}</span>
            <span className="g-sub">
              {r.group.subtitle}
              {folded.has(r.id) ? ` · ${r.group.contents} folded` : ''}
            </span>
          </div>
        ) : (
          <div
            key={r.id}
            className={`tl-label tl-${r.row!.kind} depth-${r.group.depth}`}
            data-testid={`row-${r.id}`}
            style={{ top: r.y, height: r.h }}
            title={`${r.row!.label} · ${r.row!.kind === 'conc' ? (concPeaks.get(r.row!.deviceId!) ?? r.row!.detail) : r.row!.detail}`}
          >
            <span className="l-name">{r.row!.label}</span>
            <span className="l-detail">{r.row!.kind === 'conc' ? (concPeaks.get(r.row!.deviceId!) ?? r.row!.detail) : r.row!.detail}</span>
            {r.row!.share !== undefined && (
              <span className="l-share" title="Share of the device's busy time">
                <span className="l-share-fill" style={{ width: `${Math.round(Math.min(1, r.row!.share) * 100)}%` }} />
                <span className="l-share-num">{formatPercent(r.row!.share)}</span>
              </span>
            )}
            <button className="hide" data-testid={`hide-${r.id}`} title="Hide this row" onClick={() => onHide(r.id)}>
              ×
            </button>
          </div>
        ),
      )}
    </div>
  );
});
