// `streamscope report`: what a recording holds, as JSON (shape documented in
// docs/FORMATS.md, "report --json") and as text for a terminal.
import { MIN_ITERATIONS } from '../analysis/diagnosis/iterations.ts';
import { type Iterations, type JobIterations } from '../contract/iterations.ts';
import type { Analysis } from '../analysis/diagnosis/analyze.ts';
import type { JobAnalysis } from '../analysis/diagnosis/job.ts';
import type { RankFindings, SourceAlignment } from '../contract/job.ts';
import type { CommKernel, Communication } from '../contract/communication.ts';
import { overlapByDevice, type Busy, type DeviceOverlap } from '../analysis/overlap.ts';
import type { ScopeInfo } from '../contract/scope.ts';
import type { Startup } from '../contract/scope.ts';
import { summarizeCopies, summarizeKernels, summarizeStreams, type CopySummary, type KernelSummary, type StreamSummary } from '../analysis/summary.ts';
import type { Finding } from '../contract/findings.ts';
import { graphLaunchesText, type GraphLaunches } from '../contract/graphs.ts';
import { gpuOrdinals, type DeviceRow } from '../analysis/trace.ts';
import { readableNames } from '../contract/names.ts';
import { formatRank, gpuNames, launcherOfRankVariable, ranksPhrase, type RankedProcess } from '../contract/ranks.ts';
import { participantName, type Stragglers } from '../contract/stragglers.ts';
import { formatBytes, formatDuration, gigabytesPerSecond } from '../contract/time.ts';
import { alignmentLine } from './clocks.ts';
import { renderTable } from './table.ts';

// 2: findings (the diagnosis) added. 3: scope (what was analysed, start-up);
// gpu (the CUDA ordinal) beside every deviceId. 4: findings carry fixId
// (the what-if fix that removes their cause). 5 (issue 13): communication
// (NCCL kernels, peer copies, per-rank time breakdown and overlap). 6 (issue
// 13): processes, each with its rank, local rank and world size. 7 (issue
// 13): stragglers (collective instances across ranks, arrival skew, wait).
// 8 (issue 13): `job` — null, or for a recording of many ranks read rank by
// rank (analysis/diagnosis/job.ts) what was read and how (JobReport: no overlap,
// streams, kernels or copies, and only the findings across ranks); `only` —
// null, or the processes a report of one rank (`--rank N`) covers. 9:
// graphs (CUDA graph launches: the operations they ran, their graphs).
export const REPORT_VERSION = 9;

export interface RecordingInfo {
  command: string | null;
  host: string | null;
  startedAt: string | null;
  durationNs: number | null;
  exitCode: number | null;
  complete: boolean;
  incompleteReason: string | null;
  driverVersion: string | null;
  runtimeVersion: string | null;
  cuptiVersion: string | null;
  droppedRecords: number;
  /** Facts about the run that cost the recording nothing. */
  notes: string[];
}

export interface Report {
  reportVersion: number;
  file: string;
  recording: RecordingInfo;
  /** What the rest of the report covers (steady state unless asked otherwise), and start-up as detected. */
  scope: ScopeInfo;
  /** The recorded processes, by pid, each with its rank in its job (null fields when not launched as a rank). */
  processes: RankedProcess[];
  devices: DeviceRow[];
  overlap: (DeviceOverlap & { gpu: number })[];
  streams: (StreamSummary & { gpu: number | null })[];
  kernels: KernelSummary[];
  copies: CopySummary[];
  /** CUDA graph launches (cudaGraphLaunch): how many, the operations they ran, each graph's nodes (profiler/contract/graphs.ts). */
  graphs: GraphLaunches;
  /** NCCL kernels and peer copies; each rank's compute, communication, copy and idle time (profiler/contract/communication.ts). */
  communication: Communication;
  /** NCCL collective instances matched across ranks: arrival skew, who was last, the wait, the straggler (profiler/contract/stragglers.ts). */
  stragglers: Stragglers;
  /** The diagnosis, worst first (profiler/contract/findings.ts). */
  findings: Finding[];
  /** Always null here: a report of a job read rank by rank is a JobReport. */
  job: null;
  /** The processes the report covers where it covers some only (`report --rank N`), else null. */
  only: ReportedProcesses | null;
}

/** Some processes of a recording, reported on their own. */
export interface ReportedProcesses {
  pids: number[];
  /** "rank 3 (pid 4242)", "pid 4242". */
  label: string;
}

/**
 * A recording of many ranks read rank by rank (analysis/diagnosis/job.ts): the
 * sections across ranks, and how it was read. What analyze() gives of one
 * rank besides (its overlap, streams, kernels, copies, its other findings)
 * is its own report: `report FILE --rank N`.
 */
