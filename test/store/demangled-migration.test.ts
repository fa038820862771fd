// Schema 7 (migrations/0007-demangled-names.ts) on a recording of schema 6:
// every mangled C++ name gets its demangled form, every other string NULL,
// and nothing recorded changes. A schema-6 file is a fixture copy with the
// column dropped and the version set back (0007 adds only that column).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demangle } from '../../profiler/native/addon.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { tempDir } from '../helpers/native.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const fixture = (name: string) => path.join(repo, 'test/fixtures/recordings', name);

let dir: string;
beforeAll(() => {
  dir = tempDir('demangled');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of `name` as schema 6 wrote it. */
function schema6Copy(name: string): string {
  const file = path.join(dir, name);
  fs.copyFileSync(fixture(name), file);
  const db = new Database(file);
  // Schema 11's addition (0011-cpu-ops.ts), 10's (0010-nvtx-payload.ts), then 9's (0009-merge-sources.ts), then 8's.
  if ((db.pragma('user_version', { simple: true }) as number) >= 11) db.exec('DROP TABLE cpu_ops');
  if ((db.pragma('user_version', { simple: true }) as number) >= 10) db.exec('ALTER TABLE nvtx_ranges DROP COLUMN payload');
  if ((db.pragma('user_version', { simple: true }) as number) >= 9)
    db.exec('DROP TABLE sources; DROP TABLE source_rows; ALTER TABLE processes DROP COLUMN source_id; ALTER TABLE processes DROP COLUMN original_pid');
  if ((db.pragma('user_version', { simple: true }) as number) >= 8) {
    // Schema 8's additions (0008-ranks.ts) go first.
    db.exec(
      'DROP TABLE process_env; ALTER TABLE processes DROP COLUMN rank; ALTER TABLE processes DROP COLUMN local_rank; ALTER TABLE processes DROP COLUMN world_size; ALTER TABLE processes DROP COLUMN rank_variable',
    );
  }
  if ((db.pragma('user_version', { simple: true }) as number) >= 7) {
    db.exec('ALTER TABLE strings DROP COLUMN demangled');
    db.pragma('user_version = 6');
  }
  expect(db.prepare("SELECT count(*) FROM pragma_table_info('strings') WHERE name = 'demangled'").pluck().get()).toBe(0);
  db.close();
  return file;
}

/** Every table's rows (columns of schema 6 only), to compare before and after. */
function contents(file: string): Record<string, string[]> {
  const db = new Database(file, { readonly: true });
  try {
    // Tables and columns of schema 6: later migrations add their own (rows of theirs are compared by their own tests).
    const tables = (
      db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]
    ).filter((t) => t !== 'process_env' && t !== 'sources' && t !== 'source_rows' && t !== 'cpu_ops');
    const laterColumns = new Set(['demangled', 'rank', 'local_rank', 'world_size', 'rank_variable', 'source_id', 'original_pid', 'payload']);
    const columns = (t: string) =>
      (db.prepare(`SELECT name FROM pragma_table_info('${t}')`).pluck().all() as string[]).filter((c) => !laterColumns.has(c)).join(', ');
    // Sorted here: zones is a WITHOUT ROWID table.
    const rows = (t: string) =>
      (
        db
          .prepare(`SELECT ${columns(t)} FROM ${t}`)
          .raw()
          .all() as unknown[]
      )
        .map((r) => JSON.stringify(r))
        .sort();
    return Object.fromEntries(tables.map((t) => [t, rows(t)]));
  } finally {
    db.close();
  }
}

describe('migration 0007: strings.demangled', () => {
  it.each(['torch_streams.sqlite', 'normalise-concurrent.sqlite', 'numba_streams.sqlite', 'cupy_streams.sqlite'])(
    '%s: each _Z string gets its demangled form, nothing else changes',
    (name) => {
      const file = schema6Copy(name);
      const before = contents(file);
      const db = openRecording(file);
      const strings = db.prepare('SELECT id, value, demangled FROM strings ORDER BY id').all() as { id: number; value: string; demangled: string | null }[];
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      db.close();
      const mangled = strings.filter((s) => s.value.startsWith('_Z'));
      expect(mangled.map((s) => s.demangled)).toEqual(demangle(mangled.map((s) => s.value)));
      for (const s of mangled) expect(s.demangled, s.value).toEqual(expect.stringContaining('('));
      expect(strings.filter((s) => !s.value.startsWith('_Z')).every((s) => s.demangled === null)).toBe(true);
      if (name === 'cupy_streams.sqlite')
        expect(mangled).toEqual([]); // cuBLAS only: nothing to demangle, no addon needed
      else expect(mangled.length).toBeGreaterThan(0);
      expect(contents(file)).toEqual(before);
    },
  );

  it('without the native addon, says so about the file and leaves it at schema 6', () => {
    const file = schema6Copy('torch_prefetch.sqlite');
    const script = `import { openRecording } from ${JSON.stringify(path.join(repo, 'profiler/store/database.ts'))};
      try { openRecording(${JSON.stringify(file)}); } catch (e) { console.log(e.message); }`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, STREAMSCOPE_ADDON_PATH: path.join(dir, 'no-addon.node') },
    });
    expect(out).toContain(`${file}: cannot migrate to schema version 7: StreamScope native addon not built`);
    const db = new Database(file, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(6);
    db.close();
  });
});
