// Drawing the timeline canvas: synchronous, from loaded data only (the
// loader fetches). Coordinate spaces (coords.ts): *time* to *view* x through
// one TimeAxis per frame; *content* y (rows.ts's layout) to *canvas* y by the
// vertical scroll; the backing store is scaled by devicePixelRatio once, in
// setTransform.
import type { ItemDetails, ItemKind, ItemRef, ItemTable, WaitSpan } from '../../../profiler/contract/api.ts';
import { KIND_COLORS, KIND_LABELS, startupColor } from '../base/colors.ts';
import { shortName } from '../../../profiler/contract/names.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import type { RowColumns } from '../../../profiler/contract/window-codec.ts';
import { contentToCanvas, TimeAxis } from './coords.ts';
import { drawOverlay, drawWaitSpans, WAIT_HATCH, type Box, type End, type Overlay } from './dependency-overlay.ts';
import { LANES } from './in-flight.ts';
import { iterationLabel, OUTLIER, WARM_UP, type IterationTrack, type LabelWidths } from './iterations.ts';
import { NVTX_LANE_H, type LaidRow, type Layout } from './rows.ts';
import type { View } from './view.ts';
import type { Busy, Loaded } from './window-loader.ts';

/** What is under a pixel: an item (selectable) or merged coverage. */
export interface Hit {
  ref?: ItemRef;
  kind: ItemKind;
  rowId: string;
  nameId?: number;
  count?: number;
  startNs: number;
  endNs: number;
  /** An instance of the iterations row (its index in the track), instead of an item. */
  instance?: number;
  /** Content coordinates. */
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface SearchHighlight {
  /** Names that match the search text (and kinds). */
  nameIds: Set<number>;
  /**
   * The search's text (lower case), when it matched more names than its
   * answer lists (SearchResponse.namesTotal): a name not in nameIds matches
   * when its text holds this one.
   */
  text?: string;
  /** Items highlighted one by one (a finding's evidence), as `table:id`. */
  refs?: Set<string>;
  kinds?: Set<ItemKind>;
  current?: ItemRef;
}

export interface DrawInput {
  width: number;
  height: number;
  dpr: number;
  scrollTop: number;
  view: View;
  layout: Layout;
  loaded: Loaded | null;
  selected: ItemRef | null;
  details: ItemDetails | null;
  search: SearchHighlight | null;
  hover: Hit | null;
  range: [number, number] | null;
  cursorX: number | null;
  /** Start-up as detected (scopeInfo().startup): shaded behind the rows. */
  startup: { startNs: number; endNs: number } | null;
  /** The iterations row's boxes, and the instance that is the analysis scope (1-based; null: none). */
  iterations: IterationTrack | null;
  chosenInstance: number | null;
  /** The selection's arrows, critical chain and launch ends (dependency-overlay.ts). */
  overlay: Overlay;
  /** Spans event waits held operations' starts, over the loaded window: hatched on their rows. */
  waitSpans: readonly WaitSpan[];
}

/** Start-up's shade over the rows and its end line; the ruler's band (Ruler.tsx) has the same hue (base/colors.ts startupColor). */
const STARTUP_FILL = startupColor(0.08);
const STARTUP_EDGE = startupColor(0.55);
/** Iteration boxes: an instance, a warm-up one (also hatched), an outlier (the findings' warning colour). */
const ITERATION_COLORS = { normal: '#5f7fa8', warmUp: '#9d8fd0', outlier: '#e69500' };

const ITEM_PAD = 3;
const FONT = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
let charWidth = 0;

/** Top of an item's lane in its row, in content coordinates (NVTX rows stack nested ranges; depth -1: none). */
function laneY(r: LaidRow, depth: number): number {
  return r.row?.kind === 'nvtx' ? r.y + 3 + Math.max(0, depth) * NVTX_LANE_H : r.y + ITEM_PAD;
}

function laneH(r: LaidRow): number {
  return r.row?.kind === 'nvtx' ? NVTX_LANE_H - 2 : r.h - 2 * ITEM_PAD;
}

/**
 * Draws one frame. Nothing is allocated per item drawn: hit testing asks
 * the geometry again (hitAt, itemHit) instead of keeping a rectangle per
 * item, which at 100 k items a frame fed the garbage collector 9 ms
 * pauses while panning.
 */
export function drawTimeline(g: CanvasRenderingContext2D, d: DrawInput): void {
  const { width, height, dpr, scrollTop, view, layout } = d;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, width, height);
  g.font = FONT;
  g.textBaseline = 'middle';
  if (!charWidth) charWidth = g.measureText('abcdefghijklmnopqrstuvwxyz_0123456789').width / 37;
  const axis = new TimeAxis(view, width);
  // What is in view, in content coordinates.
  const top = scrollTop;
  const bottom = scrollTop + height;

