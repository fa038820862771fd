// Fuzz target: `streamscope import` of an Nsight Systems SQLite export, on
// the real export of test/fixtures/nsys changed through SQL and in its
// bytes (lib/sqlite-file.ts). Property: lib/import-check.ts.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fuzz, workDir, type FuzzTarget } from '../lib/harness.ts';
import { importProblem, importSandbox } from '../lib/import-check.ts';
import { materializeSqlite, sqliteRecipe, type SqliteFixtures } from '../lib/sqlite-file.ts';

const repo = path.resolve(import.meta.dirname, '../../..');

/** What profiler/import/nsys.ts reads. */
const READ = [
  'StringIds',
  'CUPTI_ACTIVITY_KIND_KERNEL',
  'CUPTI_ACTIVITY_KIND_MEMCPY',
  'CUPTI_ACTIVITY_KIND_MEMSET',
  'CUPTI_ACTIVITY_KIND_RUNTIME',
  'NVTX_EVENTS',
  'TARGET_INFO_GPU',
  'TARGET_INFO_CUDA_NULL_STREAM',
  'TARGET_INFO_CUDA_STREAM',
  'PROCESSES',
  'EXPORT_META_DATA',
];

const EXPORT = path.join(repo, 'test/fixtures/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite');

/**
 * The real export, and the same with only what the importer reads (the
 * tables above, the strings its rows name, the processes with calls):
 * 200 KB instead of 1.6 MB, so that inputs are fast to run and small to
 * keep.
 */
export function nsysFixtures(work: string): SqliteFixtures {
  const reduced = path.join(work, 'reduced-export.sqlite');
  if (!fs.existsSync(reduced)) {
    fs.copyFileSync(EXPORT, reduced);
    const db = new Database(reduced);
    try {
      db.pragma('foreign_keys = OFF');
      for (const t of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]) {
        if (!READ.includes(t)) db.exec(`DROP TABLE "${t}"`);
      }
      db.exec(`DELETE FROM StringIds WHERE id NOT IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL
        UNION SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT textId FROM NVTX_EVENTS WHERE textId IS NOT NULL)`);
      db.exec('DELETE FROM PROCESSES WHERE rowid NOT IN (SELECT rowid FROM PROCESSES LIMIT 4)');
      db.exec('VACUUM');
    } finally {
      db.close();
    }
  }
  return { files: [reduced, EXPORT], tables: READ, userVersions: [0, 1, 10, 11, -1] };
}

export const target: FuzzTarget = {
  name: 'import-nsys',
  async run(options) {
    const work = workDir('import-nsys');
    const sandbox = importSandbox();
    const fixtures = nsysFixtures(work);
    let n = 0;
    try {
      return await fuzz(
        {
          name: 'import-nsys',
          arbitrary: sqliteRecipe(fixtures),
          async check(r) {
            const file = path.join(work, `input-${n++}.sqlite`);
            materializeSqlite(fixtures, r, file);
            try {
              return await importProblem(sandbox, file, undefined, work);
            } finally {
              fs.rmSync(file, { force: true });
            }
          },
          save(r, dir, stem) {
            const file = path.join(dir, `${stem}.sqlite`);
            materializeSqlite(fixtures, r, file);
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
