// The row model of the timeline, grouped as Nsight Systems groups it: per
// GPU, a concurrency track and one row per stream; per process, each
// thread's CUDA API row and NVTX row (and, first, the iterations row of the
// repeating NVTX range, when there is one). The GPUs come first: the
// question the timeline answers is whether the streams overlapped.
//
// A distributed job (processes with ranks, or of several hosts: a merged
// job, issue 13) nests the same groups host → rank (its process) → GPU →
// streams (and, after its GPUs, a rank's CPU threads), each level
// foldable; a folded rank shows one row instead, its GPU busy over time
// (from the zones: cheap whatever the rank holds), so a job of 64 ranks × 8
// streams opens on 64 rows (defaultFolded). A recording of one host without
// ranks keeps the flat grouping.
//
// Pure functions of the summary (and the iterations track): layout() turns
// the groups into y positions, given folded groups, hidden rows and the
// NVTX nesting depth seen so far.
import type { DeviceInfo, ProcessInfo, RecordingSummary, StreamInfo, ThreadInfo } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { deviceTitle, gpuNumber } from '../base/gpus.ts';
import { iterationsDetail, type IterationLane, type IterationTrack } from './iterations.ts';

/** busy: a folded rank's GPU busy (from the zones: overview() over the window). */
export type RowKind = 'api' | 'nvtx' | 'stream' | 'conc' | 'iter' | 'busy';

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
  /** The concurrency track's device. */
  deviceId?: number;
  /** A busy row's devices: the GPUs the rank's streams ran on. */
  deviceIds?: number[];
}

export interface TrackGroup {
  id: string;
  /** host and rank levels exist only for a distributed job, and so do threads: a rank's CUDA API and NVTX rows, after its GPUs. */
  kind: 'host' | 'process' | 'device' | 'threads';
  title: string;
  subtitle: string;
  rows: TrackRow[];
  /** Nesting level: 0 at the top; in a job, ranks 1 (in their host) and their GPUs 2. */
  depth: number;
  /** The groups this one is nested in, outermost first: folding any of them hides it. */
  ancestors: string[];
  /** Shown in place of everything inside the group while it is folded: a rank's GPU busy. */
  foldedRows: TrackRow[];
  /** What a folded header says it holds: "12 rows", "4 ranks". */
  contents: string;
}

export const ROW_H = 22;
export const GROUP_H = 22;
export const CONC_H = 40;
/** Height of one NVTX nesting level. */
export const NVTX_LANE_H = 16;
/** A job with more ranks than this opens with its ranks folded (defaultFolded). */
export const FOLD_RANKS_ABOVE = 8;
/** A process with more CUDA API and NVTX rows than this opens folded (defaultFolded). */
export const FOLD_THREAD_ROWS_ABOVE = 8;