  // The layers, back to front.
  drawRowBands(g, layout, width, top, bottom);
  // Start-up, behind everything drawn on the rows: what the steady state leaves out.
  if (d.startup) drawStartup(g, d.startup, axis, height);
  drawUnloaded(g, d.loaded, view, axis, height);
  if (d.loaded) drawRows(g, d.loaded, layout, d.search, axis, top, bottom);
  for (const lane of d.iterations?.lanes ?? []) {
    const r = layout.byId.get(lane.rowId);
    if (r && r.type === 'row' && r.y + r.h >= top && r.y <= bottom)
      drawIterations(g, d.iterations!, lane.instances, d.chosenInstance, r.y - top, r.h, width, (t) => axis.timeToViewX(t));
  }
  // Where event waits held a stream: hatched in the gap before the operation they held.
  if (d.waitSpans.length)
    drawWaitSpans(
      g,
      d.waitSpans,
      (s) => {
        const b = waitSpanBox(d, s);
        return b && b.y + b.h >= top && b.y <= bottom ? contentToCanvas(b, top) : null;
      },
      hatch(g, WAIT_HATCH),
    );
  drawSelection(g, d, top);
  drawPointer(g, d, axis, top);
}

/** Row backgrounds and group bands. */
function drawRowBands(g: CanvasRenderingContext2D, layout: Layout, width: number, top: number, bottom: number): void {
  for (const r of layout.rows) {
    if (r.y + r.h < top || r.y > bottom) continue;
    const y = r.y - top;
    if (r.type === 'group') {
      g.fillStyle = GROUP_FILL[Math.min(r.group.depth, GROUP_FILL.length - 1)]!;
      g.fillRect(0, y, width, r.h);
      g.fillStyle = '#cfd6df';
      g.fillRect(0, y + r.h - 1, width, 1);
    } else {
      g.fillStyle = r.row?.kind === 'conc' ? '#fbfbfd' : '#ffffff';
      g.fillRect(0, y, width, r.h);
      g.fillStyle = '#eef0f3';
      g.fillRect(0, y + r.h - 1, width, 1);
    }
  }
}

/** Start-up shaded across the rows, with its end line. */
function drawStartup(g: CanvasRenderingContext2D, startup: { startNs: number; endNs: number }, axis: TimeAxis, height: number): void {
  const { width } = axis;
  const a = Math.max(0, axis.timeToViewX(startup.startNs));
  const b = Math.min(width, axis.timeToViewX(startup.endNs));
  if (b > a) {
    g.fillStyle = STARTUP_FILL;
    g.fillRect(a, 0, b - a, height);
    g.fillStyle = STARTUP_EDGE;
    if (b < width) g.fillRect(b - 1, 0, 1, height);
  }
}

/** Areas of the view that are not loaded yet: hatched, never drawn as empty. */
function drawUnloaded(g: CanvasRenderingContext2D, loaded: Loaded | null, view: View, axis: TimeAxis, height: number): void {
  if (loaded && loaded.startNs <= view.start && loaded.endNs >= view.end) return;
  const { width } = axis;
  const a = loaded ? Math.max(0, axis.timeToViewX(loaded.startNs)) : width;
  const b = loaded ? Math.min(width, axis.timeToViewX(loaded.endNs)) : 0;
  g.fillStyle = hatch(g, UNLOADED_HATCH);
  if (!loaded) g.fillRect(0, 0, width, height);
  else {
    if (a > 0) g.fillRect(0, 0, a, height);
    if (b < width) g.fillRect(b, 0, width - b, height);
  }
}