export interface JobReport {
  reportVersion: number;
  file: string;
  recording: RecordingInfo;
  scope: ScopeInfo;
  processes: RankedProcess[];
  devices: DeviceRow[];
  job: {
    /** Processes with GPU work. */
    ranks: number;
    /** What was read at once: a merged job's sources, or processes ('process'), those sharing a GPU together. */
    parts: number;
    /** A merged job's sources, a recording's processes, or (several recordings, one per rank) their summaries (profiler/job/). */
    readBy: 'source' | 'process' | 'summary';
    /** Read by summary: each recording's place on the job's clock, as merge places it. */
    clocks?: SourceAlignment[];
    /** Parts whose API calls were read (NCCL's NVTX ranges, a host model, a range scope); the others' operations only. */
    partsWithCalls: number;
    /** Worker threads (0: the loader's threads, on the calling thread). */
    workers: number;
    /** Wall time of the analysis. */
    seconds: number;
    /** What the serialized-collective findings cost: their exposed communication (the what-if replay is one rank's report's). */
    findingsCost: 'rule';
  };
  communication: Communication;
  stragglers: Stragglers;
  /** Serialized collectives (one per rank and GPU) and the straggler rank, worst first. */
  findings: Finding[];
  /**
   * Read by summary: each recording's own top findings (its summary's, `summarize --findings`), in the job's ids and
   * named by rank, in the recordings' order; a recording whose summary holds none has `findings` null.
   */
  rankFindings?: RankFindings[];
  only: null;
}

/** `processes`: the recording's processes with their ranks (profiler/store/ranks.ts readProcesses); the CLI passes them. */
/** The recording's facts from its meta table. */
function recordingInfo(m: Map<string, string>): RecordingInfo {
  const num = (k: string) => (m.has(k) && m.get(k) !== '' ? Number(m.get(k)) : null);
  return {
    command: m.get('command') ?? null,
    host: m.get('host') ?? null,
    startedAt: m.get('started_at') ?? null,
    durationNs: num('duration_ns'),
    exitCode: num('exit_code'),
    complete: m.get('complete') === '1',
    incompleteReason: m.get('incomplete_reason') ?? null,
    driverVersion: m.get('driver_version') ?? null,
    runtimeVersion: m.get('runtime_version') ?? null,
    cuptiVersion: m.get('cupti_version') ?? null,
    droppedRecords: num('dropped_records') ?? 0,
    notes: m.has('notes') ? (JSON.parse(m.get('notes')!) as string[]) : [],
  };
}

/**
 * `processes`: the recording's processes with their ranks (profiler/store/ranks.ts readProcesses); the CLI passes them.
 * `only`: the analysis covers these processes' rows only (`report --rank N`): the processes and devices listed are theirs.
 */
export function buildReport(file: string, analysis: Analysis, processes: RankedProcess[] = [], only: ReportedProcesses | null = null): Report {
  // The rules first, so that their fixes' what-ifs replay on the second thread while the summaries below are made
  // (10 M operations: the report 2.9 → 2.6 s; analyze.ts beginDiagnosis).
  analysis.beginDiagnosis();
  const { trace } = analysis;
  const gpu = gpuOrdinals(trace.devices);
  const overlap = overlapByDevice(trace).map((o) => ({ ...o, gpu: gpu(o.deviceId) }));
  const deviceBusy = new Map(overlap.map((o) => [o.deviceId, o.all.union]));
  // One rank's report: its processes, and the devices its streams are on.
  const theirs = only ? new Set(trace.streams.filter((s) => only.pids.includes(s.pid)).map((s) => s.deviceId)) : null;
  return {
    reportVersion: REPORT_VERSION,
    file,
    recording: recordingInfo(trace.meta),
    scope: analysis.scope,
    processes: only ? processes.filter((p) => only.pids.includes(p.pid)) : processes,
    devices: theirs ? trace.devices.filter((d) => theirs.has(d.id)) : trace.devices,
    overlap,
    streams: summarizeStreams(trace, deviceBusy).map((st) => ({ ...st, gpu: st.deviceId === null ? null : gpu(st.deviceId) })),
    kernels: summarizeKernels(trace),
    copies: summarizeCopies(trace),
    graphs: analysis.graphs,
    communication: analysis.communication,
    stragglers: analysis.stragglers,
    findings: analysis.diagnosis.findings,
    job: null,
    only,
  };
}

