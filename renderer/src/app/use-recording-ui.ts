// The shown recording and what the user looks at in it: its summary (asked
// for once per recording), the visible range, the selected item, hidden
// rows, folded groups, the row to scroll into view, and the scope
// (use-scope.ts). Each recording's is remembered while another tab is
// shown and restored when it is shown again; the first recording shown
// takes its state from the URL (url-state.ts), as a reload left it. A
// recording being written has its summary asked again as it grows
// (use-live.ts), what the user looks at untouched.
import { useCallback, useEffect, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import type { ItemRef, RecordingState, RecordingSummary, Startup } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import { parseScope, STEADY_STATE, type Scope } from '../scope/scope.ts';
import type { IterationTrack } from '../timeline/iterations.ts';
import { buildGroups, defaultFolded, groupsToUnfold } from '../timeline/rows.ts';
import { jobWarnings } from '../../../profiler/contract/job.ts';
import { clampView, type View } from '../timeline/Timeline.tsx';
import type { Report } from '../base/callbacks.ts';
import { useScope, type ScopeState } from './use-scope.ts';
import { readUrl } from './url-state.ts';
import { LIVE_SUMMARY_MS, useThrottled } from './use-live.ts';
import { firstView } from './first-view.ts';

/** Per recording: what the user was looking at, restored when its tab is shown again. */
interface Remembered {
  view?: View;
  selected: ItemRef | null;
  hidden: Set<string>;
  folded: Set<string>;
  scope: Scope;
  /** The range selected on the timeline. */
  range: [number, number] | null;
}

export interface RecordingUi extends ScopeState {
  /** The shown recording's summary; null before the first one arrives. */
  summary: RecordingSummary | null;
  view: View | null;
  setView: Dispatch<SetStateAction<View | null>>;
  selected: ItemRef | null;
  setSelected: (r: ItemRef | null) => void;
  hidden: Set<string>;
  setHidden: Dispatch<SetStateAction<Set<string>>>;
  folded: Set<string>;
  setFolded: Dispatch<SetStateAction<Set<string>>>;
  /** A row to scroll into view (set again to scroll again). */
  reveal: { rowId: string } | null;
  setReveal: (r: { rowId: string }) => void;
  /** Shows a hidden row again and scrolls to it. */
  showRow: (rowId: string) => void;
  /** The timeline has drawn the shown recording's first frame: the analyses may start. */
  ready: boolean;
  onFirstData: () => void;
  /**
   * Start-up is known (scopeInfo of the steady state): the first view, while
   * nobody has moved it, narrows to the steady state's GPU span (first-view.ts).
   */
  startupKnown: (recordingId: string, startup: Startup | null) => void;
}

const without = <T>(set: Set<T>, item: T): Set<T> => {
  const n = new Set(set);
  n.delete(item);
  return n;
};

/**
 * @param activeId the recording whose tab is shown
 * @param activePath its file, named by an error about its summary
 * @param live its recordingState (use-live.ts): while it is written, the summary follows its revisions
 */
export function useRecordingUi(
  activeId: string | null,
  activePath: string | undefined,
  report: Report,
  warn: (title: string, message: string) => void,
  live: RecordingState | null = null,
): RecordingUi {
  const api = getApi();
  const [summary, setSummary] = useState<RecordingSummary | null>(null);
  const [view, setView] = useState<View | null>(null);
  const [selected, setSelected] = useState<ItemRef | null>(null);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const [reveal, setReveal] = useState<{ rowId: string } | null>(null);
  const [ready, setReady] = useState(false);
  const scope = useScope();
  const { restore } = scope;
  const summaries = useRef(new Map<string, RecordingSummary>());
  const remembered = useRef(new Map<string, Remembered>());
  const firstOpen = useRef(true);
  // The first view set by show() (not the URL's, not a remembered one), until it narrows or the user moves it.
  const autoView = useRef<{ id: string; view: View } | null>(null);

  // The active recording: its summary (cached), its remembered view and selection.
  useEffect(() => {
    if (!activeId) return;
    let live = true;
    const show = (s: RecordingSummary) => {
      if (!live) return;
      const url = readUrl();
      let ui = remembered.current.get(activeId);
      if (!ui) {
        const fromUrl = firstOpen.current && url.rec === s.recordingId;
        const scopeFromUrl = fromUrl ? parseScope(url.scope) : STEADY_STATE;
        ui = {
          view: fromUrl && url.start !== undefined && url.end !== undefined ? { start: url.start, end: url.end } : undefined,
          selected: fromUrl ? (url.sel ?? null) : null,
          hidden: new Set(fromUrl ? url.hide : []),
          // A job of many ranks opens with them folded (rows.ts defaultFolded), unless the URL says what is folded.
          folded: fromUrl && url.fold ? new Set(url.fold) : defaultFolded(buildGroups(s)),
          scope: scopeFromUrl,
          range: scopeFromUrl.kind === 'window' ? [scopeFromUrl.startNs, scopeFromUrl.endNs] : null,
        };
      }
      firstOpen.current = false;
      setSummary(s);
      const shown = ui.view ? clampView(ui.view, s) : firstView(s);
      autoView.current = ui.view ? null : { id: s.recordingId, view: shown };
      setView(shown);
      setSelected(ui.selected);
      setHidden(ui.hidden);
      setFolded(ui.folded);
      restore(ui.scope, ui.range);
      setReady(false);
      for (const w of s.warnings) warn(`${s.name}`, w);
      if (s.job) for (const w of jobWarnings(s.job)) warn(`${s.name}: clock not aligned`, w);
    };
    const cached = summaries.current.get(activeId);
    if (cached) show(cached);
    else {
      api
        .summary(activeId)
        .then((s) => {
          summaries.current.set(activeId, s);
          // Browser mode names the files given to `serve` that could not be opened.
          for (const e of s.openErrors ?? []) report(e, e.file);
          show(s);
        })
        .catch((e) => report(e, activePath));
    }
    return () => {
      live = false;
    };
  }, [api, activeId, activePath, report, warn, restore]);

  // A recording being written: its summary again as it grows (streams appear, counts and shares change), at most every LIVE_SUMMARY_MS.
  const grown = useThrottled(live?.revision ?? 0, LIVE_SUMMARY_MS);
  useEffect(() => {
    if (!activeId || grown === 0) return;
    let current = true;
    api.summary(activeId).then(
      (s) => {
        summaries.current.set(activeId, s);
        if (current) setSummary((old) => (old?.recordingId === activeId ? s : old));
      },
      () => {}, // the next revision asks again
    );
    return () => {
      current = false;
    };
  }, [api, activeId, grown]);

  // An unfinished recording is worth a warning — unless it is being written now (the page follows it instead).
  const liveNow = live?.live ?? null;
  // (A summary asked before the recording was finished says incomplete for up to a second more: the state says complete.)
  const finishedComplete = live?.complete ?? false;
  useEffect(() => {
    if (!summary || summary.complete || finishedComplete || liveNow !== false) return;
    warn('Incomplete recording', `${summary.name}: ${summary.incompleteReason ?? 'the recording was cut short'}; it holds what arrived before.`);
    for (const w of summary.warnings) warn(`${summary.name}`, w);
  }, [summary, liveNow, finishedComplete, warn]);

  // Remember the UI of the shown recording.
  const { scope: current, range } = scope;
  useEffect(() => {
    if (summary) remembered.current.set(summary.recordingId, { view: view ?? undefined, selected, hidden, folded, scope: current, range });
  }, [summary, view, selected, hidden, folded, current, range]);

  const showRow = useCallback((rowId: string) => {
    setHidden((h) => without(h, rowId));
    setReveal({ rowId });
  }, []);
  const onFirstData = useCallback(() => setReady(true), []);
  const startupKnown = useCallback((recordingId: string, startup: Startup | null) => {
    const auto = autoView.current;
    const s = summaries.current.get(recordingId);
    if (!auto || auto.id !== recordingId || !s) return;
    autoView.current = null;
    if (!startup) return;
    // Only the view as show() set it: one the user has zoomed or panned since is theirs.
    setView((v) => (v === auto.view ? firstView(s, startup) : v));
  }, []);

  return {
    ...scope,
    // With no tab shown (the last one closed) there is nothing to show.
    summary: activeId ? summary : null,
    view,
    setView,
    selected,
    setSelected,
    hidden,
    setHidden,
    folded,
    setFolded,
    reveal,
    setReveal,
    showRow,
    ready,
    onFirstData,
    startupKnown,
  };
}

/**
 * Shows an item: selects it (unless `select` is false), unfolds and unhides
 * its row and scrolls to it, keeps the zoom when it fits, and centres it.
 */
export function useGoTo(ui: RecordingUi, iterations: IterationTrack | null) {
  const { summary, folded, hidden, setSelected, setFolded, setHidden, setReveal, setView } = ui;
  return useCallback(
    (ref: ItemRef, rowId: string | undefined, startNs: number, endNs: number, select = true) => {
      if (!summary) return;
      if (select) setSelected(ref);
      if (rowId) {
        // Its group and the groups it is nested in (a job's host and rank).
        const unfold = groupsToUnfold(buildGroups(summary, iterations), rowId).filter((id) => folded.has(id));
        if (unfold.length) setFolded((f) => unfold.reduce(without, f));
        if (hidden.has(rowId)) setHidden((h) => without(h, rowId));
        setReveal({ rowId });
      }
      setView((v) => {
        // Keep the zoom when the item reads at it (a few pixels wide at least);
        // else zoom in until it spans a twentieth of the view. Center it.
        const dur = Math.max(endNs - startNs, 20);
        const span0 = v ? v.end - v.start : dur * 20;
        const px = (dur / span0) * 1000;
        const span = px >= 3 && dur < span0 * 0.8 ? span0 : dur * 20;
        const mid = (startNs + endNs) / 2;
        return clampView({ start: mid - span / 2, end: mid + span / 2 }, summary);
      });
    },
    [summary, folded, hidden, iterations, setSelected, setFolded, setHidden, setReveal, setView],
  );
}