/** Whether an item is highlighted: its name matches the search (and its kind the filter), or it is one of a finding's evidence. */
type Matcher = (kind: ItemKind, nameId: number, table: string, id: number) => boolean;

/** The loaded rows in view: concurrency tracks, folded ranks' busy rows, and the items and coverage of the others. */
function drawRows(
  g: CanvasRenderingContext2D,
  loaded: Loaded,
  layout: Layout,
  search: SearchHighlight | null,
  axis: TimeAxis,
  top: number,
  bottom: number,
): void {
  const byText = search?.text !== undefined ? textMatcher(loaded.strings, search.text) : null;
  const named = (nameId: number) => search!.nameIds.has(nameId) || (byText !== null && nameId !== 0 && byText(nameId));
  const isMatch: Matcher = (kind, nameId, table, id) =>
    !!search && ((named(nameId) && (!search.kinds || search.kinds.has(kind))) || (!!search.refs && search.refs.has(`${table}:${id}`)));
  for (const r of layout.rows) {
    if (r.type !== 'row' || r.y + r.h < top || r.y > bottom) continue;
    const row = r.row!;
    const y0 = r.y - top;
    if (row.kind === 'conc') {
      drawConcurrency(g, loaded, row.deviceId!, y0, r.h, axis);
      continue;
    }
    if (row.kind === 'busy') {
      const busy = loaded.busy;
      if (busy && row.deviceIds!.every((d) => busy.asked.has(d))) drawBusy(g, busy, row.deviceIds!, y0, r.h, axis);
      else {
        // A rank scrolled to from afar: its GPU busy is asked for with the next window (the ranks near the view only).
        g.fillStyle = hatch(g, UNLOADED_HATCH);
        g.fillRect(0, y0, axis.width, r.h);
      }
      continue;
    }
    const data = loaded.byRow.get(row.id);
    if (data) drawItems(g, r, data, loaded, search, isMatch, axis, top);
  }
}

/** One row's merged coverage (lighter) and items (labelled where they are wide enough; matches outlined). */
function drawItems(
  g: CanvasRenderingContext2D,
  r: LaidRow,
  data: RowColumns,
  loaded: Loaded,
  search: SearchHighlight | null,
  isMatch: Matcher,
  axis: TimeAxis,
  top: number,
): void {
  const { kinds, tables } = loaded;
  const { width } = axis;
  const xOf = (t: number) => axis.timeToViewX(t);
  const lh = laneH(r);
  // Canvas state is set only when it changes: a frame can draw 100 k
  // items, and each fillStyle or globalAlpha assignment costs a parse
  // or a state save in the canvas.
  let style = '';
  let alpha = -1;
  const paint = (s: string, a: number) => {
    if (s !== style) g.fillStyle = style = s;
    if (a !== alpha) g.globalAlpha = alpha = a;
  };
  // Merged coverage: lighter, so one can tell "many small things" from one long one.
  const cv = data.coverage;
  for (let n = 0; n < cv.length; n++) {
    const x0 = xOf(cv.startNs[n]!);
    const x1 = xOf(cv.endNs[n]!);
    if (x1 < 0 || x0 > width) continue;
    paint(KIND_COLORS[kinds[cv.kind[n]!]!], search ? 0.2 : 0.7);
    g.fillRect(x0, laneY(r, cv.depth[n]!) - top, Math.max(1, x1 - x0), lh);
  }
  const it = data.items;
  for (let n = 0; n < it.length; n++) {
    const x0 = xOf(it.startNs[n]!);
    const x1 = xOf(it.endNs[n]!);
    if (x1 < -1 || x0 > width + 1) continue;
    const ly = laneY(r, it.depth[n]!) - top;
    const w = Math.max(1, x1 - x0);
    const kind = kinds[it.kind[n]!]!;
    const match = search !== null && isMatch(kind, it.nameId[n]!, tables[it.table[n]!]!, it.id[n]!);
    paint(KIND_COLORS[kind], search && !match ? 0.22 : 1);
    g.fillRect(x0, ly, w, lh);
    if (w > 28) {
      const name = itemName(kind, it.nameId[n]!, loaded);
      if (name) {
        drawLabel(g, name, Math.max(x0, 0), Math.min(x1, width), ly + lh / 2);
        style = ''; // drawLabel set its own fill
      }
    }
    if (match) {
      const current = search?.current && search.current.table === tables[it.table[n]!] && search.current.id === it.id[n];
      g.strokeStyle = current ? '#ff2d95' : '#ffb000';
      g.lineWidth = current ? 2.5 : 1.5;
      g.strokeRect(x0 - 0.5, ly - 0.5, w + 1, lh + 1);
    }
  }
  g.globalAlpha = 1;
}

