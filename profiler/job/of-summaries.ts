// The analysis of a job from its ranks' summaries (summary.ts): what
// `report` gives of a merged job rank by rank (analysis/diagnosis/job.ts) —
// each rank's communication breakdown, the stragglers, the serialized
// collectives and the straggler rank — without reading a row of any rank.
//
// The summaries are placed as `streamscope merge` places recordings: clocks
// aligned by the collectives' end times (merge/align.ts, each host's
// recordings following it: followHosts), every time moved by its
// recording's shift; pids, devices, streams and row ids planned as the merge
// plans them (merge/plan.ts), so every pid, GPU and row named here is the
// one the merged recording of the same files, in the same order, has. Then
// the parts' results are combined as the rank-by-rank analysis combines a
// merged recording's (crossRankAnswers). For the whole recording the
// answers are that analysis's of the merged file; for the steady state too
// where the summaries were cut where the job's start-up ends (`summarize`
// of the job's files: job-cut.ts); else each rank's starts where its own
// start-up ends (a merged file has one cut for the whole job), which the
// scope's label says. And, where the
// summaries hold them (`summarize --findings`), each rank's own top
// findings, placed and named by rank as in the merged file.
import type { CommunicationPart, ProcessFacts } from '../analysis/communication.ts';
import { closeWindows, steadyStateInfo } from '../analysis/scope.ts';
import type { DeviceRow, StreamRow, TraceTables } from '../analysis/trace.ts';
import { crossRankAnswers, type JobAnalysis, type NcclKernels, type PartResult } from '../analysis/diagnosis/job.ts';
import type { Finding } from '../contract/findings.ts';
import type { RankFindings, SourceAlignment } from '../contract/job.ts';
import { gpusNamedByRank, ranksPhrase, type RankedProcess } from '../contract/ranks.ts';
import { nameItsRank, type RankNaming } from '../analysis/diagnosis/findings/context.ts';
import type { ScopeInfo, Startup } from '../contract/scope.ts';
import type { Ns } from '../contract/time.ts';
import { alignClocks, type InputAlignment } from '../merge/align.ts';
import { followHosts, recordingIdentity } from '../merge/merge.ts';
import { planMerge, type InputPlan } from '../merge/plan.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { formatDuration } from '../contract/time.ts';
import type { RankSummary, SummaryPart } from './summary.ts';

/** A job analysed from summaries: the rank-by-rank analysis's answers, and what the report shows beside them. */
export interface SummaryJob {
  analysis: JobAnalysis;
  /** The job's processes and devices, in its ids (the report's Processes and GPUs). */
  processes: RankedProcess[];
  tables: TraceTables;
  /** Each file's place on the job's clock: as `merge` says it (sources' clock, shift, correction, residual). */
  sources: SourceAlignment[];
  /** Where each file's times and ids land (placeSummaries): what else is placed from the same summaries (the job's iterations: iterations.ts). */
  placement: Placement;
  /** Each file's own top findings, in the job's ids and named by rank (null findings: its summary holds none). */
  rankFindings: RankFindings[];
}

/** A job by its recordings: their fingerprints (summary.ts RankSummary.fingerprint), in one order whatever the files'. */
export const jobOf = (summaries: readonly Pick<RankSummary, 'fingerprint'>[]): string[] => summaries.map((s) => s.fingerprint ?? '').sort();
/** Whether a summary's steady state was cut where the start-up of `job` (jobOf) ended. */
export const cutForJob = ({ jobCut }: Pick<RankSummary, 'jobCut'>, job: readonly string[]): boolean =>
  jobCut !== undefined && jobCut.job.length === job.length && jobCut.job.every((f, i) => f === job[i]);

/** Adds `off` to each id (an evidence list, a column). */
const moved = (ids: readonly number[], off: number) => (off === 0 ? [...ids] : ids.map((id) => id + off));
/** What the plan adds to the ids of `table`'s rows. */
const idOffset = (plan: InputPlan, table: string) => plan.ids.get(table)?.off ?? 0;

/** What placing a recording on the job's clock and ids needs of its summary. */
export type PlacedSummary = Pick<RankSummary, 'file' | 'origin' | 'beforeOriginNs' | 'host' | 'facts' | 'collectives'>;

/** Where each recording lands in the job: its clock's alignment, the shift of its times, its ids (as merge places and plans them). */
export interface Placement {
  alignment: InputAlignment[];
  shifts: Ns[];
  plans: InputPlan[];
}

/**
 * `summaries` placed as merge.ts places recordings, in the order given (the
 * first is the clock's reference): clocks aligned by the collectives' end
 * times (each host's recordings following it), every time moved by its
 * recording's shift, ids planned by merge/plan.ts. The same recording
 * twice is refused by name. Also the timeline's job view
 * (query/job-query.ts), which needs no more of a summary than this.
 */
