// RecordingQuery keeps a few analyses (profiler/query/recording-query.ts):
// ranges selected on the ruler come and go, but the steady state and the
// whole recording — what every page opens on — are not pushed out by them
// (browser mode: many pages selecting ranges at once would otherwise have
// every page's next steady-state view analyse the recording again).
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';

const q = new RecordingQuery('r', path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite'));
afterAll(() => q.close());

describe('the analyses kept', () => {
  it('the steady state and the whole stay while selections come and go; the oldest selection goes', () => {
    const steady = q.analysis({ kind: 'steady-state' });
    const whole = q.analysis({ kind: 'whole' });
    const { startNs, endNs } = q.summary();
    const span = endNs - startNs;
    const selection = (k: number) => ({
      kind: 'window' as const,
      startNs: Math.round(startNs + (span * k) / 20),
      endNs: Math.round(startNs + (span * (k + 10)) / 20),
    });
    const first = q.analysis(selection(0));
    for (let k = 1; k <= 6; k++) q.analysis(selection(k));
    expect(q.analysis({ kind: 'steady-state' })).toBe(steady);
    expect(q.analysis({ kind: 'whole' })).toBe(whole);
    expect(q.analysis(selection(6))).toBe(q.analysis(selection(6)));
    expect(q.analysis(selection(0))).not.toBe(first);
  });
});