/** The selection: its launch and dependency arrows, its critical chain, its outline. */
function drawSelection(g: CanvasRenderingContext2D, d: DrawInput, top: number): void {
  const toCanvas = (b: Box | null) => b && contentToCanvas(b, top);
  drawOverlay(g, d.overlay, (e) => toCanvas(endBox(d, e)));
  if (!d.selected) return;
  const det = d.details && d.details.ref.table === d.selected.table && d.details.ref.id === d.selected.id ? d.details : null;
  const sel = toCanvas(
    itemHit(d, d.selected, det?.rowId) ?? (det ? endBox(d, { ref: det.ref, rowId: det.rowId, startNs: det.startNs, endNs: det.endNs }) : null),
  );
  if (sel) {
    g.strokeStyle = '#111';
    g.lineWidth = 2;
    g.strokeRect(sel.x - 1, sel.y - 1, sel.w + 2, sel.h + 2);
  }
}

/** What the pointer made: the outline of what it is over, the selected range, the cursor line. */
function drawPointer(g: CanvasRenderingContext2D, d: DrawInput, axis: TimeAxis, top: number): void {
  const { height } = d;
  if (d.hover && (d.hover.ref || d.hover.instance !== undefined)) {
    g.strokeStyle = 'rgba(0,0,0,0.55)';
    g.lineWidth = 1;
    g.strokeRect(d.hover.x - 0.5, d.hover.y - top - 0.5, d.hover.w + 1, d.hover.h + 1);
  }
  if (d.range) {
    const a = axis.timeToViewX(Math.min(d.range[0], d.range[1]));
    const b = axis.timeToViewX(Math.max(d.range[0], d.range[1]));
    g.fillStyle = 'rgba(59, 117, 175, 0.12)';
    g.fillRect(a, 0, b - a, height);
    g.fillStyle = '#3b75af';
    g.fillRect(a, 0, 1, height);
    g.fillRect(b - 1, 0, 1, height);
  }
  if (d.cursorX !== null) {
    g.fillStyle = 'rgba(0,0,0,0.35)';
    g.fillRect(Math.round(d.cursorX), 0, 1, height);
  }
}

/** What drawTimeline drew where: the inputs hit testing needs. */
export type Geometry = Pick<DrawInput, 'width' | 'view' | 'layout' | 'loaded' | 'iterations'>;

/**
 * Where an item is drawn (content coordinates), from its row and times
 * alone: where rowHits would find it when it is loaded one by one, and
 * where it lies when it is merged into coverage or outside the loaded
 * window; null when its row is not shown (folded, hidden). No search of
 * the row's items (a critical chain can have hundreds of ends, every
 * frame) except for an NVTX range, whose lane is its nesting depth.
 */
