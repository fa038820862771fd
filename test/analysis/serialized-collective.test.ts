// The serialized-collective rule and its what-if (issue 13) on hand-built
// data-parallel steps: eight compute kernels (the backward pass) and four
// NCCL all-reduces (the gradient buckets) per step, written three ways:
//
//   same-stream serial   the all-reduces after the whole step on the compute
//                        stream (PyTorch ≥ 2.6 runs a blocking collective
//                        on the current stream)
//   event serial         on NCCL's stream, each after an event wait on the
//                        compute stream's last kernel (older PyTorch)
//   overlapped           each bucket's all-reduce on NCCL's stream as soon
//                        as its two kernels are done (DDP)
//
// The compute kernels' 200 blocks of 1024 threads fit beside the NCCL
// kernel's one SM (an H100 holds 264), so overlapping slows neither: the
// what-if's contention (more waves of blocks on fewer SMs) is checked on
// its own below.
//
// Their "recorded" times are the replay's own (every op as soon as its
// dependencies and the SMs allow), so these tests check the rule's and the
// fix's arithmetic; the real recordings (test/gpu, the NCCL fixtures) check
// the model.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectiveDependencies } from '../../profiler/analysis/replay/collective-groups.ts';
import { buildContext } from '../../profiler/analysis/diagnosis/findings/context.ts';
import { serializedCollectives } from '../../profiler/analysis/diagnosis/findings/serialized-collective.ts';
import type { Host } from '../../profiler/analysis/host.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { replay } from '../../profiler/analysis/replay/replay.ts';
import type { Trace } from '../../profiler/analysis/trace.ts';
import { fixLabel, tryEstimate } from '../../profiler/analysis/replay/whatif.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { StreamFlags } from '../../profiler/store/enums.ts';
import { build, type OpSpec } from '../helpers/replay-traces.ts';

const STEPS = 5;
const KERNELS = 8;
const BUCKETS = 4;
const COMPUTE_NS = 100_000;
const ALLREDUCE_NS = 80_000;
const COMPUTE = 1;
const NCCL = 3;

type Style = 'same-stream' | 'events' | 'overlapped';
type EventSpec = { after: number; eventId: number; stream: number; wait: boolean };

function step(style: Style, computeBlocks = 200): { trace: Trace; host: Host } {
  const specs: OpSpec[] = [];
  const events: EventSpec[] = [];
  let eventId = 1;
  // Makes stream `to` wait for what stream `from` has done so far, at the call of the next op.
  const order = (from: number, to: number) => {
    const after = specs.length - 1;
    if (after < 0) return;
    events.push({ after, eventId, stream: from, wait: false }, { after, eventId: eventId++, stream: to, wait: true });
  };
  const compute = () => specs.push({ kind: 'kernel', stream: COMPUTE, blocks: computeBlocks, ns: COMPUTE_NS });
  const allReduce = (stream: number) => specs.push({ kind: 'kernel', stream, blocks: 2, nccl: true, ns: ALLREDUCE_NS });
  for (let s = 0; s < STEPS; s++) {
    if (s > 0 && style !== 'same-stream') order(NCCL, COMPUTE); // the step's results are needed
    for (let b = 0; b < BUCKETS; b++) {
      for (let k = 0; k < KERNELS / BUCKETS; k++) compute();
      if (style === 'overlapped') {
        order(COMPUTE, NCCL);
        allReduce(NCCL);
      }
    }
    for (let b = 0; b < BUCKETS && style !== 'overlapped'; b++) {
      if (style === 'events') order(COMPUTE, NCCL);
      allReduce(style === 'events' ? NCCL : COMPUTE);
    }
  }
  const built = build({ [COMPUTE]: StreamFlags.NonBlocking, [NCCL]: StreamFlags.NonBlocking }, specs, events);
  // Recorded = replayed: every op as early as its dependencies allow.
  const r = replay(built.trace, built.host);
  built.trace.ops.start.set(r.start);
  built.trace.ops.end.set(r.end);
  built.trace.span = { start: r.gpuStart, end: r.gpuEnd };
  return built;
}

const spanOf = (t: Trace) => t.span.end - t.span.start;

