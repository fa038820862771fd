// What floats over the timeline's canvas: the selected range's actions
// (zoom to it, clear it) beside its right edge, and the tooltip of what the
// pointer is over (an operation, merged coverage, an iteration).
import type { TimeAxis } from './coords.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { describeHit, type Hit } from './draw.ts';
import { describeIteration, type IterationTrack } from './iterations.ts';
import { LABEL_W } from './Labels.tsx';
import type { Loaded } from './window-loader.ts';

export function RangeActions(props: { range: [number, number]; axis: TimeAxis; onZoom: (r: [number, number]) => void; onClear: () => void }) {
  const { range, axis } = props;
  const right = axis.timeToViewX(Math.max(range[0], range[1]));
  return (
    <div className="range-actions" style={{ left: LABEL_W + Math.max(0, Math.min(axis.width - 200, right + 6)) }}>
      <button data-testid="zoom-to-range" onClick={() => props.onZoom(range)} title="Zoom to the selected range (Z, or double-click)">
        Zoom to range · {formatDuration(Math.abs(range[1] - range[0]))}
      </button>
      <button onClick={props.onClear} title="Clear the range (Esc)">
        ×
      </button>
    </div>
  );
}

export function HoverTooltip(props: {
  hover: { hit: Hit; clientX: number; clientY: number };
  iterations: IterationTrack | null;
  /** The loaded window's names (none loaded: none). */
  names: Pick<Loaded, 'strings' | 'kernelLabels'> | null;
}) {
  const { hover, iterations } = props;
  const tip =
    hover.hit.instance !== undefined && iterations
      ? describeIteration(iterations, hover.hit.instance)
      : describeHit(hover.hit, props.names ?? { strings: {}, kernelLabels: {} });
  return (
    <div className="tooltip" data-testid="tooltip" style={{ left: Math.min(hover.clientX + 14, window.innerWidth - 320), top: hover.clientY + 16 }}>
      <div className="tt-title">{tip.title}</div>
      {tip.lines.map((l) => (
        <div key={l}>{l}</div>
      ))}
    </div>
  );
}