export function endBox(geo: Geometry, e: End): Box | null {
  const r = geo.layout.byId.get(e.rowId);
  if (!r || r.type !== 'row') return null;
  if (r.row?.kind === 'nvtx') {
    const hit = itemHit(geo, e.ref, e.rowId);
    if (hit) return { x: hit.x, y: hit.y, w: hit.w, h: hit.h };
  }
  const axis = new TimeAxis(geo.view, geo.width);
  const x = axis.timeToViewX(e.startNs);
  return { x, y: laneY(r, -1), w: Math.max(1, axis.timeToViewX(e.endNs) - x), h: laneH(r) };
}

/** Where a wait span is hatched (content coordinates): its row's lane over its times; null when the row is not shown or the span is out of view. */
export function waitSpanBox(geo: Geometry, s: WaitSpan): Box | null {
  const r = geo.layout.byId.get(s.rowId);
  if (!r || r.type !== 'row') return null;
  const axis = new TimeAxis(geo.view, geo.width);
  const x0 = Math.max(-1, axis.timeToViewX(s.startNs));
  const x1 = Math.min(geo.width + 1, axis.timeToViewX(s.endNs));
  if (x1 < 0 || x0 > geo.width) return null;
  return { x: x0, y: r.y + ITEM_PAD, w: Math.max(1, x1 - x0), h: r.h - 2 * ITEM_PAD };
}

/** Where instance `i` of the iterations row is drawn (content coordinates; at least 1 px wide), or undefined when the row is not laid out. */
export function iterationRect(geo: Geometry, i: number): { x: number; y: number; w: number; h: number } | undefined {
  const t = geo.iterations;
  const r = t && geo.layout.byId.get(t.lanes[t.laneOf[i]!]!.rowId);
  if (!t || !r || r.type !== 'row') return undefined;
  const axis = new TimeAxis(geo.view, geo.width);
  const x = axis.timeToViewX(t.startNs[i]!);
  return { x, y: r.y + ITEM_PAD, w: Math.max(1, axis.timeToViewX(t.endNs[i]!) - x), h: r.h - 2 * ITEM_PAD };
}

/**
 * One box per instance of a row (`instances`: its process's); warm-up ones hatched, outliers in the warning
 * colour, the instance that is the scope outlined. Labels were made with
 * the track and are measured once (labelWidths): nothing is allocated per
 * box. A label is drawn only where it fits whole in its box's part that is
 * on screen and before the next box (iterations.ts iterationLabel).
 */
function drawIterations(
  g: CanvasRenderingContext2D,
  t: IterationTrack,
  instances: Int32Array,
  chosen: number | null,
  y0: number,
  h: number,
  width: number,
  xOf: (ns: number) => number,
): void {
  const y = y0 + ITEM_PAD;
  const bh = h - 2 * ITEM_PAD;
  const widths = labelWidths(g, t);
  for (const i of instances) {
    const x0 = xOf(t.startNs[i]!);
    const x1 = xOf(t.endNs[i]!);
    if (x1 < -1 || x0 > width + 1) continue;
    const w = Math.max(1, x1 - x0);
    const f = t.flags[i]!;
    g.fillStyle = f & OUTLIER ? ITERATION_COLORS.outlier : f & WARM_UP ? ITERATION_COLORS.warmUp : ITERATION_COLORS.normal;
    g.fillRect(x0, y, w, bh);
    if (f & WARM_UP) {
      g.fillStyle = hatch(g, WARM_UP_HATCH);
      g.fillRect(x0, y, w, bh);
    }
    const label = iterationLabel(t, i, xOf, width, widths);
    if (label) {
      g.fillStyle = '#fff';
      g.fillText(label.text, label.x, y + bh / 2 + 0.5);
    }
    if (t.rows[i]!.instance === chosen) {
      g.strokeStyle = '#111';
      g.lineWidth = 2;
      g.strokeRect(x0 - 1, y - 1, w + 2, bh + 2);
    }
  }
}

