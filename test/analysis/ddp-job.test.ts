// Real data-parallel training jobs, recorded as users record one: under
// torchrun, one recorder per rank (test/gpu/scripts/ddp_train.py; issue
// 31) — two ranks on two H200s (test/fixtures/ddp) and four ranks on four
// (test/fixtures/ddp/four-ranks) — in the shapes the communication
// analysis must tell apart: DDP (gradients all-reduced in buckets during the
// backward pass), the all-reduces issued by hand after the backward pass,
// DDP with one rank made slower, and (four ranks) FSDP. Each job is merged
// as `streamscope merge` merges it and analysed as `report` analyses it:
// clocks aligned by the collectives, the time per rank, the communication
// finding in the serialized shape only, the straggler in the slowed shape
// only and named by its rank.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { mergeRecordings, type MergeResult } from '../../profiler/merge/merge.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddp-job-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Shape = 'ddp' | 'serial' | 'slow' | 'fsdp';
const JOBS = [
  { name: 'two ranks', dir: fixtures, ranks: 2, slowRank: 1, shapes: ['ddp', 'serial', 'slow'] as Shape[] },
  { name: 'four ranks', dir: path.join(fixtures, 'four-ranks'), ranks: 4, slowRank: 3, shapes: ['ddp', 'serial', 'slow', 'fsdp'] as Shape[] },
];
type Job = (typeof JOBS)[number];

const cache = new Map<string, { merged: MergeResult; analysis: Analysis }>();
function job(j: Job, shape: Shape) {
  const key = `${j.ranks}-${shape}`;
  let r = cache.get(key);
  if (!r) {
    const out = path.join(tmp, `${key}.sqlite`);
    const merged = mergeRecordings(
      Array.from({ length: j.ranks }, (_, k) => path.join(j.dir, `${shape}-rank${k}.sqlite`)),
      out,
    );
    const db = openRecording(out, { readonly: true });
    try {
      cache.set(key, (r = { merged, analysis: analyze(db, { file: out }) }));
    } finally {
      db.close();
    }
  }
  return r;
}

