// Operations recorded overlapping on their own stream. A stream runs its work
// in order, yet a recording can show one operation running while the next
// ones on its stream do: a CUDA graph's branches launched on one stream, or
// a record whose end is off. The corpus's torch-launch-bound-graphs fix, in
// both rounds (H200), has a 32 KiB device-to-device copy recorded as lasting
// the whole loop while 12,000 kernels ran on its stream. single-stream.ts
// charged the stream's summed work as if it had run end to end (an error
// finding, "31.4 ms to gain", on the fixed program), and the replay ran the
// kernels after the copy (the unchanged run replayed in 76 ms where it took
// 41, each what-if predicting a slower run).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { replay } from '../../profiler/analysis/replay/replay.ts';
import { openRecording } from '../../profiler/store/database.ts';

const corpus = path.resolve(import.meta.dirname, '../fixtures/corpus');

function analyzed(file: string) {
  const db = openRecording(path.join(corpus, file), { readonly: true });
  try {
    const a = analyze(db);
    void a.diagnosis;
    const longest = db
      .prepare('SELECT (end_ns - start_ns) AS ns, start_ns AS s, end_ns AS e, stream_id AS stream FROM memcpys ORDER BY end_ns - start_ns DESC LIMIT 1')
      .get() as {
      ns: number;
      s: number;
      e: number;
      stream: number;
    };
    const inside = db
      .prepare('SELECT count(*) AS n FROM kernels WHERE stream_id = ? AND start_ns > ? AND end_ns < ?')
      .get(longest.stream, longest.s, longest.e) as { n: number };
    return { a, longest, inside: inside.n };
  } finally {
    db.close();
  }
}

describe('operations recorded overlapping on their own stream', () => {
  it.each(['torch-launch-bound-graphs/fix.sqlite', 'torch-launch-bound-graphs/round-2/fix.sqlite'])(
    '%s: the stream charged its busy time, the replay runs what the recording ran',
    (file) => {
      const { a, longest, inside } = analyzed(file);
      // The recording as described: one copy lasting the loop, thousands of kernels on its stream inside it.
      expect(longest.ns).toBeGreaterThan(25e6);
      expect(inside).toBeGreaterThanOrEqual(10_000);
      const span = a.diagnosis.context.gpuSpan.end - a.diagnosis.context.gpuSpan.start;
      // single-stream: at most the stream's busy time less its busiest engine, a few ms, where the sum made it ~30 ms.
      const single = a.diagnosis.findings.filter((f) => f.kind === 'single-stream');
      for (const f of single) {
        expect(f.costNs).toBeLessThan(0.15 * span);
        expect(f.explanation).toMatch(/the stream was busy/);
      }
      // The unchanged recording replays within 10% of its measured GPU span (it replayed 87% over).
      const unchanged = replay(a.trace, a.host).gpuSpanNs;
      expect(Math.abs(unchanged / span - 1)).toBeLessThan(0.1);
      // No what-if predicts a run slower than the one measured.
      for (const f of a.diagnosis.findings) if (f.whatIf) expect(f.whatIf.predictedNs).toBeLessThanOrEqual(f.whatIf.measuredNs * 1.05);
    },
  );

  it('a stream whose work did run end to end is charged as before (runner-serial: busy time is the summed work)', () => {
    const { a } = analyzed('runner-serial/bug.sqlite');
    const f = a.diagnosis.findings.find((x) => x.kind === 'single-stream')!;
    expect(f.ruleCostNs).toBeDefined();
    expect(f.explanation).toMatch(/The busiest engine alone needs 27\.4 ms of the 56\.5 ms the stream was busy/);
    expect(f.title).toMatch(/up to 29\.1 ms to gain/);
  });
});
