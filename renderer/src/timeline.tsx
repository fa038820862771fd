// The timeline: rows grouped as in Nsight Systems (per process and thread:
// CUDA API and NVTX; per GPU: one row per stream), drawn on one canvas so
// millions of operations cost a bounded number of rectangles: the data is
// fetched per visible window (padded one viewport each side) at the
// current resolution, and sub-pixel work arrives merged into coverage
// spans (profiler/query/recording-query.ts). The ruler is a d3 axis.
// Zoom and pan: wheel (zoom at the cursor), drag, W/S zoom, A/D pan.
import { axisTop } from 'd3-axis';
import { scaleLinear } from 'd3-scale';
import { select } from 'd3-selection';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ConcurrencyResponse, ItemDetails, ItemRef, RecordingSummary, WindowResponse } from '../../profiler/query/api.ts';
import { api } from './api.ts';
import { formatNs, tickFormatter } from './format.ts';
import { KIND_COLORS } from './colors.ts';

export interface View { start: number; end: number }

interface Row { id: string; label: string; group: string }

const ROW_H = 22;
const LABEL_W = 260;

function rowsOf(s: RecordingSummary): Row[] {
  const rows: Row[] = [];
  for (const p of s.processes) {
    for (const t of p.threads) {
      if (t.apiCalls) rows.push({ id: t.apiRowId, label: `CUDA API · thread ${t.tid}`, group: `process ${p.pid}` });
      if (t.nvtxRanges) rows.push({ id: t.nvtxRowId, label: `NVTX · thread ${t.tid}`, group: `process ${p.pid}` });
    }
  }
  for (const d of s.devices) {
    if (s.streams.some((x) => x.deviceId === d.id)) {
      rows.push({ id: `conc:${d.id}`, label: 'in flight: kernels · HtoD · DtoH', group: `GPU ${d.ordinal ?? d.id}: ${d.name ?? ''}` });
    }
    for (const st of s.streams.filter((x) => x.deviceId === d.id)) {
      rows.push({
        id: st.rowId,
        label: `stream ${st.cuptiStreamId} · ${st.kind}${st.priority ? ` · prio ${st.priority}` : ''} · ${(st.shareOfDevice * 100).toFixed(0)}%`,
        group: `GPU ${d.ordinal ?? d.id}: ${d.name ?? ''}`,
      });
    }
  }
  return rows;
}

declare global {
  interface Window {
    __streamscope?: {
      view: () => View;
      itemRect: (table: string, id: number) => { x: number; y: number; w: number; h: number } | null;
      frames: number[];
      /** Frames drawn with window data (the first one is the first complete frame). */
      dataFrames: number;
    };
  }
}

