// The dependencies of the selection, drawn over the timeline (draw.ts calls
// this module): its launch arrows (details(): API call ↔ GPU work), the
// event waits, the legacy barrier and the synchronize calls around it
// (dependencies()), its critical chain back to a host call highlighted, and
// the spans event waits held operations' starts, hatched on their streams'
// rows (waitSpans(), for the loaded window). Only the selection's arrows and
// the visible spans are drawn: a frame stays as cheap as without them.
//
// Where an item is drawn is draw.ts's to say (endBox): this module gets it
// as a function, so that the arrows and the test hooks (Timeline.tsx) agree
// on the same geometry.
import type { DependencyKind, ItemDependencies, ItemDetails, ItemRef, WaitSpan } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';

/** One end of an arrow: an item and where it lies, for when it is not loaded one by one. */
export interface End {
  ref: ItemRef;
  rowId: string;
  startNs: number;
  endNs: number;
}

export interface Arrow {
  kind: DependencyKind;
  from: End;
  to: End;
  /** The wait time an event or synchronize arrow carries ("waited 12 µs"); null for the others. */
  label: string | null;
  /** On the selected operation's critical chain. */
  critical: boolean;
}

/** What the selection draws: arrows, the chain's items, the launch's other end outlined. */
export interface Overlay {
  arrows: Arrow[];
  /** Items of the critical chain (the selection's own outline stays the selection's). */
  chain: End[];
  /** The launch's other ends (details().related), outlined dashed as before. */
  related: End[];
}

/** Content or canvas coordinates of a drawn item. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export const EMPTY_OVERLAY: Overlay = { arrows: [], chain: [], related: [] };

const key = (r: ItemRef) => `${r.table}:${r.id}`;

function labelOf(kind: DependencyKind, waitNs: number | null): string | null {
  if (waitNs === null) return null;
  if (kind === 'event') return `waited ${formatDuration(waitNs)}`;
  if (kind === 'sync') return `blocked ${formatDuration(waitNs)}`;
  return null;
}

/**
 * The arrows of the selection: its launch (from details, which arrive
 * first), then what it waited for and what waited for it, and its critical
 * chain — an arrow that is both is drawn once, as part of the chain.
 * Pure: Timeline.tsx memoises it per selection, not per frame.
 */
export function overlayOf(selected: ItemRef | null, details: ItemDetails | null, deps: ItemDependencies | null): Overlay {
  if (!selected) return EMPTY_OVERLAY;
  const det = details && key(details.ref) === key(selected) ? details : null;
  const dep = deps && key(deps.ref) === key(selected) ? deps : null;
  const arrows = new Map<string, Arrow>();
  const add = (a: Arrow) => {
    const k = `${a.kind} ${key(a.from.ref)} ${key(a.to.ref)}`;
    const had = arrows.get(k);
    arrows.set(k, had ? { ...had, critical: had.critical || a.critical } : a);
  };
  const related: End[] = [];
  if (det) {
    const self: End = { ref: det.ref, rowId: det.rowId, startNs: det.startNs, endNs: det.endNs };
    for (const r of det.related) {
      const other: End = { ref: r.ref, rowId: r.rowId, startNs: r.startNs, endNs: r.endNs };
      related.push(other);
      // From the API call to the GPU work it launched, whichever end is selected.
      if (det.ref.table === 'api_calls') add({ kind: 'launch', from: self, to: other, label: null, critical: false });
      else if (r.ref.table === 'api_calls') add({ kind: 'launch', from: other, to: self, label: null, critical: false });
    }
  }
  const chain: End[] = [];
  if (dep) {
    for (const d of dep.chain) {
      add({ kind: d.kind, from: d.from, to: d.to, label: labelOf(d.kind, d.waitNs), critical: true });
      chain.push(d.from);
    }
    for (const d of [...dep.waitedFor, ...dep.waitedBy, ...dep.through])
      add({ kind: d.kind, from: d.from, to: d.to, label: labelOf(d.kind, d.waitNs), critical: false });
  }
  return { arrows: [...arrows.values()], chain, related };
}

