// The row model of the timeline, grouped as Nsight Systems groups it: per
// process, each thread's CUDA API row and NVTX row (and, first, the
// iterations row of the repeating NVTX range, when there is one); per GPU, a
// concurrency track and one row per stream. Pure functions of the summary
// (and the iterations track): layout() turns it into y positions, given
// folded groups, hidden rows and the NVTX nesting depth seen so far.
import type { RecordingSummary, StreamInfo } from '../../../profiler/contract/api.ts';
import { deviceTitle } from '../base/gpus.ts';
import { ITERATIONS_ROW, iterationsDetail, type IterationTrack } from './iterations.ts';

export type RowKind = 'api' | 'nvtx' | 'stream' | 'conc' | 'iter';

/** Rows whose items come from api.window (the others are drawn from answers of their own). */
export function windowed(kind: RowKind): boolean {
  return kind === 'api' || kind === 'nvtx' || kind === 'stream';
}

export interface TrackRow {
  id: string;
  kind: RowKind;
  groupId: string;
  label: string;
  /** Second part of the label, dimmer (kind, priority…). */
  detail: string;
  /** Share of the device's busy time, stream rows only (0..1). */
  share?: number;
  stream?: StreamInfo;
  deviceId?: number;
}

export interface TrackGroup {
  id: string;
  title: string;
  subtitle: string;
  rows: TrackRow[];
}

export const ROW_H = 22;
export const GROUP_H = 22;
export const CONC_H = 40;
/** Height of one NVTX nesting level. */
export const NVTX_LANE_H = 16;

export function buildGroups(s: RecordingSummary, iterations: IterationTrack | null = null): TrackGroup[] {
  const groups: TrackGroup[] = [];
  const iterationsRow = (t: IterationTrack, groupId: string): TrackRow => ({
    id: ITERATIONS_ROW,
    kind: 'iter',
    groupId,
    label: 'Iterations',
    detail: iterationsDetail(t),
  });
  for (const p of s.processes) {
    const rows: TrackRow[] = [];
    if (iterations?.pid === p.pid) rows.push(iterationsRow(iterations, `proc:${p.pid}`));
    for (const t of p.threads) {
      const thread = `thread ${t.tid}${t.name ? ` (${t.name})` : ''}`;
      if (t.apiCalls)
        rows.push({
          id: t.apiRowId,
          kind: 'api',
          groupId: `proc:${p.pid}`,
          label: 'CUDA API',
          detail: `${thread} · ${t.apiCalls.toLocaleString('en-US')} calls`,
        });
      if (t.nvtxRanges)
        rows.push({
          id: t.nvtxRowId,
          kind: 'nvtx',
          groupId: `proc:${p.pid}`,
          label: 'NVTX',
          detail: `${thread} · ${t.nvtxRanges.toLocaleString('en-US')} ranges`,
        });
    }
    if (rows.length === 0) continue;
    const cmd = p.command ?? '';
    groups.push({ id: `proc:${p.pid}`, title: `Process ${p.pid}`, subtitle: `${cmd.split('/').pop() ?? ''}${p.complete ? '' : ' · incomplete'}`, rows });
  }
  // A process without rows of its own (nothing the summary lists): a group for the iterations alone, on top.
  if (iterations && !groups.some((g) => g.rows.some((r) => r.kind === 'iter'))) {
    groups.unshift({
      id: `proc:${iterations.pid}`,
      title: `Process ${iterations.pid}`,
      subtitle: '',
      rows: [iterationsRow(iterations, `proc:${iterations.pid}`)],
    });
  }
  const streamsOf = (deviceId: number | null) => s.streams.filter((st) => st.deviceId === deviceId).sort((a, b) => a.cuptiStreamId - b.cuptiStreamId);
  const deviceGroup = (id: string, title: string, subtitle: string, deviceId: number | null) => {
    const streams = streamsOf(deviceId);
    if (streams.length === 0) return;
    const rows: TrackRow[] = [];
    if (deviceId !== null) rows.push({ id: `conc:${deviceId}`, kind: 'conc', groupId: id, label: 'In flight', detail: 'kernels · HtoD · DtoH', deviceId });
    for (const st of streams) {
      const prio = st.priority === null ? '' : ` · prio ${st.priority}`;
      rows.push({
        id: st.rowId,
        kind: 'stream',
        groupId: id,
        label: `Stream ${st.cuptiStreamId}`,
        detail: `${st.kind}${prio}`,
        share: st.shareOfDevice,
        stream: st,
      });
    }
    groups.push({ id, title, subtitle, rows });
  };
  for (const d of s.devices) {
    const extra = [d.smCount ? `${d.smCount} SMs` : '', d.asyncEngineCount !== null ? `${d.asyncEngineCount} copy engines` : ''].filter(Boolean).join(' · ');
    deviceGroup(`gpu:${d.id}`, deviceTitle(d), extra, d.id);
  }
  deviceGroup('gpu:none', 'Streams without a device', '', null);
  return groups;
}

export interface LaidRow {
  type: 'group' | 'row';
  id: string;
  y: number;
  h: number;
  group: TrackGroup;
  row?: TrackRow;
}

export interface Layout {
  rows: LaidRow[];
  height: number;
  byId: Map<string, LaidRow>;
}

export function layout(groups: TrackGroup[], folded: Set<string>, hidden: Set<string>, nvtxDepth: Map<string, number>): Layout {
  const rows: LaidRow[] = [];
  let y = 0;
  for (const g of groups) {
    rows.push({ type: 'group', id: g.id, y, h: GROUP_H, group: g });
    y += GROUP_H;
    if (folded.has(g.id)) continue;
    for (const r of g.rows) {
      if (hidden.has(r.id)) continue;
      const h = r.kind === 'conc' ? CONC_H : r.kind === 'nvtx' ? Math.max(1, (nvtxDepth.get(r.id) ?? 0) + 1) * NVTX_LANE_H + 6 : ROW_H;
      rows.push({ type: 'row', id: r.id, y, h, group: g, row: r });
      y += h;
    }
  }
  return { rows, height: y, byId: new Map(rows.map((r) => [r.id, r])) };
}
