// What every diagnosis rule reads: the loaded trace and host calls, plus
// the derived facts several rules share (issue times, per-device busy
// unions, stream pairs), computed once.
import type { Ns } from '../../../contract/time.ts';
import { familiesByNameId } from '../../../cuda/call-families.ts';
import type { ProcessFacts } from '../../communication.ts';
import { callName, type Host } from '../../host.ts';
import type { IntervalList } from '../../intervals.ts';
import { deviceUnions, type DeviceUnions } from '../../overlap.ts';
import { streamPairs, type StreamPairs } from '../../stream-pairs.ts';
import { OpKind, type DeviceRow, type StreamRow, type Trace } from '../../trace.ts';
import { emptyEvidence, type Evidence, type Finding, type FindingKind, type Severity } from '../../../contract/findings.ts';
import { streamKind, streamKindInWords } from '../../../contract/streams.ts';
import { gpuNames, type GpuNames } from '../../../contract/ranks.ts';

export interface Context {
  trace: Trace;
  host: Host;
  /** Per op: when the host issued it (its API call's start; its own start if unknown). */
  issue: Float64Array;
  devices: Map<number, DeviceRow>;
  streams: Map<number, StreamRow>;
  /**
   * Each device's ops (indices, in start order). Rules that look at one
   * device at a time read these rather than every op once per device: a
   * job of 64 GPUs has 64 M operations.
   */
  opsOnDevice: Map<number, Int32Array>;
  /** Busy union of all ops per device. */
  busy: Map<number, IntervalList>;
  /** First op start to last op end, per device and over all. */
  deviceSpan: Map<number, { start: Ns; end: Ns }>;
  gpuSpan: { start: Ns; end: Ns };
  /** Stream-pair waits per device: computed on first use (a sweep over every op). */
  readonly pairs: StreamPairs[];
  /**
   * Each recorded process's rank, local rank, world size and host, by pid
   * (readProcessFacts): what the rules across ranks (issue 13) name a
   * process by. Empty where the caller read none (a trace built in memory).
   */
  processes: Map<number, ProcessFacts>;
}

/** `processes`: readProcessFacts of the recording (communication.ts); every caller holding the file passes them. */
export function buildContext(trace: Trace, host: Host, processes: Map<number, ProcessFacts> = new Map()): Context {
  // Made when first read: of the rules, only those after the first fix is named read it on most recordings (the
  // default stream's reads it of its streams' ops alone), and the what-if thread waits for that name (10 M ops: a pass
  // of ~0.08 s and 80 MB of fresh pages, now where the analysing thread has time to spare).
  let issue: Float64Array | null = null;
  const issueOf = () => (issue ??= issueTimes(trace, host));
  // The unions the overlap factors are measured with: one pass for both (overlap.ts deviceUnions).
  const unions = deviceUnions(trace);
  const busy = new Map([...unions].map(([d, { union }]) => [d, union]));
  const opsOnDevice = opsByDevice(trace, unions);
  const { deviceSpan, gpuSpan } = deviceSpans(trace);
  let pairs: StreamPairs[] | null = null;
  return {
    trace,
    host,
    get issue() {
      return issueOf();
    },
    devices: new Map(trace.devices.map((d) => [d.id, d])),
    streams: new Map(trace.streams.map((s) => [s.id, s])),
    opsOnDevice,
    busy,
    deviceSpan,
    gpuSpan,
    get pairs() {
      return (pairs ??= streamPairs(trace, issueOf()));
    },
    processes,
  };
}

/** Per op: when the host issued it (Context's issue). */
function issueTimes(trace: Trace, host: Host): Float64Array {
  const { ops } = trace;
  const issue = new Float64Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const k = host.opCall[i]!;
    issue[i] = k >= 0 ? Math.min(host.calls.start[k]!, ops.start[i]!) : ops.start[i]!;
  }
  return issue;
}

/**
 * First op start to last op end, per device and over all (Context's
 * deviceSpan and gpuSpan), from the devices' unions: what the Stats tab and
 * the communication breakdown read of the context, without the host model
 * the rest of it needs (analyze.ts builds that when first asked).
 */