/** Arrow colours by kind; the critical chain's over all of them. */
const ARROW_COLORS: Record<DependencyKind, string> = {
  launch: '#111111',
  stream: '#5c6773',
  event: '#1f6feb',
  barrier: '#6b7280',
  sync: '#8250df',
};
export const CRITICAL_COLOR = '#e8590c';
/** The hatch of a span an event wait held (its stroke; a light tint of it fills under). */
export const WAIT_HATCH = 'rgba(217, 72, 15, 0.8)';
const WAIT_TINT = 'rgba(217, 72, 15, 0.10)';

/** A cubic curve from one item to another, and where its label goes. */
export interface ArrowPath {
  sx: number;
  sy: number;
  c1x: number;
  c1y: number;
  c2x: number;
  c2y: number;
  ex: number;
  ey: number;
  /** The head's direction at the end: 'down', 'up' or 'right'. */
  head: 'down' | 'up' | 'right';
}

/**
 * Where an arrow runs between two drawn items. A launch runs vertically,
 * from near the call's start to the operation's start (as Nsight Systems
 * draws it); a dependency from the end of what was waited for to the start
 * of what waited, leaving and arriving horizontally, over the row when both
 * are on one row (stream order, a wait on the stream itself).
 */
export function arrowPath(kind: DependencyKind, from: Box, to: Box): ArrowPath {
  if (kind === 'launch' || kind === 'sync') {
    // Calls sit on API rows above or below the GPU rows: a vertical curve.
    const down = to.y > from.y;
    const sx = kind === 'launch' ? from.x + Math.min(from.w, 8) / 2 : from.x + from.w;
    const sy = down ? from.y + from.h : from.y;
    // A synchronize returns when the operation ends: to near the call's end.
    const ex = kind === 'launch' ? to.x : to.x + to.w - Math.min(to.w, 8) / 2;
    const ey = down ? to.y : to.y + to.h;
    const bend = Math.max(12, Math.abs(ey - sy) / 2) * (down ? 1 : -1);
    return { sx, sy, c1x: sx, c1y: sy + bend, c2x: ex, c2y: ey - bend, ex, ey, head: down ? 'down' : 'up' };
  }
  const sx = from.x + from.w;
  const ex = to.x;
  if (Math.abs(from.y - to.y) < 1) {
    // One row: an arch over it.
    const lift = Math.max(10, Math.min(24, Math.abs(ex - sx) / 3));
    return { sx, sy: from.y, c1x: sx, c1y: from.y - lift, c2x: ex, c2y: to.y - lift, ex, ey: to.y, head: 'down' };
  }
  const sy = from.y + from.h / 2;
  const ey = to.y + to.h / 2;
  const dx = Math.max(24, Math.abs(ex - sx) / 2);
  return { sx, sy, c1x: sx + dx, c1y: sy, c2x: ex - dx, c2y: ey, ex, ey, head: 'right' };
}

/** The point halfway along a path (t = 0.5 of the cubic): where its label is drawn. */
function midpoint(p: ArrowPath): { x: number; y: number } {
  return { x: (p.sx + 3 * p.c1x + 3 * p.c2x + p.ex) / 8, y: (p.sy + 3 * p.c1y + 3 * p.c2y + p.ey) / 8 };
}

/**
 * Draws the selection's overlay. `place` gives an item's box in canvas
 * coordinates (null: its row is not shown); an arrow whose ends are not
 * both placed is left out.
 */
