// Reads of values back to the host (copy-idioms.ts: a small copy device to
// host that held the host, by itself or with the synchronize right after
// it): PyTorch's `loss.item()` or `.cpu()` every step, CuPy's `asnumpy` of
// a scalar. Each waits until everything queued before it on its stream has
// run, so the GPU's queue drains at every read and the GPU then idles
// until the host issues the next work. The cost charged here is that idle
// time, from the copy call's start to the start of the next operation its
// thread issued; the diagnosis replaces it with the what-if's
// (defer-readback) where the replay applies.
import { formatBytes, formatDuration } from '../../../contract/time.ts';
import { READBACK_MAX_BYTES, readbacks } from '../../replay/copy-idioms.ts';
import { idleWithin } from '../../intervals.ts';
import { addCall, addOp, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

export function blockingReadbacks(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const { calls, opCall } = ctx.host;
  const reads = readbacks(ctx.trace, ctx.host);
  if (reads.ops.length === 0) return [];
  // Per call: its first op (the next work a thread issued), and the readback it made (-1: none).
  const firstOp = new Int32Array(calls.length).fill(-1);
  for (let i = 0; i < ops.length; i++) {
    const k = opCall[i]!;
    if (k >= 0 && (firstOp[k]! < 0 || ops.start[i]! < ops.start[firstOp[k]!]!)) firstOp[k] = i;
  }
  const readOp = new Int32Array(calls.length).fill(-1);
  for (const i of reads.ops) readOp[opCall[i]!] = i;
  type Group = { ops: number[]; calls: number[]; bytes: number; idle: number; waited: number; pid: number; device: number };
  const groups = new Map<string, Group>();
  for (const list of ctx.host.threads.values()) {
    // The group of the readback whose call the thread is in, until its next work, and that call's start.
    let open: Group | null = null;
    let openedAt = 0;
    for (let j = 0; j < list.length; j++) {
      const k = list[j]!;
      const i = readOp[k]!;
      if (i >= 0) {
        const key = `${ops.pid[i]}:${ops.device[i]}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { ops: [], calls: [], bytes: 0, idle: 0, waited: 0, pid: ops.pid[i]!, device: ops.device[i]! }));
        g.ops.push(i);
        g.calls.push(k);
        g.bytes += ops.bytes[i]!;
        // Held from the call's start until the value arrived: the work queued before it.
        g.waited += Math.max(0, ops.end[i]! - calls.start[k]!);
        open = g;
        openedAt = calls.start[k]!;
        continue;
      }
      if (reads.syncs[k]) {
        open?.calls.push(k);
        continue;
      }
      if (open && firstOp[k]! >= 0) {
        open.idle += idleWithin(ctx.busy.get(open.device)!, openedAt, Math.max(openedAt, ops.start[firstOp[k]!]!));
        open = null;
      }
    }
  }
  const findings: Finding[] = [];
  for (const g of groups.values()) {
    const ev = newEvidence();
    for (const i of g.ops) addOp(ctx, ev, i);
    for (const k of g.calls) addCall(ctx, ev, k);
    findings.push({
      kind: 'blocking-readback',
      severity: severityByCost(ctx, g.idle),
      title:
        g.ops.length === 1
          ? `1 read of a value back to the host (${formatBytes(g.bytes)}) waited for the GPU work queued before it; GPU idle ${formatDuration(g.idle)}`
          : `${g.ops.length} reads of values back to the host (${formatBytes(g.bytes / g.ops.length)} each) each waited for the GPU work queued before them; GPU idle ${formatDuration(g.idle)}`,
      explanation:
        `A copy to the host of at most ${formatBytes(READBACK_MAX_BYTES)} that the host waits for, in the copy call or in the synchronize right after it, is a read of a value: ` +
        "PyTorch's .item(), .cpu() or printing a tensor, CuPy's asnumpy of a few numbers. It cannot complete before everything issued before it on its stream has run, " +
        `so the GPU's queue drains at every read: the host waited ${formatDuration(g.waited)} for the values, and the GPU then idled ${formatDuration(g.idle)} until the host issued the next work.`,
      fix: 'Keep the value on the GPU and read it once, after the loop (sum the loss as a tensor: running += loss.detach()), or copy it with non_blocking=True into pinned memory and read it a step later.',
      costNs: g.idle,
      deviceId: g.device,
      pid: g.pid,
      evidence: ev,
      fixId: 'defer-readback',
    });
  }
  return findings;
}