// "2 processes", not "2 processs": a noun ending in s, x, ch or sh takes -es.
const plural = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : /(s|x|ch|sh)$/.test(what) ? 'es' : 's'}`;

/**
 * Whether the recording is (part of) a distributed job, grouped host → rank:
 * a process has a rank, or the processes ran on several hosts.
 */
export function isJob(s: RecordingSummary): boolean {
  return s.processes.some((p) => p.rank !== null) || new Set(s.processes.map((p) => p.host ?? '')).size > 1;
}

function iterationsRow(t: IterationTrack, lane: IterationLane, groupId: string): TrackRow {
  return { id: lane.rowId, kind: 'iter', groupId, label: 'Iterations', detail: iterationsDetail(t, lane) };
}

/** A process's rows of its own: the iterations row (when it launched them), each thread's CUDA API and NVTX rows. */
function processRows(threads: readonly ThreadInfo[], pid: number, groupId: string, iterations: IterationTrack | null): TrackRow[] {
  const rows: TrackRow[] = [];
  const lane = iterations?.lanes.find((l) => l.pid === pid);
  if (lane) rows.push(iterationsRow(iterations!, lane, groupId));
  for (const t of threads) {
    const thread = `thread ${t.tid}${t.name ? ` (${t.name})` : ''}`;
    if (t.apiCalls) rows.push({ id: t.apiRowId, kind: 'api', groupId, label: 'CUDA API', detail: `${thread} · ${t.apiCalls.toLocaleString('en-US')} calls` });
    if (t.nvtxRanges)
      rows.push({ id: t.nvtxRowId, kind: 'nvtx', groupId, label: 'NVTX', detail: `${thread} · ${t.nvtxRanges.toLocaleString('en-US')} ranges` });
  }
  return rows;
}

/** A device's rows: its concurrency track (where `withTrack`), then its streams in CUPTI id order. */
function deviceRows(streams: readonly StreamInfo[], deviceId: number | null, groupId: string, withTrack: boolean): TrackRow[] {
  const rows: TrackRow[] = [];
  if (deviceId !== null && withTrack)
    rows.push({ id: `conc:${deviceId}`, kind: 'conc', groupId, label: 'In flight', detail: 'kernels · HtoD · DtoH', deviceId });
  for (const st of [...streams].sort((a, b) => a.cuptiStreamId - b.cuptiStreamId)) {
    rows.push({
      id: st.rowId,
      kind: 'stream',
      groupId,
      label: `Stream ${st.cuptiStreamId}`,
      detail: `${st.kind}${st.priority === null ? '' : ` · prio ${st.priority}`}`,
      share: st.shareOfDevice,
      stream: st,
    });
  }
  return rows;
}

function deviceSubtitle(d: DeviceInfo): string {
  return [d.smCount ? `${d.smCount} SMs` : '', d.asyncEngineCount !== null ? `${d.asyncEngineCount} copy engines` : ''].filter(Boolean).join(' · ');
}

function commandName(p: ProcessInfo): string {
  return (p.command ?? '').split(' ')[0]!.split('/').pop() ?? '';
}

function group(g: Omit<TrackGroup, 'contents' | 'foldedRows' | 'depth' | 'ancestors'> & Partial<TrackGroup>): TrackGroup {
  return { depth: 0, ancestors: [], foldedRows: [], contents: '', ...g };
}

export function buildGroups(s: RecordingSummary, iterations: IterationTrack | null = null): TrackGroup[] {
  const groups = isJob(s) ? jobGroups(s, iterations) : flatGroups(s, iterations);
  // A process without rows of its own (nothing the summary lists): a group for its iterations alone, on top.
  const placed = new Set(groups.flatMap((g) => g.rows.filter((r) => r.kind === 'iter').map((r) => r.id)));
  for (const lane of [...(iterations?.lanes ?? [])].reverse()) {
    if (placed.has(lane.rowId)) continue;
    const id = `proc:${lane.pid}`;
    groups.unshift(group({ id, kind: 'process', title: `Process ${lane.pid}`, subtitle: '', rows: [iterationsRow(iterations!, lane, id)] }));
  }
  // What a folded header says it holds, where its builder said nothing: its rows and those of the groups nested in it.
  for (const g of groups) {
    if (!g.contents) g.contents = plural(g.rows.length + groups.reduce((n, x) => n + (x.ancestors.includes(g.id) ? x.rows.length : 0), 0), 'row');
  }
  return groups;
}

/**
 * One host, no ranks: a group per GPU (its streams of every process) first —
 * what the timeline is opened to see — then streams without a device, then
 * a group per process (its threads' CUDA API and NVTX rows).
 */
function flatGroups(s: RecordingSummary, iterations: IterationTrack | null): TrackGroup[] {
  const groups: TrackGroup[] = [];
  for (const d of s.devices) {
    const streams = s.streams.filter((st) => st.deviceId === d.id);
    if (streams.length)
      groups.push(
        group({ id: `gpu:${d.id}`, kind: 'device', title: deviceTitle(d), subtitle: deviceSubtitle(d), rows: deviceRows(streams, d.id, `gpu:${d.id}`, true) }),
      );
  }
  const orphans = s.streams.filter((st) => st.deviceId === null);
  if (orphans.length)
    groups.push(group({ id: 'gpu:none', kind: 'device', title: 'Streams without a device', subtitle: '', rows: deviceRows(orphans, null, 'gpu:none', false) }));
  for (const p of s.processes) {
    const id = `proc:${p.pid}`;
    const rows = processRows(p.threads, p.pid, id, iterations);
    if (rows.length)
      groups.push(group({ id, kind: 'process', title: `Process ${p.pid}`, subtitle: `${commandName(p)}${p.complete ? '' : ' · incomplete'}`, rows }));
  }
  return groups;
}

/** "rank 3 · node-a · pid 4242": the rank as its launcher gave it, the host, the pid it had there. */
function processTitle(p: ProcessInfo): string {
  const pid = p.originalPid ?? p.pid;
  if (p.rank === null) return `Process ${pid}`;
  return `rank ${p.rank}${p.host ? ` · ${p.host}` : ''} · pid ${pid}`;
}

/** A distributed job: host → rank (process) → GPU → streams. */
function jobGroups(s: RecordingSummary, iterations: IterationTrack | null): TrackGroup[] {
  const processes = new Map(s.processes.map((p) => [p.pid, p]));
  // Streams of a process the summary does not list (an imported trace) still get a group.
  for (const st of s.streams) {
    if (!processes.has(st.pid))
      processes.set(st.pid, {
        pid: st.pid,
        command: null,
        host: null,
        complete: true,
        threads: [],
        rank: null,
        localRank: null,
        worldSize: null,
        rankVariable: null,
        sourceId: null,
        originalPid: null,
      });
  }
  const streamsOf = new Map<number, StreamInfo[]>();
  for (const st of s.streams) streamsOf.set(st.pid, [...(streamsOf.get(st.pid) ?? []), st]);
  const shown = [...processes.values()].filter(
    (p) => p.threads.some((t) => t.apiCalls || t.nvtxRanges) || streamsOf.has(p.pid) || iterations?.lanes.some((l) => l.pid === p.pid),
  );
  const rankOrder = (p: ProcessInfo) => p.rank ?? Number.POSITIVE_INFINITY;
  // Without ranks, by host name as people number nodes (node-2 before node-10), then pid:
  // a merge renumbers pids in no order of the hosts'.
  const hostName = new Intl.Collator(undefined, { numeric: true });
  shown.sort((a, b) => rankOrder(a) - rankOrder(b) || hostName.compare(a.host ?? '', b.host ?? '') || a.pid - b.pid);
  // Hosts in the order of their first rank.
  const hosts = new Map<string, ProcessInfo[]>();
  for (const p of shown) hosts.set(p.host ?? '', [...(hosts.get(p.host ?? '') ?? []), p]);

  const devices = new Map(s.devices.map((d) => [d.id, d]));
  // GPUs by their CUDA ordinal, as they are named (base/gpus.ts); streams without a device last.
  const gpuOrder = (id: number | null) => {
    const d = id === null ? undefined : devices.get(id);
    return id === null ? Number.POSITIVE_INFINITY : d ? gpuNumber(d) : id;
  };
  const span = Math.max(1, s.endNs - s.startNs);
  // A GPU two processes share has one concurrency track, under the first.
  const tracked = new Set<number>();
  const groups: TrackGroup[] = [];
  for (const [host, procs] of hosts) {
    const hostId = `host:${host}`;
    const ranks = procs.filter((p) => p.rank !== null).length;
    const held = [ranks ? plural(ranks, 'rank') : '', procs.length > ranks ? plural(procs.length - ranks, ranks ? 'other process' : 'process') : ''];
    const contents = held.filter(Boolean).join(' · ');
    groups.push(group({ id: hostId, kind: 'host', title: host ? `host ${host}` : 'host unknown', subtitle: contents, rows: [], contents }));
    for (const p of procs) {
      const id = `proc:${p.pid}`;
      const streams = streamsOf.get(p.pid) ?? [];
      const deviceIds = [...new Set(streams.map((st) => st.deviceId))].sort((a, b) => gpuOrder(a) - gpuOrder(b));
      const gpus = deviceIds.filter((d): d is number => d !== null);
      const gpuNames = gpus.map((d) => `GPU ${gpuOrder(d)}`);
      const work = streams.reduce((n, st) => n + st.busyNs, 0);
      const foldedRows: TrackRow[] = gpus.length
        ? [
            {
              id: `busy:${p.pid}`,
              kind: 'busy',
              groupId: id,
              label: 'GPU busy',
              detail: `${gpuNames.join(', ')} · ${formatDuration(work)} of work, ${Math.round((100 * work) / span / gpus.length)}% of the span`,
              deviceIds: gpus,
            },
          ]
        : [];
      const subtitle = [
        p.localRank !== null ? `local rank ${p.localRank}` : '',
        p.rank !== null && p.worldSize !== null ? `world size ${p.worldSize}` : '',
        gpuNames.join(', '),
        commandName(p),
        // Renumbered by merge (another recording had its pid): the title keeps the pid it had on its host.
        p.originalPid !== null ? `pid ${p.pid} in the merged job` : '',
        p.complete ? '' : 'incomplete',
      ].filter(Boolean);
      groups.push(
        group({
          id,
          kind: 'process',
          title: processTitle(p),
          subtitle: subtitle.join(' · '),
          // The iterations row heads the rank; its threads' rows follow its GPUs (below).
          rows: (iterations?.lanes ?? []).filter((l) => l.pid === p.pid).map((l) => iterationsRow(iterations!, l, id)),
          depth: 1,
          ancestors: [hostId],
          foldedRows,
        }),
      );
      for (const d of deviceIds) {
        const gid = `gpu:${p.pid}:${d ?? 'none'}`;
        const info = d === null ? undefined : devices.get(d);
        const withTrack = d !== null && !tracked.has(d);
        if (d !== null) tracked.add(d);
        groups.push(
          group({
            id: gid,
            kind: 'device',
            title: d === null ? 'Streams without a device' : info ? deviceTitle(info) : `GPU ${d}`,
            subtitle: info ? deviceSubtitle(info) : '',
            rows: deviceRows(
              streams.filter((st) => st.deviceId === d),
              d,
              gid,
              withTrack,
            ),
            depth: 2,
            ancestors: [hostId, id],
          }),
        );
      }
      // The rank's threads after its GPUs, so that a job opens on its GPU work (folded: defaultFolded).
      const threadRows = processRows(p.threads, p.pid, `threads:${p.pid}`, null);
      if (threadRows.length) {
        const threads = new Set(p.threads.filter((t) => t.apiCalls || t.nvtxRanges).map((t) => t.tid)).size;
        groups.push(
          group({
            id: `threads:${p.pid}`,
            kind: 'threads',
            title: 'CPU threads',
            subtitle: `${plural(threads, 'thread')} · CUDA API and NVTX`,
            rows: threadRows,
            depth: 2,
            ancestors: [hostId, id],
          }),
        );
      }
    }
  }
  return groups;
}

/**
 * The groups folded when a recording is first shown, so that its first frame
 * shows the GPU work: a job's ranks when it has more than FOLD_RANKS_ABOVE
 * (its first frame draws one GPU-busy row per rank, fetched from the zones,
 * instead of every stream of every rank), and a process of more than
 * FOLD_THREAD_ROWS_ABOVE CUDA API and NVTX rows (a program with a thread per
 * stream would otherwise fill the screen with them), and a job's ranks'
 * CPU threads: one click unfolds them.
 */
export function defaultFolded(groups: readonly TrackGroup[]): Set<string> {
  const folded = new Set<string>();
  const ranks = groups.filter((g) => g.kind === 'process' && g.foldedRows.length > 0);
  if (ranks.length > FOLD_RANKS_ABOVE) for (const g of ranks) folded.add(g.id);
  for (const g of groups) {
    if (g.kind === 'process' && g.rows.filter((r) => r.kind === 'api' || r.kind === 'nvtx').length > FOLD_THREAD_ROWS_ABOVE) folded.add(g.id);
    // A job's ranks each have theirs: folded, every rank's GPUs come into the first frame.
    if (g.kind === 'threads') folded.add(g.id);
  }
  return folded;
}

/** The group holding row `rowId` and the groups it is nested in, outermost first: what must unfold to show it. */
export function groupsToUnfold(groups: readonly TrackGroup[], rowId: string): string[] {
  const g = groups.find((x) => x.rows.some((r) => r.id === rowId));
  return g ? [...g.ancestors, g.id] : [];
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
    if (g.ancestors.some((a) => folded.has(a))) continue;
    rows.push({ type: 'group', id: g.id, y, h: GROUP_H, group: g });
    y += GROUP_H;
    for (const r of folded.has(g.id) ? g.foldedRows : g.rows) {
      if (hidden.has(r.id)) continue;
      const h = r.kind === 'conc' ? CONC_H : r.kind === 'nvtx' ? Math.max(1, (nvtxDepth.get(r.id) ?? 0) + 1) * NVTX_LANE_H + 6 : ROW_H;
      rows.push({ type: 'row', id: r.id, y, h, group: g, row: r });
      y += h;
    }
  }
  return { rows, height: y, byId: new Map(rows.map((r) => [r.id, r])) };
}
