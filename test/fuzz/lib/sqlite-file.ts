// SQLite inputs made from real files (an Nsight Systems export, StreamScope
// recordings): a copy changed through SQL — tables dropped or replaced by
// views, columns dropped or renamed, values of the wrong type, huge or
// negative, rows deleted or doubled, user_version older or newer, meta
// keys changed — then its bytes: pages overwritten, the header's fields,
// the file cut short. What to do is the recipe fast-check generates and
// shrinks; `materializeSqlite` makes the file.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import fc from 'fast-check';

export type SqlValue = null | number | bigint | string | { blob: number[] };

export const sqlValue: fc.Arbitrary<SqlValue> = fc.oneof(
  fc.constantFrom<SqlValue>(
    null,
    0,
    -1,
    1,
    0.5,
    -0.5,
    1e308,
    -1e308,
    2 ** 53 + 2,
    2 ** 31,
    -(2 ** 31) - 1,
    9223372036854775807n,
    -9223372036854775808n,
    '',
    'x',
    '1e999',
    'NaN',
    '-Infinity',
    '12abc',
    '_Z',
    '_Z3foov',
    '_ZZZZZZZZZZZZZZZZ',
    '[1,2,3]',
    '{"a":',
    '["CREATE INDEX x ON nowhere(y)"]',
    { blob: [] },
    { blob: [0, 255, 1] },
  ),
  fc.integer().map((n) => n as SqlValue),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.double().map((n) => n as SqlValue),
  fc.string({ unit: 'binary', maxLength: 32 }),
  fc.integer({ min: 1, max: 100_000 }).map((n) => 'y'.repeat(n)),
  fc.string({ maxLength: 100 }).map((s) => `_Z${s}`),
);

/** A table of the file: among those the reader is known to read (`any` false), or any table. */
interface TablePick {
  table: number;
  any: boolean;
}

export type SqlMutation =
  | ({ op: 'drop-table' } & TablePick)
  | ({ op: 'as-view' } & TablePick)
  | ({ op: 'drop-column'; column: number } & TablePick)
  | ({ op: 'rename-column'; column: number } & TablePick)
  | ({ op: 'set'; column: number; value: SqlValue; row: number | null } & TablePick)
  | ({ op: 'delete'; keepEvery: number } & TablePick)
  | ({ op: 'duplicate' } & TablePick)
  | { op: 'user-version'; value: number }
  | { op: 'meta'; key: string; value: SqlValue | undefined };

export type ByteMutation =
  { page: number; offset: number; bytes: number[] } | { page: number; fill: number } | { header: number; byte: number } | { truncate: number };

export interface SqliteRecipe {
  fixture: number;
  sql: SqlMutation[];
  bytes: ByteMutation[];
}

export interface SqliteFixtures {
  files: string[];
  /** Tables the reader reads: most mutations pick among these. */
  tables: string[];
  /** user_version values worth trying (older, newer, nonsense). */
  userVersions: number[];
  /** meta keys worth changing (StreamScope recordings), if the file has a meta table. */
  metaKeys?: string[];
}

export function sqliteRecipe(f: SqliteFixtures): fc.Arbitrary<SqliteRecipe> {
  const pick = { table: fc.nat(), any: fc.nat(5).map((n) => n === 0) };
  const sql: fc.Arbitrary<SqlMutation> = fc.oneof(
    fc.record({ op: fc.constant('drop-table' as const), ...pick }),
    fc.record({ op: fc.constant('as-view' as const), ...pick }),
    fc.record({ op: fc.constant('drop-column' as const), column: fc.nat(), ...pick }),
    fc.record({ op: fc.constant('rename-column' as const), column: fc.nat(), ...pick }),
    {
      weight: 6,
      arbitrary: fc.record({ op: fc.constant('set' as const), column: fc.nat(), value: sqlValue, row: fc.option(fc.nat(), { nil: null }), ...pick }),
    },
    fc.record({ op: fc.constant('delete' as const), keepEvery: fc.nat(4), ...pick }),
    fc.record({ op: fc.constant('duplicate' as const), ...pick }),
    fc.record({ op: fc.constant('user-version' as const), value: fc.oneof(fc.constantFrom(...f.userVersions), fc.integer()) }),
    ...(f.metaKeys
      ? [
          fc.record({
            op: fc.constant('meta' as const),
            key: fc.oneof(fc.constantFrom(...f.metaKeys), fc.string({ maxLength: 8 })),
            value: fc.option(sqlValue, { nil: undefined }),
          }),
        ]
      : []),
  );
  const bytes: fc.Arbitrary<ByteMutation> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ page: fc.nat(), offset: fc.nat(65535), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 16 }) }),
    },
    fc.record({ page: fc.nat(), fill: fc.constantFrom(0, 0xff, 0x0d, 0x05) }),
    fc.record({ header: fc.nat(99), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ truncate: fc.double({ min: 0, max: 1, noNaN: true }) }),
  );
  return fc.record({
    // The first file most often (a small one where there is: inputs worth keeping are small).
    fixture: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.nat()),
    // Most inputs change the file through SQL or its bytes, not both: a file with a corrupt page rarely gets to the SQL.
    sql: fc.array(sql, { maxLength: 4 }),
    bytes: fc.oneof({ weight: 3, arbitrary: fc.constant<ByteMutation[]>([]) }, { weight: 2, arbitrary: fc.array(bytes, { minLength: 1, maxLength: 3 }) }),
  });
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