/** The report of a job read rank by rank (analysis/diagnosis/job.ts analyzeJob): `seconds`, the analysis's wall time. */
export function buildJobReport(
  file: string,
  job: JobAnalysis,
  tables: { meta: Map<string, string>; devices: DeviceRow[] },
  processes: RankedProcess[],
  seconds: number,
  summaries?: { clocks: SourceAlignment[]; rankFindings: RankFindings[] },
): JobReport {
  return {
    reportVersion: REPORT_VERSION,
    file,
    recording: recordingInfo(tables.meta),
    scope: job.scope,
    processes,
    devices: tables.devices,
    job: {
      ranks: job.ranks,
      parts: job.parts,
      readBy: summaries ? 'summary' : job.merged ? 'source' : 'process',
      ...(summaries ? { clocks: summaries.clocks } : {}),
      partsWithCalls: job.partsWithCalls,
      workers: job.workers,
      seconds,
      findingsCost: 'rule',
    },
    communication: job.communication,
    stragglers: job.stragglers,
    findings: job.findings,
    ...(summaries ? { rankFindings: summaries.rankFindings } : {}),
    only: null,
  };
}

/** Start-up in one line: how long, on what, and what came before CUDA. */
export function formatStartup(s: Startup): string {
  const parts = s.spentOn.filter((p) => p.ns >= (s.endNs - s.startNs) * 0.01).map((p) => `${p.label} ${formatDuration(p.ns)}`);
  const before =
    s.beforeCudaNs !== null ? `; before that, ${formatDuration(s.beforeCudaNs)} from process start to CUDA initialisation (interpreter, imports)` : '';
  return `${formatDuration(s.endNs - s.startNs)}, until ${formatDuration(s.endNs)} (ended by ${s.lastCall}${s.ops ? `; ${s.ops} GPU operation${s.ops > 1 ? 's' : ''} left out` : ''}): ${parts.join(', ')}${before}`;
}

/**
 * The Processes section: each process with its rank (as its launcher set it)
 * and host where there is more than one host. Left out for a single process
 * that is not a rank: the command line above says all there is.
 */
export function formatProcesses(processes: RankedProcess[]): string[] {
  const ranked = processes.some((p) => p.rank !== null);
  if (processes.length === 0 || (processes.length === 1 && !ranked)) return [];
  const hosts = new Set(processes.map((p) => p.host)).size > 1;
  const rows = processes.map((p) => [
    p.pid,
    ...(ranked ? [formatRank(p), p.rankVariable ? `${launcherOfRankVariable(p.rankVariable)} (${p.rankVariable})` : '-'] : []),
    ...(hosts ? [p.host ?? '?'] : []),
    p.complete ? 'yes' : 'NO',
    shorten(p.command ?? '?', 100),
  ]);
  return [
    '',
    ranked ? 'Processes (rank of ranks, as its launcher set it)' : 'Processes',
    renderTable(['pid', ...(ranked ? ['rank', 'from'] : []), ...(hosts ? ['host'] : []), 'complete', 'command'], rows),
  ];
}

/** Kernel names can be 100 KB of template arguments: shorten them for a terminal. */
function shorten(name: string, max = 160): string {
  return name.length <= max ? name : `${name.slice(0, max - 1)}…`;
}

const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);
const factor = (b: Busy) => (b.overlapFactor === null ? '-' : b.overlapFactor.toFixed(2));

/** The lines every report starts with: the recording, its scope and start-up. */
function formatHead(r: Report | JobReport): string[] {
  const out: string[] = [];
  const rec = r.recording;
  out.push(`StreamScope report: ${r.file}`);
  if (rec.command) out.push(`command   ${rec.command}`);
  if (rec.host || rec.startedAt) out.push(`recorded  ${[rec.host, rec.startedAt].filter(Boolean).join(', ')}`);
  if (rec.durationNs !== null) out.push(`duration  ${formatDuration(rec.durationNs)}${rec.exitCode !== null ? `, exit code ${rec.exitCode}` : ''}`);
  const versions = [
    rec.driverVersion && `driver ${rec.driverVersion}`,
    rec.runtimeVersion && `runtime ${rec.runtimeVersion}`,
    rec.cuptiVersion && `CUPTI ${rec.cuptiVersion}`,
  ].filter(Boolean);
  if (versions.length) out.push(`versions  ${versions.join(', ')}`);
  if (!rec.complete) out.push(`INCOMPLETE: ${rec.incompleteReason ?? 'the recording was not finished'}`);
  for (const n of rec.notes) out.push(`note: ${n}`);
  if (rec.droppedRecords > 0) out.push(`WARNING: ${rec.droppedRecords} records were dropped by the collector (buffers full); totals below are lower bounds`);
  out.push(`scope     ${r.scope.label}${r.scope.kind === 'steady-state' && r.scope.startup ? ' (--whole includes it)' : ''}`);
  for (const n of r.scope.notes ?? []) out.push(`          ${n}`);
  if (r.scope.startup) out.push(`start-up  ${formatStartup(r.scope.startup)}`);
  return out;
}

/** Appends `lines` to `out`: a loop, as push(...lines) would pass every line as an argument (the stack's limit). */
function append(out: string[], lines: readonly string[]): void {
  for (const line of lines) out.push(line);
}