export function Timeline(props: {
  summary: RecordingSummary; view: View; onView: (v: View) => void; selected: ItemRef | null; onSelect: (r: ItemRef | null) => void;
  related: ItemDetails['related']; matches: Set<string>;
  /** Called once the first window of data has arrived (the diagnosis is fetched after it: it must not delay the first frame). */
  onFirstData?: () => void;
}) {
  const { summary, view, onView, selected, onSelect, related, matches, onFirstData } = props;
  const firstData = useRef(false);
  // Another recording: its own first window, its own diagnosis.
  const [shownRecording, setShownRecording] = useState(summary.recordingId);
  if (shownRecording !== summary.recordingId) {
    setShownRecording(summary.recordingId);
    firstData.current = false;
  }
  const rows = useMemo(() => rowsOf(summary), [summary]);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const visibleRows = rows.filter((r) => !hidden.has(r.id));
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const axisRef = useRef<SVGGElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  const [data, setData] = useState<{ res: WindowResponse; resolution: number; recordingId: string } | null>(null);
  const [hover, setHover] = useState<{ x: number; y: number; text: string } | null>(null);
  // Concurrency track: per device, how many kernels and copies per direction
  // were in flight, per pixel-wide bucket of the visible range.
  const [conc, setConc] = useState<Map<number, ConcurrencyResponse>>(new Map());
  useEffect(() => {
    let live = true;
    const t = setTimeout(() => {
      Promise.all(summary.devices.map((d) => api.concurrency(summary.recordingId, { deviceId: d.id, startNs: view.start, endNs: view.end, buckets: Math.floor(width / 2) })))
        .then((list) => { if (live) setConc(new Map(list.map((c) => [c.deviceId, c]))); })
        .catch(() => {});
    }, 60);
    return () => { live = false; clearTimeout(t); };
  }, [view, width, summary]);
  const frames = useRef<number[]>([]);

  useEffect(() => {
    const el = wrapRef.current!;
    const ro = new ResizeObserver(() => setWidth(Math.max(200, el.clientWidth - LABEL_W)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const x = useMemo(() => scaleLinear().domain([view.start, view.end]).range([0, width]), [view, width]);

  // Fetch when the view leaves the padded window or the resolution bucket changes.
  useEffect(() => {
    const span = view.end - view.start;
    const resolution = 2 ** Math.floor(Math.log2(Math.max(1, span / width)));
    if (data && data.recordingId === summary.recordingId && data.resolution === resolution && data.res.startNs <= view.start && data.res.endNs >= view.end) return;
    const req = { rows: rows.filter((r) => !r.id.startsWith('conc:')).map((r) => r.id), startNs: view.start - span, endNs: view.end + span, resolutionNs: resolution };
    let live = true;
    api.window(summary.recordingId, req).then((res) => {
      if (!live) return;
      setData({ res, resolution, recordingId: summary.recordingId });
      if (!firstData.current) {
        firstData.current = true;
        onFirstData?.();
      }
    });
    return () => { live = false; };
  }, [view, width, rows, summary, data, onFirstData]);

  const rowIndex = useMemo(() => new Map(visibleRows.map((r, i) => [r.id, i])), [visibleRows]);

  const rects = useRef<{ ref: ItemRef; x: number; y: number; w: number; row: string; name: string; dur: number }[]>([]);

  // Draw.
  useEffect(() => {
    const t0 = performance.now();
    const canvas = canvasRef.current!;
    const dpr = window.devicePixelRatio || 1;
    const h = visibleRows.length * ROW_H;
    canvas.width = width * dpr;
    canvas.height = h * dpr;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${h}px`;
    const g = canvas.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, h);
    visibleRows.forEach((_, i) => { g.fillStyle = i % 2 ? '#fafafa' : '#f2f2f2'; g.fillRect(0, i * ROW_H, width, ROW_H); });
    rects.current = [];
    for (const [deviceId, c] of conc) {
      const ri = rowIndex.get(`conc:${deviceId}`);
      if (ri === undefined || c.startNs !== view.start || c.endNs !== view.end) continue;
      const y0 = ri * ROW_H;
      const peak = Math.max(1, ...c.kernels, ...c.h2d, ...c.d2h);
      const bw = width / c.kernels.length;
      const series: [number[], string, number][] = [[c.kernels, KIND_COLORS.kernel!, 0], [c.h2d, KIND_COLORS['memcpy-h2d']!, 1], [c.d2h, KIND_COLORS['memcpy-d2h']!, 2]];
      for (const [values, color, lane] of series) {
        g.fillStyle = color;
        const laneH = (ROW_H - 4) / 3;
        for (let b = 0; b < values.length; b++) {
          if (!values[b]) continue;
          const h = Math.max(1, (values[b]! / peak) * laneH);
          g.fillRect(b * bw, y0 + 2 + lane * laneH + (laneH - h), Math.max(1, bw), h);
        }
      }
    }
    if (data) {
      for (const row of data.res.rows) {
        const ri = rowIndex.get(row.rowId);
        if (ri === undefined) continue;
        const y = ri * ROW_H;
        for (const c of row.coverage) {
          const x0 = x(c.startNs);
          const x1 = x(c.endNs);
          if (x1 < 0 || x0 > width) continue;
          g.fillStyle = KIND_COLORS[c.kind] ?? '#999';
          g.globalAlpha = 0.75;
          g.fillRect(x0, y + 3 + (c.depth ?? 0) * 3, Math.max(1, x1 - x0), ROW_H - 6 - (c.depth ?? 0) * 3);
          g.globalAlpha = 1;
        }
        for (const it of row.items) {
          const x0 = x(it.startNs);
          const x1 = x(it.endNs);
          if (x1 < 0 || x0 > width) continue;
          const w = Math.max(1, x1 - x0);
          const key = `${it.ref.table}:${it.ref.id}`;
          const sel = selected && selected.table === it.ref.table && selected.id === it.ref.id;
          g.fillStyle = KIND_COLORS[it.kind] ?? '#999';
          const dy = (it.depth ?? 0) * 3;
          g.fillRect(x0, y + 3 + dy, w, ROW_H - 6 - dy);
          if (sel || matches.has(key)) {
            g.strokeStyle = sel ? '#000' : '#ff00aa';
            g.lineWidth = 2;
            g.strokeRect(x0, y + 2 + dy, w, ROW_H - 4 - dy);
          }
          const name = data.res.strings[it.nameId] ?? '';
          if (w > 40 && name) {
            g.fillStyle = '#fff';
            g.font = '11px sans-serif';
            g.save();
            g.beginPath();
            g.rect(x0, y, w, ROW_H);
            g.clip();
            g.fillText(name, x0 + 3, y + 15);
            g.restore();
          }
          rects.current.push({ ref: it.ref, x: x0, y, w, row: row.rowId, name: name || it.kind, dur: it.endNs - it.startNs });
        }
      }
      // Arrow: the selected item and its launch (either direction).
      const sel = selected && rects.current.find((r) => r.ref.table === selected.table && r.ref.id === selected.id);
      for (const rel of related) {
        const other = rects.current.find((r) => r.ref.table === rel.ref.table && r.ref.id === rel.ref.id);
        if (!sel || !other) continue;
        const [from, to] = selected!.table === 'api_calls' ? [sel, other] : [other, sel];
        g.strokeStyle = '#222';
        g.lineWidth = 1.5;
        g.beginPath();
        g.moveTo(from.x, from.y + ROW_H / 2);
        g.lineTo(to.x, to.y + ROW_H / 2);
        g.stroke();
        g.beginPath();
        g.arc(to.x, to.y + ROW_H / 2, 3, 0, Math.PI * 2);
        g.fillStyle = '#222';
        g.fill();
      }
    }
    const tickCount = Math.max(2, Math.floor(width / 110));
    const ticks = x.ticks(tickCount);
    const label = tickFormatter(ticks.length > 1 ? ticks[1]! - ticks[0]! : view.end - view.start);
    select(axisRef.current!).call(axisTop(x).ticks(tickCount).tickFormat((v) => label(Number(v) - summary.startNs)));
    frames.current.push(performance.now() - t0);
    if (data && window.__streamscope) window.__streamscope.dataFrames++;
    if (frames.current.length > 500) frames.current.shift();
  }, [data, x, width, visibleRows, rowIndex, selected, related, matches, summary, view, conc]);

  // Test and benchmark hooks for what the canvas hides.
  useEffect(() => {
    window.__streamscope = {
      view: () => view,
      itemRect: (table, id) => {
        const r = rects.current.find((q) => q.ref.table === table && q.ref.id === id);
        const c = canvasRef.current?.getBoundingClientRect();
        return r && c ? { x: c.left + r.x, y: c.top + r.y, w: r.w, h: ROW_H } : null;
      },
      frames: frames.current,
      dataFrames: window.__streamscope?.dataFrames ?? 0,
    };
  }, [view]);

  const zoom = useCallback((factor: number, atPx: number) => {
    const t = x.invert(atPx);
    const span = (view.end - view.start) * factor;
    const frac = atPx / width;
    onView({ start: t - span * frac, end: t + span * (1 - frac) });
  }, [x, view, width, onView]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).tagName === 'INPUT') return;
      const span = view.end - view.start;
      if (e.key === 'w') zoom(0.8, width / 2);
      else if (e.key === 's') zoom(1.25, width / 2);
      else if (e.key === 'a') onView({ start: view.start - span * 0.2, end: view.end - span * 0.2 });
      else if (e.key === 'd') onView({ start: view.start + span * 0.2, end: view.end + span * 0.2 });
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [view, width, zoom, onView]);

  // Drag pans; shift-drag selects a time range and zooms to it.
  const drag = useRef<{ x: number; view: View; moved: boolean; range: boolean } | null>(null);
  const [band, setBand] = useState<[number, number] | null>(null);
  const hit = (px: number, py: number) => rects.current.find((r) => px >= r.x - 1 && px <= r.x + r.w + 1 && py >= r.y && py < r.y + ROW_H);

  return (
    <div className="timeline" ref={wrapRef}>
      <div className="ruler-row">
        <div className="corner" style={{ width: LABEL_W }}>
          <button onClick={() => onView({ start: summary.startNs, end: summary.endNs })} data-testid="zoom-all">whole recording</button>
        </div>
        <svg width={width} height={24} data-testid="ruler"><g ref={axisRef} transform="translate(0,22)" /></svg>
      </div>
      <div className="ruler-row">
        <div className="corner" style={{ width: LABEL_W }}>overview</div>
        <Overview summary={summary} view={view} onView={onView} width={width} />
      </div>
      <div className="rows">
        <div className="labels" style={{ width: LABEL_W }}>
          {visibleRows.map((r, i) => (
            <div key={r.id} className="label" data-testid={`row-${r.id}`} style={{ height: ROW_H }} title={r.label}>
              {(i === 0 || visibleRows[i - 1]!.group !== r.group) && <span className="group" title={r.group}>{r.group.split(':')[0]} ▸ </span>}
              <button className="hide" title="hide row" onClick={() => setHidden((h) => new Set(h).add(r.id))}>−</button>
              {r.label}
            </div>
          ))}
          {hidden.size > 0 && (
            <div className="hidden-rows">
              hidden: {[...hidden].map((id) => <button key={id} onClick={() => setHidden((h) => { const n = new Set(h); n.delete(id); return n; })}>{id} +</button>)}
            </div>
          )}
        </div>
        <canvas
          ref={canvasRef}
          data-testid="timeline-canvas"
          onWheel={(e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8, e.nativeEvent.offsetX); }}
          onMouseDown={(e) => { drag.current = { x: e.clientX, view, moved: false, range: e.shiftKey }; }}
          onMouseMove={(e) => {
            const d = drag.current;
            if (d && (e.buttons & 1)) {
              const dx = e.clientX - d.x;
              if (Math.abs(dx) > 2) d.moved = true;
              if (d.range) {
                const x0 = d.x - (e.clientX - e.nativeEvent.offsetX);
                setBand([Math.min(x0, e.nativeEvent.offsetX), Math.max(x0, e.nativeEvent.offsetX)]);
                return;
              }
              const dt = (dx / width) * (d.view.end - d.view.start);
              onView({ start: d.view.start - dt, end: d.view.end - dt });
              return;
            }
            const r = hit(e.nativeEvent.offsetX, e.nativeEvent.offsetY);
            setHover(r ? { x: e.clientX + 12, y: e.clientY + 12, text: `${r.name} · ${formatNs(r.dur)}` } : null);
          }}
          onMouseUp={(e) => {
            const d = drag.current;
            drag.current = null;
            if (d?.range && band && band[1] - band[0] > 3) {
              onView({ start: x.invert(band[0]), end: x.invert(band[1]) });
              setBand(null);
              return;
            }
            setBand(null);
            if (d?.moved) return;
            const r = hit(e.nativeEvent.offsetX, e.nativeEvent.offsetY);
            onSelect(r ? r.ref : null);
          }}
          onMouseLeave={() => setHover(null)}
        />
      </div>
      {band && <div className="band" data-testid="selection-band" style={{ left: LABEL_W + band[0], width: band[1] - band[0] }} />}
      {hover && <div className="tooltip" data-testid="tooltip" style={{ left: hover.x, top: hover.y }}>{hover.text}</div>}
    </div>
  );
}

/**
 * Overview of the whole recording (one strip per device: where any stream
 * was busy) with the visible range marked; click or drag on it to move there.
 */
export function Overview(props: { summary: RecordingSummary; view: View; onView: (v: View) => void; width: number }) {
  const { summary, view, onView, width } = props;
  const ref = useRef<HTMLCanvasElement>(null);
  const [cover, setCover] = useState<WindowResponse | null>(null);
  const devices = summary.devices.filter((d) => summary.streams.some((s) => s.deviceId === d.id));
  const H = 8 * Math.max(1, devices.length) + 6;
  useEffect(() => {
    const span = summary.endNs - summary.startNs;
    api.window(summary.recordingId, { rows: summary.streams.map((s) => s.rowId), startNs: summary.startNs, endNs: summary.endNs, resolutionNs: Math.max(1, span / width) })
      .then(setCover).catch(() => {});
  }, [summary, width]);
  useEffect(() => {
    const c = ref.current!;
    const dpr = window.devicePixelRatio || 1;
    c.width = width * dpr;
    c.height = H * dpr;
    c.style.width = `${width}px`;
    c.style.height = `${H}px`;
    const g = c.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#eee';
    g.fillRect(0, 0, width, H);
    const x = scaleLinear().domain([summary.startNs, summary.endNs]).range([0, width]);
    if (cover) {
      for (const row of cover.rows) {
        const st = summary.streams.find((s) => s.rowId === row.rowId);
        const di = devices.findIndex((d) => d.id === st?.deviceId);
        if (di < 0) continue;
        g.fillStyle = '#4e79a7';
        for (const c2 of [...row.coverage, ...row.items]) {
          const a = x(c2.startNs);
          g.fillRect(a, 3 + di * 8, Math.max(1, x(c2.endNs) - a), 6);
        }
      }
    }
    g.strokeStyle = '#d00';
    g.lineWidth = 1.5;
    const a = x(view.start);
    g.strokeRect(a, 1, Math.max(2, x(view.end) - a), H - 2);
  }, [cover, view, width, summary, devices, H]);
  const move = (px: number) => {
    const x = scaleLinear().domain([0, width]).range([summary.startNs, summary.endNs]);
    const half = (view.end - view.start) / 2;
    const t = x(px);
    onView({ start: t - half, end: t + half });
  };
  return (
    <canvas ref={ref} data-testid="overview" className="overview" onMouseDown={(e) => move(e.nativeEvent.offsetX)}
      onMouseMove={(e) => { if (e.buttons & 1) move(e.nativeEvent.offsetX); }} />
  );
}
