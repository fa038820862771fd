// The diagnosis on the bug/fix corpus (test/fixtures/corpus, issue 25):
// real programs, each a common mistake and its fix, recorded on an H200.
// For every pair, bug.sqlite's top finding must name the fix the pair
// makes, and that finding's what-if must predict the GPU span measured in
// fix.sqlite within the pair's tolerance; over the corpus the median error
// is held to CORPUS_MEDIAN. `npm run bench -- --only corpus` prints the
// same table (test/helpers/corpus.ts).
import { describe, expect, it } from 'vitest';
import { median } from '../../bench/stats.ts';
import { CORPUS_MEDIAN, CORPUS_WORST, corpusPairs, corpusTable, evaluatePair, type PairResult } from '../helpers/corpus.ts';

const pairs = corpusPairs();
const results: PairResult[] = [];

describe('the bug/fix corpus', () => {
  it('has at least 12 pairs, each with both recordings and its program', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(12);
  });

  describe.each(pairs)('$name', (pair) => {
    it(`bug's top finding names ${pair.expected.fixId}, and its what-if predicts the fixed run`, () => {
      const r = evaluatePair(pair);
      results.push(r);
      const found = r.analyses.bug.diagnosis.findings.map((f) => `${f.kind}/${f.fixId ?? '-'} ${(f.costNs / 1e6).toFixed(1)} ms`);
      expect(r.top?.fixId, `findings: ${found.join('; ')}`).toBe(pair.expected.fixId);
      // A what-if that cannot be modelled must say so instead of saving 0: here each can.
      expect(r.predictedNs, 'the top finding has a what-if').not.toBeNull();
      expect(r.fixSpanNs).toBeGreaterThan(0);
      expect(Math.abs(r.error!), `predicted ${(r.predictedNs! / 1e6).toFixed(1)} ms, measured ${(r.fixSpanNs / 1e6).toFixed(1)} ms`).toBeLessThanOrEqual(
        pair.expected.tolerance ?? CORPUS_WORST,
      );
      // The fix made the run shorter, and the finding's cost is the time the what-if says it saves.
      expect(r.fixSpanNs).toBeLessThan(r.bugSpanNs);
      expect(r.top!.costNs).toBeCloseTo(r.top!.whatIf!.savedNs, 0);
    });
  });

  it(`median what-if error at most ${CORPUS_MEDIAN * 100}% over the corpus`, () => {
    expect(results.length).toBe(pairs.length);
    const errors = results.map((r) => Math.abs(r.error ?? Infinity));
    expect(median(errors), corpusTable(results).join('\n')).toBeLessThanOrEqual(CORPUS_MEDIAN);
  });
});
