// A real data-parallel training job, recorded as users record one: two
// ranks on two H200s under torchrun, one recorder per rank
// (test/fixtures/ddp, test/gpu/scripts/ddp_train.py; issue 31), in three
// shapes — DDP (gradients all-reduced in buckets during the backward pass),
// the all-reduces issued by hand after the backward pass, and DDP with rank
// 1 made slower. Each job is merged as `streamscope merge` merges it and
// analysed as `report` analyses it: clocks aligned by the collectives, the
// time per rank, the communication finding in the serialized shape only,
// the straggler in the slowed shape only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../profiler/analysis/load.ts';
import { mergeRecordings, type MergeResult } from '../../profiler/merge/merge.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddp-job-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const jobs = new Map<string, { merged: MergeResult; analysis: Analysis }>();
function job(shape: 'ddp' | 'serial' | 'slow') {
  let j = jobs.get(shape);
  if (!j) {
    const out = path.join(tmp, `${shape}.sqlite`);
    const merged = mergeRecordings(
      [0, 1].map((r) => path.join(fixtures, `${shape}-rank${r}.sqlite`)),
      out,
    );
    const db = openRecording(out, { readonly: true });
    try {
      jobs.set(shape, (j = { merged, analysis: analyze(db, { file: out }) }));
    } finally {
      db.close();
    }
  }
  return j;
}

describe.each(['ddp', 'serial', 'slow'] as const)('the %s job', (shape) => {
  it('merges its two ranks with their clocks aligned by the collectives, the residual said', () => {
    const { merged } = job(shape);
    expect(merged.sources).toHaveLength(2);
    // The first rank's clock is the reference, the other is aligned to it by their collectives.
    expect(merged.sources.map((s) => s.clock)).toEqual(['reference', 'collectives']);
    for (const s of merged.sources) {
      expect(s.collectives).toBeGreaterThan(40);
      // Two GPUs of one host: the collectives' ends agree to microseconds once aligned.
      expect(s.residualNs!).toBeLessThan(10_000);
    }
  });

  it("splits each rank's GPU time into compute, communication (hidden and exposed), copies and idle", () => {
    const { communication } = job(shape).analysis;
    expect(communication.ranks.map((r) => r.rank)).toEqual([0, 1]);
    for (const r of communication.ranks) {
      const t = r.total;
      expect(t.computeNs).toBeGreaterThan(0);
      expect(t.communicationNs).toBeGreaterThan(0);
      expect(t.hiddenNs + t.exposedNs).toBeCloseTo(t.communicationNs, -3);
      expect(t.computeNs + t.exposedNs + t.copyNs + t.idleNs).toBeCloseTo(t.spanNs, -4);
    }
  });
});

describe('what tells the shapes apart', () => {
  const kinds = (shape: 'ddp' | 'serial' | 'slow') => job(shape).analysis.diagnosis.findings.map((f) => f.kind);
  const overlap = (shape: 'ddp' | 'serial' | 'slow') => job(shape).analysis.communication.ranks.map((r) => r.total.overlap!);

  it('DDP hides its all-reduces behind the backward pass; the hand-written loop hides none of them', () => {
    for (const o of overlap('ddp')) expect(o).toBeGreaterThan(0.3);
    for (const o of overlap('serial')) expect(o).toBe(0);
  });

  it('only the hand-written loop gets the serialized-collective finding, on both ranks, with a what-if that saves time', () => {
    const serialized = job('serial').analysis.diagnosis.findings.filter((f) => f.kind === 'serialized-collective');
    expect(serialized.map((f) => f.pid).sort()).toEqual([...new Set(job('serial').analysis.communication.ranks.map((r) => r.pid))].sort());
    for (const f of serialized) {
      expect(f.fixId).toBe('overlap-collectives');
      expect(f.whatIf!.savedNs).toBeGreaterThan(0);
    }
    expect(kinds('ddp')).not.toContain('serialized-collective');
    expect(kinds('slow')).not.toContain('serialized-collective');
  });

  it('the straggler is rank 1 in the slowed job, and nobody in the others', () => {
    const slow = job('slow').analysis.stragglers.straggler;
    expect(slow?.rank).toBe(1);
    expect(kinds('slow')[0]).toBe('straggler-rank');
    expect(job('ddp').analysis.stragglers.straggler).toBeNull();
    expect(job('serial').analysis.stragglers.straggler).toBeNull();
    expect(kinds('ddp')).not.toContain('straggler-rank');
    expect(kinds('serial')).not.toContain('straggler-rank');
  });
});
