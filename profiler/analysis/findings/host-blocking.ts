// Host-blocking calls between launches: synchronize calls, and the
// allocation calls that synchronize implicitly (cudaMalloc/cudaFree,
// pinned alloc/free, host register/unregister), made by a thread after it
// issued GPU work and before it issued more. While the host waits, it
// cannot issue; when the call returns, the GPU has drained and idles until
// the next work arrives. Nsight Systems' cuda_api_sync rule lists such
// calls; here each is charged the GPU idle time from the call's start to
// the start of the next operation the thread issued, and the last sync of a
// thread (the one a program needs before reading results) is not flagged.
import { formatDuration } from '../../time.ts';
import { idleWithin } from '../intervals.ts';
import { addCall, addOp, nameOfCall, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from './types.ts';

const SYNC = /^(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cudaThreadSynchronize|cuCtxSynchronize|cuStreamSynchronize|cuEventSynchronize)$/;
const ALLOC = /^(cudaMalloc|cudaFree|cudaMallocHost|cudaFreeHost|cudaHostAlloc|cudaHostRegister|cudaHostUnregister|cudaMallocPitch|cudaMalloc3D|cudaMallocManaged|cuMemAlloc(_v2)?|cuMemFree(_v2)?|cuMemAllocHost(_v2)?|cuMemFreeHost|cuMemHostAlloc|cuMemHostRegister(_v2)?|cuMemHostUnregister|cuMemAllocManaged|cuMemAllocPitch(_v2)?)$/;

export function hostBlocking(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const { calls } = ctx.host;
  // For each call that issued GPU work: its first op (in start order).
  const firstOpOfCall = new Int32Array(calls.length).fill(-1);
  const opCall = ctx.host.opCall;
  for (let i = 0; i < ops.length; i++) {
    const k = opCall[i]!;
    if (k >= 0 && firstOpOfCall[k] === -1) firstOpOfCall[k] = i;
  }
  // Names are few, calls are millions: decide per name once, into a table
  // indexed by name id (a Map lookup per call cost ~0.2 s at 10 M calls).
  let maxNameId = 0;
  for (const id of ctx.host.names.keys()) maxNameId = Math.max(maxNameId, id);
  const candidateName = new Uint8Array(maxNameId + 1);
  for (const [id, name] of ctx.host.names) if (SYNC.test(name) || ALLOC.test(name)) candidateName[id] = 1;
  type Group = { name: string; calls: number[]; nextOps: number[]; idle: number; blocked: number; pid: number; tid: number; device: number };
  const groups = new Map<string, Group>();
  for (const [thread, list] of ctx.host.threads) {
    // Driver calls made inside a runtime call are that call's business.
    let runtimeEnd = -Infinity;
    let issuedBefore = false;
    const candidates: number[] = [];
    for (let x = 0; x < list.length; x++) {
      const k = list[x]!;
      const nested = calls.domain[k] === 2 && calls.start[k]! < runtimeEnd;
      if (calls.domain[k] === 1) runtimeEnd = Math.max(runtimeEnd, calls.end[k]!);
      if (firstOpOfCall[k] !== -1) {
        // The candidates since the last issuing call sit between two launches.
        // (Tested for emptiness first: setting an array's length is a slow
        // path in V8, 0.3 s over 10 M launches.)
        if (candidates.length > 0) {
          if (issuedBefore) {
            const next = firstOpOfCall[k]!;
            candidates.forEach((c, x) => charge(c, next, thread, x + 1 < candidates.length ? calls.start[candidates[x + 1]!]! : Infinity));
          }
          candidates.length = 0;
        }
        issuedBefore = true;
        continue;
      }
      if (nested || !issuedBefore) continue;
      if (candidateName[calls.nameId[k]!] === 1) candidates.push(k);
    }
  }
  // A call is charged the GPU idle time while the host sat in it; a
  // synchronize also the idle time after it until the thread's next
  // operation started (it drained the queue, so the GPU waits for the
  // host), unless another candidate call takes over first. The charged
  // intervals never overlap, so costs add up.
  function charge(k: number, nextOp: number, thread: string, until: number): void {
    const device = ops.device[nextOp]!;
    const name = nameOfCall(ctx, k);
    const end = SYNC.test(name) ? Math.min(until, ops.start[nextOp]!) : Math.min(calls.end[k]!, ops.start[nextOp]!);
    const idle = idleWithin(ctx.busy.get(device)!, calls.start[k]!, end);
    const key = `${thread}:${name}:${device}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { name, calls: [], nextOps: [], idle: 0, blocked: 0, pid: calls.pid[k]!, tid: calls.tid[k]!, device }));
    g.calls.push(k);
    g.nextOps.push(nextOp);
    g.idle += idle;
    g.blocked += calls.end[k]! - calls.start[k]!;
  }
  const findings: Finding[] = [];
  for (const g of groups.values()) {
    if (g.idle <= 0) continue; // the GPU had other work queued: the wait cost nothing
    const ev = newEvidence();
    for (const k of g.calls) addCall(ctx, ev, k);
    for (const i of g.nextOps) addOp(ctx, ev, i);
    const isSync = SYNC.test(g.name);
    findings.push({
      kind: 'host-blocking-call',
      severity: severityByCost(ctx, g.idle),
      title: `${g.name} blocked thread ${g.tid} ${g.calls.length} time${g.calls.length > 1 ? 's' : ''} between launches; GPU idle ${formatDuration(g.idle)}`,
      explanation:
        `${g.name} ${isSync ? 'waits for the GPU to finish' : 'synchronizes the device implicitly'}, so thread ${g.tid} of process ${g.pid} ` +
        `spent ${formatDuration(g.blocked)} in it instead of issuing the next work, and the GPU then idled ${formatDuration(g.idle)} until that work arrived.`,
      fix: isSync
        ? 'Synchronize once, after all work is issued, or wait on an event for just the result you need (cudaStreamWaitEvent between streams keeps the host free).'
        : 'Allocate once before the loop and reuse the buffers (or use the stream-ordered cudaMallocAsync / cudaFreeAsync, or a memory pool).',
      costNs: g.idle,
      deviceId: g.device,
      pid: g.pid,
      evidence: ev,
      nsightRule: 'cuda_api_sync',
    });
  }
  return findings;
}