export function placeSummaries(summaries: readonly PlacedSummary[]): Placement {
  const seen = new Map<string, string>();
  for (const s of summaries) {
    const identity = recordingIdentity(s.host, s.origin, s.facts.pids);
    const other = seen.get(identity);
    if (other !== undefined)
      throw new RecordingFileError(s.file, `holds the same recording as ${other} (same host, origin and processes): each recording is one rank of the job`);
    seen.set(identity, s.file);
  }

  // Clocks, as merge.ts places them.
  const origins = summaries.map((s) => BigInt(s.origin));
  const originMin = origins.reduce((m, o) => (o < m ? o : m), origins[0]!);
  const base = origins.map((o, i) => {
    const b = o - originMin;
    if (b > BigInt(Number.MAX_SAFE_INTEGER))
      throw new RecordingFileError(summaries[i]!.file, 'was recorded more than 104 days apart from the others: give the recordings of one job');
    return Number(b);
  });
  const alignment: InputAlignment[] = alignClocks(summaries.map((s, i) => ({ ranks: s.collectives.map(([, keys]) => new Map(keys)), baseNs: base[i]! })));
  followHosts(
    summaries.map((s) => ({ host: s.host, hasSources: false })),
    alignment,
  );
  const corrected = origins.map((o, i) => o + BigInt(alignment[i]!.correctionNs));
  // The job's origin is its own start, as merge.ts places it: the earliest first recorded time of its recordings.
  const starts = corrected.map((o, i) => o + BigInt(summaries[i]!.beforeOriginNs ?? 0));
  const originOut = starts.reduce((m, o) => (o < m ? o : m), starts[0]!);
  const shifts = corrected.map((o) => Number(o - originOut));

  // Ids, as merge/plan.ts plans them.
  return { alignment, shifts, plans: planMerge(summaries.map((s) => s.facts)) };
}

/** The job's analysis from `summaries`, one per rank's recording, all of one scope, in the order given (the first is the clock's reference). */
export function analyzeJobOfSummaries(summaries: readonly RankSummary[]): SummaryJob {
  const t0 = performance.now();
  if (summaries.length === 0) throw new Error('a job needs the summary of at least one recording');
  const scope = summaries[0]!.scope;
  for (const s of summaries) {
    if (s.scope !== scope) throw new Error(`summaries of one scope are combined: ${s.file} is of '${s.scope}', ${summaries[0]!.file} of '${scope}'`);
  }
  const placement = placeSummaries(summaries);
  const { alignment, shifts, plans } = placement;
  const tables = jobTables(summaries, plans);
  const processes = new Map<number, ProcessFacts>();
  const ranked: RankedProcess[] = [];
  summaries.forEach((s, i) => {
    const pid = (p: number) => plans[i]!.pids.get(p) ?? p;
    for (const p of s.processes) processes.set(pid(p.pid), { ...p, pid: pid(p.pid) });
    for (const p of s.ranked) ranked.push({ ...p, pid: pid(p.pid) });
  });
  ranked.sort((a, b) => a.pid - b.pid);
  const results = summaries.flatMap((s, i) => s.parts.map((p) => placePart(p, plans[i]!, shifts[i]!)));

  // The GPU span and the trace's span, from every part; the scope's windows close on the latter.
  let gs = Infinity;
  let ge = -Infinity;
  let ts = Infinity;
  let te = -Infinity;
  for (const r of results) {
    if (r.extent) [gs, ge] = [Math.min(gs, r.extent.start), Math.max(ge, r.extent.end)];
    if (r.span) [ts, te] = [Math.min(ts, r.span.start), Math.max(te, r.span.end)];
  }
  summaries.forEach((s, i) => {
    if (s.callsSpan) [ts, te] = [Math.min(ts, s.callsSpan.start + shifts[i]!), Math.max(te, s.callsSpan.end + shifts[i]!)];
  });
  const gpuSpan = Number.isFinite(gs) ? { start: gs, end: ge } : { start: 0, end: 0 };
  const info = jobScope(summaries, shifts, Number.isFinite(ts) ? { start: ts, end: te } : { start: 0, end: 0 });
  const { communication, stragglers, findings } = crossRankAnswers(results, processes, tables, gpuSpan);
  const gpuPids = new Set(summaries.flatMap((s, i) => s.streams.map((st) => plans[i]!.pids.get(st.pid) ?? st.pid)));
  const combineMs = performance.now() - t0;
  return {
    analysis: {
      scope: info,
      ranks: gpuPids.size,
      parts: results.length,
      merged: false,
      gpuSpan,
      communication,
      stragglers,
      findings,
      partsWithCalls: results.filter((r) => r.withCalls).length,
      timings: { plan: 0, scope: 0, parts: 0, load: 0, analyse: summaries.reduce((s, x) => s + x.ms, 0), combine: combineMs },
      scopeRowsRead: { ops: 0, calls: 0 },
      workers: 0,
    },
    processes: ranked,
    tables,
    sources: summaries.map((s, i) => ({ ...alignment[i]!, file: s.file, host: s.host, shiftNs: shifts[i]! })),
    placement,
    rankFindings: rankFindingsOf(summaries, placement, tables, processes),
  };
}

