// The application shell: open recordings as tabs (file dialog, drag and
// drop, recent files in the desktop app; the files given to `serve` in
// browser mode), the timeline and stats views, search, the details and
// findings panels, error banners, the record dialog. State worth a reload
// (recording, view, selection, hidden rows, folded groups, scope, tab) is
// mirrored into the URL hash (url-state.ts).
//
// The scope: what the findings panel and the stats analyse (scope/). The
// steady state by default; the menu picks the whole recording or an NVTX
// range; a range selected on the timeline becomes the scope (a window) while
// it lasts, and clearing it goes back to the scope picked before; a click on
// a box of the iterations row picks that instance.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { fullName } from '../../../profiler/contract/names.ts';
import type { Capabilities, Finding, ItemDetails, ItemRef, RecordingHandle, RecordingSummary, Scope, SearchCursor, SearchResponse } from '../../../profiler/contract/api.ts';
import { getApi, toApiError, type ApiCallError } from '../api/client.ts';
import { ALL_KINDS, KIND_COLORS, KIND_FILTERS, KIND_LABELS } from '../base/colors.ts';
import { formatDuration, formatTimestamp } from '../base/time.ts';
import { CompareView, initialCompareState, type CompareState } from '../compare/CompareView.tsx';
import { formatAlignment } from '../compare/align.ts';
import { DetailsPanel } from '../panels/DetailsPanel.tsx';
import { FindingsPanel } from '../panels/FindingsPanel.tsx';
import { RecordDialog } from '../record/RecordDialog.tsx';
import { useOverlays } from '../scope/overlays.ts';
import { parseScope, scopeKey, STEADY_STATE, windowScope } from '../scope/scope.ts';
import { useScopedAnswer } from '../scope/scoped-answer.ts';
import { StatsView } from '../stats/StatsView.tsx';
import type { SearchHighlight } from '../timeline/draw.ts';
import { buildGroups } from '../timeline/rows.ts';
import { clampView, Timeline, type View } from '../timeline/Timeline.tsx';
import { readUrl, writeUrl } from './url-state.ts';
import { matchNumber, planStep } from './search-pages.ts';

interface Banner {
  id: number;
  level: 'error' | 'warning' | 'info';
  title: string;
  message: string;
  file?: string;
}

const ERROR_TITLES: Record<string, string> = {
  'not-a-recording': 'Not a StreamScope recording',
  corrupt: 'Recording is truncated or corrupt',
  locked: 'Recording is locked by another process',
  'newer-schema': 'Recording was written by a newer StreamScope',
  'not-found': 'File not found',
  'no-gpu': 'No GPU',
  forbidden: 'Not available here',
  'bad-request': 'Request refused',
  internal: 'Something went wrong',
};

/** Per recording: what the user was looking at, restored when its tab is shown again. */
interface RecordingUi {
  view?: View;
  selected: ItemRef | null;
  hidden: Set<string>;
  folded: Set<string>;
  scope: Scope;
  /** The range selected on the timeline. */
  range: [number, number] | null;
}

const SEARCH_LIMIT = 10_000;