export function drawOverlay(g: CanvasRenderingContext2D, overlay: Overlay, place: (e: End) => Box | null): void {
  g.lineWidth = 1;
  g.strokeStyle = '#222';
  g.setLineDash([3, 2]);
  for (const e of overlay.related) {
    const b = place(e);
    if (b) g.strokeRect(b.x - 0.5, b.y - 0.5, b.w + 1, b.h + 1);
  }
  g.setLineDash([]);
  g.strokeStyle = CRITICAL_COLOR;
  g.lineWidth = 2;
  for (const e of overlay.chain) {
    const b = place(e);
    if (b) g.strokeRect(b.x - 1, b.y - 1, b.w + 2, b.h + 2);
  }
  // The chain last: on top of the arrows it shares ends with.
  const ordered = [...overlay.arrows.filter((a) => !a.critical), ...overlay.arrows.filter((a) => a.critical)];
  for (const a of ordered) {
    const from = place(a.from);
    const to = place(a.to);
    if (!from || !to) continue;
    drawArrow(g, arrowPath(a.kind, from, to), a.critical ? CRITICAL_COLOR : ARROW_COLORS[a.kind], a.critical ? 2.5 : 1.5, a.kind === 'barrier');
  }
  for (const a of ordered) {
    if (!a.label) continue;
    const from = place(a.from);
    const to = place(a.to);
    if (from && to) drawArrowLabel(g, a.label, midpoint(arrowPath(a.kind, from, to)), a.critical ? CRITICAL_COLOR : ARROW_COLORS[a.kind]);
  }
}

function drawArrow(g: CanvasRenderingContext2D, p: ArrowPath, color: string, width: number, dashed: boolean): void {
  g.strokeStyle = color;
  g.fillStyle = color;
  g.lineWidth = width;
  if (dashed) g.setLineDash([5, 3]);
  g.beginPath();
  g.moveTo(p.sx, p.sy);
  g.bezierCurveTo(p.c1x, p.c1y, p.c2x, p.c2y, p.ex, p.ey);
  g.stroke();
  g.setLineDash([]);
  // The head along the last tangent, a dot at the start.
  g.beginPath();
  g.moveTo(p.ex, p.ey);
  if (p.head === 'right') {
    g.lineTo(p.ex - 7, p.ey - 4);
    g.lineTo(p.ex - 7, p.ey + 4);
  } else {
    const dir = p.head === 'down' ? 1 : -1;
    g.lineTo(p.ex - 4, p.ey - 7 * dir);
    g.lineTo(p.ex + 4, p.ey - 7 * dir);
  }
  g.closePath();
  g.fill();
  g.beginPath();
  g.arc(p.sx, p.sy, 2.5, 0, Math.PI * 2);
  g.fill();
}

function drawArrowLabel(g: CanvasRenderingContext2D, text: string, at: { x: number; y: number }, color: string): void {
  const w = g.measureText(text).width + 8;
  g.fillStyle = 'rgba(255, 255, 255, 0.92)';
  g.fillRect(at.x - w / 2, at.y - 8, w, 16);
  g.strokeStyle = color;
  g.lineWidth = 1;
  g.strokeRect(at.x - w / 2 + 0.5, at.y - 7.5, w - 1, 15);
  g.fillStyle = color;
  g.textAlign = 'center';
  g.fillText(text, at.x, at.y + 0.5);
  g.textAlign = 'start';
}

/**
 * The spans event waits held operations' starts, hatched over the gap on
 * their stream's row. `place` gives a span's box in canvas coordinates, or
 * null where its row is not shown or it is out of view.
 */
export function drawWaitSpans(
  g: CanvasRenderingContext2D,
  spans: readonly WaitSpan[],
  place: (s: WaitSpan) => Box | null,
  hatch: CanvasPattern | string,
): void {
  for (const s of spans) {
    const b = place(s);
    if (!b) continue;
    g.fillStyle = WAIT_TINT;
    g.fillRect(b.x, b.y, b.w, b.h);
    g.fillStyle = hatch;
    g.fillRect(b.x, b.y, b.w, b.h);
    g.fillStyle = WAIT_HATCH;
    g.fillRect(b.x, b.y + b.h - 1, b.w, 1);
  }
}
