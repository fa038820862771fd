// The application shell: the page's layout, composed from one hook per
// concern — the open recordings as tabs (use-recordings.ts: the files given
// to `serve` in browser mode; Open…, Recent), the desktop app's events and
// menu actions (use-desktop-events.ts), the shown
// recording and what the user looks at in it, remembered per recording
// (use-recording-ui.ts, with its scope: use-scope.ts), the details of the
// selected item (use-details.ts), search and the evidence highlight
// (use-search.ts), drag and drop (use-drop-files.ts; several files at once
// may be one job's ranks, shown as one recording with its JobBar), export
// (use-export.ts), the compare view (use-compare.ts), the Query tab's SQL
// (query/use-query.ts), the banners
// (use-banners.ts), and the URL that a reload reads back (use-url-sync.ts,
// url-state.ts), and following a recording being written (use-live.ts).
// What is left here: which view tab and dialog are shown,
// the timeline's status line, and how the parts meet.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { fullName } from '../../../profiler/contract/names.ts';
import type { DependencyEnd, Finding, ItemRef } from '../../../profiler/contract/api.ts';
import { ALL_KINDS, KIND_COLORS, KIND_FILTERS, KIND_LABELS } from '../base/colors.ts';
import { formatTimestamp } from '../base/time.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { CompareView } from '../compare/CompareView.tsx';
import { DetailsPanel } from '../panels/DetailsPanel.tsx';
import { FindingsPanel } from '../panels/FindingsPanel.tsx';
import { JobBar } from '../panels/JobBar.tsx';
import { QueryView } from '../query/QueryView.tsx';
import { useQuery } from '../query/use-query.ts';
import { RecordDialog } from '../record/RecordDialog.tsx';
import { useOverlays } from '../scope/overlays.ts';
import { useScopedAnswer } from '../scope/scoped-answer.ts';
import { StatsView } from '../stats/StatsView.tsx';
import { buildGroups, defaultFolded } from '../timeline/rows.ts';
import { clampView, Timeline } from '../timeline/Timeline.tsx';
import { useBanners } from './use-banners.ts';
import { useCompare } from './use-compare.ts';
import { useDependencies } from './use-dependencies.ts';
import { useDetails } from './use-details.ts';
import { useDropFiles } from './use-drop-files.ts';
import { useExport } from './use-export.ts';
import { useGoTo, useRecordingUi } from './use-recording-ui.ts';
import { LIVE_ANALYSIS_MS, useFollowEnd, useRecordingState, useThrottled } from './use-live.ts';
import { useRecordings } from './use-recordings.ts';
import { useDesktopEvents } from './use-desktop-events.ts';
import { useSearch } from './use-search.ts';
import { useUrlSync } from './use-url-sync.ts';
import { useSettled } from '../base/use-settled.ts';
import { readUrl, type UrlState } from './url-state.ts';

type Tab = UrlState['tab'];

