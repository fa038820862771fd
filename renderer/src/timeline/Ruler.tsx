// The time ruler: a d3 axis in SVG (tick labels stay in the DOM, readable by
// people with a screen reader and by the end-to-end tests). Dragging on it
// selects a time range.
import { axisTop } from 'd3-axis';
import { scaleLinear } from 'd3-scale';
import { select } from 'd3-selection';
import { useLayoutEffect, useRef } from 'react';
import { formatDuration, formatTimestamp, rulerLabels } from '../base/time.ts';
import type { View } from './window-loader.ts';

export const RULER_H = 30;

export function Ruler(props: {
  view: View;
  width: number;
  range: [number, number] | null;
  onRange: (r: [number, number] | null, done: boolean) => void;
  /** Labels show time since this point (the compare view's alignment anchor); default 0, the recording origin. */
  origin?: number;
}) {
  const { view, width, range, onRange } = props;
  const origin = props.origin ?? 0;
  const axisRef = useRef<SVGGElement>(null);
  const baseRef = useRef<HTMLSpanElement>(null);
  useLayoutEffect(() => {
    const x = scaleLinear().domain([view.start - origin, view.end - origin]).range([0, width]);
    const count = Math.max(2, Math.floor(width / 120));
    const ticks = x.ticks(count);
    const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : view.end - view.start;
    const { base, format } = rulerLabels(ticks[0] ?? view.start - origin, step);
    const axis = select(axisRef.current!);
    axis.call(axisTop(x).ticks(count).tickSizeOuter(0).tickSize(6).tickFormat((v) => format(Number(v))));
    // Labels that would be cut by the edges stay in the DOM but are not shown.
    axis.selectAll<SVGGElement, number>('.tick').select('text').attr('visibility', (d) => (x(d) < 28 || x(d) > width - 28 ? 'hidden' : null));
    if (baseRef.current) baseRef.current.textContent = base === null ? '' : `${formatTimestamp(base, step)} +`;
  }, [view, width, origin]);
  const drag = useRef<number | null>(null);
  const toNs = (px: number) => view.start + (px / width) * (view.end - view.start);
  const a = range ? ((Math.min(...range) - view.start) / (view.end - view.start)) * width : 0;
  const b = range ? ((Math.max(...range) - view.start) / (view.end - view.start)) * width : 0;
  return (
    <div className="ruler" style={{ width }}>
      <svg width={width} height={RULER_H} data-testid="ruler"
        onMouseDown={(e) => { drag.current = toNs(e.nativeEvent.offsetX); onRange(null, false); }}
        onMouseMove={(e) => { if (drag.current !== null && e.buttons & 1) onRange([drag.current, toNs(e.nativeEvent.offsetX)], false); }}
        onMouseUp={(e) => {
          const start = drag.current;
          drag.current = null;
          if (start !== null && Math.abs(toNs(e.nativeEvent.offsetX) - start) > (3 * (view.end - view.start)) / width) onRange([start, toNs(e.nativeEvent.offsetX)], true);
        }}>
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
