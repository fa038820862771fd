// The compare view: two or more recordings stacked, each with its own rows,
// on one time axis. Each recording is shifted so that the alignment event
// (align.ts) is t = 0 in all of them, plus an offset the user may add; the
// rulers show that aligned time. Zoom and pan are linked (one aligned view
// for all) or independent (one per recording). Beside them: the diff
// summary of the base (first) recording against the one picked, both
// analysed on one scope (the steady state unless picked otherwise: the
// whole recordings, an NVTX range, or the k-th instance of one in each).
// Each lane draws its recording's start-up band and iterations row; a
// click on an iteration picks that instance as the scope. The parts: the
// state (compare-state.ts) and its edits (use-compare-edits.ts), what is
// asked of the API (use-compare-loading.ts: summaries, alignment events,
// the diff), the bar (CompareBar.tsx), a lane (Lane.tsx), the diff
// (DiffPanel.tsx).
import { useEffect, useState } from 'react';
import type { RecordingHandle } from '../../../profiler/contract/api.ts';
import { useOverlays } from '../scope/overlays.ts';
import { scopeKey } from '../scope/scope.ts';
import type { View } from '../timeline/Timeline.tsx';
import { shiftOf } from './align.ts';
import type { CompareState } from './compare-state.ts';
import { CompareBar } from './CompareBar.tsx';
import { DiffPanel } from './DiffPanel.tsx';
import { Lane } from './Lane.tsx';
import { useCompareEdits } from './use-compare-edits.ts';
import { useAnchors, useDiff, useSummaries } from './use-compare-loading.ts';

export function CompareView(props: {
  recordings: RecordingHandle[];
  state: CompareState;
  onState: (s: CompareState) => void;
  onError: (err: unknown) => void;
}) {
  const { state, onState, recordings } = props;
  const ids = state.ids.filter((id) => recordings.some((r) => r.recordingId === id));
  const [otherIndex, setOtherIndex] = useState(1);
  const [focused, setFocused] = useState(0);
  const [views, setViews] = useState<Map<string, View>>(new Map());
  const edits = useCompareEdits(state, onState, ids, { views, setViews, focused });
  const { latest, update } = edits;

  const summaries = useSummaries(ids, props.onError);
  const anchors = useAnchors(ids, state.align, props.onError);
  const other = ids[Math.min(otherIndex, ids.length - 1)];
  const { diff } = useDiff(ids[0], other, state.scope);
  const shifts = ids.map((id, i) => shiftOf(anchors.get(id) ?? null, i === 0 ? 0 : (state.offsets[i] ?? 0)));
  const ready = ids.length >= 2 && ids.every((id) => summaries.has(id) && anchors.has(id));

  // The first view, once everything is known: the longest aligned GPU span, with a margin.
  const diffDone = !!diff && (diff.value !== null || diff.error !== null);
  useEffect(() => {
    // Wait for the diff too: its GPU spans frame the first view.
    if (!ready || !diffDone || latest.current.view) return;
    let span = 0;
    ids.forEach((id, i) => {
      const s = summaries.get(id)!;
      span = Math.max(span, s.endNs - shifts[i]! - Math.min(0, s.startNs - shifts[i]!));
    });
    const gpu = diff?.value ? Math.max(diff.value.gpuSpanNs.a ?? 0, diff.value.gpuSpanNs.b ?? 0) : 0;
    const width = state.align.by === 'origin' || gpu <= 0 ? span : gpu;
    update((s) => ({ ...s, view: { start: -0.04 * width, end: 1.04 * width } }));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs once, when everything the first view needs has arrived; the view is the user's afterwards
  }, [ready, diffDone]);
  // The scope menu lists the base's NVTX ranges (asked once the lanes can be drawn).
  const baseRanges = useOverlays(ids[0] ?? null, ready).ranges;

  return (
    <div className="compare" data-testid="compare-view">
      <CompareBar recordings={recordings} ids={ids} state={state} edits={edits} baseRanges={baseRanges} otherIndex={otherIndex} onOtherIndex={setOtherIndex} />
      <div className="cmp-body">
        <div className="cmp-lanes">
          {ids.length < 2 && (
            <div className="empty">
              <p>Pick at least two recordings to compare.</p>
            </div>
          )}
          {ready &&
            state.view &&
            ids.map((id, i) => (
              <div key={id} className="cmp-lane-wrap">
                <Lane
                  summary={summaries.get(id)!}
                  shift={shifts[i]!}
                  anchorMissing={anchors.get(id) === null}
                  view={state.linked ? state.view! : (views.get(id) ?? state.view!)}
                  onView={(v) => (state.linked ? update((s) => ({ ...s, view: v })) : setViews((m) => new Map(m).set(id, v)))}
                  focused={focused === i}
                  onFocus={() => setFocused(i)}
                  role={i === 0 ? 'A · base' : ids.length > 2 ? `B${i}` : 'B'}
                  onError={props.onError}
                  scope={state.scope}
                  onScope={edits.setScope}
                />
                {i > 0 && <OffsetInput ns={state.offsets[i] ?? 0} onNs={(ns) => edits.setOffset(i, ns)} />}
              </div>
            ))}
          {!ready && ids.length >= 2 && (
            <div className="empty">
              <p>Aligning…</p>
            </div>
          )}
        </div>
        <aside className="side cmp-side" data-testid="compare-side" data-scope={diff?.value ? scopeKey(state.scope) : ''}>
          <DiffPanel diff={diff?.value ?? null} error={diff?.error ?? null} />
        </aside>
      </div>
    </div>
  );
}

/** A compared recording's offset against the base, in µs (positive: its events move left). */
function OffsetInput(props: { ns: number; onNs: (ns: number) => void }) {
  return (
    <label className="cmp-offset" title="Shift this recording against the base (positive: its events move left)">
      offset{' '}
      <input
        data-testid="compare-offset"
        type="number"
        step="any"
        className="num-input"
        value={(props.ns / 1000).toString()}
        onChange={(e) => props.onNs((Number(e.target.value) || 0) * 1000)}
      />{' '}
      µs
    </label>
  );
}