export function formatReport(r: Report): string {
  const out = formatHead(r);
  if (r.only) out.push(`only      ${r.only.label}: its own rows, start-up detected on them (\`report\` without --rank: the job's sections across ranks)`);

  append(out, formatProcesses(r.processes));

  const gpu = gpuOrdinals(r.devices);
  const gpuOf = (id: number | null) => (id === null ? '-' : gpu(id));
  // In a job "0" names every rank's first GPU: there each GPU is named with its rank (and host).
  const names = gpuNames(r.devices, r.processes, r.streams);
  const deviceOf = (id: number) => (names.byRank ? names.device(id) : gpu(id));
  out.push('', 'Devices');
  out.push(
    renderTable(
      ['GPU', 'name', 'cc', 'SMs', 'copy engines', 'concurrent kernels', 'memory', 'uuid'],
      r.devices.map((d) => [
        deviceOf(d.id),
        d.name ?? '?',
        d.ccMajor !== null ? `${d.ccMajor}.${d.ccMinor}` : '?',
        d.smCount ?? '?',
        d.asyncEngineCount ?? '?',
        // Unknown where the recording has no device attributes (an imported trace): not "no".
        d.concurrentKernels === null ? 'unknown' : d.concurrentKernels ? 'yes' : 'no',
        d.totalMemoryBytes ? formatBytes(d.totalMemoryBytes) : '?',
        d.uuid ?? '?',
      ]),
    ),
  );

  out.push('', 'Overlap per device (sum of busy time / union of busy time; 1.00 = nothing overlapped)');
  out.push(
    renderTable(
      ['GPU', 'compute', 'HtoD', 'DtoH', 'all', 'busy (union)', 'busy (sum)'],
      r.overlap.map((o) => [
        deviceOf(o.deviceId),
        factor(o.compute),
        factor(o.htod),
        factor(o.dtoh),
        factor(o.all),
        formatDuration(o.all.union),
        formatDuration(o.all.sum),
      ]),
    ),
  );

  if (r.communication.present) append(out, ['', ...formatCommunication(r.communication, gpuOf)]);
  if (r.stragglers.ranks.length > 1) append(out, ['', ...formatStragglers(r.stragglers)]);

  append(out, ['', ...formatFindings(r.findings)]);

  // Streams without any GPU operation (the CUDA runtime creates a few for
  // itself; an application may create more than it uses) are counted, not listed.
  const idle = r.streams.filter((s) => s.kernels + s.memcpys + s.memsets === 0);
  out.push('', idle.length ? `Streams with GPU work (${idle.length} more without any in this scope)` : 'Streams');
  out.push(
    renderTable(
      ['stream', 'GPU', 'pid', 'kind', 'priority', 'kernels', 'memcpys', 'memsets', 'busy', 'share of device busy'],
      r.streams
        .filter((s) => !idle.includes(s))
        .map((s) => [
          s.cuptiStreamId,
          names.byRank && s.deviceId !== null ? names.ofProcess(s.deviceId, s.pid) : gpuOf(s.deviceId),
          s.pid,
          s.kind,
          s.priority ?? '-',
          s.kernels,
          s.memcpys,
          s.memsets,
          formatDuration(s.busy.union),
          pct(s.shareOfDeviceBusy),
        ]),
    ),
  );

  out.push('', 'Kernels');
  // Kernels a graph launched are counted below one by one, as CUPTI reports them; this says how they came.
  if (r.graphs.launches > 0) out.push(`  ${graphLaunchesText(r.graphs)}`);
  const kernelName = readableNames(r.kernels);
  out.push(
    renderTable(
      ['count', 'total', 'mean', 'min', 'max', 'share', 'name'],
      r.kernels.map((k) => [
        k.count,
        formatDuration(k.total),
        formatDuration(k.mean),
        formatDuration(k.min),
        formatDuration(k.max),
        pct(k.share),
        shorten(kernelName.get(k.name)!),
      ]),
    ),
  );

  out.push('', 'Copies and memsets');
  out.push(
    renderTable(
      ['direction', 'from', 'to', 'count', 'bytes', 'time', 'GB/s'],
      r.copies.map((c) => [
        c.direction,
        c.srcKind,
        c.dstKind,
        c.count,
        formatBytes(c.bytes),
        formatDuration(c.total),
        c.gigabytesPerSecond === null ? '-' : c.gigabytesPerSecond.toFixed(1),
      ]),
    ),
  );
  return out.join('\n') + '\n';
}

/**
 * A job read rank by rank: the recording, how it was read, then the
 * sections across ranks — each rank's communication breakdown, the
 * stragglers, the findings across ranks — and how to see one rank whole.
 */
