// The rules' findings are told before the what-if replays (ProgressStep
// .findings, contract/progress.ts): on ten million operations the replays
// take longer than everything before them, and the page shows these
// meanwhile. On real recordings of the corpus (test/fixtures/corpus, H200):
// the early list is the answer's findings, in the rules' own costs, without
// what-ifs; nothing is told where no finding names a fix; and a range
// instance's analysis does not tell the whole range's findings as its own.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { SEVERITY_RANK, type Finding } from '../../profiler/contract/findings.ts';
import type { ProgressStep } from '../../profiler/contract/progress.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const corpus = path.resolve(import.meta.dirname, '../fixtures/corpus');
let dir: string;
beforeAll(() => (dir = tempDir('early-findings')));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of a corpus recording (reading an older schema migrates it in place). */
function copy(pair: string, which: 'bug' | 'fix'): string {
  const to = path.join(dir, `${pair}-${which}.sqlite`);
  fs.copyFileSync(path.join(corpus, pair, `${which}.sqlite`), to);
  return to;
}

function analyzed(file: string, scope?: Scope): { steps: ProgressStep[]; findings: Finding[] } {
  const db = openRecording(file, { readonly: true });
  try {
    const steps: ProgressStep[] = [];
    const a = analyze(db, { scope, onProgress: (s) => steps.push(s) });
    return { steps, findings: a.diagnosis.findings };
  } finally {
    db.close();
  }
}

describe('findings told before the what-ifs', () => {
  it.each(['torch-synchronize-in-loop', 'runner-pageable', 'torch-launch-bound-graphs'])(
    '%s: the answer’s findings, in the rules’ costs, before any replay',
    (pair) => {
      const { steps, findings } = analyzed(copy(pair, 'bug'));
      const told = steps.filter((s) => s.findings);
      expect(told).toHaveLength(1);
      const early = told[0]!;
      // Once the rules are done, before the replays' model and the first replay: the step that carries them is the model's.
      expect(early.phase).toBe('modelling');
      expect(steps.indexOf(early)).toBeGreaterThan(steps.findLastIndex((s) => s.phase === 'diagnosing'));
      expect(steps.indexOf(early)).toBeLessThan(steps.findIndex((s) => s.phase === 'what-if'));
      expect(early.findings!.some((f) => f.fixId)).toBe(true);
      expect(early.findings!.every((f) => !f.whatIf && !f.whatIfUnavailable && f.ruleCostNs === undefined)).toBe(true);
      // The same findings as the answer, each at the cost its rule measured (the answer's ruleCostNs where a what-if replaced it).
      const key = (f: Finding) => `${f.kind}|${f.title.replace(/\d/g, '')}`;
      expect(early.findings!.map(key).sort()).toEqual(findings.map(key).sort());
      const answerCost = new Map(findings.map((f) => [`${f.kind}|${f.fixId ?? ''}|${f.title}`, f.ruleCostNs ?? f.costNs]));
      for (const f of early.findings!)
        if (answerCost.has(`${f.kind}|${f.fixId ?? ''}|${f.title}`)) expect(f.costNs).toBe(answerCost.get(`${f.kind}|${f.fixId ?? ''}|${f.title}`));
      // Worst first, as the panel lists them: within a severity by cost, but a symptom after its causes (findings/ranking.ts).
      for (let i = 1; i < early.findings!.length; i++) {
        const [a, b] = [early.findings![i - 1]!, early.findings![i]!];
        const order = SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity];
        const symptom = b.kind === 'low-utilization' || b.kind === 'gpu-idle-gap';
        expect(order > 0 || (order === 0 && (a.costNs >= b.costNs || symptom)), `${a.severity} ${a.costNs} before ${b.severity} ${b.costNs}`).toBe(true);
      }
    },
  );

  it("tells a range's findings for the range, none for one instance of it (its share comes with the answer)", () => {
    const file = copy('torch-synchronize-in-loop', 'bug');
    const range = analyzed(file, { kind: 'range', name: 'step' });
    expect(range.steps.filter((s) => s.findings)).toHaveLength(1);
    const instance = analyzed(file, { kind: 'range', name: 'step', instance: 3 });
    expect(instance.findings.length).toBeGreaterThan(0);
    expect(instance.steps.some((s) => s.phase === 'what-if')).toBe(true);
    expect(instance.steps.some((s) => s.findings)).toBe(false);
  });

  it('tells none where no finding names a fix (the fixed program)', () => {
    const { steps, findings } = analyzed(copy('runner-serial', 'fix'));
    if (findings.some((f) => f.fixId)) return expect.fail('runner-serial/fix.sqlite has a finding with a fix: pick a fixture without');
    expect(steps.some((s) => s.findings)).toBe(false);
  });
});