export function deviceSpans(trace: Trace): Pick<Context, 'deviceSpan' | 'gpuSpan'> {
  const deviceSpan = new Map<number, { start: Ns; end: Ns }>();
  let gs = Infinity;
  let ge = -Infinity;
  for (const [d, { union: u }] of deviceUnions(trace)) {
    if (u.length) {
      deviceSpan.set(d, { start: u[0]!, end: u[u.length - 1]! });
      gs = Math.min(gs, u[0]!);
      ge = Math.max(ge, u[u.length - 1]!);
    }
  }
  return { deviceSpan, gpuSpan: Number.isFinite(gs) ? { start: gs, end: ge } : { start: 0, end: 0 } };
}

/**
 * Each device's op indices in start order, devices in the order their first
 * op comes (as deviceUnions counted them). The maps are read where the device
 * changes from the op before, not at every op: on the 10 M ops of one
 * device of the analysis benchmark, a get and a set per op took 0.27 s, this
 * 0.09 s (and ops that alternate devices at every op take as long as before).
 */
function opsByDevice(trace: Trace, devices: Map<number, DeviceUnions>): Map<number, Int32Array> {
  const { device, length: n } = trace.ops;
  const lists = new Map([...devices].map(([dev, d]) => [dev, new Int32Array(d.operations)]));
  const filled = new Map([...devices.keys()].map((dev) => [dev, 0]));
  let list = new Int32Array(0);
  let k = 0;
  let d = NaN;
  for (let i = 0; i < n; i++) {
    if (device[i] !== d) {
      if (!Number.isNaN(d)) filled.set(d, k);
      d = device[i]!;
      list = lists.get(d)!;
      k = filled.get(d)!;
    }
    list[k++] = i;
  }
  return lists;
}

/** Evidence lists stop here: enough to highlight and to zoom to, bounded for huge recordings (a list this long was cut: compare/findings.ts). */
export const EVIDENCE_CAP = 1000;

/**
 * How findings name a device: "GPU <CUDA ordinal>", as nvidia-smi, the
 * report and the timeline do (the recording-wide row id means nothing to a
 * user; the ordinal is that of the first process that used the device). In
 * a recording of several ranks or hosts, where every rank's first GPU is
 * GPU 0, with the ranks that ran on it: "rank 1 (node-b, GPU 0)"
 * (contract/ranks.ts gpuNames, as the report and the page name it).
 */
export function gpuName(ctx: Context, deviceId: number): string {
  return namesOf(ctx).device(deviceId);
}
const gpuNamesOf = new WeakMap<RankNaming, GpuNames>();
function namesOf(ctx: RankNaming): GpuNames {
  let names = gpuNamesOf.get(ctx);
  if (!names) gpuNamesOf.set(ctx, (names = gpuNames([...ctx.devices.values()], [...ctx.processes.values()], [...ctx.streams.values()])));
  return names;
}

/** The kinds whose titles name the GPU with its ranks themselves (gpuName, or the rank's own words). */
const NAMES_ITS_RANK: ReadonlySet<FindingKind> = new Set(['gpu-idle-gap', 'low-utilization', 'single-stream', 'serialized-collective', 'straggler-rank']);

/** What naming a finding's rank reads of a recording (a Context; a job from its ranks' summaries has these alone: job/of-summaries.ts). */
export type RankNaming = Pick<Context, 'devices' | 'streams' | 'processes'>;

/**
 * In a recording of several ranks or hosts (a merged job), a finding about
 * one rank's work starts with whose it is: "Rank 1 (node-b, GPU 0): 2 reads
 * of values back…". The rules word their titles for one process, so in a
 * job every rank's copy of a finding read the same ("cudaMalloc blocked
 * thread 1506…", four times) and none said which rank to open. Unchanged
 * in a recording of one process, and for the kinds that name the rank
 * themselves. `job`: a rank's finding from its own recording, placed in a
 * job (job/of-summaries.ts) — every kind named (the kinds that name their
 * GPU named it as the rank's file does, "GPU 0"), and where neither its
 * process nor its GPU says whose it is, `otherwise`.
 */
