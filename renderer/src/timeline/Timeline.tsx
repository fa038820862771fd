// The timeline: a DOM label column (row names, fold and hide buttons:
// Labels.tsx) next to one canvas that draws every visible row. Composed
// from one hook per job: the rows laid out (use-row-layout.ts), the canvas's
// size and scroll (use-canvas-box.ts), loading (use-window-loading.ts, with
// window-loader.ts), frame scheduling (use-frames.ts: drawing in
// requestAnimationFrame, only when something changed, from data the loader
// already holds), the view's moves (use-view-moves.ts), the pointer
// (use-pointer.ts), the keys (use-timeline-keys.ts), the selected range
// (use-selected-range.ts) and the test hooks (test-hooks.ts).
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
import { useCallback, useMemo, useRef } from 'react';
import type { ItemDependencies, ItemDetails, ItemRef, RecordingSummary, Startup } from '../../../profiler/contract/api.ts';
import { TimeAxis } from './coords.ts';
import { overlayOf } from './dependency-overlay.ts';
import type { SearchHighlight } from './draw.ts';
import type { IterationTrack } from './iterations.ts';
import { LABEL_W, Labels, useConcurrencyPeaks } from './Labels.tsx';
import { Overview } from './Overview.tsx';
import { HoverTooltip, RangeActions } from './Popovers.tsx';
import { Ruler, type RulerDrawn } from './Ruler.tsx';
import { ShortcutSheet } from './ShortcutSheet.tsx';
import { useTestHooks } from './test-hooks.ts';
import { useCanvasBox, useRevealRow } from './use-canvas-box.ts';
import { useFrames, type Frame } from './use-frames.ts';
import { usePointer } from './use-pointer.ts';
import { useRowLayout } from './use-row-layout.ts';
import { useSelectedRange } from './use-selected-range.ts';
import { useTimelineKeys } from './use-timeline-keys.ts';
import { useViewMoves } from './use-view-moves.ts';
import { useWindowLoading } from './use-window-loading.ts';
import { ViewControls } from './ViewControls.tsx';
import { clampView, type View } from './view.ts';
import { useWaitSpans } from './wait-spans.ts';

export type { View };
export { clampView };
export type { TestHooks } from './test-hooks.ts';

export interface TimelineProps {
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
}

export function Timeline(props: TimelineProps) {
  const { summary, view, selected, details, search, hidden, folded } = props;
  const latest = useRef(props);
  latest.current = props;
  const iterations = props.iterations ?? null;
  const startup = props.startup ?? null;
  const dpr = window.devicePixelRatio || 1;

  const canvasRef = useRef<HTMLCanvasElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const colRef = useRef<HTMLDivElement>(null);
  const rulerDrawn = useRef<RulerDrawn | null>(null);
  const { size, scrollTop, onScroll } = useCanvasBox(bodyRef, colRef);
  const { groups, lay, fetchRows, devices, busyDevices, noteNvtxDepth } = useRowLayout(summary, iterations, folded, hidden, { scrollTop, height: size.height });
  const revision = props.live?.revision;
  const wanted = { view, width: size.width, dpr, rows: fetchRows, devices, busyDevices, revision };
  const { loaded, idle: loaderIdle } = useWindowLoading(summary.recordingId, wanted, noteNvtxDepth, latest);
  useRevealRow(bodyRef, lay, props.reveal);
  const { range, setRange } = useSelectedRange(props, latest);

  // The selection's arrows, made once per selection (not per frame); the wait spans of the loaded window.
  const dependencies = props.dependencies ?? null;
  const overlay = useMemo(() => overlayOf(selected, details, dependencies), [selected, details, dependencies]);
  const onWaitSpansError = useCallback((err: unknown) => latest.current.onError(err), []);
  const waits = useWaitSpans(summary.recordingId, loaded, onWaitSpansError);

  // The frame this render draws, kept for what reads it until the next (the pointer's hit tests, the moves, the test hooks).
  const frameRef = useRef<Frame | null>(null);
  const currentFrame = useCallback(() => frameRef.current!, []);
  const canvasWidth = useCallback(() => frameRef.current!.size.width, []);
  const moves = useViewMoves(latest, canvasWidth);
  const { setView, moveView, zoomAt, zoomToRange, fit, zoomAround } = moves;
  const pointer = usePointer(canvasRef, bodyRef, currentFrame, latest, moves, setRange);
  const canvasH = Math.min(size.height, Math.max(lay.height, 1));
  const hover = pointer.hover?.hit ?? null;
  const chosenInstance = props.chosenInstance ?? null;
  const frame: Frame = {
    view,
    lay,
    loaded,
    selected,
    details,
    search,
    hover,
    range,
    cursorX: pointer.cursorX,
    scrollTop,
    size,
    canvasH,
    startup,
    iterations,
    chosenInstance,
    overlay,
    waits,
  };
  const frames = useFrames(canvasRef, frame, frameRef, dpr);
  useTestHooks({
    view: () => latest.current.view,
    frame: currentFrame,
    canvas: canvasRef,
    ruler: rulerDrawn,
    dataFrames: frames.dataFrames,
    idle: () => !frames.pending() && loaderIdle() && !currentFrame().waits.pending && !latest.current.dependenciesPending,
    windowsIdle: () => !frames.pending() && loaderIdle(),
  });

  // Keys zoom around the mouse while it is over the rows, else around the view's middle.
  const keys = useTimelineKeys({
    enabled: () => latest.current.keyboard !== false,
    move: (factor, fraction) => moveView(factor, fraction, pointer.mouseX.current ?? canvasWidth() / 2),
    act: (a) => {
      const { details: d, onSelect } = latest.current;
      const r = currentFrame().range;
      if (a === 'fit') fit();
      else if (a === 'zoom-range') {
        if (r) zoomToRange(r);
      } else if (a === 'focus') {
        if (!d) return fit();
        zoomAround(d.startNs, d.endNs, 0.5, 100);
      } else if (r) setRange(null);
      else onSelect(null);
    },
  });

  const concPeaks = useConcurrencyPeaks(loaded);
  const toggleFold = (id: string) => {
    const f = new Set(folded);
    if (f.has(id)) f.delete(id);
    else f.add(id);
    props.onFolded(f);
  };

  return (
    <div className="timeline">
      <div className="tl-top">
        <ViewControls view={view} onFit={fit} onZoom={(factor) => zoomAt(factor, size.width / 2)} onShortcuts={() => keys.setSheet(true)} live={props.live} />
        <div className="tl-ruler-col">
          <Ruler view={view} width={size.width} range={range} onRange={setRange} origin={props.timeOrigin} startup={startup} drawn={rulerDrawn} />
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
      <div className="tl-body" ref={bodyRef} onScroll={(e) => onScroll(e.currentTarget.scrollTop)}>
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
            onMouseDown={pointer.onMouseDown}
            onMouseMove={pointer.onMouseMove}
            onMouseLeave={pointer.onMouseLeave}
            onDoubleClick={() => {
              if (range) zoomToRange(range);
            }}
          />
        </div>
      </div>
      {range && <RangeActions range={range} axis={new TimeAxis(view, size.width)} onZoom={zoomToRange} onClear={() => setRange(null)} />}
      {keys.sheet && <ShortcutSheet onClose={() => keys.setSheet(false)} />}
      {pointer.hover && <HoverTooltip hover={pointer.hover} iterations={iterations} names={loaded} />}
    </div>
  );
}