/** The job's devices (one per GPU uuid), streams, strings and meta (the first recording's), in the job's ids. */
function jobTables(summaries: readonly RankSummary[], plans: InputPlan[]): TraceTables {
  const devices = new Map<number, DeviceRow>();
  const streams: StreamRow[] = [];
  const strings = new Map<number, string>();
  const demangled = new Map<number, string>();
  summaries.forEach((s, i) => {
    const plan = plans[i]!;
    for (const d of s.devices) {
      const id = plan.devices.get(d.id) ?? d.id;
      if (!devices.has(id)) devices.set(id, { ...d, id });
    }
    const streamOff = plan.ids.get('streams')?.off ?? 0;
    const contextOff = plan.ids.get('contexts')?.off ?? 0;
    for (const st of s.streams)
      streams.push({
        ...st,
        id: st.id + streamOff,
        pid: plan.pids.get(st.pid) ?? st.pid,
        contextId: st.contextId + contextOff,
        deviceId: st.deviceId === null ? null : (plan.devices.get(st.deviceId) ?? st.deviceId),
      });
    for (const [id, value] of s.facts.strings) strings.set(plan.strings.get(id) ?? id, value);
    for (const [id, value] of s.demangled) demangled.set(plan.strings.get(id) ?? id, value);
  });
  return {
    meta: new Map(Object.entries(summaries[0]!.meta)),
    devices: [...devices.values()].sort((a, b) => a.id - b.id),
    streams: streams.sort((a, b) => a.id - b.id),
    strings,
    demangled,
  };
}

/** A part's result in the job's ids and on its clock. */
function placePart(p: SummaryPart, plan: InputPlan, shift: Ns): Pick<PartResult, 'communication' | 'nccl' | 'serialized' | 'extent' | 'span' | 'withCalls'> {
  const pid = (x: number) => plan.pids.get(x) ?? x;
  const device = (x: number) => plan.devices.get(x) ?? x;
  const name = (x: number) => plan.strings.get(x) ?? x;
  const off = (table: string) => idOffset(plan, table);
  const at = <T extends { start: Ns; end: Ns } | null>(x: T): T => (x ? ({ start: x.start + shift, end: x.end + shift } as T) : x);
  const communication: CommunicationPart = {
    ...p.communication,
    busy: p.communication.busy.map((b) => ({ ...b, pid: pid(b.pid), deviceId: device(b.deviceId) })),
    kernels: p.communication.kernels.map((k) => ({ ...k, nameId: name(k.nameId) })),
  };
  const n = p.nccl.start.length;
  const nccl: NcclKernels = {
    length: n,
    start: Float64Array.from(p.nccl.start, (t) => t + shift),
    end: Float64Array.from(p.nccl.end, (t) => t + shift),
    rowId: Float64Array.from(moved(p.nccl.rowId, off('kernels'))),
    pid: Int32Array.from(p.nccl.pid, pid),
    device: Int32Array.from(p.nccl.device, device),
    stream: Int32Array.from(moved(p.nccl.stream, off('streams'))),
    detail: Int32Array.from(p.nccl.detail, name),
  };
  return {
    communication,
    nccl,
    serialized: p.serialized.map((c) => ({ ...c, finding: placeFinding(c.finding, plan, shift) })),
    extent: at(p.extent),
    span: at(p.span),
    withCalls: p.withCalls,
  };
}

/** A finding of a recording in the job's ids (its process, GPU, evidence rows) and on its clock (the evidence's window). */
function placeFinding(f: Finding, plan: InputPlan, shift: Ns): Finding {
  const off = (table: string) => idOffset(plan, table);
  const w = f.evidence.window;
  return {
    ...f,
    pid: f.pid === null ? null : (plan.pids.get(f.pid) ?? f.pid),
    deviceId: f.deviceId === null ? null : (plan.devices.get(f.deviceId) ?? f.deviceId),
    evidence: {
      kernels: moved(f.evidence.kernels, off('kernels')),
      memcpys: moved(f.evidence.memcpys, off('memcpys')),
      memsets: moved(f.evidence.memsets, off('memsets')),
      apiCalls: moved(f.evidence.apiCalls, off('api_calls')),
      syncs: moved(f.evidence.syncs, off('syncs')),
      window: { start: w.start + shift, end: w.end + shift },
    },
  };
}

