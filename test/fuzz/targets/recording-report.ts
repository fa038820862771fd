// Fuzz target: the recording reader — openRecording and what `streamscope
// report` reads (handlers/report-path.ts) — on real recordings of
// test/fixtures/recordings changed through SQL and in their bytes
// (lib/sqlite-file.ts). Property: lib/report-check.ts.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { fuzz, workDir, type FuzzTarget } from '../lib/harness.ts';
import { reportProblem, reportSandbox } from '../lib/report-check.ts';
import { materializeSqlite, sqliteRecipe, type SqliteFixtures } from '../lib/sqlite-file.ts';
import { latestSchemaVersion } from '../../../profiler/store/migrations/index.ts';

const recordings = path.resolve(import.meta.dirname, '../../fixtures/recordings');

export const RECORDING_FIXTURES: SqliteFixtures = {
  // Small and different: one GPU, several, a crash, NVTX, PyTorch, several processes, NCCL.
  files: [
    'normalise-concurrent',
    'matmul-events',
    'crashed',
    'nvtx_torch',
    'torch_streams',
    'multiprocess_cupy',
    'matmul-multi-gpu-h200x2',
    'nccl-1gpu-overlap',
    'per-thread-default-stream',
    'cupy_streams_events',
  ].map((n) => path.join(recordings, `${n}.sqlite`)),
  tables: [
    'meta',
    'strings',
    'processes',
    'threads',
    'devices',
    'contexts',
    'streams',
    'kernels',
    'memcpys',
    'memsets',
    'syncs',
    'cuda_events',
    'api_calls',
    'nvtx_ranges',
    'overheads',
    'zones',
    'process_env',
    'sources',
    'source_rows',
  ],
  userVersions: [0, 1, 2, 6, 7, latestSchemaVersion - 1, latestSchemaVersion + 1, 2 ** 31 - 1],
  metaKeys: ['format', 'origin_ns', 'duration_ns', 'complete', 'incomplete_reason', 'pending_indexes', 'command', 'argv', 'origin_wall_ns', 'imported_from'],
};

const recipe = fc.record({ file: sqliteRecipe(RECORDING_FIXTURES), whole: fc.boolean() });

export const target: FuzzTarget = {
  name: 'recording-report',
  async run(options) {
    const work = workDir('recording-report');
    const sandbox = reportSandbox();
    let n = 0;
    try {
      return await fuzz(
        {
          name: 'recording-report',
          arbitrary: recipe,
          async check(r) {
            const file = path.join(work, `input-${n++}.sqlite`);
            materializeSqlite(RECORDING_FIXTURES, r.file, file);
            try {
              return await reportProblem(sandbox, file, r.whole);
            } finally {
              for (const f of [file, `${file}-journal`]) fs.rmSync(f, { force: true });
            }
          },
          save(r, dir, stem) {
            const file = path.join(dir, `${stem}${r.whole ? '.whole' : ''}.sqlite`);
            materializeSqlite(RECORDING_FIXTURES, r.file, file);
            return file;
          },
        },
        options,
      );
    } finally {
      await sandbox.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
