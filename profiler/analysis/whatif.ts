// What-if estimates: remove one cause, replay (replay.ts), compare. Each fix
// is a transformation of the replay input, as a user would make it:
//  * pin-pageable: pageable copies become pinned async copies — they run at
//    the pinned bandwidth (bandwidth-ref.ts) and the call returns at once;
//  * move-default-stream: work on the legacy default stream goes to the
//    stream its thread issued work to just before (the stream of the data
//    it belongs to) and loses the implicit barrier;
//  * remove-host-blocking: the synchronize calls between launches no longer
//    wait (the last one of each thread, which a program needs, is not one
//    of them).
// The prediction scales the replayed time by how well the replay reproduced
// the recording itself (replay of the unchanged input against the measured
// span), so model error does not count as a gain.
import type { Ns } from '../time.ts';
import { pinnedGbps } from './findings/bandwidth-ref.ts';
import type { Context } from './findings/context.ts';
import { callName } from './host.ts';
import { recordedInput, replay, type ReplayInput } from './replay.ts';
import { OpCategory, OpKind } from './trace.ts';

export type Fix = 'pin-pageable' | 'move-default-stream' | 'remove-host-blocking';

export const FIX_LABEL: Record<Fix, string> = {
  'pin-pageable': 'pageable copies pinned (at the measured pinned bandwidth)',
  'move-default-stream': 'default-stream work moved to its chunk\'s stream',
  'remove-host-blocking': 'host synchronization between launches removed',
};

export interface Estimate {
  fix: Fix;
  /** GPU span as recorded: first op start → last op end. */
  measuredNs: Ns;
  /** The replay of the unchanged recording (how faithful the model is). */
  replayedNs: Ns;
  predictedNs: Ns;
  savedNs: Ns;
}

/** What a freed call still costs the host: the call itself, not the wait. */
const FREED_CALL_NS = 5_000;
const PAGEABLE = 1;
const SYNC = /^(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cudaThreadSynchronize|cuCtxSynchronize|cuStreamSynchronize|cuEventSynchronize)$/;

/** Returns null when the fix does not apply to this recording (or its inputs are unknown). */
export function estimate(ctx: Context, fix: Fix): Estimate | null {
  const base = recordedInput(ctx);
  const input = apply(ctx, fix, recordedInput(ctx));
  if (!input) return null;
  const measured = ctx.gpuSpan.end - ctx.gpuSpan.start;
  const replayed = replay(ctx, base).spanNs;
  const fixed = replay(ctx, input).spanNs;
  const predicted = replayed > 0 ? fixed * (measured / replayed) : fixed;
  return { fix, measuredNs: measured, replayedNs: replayed, predictedNs: predicted, savedNs: Math.max(0, measured - predicted) };
}

function apply(ctx: Context, fix: Fix, input: ReplayInput): ReplayInput | null {
  const { ops } = ctx.trace;
  const { calls } = ctx.host;
  const freed = new Map<number, number>(); // call → its new duration
  if (fix === 'pin-pageable') {
    let any = false;
    for (let i = 0; i < ops.length; i++) {
      const cat = ops.category[i]!;
      if (ops.kind[i] !== OpKind.Memcpy || (cat !== OpCategory.HtoD && cat !== OpCategory.DtoH)) continue;
      if (ops.detail[i]! >> 4 !== PAGEABLE && (ops.detail[i]! & 15) !== PAGEABLE) continue;
      const bw = pinnedGbps(ctx, ops.device[i]!, cat);
      if (bw === null) return null; // no reference bandwidth: no estimate rather than a guess
      input.duration[i] = ops.bytes[i]! / bw;
      const k = ctx.host.opCall[i]!;
      if (k >= 0) freed.set(k, FREED_CALL_NS);
      any = true;
    }
    if (!any) return null;
  } else if (fix === 'move-default-stream') {
    if (input.legacy.size === 0) return null;
    let moved = false;
    const lastStreamOfThread = new Map<string, number>();
    const order = Array.from({ length: ops.length }, (_, i) => i).sort((a, b) => ctx.issue[a]! - ctx.issue[b]! || a - b);
    for (const i of order) {
      const k = ctx.host.opCall[i]!;
      const thread = k >= 0 ? `${calls.pid[k]}:${calls.tid[k]}` : `op:${ops.pid[i]}`;
      if (input.legacy.has(ops.stream[i]!)) {
        const target = lastStreamOfThread.get(thread);
        if (target !== undefined) {
          input.stream[i] = target;
          moved = true;
        }
      } else {
        lastStreamOfThread.set(thread, ops.stream[i]!);
      }
    }
    if (!moved) return null;
    input.legacy = new Set();
  } else {
    // The synchronize calls between launches, as the host-blocking rule finds them.
    const issuing = new Uint8Array(calls.length);
    for (let i = 0; i < ops.length; i++) if (ctx.host.opCall[i]! >= 0) issuing[ctx.host.opCall[i]!] = 1;
    for (const list of ctx.host.threads.values()) {
      let issuedBefore = false;
      let pending: number[] = [];
      for (const k of list) {
        if (issuing[k]) {
          if (issuedBefore) for (const c of pending) freed.set(c, FREED_CALL_NS);
          pending = [];
          issuedBefore = true;
        } else if (issuedBefore && SYNC.test(callName(ctx.host, k))) {
          // A driver call inside a freed runtime call is freed with it.
          const outer = pending.length ? pending[pending.length - 1]! : -1;
          if (outer < 0 || calls.start[k]! >= calls.end[outer]!) pending.push(k);
        }
      }
    }
    if (freed.size === 0) return null;
  }
  if (freed.size) input.issue = shiftIssue(ctx, input.issue, freed);
  return input;
}

/**
 * New issue times when some calls return sooner: every later call of the
 * same thread moves earlier by the time freed before it.
 */
function shiftIssue(ctx: Context, issue: Float64Array, freed: Map<number, number>): Float64Array {
  const { ops } = ctx.trace;
  const { calls } = ctx.host;
  const callShift = new Float64Array(calls.length);
  for (const list of ctx.host.threads.values()) {
    // (end time, freed amount) of the freed calls of this thread, by end.
    const gains = Array.from(list).filter((k) => freed.has(k)).map((k) => [calls.end[k]!, Math.max(0, calls.end[k]! - calls.start[k]! - freed.get(k)!)] as const);
    gains.sort((a, b) => a[0] - b[0]);
    let g = 0;
    let total = 0;
    for (const k of list) {
      while (g < gains.length && gains[g]![0] <= calls.start[k]!) total += gains[g++]![1];
      callShift[k] = total;
    }
  }
  const out = issue.slice();
  for (let i = 0; i < ops.length; i++) {
    const k = ctx.host.opCall[i]!;
    if (k >= 0) out[i] = issue[i]! - callShift[k]!;
  }
  return out;
}