export function App() {
  const { banners, report, warn, inform, dismiss } = useBanners();
  const [tab, setTab] = useState<Tab>(() => readUrl().tab);
  const [recordOpen, setRecordOpen] = useState(false);
  const [status, setStatus] = useState<{ items: number; coverage: number; resolutionNs: number; loading: boolean } | null>(null);

  const { caps, recordings, activeId, select, recent, opened, openPath, openPaths, openDialog, close } = useRecordings(report);
  const exportActive = useExport(activeId, report, inform);
  useDesktopEvents({ opened, openFailed: report, record: () => setRecordOpen(true), export: exportActive });

  const live = useRecordingState(activeId);
  const ui = useRecordingUi(activeId, recordings.find((r) => r.recordingId === activeId)?.path, report, warn, live);
  const { summary, view, setView, selected, setSelected, hidden, setHidden, folded, setFolded, showRow, scope, setScope, range, selection } = ui;
  const { compare, setCompare, openCompare } = useCompare(recordings, setTab);
  const foldedByDefault = useMemo(() => (summary ? defaultFolded(buildGroups(summary)) : new Set<string>()), [summary]);
  useUrlSync({ recordingId: summary?.recordingId ?? null, view, selected, hidden, folded, foldedByDefault, scope, tab, compare });
  const details = useDetails(summary, selected, report);
  const dependencies = useDependencies(summary, selected, report);
  const dragging = useDropFiles(!!caps?.canOpenFiles, openPaths, report);

  // The diagnosis, start-up, ranges and iterations after the first frame: they must not delay it.
  // (Another tab draws no timeline: nothing to wait for there.)
  const analyse = ui.ready || tab !== 'timeline';
  // A recording being written: analyses again at most every LIVE_ANALYSIS_MS as it grows (and once more when it is finished).
  const analysed = useThrottled(live?.revision ?? 0, LIVE_ANALYSIS_MS);
  const follow = useFollowEnd(live, view, setView);
  // The status bar's range follows the view once it holds still (base/use-settled.ts).
  const shownView = useSettled(view) ?? view;
  const findings = useScopedAnswer('findings', summary?.recordingId ?? null, scope, analyse, analysed);
  const overlays = useOverlays(summary?.recordingId ?? null, analyse, analysed);
  // Start-up known: the first view narrows to the steady state's GPU span (first-view.ts).
  const { startupKnown } = ui;
  useEffect(() => {
    if (summary && overlays.startup !== undefined) startupKnown(summary.recordingId, overlays.startup);
  }, [summary, overlays.startup, startupKnown]);
  const iterations = overlays.iterations ?? null;
  const chosenInstance = scope.kind === 'range' && iterations && scope.name === iterations.name ? (scope.instance ?? null) : null;

  const goTo = useGoTo(ui, iterations);
  const search = useSearch(summary, goTo, report);
  const { showEvidence } = search;
  const showTimeline = useCallback(() => setTab('timeline'), []);
  const query = useQuery(summary, goTo, showTimeline, report);

  const onGoRelated = useCallback(
    (ref: ItemRef, s: number, e: number) => {
      const r = details?.related.find((x) => x.ref.table === ref.table && x.ref.id === ref.id);
      goTo(ref, r?.rowId, s, e);
    },
    [details, goTo],
  );
  const onGoDependency = useCallback(
    (e: DependencyEnd) => goTo(e.ref, e.rowId, Math.min(e.startNs, details?.startNs ?? e.startNs), Math.max(e.endNs, details?.endNs ?? e.endNs)),
    [details, goTo],
  );
  const showFinding = useCallback(
    (f: Finding) => {
      if (!summary) return;
      showEvidence(f);
      const pad = Math.max(f.evidence.window.end - f.evidence.window.start, 1000) * 0.05;
      setView(clampView({ start: f.evidence.window.start - pad, end: f.evidence.window.end + pad }, summary));
      setTab('timeline');
    },
    [summary, showEvidence, setView],
  );
  const onShowStream = useCallback(
    (rowId: string) => {
      setTab('timeline');
      showRow(rowId);
    },
    [showRow],
  );

  const rowName = useMemo(() => {
    const m = new Map<string, string>();
    if (summary) for (const g of buildGroups(summary, iterations)) for (const r of g.rows) m.set(r.id, `${r.label} (${g.title})`);
    return m;
  }, [summary, iterations]);

  return (
    <div className="app">
      <header className="toolbar">
        <span className="brand">StreamScope</span>
        <nav className="rec-tabs" data-testid="recording-tabs">
          {recordings.map((r) => (
            <span key={r.recordingId} className={`rec-tab${r.recordingId === activeId ? ' on' : ''}`}>
              <button data-testid="recording-tab" title={r.path} onClick={() => select(r.recordingId)}>
                {r.name}
              </button>
              {recordings.length > 1 && (
                <button className="close" title="Close this tab" onClick={() => close(r.recordingId)}>
                  ×
                </button>
              )}
            </span>
          ))}
        </nav>
        <span className="spacer" />
        {caps?.canOpenFiles && (
          <button data-testid="open-file" onClick={openDialog}>
            Open…
          </button>
        )}
        {caps?.canOpenFiles && recent.length > 0 && (
          <select
            className="recent"
            data-testid="recent-files"
            value=""
            onChange={(e) => {
              if (e.target.value) openPath(e.target.value);
            }}
          >
            <option value="">Recent…</option>
            {recent.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        )}
        {caps?.canOpenFiles && activeId && (
          <button data-testid="export-trace" title="Export the shown recording as Chrome trace JSON (Perfetto UI, chrome://tracing)" onClick={exportActive}>
            Export…
          </button>
        )}
        {caps?.canRecord && (
          <button className="primary" data-testid="record-open" onClick={() => setRecordOpen(true)}>
            Record…
          </button>
        )}
        {caps && (
          <span className="mode" title={`StreamScope ${caps.version}`}>
            {caps.mode === 'browser' ? 'browser mode · read-only' : `v${caps.version}`}
          </span>
        )}
      </header>
      {summary && (
        <div className="subbar">
          <span className="view-tabs">
            <button className={tab === 'timeline' ? 'on' : ''} data-testid="tab-timeline" onClick={() => setTab('timeline')}>
              Timeline
            </button>
            <button className={tab === 'stats' ? 'on' : ''} data-testid="tab-stats" onClick={() => setTab('stats')}>
              Stats
            </button>
            <button
              className={tab === 'query' ? 'on' : ''}
              data-testid="tab-query"
              onClick={() => setTab('query')}
              title="SQL on the recording (read-only); rows that name an operation link to the timeline"
            >
              Query
            </button>
            {recordings.length > 1 && (
              <button
                className={tab === 'compare' ? 'on' : ''}
                data-testid="tab-compare"
                onClick={openCompare}
                title="The open recordings stacked on one time axis, with what changed"
              >
                Compare
              </button>
            )}
          </span>
          {tab !== 'compare' && tab !== 'query' && (
            <span className="search">
              <input
                data-testid="search"
                type="search"
                placeholder="Search kernels, calls, ranges…  (Enter: next)"
                value={search.text}
                onChange={(e) => search.type(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault();
                    search.step(e.shiftKey ? -1 : 1);
                  } else if (e.key === 'Escape') {
                    search.clear();
                    (e.target as HTMLInputElement).blur();
                  }
                }}
              />
              <select data-testid="search-kind" value={search.kind} onChange={(e) => search.setKind(e.target.value)} title="Only operations of this kind">
                {KIND_FILTERS.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.label}
                  </option>
                ))}
              </select>
              <button data-testid="search-prev" title="Previous match (Shift+Enter)" disabled={!search.res?.items.length} onClick={() => search.step(-1)}>
                ‹
              </button>
              <button data-testid="search-next" title="Next match (Enter)" disabled={!search.res?.items.length} onClick={() => search.step(1)}>
                ›
              </button>
              <span
                className="match-count"
                data-testid="search-count"
                title={search.res?.names
                  .slice(0, 20)
                  .map((n) => `${fullName(n)} × ${n.count}`)
                  .join('\n')}
              >
                {search.matchText}
              </span>
            </span>
          )}
          {tab !== 'compare' && hidden.size > 0 && (
            <select
              className="hidden-rows"
              data-testid="hidden-rows"
              value=""
              onChange={(e) => {
                const v = e.target.value;
                if (v === '*') setHidden(new Set());
                else if (v)
                  setHidden((h) => {
                    const n = new Set(h);
                    n.delete(v);
                    return n;
                  });
              }}
            >
              <option value="">
                {hidden.size} hidden row{hidden.size === 1 ? '' : 's'} — show…
              </option>
              <option value="*">all rows</option>
              {[...hidden].map((id) => (
                <option key={id} value={id}>
                  {rowName.get(id) ?? id}
                </option>
              ))}
            </select>
          )}
          <span className="spacer" />
          {live?.live && (
            <span className="live-badge" data-testid="live-badge" data-end-ns={live.endNs} title="Being recorded: the timeline follows it as it grows">
              ● live · {formatDuration(live.endNs - live.startNs)} · {(live.counts.kernels + live.counts.memcpys + live.counts.memsets).toLocaleString('en-US')}{' '}
              GPU ops
            </span>
          )}
          <span className="meta" title={summary.meta.command ?? summary.path}>
            {summary.devices
              .map((d) => d.name)
              .filter(Boolean)
              .join(', ')}
            {summary.meta.command ? ` · ${summary.meta.command}` : ''}
          </span>
        </div>
      )}
      {summary?.job && tab !== 'compare' && <JobBar job={summary.job} />}
      <div className="banners">
        {banners.map((b) => (
          <div key={b.id} className={`banner banner-${b.level}`} role="alert" data-testid={`${b.level}-banner`}>
            <span className="b-text">
              <strong>{b.title}</strong>
              {b.file && (
                <>
                  {' '}
                  · <code className="b-file">{b.file}</code>
                </>
              )}
              <br />
              {b.message}
            </span>
            <button className="b-close" title="Dismiss" onClick={() => dismiss(b.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
      <main>
        {!summary && recordings.length === 0 && (
          <div className="empty" data-testid="empty">
            <h1>No recording open</h1>
            {caps?.canOpenFiles ? (
              <p>
                Open a recording (<b>Open…</b>), drop a <code>.sqlite</code> file here
                {caps.canRecord ? (
                  <>
                    , or <b>Record…</b> a run
                  </>
                ) : null}
                .
              </p>
            ) : (
              <p>
                Browser mode shows the recordings given on the command line: <code>streamscope serve run.sqlite</code>.
              </p>
            )}
          </div>
        )}
        {tab === 'compare' && <CompareView recordings={recordings} state={compare} onState={setCompare} onError={report} />}
        {summary && tab === 'stats' && (
          <StatsView
            summary={summary}
            refresh={analysed}
            scope={scope}
            onScope={setScope}
            ranges={overlays.ranges}
            selection={selection}
            iterations={iterations}
            onShowStream={onShowStream}
          />
        )}
        {summary && tab === 'query' && <QueryView query={query} />}
        {summary && view && tab === 'timeline' && (
          <>
            <Timeline
              summary={summary}
              view={view}
              onView={setView}
              selected={selected}
              onSelect={setSelected}
              details={details}
              search={search.highlight}
              hidden={hidden}
              onHidden={setHidden}
              folded={folded}
              onFolded={setFolded}
              onFirstData={ui.onFirstData}
              onError={report}
              onStatus={setStatus}
              reveal={ui.reveal}
              range={range}
              onRange={ui.onRange}
              startup={overlays.startup}
              iterations={iterations}
              chosenInstance={chosenInstance}
              onIteration={ui.onIteration}
              dependencies={dependencies.dependencies}
              dependenciesPending={dependencies.pending}
              live={
                live && (live.live || follow.following)
                  ? { revision: live.revision, endNs: live.endNs, following: follow.following, onJumpToNow: follow.jumpToNow }
                  : null
              }
            />
            <aside className="side">
              <DetailsPanel
                details={details}
                summary={summary}
                loading={!!selected && !details}
                onGo={onGoRelated}
                dependencies={dependencies.dependencies}
                onGoDependency={onGoDependency}
              />
              <FindingsPanel answer={findings} onShow={showFinding} scope={scope} onScope={setScope} ranges={overlays.ranges} selection={selection} />
            </aside>
          </>
        )}
      </main>
      <footer className="statusbar">
        <span className="legend" data-testid="legend">
          {ALL_KINDS.map((k) => (
            <span key={k} className="lg">
              <i className={`swatch k-${k}`} style={{ background: KIND_COLORS[k] }} />
              {KIND_LABELS[k]}
            </span>
          ))}
        </span>
        <span className="spacer" />
        {summary && shownView && tab === 'timeline' && (
          <span className="status" data-testid="status">
            {formatTimestamp(shownView.start, (shownView.end - shownView.start) / 1000)} –{' '}
            {formatTimestamp(shownView.end, (shownView.end - shownView.start) / 1000)} · {formatDuration(shownView.end - shownView.start)}
            {status &&
              ` · ${status.items.toLocaleString('en-US')} ops, ${status.coverage.toLocaleString('en-US')} merged spans at ${formatDuration(status.resolutionNs)}/px`}
          </span>
        )}
        {summary && tab === 'timeline' && search.showingEvidence && (
          <button className="linkish status-action" data-testid="clear-evidence" onClick={search.clearEvidence}>
            clear evidence highlight
          </button>
        )}
      </footer>
      {dragging && (
        <div className="drop-overlay" data-testid="drop-overlay">
          {caps?.canOpenFiles ? 'Drop recordings to open them' : 'Browser mode cannot open files: use the desktop app'}
        </div>
      )}
      {recordOpen && (
        <RecordDialog
          onClose={() => setRecordOpen(false)}
          onDone={(h) => {
            setRecordOpen(false);
            opened([h]);
          }}
        />
      )}
    </div>
  );
}
