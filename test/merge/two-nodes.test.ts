// Two recorders, each over one node of a 2-node torchrun on two H200s (one
// GPU each; test/gpu/nccl.test.ts made them, PROVENANCE.md), merged: the
// job has the counts of the same program recorded by one recorder over a
// 1-node torchrun, and the clocks agree to microseconds (one host's clock,
// so the collectives find next to nothing to correct).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const fixture = (name: string) => path.join(fixtures, `${name}.sqlite`);
const dir = tempDir('two-nodes');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function count(file: string, sql: string): number {
  const db = openRecording(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('two nodes recorded apart, merged (nccl-node0/1-h200x2)', () => {
  const out = path.join(dir, 'job.sqlite');
  const result = mergeRecordings([fixture('nccl-node0-h200x2'), fixture('nccl-node1-h200x2')], out);

  it('aligns them by their 86 collectives with a residual of microseconds', () => {
    for (const s of result.sources) {
      expect(s.collectives).toBe(86);
      expect(s.residualNs).toBeLessThan(20_000);
    }
    expect(result.sources.map((s) => s.clock).sort()).toEqual(['collectives', 'reference']);
  });

  it('has the counts of the single recording of the same program, ranks 0 and 1 of 2', () => {
    const single = fixture('nccl-serial-h200x2');
    for (const sql of [
      "SELECT count(*) FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%nccl%'",
      'SELECT count(*) FROM kernels',
      'SELECT count(*) FROM processes WHERE rank IS NOT NULL',
      "SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value = 'step'",
    ])
      expect(count(out, sql), sql).toBe(count(single, sql));
    const db = openRecording(out, { readonly: true });
    try {
      const a = analyze(db);
      expect(a.communication.ranks.filter((r) => r.rank !== null).map((r) => [r.rank, r.worldSize])).toEqual([
        [0, 2],
        [1, 2],
      ]);
      expect(a.diagnosis.findings.filter((f) => f.kind === 'serialized-collective')).toHaveLength(2);
    } finally {
      db.close();
    }
  });
});