/** The iterations labels' widths in FONT, measured when first asked (NaN: not yet) and kept with the track. */
const measured = new WeakMap<IterationTrack, { long: Float32Array; short: Float32Array }>();
function labelWidths(g: CanvasRenderingContext2D, t: IterationTrack): LabelWidths {
  let m = measured.get(t);
  if (!m) measured.set(t, (m = { long: new Float32Array(t.rows.length).fill(NaN), short: new Float32Array(t.rows.length).fill(NaN) }));
  const { long, short } = m;
  return {
    long: (i) => (Number.isNaN(long[i]!) ? (long[i] = g.measureText(t.long[i]!).width) : long[i]!),
    short: (i) => (Number.isNaN(short[i]!) ? (short[i] = g.measureText(t.short[i]!).width) : short[i]!),
  };
}

/** The instance of iterations row `rowId` under x (within 2 px; the narrowest where boxes overlap). */
function iterationHit(geo: Geometry, rowId: string, x: number): Hit | undefined {
  const t = geo.iterations;
  const lane = t?.lanes.find((l) => l.rowId === rowId);
  if (!t || !lane) return undefined;
  let best: Hit | undefined;
  for (const i of lane.instances) {
    const b = iterationRect(geo, i);
    if (!b || x < b.x - 2 || x > b.x + b.w + 2 || (best && b.w >= best.w)) continue;
    best = { kind: 'nvtx', rowId, instance: i, startNs: t.startNs[i]!, endNs: t.endNs[i]!, ...b };
  }
  return best;
}

/**
 * The best of the items and coverage of layout row `r` that `accept` takes
 * (by geometry, content coordinates, and for items their table and id):
 * a Hit is built only for those.
 */
function rowHits(
  geo: Geometry,
  r: LaidRow,
  accept: (x: number, y: number, w: number, h: number, table: ItemTable | null, id: number) => boolean,
): Hit | undefined {
  const data = r.type === 'row' && r.row?.kind !== 'conc' ? geo.loaded?.byRow.get(r.id) : undefined;
  if (!data) return undefined;
  const axis = new TimeAxis(geo.view, geo.width);
  const xOf = (t: number) => axis.timeToViewX(t);
  const h = laneH(r);
  let best: Hit | undefined;
  const consider = (hit: Hit) => {
    // Prefer an item over coverage, and the narrowest one (nested NVTX, slivers).
    if (!best || (hit.ref && !best.ref) || (!!hit.ref === !!best.ref && hit.w < best.w)) best = hit;
  };
  const { kinds, tables } = geo.loaded!;
  const cv = data.coverage;
  for (let n = 0; n < cv.length; n++) {
    const x0 = xOf(cv.startNs[n]!);
    const w = Math.max(1, xOf(cv.endNs[n]!) - x0);
    const y = laneY(r, cv.depth[n]!);
    if (!accept(x0, y, w, h, null, 0)) continue;
    consider({ kind: kinds[cv.kind[n]!]!, rowId: r.id, count: cv.count[n]!, startNs: cv.startNs[n]!, endNs: cv.endNs[n]!, x: x0, y, w, h });
  }
  const it = data.items;
  for (let n = 0; n < it.length; n++) {
    const x0 = xOf(it.startNs[n]!);
    const w = Math.max(1, xOf(it.endNs[n]!) - x0);
    const y = laneY(r, it.depth[n]!);
    const table = tables[it.table[n]!]!;
    if (!accept(x0, y, w, h, table, it.id[n]!)) continue;
    consider({
      ref: { table, id: it.id[n]! },
      kind: kinds[it.kind[n]!]!,
      rowId: r.id,
      nameId: it.nameId[n]!,
      startNs: it.startNs[n]!,
      endNs: it.endNs[n]!,
      x: x0,
      y,
      w,
      h,
    });
  }
  return best;
}

/** What is drawn at (x, content y), within 2 px: an item rather than coverage, the narrowest first. */
export function hitAt(geo: Geometry, x: number, yContent: number): Hit | undefined {
  const r = geo.layout.rows.find((row) => yContent >= row.y && yContent < row.y + row.h);
  if (!r) return undefined;
  if (r.row?.kind === 'iter') return iterationHit(geo, r.row.id, x);
  return rowHits(geo, r, (hx, hy, hw, hh) => yContent >= hy && yContent < hy + hh && x >= hx - 2 && x <= hx + hw + 2 && hx + hw >= -1 && hx <= geo.width + 1);
}

