// The loading phase's live progress (analysis/load/columns.ts loadColumns): the
// native loader adds each part's rows to a counter in shared memory while
// the thread that called it is blocked, so another thread reads how far it
// has got — as the analysis thread's owner does for analysisProgress. Here a
// worker thread loads a generated recording of a million operations while
// this thread reads the counter it was handed.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { tempDir } from '../helpers/native.ts';

let dir: string;
let file: string;
beforeAll(() => {
  dir = tempDir('load-progress');
  file = path.join(dir, 'gen.sqlite');
  generate(file, 1_000_000, 16);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('loading progress', () => {
  it('counts every row it reads, once (the pages, then SQLite alone)', () => {
    for (const via of ['pages', 'sql'] as const) {
      const progress = new Int32Array(new SharedArrayBuffer(4));
      const t = loadTimelineColumns(file, { via, progress });
      expect(Atomics.load(progress, 0), via).toBe(t.ops.length + t.calls.length);
      expect(t.ops.length + t.calls.length).toBe(2_000_000);
    }
    expect(() => loadTimelineColumns(file, { progress: new Float64Array(1) as never })).toThrow(/progress must be an Int32Array/);
  });

  it('grows while another thread is blocked in the load, as loadColumns tells it', async () => {
    const load = path.join(repoRoot, 'profiler/analysis/load/columns.ts');
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(workerData.load).then(({ loadColumns }) => {
         const Database = require(workerData.sqlite);
         const db = new Database(workerData.file, { readonly: true });
         loadColumns(db, (step) => parentPort.postMessage(step));
         db.close();
         parentPort.postMessage('done');
       });`,
      { eval: true, workerData: { load, file, sqlite: path.join(repoRoot, 'node_modules/better-sqlite3') } },
    );
    const seen: number[] = [];
    let total = 0;
    await new Promise<void>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (m: { phase: string; total: number; rowsRead: Int32Array } | 'done') => {
        if (m === 'done') return resolve();
        total = m.total;
        // This thread is free while the worker loads: read the counter until the load is over.
        const until = performance.now() + 30_000;
        let last = -1;
        while (performance.now() < until) {
          const n = Atomics.load(m.rowsRead, 0);
          if (n !== last) seen.push((last = n));
          if (n >= m.total) break;
        }
      });
    });
    await worker.terminate();
    expect(total).toBe(2_000_000);
    // Some count strictly between none and all was seen: it grew as the parts were read.
    expect(seen.some((n) => n > 0 && n < total)).toBe(true);
    expect(seen.at(-1)).toBe(total);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
  }, 60_000);
});
