// The time ruler, drawn on a canvas of its own: ticks and their labels,
// start-up as a band (labelled with its length, its tooltip saying what the
// time went to) and the selected range. Dragging on it selects a time range.
//
// Why a canvas and not DOM or SVG: the ruler changes in every frame of a pan
// or zoom, and any change to the page's DOM costs Chromium a paint, a
// layerize and a commit of the document (1.5–2 ms a frame on 2 cores,
// measured with the renderer benchmark), where a canvas that draws itself
// costs its own pixels only. What the canvas hides from the DOM is read
// through RulerDrawn (the test hooks, Timeline.tsx); a screen reader reads
// the visible range from the canvas's label.
import { scaleLinear } from 'd3';
import { useLayoutEffect, useRef, type MutableRefObject } from 'react';
import type { Startup } from '../../../profiler/contract/api.ts';
import { startupColor } from '../base/colors.ts';
import { formatTimestamp, rulerLabels } from '../base/time.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { TimeAxis } from './coords.ts';
import type { View } from './view.ts';

export const RULER_H = 30;
const TICK = 6;
/** Labels closer than this to an edge would be cut: not drawn. */
const EDGE = 28;
const STARTUP_FILL = startupColor(0.16);
const STARTUP_EDGE = startupColor(0.7);
const STARTUP_TEXT = '#54467f';
const RANGE_FILL = 'rgba(47, 109, 176, 0.15)';
const AXIS = '#9aa3ae';
const LABEL = '#3b4450';

/** What the ruler drew last, in CSS pixels from its left edge. */
export interface RulerDrawn {
  ticks: { x: number; label: string; shown: boolean }[];
  /** The base the labels are offsets from (deep zooms), as printed; null when labels are absolute. */
  base: string | null;
  /** Start-up's band where it is on the ruler: x0..x1 clipped to the ruler. */
  startup: { startNs: number; endNs: number; x0: number; x1: number; label: string | null } | null;
}

