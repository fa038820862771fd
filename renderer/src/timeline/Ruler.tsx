// The time ruler: a d3 axis in SVG (tick labels stay in the DOM, readable by
// people with a screen reader and by the end-to-end tests). Dragging on it
// selects a time range. Start-up, when detected, is a band across it,
// labelled with its length, its tooltip saying what the time went to.
import { axisTop, scaleLinear, select } from 'd3';
import { useLayoutEffect, useRef } from 'react';
import type { Startup } from '../../../profiler/contract/api.ts';
import { formatTimestamp, rulerLabels } from '../base/time.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import type { View } from './window-loader.ts';

export const RULER_H = 30;

export function Ruler(props: {
  view: View;
  width: number;
  range: [number, number] | null;
  onRange: (r: [number, number] | null, done: boolean) => void;
  /** Labels show time since this point (the compare view's alignment anchor); default 0, the recording origin. */
  origin?: number;
  startup?: Startup | null;
}) {
  const { view, width, range, onRange } = props;
  const origin = props.origin ?? 0;
  const axisRef = useRef<SVGGElement>(null);
  const baseRef = useRef<HTMLSpanElement>(null);
  useLayoutEffect(() => {
    const x = scaleLinear()
      .domain([view.start - origin, view.end - origin])
      .range([0, width]);
    const count = Math.max(2, Math.floor(width / 120));
    const ticks = x.ticks(count);
    const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : view.end - view.start;
    const { base, format } = rulerLabels(ticks[0] ?? view.start - origin, step);
    const axis = select(axisRef.current!);
    axis.call(
      axisTop(x)
        .ticks(count)
        .tickSizeOuter(0)
        .tickSize(6)
        .tickFormat((v) => format(Number(v))),
    );
    // Labels that would be cut by the edges stay in the DOM but are not shown.
    axis
      .selectAll<SVGGElement, number>('.tick')
      .select('text')
      .attr('visibility', (d) => (x(d) < 28 || x(d) > width - 28 ? 'hidden' : null));
    if (baseRef.current) baseRef.current.textContent = base === null ? '' : `${formatTimestamp(base, step)} +`;
  }, [view, width, origin]);
  const drag = useRef<number | null>(null);
  // From the pointer's page position: offsetX would be relative to whichever
  // SVG child (the start-up band, the range) is under it.
  const toNs = (e: React.MouseEvent<SVGSVGElement>) =>
    view.start + ((e.clientX - e.currentTarget.getBoundingClientRect().left) / width) * (view.end - view.start);
  const xOf = (ns: number) => ((ns - view.start) / (view.end - view.start)) * width;
  const a = range ? xOf(Math.min(...range)) : 0;
  const b = range ? xOf(Math.max(...range)) : 0;
  return (
    <div className="ruler" style={{ width }}>
      <svg
        width={width}
        height={RULER_H}
        data-testid="ruler"
        onMouseDown={(e) => {
          drag.current = toNs(e);
          onRange(null, false);
        }}
        onMouseMove={(e) => {
          if (drag.current !== null && e.buttons & 1) onRange([drag.current, toNs(e)], false);
        }}
        onMouseUp={(e) => {
          const start = drag.current;
          drag.current = null;
          if (start === null) return;
          // A click (no drag) leaves no range.
          onRange(Math.abs(toNs(e) - start) > (3 * (view.end - view.start)) / width ? [start, toNs(e)] : null, true);
        }}
      >
        {props.startup && <StartupBand startup={props.startup} x0={xOf(props.startup.startNs)} x1={xOf(props.startup.endNs)} width={width} />}
        {range && <rect className="ruler-range" x={a} y={0} width={Math.max(1, b - a)} height={RULER_H} />}
        <g ref={axisRef} className="axis" transform={`translate(0,${RULER_H - 1})`} />
      </svg>
      <span className="ruler-base" ref={baseRef} data-testid="ruler-base" />
      {range && b - a > 0 && (
        <span className="ruler-range-label" data-testid="range-duration" style={{ left: Math.max(0, Math.min(width - 80, (a + b) / 2 - 40)) }}>
          {formatDuration(Math.abs(range[1] - range[0]))}
        </span>
      )}
    </div>
  );
}

/**
 * Start-up across the ruler (clipped to it): a shaded band from its first
 * call to the end of its last start-up call, "start-up 312 ms" where it has
 * room, and the time it went to in its tooltip. Its ns bounds are on the
 * element for the end-to-end tests.
 */
function StartupBand(props: { startup: Startup; x0: number; x1: number; width: number }) {
  const { startup: s, width } = props;
  const a = Math.max(0, props.x0);
  const b = Math.min(width, props.x1);
  if (b <= a) return null;
  const label = `start-up ${formatDuration(s.endNs - s.startNs)}`;
  const tip = [
    `Start-up: ${formatDuration(s.endNs - s.startNs)} (${formatTimestamp(s.startNs, 1000)} – ${formatTimestamp(s.endNs, 1000)}), left out of the steady state; ended by ${s.lastCall}`,
    ...s.spentOn.map((p) => `${p.label}: ${formatDuration(p.ns)}`),
    `${s.ops.toLocaleString('en-US')} GPU operations ran during it`,
    ...(s.beforeCudaNs !== null ? [`before CUDA initialised (interpreter, imports; not recorded): ${formatDuration(s.beforeCudaNs)}`] : []),
  ].join('\n');
  return (
    <g className="startup-band" data-testid="startup-band" data-start-ns={s.startNs} data-end-ns={s.endNs}>
      <title>{tip}</title>
      <rect className="startup-fill" x={a} y={0} width={b - a} height={RULER_H} />
      {props.x1 <= width && <rect className="startup-edge" x={b - 1} y={0} width={1} height={RULER_H} />}
      {b - a > 40 && (
        <text className="startup-label" x={a + 4} y={9}>
          {b - a > label.length * 6 ? label : 'start-up'}
        </text>
      )}
    </g>
  );
}