function bind(v: SqlValue): unknown {
  return v !== null && typeof v === 'object' ? Buffer.from(v.blob) : v;
}

/** Writes the recipe's file at `out` (deterministic: the same recipe, the same bytes). */
export function materializeSqlite(f: SqliteFixtures, r: SqliteRecipe, out: string): void {
  fs.copyFileSync(f.files[r.fixture % f.files.length]!, out);
  if (r.sql.length) {
    const db = new Database(out);
    // A table others reference drops too (better-sqlite3 turns foreign keys on).
    db.pragma('foreign_keys = OFF');
    try {
      for (const m of r.sql) applySql(db, f, m);
    } finally {
      db.close();
    }
  }
  if (r.bytes.length) {
    let b: Buffer = fs.readFileSync(out);
    for (const m of r.bytes) b = applyBytes(b, m);
    fs.writeFileSync(out, b);
  }
}

function tablesOf(db: Database.Database): string[] {
  return (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
    (t) => t.name,
  );
}

function applySql(db: Database.Database, f: SqliteFixtures, m: SqlMutation): void {
  // A mutation SQLite refuses (a column an index needs, a view's rows) is left out: the file is what the others made it.
  try {
    if (m.op === 'user-version') {
      db.pragma(`user_version = ${m.value | 0}`);
      return;
    }
    if (m.op === 'meta') {
      if (m.value === undefined) db.prepare('DELETE FROM meta WHERE key = ?').run(m.key);
      else db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(m.key, bind(m.value));
      return;
    }
    const all = tablesOf(db);
    const focus = all.filter((t) => f.tables.includes(t));
    const list = m.any || focus.length === 0 ? all : focus;
    if (list.length === 0) return;
    const table = list[m.table % list.length]!;
    const info = db.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string; type: string; pk: number }[];
    const columns = info.map((c) => c.name);
    const column = 'column' in m && columns.length ? columns[m.column % columns.length]! : null;
    switch (m.op) {
      case 'drop-table':
        db.exec(`DROP TABLE ${quote(table)}`);
        break;
      case 'as-view':
        db.exec(`DROP TABLE ${quote(table)}; CREATE VIEW ${quote(table)} AS SELECT 1 AS x`);
        break;
      case 'drop-column':
        if (!column) return;
        // Indexes on the column would refuse the drop: they go first.
        for (const i of db.prepare(`SELECT name FROM pragma_index_list(?) WHERE origin = 'c'`).all(table) as { name: string }[])
          db.exec(`DROP INDEX ${quote(i.name)}`);
        db.exec(`ALTER TABLE ${quote(table)} DROP COLUMN ${quote(column)}`);
        break;
      case 'rename-column':
        if (column) db.exec(`ALTER TABLE ${quote(table)} RENAME COLUMN ${quote(column)} TO ${quote(`${column}_renamed`)}`);
        break;
      case 'set': {
        if (!column) return;
        const where =
          m.row === null ? '' : ` WHERE rowid = (SELECT rowid FROM ${quote(table)} LIMIT 1 OFFSET ${m.row} % max(1, (SELECT count(*) FROM ${quote(table)})))`;
        db.prepare(`UPDATE ${quote(table)} SET ${quote(column)} = ?${where}`).run(bind(m.value));
        break;
      }
      case 'delete':
        db.exec(m.keepEvery === 0 ? `DELETE FROM ${quote(table)}` : `DELETE FROM ${quote(table)} WHERE rowid % ${m.keepEvery + 1} != 0`);
        break;
      case 'duplicate': {
        // Every row again, under a new rowid where the key is one (an id INTEGER PRIMARY KEY).
        const keys = info.filter((c) => c.pk > 0);
        const rowidKey = keys.length === 1 && /^integer$/i.test(keys[0]!.type) ? keys[0]!.name : null;
        const select = info.map((c) => (c.name === rowidKey ? 'NULL' : quote(c.name))).join(', ');
        db.exec(`INSERT OR IGNORE INTO ${quote(table)} SELECT ${select} FROM ${quote(table)}`);
        break;
      }
    }
  } catch {
    // refused: nothing changed
  }
}

function applyBytes(b: Buffer, m: ByteMutation): Buffer {
  if ('truncate' in m) return b.subarray(0, Math.floor(m.truncate * b.length));
  if ('header' in m) {
    if (m.header >= b.length) return b;
    const c = Buffer.from(b);
    c[m.header] = m.byte;
    return c;
  }
  // The page size from the header (offset 16, big-endian; 1 means 65536).
  const raw = b.length >= 18 ? b.readUInt16BE(16) : 4096;
  const pageSize = raw === 1 ? 65536 : raw >= 512 ? raw : 4096;
  const pages = Math.max(1, Math.floor(b.length / pageSize));
  const start = (m.page % pages) * pageSize;
  const c = Buffer.from(b);
  if ('fill' in m) c.fill(m.fill, start, Math.min(c.length, start + pageSize));
  else {
    const at = start + (m.offset % pageSize);
    for (let i = 0; i < m.bytes.length && at + i < c.length; i++) c[at + i] = m.bytes[i]!;
  }
  return c;
}