describe.each(JOBS)('the job of $name', (j) => {
  describe.each(j.shapes)('in the %s shape', (shape) => {
    it('merges its ranks with their clocks aligned by the collectives, the residual said', () => {
      const { merged } = job(j, shape);
      expect(merged.sources).toHaveLength(j.ranks);
      // The first rank's clock is the reference, the others are aligned to it by their collectives.
      expect(merged.sources.map((s) => s.clock)).toEqual(['reference', ...Array(j.ranks - 1).fill('collectives')]);
      for (const s of merged.sources) {
        expect(s.collectives).toBeGreaterThan(30);
        // GPUs of one host: the collectives' ends agree to some microseconds once aligned (4–11 µs median here).
        expect(s.residualNs!).toBeLessThan(20_000);
      }
    });

    it("splits each rank's GPU time into compute, communication (hidden and exposed), copies and idle", () => {
      const { communication } = job(j, shape).analysis;
      expect(communication.ranks.map((r) => r.rank)).toEqual(Array.from({ length: j.ranks }, (_, k) => k));
      for (const r of communication.ranks) {
        const t = r.total;
        expect(t.computeNs).toBeGreaterThan(0);
        expect(t.communicationNs).toBeGreaterThan(0);
        expect(t.hiddenNs + t.exposedNs).toBeCloseTo(t.communicationNs, -3);
        expect(t.computeNs + t.exposedNs + t.copyNs + t.idleNs).toBeCloseTo(t.spanNs, -4);
      }
    });
  });

  it("each rank's GPU idle gaps are put down to that rank's own host calls, not another rank's", () => {
    // The idle rule names the call in progress in each gap: in the merged job every rank's calls are there, and
    // the one in progress was another rank's as often as not (every GPU's gaps were rank 3's cuLibraryLoadData).
    let named = 0;
    for (const shape of j.shapes) {
      const out = path.join(tmp, `${j.ranks}-${shape}.sqlite`);
      const { analysis } = job(j, shape);
      const db = openRecording(out, { readonly: true });
      try {
        const pidOfCall = new Map(db.prepare('SELECT id, pid FROM api_calls').raw().all() as [number, number][]);
        const pidsOf = (deviceId: number) => (db.prepare('SELECT DISTINCT pid FROM streams WHERE device_id = ?').pluck().all(deviceId) as number[]).sort();
        for (const f of analysis.diagnosis.findings.filter((x) => x.kind === 'gpu-idle-gap')) {
          const own = pidsOf(f.deviceId!);
          for (const call of f.evidence.apiCalls) expect(own, `${shape}: ${f.title}`).toContain(pidOfCall.get(call));
          named += f.evidence.apiCalls.length;
        }
      } finally {
        db.close();
      }
    }
    expect(named).toBeGreaterThan(0);
  });

  describe('what tells the shapes apart', () => {
    const kinds = (shape: Shape) => job(j, shape).analysis.diagnosis.findings.map((f) => f.kind);
    const overlap = (shape: Shape) => job(j, shape).analysis.communication.ranks.map((r) => r.total.overlap!);
    const overlapped = j.shapes.filter((s) => s === 'ddp' || s === 'fsdp');

    it('DDP (and FSDP) hide their collectives behind the computation; the hand-written loop hides none of them', () => {
      for (const s of overlapped) for (const o of overlap(s)) expect(o).toBeGreaterThan(0.25);
      for (const o of overlap('serial')) expect(o).toBe(0);
    });

    it('only the hand-written loop gets the serialized-collective finding, on every rank, with a what-if that saves time', () => {
      const serialized = job(j, 'serial').analysis.diagnosis.findings.filter((f) => f.kind === 'serialized-collective');
      expect(serialized.map((f) => f.pid).sort()).toEqual([...new Set(job(j, 'serial').analysis.communication.ranks.map((r) => r.pid))].sort());
      for (const f of serialized) {
        expect(f.fixId).toBe('overlap-collectives');
        expect(f.whatIf!.savedNs).toBeGreaterThan(0);
      }
      for (const s of j.shapes.filter((x) => x !== 'serial')) expect(kinds(s)).not.toContain('serialized-collective');
    });

    it(`the straggler is rank ${j.slowRank} in the slowed job, first among its findings, an error; in DDP and FSDP nobody`, () => {
      const slow = job(j, 'slow').analysis.stragglers.straggler;
      expect(slow?.rank).toBe(j.slowRank);
      expect(kinds('slow')[0]).toBe('straggler-rank');
      expect(job(j, 'slow').analysis.diagnosis.findings[0]!.severity).toBe('error');
      for (const s of j.shapes.filter((x) => x === 'ddp' || x === 'fsdp')) {
        expect(job(j, s).analysis.stragglers.straggler).toBeNull();
        expect(kinds(s)).not.toContain('straggler-rank');
      }
      // The all-reduces by hand: on two ranks rank 1 is last at 73 of 98, 74 µs late on average, causing most of the
      // waiting (5.4 ms): named, below the serialized collectives it waits in; on four ranks nobody is last that often.
      const serial = job(j, 'serial').analysis;
      expect(serial.stragglers.straggler?.rank ?? null).toBe(j.ranks === 2 ? 1 : null);
      if (serial.stragglers.straggler) expect(kinds('serial').indexOf('straggler-rank')).toBeGreaterThan(kinds('serial').indexOf('serialized-collective'));
    });
  });

  it.each(j.shapes)('%s: every finding about one rank names it, and a what-if shared by every rank says so', (shape) => {
    const { analysis } = job(j, shape);
    const rankOf = new Map(analysis.communication.ranks.map((r) => [r.pid, r.rank]));
    const findings = analysis.diagnosis.findings.filter((f) => f.pid !== null);
    // The rules word a title for one process; in a job each rank's copy of it reads the same but for its rank.
    expect(findings.length).toBeGreaterThan(j.ranks);
    for (const f of findings) {
      const rank = rankOf.get(f.pid!);
      expect(f.title.toLowerCase(), f.title).toContain(`rank ${rank} (`);
    }
    const hostBlocking = findings.filter((f) => f.kind === 'host-blocking-call');
    expect(new Set(hostBlocking.map((f) => f.title)).size).toBe(hostBlocking.length);
    for (const f of analysis.diagnosis.findings.filter((x) => x.whatIf)) {
      const naming = analysis.diagnosis.findings.filter((x) => x.fixId === f.fixId).length;
      expect(f.whatIf!.findings ?? 1).toBe(naming);
    }
    expect(hostBlocking.some((f) => (f.whatIf?.findings ?? 0) >= j.ranks)).toBe(true);
  });
});