export function formatJobReport(r: JobReport): string {
  const out = formatHead(r);
  const j = r.job;
  const how = j.workers > 0 ? `${j.workers} worker thread${j.workers > 1 ? 's' : ''}` : 'one thread (the loader on every core)';
  const one = r.processes.some((p) => p.rank !== null) ? '--rank N' : '--pid P';
  if (j.readBy === 'summary') {
    out.push(
      `job       ${j.ranks} ranks (processes with GPU work) of ${j.clocks!.length} recordings, from their summaries, in ${formatDuration(j.seconds * 1e9)}: the sections across ranks`,
      "          one rank's whole report (its overlap, streams, kernels, copies, every finding): streamscope report RANK.sqlite",
      'Clocks (as merge aligns them)',
    );
    for (const c of j.clocks!) out.push(`  ${alignmentLine(c)}`);
  } else {
    out.push(
      `job       ${j.ranks} ranks (processes with GPU work) read ${j.readBy === 'source' ? 'source by source' : 'process by process'}, ${j.parts} parts on ${how}, in ${j.seconds.toFixed(1)} s: the sections across ranks`,
      `          one rank's whole report (its overlap, streams, kernels, copies, every finding): streamscope report ${r.file} ${one}`,
    );
  }
  const gpu = gpuOrdinals(r.devices);
  const gpuOf = (id: number | null) => (id === null ? '-' : gpu(id));
  append(out, ['', ...formatCommunication(r.communication, gpuOf)]);
  if (r.stragglers.ranks.length > 1) append(out, ['', ...formatStragglers(r.stragglers)]);
  out.push('');
  if (r.findings.length === 0) out.push("Findings across ranks: none (no rank's collectives serialized behind its computation, no straggler)");
  else {
    append(out, [
      ...formatFindings(r.findings),
      `  (findings across ranks only; a serialized collective's cost is the communication it left exposed — the replay of its fix is in the rank's report, ${one})`,
    ]);
  }
  if (r.rankFindings) append(out, ['', ...formatRankFindings(r.rankFindings)]);
  return out.join('\n') + '\n';
}

/**
 * Each recording's own top findings, after the job's: a heading per rank
 * with how many of its findings are shown, then those findings as a
 * report lists them; where summaries hold none, how to put them there.
 */
function formatRankFindings(list: RankFindings[]): string[] {
  const held = list.filter((x) => x.findings !== null);
  const without = list.filter((x) => x.findings === null);
  const files = (xs: RankFindings[]) => (xs.length > 3 ? `${xs[0]!.file} … ${xs.at(-1)!.file}` : xs.map((x) => x.file).join(' '));
  const how = (xs: RankFindings[]) => `streamscope summarize --findings ${files(xs)} puts each rank's top findings in its summary`;
  if (held.length === 0) return [`Each rank's own findings: not in these summaries (${how(without)})`];
  const out = ["Each rank's own top findings (from its summary, its diagnosis for this scope; worst first)"];
  for (const x of held) {
    const whose = ranksPhrase(x.ranks) || x.file;
    const own = `its own report: streamscope report ${x.file}`;
    if (x.total === 0) {
      out.push(`  ${whose}: no findings (${own})`);
      continue;
    }
    out.push(`  ${x.findings!.length} of ${x.total} finding${x.total === 1 ? '' : 's'} of ${whose}; ${own}`);
    // formatFindings's lines less its heading, indented under the rank's.
    append(
      out,
      formatFindings(x.findings!)
        .slice(1)
        .map((line) => `  ${line}`),
    );
  }
  if (without.length > 0) out.push(`  ${without.length} of ${list.length} summaries hold no findings: ${how(without)}`);
  return out;
}

/** NCCL's variant of a kernel in one cell: `RING LL f32 sum`. */
export function commVariant(k: CommKernel): string {
  return [k.algorithm, k.protocol, k.dtype, k.op].filter(Boolean).join(' ') || '-';
}

/**
 * The Communication section: per rank and GPU, where its time went over the
 * scope's GPU span and how much communication compute hid; collectives by
 * kind; the NCCL kernels with their labels.
 */