describe('serialized collectives', () => {
  it('the steps take as long as the arithmetic says: serialized 8 × 100 + 4 × 80 µs, overlapped 8 × 100 + 80 µs (plus the GPU latency between dependent ops)', () => {
    const serialized = STEPS * (KERNELS * COMPUTE_NS + BUCKETS * ALLREDUCE_NS);
    const overlapped = STEPS * (KERNELS * COMPUTE_NS + ALLREDUCE_NS);
    for (const style of ['same-stream', 'events'] as const) expect(spanOf(step(style).trace) / serialized - 1).toBeLessThan(0.08);
    expect(spanOf(step('overlapped').trace) / overlapped - 1).toBeLessThan(0.08);
  });

  for (const style of ['same-stream', 'events'] as const) {
    it(`${style}: one group of 4 all-reduces per step, after all 8 kernels of it; the finding, and a what-if equal to the overlapped run`, () => {
      const { trace, host } = step(style);
      const { groups } = collectiveDependencies(trace, host);
      expect(groups.map((g) => [g.collectives.length, g.segmentKernels.length, g.sameStream])).toEqual(
        Array.from({ length: STEPS }, () => [BUCKETS, KERNELS, style === 'same-stream']),
      );

      const findings = serializedCollectives(buildContext(trace, host));
      expect(findings).toHaveLength(1);
      const f = findings[0]!;
      expect(f.kind).toBe('serialized-collective');
      expect(f.fixId).toBe('overlap-collectives');
      expect(f.evidence.kernels).toHaveLength(STEPS * BUCKETS);
      // Every all-reduce ran alone: all of it exposed.
      expect(f.costNs).toBeCloseTo(STEPS * BUCKETS * ALLREDUCE_NS, -4);
      expect(f.title).toMatch(/20 all-reduces on GPU 0 waited for all the computation before them/);

      const r = tryEstimate(trace, host, 'overlap-collectives');
      if (!('estimate' in r)) throw new Error(r.unavailable);
      const overlapped = spanOf(step('overlapped').trace);
      expect(Math.abs(r.estimate.predictedNs / overlapped - 1)).toBeLessThan(0.01);
      expect(Math.abs(r.estimate.savedNs / (spanOf(trace) - overlapped) - 1)).toBeLessThan(0.01);
      // At least the 3 all-reduces of each step that the overlap hides.
      expect(r.estimate.savedNs).toBeGreaterThanOrEqual(STEPS * (BUCKETS - 1) * ALLREDUCE_NS);
    });
  }

  it('contention: compute kernels that fill the GPU in one wave need two beside the collective, so half of each overlap comes back', () => {
    // 264 blocks: all of an H100's room; the NCCL kernel holds one SM, the GEMM-like kernel then needs two waves.
    const { trace, host } = step('same-stream', 264);
    const r = tryEstimate(trace, host, 'overlap-collectives');
    if (!('estimate' in r)) throw new Error(r.unavailable);
    // Per step: the computation, half of each of the 3 hidden all-reduces again, the last all-reduce.
    const expected = STEPS * (KERNELS * COMPUTE_NS + ((BUCKETS - 1) * ALLREDUCE_NS) / 2 + ALLREDUCE_NS);
    expect(Math.abs(r.estimate.predictedNs / expected - 1)).toBeLessThan(0.08);
    expect(r.estimate.notes.join(' ')).toMatch(/they hold 1\)/);
    // Without contention (the 200-block kernels) it would have been shorter.
    const unhindered = step('same-stream');
    const free = tryEstimate(unhindered.trace, unhindered.host, 'overlap-collectives');
    if (!('estimate' in free)) throw new Error(free.unavailable);
    expect(r.estimate.predictedNs - free.estimate.predictedNs).toBeGreaterThan((0.8 * STEPS * ((BUCKETS - 1) * ALLREDUCE_NS)) / 2);
  });

  it('overlapped: each all-reduce is a group of its own, hidden behind the next bucket; no finding, nothing to estimate', () => {
    const { trace, host } = step('overlapped');
    const { groups } = collectiveDependencies(trace, host);
    expect(groups).toHaveLength(STEPS * BUCKETS);
    expect(groups.every((g) => g.collectives.length === 1)).toBe(true);
    expect(serializedCollectives(buildContext(trace, host))).toEqual([]);
    expect(tryEstimate(trace, host, 'overlap-collectives')).toEqual({
      unavailable: 'no group of collectives waited for a stretch of computation it could overlap',
    });
  });
});