export function App() {
  const api = getApi();
  const [caps, setCaps] = useState<Capabilities | null>(null);
  const [recordings, setRecordings] = useState<RecordingHandle[]>([]);
  const [activeId, setActiveId] = useState<string | null>(null);
  const [summary, setSummary] = useState<RecordingSummary | null>(null);
  const summaries = useRef(new Map<string, RecordingSummary>());
  const uiState = useRef(new Map<string, RecordingUi>());
  const [banners, setBanners] = useState<Banner[]>([]);
  const bannerSeq = useRef(0);
  const [tab, setTab] = useState<'timeline' | 'stats' | 'compare'>(() => readUrl().tab);
  const [compare, setCompare] = useState<CompareState>(() => initialCompareState(readUrl()));
  const [view, setView] = useState<View | null>(null);
  const [selected, setSelected] = useState<ItemRef | null>(null);
  const [details, setDetails] = useState<ItemDetails | null>(null);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const [scope, setScope] = useState<Scope>(STEADY_STATE);
  const [range, setRange] = useState<[number, number] | null>(null);
  // The last scope picked that is not a selection: what clearing the selection goes back to.
  const picked = useRef<Scope>(STEADY_STATE);
  if (scope.kind !== 'window') picked.current = scope;
  // The active recording's timeline has drawn its first frame: the analyses may start.
  const [ready, setReady] = useState(false);
  const [evidence, setEvidence] = useState<Set<string> | null>(null);
  const [searchText, setSearchText] = useState('');
  const [searchKind, setSearchKind] = useState('all');
  const [searchRes, setSearchRes] = useState<SearchResponse | null>(null);
  const [matchIndex, setMatchIndex] = useState(-1);
  // Which page of matches is shown, and the `after` that fetched each page seen (search-pages.ts).
  const [searchPage, setSearchPage] = useState<{ page: number; cursors: (SearchCursor | undefined)[] }>({ page: 0, cursors: [undefined] });
  const [recent, setRecent] = useState<string[]>([]);
  const [recordOpen, setRecordOpen] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [reveal, setReveal] = useState<{ rowId: string } | null>(null);
  const [status, setStatus] = useState<{ items: number; coverage: number; resolutionNs: number; loading: boolean } | null>(null);
  const firstOpen = useRef(true);

  const report = useCallback((err: unknown, fallbackFile?: string) => {
    const e: ApiCallError = toApiError(err);
    const file = e.file ?? fallbackFile;
    setBanners((b) => {
      if (b.some((x) => x.message === e.message && x.file === file)) return b;
      return [...b, { id: ++bannerSeq.current, level: 'error', title: ERROR_TITLES[e.code] ?? 'Error', message: e.message, file }];
    });
  }, []);
  const warn = useCallback((title: string, message: string) => {
    setBanners((b) => (b.some((x) => x.message === message) ? b : [...b, { id: ++bannerSeq.current, level: 'warning', title, message }]));
  }, []);

  const activeRef = useRef<string | null>(null);
  activeRef.current = activeId;
  /** File ▸ Export… (desktop): the shown recording as Chrome trace JSON, where the save dialog says. */
  const exportActive = useCallback(() => {
    const id = activeRef.current;
    if (!id) return;
    api.exportTrace(id).then((r) => {
      if (!r) return;
      const message = `${r.events.toLocaleString('en-US')} trace events (${r.flows.toLocaleString('en-US')} launch flows) written: open it in Perfetto UI or chrome://tracing.`;
      setBanners((b) => [...b, { id: ++bannerSeq.current, level: 'info', title: 'Exported', message, file: r.path }]);
    }).catch((e) => report(e));
  }, [api, report]);

  const addRecordings = useCallback((handles: RecordingHandle[], activate: boolean) => {
    if (handles.length === 0) return;
    setRecordings((list) => {
      const next = [...list];
      for (const h of handles) if (!next.some((x) => x.recordingId === h.recordingId)) next.push(h);
      return next;
    });
    if (activate) setActiveId(handles[0]!.recordingId);
  }, []);

  const refreshRecent = useCallback(() => {
    api.recentFiles().then(setRecent).catch(() => setRecent([]));
  }, [api]);

  const openPath = useCallback((path: string) => {
    api.openRecording(path).then((h) => { addRecordings([h], true); refreshRecent(); }).catch((e) => report(e, path));
  }, [api, addRecordings, refreshRecent, report]);

  // Start: capabilities, the recordings of this session, recent files, desktop events.
  useEffect(() => {
    api.capabilities().then((c) => {
      setCaps(c);
      if (c.canOpenFiles) refreshRecent();
    }).catch((e) => report(e));
    api.listRecordings().then((list) => {
      setRecordings(list);
      const wanted = readUrl().rec;
      const first = list.find((r) => r.recordingId === wanted) ?? list[0];
      if (first) setActiveId(first.recordingId);
      else setSummary(null);
    }).catch((e) => report(e));
    const off = api.onEvent?.((ev) => {
      if (ev.type === 'recording-opened') { addRecordings([ev.recording], true); refreshRecent(); }
      else if (ev.type === 'open-failed') report(ev.error);
      else if (ev.type === 'menu' && ev.action === 'record') setRecordOpen(true);
      else if (ev.type === 'menu' && ev.action === 'export') exportActive();
    });
    return () => off?.();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // The active recording: its summary (cached), its remembered view and selection.
  useEffect(() => {
    if (!activeId) return;
    let live = true;
    const show = (s: RecordingSummary) => {
      if (!live) return;
      const url = readUrl();
      let ui = uiState.current.get(activeId);
      if (!ui) {
        const fromUrl = firstOpen.current && url.rec === s.recordingId;
        const scopeFromUrl = fromUrl ? parseScope(url.scope) : STEADY_STATE;
        ui = {
          view: fromUrl && url.start !== undefined && url.end !== undefined ? { start: url.start, end: url.end } : undefined,
          selected: fromUrl ? url.sel ?? null : null,
          hidden: new Set(fromUrl ? url.hide : []),
          folded: new Set(fromUrl ? url.fold : []),
          scope: scopeFromUrl,
          range: scopeFromUrl.kind === 'window' ? [scopeFromUrl.startNs, scopeFromUrl.endNs] : null,
        };
      }
      firstOpen.current = false;
      setSummary(s);
      setView(clampView(ui.view ?? { start: s.startNs, end: s.endNs }, s));
      setSelected(ui.selected);
      setHidden(ui.hidden);
      setFolded(ui.folded);
      picked.current = STEADY_STATE;
      setScope(ui.scope);
      setRange(ui.range);
      setReady(false);
      setDetails(null);
      setEvidence(null);
      setSearchRes(null);
      setMatchIndex(-1);
      if (!s.complete) warn('Incomplete recording', `${s.name}: ${s.incompleteReason ?? 'the recording was cut short'}; it holds what arrived before.`);
      for (const w of s.warnings) warn(`${s.name}`, w);
    };
    const cached = summaries.current.get(activeId);
    if (cached) show(cached);
    else {
      api.summary(activeId).then((s) => {
        summaries.current.set(activeId, s);
        // Browser mode names the files given to `serve` that could not be opened.
        for (const e of s.openErrors ?? []) report(e, e.file);
        show(s);
      }).catch((e) => report(e, recordings.find((r) => r.recordingId === activeId)?.path));
    }
    return () => { live = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [activeId]);

  // Remember the UI of the active recording, and mirror it into the URL.
  useEffect(() => {
    if (!summary) return;
    uiState.current.set(summary.recordingId, { view: view ?? undefined, selected, hidden, folded, scope, range });
    // The compare view keeps its own (aligned) range in start/end.
    const shown = tab === 'compare' ? compare.view : view;
    const t = setTimeout(() => writeUrl({
      rec: summary.recordingId, start: shown?.start, end: shown?.end, sel: selected ?? undefined, hide: [...hidden], fold: [...folded], tab, scope: scopeKey(scope),
      cmp: compare.ids, align: formatAlignment(compare.align), offs: compare.offsets, linked: compare.linked, cscope: scopeKey(compare.scope),
    }), 120);
    return () => clearTimeout(t);
  }, [summary, view, selected, hidden, folded, tab, compare, scope, range]);

  const openCompare = () => {
    // Default: every open recording, in tab order (the first is the base).
    if (compare.ids.filter((id) => recordings.some((r) => r.recordingId === id)).length < 2) {
      setCompare((c) => ({ ...c, ids: recordings.slice(0, 4).map((r) => r.recordingId), offsets: [], view: null }));
    }
    setTab('compare');
  };

  useEffect(() => {
    if (!summary || !selected) { setDetails(null); return; }
    let live = true;
    api.details(summary.recordingId, selected).then((d) => { if (live) setDetails(d); }).catch((e) => { if (live) report(e); });
    return () => { live = false; };
  }, [api, summary, selected, report]);

  // The diagnosis, start-up, ranges and iterations after the first frame: they must not delay it.
  // (Another tab draws no timeline: nothing to wait for there.)
  const onFirstData = useCallback(() => setReady(true), []);
  const analyse = ready || tab !== 'timeline';
  const findings = useScopedAnswer('findings', summary?.recordingId ?? null, scope, analyse);
  const overlays = useOverlays(summary?.recordingId ?? null, analyse);
  const iterations = overlays.iterations ?? null;
  // A selection in progress on the ruler (mouse down, not dragged yet) keeps
  // the scope: it becomes the new window as soon as it has a width.
  const onRange = useCallback((r: [number, number] | null, done: boolean) => {
    setRange(r);
    const w = r && windowScope(r[0], r[1]);
    if (w) setScope(w);
    else if (!r && done) setScope((s) => (s.kind === 'window' ? picked.current : s));
  }, []);
  const onScope = useCallback((s: Scope) => setScope(s), []);
  const onIteration = useCallback((name: string, instance: number) => setScope({ kind: 'range', name, instance }), []);
  const selection = useMemo(() => (range ? windowScope(range[0], range[1]) : null), [range]);
  const chosenInstance = scope.kind === 'range' && iterations && scope.name === iterations.name ? scope.instance ?? null : null;

  // Search: names (and kinds) to highlight, and the first matches to step through.
  const kinds = KIND_FILTERS.find((f) => f.id === searchKind)?.kinds;
  const searchActive = searchText.trim() !== '' || kinds !== undefined;
  useEffect(() => {
    if (!summary || !searchActive) { setSearchRes(null); setMatchIndex(-1); return; }
    let live = true;
    const t = setTimeout(() => {
      api.search(summary.recordingId, { text: searchText.trim(), kinds, limit: SEARCH_LIMIT })
        .then((r) => { if (live) { setSearchRes(r); setMatchIndex(-1); setSearchPage({ page: 0, cursors: [undefined] }); } })
        .catch((e) => { if (live) report(e); });
    }, 180);
    return () => { live = false; clearTimeout(t); };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [summary, searchText, searchKind]);

  const highlight = useMemo<SearchHighlight | null>(() => {
    const current = searchRes && matchIndex >= 0 ? searchRes.items[matchIndex]?.ref : undefined;
    if (searchRes) return { nameIds: new Set(searchRes.names.map((n) => n.nameId)), kinds: kinds ? new Set(kinds) : undefined, current };
    if (evidence) return { nameIds: new Set(), refs: evidence };
    return null;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [searchRes, matchIndex, evidence, searchKind]);

  /** Shows an item: unfolds and unhides its row, scrolls to it, keeps the zoom when it fits. */
  const goTo = useCallback((ref: ItemRef, rowId: string | undefined, startNs: number, endNs: number, select = true) => {
    if (!summary) return;
    if (select) setSelected(ref);
    if (rowId) {
      const group = buildGroups(summary, iterations).find((g) => g.rows.some((r) => r.id === rowId));
      if (group && folded.has(group.id)) setFolded((f) => { const n = new Set(f); n.delete(group.id); return n; });
      if (hidden.has(rowId)) setHidden((h) => { const n = new Set(h); n.delete(rowId); return n; });
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
  }, [summary, folded, hidden, iterations]);

  // Where stepping through the matches stands (search-pages.ts).
  const position = searchRes && { ...searchPage, pageSize: SEARCH_LIMIT, length: searchRes.items.length, index: matchIndex, total: searchRes.total };
  const step = (dir: 1 | -1) => {
    if (!summary || !searchRes || !position || searchRes.items.length === 0) return;
    const last = searchRes.items[searchRes.items.length - 1]!;
    const plan = planStep(position, dir, { startNs: last.startNs, table: last.ref.table, id: last.ref.id });
    if (plan.kind === 'within') {
      setMatchIndex(plan.index);
      const it = searchRes.items[plan.index]!;
      goTo(it.ref, it.rowId, it.startNs, it.endNs);
      return;
    }
    // Another page of matches: asked for after the cursor that starts it.
    api.search(summary.recordingId, { text: searchText.trim(), kinds, limit: SEARCH_LIMIT, ...(plan.after ? { after: plan.after } : {}) })
      .then((r) => {
        if (r.items.length === 0) return;
        const i = plan.index === 'first' ? 0 : r.items.length - 1;
        const cursors = [...searchPage.cursors.slice(0, plan.page), plan.after];
        setSearchRes(r);
        setSearchPage({ page: plan.page, cursors });
        setMatchIndex(i);
        const it = r.items[i]!;
        goTo(it.ref, it.rowId, it.startNs, it.endNs);
      })
      .catch(report);
  };

  // Drag and drop: the desktop app opens dropped recordings.
  useEffect(() => {
    const hasFiles = (e: DragEvent) => !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
    const over = (e: DragEvent) => { if (hasFiles(e)) { e.preventDefault(); setDragging(true); } };
    const leave = (e: DragEvent) => { if (!e.relatedTarget) setDragging(false); };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      const files = Array.from(e.dataTransfer!.files);
      if (!caps?.canOpenFiles) {
        report({ code: 'forbidden', message: 'Opening files needs the desktop app; browser mode shows the recordings given to `streamscope serve FILE…`.', file: files[0]?.name });
        return;
      }
      for (const f of files) {
        const path = api.pathForFile?.(f) || (f as File & { path?: string }).path || '';
        if (!path) report({ code: 'bad-request', message: `${f.name}: not a file on disk`, file: f.name });
        else openPath(path);
      }
    };
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => { window.removeEventListener('dragover', over); window.removeEventListener('dragleave', leave); window.removeEventListener('drop', drop); };
  }, [api, caps, openPath, report]);

  const onSelect = useCallback((r: ItemRef | null) => setSelected(r), []);
  const onGoRelated = useCallback((ref: ItemRef, s: number, e: number) => {
    const r = details?.related.find((x) => x.ref.table === ref.table && x.ref.id === ref.id);
    goTo(ref, r?.rowId, s, e);
  }, [details, goTo]);
  const showFinding = useCallback((f: Finding) => {
    if (!summary) return;
    setEvidence(new Set([
      ...f.evidence.kernels.map((id) => `kernels:${id}`), ...f.evidence.memcpys.map((id) => `memcpys:${id}`),
      ...f.evidence.memsets.map((id) => `memsets:${id}`), ...f.evidence.apiCalls.map((id) => `api_calls:${id}`), ...f.evidence.syncs.map((id) => `syncs:${id}`),
    ]));
    setSearchText('');
    setSearchKind('all');
    const pad = Math.max(f.evidence.window.end - f.evidence.window.start, 1000) * 0.05;
    setView(clampView({ start: f.evidence.window.start - pad, end: f.evidence.window.end + pad }, summary));
    setTab('timeline');
  }, [summary]);

  const closeTab = (id: string) => {
    setRecordings((list) => {
      const next = list.filter((r) => r.recordingId !== id);
      if (id === activeId) setActiveId(next[0]?.recordingId ?? null);
      if (next.length === 0) setSummary(null);
      return next;
    });
    // Close the file in the query worker (the desktop app; browser mode
    // keeps serving it). Already gone is fine: the tab is closed either way.
    api.closeRecording(id).catch((err: unknown) => {
      if (toApiError(err).code !== 'not-found') report(err);
    });
  };

  const rowName = useMemo(() => {
    const m = new Map<string, string>();
    if (summary) for (const g of buildGroups(summary, iterations)) for (const r of g.rows) m.set(r.id, `${r.label} (${g.title})`);
    return m;
  }, [summary, iterations]);

  const matchText = searchRes
    ? searchRes.total === 0 ? 'no match' : `${position && matchIndex >= 0 ? `${matchNumber(position).toLocaleString('en-US')} / ` : ''}${searchRes.total.toLocaleString('en-US')} match${searchRes.total === 1 ? '' : 'es'}`
    : '';

  return (
    <div className="app">
      <header className="toolbar">
        <span className="brand">StreamScope</span>
        <nav className="rec-tabs" data-testid="recording-tabs">
          {recordings.map((r) => (
            <span key={r.recordingId} className={`rec-tab${r.recordingId === activeId ? ' on' : ''}`}>
              <button data-testid="recording-tab" title={r.path} onClick={() => setActiveId(r.recordingId)}>{r.name}</button>
              {recordings.length > 1 && <button className="close" title="Close this tab" onClick={() => closeTab(r.recordingId)}>×</button>}
            </span>
          ))}
        </nav>
        <span className="spacer" />
        {caps?.canOpenFiles && <button data-testid="open-file" onClick={() => api.showOpenDialog().then((h) => { if (h) { addRecordings(h, true); refreshRecent(); } }).catch((e) => report(e))}>Open…</button>}
        {caps?.canOpenFiles && recent.length > 0 && (
          <select className="recent" data-testid="recent-files" value="" onChange={(e) => { if (e.target.value) openPath(e.target.value); }}>
            <option value="">Recent…</option>
            {recent.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        )}
        {caps?.canOpenFiles && activeId && <button data-testid="export-trace" title="Export the shown recording as Chrome trace JSON (Perfetto UI, chrome://tracing)" onClick={exportActive}>Export…</button>}
        {caps?.canRecord && <button className="primary" data-testid="record-open" onClick={() => setRecordOpen(true)}>Record…</button>}
        {caps && <span className="mode" title={`StreamScope ${caps.version}`}>{caps.mode === 'browser' ? 'browser mode · read-only' : `v${caps.version}`}</span>}
      </header>
      {summary && (
        <div className="subbar">
          <span className="view-tabs">
            <button className={tab === 'timeline' ? 'on' : ''} data-testid="tab-timeline" onClick={() => setTab('timeline')}>Timeline</button>
            <button className={tab === 'stats' ? 'on' : ''} data-testid="tab-stats" onClick={() => setTab('stats')}>Stats</button>
            {recordings.length > 1 && <button className={tab === 'compare' ? 'on' : ''} data-testid="tab-compare" onClick={openCompare} title="The open recordings stacked on one time axis, with what changed">Compare</button>}
          </span>
          {tab !== 'compare' && <span className="search">
            <input data-testid="search" type="search" placeholder="Search kernels, calls, ranges…  (Enter: next)" value={searchText}
              onChange={(e) => { setSearchText(e.target.value); setEvidence(null); }}
              onKeyDown={(e) => {
                if (e.key === 'Enter') { e.preventDefault(); step(e.shiftKey ? -1 : 1); }
                else if (e.key === 'Escape') { setSearchText(''); setSearchKind('all'); (e.target as HTMLInputElement).blur(); }
              }} />
            <select data-testid="search-kind" value={searchKind} onChange={(e) => setSearchKind(e.target.value)} title="Only operations of this kind">
              {KIND_FILTERS.map((f) => <option key={f.id} value={f.id}>{f.label}</option>)}
            </select>
            <button data-testid="search-prev" title="Previous match (Shift+Enter)" disabled={!searchRes?.items.length} onClick={() => step(-1)}>‹</button>
            <button data-testid="search-next" title="Next match (Enter)" disabled={!searchRes?.items.length} onClick={() => step(1)}>›</button>
            <span className="match-count" data-testid="search-count" title={searchRes?.names.slice(0, 20).map((n) => `${fullName(n)} × ${n.count}`).join('\n')}>{matchText}</span>
          </span>}
          {tab !== 'compare' && hidden.size > 0 && (
            <select className="hidden-rows" data-testid="hidden-rows" value="" onChange={(e) => {
              const v = e.target.value;
              if (v === '*') setHidden(new Set());
              else if (v) setHidden((h) => { const n = new Set(h); n.delete(v); return n; });
            }}>
              <option value="">{hidden.size} hidden row{hidden.size === 1 ? '' : 's'} — show…</option>
              <option value="*">all rows</option>
              {[...hidden].map((id) => <option key={id} value={id}>{rowName.get(id) ?? id}</option>)}
            </select>
          )}
          <span className="spacer" />
          <span className="meta" title={summary.meta.command ?? summary.path}>
            {summary.devices.map((d) => d.name).filter(Boolean).join(', ')}{summary.meta.command ? ` · ${summary.meta.command}` : ''}
          </span>
        </div>
      )}
      <div className="banners">
        {banners.map((b) => (
          <div key={b.id} className={`banner banner-${b.level}`} role="alert" data-testid={`${b.level}-banner`}>
            <span className="b-text"><strong>{b.title}</strong>{b.file && <> · <code className="b-file">{b.file}</code></>}<br />{b.message}</span>
            <button className="b-close" title="Dismiss" onClick={() => setBanners((list) => list.filter((x) => x.id !== b.id))}>×</button>
          </div>
        ))}
      </div>
      <main>
        {!summary && recordings.length === 0 && (
          <div className="empty" data-testid="empty">
            <h1>No recording open</h1>
            {caps?.canOpenFiles
              ? <p>Open a recording (<b>Open…</b>), drop a <code>.sqlite</code> file here{caps.canRecord ? <>, or <b>Record…</b> a run</> : null}.</p>
              : <p>Browser mode shows the recordings given on the command line: <code>streamscope serve run.sqlite</code>.</p>}
          </div>
        )}
        {tab === 'compare' && <CompareView recordings={recordings} state={compare} onState={setCompare} onError={report} />}
        {summary && tab === 'stats' && <StatsView summary={summary} scope={scope} onScope={onScope} ranges={overlays.ranges} selection={selection} iterations={iterations} onShowStream={(rowId) => { setTab('timeline'); setHidden((h) => { const n = new Set(h); n.delete(rowId); return n; }); setReveal({ rowId }); }} />}
        {summary && view && tab === 'timeline' && (
          <>
            <Timeline summary={summary} view={view} onView={setView} selected={selected} onSelect={onSelect} details={details}
              search={highlight} hidden={hidden} onHidden={setHidden} folded={folded} onFolded={setFolded}
              onFirstData={onFirstData} onError={report} onStatus={setStatus} reveal={reveal}
              range={range} onRange={onRange} startup={overlays.startup} iterations={iterations} chosenInstance={chosenInstance} onIteration={onIteration} />
            <aside className="side">
              <DetailsPanel details={details} summary={summary} loading={!!selected && !details}
                onGo={onGoRelated} />
              <FindingsPanel answer={findings} onShow={showFinding} scope={scope} onScope={onScope} ranges={overlays.ranges} selection={selection} />
            </aside>
          </>
        )}
      </main>
      <footer className="statusbar">
        <span className="legend" data-testid="legend">
          {ALL_KINDS.map((k) => <span key={k} className="lg"><i className={`swatch k-${k}`} style={{ background: KIND_COLORS[k] }} />{KIND_LABELS[k]}</span>)}
        </span>
        <span className="spacer" />
        {summary && view && tab === 'timeline' && (
          <span className="status" data-testid="status">
            {formatTimestamp(view.start, (view.end - view.start) / 1000)} – {formatTimestamp(view.end, (view.end - view.start) / 1000)} · {formatDuration(view.end - view.start)}
            {status && ` · ${status.items.toLocaleString('en-US')} ops, ${status.coverage.toLocaleString('en-US')} merged spans at ${formatDuration(status.resolutionNs)}/px`}
            {evidence && <button className="linkish" onClick={() => setEvidence(null)}> · clear evidence highlight</button>}
          </span>
        )}
      </footer>
      {dragging && <div className="drop-overlay" data-testid="drop-overlay">{caps?.canOpenFiles ? 'Drop recordings to open them' : 'Browser mode cannot open files: use the desktop app'}</div>}
      {recordOpen && <RecordDialog onClose={() => setRecordOpen(false)} onDone={(h) => { setRecordOpen(false); addRecordings([h], true); refreshRecent(); }} />}
    </div>
  );
}
