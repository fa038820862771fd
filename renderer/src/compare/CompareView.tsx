// The compare view: two or more recordings stacked, each with its own rows,
// on one time axis. Each recording is shifted so that the alignment event
// (align.ts) is t = 0 in all of them, plus an offset the user may add; the
// rulers show that aligned time. Zoom and pan are linked (one aligned view
// for all) or independent (one per recording). Beside them: the diff
// summary of the base (first) recording against the one picked, both
// analysed on one scope (the steady state unless picked otherwise: the
// whole recordings, an NVTX range, or the k-th instance of one in each).
// Each lane draws its recording's start-up band and iterations row; a
// click on an iteration picks that instance as the scope.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { DiffSummary, ItemRef, RecordingHandle, RecordingSummary } from '../../../profiler/contract/api.ts';
import { getApi, toApiError } from '../api/client.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { useOverlays } from '../scope/overlays.ts';
import { parseScope, scopeKey, type Scope } from '../scope/scope.ts';
import { ScopePicker } from '../scope/ScopePicker.tsx';
import { Timeline, type View } from '../timeline/Timeline.tsx';
import { anchorOf, anchorRequest, formatAlignment, parseAlignment, shiftOf, type Alignment } from './align.ts';
import { DiffPanel } from './DiffPanel.tsx';

export interface CompareState {
  /** Recording ids, the base first. */
  ids: string[];
  align: Alignment;
  /** Extra offset (ns) per recording, in `ids` order. */
  offsets: number[];
  linked: boolean;
  /** Linked: the aligned view shared by all. */
  view: View | null;
  /** What the diff analyses, in every recording alike. */
  scope: Scope;
}

/** One compared recording's lane: its own rows and selection, a shared or own view. */
function Lane(props: {
  summary: RecordingSummary;
  shift: number;
  anchorMissing: boolean;
  view: View;
  onView: (aligned: View) => void;
  focused: boolean;
  onFocus: () => void;
  role: string;
  onError: (err: unknown) => void;
  scope: Scope;
  onScope: (s: Scope) => void;
}) {
  const { summary, shift, scope } = props;
  const [selected, setSelected] = useState<ItemRef | null>(null);
  const [ready, setReady] = useState(false);
  const overlays = useOverlays(summary.recordingId, ready);
  const iterations = overlays.iterations ?? null;
  const chosenInstance = scope.kind === 'range' && iterations && scope.name === iterations.name ? (scope.instance ?? null) : null;
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const own = useMemo(() => ({ start: props.view.start + shift, end: props.view.end + shift }), [props.view, shift]);
  return (
    <section
      className={`cmp-lane${props.focused ? ' focused' : ''}`}
      data-testid="compare-lane"
      data-recording={summary.recordingId}
      onMouseEnter={props.onFocus}
      onMouseDown={props.onFocus}
    >
      <header className="cmp-lane-head">
        <span className="cmp-role">{props.role}</span>
        <b title={summary.path}>{summary.name}</b>
        <span className="hint" data-testid="lane-shift">
          {props.anchorMissing ? 'alignment event not found: unshifted' : `t = 0 at ${formatDuration(shift)} into the recording`}
        </span>
      </header>
      <Timeline
        summary={summary}
        view={own}
        onView={(v) => props.onView({ start: v.start - shift, end: v.end - shift })}
        selected={selected}
        onSelect={setSelected}
        details={null}
        search={null}
        hidden={hidden}
        onHidden={setHidden}
        folded={folded}
        onFolded={setFolded}
        onError={props.onError}
        timeOrigin={shift}
        keyboard={props.focused}
        onFirstData={() => setReady(true)}
        startup={overlays.startup}
        iterations={iterations}
        chosenInstance={chosenInstance}
        onIteration={(name, instance) => props.onScope({ kind: 'range', name, instance })}
      />
    </section>
  );
}

