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
// url-state.ts), following a recording being written (use-live.ts), the
// findings and overlays (use-analyses.ts) and where the panels' links go
// (use-navigation.ts); and from one component per part of the page: the
// toolbar (Toolbar.tsx), the bar of the shown recording (SubBar.tsx), the
// banners (Banners.tsx), the Timeline tab (TimelineTab.tsx), the status bar
// (StatusBar.tsx). What is left here: which view tab and dialog are shown,
// the timeline's status line, and how the parts meet.
import { useCallback, useMemo, useState } from 'react';
import { CompareView } from '../compare/CompareView.tsx';
import { JobBar } from '../panels/JobBar.tsx';
import { QueryView } from '../query/QueryView.tsx';
import { useQuery } from '../query/use-query.ts';
import { RecordDialog } from '../record/RecordDialog.tsx';
import { StatsView } from '../stats/StatsView.tsx';
import { buildGroups, defaultFolded } from '../timeline/rows.ts';
import { Banners, NoRecording } from './Banners.tsx';
import { StatusBar, type TimelineStatus } from './StatusBar.tsx';
import { SubBar } from './SubBar.tsx';
import { TimelineTab } from './TimelineTab.tsx';
import { Toolbar } from './Toolbar.tsx';
import { readUrl, type UrlState } from './url-state.ts';
import { useAnalyses } from './use-analyses.ts';
import { useBanners } from './use-banners.ts';
import { useCompare } from './use-compare.ts';
import { useDependencies } from './use-dependencies.ts';
import { useDesktopEvents } from './use-desktop-events.ts';
import { useDetails } from './use-details.ts';
import { useDropFiles } from './use-drop-files.ts';
import { useExport } from './use-export.ts';
import { useFollowEnd, useRecordingState } from './use-live.ts';
import { useNavigation } from './use-navigation.ts';
import { useGoTo, useRecordingUi } from './use-recording-ui.ts';
import { useRecordings } from './use-recordings.ts';
import { useSearch } from './use-search.ts';
import { useUrlSync } from './use-url-sync.ts';

type Tab = UrlState['tab'];

export function App() {
  const { banners, report, warn, inform, dismiss } = useBanners();
  const [tab, setTab] = useState<Tab>(() => readUrl().tab);
  const [recordOpen, setRecordOpen] = useState(false);
  const [status, setStatus] = useState<TimelineStatus | null>(null);

  const { caps, recordings, activeId, select, recent, opened, openPath, openPaths, openDialog, close } = useRecordings(report);
  const exportActive = useExport(activeId, report, inform);
  useDesktopEvents({ opened, openFailed: report, record: () => setRecordOpen(true), export: exportActive });

  const live = useRecordingState(activeId);
  const ui = useRecordingUi(activeId, recordings.find((r) => r.recordingId === activeId)?.path, report, warn, live);
  const { summary, view, setView, selected, hidden, setHidden, folded, showRow, scope, setScope, selection } = ui;
  const { compare, setCompare, openCompare } = useCompare(recordings, setTab);
  const foldedByDefault = useMemo(() => (summary ? defaultFolded(buildGroups(summary)) : new Set<string>()), [summary]);
  useUrlSync({ recordingId: summary?.recordingId ?? null, view, selected, hidden, folded, foldedByDefault, scope, tab, compare });
  const details = useDetails(summary, selected, report);
  const dependencies = useDependencies(summary, selected, report);
  const dragging = useDropFiles(!!caps?.canOpenFiles, openPaths, report);

  const follow = useFollowEnd(live, view, setView);
  const analyses = useAnalyses(ui, tab === 'timeline', live?.revision ?? 0);
  const { iterations, overlays, analysed } = analyses;
  const goTo = useGoTo(ui, iterations);
  const search = useSearch(summary, goTo, report);
  const showTimeline = useCallback(() => setTab('timeline'), []);
  const query = useQuery(summary, goTo, showTimeline, report);
  const navigation = useNavigation({ summary, details, goTo, showEvidence: search.showEvidence, setView, showTimeline, showRow });

  const rowName = useMemo(() => {
    const m = new Map<string, string>();
    if (summary) for (const g of buildGroups(summary, iterations)) for (const r of g.rows) m.set(r.id, `${r.label} (${g.title})`);
    return m;
  }, [summary, iterations]);

  return (
    <div className="app">
      <Toolbar
        caps={caps}
        recordings={recordings}
        activeId={activeId}
        onSelect={select}
        onClose={close}
        recent={recent}
        onOpenDialog={openDialog}
        onOpenPath={openPath}
        onExport={exportActive}
        onRecord={() => setRecordOpen(true)}
      />
      {summary && (
        <SubBar
          summary={summary}
          tab={tab}
          onTab={setTab}
          canCompare={recordings.length > 1}
          onCompare={openCompare}
          search={search}
          hidden={hidden}
          onHidden={setHidden}
          rowName={rowName}
          live={live}
        />
      )}
      {summary?.job && tab !== 'compare' && <JobBar job={summary.job} />}
      <Banners banners={banners} onDismiss={dismiss} />
      <main>
        {!summary && recordings.length === 0 && <NoRecording canOpenFiles={!!caps?.canOpenFiles} canRecord={!!caps?.canRecord} />}
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
            onShowStream={navigation.onShowStream}
          />
        )}
        {summary && tab === 'query' && <QueryView query={query} />}
        {summary && view && tab === 'timeline' && (
          <TimelineTab
            ui={{ ...ui, summary, view }}
            details={details}
            dependencies={dependencies}
            search={search}
            analyses={analyses}
            navigation={navigation}
            live={live}
            follow={follow}
            onStatus={setStatus}
            onError={report}
          />
        )}
      </main>
      <StatusBar
        view={view}
        onTimeline={!!summary && tab === 'timeline'}
        status={status}
        onClearEvidence={summary && tab === 'timeline' && search.showingEvidence ? search.clearEvidence : null}
      />
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