// The same program under PyTorch 2.11 and NCCL 2.28 on an H100, both ranks
// time-sliced on the one GPU (PROVENANCE.md: real in structure, not in
// timing). Per rank 6 steps of 4 buckets, each bucket 3 matmuls and 3 tanh.
describe('serialized collectives in real recordings (nccl-1gpu-*)', () => {
  const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');
  const open = (name: string) => {
    const db = openRecording(path.join(dir, `nccl-1gpu-${name}.sqlite`), { readonly: true });
    try {
      return analyze(db);
    } finally {
      db.close();
    }
  };

  it('serial: per rank one group per step, the 4 blocking all-reduces after its 24 kernels on the compute stream; both ranks get the finding and a what-if', () => {
    const a = open('serial');
    const { groups } = collectiveDependencies(a.trace, a.host);
    const spread = groups.filter((g) => g.collectives.length > 1);
    // 2 ranks × 6 steps (the check's one all-reduce at the end is a group of one).
    expect(spread).toHaveLength(12);
    for (const g of spread) {
      expect(g.collectives).toHaveLength(4);
      expect(g.sameStream).toBe(true);
      expect(g.segmentKernels.length).toBeGreaterThanOrEqual(22);
    }
    const found = a.diagnosis.findings.filter((f) => f.kind === 'serialized-collective');
    expect(found.map((f) => a.diagnosis.context.processes.get(f.pid!)?.rank).sort()).toEqual([0, 1]);
    for (const f of found) {
      expect(f.title).toMatch(/^Rank [01] \(pid \d+\): 24 all-reduces on GPU 0 waited for all the computation before them/);
      expect(f.whatIf?.fix).toBe(fixLabel('overlap-collectives'));
      // What the computation beside them could hide: at most the computation itself.
      expect(f.whatIf!.savedNs).toBeGreaterThan(0);
      expect(f.evidence.kernels).toHaveLength(24);
    }
  });

  it('overlap: every all-reduce waited for its own bucket, through the side stream that only waited (no ops of its own); no finding', () => {
    const a = open('overlap');
    const { groups } = collectiveDependencies(a.trace, a.host);
    const steps = groups.filter((g) => !g.sameStream);
    expect(steps).toHaveLength(2 * 6 * 4);
    for (const g of steps) {
      expect(g.collectives).toHaveLength(1);
      // The bucket: 3 matmuls and 3 tanh (fewer at the very start, where the step waited for the warm-up).
      expect(g.segmentKernels.length).toBeGreaterThanOrEqual(4);
      expect(g.segmentKernels.length).toBeLessThanOrEqual(11);
    }
    expect(a.diagnosis.findings.filter((f) => f.kind === 'serialized-collective')).toEqual([]);
  });
});

// The test of record: the same program on two H200s, one rank each
// (test/gpu/nccl.test.ts made these; PROVENANCE.md), 20 measured steps in
// NVTX ranges "step" after a warm-up step, 256 MB gradients per bucket.
describe('serialized collectives on two H200s (nccl-*-h200x2)', () => {
  const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');
  const steps = { kind: 'range', name: 'step' } as const;
  const open = (name: string) => {
    const db = openRecording(path.join(dir, `nccl-${name}-h200x2.sqlite`), { readonly: true });
    try {
      return analyze(db, { scope: steps });
    } finally {
      db.close();
    }
  };

  it("the serial run's what-if is within 15% of the overlapped run of the same program; the overlapped run gets no finding", () => {
    const serial = open('serial');
    const overlap = open('overlap');
    const found = serial.diagnosis.findings.filter((f) => f.kind === 'serialized-collective');
    expect(found.map((f) => serial.diagnosis.context.processes.get(f.pid!)?.rank).sort()).toEqual([0, 1]);
    expect(overlap.diagnosis.findings.filter((f) => f.kind === 'serialized-collective')).toEqual([]);
    const span = (a: typeof serial) => a.diagnosis.context.gpuSpan.end - a.diagnosis.context.gpuSpan.start;
    const w = found[0]!.whatIf!;
    expect(w.measuredNs).toBe(span(serial));
    // Measured on the GPU: 163 ms serial, 140 ms overlapped, 136 ms predicted.
    expect(span(serial) / span(overlap)).toBeGreaterThan(1.1);
    expect(Math.abs(w.predictedNs / span(overlap) - 1)).toBeLessThan(0.15);
    // The contention counts: without it the prediction would be 110 ms, 22% short.
    expect(w.predictedNs).toBeGreaterThan(0.9 * span(overlap));
  });
});
