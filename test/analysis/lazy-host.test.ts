// analyze() builds the host model and the rules' context when first asked
// (issue 30): the scope's label and the Stats tab's tables come without them,
// and say the same as when the diagnosis ran first.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, type AnalysisTimings } from '../../profiler/analysis/diagnosis/analyze.ts';
import { readCommunicationInputs } from '../../profiler/analysis/load/communication.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { buildStats } from '../../profiler/query/stats.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixture = (rel: string) => path.join(repoRoot, 'test/fixtures', rel);

function analysed(file: string) {
  const db = openRecording(file, { readonly: true });
  try {
    const timings: AnalysisTimings = { load: 0, scope: 0, trace: 0, host: 0, diagnose: 0 };
    return { a: analyze(db, { timings }), timings, ncclRanges: readCommunicationInputs(db).ncclRanges.length };
  } finally {
    db.close();
  }
}

describe('the host model, built when first asked', () => {
  it('is not built for the Stats tab of a recording without NCCL, whose tables equal those after the diagnosis', () => {
    const file = fixture('corpus/runner-pageable/bug.sqlite');
    const early = analysed(file);
    expect(early.ncclRanges).toBe(0);
    const hostPhase = early.timings.host;
    const stats = buildStats(early.a);
    // Nothing more timed as the host phase: neither the host model nor the context was built (the file closed already).
    expect(early.timings.host).toBe(hostPhase);
    expect(stats.streams.length).toBeGreaterThan(0);
    expect(stats.streams.some((s) => s.utilization > 0)).toBe(true);
    // Built now, when first asked, and timed as the host phase then.
    expect(early.a.host.calls.length).toBeGreaterThan(0);
    expect(early.timings.host).toBeGreaterThan(hostPhase);
    const late = analysed(file);
    expect(late.a.diagnosis.findings.length).toBeGreaterThan(0);
    expect(buildStats(late.a)).toEqual(stats);
    // The diagnosis after the tables: the same findings as before them.
    expect(early.a.diagnosis.findings).toEqual(late.a.diagnosis.findings);
  });

  it('is built for the communication breakdown where NCCL ranges name the launching calls, with the same answer either way', () => {
    const file = fixture('ddp/ddp-rank0.sqlite');
    const early = analysed(file);
    expect(early.ncclRanges).toBeGreaterThan(0);
    const stats = buildStats(early.a);
    expect(stats.communication.kernels.length).toBeGreaterThan(0);
    const late = analysed(file);
    void late.a.diagnosis;
    expect(buildStats(late.a)).toEqual(stats);
    expect(early.a.graphs).toEqual(late.a.graphs);
  });
});
