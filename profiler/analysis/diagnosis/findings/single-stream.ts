// All independent work on one stream: a process that puts copies and
// kernels of a device on a single stream gets no overlap at all, because a
// stream runs its work in issue order. The cost is an upper bound: with
// perfect pipelining over enough streams the device would be limited by
// its busiest engine (compute, the HtoD engine or the DtoH engine) alone,
// so the gain is the time the stream was busy less that floor. Busy time is
// the union of its operations, not their sum: on one stream they cannot
// overlap, except where a CUDA graph's branches run side by side or a
// record's end is off (the corpus's torch-launch-bound-graphs fix: one
// 32 KiB device-to-device copy recorded as lasting the whole 37 ms loop while
// 12,000 kernels ran on its stream, which the sum charged as 31 ms to gain,
// an error, where the stream was busy 40 ms against a floor of 38).
import { formatDuration } from '../../../contract/time.ts';
import { OpCategory } from '../../trace.ts';
import { addOp, gpuName, newEvidence, severityByCost, streamLabel, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

/** Fewer operations than this are not worth pipelining. */
const MIN_OPS = 4;

export function singleStream(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  // Whether a process used more than one stream is all that matters: no
  // set of streams per op (a Set.add per op cost ~0.5 s at 10 M ops).
  type Use = { stream: number; multi: boolean; count: number; perCategory: Float64Array; present: number; sum: number; busy: number; busyEnd: number };
  const uses = new Map<number, Use>();
  const { pid: opPid, device: opDevice, stream: opStream, category: opCategory, start: opStart, end: opEnd } = ops;
  // Runs of one process and device are long: look the entry up when the key changes.
  let lastKey = NaN;
  let u: Use | undefined;
  for (let i = 0; i < ops.length; i++) {
    const key = opPid[i]! * 4096 + opDevice[i]!; // numeric: no string per op
    if (key !== lastKey) {
      lastKey = key;
      u = uses.get(key);
      if (!u)
        uses.set(
          key,
          (u = { stream: opStream[i]!, multi: false, count: 0, perCategory: new Float64Array(8), present: 0, sum: 0, busy: 0, busyEnd: -Infinity }),
        );
    }
    // A process of several streams is never reported: its counts and sums
    // are not read, so its ops cost no more than this test (at 10 M ops,
    // four columns fewer read per op).
    if (u!.multi) continue;
    if (opStream[i] !== u!.stream) {
      u!.multi = true;
      continue;
    }
    u!.count++;
    const d = opEnd[i]! - opStart[i]!;
    const c = opCategory[i]!;
    u!.perCategory[c]! += d;
    u!.present |= 1 << c;
    u!.sum += d;
    // The union's length, the operations coming in start order.
    if (d > 0 && opEnd[i]! > u!.busyEnd) {
      u!.busy += opEnd[i]! - Math.max(opStart[i]!, u!.busyEnd);
      u!.busyEnd = opEnd[i]!;
    }
  }
  const findings: Finding[] = [];
  for (const [key, u] of uses) {
    const pid = Math.floor(key / 4096);
    const device = key % 4096;
    const stream = u.stream;
    if (u.multi || u.count < MIN_OPS) continue;
    const has = (c: number) => (u.present & (1 << c)) !== 0;
    const hasCompute = has(OpCategory.Compute);
    const hasCopies = has(OpCategory.HtoD) || has(OpCategory.DtoH);
    if (!hasCompute || !hasCopies) continue; // nothing that could run side by side
    const bound = u.perCategory.reduce((m, ns) => Math.max(m, ns), -Infinity);
    const busy = Math.min(u.sum, u.busy);
    const cost = busy - bound;
    if (cost <= 0) continue;
    const ev = newEvidence();
    for (let i = 0; i < ops.length; i++) if (ops.pid[i]! * 4096 + ops.device[i]! === key) addOp(ctx, ev, i);
    findings.push({
      kind: 'single-stream',
      severity: severityByCost(ctx, cost),
      title: `All ${u.count} operations of process ${pid} on ${gpuName(ctx, device)} ran on one stream: copies never overlapped kernels (up to ${formatDuration(cost)} to gain)`,
      explanation:
        `Every copy and kernel went to ${streamLabel(ctx, stream)}, and a stream runs its work strictly in order, so the copy engines and the SMs took turns. ` +
        `The busiest engine alone needs ${formatDuration(bound)} of the ${formatDuration(busy)} the stream was busy: that is the floor with perfect pipelining.`,
      fix: 'Split the work into independent chunks and give each chunk its own stream (its copy in, kernel and copy out on that stream), from pinned host memory.',
      costNs: cost,
      deviceId: device,
      pid,
      evidence: ev,
      fixId: 'split-streams',
    });
  }
  return findings;
}
