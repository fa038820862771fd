// Host-blocking calls between launches: synchronize calls, and the
// allocation calls that synchronize implicitly (cudaMalloc/cudaFree,
// pinned alloc/free, host register/unregister), made by a thread after it
// issued GPU work and before it issued more. While the host waits, it
// cannot issue; when the call returns, the GPU has drained and idles until
// the next work arrives. Nsight Systems' cuda_api_sync rule lists such
// calls; here each is charged the GPU idle time from the call's start to
// the start of the next operation the thread issued, and the last sync of a
// thread (the one a program needs before reading results) is not flagged.
//
// Which calls these are, and which kind of blocking call each is, comes
// from call-families.ts. One finding per thread, device and family: the
// calls of a family share one fix (cuMemHostRegister and
// cuMemHostUnregister both go when the buffers are pinned once), and the
// finding names the what-if fix for its family (fixForFamily, whatif.ts),
// which the diagnosis estimates (diagnose.ts).
import { formatDuration } from '../../../contract/time.ts';
import { blocksOnDevice, type BlockingFamily } from '../../../cuda/call-families.ts';
import { readbacks } from '../../replay/copy-idioms.ts';
import { idleWithin } from '../../intervals.ts';
import { fixForFamily } from '../../replay/whatif.ts';
import { addCall, addOp, callFamilies, nameOfCall, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

/** What the calls of a family do to the device (the finding's explanation starts with it), and what to change. */
const ABOUT: Record<BlockingFamily, { does: (names: string, one: boolean) => string; fix: string }> = {
  sync: {
    does: (names, one) => `${names} ${one ? 'waits' : 'wait'} for the GPU to finish the work queued before ${one ? 'it' : 'them'}.`,
    fix: 'Synchronize once, after all work is issued, or wait on an event for just the result you need (cudaStreamWaitEvent between streams keeps the host free).',
  },
  alloc: {
    does: (names) =>
      `Device memory allocation and free (${names}) are not stream-ordered: the driver may make the whole device finish its queued work before the call returns (cudaFree does), and the call takes host time of its own.`,
    fix: "Allocate in stream order with cudaMallocAsync / cudaFreeAsync or a memory pool (cudaMemPool), or let the framework's caching allocator reuse memory (PyTorch's CUDA caching allocator, CuPy's memory pool) instead of raw cudaMalloc/cudaFree; or allocate the buffers once before the loop and reuse them.",
  },
  'pinned-alloc': {
    does: (names) =>
      `Allocating or freeing page-locked host memory (${names}) pins or releases the pages, maps them for the GPU or unmaps them, and synchronizes the device; it takes longer the larger the buffer.`,
    fix: 'Allocate the pinned buffers once before the loop and reuse them in every iteration (cudaHostAlloc / cudaMallocHost once; numba.cuda.pinned_array, torch.Tensor.pin_memory(), cupyx.empty_pinned once), and free them after it.',
  },
  register: {
    does: (names) =>
      `Registering host memory (${names}; Numba's \`cuda.pinned(...)\` registers its arrays on entering the with-block and unregisters them on leaving it) pins the pages and maps them for the GPU, or unmaps and unpins them, and synchronizes the device; it takes longer the larger the buffer.`,
    fix: 'Pin the buffers once, outside the loop (Numba: one `with cuda.pinned(...)` around the whole loop; CUDA: cudaHostRegister before the loop, cudaHostUnregister after it), or allocate pinned buffers once (cudaHostAlloc, numba.cuda.pinned_array, torch.Tensor.pin_memory(), cupyx.empty_pinned) and reuse them.',
  },
};

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
  const families = callFamilies(ctx);
  // The synchronize right after a read of a value is that read's (readback.ts).
  const readbackSyncs = readbacks(ctx.trace, ctx.host).syncs;
  type Group = {
    family: BlockingFamily;
    calls: number[];
    nextOps: number[];
    idle: number;
    blocked: number;
    pid: number;
    tid: number;
    device: number;
    /** Per call name: calls and GPU idle charged. */
    byName: Map<string, { calls: number; idle: number }>;
  };
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
      if (nested || !issuedBefore || readbackSyncs[k]) continue;
      if (blocksOnDevice(families.family(calls.nameId[k]!))) candidates.push(k);
    }
  }
  // A call is charged the GPU idle time while the host sat in it; a
  // synchronize also the idle time after it until the thread's next
  // operation started (it drained the queue, so the GPU waits for the
  // host), unless another candidate call takes over first. The charged
  // intervals never overlap, so costs add up.
  function charge(k: number, nextOp: number, thread: string, until: number): void {
    const device = ops.device[nextOp]!;
    const family = families.family(calls.nameId[k]!);
    if (!blocksOnDevice(family)) return; // candidates are all of blocking families
    const name = nameOfCall(ctx, k);
    const end = family === 'sync' ? Math.min(until, ops.start[nextOp]!) : Math.min(calls.end[k]!, ops.start[nextOp]!);
    const idle = idleWithin(ctx.busy.get(device)!, calls.start[k]!, end);
    const key = `${thread}:${family}:${device}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { family, calls: [], nextOps: [], idle: 0, blocked: 0, pid: calls.pid[k]!, tid: calls.tid[k]!, device, byName: new Map() }));
    g.calls.push(k);
    g.nextOps.push(nextOp);
    g.idle += idle;
    g.blocked += calls.end[k]! - calls.start[k]!;
    const n = g.byName.get(name) ?? { calls: 0, idle: 0 };
    n.calls++;
    n.idle += idle;
    g.byName.set(name, n);
  }
  const findings: Finding[] = [];
  for (const g of groups.values()) {
    if (g.idle <= 0) continue; // the GPU had other work queued: the wait cost nothing
    const ev = newEvidence();
    for (const k of g.calls) addCall(ctx, ev, k);
    for (const i of g.nextOps) addOp(ctx, ev, i);
    // The calls that cost most first: the title names them all.
    const byName = [...g.byName].sort((a, b) => b[1].idle - a[1].idle || b[1].calls - a[1].calls);
    const names = byName.map(([name]) => name);
    const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
    const breakdown =
      names.length === 1
        ? ''
        : ` (${byName.map(([name, n]) => `${name}: ${n.calls} call${n.calls > 1 ? 's' : ''}, GPU idle ${formatDuration(n.idle)}`).join('; ')})`;
    const about = ABOUT[g.family];
    findings.push({
      kind: 'host-blocking-call',
      severity: severityByCost(ctx, g.idle),
      title: `${list} blocked thread ${g.tid} ${g.calls.length} time${g.calls.length > 1 ? 's' : ''} between launches; GPU idle ${formatDuration(g.idle)}`,
      explanation:
        `${about.does(list, names.length === 1)} Thread ${g.tid} of process ${g.pid} spent ${formatDuration(g.blocked)} in ${g.calls.length > 1 ? 'these calls' : 'the call'} ` +
        `instead of issuing the next work, and the GPU then idled ${formatDuration(g.idle)} until that work arrived${breakdown}.`,
      fix: about.fix,
      costNs: g.idle,
      deviceId: g.device,
      pid: g.pid,
      evidence: ev,
      callFamily: g.family,
      fixId: fixForFamily(g.family),
      nsightRule: 'cuda_api_sync',
    });
  }
  return findings;
}