/**
 * Where an item of the loaded window is drawn (content coordinates), or
 * undefined. With its row id (the selection's details say it), only that
 * row is searched: the selection is looked up every frame.
 */
export function itemHit(geo: Geometry, ref: ItemRef, rowId?: string): Hit | undefined {
  const accept = (_x: number, _y: number, _w: number, _h: number, table: ItemTable | null, id: number) => table === ref.table && id === ref.id;
  if (rowId !== undefined) {
    const r = geo.layout.byId.get(rowId);
    return r ? rowHits(geo, r, accept) : undefined;
  }
  for (const r of geo.layout.rows) {
    const h = rowHits(geo, r, accept);
    if (h) return h;
  }
  return undefined;
}

function drawLabel(g: CanvasRenderingContext2D, text: string, x0: number, x1: number, yMid: number): void {
  const room = x1 - x0 - 6;
  if (room < 14) return;
  const fits = Math.floor(room / charWidth);
  const s = text.length <= fits ? text : `${text.slice(0, Math.max(1, fits - 1))}…`;
  g.fillStyle = '#fff';
  g.fillText(s, x0 + 3, yMid + 0.5);
}

/** Stepped bars per lane (kernels, HtoD, DtoH), each scaled to its own peak in the loaded window. */
function drawConcurrency(g: CanvasRenderingContext2D, loaded: Loaded, deviceId: number, y0: number, h: number, axis: TimeAxis): void {
  const c = loaded.concurrency.get(deviceId);
  if (!c) return;
  const { width } = axis;
  const xOf = (t: number) => axis.timeToViewX(t);
  const laneH = (h - 4) / LANES.length;
  const bw = axis.durationToViewPx(c.bucketNs);
  LANES.forEach(([key, kind], lane) => {
    const values = c[key];
    let peak = 0;
    for (const v of values) peak = Math.max(peak, v);
    const ly = y0 + 2 + lane * laneH;
    g.fillStyle = '#f1f3f6';
    g.fillRect(0, ly + laneH - 1, width, 1);
    if (peak === 0) return;
    g.fillStyle = KIND_COLORS[kind];
    const first = Math.max(0, Math.floor((0 - xOf(c.startNs)) / bw));
    const last = Math.min(values.length - 1, Math.ceil((width - xOf(c.startNs)) / bw));
    for (let b = first; b <= last; b++) {
      const v = values[b]!;
      if (!v) continue;
      const bh = Math.max(1.5, (v / peak) * (laneH - 2));
      const x = xOf(c.startNs + b * c.bucketNs);
      g.fillRect(x, ly + laneH - 1 - bh, Math.max(1, bw + 0.5), bh);
    }
  });
}

/**
 * A folded rank's GPU busy: per bucket, its devices' average kernels,
 * copies and other operations in flight (from the zones), stacked, on the
 * scale every busy row shares (Busy.peak): a rank that idles while the
 * others work shows as a gap below theirs.
 */
function drawBusy(g: CanvasRenderingContext2D, busy: Busy, deviceIds: number[], y0: number, h: number, axis: TimeAxis): void {
  const devices = deviceIds.map((d) => busy.devices.get(d)).filter((d) => d !== undefined);
  if (devices.length === 0) return;
  const { width } = axis;
  const xOf = (t: number) => axis.timeToViewX(t);
  const base = y0 + h - 2;
  const scale = (h - 4) / busy.peak;
  const bw = axis.durationToViewPx(busy.bucketNs);
  const n = devices[0]!.kernels.length;
  const first = Math.max(0, Math.floor((0 - xOf(busy.startNs)) / bw));
  const last = Math.min(n - 1, Math.ceil((width - xOf(busy.startNs)) / bw));
  // One colour at a time (fillStyle is set three times per row, not per bucket).
  const tracks = [
    ['kernels', 'kernel'],
    ['copies', 'memcpy-h2d'],
    ['other', 'memcpy-other'],
  ] as const;
  const below = new Float64Array(last - first + 1);
  for (const [track, kind] of tracks) {
    g.fillStyle = KIND_COLORS[kind];
    for (let b = first; b <= last; b++) {
      let v = 0;
      for (const d of devices) v += d[track][b]!;
      if (v <= 0) continue;
      const bh = Math.max(1, v * scale);
      const x = xOf(busy.startNs + b * busy.bucketNs);
      g.fillRect(x, base - below[b - first]! - bh, Math.max(1, bw + 0.5), bh);
      below[b - first] = below[b - first]! + bh;
    }
  }
}

