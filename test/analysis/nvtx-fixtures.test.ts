// NVTX ranges from each Python library, as recorded on the H100 by
// test/gpu/python.test.ts (test/gpu/scripts/nvtx_ranges.py LIBRARY: ranges
// and marks on the main thread and a worker thread; see PROVENANCE.md). The
// names, domains, threads and counts are those the script announces; the
// GPU test checks fresh recordings against the script's own list.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixtures = path.join(repoRoot, 'test/fixtures/recordings');

interface Row {
  name: string;
  domain: string | null;
  tid: number;
  n: number;
  marks: number;
}

function ranges(file: string): Row[] {
  const db = openRecording(path.join(fixtures, file), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT s.value AS name, d.value AS domain, r.tid, count(*) AS n, sum(r.end_ns IS NULL) AS marks
      FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id LEFT JOIN strings d ON d.id = r.domain_id GROUP BY 1, 2, 3`,
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

/** name → [domain, count, is a mark], for each of the main and worker thread (tag in the name). */
type Expect = [name: string, domain: string | null, count: number, mark: boolean][];

function expectPerThread(rows: Row[], expected: (tag: string) => Expect): void {
  const tids = new Set<number>();
  for (const tag of ['main', 'worker']) {
    for (const [name, domain, count, mark] of expected(tag)) {
      const got = rows.filter((r) => r.name === name);
      expect(got, name).toHaveLength(1);
      expect(got[0]!.domain, name).toBe(domain);
      expect(got[0]!.n, name).toBe(count);
      expect(got[0]!.marks, name).toBe(mark ? count : 0);
      tids.add(got[0]!.tid);
    }
  }
  expect(tids.size).toBe(2); // each thread's ranges on that thread
}

describe('NVTX from Python libraries (H100 recordings)', () => {
  it('torch.cuda.nvtx: range_push/pop, range(), mark()', () => {
    expectPerThread(ranges('nvtx_torch.sqlite'), (t) => [
      [`ss_torch_${t}`, null, 3, false],
      [`ss_torch_${t}_ctx`, null, 1, false],
      [`ss_torch_${t}_mark`, null, 1, true],
    ]);
  });

  it('torch.autograd.profiler.emit_nvtx: a range per aten op', () => {
    const rows = ranges('nvtx_torch-emit.sqlite');
    expect(rows.filter((r) => r.name.startsWith('aten::mm')).length).toBe(3);
    expect(rows.filter((r) => r.name.startsWith('aten::relu')).length).toBe(3);
  });

  it('cupyx.profiler.time_range, cupy.cuda.nvtx.RangePush/Pop and Mark', () => {
    expectPerThread(ranges('nvtx_cupy.sqlite'), (t) => [
      [`ss_cupy_${t}`, null, 3, false],
      [`ss_cupy_${t}_push`, null, 1, false],
      [`ss_cupy_${t}_mark`, null, 1, true],
    ]);
  });

  it('the nvtx package, with a domain and without (the default domain, which CUPTI alone drops)', () => {
    expectPerThread(ranges('nvtx_nvtx.sqlite'), (t) => [
      [`ss_nvtx_${t}`, 'streamscope_test', 3, false],
      [`ss_nvtx_${t}_startend`, 'streamscope_test', 1, false],
      [`ss_nvtx_${t}_mark`, 'streamscope_test', 1, true],
      [`ss_nvtx_${t}_plain`, null, 3, false],
      [`ss_nvtx_${t}_startend_plain`, null, 1, false],
      [`ss_nvtx_${t}_mark_plain`, null, 1, true],
      [`ss_nvtx_${t}_push`, null, 1, false],
    ]);
  });

  it("the PyTorch and CuPy programs' own ranges", () => {
    const steps = ranges('torch_prefetch.sqlite');
    expect(Object.fromEntries(steps.map((r) => [r.name, r.n]))).toEqual({ step: 12, prefetch: 12, compute: 12 });
    expect(ranges('cupy_streams_events.sqlite').map((r) => [r.name, r.n])).toEqual([['iteration', 4]]);
  });
});
