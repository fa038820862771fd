// What-if replay: the recorded GPU operations run again in a model of the
// device, so that one cause of serialization can be removed and the run
// time re-measured. The model honours, per operation:
//  * host issue: it cannot start before the host issued it (its API call's
//    start, shifted when a fix frees the host earlier) plus the device's
//    launch latency, measured from the recording (the 10th percentile of
//    start − issue: the operations that did not wait for anything);
//  * stream order: after the previous operation of its stream;
//  * the legacy default stream: an operation on it waits for all work
//    issued before it to blocking streams of its device, and work issued to
//    those streams afterwards waits for it;
//  * CUDA events: after cudaStreamWaitEvent, a stream's work waits for the
//    work its event recorded;
//  * engines: one copy engine per direction (same-direction copies run one
//    at a time); kernels run side by side unless one fills the device
//    (grid ≥ SMs × resident blocks per SM), which then runs alone;
//  * durations as recorded, unless a fix changes them.
// Operations are placed in issue order, one pass over typed arrays.
import type { Ns } from '../time.ts';
import { blocksPerSm } from './findings/device-full.ts';
import type { Context } from './findings/context.ts';
import { OpCategory, OpKind } from './trace.ts';

export interface ReplayInput {
  /** Per op: when the host issued it (ns). */
  issue: Float64Array;
  /** Per op: how long it runs (ns). */
  duration: Float64Array;
  /** Per op: its stream (streams.id). */
  stream: Int32Array;
  /** Streams that behave as the legacy default stream. */
  legacy: Set<number>;
}

export interface ReplayResult {
  start: Float64Array;
  end: Float64Array;
  /** First op start to last op end. */
  spanNs: Ns;
}

/** The recording as it happened, as replay input. */
export function recordedInput(ctx: Context): ReplayInput {
  const { ops } = ctx.trace;
  const duration = new Float64Array(ops.length);
  for (let i = 0; i < ops.length; i++) duration[i] = ops.end[i]! - ops.start[i]!;
  const legacy = new Set(ctx.trace.streams.filter((s) => s.flags & 1).map((s) => s.id));
  return { issue: ctx.issue.slice(), duration, stream: ops.stream.slice(), legacy };
}

/** Launch latency per device: the 10th percentile of start − issue. */
function launchLatency(ctx: Context): Map<number, number> {
  const { ops } = ctx.trace;
  const lags = new Map<number, number[]>();
  for (let i = 0; i < ops.length; i++) {
    if (ctx.host.opCall[i]! < 0) continue;
    let l = lags.get(ops.device[i]!);
    if (!l) lags.set(ops.device[i]!, (l = []));
    l.push(ops.start[i]! - ctx.issue[i]!);
  }
  const out = new Map<number, number>();
  for (const [d, l] of lags) {
    l.sort((a, b) => a - b);
    out.set(d, Math.max(0, l[Math.floor(l.length * 0.1)] ?? 0));
  }
  return out;
}

export function replay(ctx: Context, input: ReplayInput): ReplayResult {
  const { ops } = ctx.trace;
  const n = ops.length;
  const latency = launchLatency(ctx);
  // Issue order (stable: ties keep recorded order).
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => input.issue[a]! - input.issue[b]! || a - b);

  // Event records and waits in host time order, merged into the walk.
  type HostEvent = { at: number; kind: 'record' | 'wait'; pid: number; eventId: number; stream: number | null };
  const hostEvents: HostEvent[] = [];
  for (const e of ctx.host.events) {
    if (e.call >= 0 && e.stream !== null) hostEvents.push({ at: ctx.host.calls.start[e.call]!, kind: 'record', pid: e.pid, eventId: e.eventId, stream: e.stream });
  }
  for (const w of ctx.host.waits) {
    if (w.call >= 0 && w.eventId !== null && w.stream !== null) hostEvents.push({ at: ctx.host.calls.start[w.call]!, kind: 'wait', pid: w.pid, eventId: w.eventId, stream: w.stream });
  }
  hostEvents.sort((a, b) => a.at - b.at);
  const eventDone = new Map<string, number>();
  const streamBarrier = new Map<number, number>();

  const streamEnd = new Map<number, number>();
  const copyEngineFree = new Map<string, number>(); // device:category
  const blockingIssuedEnd = new Map<number, number>(); // device → latest end of blocking-stream work issued so far
  const legacyBarrier = new Map<number, number>(); // device → end of the latest legacy-stream op
  const kernelsEnd = new Map<number, number>(); // device → latest end of any kernel
  const exclusiveUntil = new Map<number, number>(); // device → end of the latest device-filling kernel

  const start = new Float64Array(n);
  const end = new Float64Array(n);
  let h = 0;
  for (const i of order) {
    const issue = input.issue[i]!;
    while (h < hostEvents.length && hostEvents[h]!.at <= issue) {
      const e = hostEvents[h++]!;
      const key = `${e.pid}:${e.eventId}`;
      if (e.kind === 'record') eventDone.set(key, streamEnd.get(e.stream!) ?? -Infinity);
      else streamBarrier.set(e.stream!, Math.max(streamBarrier.get(e.stream!) ?? -Infinity, eventDone.get(key) ?? -Infinity));
    }
    const device = ops.device[i]!;
    const stream = input.stream[i]!;
    const isLegacy = input.legacy.has(stream);
    const nonBlocking = ((ctx.streams.get(stream)?.flags ?? 0) & 2) !== 0;
    let t = issue + (latency.get(device) ?? 0);
    t = Math.max(t, streamEnd.get(stream) ?? -Infinity, streamBarrier.get(stream) ?? -Infinity);
    if (isLegacy) t = Math.max(t, blockingIssuedEnd.get(device) ?? -Infinity);
    else if (!nonBlocking) t = Math.max(t, legacyBarrier.get(device) ?? -Infinity);
    const cat = ops.category[i]!;
    const copyKey = `${device}:${cat}`;
    const isCopy = ops.kind[i] === OpKind.Memcpy && (cat === OpCategory.HtoD || cat === OpCategory.DtoH);
    let fills = false;
    if (isCopy) t = Math.max(t, copyEngineFree.get(copyKey) ?? -Infinity);
    else if (ops.kind[i] === OpKind.Kernel) {
      const dev = ctx.devices.get(device);
      fills = !!dev?.smCount && ops.blocks[i]! >= dev.smCount * blocksPerSm(dev, ops.blockThreads[i]!, ops.registers[i]!, ops.sharedBytes[i]!);
      t = Math.max(t, exclusiveUntil.get(device) ?? -Infinity);
      if (fills) t = Math.max(t, kernelsEnd.get(device) ?? -Infinity);
    }
    const e = t + input.duration[i]!;
    start[i] = t;
    end[i] = e;
    streamEnd.set(stream, e);
    if (isCopy) copyEngineFree.set(copyKey, e);
    if (ops.kind[i] === OpKind.Kernel) {
      kernelsEnd.set(device, Math.max(kernelsEnd.get(device) ?? -Infinity, e));
      if (fills) exclusiveUntil.set(device, e);
    }
    if (isLegacy) legacyBarrier.set(device, e);
    else if (!nonBlocking) blockingIssuedEnd.set(device, Math.max(blockingIssuedEnd.get(device) ?? -Infinity, e));
  }
  let s = Infinity;
  let e = -Infinity;
  for (let i = 0; i < n; i++) {
    if (start[i]! < s) s = start[i]!;
    if (end[i]! > e) e = end[i]!;
  }
  return { start, end, spanNs: n ? e - s : 0 };
}
