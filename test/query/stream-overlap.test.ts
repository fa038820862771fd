// The Stats tab's overlap matrix (analysis/stream-overlap.ts) equals the one
// the diagnosis's stream pairs compute the slow way, on real recordings.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { streamOverlapByDevice } from '../../profiler/analysis/stream-overlap.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixtures = ['normalise-concurrent', 'normalise-default-stream', 'matmul-multi-gpu-h200x2', 'torch_streams', 'multiprocess_cupy'];

describe('streamOverlapByDevice', () => {
  it.each(fixtures)('%s: same streams, busy time and pairwise overlap as stream-pairs', (name) => {
    const db = openRecording(path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`), { readonly: true });
    try {
      const { trace, diagnosis } = analyze(db);
      const fast = streamOverlapByDevice(trace);
      const slow = diagnosis.context.pairs;
      expect(fast.map((d) => [d.deviceId, d.streamIds])).toEqual(slow.map((p) => [p.deviceId, p.streamIds]));
      fast.forEach((d, k) => {
        d.overlapNs.forEach((row, i) => row.forEach((v, j) => expect(v).toBeCloseTo(slow[k]!.overlap[i]![j]!, 3)));
        expect(d.busyNs).toEqual(slow[k]!.running.map((r) => r.reduce((t, x, i) => (i % 2 ? t + x - r[i - 1]! : t), 0)));
      });
    } finally {
      db.close();
    }
  });
});