export function nameItsRank(ctx: RankNaming, f: Finding, job?: { otherwise: string }): void {
  const names = namesOf(ctx);
  if (!names.byRank || (!job && NAMES_ITS_RANK.has(f.kind))) return;
  let who: string | null = null;
  if (f.pid !== null && f.deviceId !== null) who = names.ofProcess(f.deviceId, f.pid);
  else if (f.deviceId !== null) who = names.device(f.deviceId);
  else if (f.pid !== null) {
    // A finding about a process, not one GPU (event ordering): its one GPU, or its rank and host.
    const devices = new Set([...ctx.streams.values()].filter((s) => s.pid === f.pid && s.deviceId !== null).map((s) => s.deviceId!));
    const p = ctx.processes.get(f.pid);
    if (devices.size === 1) who = names.ofProcess([...devices][0]!, f.pid);
    else if (p) who = `${p.rank !== null ? `rank ${p.rank}` : `pid ${p.pid}`}${p.host ? ` (${p.host})` : ''}`;
  }
  who ??= job?.otherwise ?? null;
  if (who) f.title = `${who[0]!.toUpperCase()}${who.slice(1)}: ${f.title}`;
}

/** "GPU <CUDA ordinal>" alone: where the finding names the rank itself. */
export function gpuOrdinalName(ctx: Context, deviceId: number): string {
  return `GPU ${ctx.devices.get(deviceId)?.ordinal ?? deviceId}`;
}

/** Adds op i to the evidence (and widens the window). */
export function addOp(ctx: Context, ev: Evidence, i: number): void {
  const { ops } = ctx.trace;
  const list = ops.kind[i] === OpKind.Kernel ? ev.kernels : ops.kind[i] === OpKind.Memcpy ? ev.memcpys : ev.memsets;
  if (list.length < EVIDENCE_CAP) list.push(ops.rowId[i]!);
  widen(ev, ops.start[i]!, ops.end[i]!);
}

export function addCall(ctx: Context, ev: Evidence, k: number): void {
  if (ev.apiCalls.length < EVIDENCE_CAP) ev.apiCalls.push(ctx.host.calls.rowId[k]!);
  widen(ev, ctx.host.calls.start[k]!, ctx.host.calls.end[k]!);
}

function widen(ev: Evidence, start: Ns, end: Ns): void {
  if (ev.window.start === 0 && ev.window.end === 0) {
    ev.window = { start, end };
  } else {
    ev.window.start = Math.min(ev.window.start, start);
    ev.window.end = Math.max(ev.window.end, end);
  }
}

export function newEvidence(): Evidence {
  return emptyEvidence();
}

/**
 * Severity of a fixable cause by what it cost relative to the GPU span:
 * under 2% is not worth failing a pipeline for (info), 25% or more is the
 * main thing wrong with the run (error).
 */
export function severityByCost(ctx: Context, costNs: Ns): Severity {
  return severityInSpan(ctx.gpuSpan, costNs);
}

/** severityByCost against a GPU span given as such (a job analysed rank by rank knows it only from every rank). */
export function severityInSpan(gpuSpan: { start: Ns; end: Ns }, costNs: Ns): Severity {
  const span = gpuSpan.end - gpuSpan.start;
  if (span <= 0) return 'info';
  const share = costNs / span;
  return share >= 0.25 ? 'error' : share >= 0.02 ? 'warning' : 'info';
}

export function nameOfCall(ctx: Context, k: number): string {
  return callName(ctx.host, k);
}

type CallFamilies = ReturnType<typeof familiesByNameId>;
const familyTables = new WeakMap<Host, CallFamilies>();

/**
 * The family of each call name (call-families.ts) as a table by name id,
 * built once per recording. Rules look it up once and index it per call
 * (calls.nameId[k]): a Map or WeakMap lookup per call costs tenths of a
 * second at 10 M calls.
 */
export function callFamilies(ctx: Context): CallFamilies {
  let table = familyTables.get(ctx.host);
  if (!table) familyTables.set(ctx.host, (table = familiesByNameId(ctx.host.names)));
  return table;
}

/** Human label of a stream: CUPTI id and kind. */
export function streamLabel(ctx: Context, streamId: number): string {
  const s = ctx.streams.get(streamId);
  if (!s) return `stream ${streamId}`;
  return `stream ${s.cuptiStreamId} (${streamKindInWords(streamKind(s.flags))})`;
}
