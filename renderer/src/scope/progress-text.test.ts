// What a panel says while it waits for an analysis (progress-text.ts).
import { describe, expect, it } from 'vitest';
import type { AnalysisProgress } from '../../../profiler/contract/api.ts';
import { progressText } from './progress-text.ts';

const steady = { kind: 'steady-state' } as const;
const running = (p: Partial<AnalysisProgress>): AnalysisProgress => ({
  method: 'findings',
  scope: steady,
  phase: 'loading',
  done: 0,
  total: 0,
  elapsedMs: 0,
  queued: 0,
  ...p,
});

describe('progressText', () => {
  it('says how far our analysis has got, and how long the panel has waited', () => {
    expect(progressText({ progress: running({ total: 20_400_000 }), since: 0, at: 3_400 }, steady)).toBe('loading 20.4 M operations and API calls · 3 s');
    // Rows read so far, where the loader's counter is read (an analysis in a thread).
    expect(progressText({ progress: running({ done: 8_200_000, total: 20_400_000 }), since: 0, at: 3_400 }, steady)).toBe(
      'loading 8.2 M of 20.4 M operations and API calls (40%) · 3 s',
    );
    expect(progressText({ progress: running({ phase: 'diagnosing', done: 2, total: 13, detail: 'host blocking' }), since: 0, at: 999 }, steady)).toBe(
      'rule 3 of 13 (15%): host blocking',
    );
    expect(
      progressText({ progress: running({ phase: 'what-if', done: 1, total: 2, detail: 'pageable copies pinned' }), since: 1_000, at: 13_500 }, steady),
    ).toBe('replaying what-if 2 of 2 (50%): pageable copies pinned · 12 s');
  });

  it("names another scope's analysis running ahead of ours, and says nothing before there is anything to say", () => {
    expect(progressText({ progress: running({ scope: { kind: 'whole' }, phase: 'modelling', total: 1_000_000 }), since: 0, at: 2_000 }, steady)).toBe(
      'waiting for the analysis of whole recording (modelling 1.0 M API calls for the replay) · 2 s',
    );
    expect(progressText({ progress: running({ method: 'waitSpans', scope: null, phase: 'selecting', total: 5_000 }), since: 0, at: 0 }, steady)).toBe(
      "waiting for the timeline's event waits (selecting the scope among 5,000 operations)",
    );
    expect(progressText({ progress: null, since: 0, at: 400 }, steady)).toBe('');
    expect(progressText({ progress: null, since: 0, at: 61_000 }, steady)).toBe('61 s');
    expect(progressText(null, steady)).toBe('');
  });
});