/**
 * Each recording's own top findings (its summary's, where built with them),
 * placed in the job's ids and on its clock, each title starting with whose
 * it is as a merged file's does (findings/context.ts nameItsRank, with the
 * job's processes and GPUs). Every kind is named: a rank's own file words a
 * title for one process, and the kinds that name their GPU name it as that
 * file does ("GPU 0", every rank's first) — unless the file itself held
 * several ranks or hosts, whose titles already say whose they are. A finding
 * of neither one process nor one GPU is named by the file's ranks.
 */
function rankFindingsOf(summaries: readonly RankSummary[], placement: Placement, tables: TraceTables, processes: Map<number, ProcessFacts>): RankFindings[] {
  const naming: RankNaming = {
    devices: new Map(tables.devices.map((d) => [d.id, d])),
    streams: new Map(tables.streams.map((st) => [st.id, st])),
    processes,
  };
  return summaries.map((s, i) => {
    const ranks = [...new Set(s.processes.flatMap((p) => (p.rank === null ? [] : [p.rank])))].sort((a, b) => a - b);
    if (!s.findings) return { file: s.file, ranks, findings: null, total: null };
    const hosts = [...new Set(s.processes.map((p) => p.host).filter((h): h is string => Boolean(h)))];
    // As the file's own diagnosis named its GPUs (its processes' facts: findings/context.ts).
    const namedInFile = gpusNamedByRank(s.processes);
    const whose = `${ranksPhrase(ranks) || s.file}${hosts.length ? ` (${hosts.join(', ')})` : ''}`;
    const findings = s.findings.top.map((f) => {
      const placed = placeFinding(f, placement.plans[i]!, placement.shifts[i]!);
      if (!namedInFile) nameItsRank(naming, placed, { otherwise: whose });
      return placed;
    });
    return { file: s.file, ranks, findings, total: s.findings.total };
  });
}

/**
 * The job's scope as analyze() says one: the whole job, or the steady state
 * — cut where the job's start-up ends where the summaries were cut so, else
 * each rank from the end of its own start-up — the window from the earliest
 * of those ends. Start-up, shown whatever the scope: the one that ended
 * last, from the first rank's start, with the operations every rank left
 * out.
 */
function jobScope(summaries: readonly RankSummary[], shifts: Ns[], span: { start: Ns; end: Ns }): ScopeInfo {
  const ups = summaries.flatMap((s, i) => (s.startup ? [{ s: s.startup, shift: shifts[i]!, file: s.file }] : []));
  const last = ups.length ? ups.reduce((a, b) => (b.s.endNs + b.shift > a.s.endNs + a.shift ? b : a)) : null;
  const startup: Startup | null = last && {
    ...last.s,
    startNs: ups.reduce((m, u) => Math.min(m, u.s.startNs + u.shift), Infinity),
    endNs: last.s.endNs + last.shift,
    ops: ups.reduce((n, u) => n + u.s.ops, 0),
  };
  const first = summaries[0]!;
  // Cut where the job's start-up ends (summarize.ts cutWhereTheJobStarts), for these very recordings, and placed here
  // where it was found (each summary holds it in its own clock; another order of the files places them alike): the merged
  // recording's scope, its start-up the job's, with every rank's operations.
  const job = jobOf(summaries);
  const inJob = (s: RankSummary, i: number) => s.startup && { start: s.startup.startNs + shifts[i]!, end: s.startup.endNs + shifts[i]! };
  const cut = inJob(first, 0);
  const cutForThisJob = (s: RankSummary, i: number) => {
    const at = inJob(s, i);
    return cutForJob(s, job) && (at === null || cut === null ? at === cut : at.start === cut.start && at.end === cut.end);
  };
  if (first.scope === 'steady-state' && summaries.every(cutForThisJob)) {
    const own = first.startup;
    const info = steadyStateInfo(
      own && { ...own, startNs: own.startNs + shifts[0]!, endNs: own.endNs + shifts[0]!, ops: summaries.reduce((n, s) => n + (s.startup?.ops ?? 0), 0) },
    );
    closeWindows(info, span);
    return info;
  }
  if (first.scope === 'whole' || !last) {
    const info: ScopeInfo = { ...first.info, startup, windows: [] };
    closeWindows(info, span);
    return info;
  }
  const earliest = ups.reduce((m, u) => Math.min(m, u.s.endNs + u.shift), Infinity);
  return {
    kind: 'steady-state',
    label: `steady state, each rank after its own start-up (the last ended after ${formatDuration(last.s.endNs - last.s.startNs)}: ${last.file}; \`streamscope summarize\` of the job's files cuts every rank where the job's ended)`,
    windows: [{ startNs: earliest, endNs: Math.max(span.end, earliest) }],
    startup,
  };
}
