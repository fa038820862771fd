// The native ingest's SQL against the schema migrations. Every statement the
// ingest prepares (native/addon/src/ingest_statements.cc, exported by the
// addon as ingestStatements) must compile on a freshly migrated recording,
// and every column of every table it writes must be written by it or be
// named below with the reason it is not. So a migration that adds a column
// or a table fails here until the ingest writes it or this file says why
// not, and a column the ingest writes that a migration renamed or dropped
// fails with the statement's name.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { nativeVocabulary } from '../../profiler/native/addon.ts';
import { createRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { tempDir } from '../helpers/native.ts';

/** Tables of a recording the native ingest does not write, and why. */
const TABLES_NOT_WRITTEN: Record<string, string> = {
  meta: 'facts about the recording as a whole: the recorder writes them (profiler/record)',
  sources: 'the recordings a merged recording was made of: streamscope merge writes them (profiler/merge)',
  source_rows: 'as sources',
  cpu_ops:
    "the framework's CPU operations (PyTorch's operators): only an imported PyTorch profiler trace holds them (profiler/import/kineto.ts); the collector records CUDA",
};

/** Columns of tables the ingest writes that it leaves to others, and why. */
const COLUMNS_NOT_WRITTEN: Record<string, Record<string, string>> = {
  devices: {
    pcie_generation: 'the PCIe link comes from NVML at record time (profiler/record/finalize.ts); the record stream has no such field',
    pcie_width: 'as pcie_generation',
  },
  threads: { name: 'CUPTI does not report thread names; importers fill them' },
  processes: {
    rank: "read from the process_env rows the ingest writes, when the recording is finished (profiler/store/ranks.ts): the launchers' rules are defined once, in TypeScript (profiler/contract/ranks.ts), for the recording and for record -o %r",
    local_rank: 'as rank',
    world_size: 'as rank',
    rank_variable: 'as rank',
    source_id: 'the recording a process of a merged recording came from: streamscope merge writes it (profiler/merge); NULL in a recording',
    original_pid: 'as source_id: its pid there, when merge renumbered it',
  },
};

const dir = tempDir('ingest-schema');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function freshRecording(): Database.Database {
  const file = path.join(dir, 'fresh.sqlite');
  createRecording(file, { overwrite: true }).close();
  return new Database(file, { readonly: true });
}

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

describe('native ingest statements and the schema migrations', () => {
  const { ingestStatements, ingestSchemaVersion } = nativeVocabulary();

  it('the ingest writes the newest schema version (a new migration asks for this file and the ingest to be looked at)', () => {
    expect(ingestSchemaVersion).toBe(latestSchemaVersion);
  });

  it('every statement compiles on a freshly migrated recording', () => {
    const db = freshRecording();
    try {
      expect(ingestStatements.length).toBeGreaterThan(20);
      for (const s of ingestStatements) {
        expect(() => db.prepare(s.sql), `${s.name}: ${s.sql}`).not.toThrow();
      }
    } finally {
      db.close();
    }
  });

  it('every column of every table is written by the ingest, assigned by SQLite, or named here with the reason it is not', () => {
    const db = freshRecording();
    try {
      const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
      const written = new Map<string, Set<string>>();
      for (const s of ingestStatements) {
        if (s.table === null) continue;
        const set = written.get(s.table) ?? new Set<string>();
        for (const c of s.columns) set.add(c);
        written.set(s.table, set);
      }
      const problems: string[] = [];
      // Tables: written, or named with a reason; no reason for a table that is written or gone.
      for (const t of tables)
        if (!written.has(t) && !(t in TABLES_NOT_WRITTEN)) problems.push(`table ${t}: neither written by the ingest nor in TABLES_NOT_WRITTEN`);
      for (const t of Object.keys(TABLES_NOT_WRITTEN)) if (!tables.includes(t) || written.has(t)) problems.push(`table ${t}: stale TABLES_NOT_WRITTEN entry`);
      for (const t of Object.keys(COLUMNS_NOT_WRITTEN))
        if (!written.has(t)) problems.push(`table ${t}: in COLUMNS_NOT_WRITTEN, but the ingest does not write it`);
      for (const [table, columns] of written) {
        if (!tables.includes(table)) {
          problems.push(`table ${table}: written by the ingest, not in the schema`);
          continue;
        }
        const info = db.prepare(`PRAGMA table_info(${table})`).all() as ColumnInfo[];
        const names = new Set(info.map((c) => c.name));
        const reasons = COLUMNS_NOT_WRITTEN[table] ?? {};
        for (const c of columns) if (!names.has(c)) problems.push(`${table}.${c}: written by the ingest, not in the schema`);
        for (const c of info) {
          // An INTEGER PRIMARY KEY is the rowid: SQLite assigns it.
          const rowid = c.pk === 1 && c.type.toUpperCase() === 'INTEGER' && info.filter((x) => x.pk > 0).length === 1;
          if (columns.has(c.name) || rowid) continue;
          if (!(c.name in reasons)) problems.push(`${table}.${c.name}: in the schema, neither written by the ingest nor in COLUMNS_NOT_WRITTEN`);
          else if (c.notnull && c.dflt_value === null) problems.push(`${table}.${c.name}: NOT NULL without a default, so the ingest must write it`);
        }
        for (const c of Object.keys(reasons)) if (!names.has(c) || columns.has(c)) problems.push(`${table}.${c}: stale COLUMNS_NOT_WRITTEN entry`);
      }
      expect(problems).toEqual([]);
    } finally {
      db.close();
    }
  });
});
