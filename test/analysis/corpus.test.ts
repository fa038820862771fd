// The diagnosis on the bug/fix corpus (test/fixtures/corpus, issue 25):
// real programs, each a common mistake and its fix, recorded on an H200,
// each pair in every round it was recorded in. For every one, bug.sqlite's
// top finding must name the fix the pair makes — or be a second mistake
// of the program, one the fixed run still has, with the pair's fix leading
// the causes the fix took away — and the what-if of the finding naming the
// fix must predict the GPU span measured in fix.sqlite within the pair's
// tolerance; over the corpus the median error is held to CORPUS_MEDIAN. `npm run bench -- --only corpus` prints the
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

  it('has every pair recorded in a second round too (the same programs, another day)', () => {
    const names = new Set(pairs.map((p) => p.name));
    for (const name of names) expect(pairs.filter((p) => p.name === name).length, name).toBeGreaterThanOrEqual(2);
  });

  describe.each(pairs)('$name, round $round', (pair) => {
    it(`bug's top finding names ${pair.expected.fixId} (or a second mistake before it), and its what-if predicts the fixed run`, () => {
      const r = evaluatePair(pair);
      results.push(r);
      const found = r.analyses.bug.diagnosis.findings.map((f) => `${f.kind}/${f.fixId ?? '-'} ${(f.costNs / 1e6).toFixed(1)} ms`);
      if (!r.secondMistake) expect(r.top?.fixId, `findings: ${found.join('; ')}`).toBe(pair.expected.fixId);
      // A what-if that cannot be modelled must say so instead of saving 0: here each can.
      expect(r.predictedNs, 'the fix finding has a what-if').not.toBeNull();
      expect(r.fixSpanNs).toBeGreaterThan(0);
      expect(Math.abs(r.error!), `predicted ${(r.predictedNs! / 1e6).toFixed(1)} ms, measured ${(r.fixSpanNs / 1e6).toFixed(1)} ms`).toBeLessThanOrEqual(
        pair.expected.tolerance ?? CORPUS_WORST,
      );
      // The fix made the run shorter, and the finding's cost is the time the what-if says it saves.
      expect(r.fixSpanNs).toBeLessThan(r.bugSpanNs);
      expect(r.fixFinding!.costNs).toBeCloseTo(r.fixFinding!.whatIf!.savedNs, 0);
    });
  });

  it(`median what-if error at most ${CORPUS_MEDIAN * 100}% over the corpus`, () => {
    expect(results.length).toBe(pairs.length);
    const errors = results.map((r) => Math.abs(r.error ?? Infinity));
    expect(median(errors), corpusTable(results).join('\n')).toBeLessThanOrEqual(CORPUS_MEDIAN);
  });
});