export function formatCommunication(c: Communication, gpuOf: (id: number | null) => number | string): string[] {
  const out: string[] = [];
  const span = c.ranks[0]?.devices[0]?.spanNs ?? 0;
  out.push(`Communication (NCCL kernels and peer copies), per rank and GPU over the GPU span of ${formatDuration(span)}`);
  const withRank = c.ranks.some((r) => r.rank !== null);
  const hosts = new Set(c.ranks.map((r) => r.host)).size > 1;
  const share = (ns: number, of: number) => `${formatDuration(ns)} ${of > 0 ? `${((ns / of) * 100).toFixed(1)}%` : ''}`.trim();
  out.push(
    renderTable(
      [...(hosts ? ['host'] : []), ...(withRank ? ['rank'] : []), 'pid', 'GPU', 'compute', 'communication', 'hidden', 'exposed', 'copies', 'idle', 'overlap'],
      c.ranks.flatMap((r) =>
        r.devices.map((d) => [
          ...(hosts ? [r.host ?? '?'] : []),
          ...(withRank ? [r.rank === null ? '-' : `${r.rank}${r.worldSize !== null ? `/${r.worldSize}` : ''}`] : []),
          r.pid,
          gpuOf(d.deviceId),
          share(d.computeNs, d.spanNs),
          share(d.communicationNs, d.spanNs),
          formatDuration(d.hiddenNs),
          share(d.exposedNs, d.spanNs),
          share(d.copyNs, d.spanNs),
          share(d.idleNs, d.spanNs),
          pct(d.overlap),
        ]),
      ),
    ),
  );
  out.push('  compute + exposed + copies + idle = the span; hidden: communication while compute ran on the same GPU; overlap = hidden / communication');
  // Bytes and algorithm bandwidth where NCCL's NVTX ranges gave the calls' sizes; blank where they did not.
  const rows: (string | number)[][] = c.collectives.map((k) => [
    k.collective,
    k.count,
    formatDuration(k.totalNs),
    k.bytes === null ? '' : formatBytes(k.bytes),
    k.algorithmBandwidth === null ? '' : (k.algorithmBandwidth / 1e9).toFixed(1),
  ]);
  if (c.peerCopies.count > 0) {
    const gbs = gigabytesPerSecond(c.peerCopies.bytes, c.peerCopies.totalNs);
    rows.push(['peer copies', c.peerCopies.count, formatDuration(c.peerCopies.totalNs), formatBytes(c.peerCopies.bytes), gbs === null ? '' : gbs.toFixed(1)]);
  }
  out.push('', 'Collectives (every rank)', renderTable(['kind', 'count', 'total', 'bytes', 'GB/s'], rows));
  const r = c.ncclRanges;
  if (r.kernels > 0) {
    out.push(
      r.fromRanges === 0
        ? "  kinds from the kernels' names: no NCCL kernel was launched inside one of NCCL's NVTX ranges"
        : `  kinds from NCCL's NVTX ranges for ${r.fromRanges} of ${r.kernels} NCCL kernels; bytes (the calls' message sizes) for ${r.withBytes}` +
            (r.withBytes === 0 ? ' (the ranges carried no payload: NCCL before 2.19, or recorded before StreamScope kept them)' : '') +
            "; GB/s = bytes / kernel time (NCCL's algorithm bandwidth)",
    );
  }
  if (c.kernels.length > 0) {
    const name = readableNames(c.kernels);
    out.push(
      '',
      'NCCL kernels (variant: what the kernel was compiled for, as its name says)',
      renderTable(
        ['collective', 'variant', 'count', 'total', 'name'],
        c.kernels.map((k) => [k.collective, commVariant(k), k.count, formatDuration(k.totalNs), shorten(name.get(k.name)!)]),
      ),
    );
  }
  return out;
}

/**
 * The Stragglers section: the collective instances matched across ranks,
 * per rank how often it arrived last and what that cost the others, the
 * straggler or why none is named, the worst instances, and what could not
 * be matched.
 */