/** Group bands by nesting: a job's hosts, its ranks, their GPUs (rows.ts). */
const GROUP_FILL = ['#e9edf2', '#eef1f5', '#f3f5f8'];

/** Stroke colours of the hatches: parts of the view not loaded yet, warm-up iterations. */
const UNLOADED_HATCH = 'rgba(0,0,0,0.08)';
const WARM_UP_HATCH = 'rgba(255,255,255,0.55)';
const hatches = new Map<string, CanvasPattern | string>();
/** A diagonal hatch in `stroke`, made once per colour. */
function hatch(g: CanvasRenderingContext2D, stroke: string): CanvasPattern | string {
  const made = hatches.get(stroke);
  if (made) return made;
  const c = document.createElement('canvas');
  c.width = 8;
  c.height = 8;
  const p = c.getContext('2d');
  if (!p) return 'rgba(0,0,0,0.04)';
  p.strokeStyle = stroke;
  p.beginPath();
  p.moveTo(0, 8);
  p.lineTo(8, 0);
  p.stroke();
  const pattern = g.createPattern(c, 'repeat') ?? 'rgba(0,0,0,0.04)';
  hatches.set(stroke, pattern);
  return pattern;
}

/**
 * An item's name as the timeline writes it: a kernel's as the tables label
 * it over the whole recording (kernelLabels), else its name as people read
 * it (strings); '' for none.
 */
function itemName(kind: ItemKind, nameId: number, names: Pick<Loaded, 'strings' | 'kernelLabels'>): string {
  const name = names.strings[nameId] ?? '';
  return kind === 'kernel' && name ? (names.kernelLabels[nameId] ?? shortName(name)) : name;
}

/** Tooltip text of a hit. */
export function describeHit(h: Hit, names: Pick<Loaded, 'strings' | 'kernelLabels'>): { title: string; lines: string[] } {
  if (!h.ref)
    return {
      title: `${(h.count ?? 0).toLocaleString('en-US')} operations merged`,
      lines: [`mostly ${KIND_LABELS[h.kind]}`, `span ${formatDuration(h.endNs - h.startNs)}`, 'zoom in to see them one by one'],
    };
  const title = (h.nameId !== undefined ? itemName(h.kind, h.nameId, names) : '') || KIND_LABELS[h.kind];
  return {
    title,
    lines: [
      ...(title === KIND_LABELS[h.kind] ? [] : [KIND_LABELS[h.kind]]),
      `duration ${formatDuration(h.endNs - h.startNs)}`,
      `start ${formatStart(h.startNs)}`,
    ],
  };
}

function formatStart(ns: number): string {
  return `${(ns / 1e6).toFixed(6)} ms`;
}

/** Per window answer's names: which hold the text last asked (each name lower-cased once per text, not once per frame). */
const textMatches = new WeakMap<Record<number, string>, { text: string; matches: Map<number, boolean> }>();

/** Whether a name of `strings` (a window answer's) holds `text` (lower case). */
function textMatcher(strings: Record<number, string>, text: string): (nameId: number) => boolean {
  let cached = textMatches.get(strings);
  if (!cached || cached.text !== text) textMatches.set(strings, (cached = { text, matches: new Map() }));
  const { matches } = cached;
  return (nameId) => {
    let m = matches.get(nameId);
    if (m === undefined) matches.set(nameId, (m = (strings[nameId] ?? '').toLowerCase().includes(text)));
    return m;
  };
}