export function CompareView(props: {
  recordings: RecordingHandle[];
  state: CompareState;
  onState: (s: CompareState) => void;
  onError: (err: unknown) => void;
}) {
  const api = getApi();
  const { state, onState, recordings } = props;
  const ids = state.ids.filter((id) => recordings.some((r) => r.recordingId === id));
  const [summaries, setSummaries] = useState<Map<string, RecordingSummary>>(new Map());
  const [anchors, setAnchors] = useState<Map<string, number | null>>(new Map());
  const [otherIndex, setOtherIndex] = useState(1);
  const [diff, setDiff] = useState<{ key: string; value: DiffSummary | null; error: string | null } | null>(null);
  const [focused, setFocused] = useState(0);
  const [views, setViews] = useState<Map<string, View>>(new Map());
  // The newest state, including an edit made since the last render: two quick
  // edits (an occurrence typed, then a name entered) must not build the second
  // on the state from before the first, or the first is lost.
  const latest = useRef(state);
  latest.current = state;
  const update = (edit: (s: CompareState) => CompareState) => {
    latest.current = edit(latest.current);
    onState(latest.current);
  };

  // Summaries of the compared recordings.
  useEffect(() => {
    let live = true;
    for (const id of ids) {
      if (summaries.has(id)) continue;
      api
        .summary(id)
        .then((s) => {
          if (live) setSummaries((m) => new Map(m).set(id, s));
        })
        .catch(props.onError);
    }
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the ids by value: a new array of the same recordings asks nothing; summaries already held are skipped inside
  }, [ids.join(',')]);

  // The alignment event of each recording.
  const alignKey = formatAlignment(state.align);
  useEffect(() => {
    let live = true;
    setAnchors(new Map());
    const req = anchorRequest(state.align);
    for (const id of ids) {
      if (!req) {
        setAnchors((m) => new Map(m).set(id, 0));
        continue;
      }
      api
        .search(id, req)
        .then((r) => {
          if (live) setAnchors((m) => new Map(m).set(id, anchorOf(state.align, r)));
        })
        .catch((e) => {
          if (live) {
            setAnchors((m) => new Map(m).set(id, null));
            props.onError(e);
          }
        });
    }
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the ids and the alignment by value (alignKey), not by object identity
  }, [ids.join(','), alignKey]);

  // The diff of the base against the picked recording.
  const other = ids[Math.min(otherIndex, ids.length - 1)];
  const diffKey = `${ids[0]}→${other}@${scopeKey(state.scope)}`;
  useEffect(() => {
    if (ids.length < 2 || !other || other === ids[0]) return;
    let live = true;
    setDiff({ key: diffKey, value: null, error: null });
    api
      .compare(ids[0]!, other, state.scope)
      .then((d) => {
        if (live) setDiff({ key: diffKey, value: d, error: null });
      })
      .catch((e) => {
        if (live) setDiff({ key: diffKey, value: null, error: toApiError(e).message });
      });
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- diffKey names both recordings and the scope: the diff is asked again exactly when one of them changes
  }, [diffKey]);

  const shifts = ids.map((id, i) => shiftOf(anchors.get(id) ?? null, i === 0 ? 0 : (state.offsets[i] ?? 0)));
  const ready = ids.length >= 2 && ids.every((id) => summaries.has(id) && anchors.has(id));

  // The first view, once everything is known: the longest aligned GPU span, with a margin.
  const diffDone = diff?.key === diffKey && (diff.value !== null || diff.error !== null);
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

  const setAlign = (a: Alignment) => update((s) => ({ ...s, align: a, view: null }));
  // A name or occurrence edit keeps the other half as it is now, not as it was rendered.
  const editNamed = (edit: { name?: string; occurrence?: number }) =>
    update((s) => (s.align.by === 'kernel' || s.align.by === 'nvtx' ? { ...s, align: { ...s.align, ...edit }, view: null } : s));
  const setScope = (scope: Scope) => update((s) => ({ ...s, scope }));
  // The scope menu lists the base's NVTX ranges (asked once the lanes can be drawn).
  const baseRanges = useOverlays(ids[0] ?? null, ready).ranges;
  const setOffset = (i: number, ns: number) => update((s) => ({ ...s, offsets: ids.map((_, j) => (j === i ? ns : (s.offsets[j] ?? 0))) }));
  const setLinked = (linked: boolean) => {
    if (!linked && state.view) setViews(new Map(ids.map((id) => [id, state.view!])));
    if (linked) {
      const v = views.get(ids[focused] ?? '') ?? state.view;
      update((s) => ({ ...s, linked, view: v ?? null }));
    } else update((s) => ({ ...s, linked }));
  };
  const toggle = (id: string) => {
    const next = ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id];
    if (next.length >= 1) update((s) => ({ ...s, ids: next, offsets: next.map((x) => s.offsets[ids.indexOf(x)] ?? 0) }));
  };
  const makeBase = (id: string) => {
    const next = [id, ...ids.filter((x) => x !== id)];
    update((s) => ({ ...s, ids: next, offsets: next.map(() => 0), view: null }));
  };

  const nameInput = state.align.by === 'kernel' || state.align.by === 'nvtx' ? state.align : null;
  return (
    <div className="compare" data-testid="compare-view">
      <div className="cmp-bar">
        <span className="cmp-pick">
          {recordings.map((r) => (
            <label key={r.recordingId} className={ids[0] === r.recordingId ? 'base' : ''} title={r.path}>
              <input type="checkbox" data-testid="compare-pick" checked={ids.includes(r.recordingId)} onChange={() => toggle(r.recordingId)} />
              {r.name}
              {ids.includes(r.recordingId) && ids[0] !== r.recordingId && (
                <button className="linkish" onClick={() => makeBase(r.recordingId)} title="Compare the others against this one">
                  make base
                </button>
              )}
            </label>
          ))}
        </span>
        <span className="cmp-align">
          Align at
          <select
            data-testid="align-by"
            value={state.align.by}
            onChange={(e) => {
              const by = e.target.value as Alignment['by'];
              const named = latest.current.align.by === 'kernel' || latest.current.align.by === 'nvtx' ? latest.current.align : null;
              setAlign(by === 'kernel' || by === 'nvtx' ? { by, name: named?.name ?? '', occurrence: named?.occurrence ?? 1 } : ({ by } as Alignment));
            }}
          >
            <option value="first-gpu">first GPU operation</option>
            <option value="kernel">a kernel…</option>
            <option value="nvtx">an NVTX range…</option>
            <option value="origin">recording start</option>
          </select>
          {nameInput && (
            <>
              <input
                data-testid="align-name"
                placeholder={state.align.by === 'kernel' ? 'kernel name' : 'range name'}
                defaultValue={nameInput.name}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') editNamed({ name: (e.target as HTMLInputElement).value.trim() });
                }}
                onBlur={(e) => {
                  if (e.target.value.trim() !== nameInput.name) editNamed({ name: e.target.value.trim() });
                }}
              />
              #
              <input
                data-testid="align-occurrence"
                type="number"
                min={1}
                className="num-input"
                value={nameInput.occurrence}
                onChange={(e) => editNamed({ occurrence: Math.max(1, Number(e.target.value) || 1) })}
                title="Which occurrence (1 = the first)"
              />
            </>
          )}
        </span>
        <span className="cmp-scope" data-testid="compare-scope">
          Analyse <ScopePicker scope={state.scope} onScope={setScope} ranges={baseRanges} selection={null} />
        </span>
        <label className="cmp-linked" title="Zoom and pan all recordings together">
          <input type="checkbox" data-testid="compare-linked" checked={state.linked} onChange={(e) => setLinked(e.target.checked)} /> linked zoom
        </label>
        {ids.length > 2 && (
          <label>
            Diff base against
            <select data-testid="diff-other" value={otherIndex} onChange={(e) => setOtherIndex(Number(e.target.value))}>
              {ids.slice(1).map((id, i) => (
                <option key={id} value={i + 1}>
                  {recordings.find((r) => r.recordingId === id)?.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
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
                  onScope={setScope}
                />
                {i > 0 && (
                  <label className="cmp-offset" title="Shift this recording against the base (positive: its events move left)">
                    offset{' '}
                    <input
                      data-testid="compare-offset"
                      type="number"
                      step="any"
                      className="num-input"
                      value={((state.offsets[i] ?? 0) / 1000).toString()}
                      onChange={(e) => setOffset(i, (Number(e.target.value) || 0) * 1000)}
                    />{' '}
                    µs
                  </label>
                )}
              </div>
            ))}
          {!ready && ids.length >= 2 && (
            <div className="empty">
              <p>Aligning…</p>
            </div>
          )}
        </div>
        <aside className="side cmp-side" data-testid="compare-side" data-scope={diff?.key === diffKey && diff.value ? scopeKey(state.scope) : ''}>
          <DiffPanel diff={diff?.key === diffKey ? diff.value : null} error={diff?.key === diffKey ? diff.error : null} />
        </aside>
      </div>
    </div>
  );
}

export function initialCompareState(url: {
  cmp: string[];
  align?: string;
  offs: number[];
  linked: boolean;
  start?: number;
  end?: number;
  tab: string;
  cscope?: string;
}): CompareState {
  // A window means nothing across recordings (their times differ): only the other scopes are kept.
  const scope = parseScope(url.cscope);
  return {
    scope: scope.kind === 'window' ? { kind: 'steady-state' } : scope,
    ids: url.cmp,
    align: parseAlignment(url.align),
    offsets: url.offs,
    linked: url.linked,
    view: url.tab === 'compare' && url.start !== undefined && url.end !== undefined ? { start: url.start, end: url.end } : null,
  };
}