export function formatStragglers(s: Stragglers): string[] {
  const out: string[] = [];
  out.push(
    `Stragglers (NCCL collectives matched across ${s.ranks.length} ranks: ${s.instances} instance${s.instances === 1 ? '' : 's'}; skew = last start − first start, wait = the others' time in it before the last arrived)`,
  );
  const hosts = new Set(s.ranks.map((r) => r.host)).size > 1;
  const withRank = s.ranks.some((r) => r.rank !== null);
  const share = (n: number, of: number) => `${n}${of > 0 ? ` ${((n / of) * 100).toFixed(0)}%` : ''}`;
  const maybe = (ns: number | null) => (ns === null ? '-' : formatDuration(ns));
  out.push(
    renderTable(
      [
        ...(hosts ? ['host'] : []),
        ...(withRank ? ['rank'] : []),
        'pid',
        'GPU',
        'instances',
        'last',
        'wait caused',
        'waited',
        'mean late',
        'skew when last',
        'max',
      ],
      s.ranks.map((r) => [
        ...(hosts ? [r.host ?? '?'] : []),
        ...(withRank ? [r.rank === null ? '-' : `${r.rank}${r.worldSize !== null ? `/${r.worldSize}` : ''}`] : []),
        r.pid,
        r.gpu,
        r.instances,
        share(r.lastCount, r.instances),
        formatDuration(r.causedWaitNs),
        formatDuration(r.waitedNs),
        formatDuration(r.meanLateNs),
        maybe(r.meanSkewWhenLastNs),
        maybe(r.maxSkewWhenLastNs),
      ]),
    ),
  );
  const st = s.straggler;
  if (st) {
    out.push(
      `  straggler: ${participantName(st)}, last at ${st.lastCount} of ${st.instances}; the other ranks waited ${formatDuration(st.causedWaitNs)} for it, ${(st.waitShare * 100).toFixed(0)}% of their time in these collectives`,
    );
  } else if (s.present) {
    out.push('  straggler: none (no rank is last more often than chance has it, with a wait that matters)');
  }
  if (s.collectives.length > 0) {
    out.push(
      '',
      'Arrival skew by collective',
      renderTable(
        ['collective', 'instances', 'mean skew', 'max skew', 'wait'],
        s.collectives.map((c) => [c.collective, c.instances, formatDuration(c.meanSkewNs), formatDuration(c.maxSkewNs), formatDuration(c.waitNs)]),
      ),
    );
  }
  if (s.worst.length > 0) {
    out.push(
      '',
      'Longest waits (the collective instances the ranks waited longest in)',
      renderTable(
        ['collective', 'stream', 'n', 'starts at', 'skew', 'wait', 'last'],
        s.worst.map((w) => {
          const last = w.ranks[w.last]!;
          const who = s.ranks.find((r) => r.pid === last.pid && r.deviceId === last.deviceId)!;
          return [
            w.collective,
            w.stream,
            w.n,
            formatDuration(w.ranks.reduce((m, k) => Math.min(m, k.startNs), Infinity)),
            formatDuration(w.skewNs),
            formatDuration(w.waitNs),
            participantName(who),
          ];
        }),
      ),
    );
  }
  const g = s.gaps;
  const gaps = [
    g.partialInstances &&
      `${g.partialInstances} instance${g.partialInstances > 1 ? 's' : ''} not run by every rank of its stream (${g.partialKernels} kernels)`,
    g.leadingKernels && `${g.leadingKernels} kernel${g.leadingKernels > 1 ? 's' : ''} before the first instance every rank ran (cut by the scope's start)`,
    g.unsynchronizedInstances &&
      `${g.unsynchronizedInstances} instance${g.unsynchronizedInstances > 1 ? 's' : ''} whose kernels did not end together (several communicators, or clocks not aligned)`,
    g.pointToPointKernels && `${g.pointToPointKernels} send/receive kernel${g.pointToPointKernels > 1 ? 's' : ''} (point-to-point)`,
  ].filter(Boolean);
  if (gaps.length) out.push(`  not analysed: ${gaps.join('; ')}`);
  return out;
}

const SEVERITY_LABEL = { error: 'ERROR', warning: 'WARN ', info: 'info ' } as const;

/** The findings as a terminal reads them: one line each, then why and what to do for the ones that matter. */
export function formatFindings(findings: Finding[]): string[] {
  if (findings.length === 0) return ['Findings: none (nothing serialized the streams)'];
  const out = ['Findings (worst first; cost = time lost, or waited for a limit)'];
  for (const f of findings) {
    out.push(`  ${SEVERITY_LABEL[f.severity]} ${formatDuration(f.costNs).padStart(9)}  ${f.title}`);
    if (f.whatIf)
      out.push(
        `                   what if fixed: ${formatDuration(f.whatIf.measuredNs)} → ${formatDuration(f.whatIf.predictedNs)} (${f.whatIf.fix}${f.whatIf.findings ? `; one estimate for the ${f.whatIf.findings} findings of this fix` : ''})`,
      );
    else if (f.whatIfUnavailable) out.push(`                   what if fixed: not modelled here: ${f.whatIfUnavailable}`);
    if (f.severity !== 'info') {
      out.push(`                   why: ${f.explanation}`);
      if (f.fix) out.push(`                   fix: ${f.fix}`);
    }
  }
  return out;
}

/** "10", or "9 to 10" where the ranks ran different numbers of steps. */
function perRankCount(it: Iterations): string {
  const per = new Map<number, number>();
  for (const r of it.rows) per.set(r.pid, (per.get(r.pid) ?? 0) + 1);
  let min = Infinity;
  let max = 0;
  for (const n of per.values()) [min, max] = [Math.min(min, n), Math.max(max, n)];
  return min === max ? `${min}` : `${min} to ${max}`;
}

