// The order of the findings (profiler/analysis/diagnosis/findings/ranking.ts):
// worst first, and within a severity a symptom (GPU idle with no cause named)
// after the causes charged most of its idle time. On real recordings of the
// corpus (H200, test/fixtures/corpus): the second recording of
// torch-synchronize-in-loop, whose low-utilization windows crossed the
// warning threshold and outranked the synchronize that caused them, and a
// fixed run whose idle no cause accounts for.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Finding } from '../../profiler/contract/findings.ts';
import { openRecording } from '../../profiler/store/database.ts';

const corpus = path.resolve(import.meta.dirname, '../fixtures/corpus');

function findingsOf(file: string): Finding[] {
  const db = openRecording(path.join(corpus, file), { readonly: true });
  try {
    return analyze(db).diagnosis.findings;
  } finally {
    db.close();
  }
}

describe('symptoms after their causes', () => {
  it('torch-synchronize-in-loop, round 2: the synchronize leads, the low-utilization windows follow the causes and say so', () => {
    const findings = findingsOf('torch-synchronize-in-loop/round-2/bug.sqlite');
    const kinds = findings.map((f) => f.kind);
    expect(kinds[0]).toBe('host-blocking-call');
    expect(findings[0]!.fixId).toBe('remove-host-blocking');
    const low = findings.find((f) => f.kind === 'low-utilization')!;
    const causes = findings.filter((f) => f.kind === 'host-blocking-call' || f.kind === 'launch-bound');
    // A warning by its own measure, and by cost alone it would lead: its idle exceeds every cause's saving.
    expect(low.severity).toBe('warning');
    for (const c of causes) {
      expect(c.severity).toBe('warning');
      expect(low.costNs).toBeGreaterThan(c.costNs);
      expect(kinds.indexOf(c.kind)).toBeLessThan(kinds.indexOf('low-utilization'));
    }
    // The idle charged to the causes, as their rules measured it, is at least half its own.
    const charged = causes.reduce((sum, f) => sum + (f.ruleCostNs ?? f.costNs), 0);
    expect(charged).toBeGreaterThanOrEqual(0.5 * low.costNs);
    expect(low.explanation).toMatch(
      /The causes found on this GPU, listed before it, are charged 98\.\d ms of GPU idle time \(host-blocking-call, launch-bound\)\./,
    );
  });

  it('a symptom no cause accounts for keeps its place (two-processes-one-gpu fixed, round 2)', () => {
    const findings = findingsOf('two-processes-one-gpu/round-2/fix.sqlite');
    expect(findings[0]!.kind).toBe('low-utilization');
    const causes = findings.filter((f) => f.kind === 'host-blocking-call');
    expect(causes.length).toBeGreaterThan(0);
    expect(causes.reduce((sum, f) => sum + (f.ruleCostNs ?? f.costNs), 0)).toBeLessThan(0.5 * findings[0]!.costNs);
    expect(findings[0]!.explanation).not.toMatch(/The causes found/);
  });
});