export function Ruler(props: {
  view: View;
  width: number;
  range: [number, number] | null;
  onRange: (r: [number, number] | null, done: boolean) => void;
  /** Labels show time since this point (the compare view's alignment anchor); default 0, the recording origin. */
  origin?: number;
  startup?: Startup | null;
  /** Filled with what each draw put on the canvas (the ruler keeps its own when not given one). */
  drawn?: MutableRefObject<RulerDrawn | null>;
}) {
  const { view, width, range, onRange } = props;
  const origin = props.origin ?? 0;
  const startup = props.startup ?? null;
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const baseRef = useRef<HTMLSpanElement>(null);
  const ownDrawn = useRef<RulerDrawn | null>(null);
  const drawnRef = props.drawn ?? ownDrawn;
  useLayoutEffect(() => {
    const canvas = canvasRef.current!;
    const dpr = window.devicePixelRatio || 1;
    // Resized only when the size changes: assigning width reallocates the canvas even to the same value.
    const w = Math.round(width * dpr);
    const h = Math.round(RULER_H * dpr);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
      canvas.style.width = `${width}px`;
      canvas.style.height = `${RULER_H}px`;
    }
    const g = canvas.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, RULER_H);
    const axis = new TimeAxis(view, width);
    const xOf = (ns: number) => axis.timeToViewX(ns);

    let band: RulerDrawn['startup'] = null;
    if (startup) {
      const a = Math.max(0, xOf(startup.startNs));
      const b = Math.min(width, xOf(startup.endNs));
      if (b > a) {
        const text = `start-up ${formatDuration(startup.endNs - startup.startNs)}`;
        const label = b - a > 40 ? (b - a > text.length * 6 ? text : 'start-up') : null;
        g.fillStyle = STARTUP_FILL;
        g.fillRect(a, 0, b - a, RULER_H);
        if (xOf(startup.endNs) <= width) {
          g.fillStyle = STARTUP_EDGE;
          g.fillRect(b - 1, 0, 1, RULER_H);
        }
        if (label) {
          g.font = `600 9px ${fontFamily(canvas)}`;
          g.textAlign = 'left';
          g.textBaseline = 'alphabetic';
          g.fillStyle = STARTUP_TEXT;
          g.fillText(label, a + 4, 9);
        }
        band = { startNs: startup.startNs, endNs: startup.endNs, x0: a, x1: b, label };
      }
    }
    if (range) {
      const a = xOf(Math.min(range[0], range[1]));
      const b = xOf(Math.max(range[0], range[1]));
      g.fillStyle = RANGE_FILL;
      g.fillRect(a, 0, Math.max(1, b - a), RULER_H);
    }

    // The axis, as d3's axisTop drew it: a line along the bottom, ticks up from it, labels above.
    const x = scaleLinear()
      .domain([view.start - origin, view.end - origin])
      .range([0, width]);
    const ticks = x.ticks(Math.max(2, Math.floor(width / 120)));
    const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : view.end - view.start;
    const { base, format } = rulerLabels(ticks[0] ?? view.start - origin, step);
    const y = RULER_H - 1;
    // Half-pixel offsets keep one-pixel lines sharp at a device pixel ratio of 1.
    const crisp = dpr > 1 ? 0 : 0.5;
    g.strokeStyle = AXIS;
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(0, y + crisp);
    g.lineTo(width, y + crisp);
    for (const t of ticks) {
      const px = Math.round(x(t)) + crisp;
      g.moveTo(px, y);
      g.lineTo(px, y - TICK);
    }
    g.stroke();
    g.font = `10px ${fontFamily(canvas)}`;
    g.textAlign = 'center';
    g.textBaseline = 'bottom';
    g.fillStyle = LABEL;
    const drawnTicks: RulerDrawn['ticks'] = [];
    for (const t of ticks) {
      const px = x(t);
      const label = format(t);
      const shown = px >= EDGE && px <= width - EDGE;
      if (shown) g.fillText(label, px, y - TICK - 2);
      drawnTicks.push({ x: px, label, shown });
    }
    const baseText = base === null ? null : `${formatTimestamp(base, step)} +`;
    // Written only when it changes: a DOM change costs the frame a paint of the document.
    const span = baseRef.current;
    if (span && span.textContent !== (baseText ?? '')) span.textContent = baseText ?? '';
    canvas.setAttribute('aria-label', `Time ruler: ${formatTimestamp(view.start - origin, step)} to ${formatTimestamp(view.end - origin, step)}`);
    drawnRef.current = { ticks: drawnTicks, base: baseText, startup: band };
  }, [view, width, origin, range, startup, drawnRef]);

  const drag = useRef<number | null>(null);
  const axis = new TimeAxis(view, width);
  const toNs = (e: React.MouseEvent<HTMLCanvasElement>) => axis.viewXToTime(e.nativeEvent.offsetX);
  const xOf = (ns: number) => axis.timeToViewX(ns);
  const a = range ? xOf(Math.min(range[0], range[1])) : 0;
  const b = range ? xOf(Math.max(range[0], range[1])) : 0;
  return (
    <div className="ruler" style={{ width }}>
      <canvas
        ref={canvasRef}
        role="img"
        data-testid="ruler"
        title={RULER_TITLE}
        onMouseDown={(e) => {
          drag.current = toNs(e);
          onRange(null, false);
        }}
        onMouseMove={(e) => {
          if (drag.current !== null && e.buttons & 1) onRange([drag.current, toNs(e)], false);
          // Start-up's tooltip over its band (a title the canvas takes while the pointer is on it).
          const s = drawnRef.current?.startup;
          const px = e.nativeEvent.offsetX;
          const title = s && startup && px >= s.x0 && px <= s.x1 ? startupTip(startup) : RULER_TITLE;
          if (e.currentTarget.title !== title) e.currentTarget.title = title;
        }}
        onMouseUp={(e) => {
          const start = drag.current;
          drag.current = null;
          if (start === null) return;
          // A click (no drag) leaves no range.
          onRange(Math.abs(toNs(e) - start) > axis.viewPxToDuration(3) ? [start, toNs(e)] : null, true);
        }}
      />
      <span className="ruler-base" ref={baseRef} data-testid="ruler-base" />
      {range && b - a > 0 && (
        <span className="ruler-range-label" data-testid="range-duration" style={{ left: Math.max(0, Math.min(width - 80, (a + b) / 2 - 40)) }}>
          {formatDuration(Math.abs(range[1] - range[0]))}
        </span>
      )}
    </div>
  );
}

const RULER_TITLE = 'Drag to select a time range';

/** Start-up's tooltip: how long, from when to when, and what the time went to. */
function startupTip(s: Startup): string {
  return [
    `Start-up: ${formatDuration(s.endNs - s.startNs)} (${formatTimestamp(s.startNs, 1000)} – ${formatTimestamp(s.endNs, 1000)}), left out of the steady state; ended by ${s.lastCall}`,
    ...s.spentOn.map((p) => `${p.label}: ${formatDuration(p.ns)}`),
    `${s.ops.toLocaleString('en-US')} GPU operations ran during it`,
    ...(s.beforeCudaNs !== null ? [`before CUDA initialised (interpreter, imports; not recorded): ${formatDuration(s.beforeCudaNs)}`] : []),
  ].join('\n');
}

/** The page's font for the canvas (read once per canvas: the stylesheet does not change). */
const fonts = new WeakMap<HTMLCanvasElement, string>();
function fontFamily(c: HTMLCanvasElement): string {
  let f = fonts.get(c);
  if (f === undefined) {
    f = getComputedStyle(c).fontFamily || 'sans-serif';
    fonts.set(c, f);
  }
  return f;
}
