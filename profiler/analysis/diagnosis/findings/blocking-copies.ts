// Copies and memsets the host has to wait for: async copies from or to
// pageable memory (the driver stages them through a pinned buffer and the
// call returns only when staging is done, so nothing overlaps them), and
// synchronous cudaMemcpy / cudaMemset. Reads of values back to the host
// (copy-idioms.ts) are readback.ts's. Nsight Systems' rules
// cuda_memcpy_async, cuda_memcpy_sync and cuda_memset_sync flag every such
// call; here each finding also says what it cost: the GPU idle time while
// the host was held in those calls, and for pageable copies the transfer
// time lost against pinned bandwidth.
import { formatBytes, formatDuration } from '../../../contract/time.ts';
import { pinnedGbps } from './bandwidth-ref.ts';
import { idleWithin } from '../../intervals.ts';
import { readbacks } from '../../replay/copy-idioms.ts';
import { OpCategory, OpKind } from '../../trace.ts';
import { addCall, addOp, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

const PAGEABLE = 1;

export function blockingCopies(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  type Group = { ops: number[]; bytes: number; time: number; idle: number; pid: number; device: number };
  const pageable = new Map<string, Group>();
  const reads = new Set(readbacks(ctx.trace, ctx.host).ops);
  const syncCopies = new Map<string, Group>();
  const syncSets = new Map<string, Group>();
  for (let i = 0; i < ops.length; i++) {
    const kind = ops.kind[i]!;
    if (kind === OpKind.Kernel) continue;
    const cat = ops.category[i]!;
    const src = ops.detail[i]! >> 4;
    const dst = ops.detail[i]! & 15;
    let target: Map<string, Group> | null = null;
    if (kind === OpKind.Memcpy && (cat === OpCategory.HtoD || cat === OpCategory.DtoH) && (src === PAGEABLE || dst === PAGEABLE) && ops.isAsync[i])
      target = reads.has(i) ? null : pageable;
    else if (kind === OpKind.Memcpy && !ops.isAsync[i]) target = syncCopies;
    else if (kind === OpKind.Memset && !ops.isAsync[i]) target = syncSets;
    if (!target) continue;
    const key = `${ops.pid[i]}:${ops.device[i]}`;
    let g = target.get(key);
    if (!g) target.set(key, (g = { ops: [], bytes: 0, time: 0, idle: 0, pid: ops.pid[i]!, device: ops.device[i]! }));
    g.ops.push(i);
    g.bytes += ops.bytes[i]!;
    g.time += ops.end[i]! - ops.start[i]!;
    // GPU idle while the host sat in the call that issued it.
    const k = ctx.host.opCall[i]!;
    if (k >= 0) g.idle += idleWithin(ctx.busy.get(ops.device[i]!)!, ctx.host.calls.start[k]!, ctx.host.calls.end[k]!);
  }
  const findings: Finding[] = [];
  for (const g of pageable.values()) {
    const ev = newEvidence();
    let pinnedTime = 0;
    let known = true;
    for (const i of g.ops) {
      addOp(ctx, ev, i);
      const k = ctx.host.opCall[i]!;
      if (k >= 0) addCall(ctx, ev, k);
      const bw = pinnedGbps(ctx, ops.device[i]!, ops.category[i]!);
      if (bw === null) known = false;
      else pinnedTime += ops.bytes[i]! / bw;
    }
    const lost = known ? Math.max(0, g.time - pinnedTime) : 0;
    const cost = lost + g.idle;
    findings.push({
      kind: 'pageable-async-copy',
      severity: severityByCost(ctx, cost),
      title: `${g.ops.length} async copies from/to pageable memory (${formatBytes(g.bytes)}, ${formatDuration(g.time)}) could not overlap`,
      explanation:
        'cudaMemcpyAsync with pageable host memory is staged by the driver through its own pinned buffer: the call returns only once the data is staged ' +
        '(host to device) or delivered (device to host), so the host cannot issue the next work meanwhile and the copy overlaps nothing. ' +
        (known ? `At pinned bandwidth these copies would take ${formatDuration(pinnedTime)} instead of ${formatDuration(g.time)}; ` : '') +
        `the GPU sat idle ${formatDuration(g.idle)} while the host was held in these calls.`,
      fix: 'Allocate the host buffers page-locked (cudaMallocHost / cudaHostAlloc, or cudaHostRegister an existing buffer; pin_memory=True in PyTorch, cupyx.empty_pinned in CuPy, cuda.pinned_array in Numba).',
      costNs: cost,
      deviceId: g.device,
      pid: g.pid,
      evidence: ev,
      fixId: 'pin-pageable',
      nsightRule: 'cuda_memcpy_async',
    });
  }
  for (const [what, groups, rule] of [
    ['copies', syncCopies, 'cuda_memcpy_sync'],
    ['memsets', syncSets, 'cuda_memset_sync'],
  ] as const) {
    for (const g of groups.values()) {
      const ev = newEvidence();
      for (const i of g.ops) {
        addOp(ctx, ev, i);
        const k = ctx.host.opCall[i]!;
        if (k >= 0) addCall(ctx, ev, k);
      }
      findings.push({
        kind: what === 'copies' ? 'sync-copy' : 'sync-memset',
        severity: severityByCost(ctx, g.idle),
        title: `${g.ops.length} synchronous ${what} (${formatBytes(g.bytes)}) held the host; GPU idle ${formatDuration(g.idle)} meanwhile`,
        explanation:
          `Synchronous ${what === 'copies' ? 'cudaMemcpy' : 'cudaMemset'} returns only when the operation is done, and it runs in the legacy default stream's order: ` +
          'no other work can be issued while it runs.',
        fix:
          what === 'copies'
            ? 'Use cudaMemcpyAsync on the stream the data belongs to, from pinned host memory, and synchronize once where the result is needed.'
            : 'Use cudaMemsetAsync on the stream the buffer belongs to.',
        costNs: g.idle,
        deviceId: g.device,
        pid: g.pid,
        evidence: ev,
        nsightRule: rule,
      });
    }
  }
  return findings;
}
