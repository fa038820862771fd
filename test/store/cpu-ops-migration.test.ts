// Migration 0011 (cpu_ops) on a recording made before it: the table comes,
// empty (the collector records CUDA, not the framework's operators: only
// an imported PyTorch trace fills it), and nothing else changes.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { tempDir } from '../helpers/native.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const dir = tempDir('cpu-ops-migration');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('migration 0011 on a recording of schema 10', () => {
  it('adds an empty cpu_ops table and changes no other table', () => {
    const file = path.join(dir, 'v10.sqlite');
    fs.copyFileSync(path.join(repo, 'test/fixtures/recordings/torch_streams.sqlite'), file);
    const old = new Database(file);
    if ((old.pragma('user_version', { simple: true }) as number) >= 11) old.exec('DROP TABLE cpu_ops');
    old.pragma('user_version = 10');
    const tables = (db: Database.Database) =>
      Object.fromEntries(
        (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[]).map((t) => [
          t,
          db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get(),
        ]),
      );
    const before = tables(old);
    old.close();
    expect(before.cpu_ops).toBeUndefined();
    const db = openRecording(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      expect(tables(db)).toEqual({ ...before, cpu_ops: 0 });
      expect(db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').pluck().all('cpu_ops')).toEqual([
        'id',
        'start_ns',
        'end_ns',
        'pid',
        'tid',
        'kind',
        'name_id',
        'forward_id',
      ]);
    } finally {
      db.close();
    }
  });
});
