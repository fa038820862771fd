// The what-if replay on the real H100 recordings: first, replaying a
// recording unchanged reproduces its measured GPU span; then the product's
// acceptance — with the cause removed, the predicted time of the
// default-stream, pageable and sync-each runs is within 15% of the measured
// concurrent run of the same workload and size.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/load.ts';
import { recordedInput, replay } from '../../profiler/analysis/replay.ts';
import { estimate, type Fix } from '../../profiler/analysis/whatif.ts';
import { openRecording } from '../../profiler/store/database.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');
const contextOf = (name: string) => {
  const db = openRecording(path.join(dir, `${name}.sqlite`), { readonly: true });
  try {
    return analyze(db);
  } finally {
    db.close();
  }
};
const WORKLOADS = ['normalise', 'matmul', 'transpose'];

describe('replay of the unchanged recording', () => {
  // 12%: matmul's kernels run ~25 µs, so a launch-latency estimate off by
  // a few µs per op shows; the larger workloads replay within 7%.
  for (const workload of WORKLOADS) {
    it(`${workload}: every scenario within 12% of its measured GPU span`, () => {
      for (const scenario of ['serial', 'default-stream', 'pageable', 'concurrent', 'events', 'priority', 'sync-each']) {
        const ctx = contextOf(`${workload}-${scenario}`).diagnosis.context;
        const measured = ctx.gpuSpan.end - ctx.gpuSpan.start;
        const replayed = replay(ctx, recordedInput(ctx)).spanNs;
        expect(Math.abs(replayed / measured - 1), `${workload} ${scenario}: measured ${measured} ns, replayed ${replayed} ns`).toBeLessThan(0.12);
      }
    });
  }
});

describe('acceptance: the fix predicted within 15% of the measured concurrent run', () => {
  const cases: [string, Fix][] = [['default-stream', 'move-default-stream'], ['pageable', 'pin-pageable'], ['sync-each', 'remove-host-blocking']];
  for (const workload of WORKLOADS) {
    for (const [scenario, fix] of cases) {
      it(`${workload} ${scenario} (${fix})`, () => {
        const concurrent = contextOf(`${workload}-concurrent`).diagnosis.context;
        const target = concurrent.gpuSpan.end - concurrent.gpuSpan.start;
        const e = estimate(contextOf(`${workload}-${scenario}`).diagnosis.context, fix)!;
        expect(e).not.toBeNull();
        expect(e.predictedNs).toBeLessThan(e.measuredNs);
        expect(Math.abs(e.predictedNs / target - 1), `predicted ${e.predictedNs} ns, concurrent measured ${target} ns`).toBeLessThan(0.15);
      });
    }
  }

  it('the findings carry the estimate, and it is their cost', () => {
    const f = contextOf('normalise-sync-each').diagnosis.findings.find((x) => x.kind === 'host-blocking-call')!;
    expect(f.whatIf).toMatchObject({ fix: expect.stringMatching(/synchronization/) });
    expect(f.costNs).toBe(f.whatIf!.savedNs);
    expect(f.whatIf!.predictedNs).toBeLessThan(f.whatIf!.measuredNs);
  });

  it('no estimate where the fix does not apply, or its reference bandwidth is unknown', () => {
    expect(estimate(contextOf('normalise-concurrent').diagnosis.context, 'pin-pageable')).toBeNull();
    expect(estimate(contextOf('normalise-concurrent').diagnosis.context, 'move-default-stream')).toBeNull();
  });
});
