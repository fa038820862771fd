// StreamScope renderer: the recording list, the timeline, the details of
// the selected item, the findings. State that should survive a reload (the
// recording, the visible range, the selection) lives in the URL hash.
import { StrictMode, useCallback, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { Finding, ItemDetails, ItemRef, RecordingHandle, RecordingSummary } from '../../profiler/query/api.ts';
import { api, ApiCallError } from './api.ts';
import { Timeline, type View } from './timeline.tsx';
import { Stats } from './stats.tsx';
import { formatNs } from './format.ts';
import { KIND_COLORS } from './colors.ts';

interface HashState { rec?: string; start?: number; end?: number; sel?: string }

function readHash(): HashState {
  const p = new URLSearchParams(location.hash.slice(1));
  const num = (k: string) => (p.has(k) ? Number(p.get(k)) : undefined);
  return { rec: p.get('rec') ?? undefined, start: num('start'), end: num('end'), sel: p.get('sel') ?? undefined };
}

function writeHash(s: HashState): void {
  const p = new URLSearchParams();
  if (s.rec) p.set('rec', s.rec);
  if (s.start !== undefined) p.set('start', String(Math.round(s.start)));
  if (s.end !== undefined) p.set('end', String(Math.round(s.end)));
  if (s.sel) p.set('sel', s.sel);
  history.replaceState(null, '', `${location.pathname}${location.search}#${p}`);
}

const refKey = (r: ItemRef) => `${r.table}:${r.id}`;
const parseRef = (s: string | undefined): ItemRef | null => {
  const m = /^(\w+):(\d+)$/.exec(s ?? '');
  return m ? ({ table: m[1] as ItemRef['table'], id: Number(m[2]) }) : null;
};

function App() {
  const [recordings, setRecordings] = useState<RecordingHandle[]>([]);
  const [summary, setSummary] = useState<RecordingSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [view, setView] = useState<View | null>(null);
  const [selected, setSelected] = useState<ItemRef | null>(null);
  const [details, setDetails] = useState<ItemDetails | null>(null);
  const [findings, setFindings] = useState<Finding[]>([]);
  const [search, setSearch] = useState('');
  const [matches, setMatches] = useState<Set<string>>(new Set());
  const [tab, setTab] = useState<'timeline' | 'stats'>('timeline');

  useEffect(() => {
    api.listRecordings().then((list) => {
      setRecordings(list);
      const wanted = readHash().rec;
      const first = list.find((r) => r.recordingId === wanted) ?? list[0];
      if (!first) setError('No recording is open: the files given could not be opened (see the terminal), or none were given.');
      else openRecording(first.recordingId, true);
    }).catch((e: Error) => setError(e.message));
  }, []);

  const openRecording = useCallback((id: string, fromHash = false) => {
    setError(null);
    setDetails(null);
    setSelected(null);
    api.summary(id).then((s) => {
      const openErrors = (s as RecordingSummary & { openErrors?: { message: string }[] }).openErrors ?? [];
      if (openErrors.length) setError(openErrors.map((e) => e.message).join('\n'));
      setSummary(s);
      const h = readHash();
      const start = fromHash && h.start !== undefined ? h.start : s.startNs;
      const end = fromHash && h.end !== undefined ? h.end : s.endNs;
      setView({ start, end });
      if (fromHash && h.sel) setSelected(parseRef(h.sel));
      setFindings([]);
    }).catch((e: Error) => setError(e instanceof ApiCallError ? e.message : String(e)));
  }, []);

  useEffect(() => {
    if (summary && view) writeHash({ rec: summary.recordingId, start: view.start, end: view.end, sel: selected ? refKey(selected) : undefined });
  }, [summary, view, selected]);

  useEffect(() => {
    if (!summary || !selected) {
      setDetails(null);
      return;
    }
    api.details(summary.recordingId, selected).then(setDetails).catch((e: Error) => setError(e.message));
  }, [summary, selected]);

  useEffect(() => {
    if (!summary || search.trim() === '') {
      setMatches(new Set());
      return;
    }
    const t = setTimeout(() => {
      api.search(summary.recordingId, { text: search.trim(), limit: 1000 }).then((r) => {
        setMatches(new Set(r.items.map((i) => refKey(i.ref))));
        const first = r.items[0];
        if (first) {
          const pad = Math.max(first.endNs - first.startNs, 1000) * 20;
          setView({ start: first.startNs - pad, end: first.endNs + pad });
          setSelected(first.ref);
        }
      }).catch((e: Error) => setError(e.message));
    }, 250);
    return () => clearTimeout(t);
  }, [summary, search]);

  const zoomTo = useCallback((start: number, end: number) => {
    const pad = Math.max(end - start, 1000) * 0.1;
    setView({ start: start - pad, end: end + pad });
  }, []);

  const related = useMemo(() => details?.related ?? [], [details]);

  return (
    <div className="app">
      <header>
        <strong>StreamScope</strong>
        <select data-testid="recording-select" value={summary?.recordingId ?? ''} onChange={(e) => openRecording(e.target.value)}>
          {recordings.map((r) => <option key={r.recordingId} value={r.recordingId}>{r.name}</option>)}
        </select>
 <span className="tabs">
          <button className={tab === 'timeline' ? 'on' : ''} data-testid="tab-timeline" onClick={() => setTab('timeline')}>Timeline</button>
          <button className={tab === 'stats' ? 'on' : ''} data-testid="tab-stats" onClick={() => setTab('stats')}>Stats</button>
        </span>
        <input data-testid="search" placeholder="search kernels" value={search} onChange={(e) => setSearch(e.target.value)} />
        {summary && <span className="meta">{summary.meta.command ?? ''}</span>}
        <Legend />
      </header>
      {error && <div className="error" data-testid="error-banner" role="alert">{error}</div>}
      <main>
        {summary && tab === 'stats' && <Stats summary={summary} />}
        {summary && view && tab === 'timeline' && (
          <Timeline onFirstData={() => api.findings(summary.recordingId).then(setFindings).catch(() => setFindings([]))} summary={summary} view={view} onView={setView} selected={selected} onSelect={setSelected} related={related} matches={matches} />
        )}
        <aside>
          <section data-testid="details">
            <h2>Details</h2>
            {details ? (
              <>
                <p className="name" title={details.name}>{details.name}</p>
                <table><tbody>
                  {Object.entries(details.fields).map(([k, v]) => (
                    <tr key={k}><th>{k}</th><td data-field={k}>{v === null ? '—' : String(v)}</td></tr>
                  ))}
                </tbody></table>
                {related.length > 0 && <h3>{details.ref.table === 'api_calls' ? 'GPU work it launched' : 'Launched by'}</h3>}
                {related.map((r) => (
                  <button key={refKey(r.ref)} className="link" data-testid="related" onClick={() => { setSelected(r.ref); zoomTo(Math.min(r.startNs, details.startNs), Math.max(r.endNs, details.endNs)); }}>
                    {r.name} ({formatNs(r.endNs - r.startNs)})
                  </button>
                ))}
              </>
            ) : <p className="hint">Click an operation.</p>}
          </section>
          <section data-testid="findings">
            <h2>Findings</h2>
            {findings.length === 0 && <p className="hint">Nothing serialized the streams.</p>}
            {findings.map((f, i) => (
              <button key={i} className={`finding ${f.severity}`} data-testid="finding" onClick={() => { zoomTo(f.evidence.window.start, f.evidence.window.end); setMatches(new Set([...f.evidence.kernels.map((id) => `kernels:${id}`), ...f.evidence.memcpys.map((id) => `memcpys:${id}`), ...f.evidence.apiCalls.map((id) => `api_calls:${id}`)])); }}>
                <span className="sev">{f.severity}</span> <span className="cost">{formatNs(f.costNs)}</span>
                <span className="title">{f.title}</span>
                {f.whatIf && <span className="whatif">what if fixed: {formatNs(f.whatIf.measuredNs)} → {formatNs(f.whatIf.predictedNs)}</span>}
              </button>
            ))}
          </section>
        </aside>
      </main>
    </div>
  );
}


function Legend() {
  return (
    <span className="legend" data-testid="legend">
      {Object.entries(KIND_COLORS).map(([k, c]) => <span key={k}><i className={`swatch k-${k}`} />{k}</span>)}
    </span>
  );
}

createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
