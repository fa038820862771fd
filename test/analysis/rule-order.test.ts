// The order the diagnosis runs its rules in (diagnose.ts runOrder): the
// launch-bound rule first where a sample of the kernels forecasts its
// finding (launchBoundLikely), so that its fix's what-if starts sooner on a
// large recording; the findings the same, in the same order, whatever order
// the rules ran in. On the corpus's real recordings (test/fixtures/corpus,
// H200) and on a recording of 100,000 launches from the C++ encoder.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { RULES, ruleFindings, runOrder } from '../../profiler/analysis/diagnosis/diagnose.ts';
import { launchBound, launchBoundLikely } from '../../profiler/analysis/diagnosis/findings/launch-bound.ts';
import { estimatesHere } from '../../profiler/analysis/diagnosis/whatif-thread.ts';
import { ingestStreamFiles } from '../../profiler/record/ingest-files.ts';
import type { ProgressStep } from '../../profiler/contract/progress.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const corpus = path.resolve(import.meta.dirname, '../fixtures/corpus');
let dir: string;
beforeAll(() => (dir = tempDir('rule-order')));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every recording of the corpus: each pair's bug and fix, both rounds. */
function corpusRecordings(): string[] {
  return fs
    .readdirSync(corpus, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => ['bug.sqlite', 'fix.sqlite', 'round-2/bug.sqlite', 'round-2/fix.sqlite'].map((f) => path.join(corpus, e.name, f)))
    .filter((f) => fs.existsSync(f));
}

/** The analysis of a copy of `file` (reading an older schema migrates it in place), its diagnosis made. */
function analysed(file: string, onProgress?: (step: ProgressStep) => void) {
  const to = path.join(dir, `${path.basename(path.dirname(file))}-${path.basename(file)}`);
  fs.copyFileSync(file, to);
  const db = openRecording(to, { readonly: true });
  try {
    const a = analyze(db, { onProgress });
    // Diagnosed here, while the file is open (analyze.ts diagnoses when its findings are first read).
    expect(a.diagnosis.findings).toBeInstanceOf(Array);
    return a;
  } finally {
    db.close();
  }
}

describe('the rules’ run order', () => {
  it('forecasts the launch-bound finding on every corpus recording that has it, and on few that do not', () => {
    const files = corpusRecordings();
    expect(files.length).toBeGreaterThanOrEqual(56);
    let found = 0;
    let falseAlarms = 0;
    for (const file of files) {
      const a = analysed(file);
      const likely = launchBoundLikely(a.diagnosis.context);
      const named = a.diagnosis.findings.some((f) => f.kind === 'launch-bound');
      if (named) {
        found++;
        expect(likely, file).toBe(true);
      } else if (likely) falseAlarms++;
    }
    expect(found).toBeGreaterThanOrEqual(10);
    expect(falseAlarms).toBeLessThanOrEqual(files.length / 10);
  });

  it('the same findings in the same order whatever order the rules run in', () => {
    // A recording where rules before and after the launch-bound one find something (a readback, a blocking call, one stream).
    const a = analysed(path.join(corpus, 'torch-item-per-step', 'bug.sqlite'));
    const { context } = a.diagnosis;
    const key = (f: { kind: string; title: string }) => `${f.kind}: ${f.title}`;
    const inOrder = ruleFindings(context, estimatesHere(context.trace, context.host), undefined, RULES).map(key);
    expect(new Set(inOrder.map((k) => k.split(':')[0])).size).toBeGreaterThanOrEqual(3);
    const run: string[] = [];
    const reversed = ruleFindings(
      context,
      estimatesHere(context.trace, context.host),
      (step) => {
        if (step.phase === 'diagnosing') run.push(step.detail!);
      },
      [...RULES].reverse(),
    ).map(key);
    expect(run[0]).toBe('event ordering');
    expect(reversed).toEqual(inOrder);
  });

  it('runs the launch-bound rule first on 100,000 launches, in the order of RULES below 65,536 operations', async () => {
    const { stream } = syntheticStream(dir, 'launches', ['--bench-launches', '100000']);
    const file = path.join(dir, 'launches.sqlite');
    await ingestStreamFiles(file, [stream]);
    const run: string[] = [];
    const a = analysed(file, (step) => {
      if (step.phase === 'diagnosing') run.push(step.detail!);
    });
    expect(a.trace.ops.length).toBeGreaterThan(1 << 16);
    expect(runOrder(a.diagnosis.context)[0]).toBe(launchBound);
    expect(run[0]).toBe('launch bound');
    expect(run).toHaveLength(RULES.length);
    expect(a.diagnosis.findings.some((f) => f.kind === 'launch-bound')).toBe(true);
    // A corpus recording the forecast says yes to, of ~2,500 operations: run in RULES's order.
    const small = analysed(path.join(corpus, 'torch-item-per-step', 'bug.sqlite'));
    expect(launchBoundLikely(small.diagnosis.context)).toBe(true);
    expect(runOrder(small.diagnosis.context)).toBe(RULES);
  });
});
