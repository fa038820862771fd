// The PyTorch profiler traces of one job's ranks (test/fixtures/kineto/job:
// two ranks of a DDP job, one trace each, recorded on an H200) import as
// that job's ranks: each process gets the rank and world size of the trace's
// distributedInfo (issue 29: they were imported with no rank, so `open`
// treated them as unrelated recordings), and open, merge and report as one
// job. Two ranks whose traces start at the same microsecond, without a host
// name, are two recordings, not the same one twice.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTrace } from '../../profiler/import/index.ts';
import { analyzeJobOfSummaries } from '../../profiler/job/of-summaries.ts';
import { buildRankSummary } from '../../profiler/job/summary.ts';
import { planOpen } from '../../profiler/merge/job-cache.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { readProcesses } from '../../profiler/store/ranks.ts';
import { tempDir } from '../helpers/native.ts';

const traces = [0, 1].map((k) => path.resolve(import.meta.dirname, `../fixtures/kineto/job/slow-rank${k}.json`));
let dir: string;
let ranks: string[];
beforeAll(async () => {
  dir = tempDir('kineto-job');
  ranks = [];
  for (const [k, trace] of traces.entries()) {
    const out = path.join(dir, `rank${k}.sqlite`);
    await importTrace(trace, out);
    ranks.push(out);
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function processes(file: string) {
  const db = openRecording(file, { readonly: true });
  try {
    return readProcesses(db);
  } finally {
    db.close();
  }
}

describe("a job's PyTorch profiler traces", () => {
  it("each trace's process carries its rank and world size from distributedInfo", () => {
    for (const [k, file] of ranks.entries()) {
      const [p] = processes(file);
      // Before: rank null, world size null.
      expect(p).toMatchObject({ rank: k, worldSize: 2, localRank: null, rankVariable: 'distributedInfo' });
    }
  });

  it('open them together: one job; merged and reported from summaries, clocks aligned by their collectives', () => {
    const plan = planOpen(ranks);
    expect(plan.job.map((f) => path.basename(f))).toEqual(['rank0.sqlite', 'rank1.sqlite']);
    const merged = mergeRecordings(ranks, path.join(dir, 'job.sqlite'));
    expect(merged.sources.map((s) => s.clock)).toEqual(['reference', 'collectives']);
    const job = analyzeJobOfSummaries(ranks.map((f) => buildRankSummary(f, 'whole')));
    expect(job.analysis.communication.ranks.map((r) => r.rank)).toEqual([0, 1]);
  });

  it('two ranks starting at the same microsecond, without a host name, merge: they are two recordings (their processes differ)', () => {
    const same = ranks.map((f, k) => {
      const copy = path.join(dir, `same-origin-${k}.sqlite`);
      fs.copyFileSync(f, copy);
      const db = openRecording(copy);
      db.prepare("UPDATE meta SET value = '1795000000000000000' WHERE key = 'origin_ns'").run();
      db.close();
      return copy;
    });
    // Before: 'holds the same recording as … (same host and origin)'.
    expect(mergeRecordings(same, path.join(dir, 'same-origin-job.sqlite')).sources).toHaveLength(2);
    // The same recording twice is still refused.
    const twice = path.join(dir, 'twice.sqlite');
    fs.copyFileSync(same[0]!, twice);
    expect(() => mergeRecordings([same[0]!, twice], path.join(dir, 'twice-job.sqlite'))).toThrow(
      /holds the same recording as .*same-origin-0\.sqlite \(same host, origin and processes\)/,
    );
  });
});