/** `report --iterations`: one row per instance of the repeating range, warm-up and outliers marked. */
export function formatIterations(it: Iterations | null): string {
  if (!it) return `Iterations: no NVTX range repeats ${MIN_ITERATIONS} or more times (name one with --range NAME)`;
  if (it.rows.length === 0) return `Iterations: no closed instance of NVTX range '${it.name}'`;
  const warm = it.rows.filter((r) => r.warmUp).length;
  const outliers = it.rows.filter((r) => r.outlier).length;
  const count =
    it.processes > 1
      ? `${it.rows.length} instances, ${perRankCount(it)} on each of ${it.processes} ${it.rows.some((r) => r.rank !== null) ? 'ranks' : 'processes'}`
      : `${it.rows.length}`;
  const head =
    `Iterations of NVTX range '${it.name}'${it.chosen === 'picked' ? ' (the repeating range covering most time)' : ''}: ${count}, median ${formatDuration(it.medianNs)}` +
    `${warm ? `; ${warm} warm-up` : ''}${outliers ? `; ${outliers} outlier${outliers > 1 ? 's' : ''}` : ''}`;
  if (it.processes > 1) return [head, formatIterationsPerRank(it)].join('\n');
  const gpus = [...new Set(it.rows.flatMap((r) => r.devices.map((d) => d.gpu)))].sort((a, b) => a - b);
  const rows = it.rows.map((r) => {
    const perGpu = gpus.flatMap((g) => {
      const d = r.devices.find((x) => x.gpu === g);
      return [d ? formatDuration(d.busyNs) : '-', d?.overlap != null ? d.overlap.toFixed(2) : '-', d ? formatDuration(d.time.exposedNs) : '-'];
    });
    const note = r.warmUp ? 'warm-up' : r.outlier ? 'OUTLIER' : '';
    return [`#${r.instance}`, formatDuration(r.startNs), formatDuration(r.lengthNs), r.operations, ...perGpu, note, ...topFinding(it, r)];
  });
  const perGpuHeads = gpus.flatMap((g) => [`GPU ${g} busy`, `overlap`, `exposed`]);
  return [head, renderTable(['instance', 'starts', 'GPU span', 'ops', ...perGpuHeads, '', ...topFindingHead(it)], rows)].join('\n');
}

/** The top finding's column, where the findings were looked for (a job's iterations from summaries have none: they cost a diagnosis). */
const topFindingHead = (it: Iterations) => (it.findings ? ['top finding'] : []);
const topFinding = (it: Iterations, r: Iterations['rows'][number]) =>
  it.findings ? [r.topFinding ? `${r.topFinding.kind} ${formatDuration(r.topFinding.costNs)}` : '-'] : [];

/** A step's breakdown in the table of a job's iterations: its communication, the part of it no compute hid (what the step waited), its GPU's idle time. */
const STEP_TIMES = ['communicationNs', 'exposedNs', 'idleNs'] as const;

/**
 * `report A.sqlite B.sqlite … --iterations`: the job's iterations
 * (formatIterations), and the recordings that have none of its range: the
 * ranks picked different ranges, or one repeats none.
 */
export function formatJobIterations(it: JobIterations | null): string {
  if (!it || it.without.length === 0) return formatIterations(it);
  const ranks = (w: JobIterations['without'][number]) => (w.ranks.length ? ` (${ranksPhrase(w.ranks)})` : '');
  const why = (w: JobIterations['without'][number]) =>
    w.picked === null ? `no NVTX range repeats ${MIN_ITERATIONS} or more times` : `its repeating range is '${w.picked}'`;
  return [
    formatIterations(it),
    `note: the recordings' step ranges differ: ${it.without.length} have no rows of '${it.name}' (the range most of them repeat):`,
    ...it.without.map((w) => `  ${w.file}${ranks(w)}: ${why(w)}`),
  ].join('\n');
}

/**
 * The iterations of a job: each rank's steps in order, rank after rank, its
 * own GPUs beside each (every rank's first GPU is GPU 0 of its host: one
 * column per ordinal would mix the ranks'). `instance` stays what `--range
 * NAME#k` takes.
 */
function formatIterationsPerRank(it: Iterations): string {
  const hosts = new Set(it.rows.map((r) => r.host)).size > 1;
  const sorted = [...it.rows].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.pid - b.pid || a.step - b.step);
  const rows = sorted.map((r) => [
    r.rank ?? '-',
    ...(hosts ? [r.host ?? '?'] : []),
    r.pid,
    `#${r.step}`,
    `#${r.instance}`,
    formatDuration(r.startNs),
    formatDuration(r.lengthNs),
    r.operations,
    r.devices.map((d) => `GPU ${d.gpu}`).join(', ') || '-',
    r.devices.map((d) => formatDuration(d.busyNs)).join(', ') || '-',
    r.devices.map((d) => (d.overlap != null ? d.overlap.toFixed(2) : '-')).join(', ') || '-',
    ...STEP_TIMES.map((k) => r.devices.map((d) => formatDuration(d.time[k])).join(', ') || '-'),
    r.warmUp ? 'warm-up' : r.outlier ? 'OUTLIER' : '',
    ...topFinding(it, r),
  ]);
  return renderTable(
    [
      'rank',
      ...(hosts ? ['host'] : []),
      'pid',
      'step',
      'instance',
      'starts',
      'GPU span',
      'ops',
      'GPU',
      'busy',
      'overlap',
      'comm',
      'exposed',
      'idle',
      '',
      ...topFindingHead(it),
    ],
    rows,
  );
}
