// The SQL console (profiler/query/sql-console.ts) on real recordings: its
// views against the tables they read, what it refuses and why (checked on
// the connection itself: no refusal may leave it writable), the time limit
// and the row cap, values as the API sends them, and where an error points.
// The file is never changed: its sha256 is the same after everything.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import {
  SQL_EXAMPLES,
  SQL_ITEM_COLUMNS,
  SQL_ROW_LIMIT,
  SQL_VIEWS,
  sqlItemColumns,
  type SqlAnswer,
  type SqlFailure,
  type SqlRows,
} from '../../profiler/contract/sql.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { SqlConsole } from '../../profiler/query/sql-console.ts';
import { errorPosition, refusalOf } from '../../profiler/query/sql-guard.ts';
import { ApiError } from '../../profiler/query/api-error.ts';

const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
const fixture = (name: string) => path.join(fixtures, `${name}.sqlite`);
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function rows(a: SqlAnswer): SqlRows {
  if (!a.ok) throw new Error(`expected rows, got ${a.problem}: ${a.message}`);
  return a;
}
function failure(a: SqlAnswer): SqlFailure {
  if (a.ok) throw new Error(`expected a failure, got ${a.rows.length} rows`);
  return a;
}

describe('the views', () => {
  // A recording of each kind: streams of every flag, copies of every memory kind, NCCL payloads, NVTX, syncs.
  const files = ['torch_prefetch', 'nccl-serial-h200x2', 'per-thread-default-stream', 'normalise-pageable', 'cupy_streams_events', 'nvtx_torch'];

  it.each(files)('%s: each has a row per row of its table, and the id column that links it', (name) => {
    const sql = new SqlConsole(fixture(name));
    const db = new Database(fixture(name), { readonly: true });
    try {
      const count = (q: string) => rows(sql.run(q)).rows[0]![0];
      const tableOf: Record<string, string> = {
        kernel_view: 'kernels',
        copy_view: 'memcpys',
        memset_view: 'memsets',
        sync_view: 'syncs',
        api_view: 'api_calls',
        nvtx_view: 'nvtx_ranges',
      };
      for (const [view, table] of Object.entries(tableOf)) {
        expect(count(`SELECT count(*) FROM ${view}`), view).toBe((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
        const r = rows(sql.run(`SELECT * FROM ${view} LIMIT 1`));
        expect(r.items.map((c) => c.table)).toEqual([table]);
        expect(r.columns[r.items[0]!.column]).toBe(SQL_ITEM_COLUMNS[table as keyof typeof SQL_ITEM_COLUMNS]);
      }
      expect(count('SELECT count(*) FROM operation_view')).toBe(
        (db.prepare('SELECT (SELECT count(*) FROM kernels) + (SELECT count(*) FROM memcpys) + (SELECT count(*) FROM memsets) AS n').get() as { n: number }).n,
      );
      expect(SQL_VIEWS.map((v) => v.name).sort()).toEqual([...Object.keys(tableOf), 'operation_view'].sort());
    } finally {
      sql.close();
      db.close();
    }
  });

  it.each(files)('%s: streams, GPUs, names and times read as the timeline shows them', (name) => {
    const sql = new SqlConsole(fixture(name));
    const q = new RecordingQuery('x', fixture(name));
    const db = new Database(fixture(name), { readonly: true });
    try {
      const summary = q.summary();
      // Each operation's stream: its CUPTI id and kind as the timeline labels it, its GPU's ordinal.
      const streams = rows(sql.run('SELECT DISTINCT stream_id, stream, stream_kind, gpu, pid FROM operation_view')).rows;
      expect(streams.length).toBeGreaterThan(0);
      for (const [streamId, cupti, kind, gpu, pid] of streams) {
        const s = summary.streams.find((x) => x.id === streamId)!;
        expect([cupti, kind, pid], `stream ${streamId}`).toEqual([s.cuptiStreamId, s.kind, s.pid]);
        expect(gpu).toBe(summary.devices.find((d) => d.id === s.deviceId)!.ordinal);
      }
      // Kernel names as details() gives them (demangled where they are mangled), times in µs of the stored ns.
      const k = rows(sql.run('SELECT kernel_id, name, stored_name, start_us, end_us, duration_us FROM kernel_view ORDER BY kernel_id DESC LIMIT 1')).rows[0];
      if (k) {
        const d = q.details({ table: 'kernels', id: k[0] as number });
        expect(k[1]).toBe(d.demangledName ?? d.name);
        expect(k[2]).toBe(d.name);
        expect([k[3], k[4], k[5]]).toEqual([d.startNs / 1e3, d.endNs / 1e3, (d.endNs - d.startNs) / 1e3]);
      }
      // Copies: kinds by name, throughput as bytes per ns (GB/s).
      const c = rows(sql.run('SELECT memcpy_id, kind, src_kind, dst_kind, bytes, gb_per_s, duration_us FROM copy_view ORDER BY memcpy_id LIMIT 1')).rows[0];
      if (c) {
        const d = q.details({ table: 'memcpys', id: c[0] as number });
        expect(d.name).toBe(`Memcpy ${c[1]}`);
        const raw = db.prepare('SELECT src_kind, dst_kind FROM memcpys WHERE id = ?').get(c[0]) as { src_kind: number; dst_kind: number };
        const kinds = ['unknown', 'pageable', 'pinned', 'device', 'array', 'managed', 'device static', 'managed static'];
        expect([c[2], c[3]]).toEqual([kinds[raw.src_kind], kinds[raw.dst_kind]]);
        expect(c[5]).toBeCloseTo((c[4] as number) / ((c[6] as number) * 1e3), 9);
      }
    } finally {
      sql.close();
      q.close();
      db.close();
    }
  });

  it('every example query runs on every fixture, within the limits', () => {
    const names = fs.readdirSync(fixtures).filter((f) => f.endsWith('.sqlite'));
    for (const f of names) {
      const sql = new SqlConsole(path.join(fixtures, f));
      try {
        for (const ex of SQL_EXAMPLES) {
          const r = sql.run(ex.sql);
          expect(r.ok ? null : (r as SqlFailure).message, `${f}: ${ex.title}`).toBeNull();
        }
      } finally {
        sql.close();
      }
    }
  });

  it('the NCCL example finds each collective call with its message size from the payload', () => {
    const sql = new SqlConsole(fixture('nccl-serial-h200x2'));
    try {
      const r = rows(sql.run(SQL_EXAMPLES.find((e) => e.title.startsWith('NCCL'))!.sql));
      const col = (name: string) => r.columns.indexOf(name);
      expect(r.rows.length).toBeGreaterThan(0);
      for (const row of r.rows) {
        expect(row[col('call')]).toMatch(/^nccl/);
        expect(row[col('bytes')]).toBeGreaterThan(0);
        expect(row[col('kernel')]).toMatch(/^ncclDevKernel_/);
      }
      expect(r.items.map((i) => i.table).sort()).toEqual(['kernels', 'nvtx_ranges']);
    } finally {
      sql.close();
    }
  });
});

describe('read-only, always', () => {
  const file = fixture('normalise-concurrent');
  let sql: SqlConsole;
  let before: string;
  beforeAll(() => {
    before = sha256(file);
    sql = new SqlConsole(file);
  });
  afterAll(() => sql.close());

  it('SQLite acts on a PRAGMA while preparing it, which is why the text is checked first', () => {
    // The reason sql-guard.ts exists: on a plain read-only connection, preparing is enough.
    const db = new Database(file, { readonly: true });
    try {
      db.pragma('query_only = 1');
      db.prepare('PRAGMA query_only = 0');
      expect(db.pragma('query_only', { simple: true })).toBe(0);
    } finally {
      db.close();
    }
  });

  const refused: [string, RegExp][] = [
    ['DELETE FROM kernels', /DELETE is refused: the SQL console only reads/],
    ['INSERT INTO meta VALUES (1, 2)', /INSERT is refused/],
    ['UPDATE kernels SET start_ns = 0', /UPDATE is refused/],
    ['DROP TABLE kernels', /DROP is refused/],
    ['CREATE TEMP TABLE t (x)', /CREATE is refused/],
    ["ATTACH DATABASE '/tmp/other.sqlite' AS other", /ATTACH is refused: the console reads this recording and nothing else/],
    ['DETACH other', /DETACH is refused/],
    ['PRAGMA writable_schema = 1', /PRAGMA writable_schema is refused/],
    ['PRAGMA writable_schema', /PRAGMA writable_schema is refused/],
    ['pragma main.query_only=0', /PRAGMA query_only is refused/],
    ['PRAGMA user_version = 3', /PRAGMA user_version = … is refused: it sets a value/],
    ['PRAGMA user_version(3)', /PRAGMA user_version\(…\) is refused/],
    ['EXPLAIN PRAGMA query_only = 0', /PRAGMA query_only is refused/],
    ['VACUUM', /VACUUM is refused/],
    ["VACUUM INTO '/tmp/copy.sqlite'", /VACUUM is refused/],
    ['BEGIN', /BEGIN is refused: each query runs on its own/],
    ['WITH x AS (SELECT 1) DELETE FROM kernels', /DELETE is refused: the statement writes/],
    ['WITH x AS (SELECT 1) INSERT INTO meta SELECT 1, 2 FROM x', /INSERT is refused: the statement writes/],
    ['SELECT 1; DELETE FROM kernels', /more than one statement/],
    ['SELECT 1; PRAGMA query_only = 0', /more than one statement/],
    ['   ', /no statement to run/],
    ['-- just a comment', /no statement to run/],
  ];
  it.each(refused)('refuses %j, names the file, and leaves the connection read-only', (query, message) => {
    const f = failure(sql.run(query));
    expect(f.problem).toBe('refused');
    expect(f.message.startsWith(`${file}: `)).toBe(true);
    expect(f.message).toMatch(message);
    expect(rows(sql.run('SELECT * FROM pragma_query_only')).rows).toEqual([[1]]);
    expect(rows(sql.run('SELECT count(*) FROM kernels')).rows[0]![0]).toBeGreaterThan(0);
  });

  it('points a refusal at what it refuses', () => {
    expect(failure(sql.run('SELECT 1;\n  DELETE FROM kernels')).position).toEqual({ start: 12, end: 18 });
    expect(failure(sql.run('PRAGMA  writable_schema=1')).position).toEqual({ start: 8, end: 23 });
    expect(failure(sql.run('WITH x AS (SELECT 1) DELETE FROM kernels')).position).toEqual({ start: 21, end: 27 });
  });

  it('runs what reads: quoted semicolons and dashes, a trailing comment, PRAGMAs that read, EXPLAIN', () => {
    expect(rows(sql.run('SELECT \';\' AS a, \'--\' AS b, "x;y" FROM (SELECT 1 AS "x;y");')).rows).toEqual([[';', '--', 1]]);
    expect(rows(sql.run('SELECT 2; -- done')).rows).toEqual([[2]]);
    expect(rows(sql.run('PRAGMA table_info(kernels)')).rows.map((r) => r[1])).toContain('start_ns');
    expect(rows(sql.run('PRAGMA user_version')).rows[0]![0]).toBeGreaterThanOrEqual(10);
    expect(rows(sql.run('EXPLAIN QUERY PLAN SELECT * FROM kernels WHERE id = 1')).rows.length).toBeGreaterThan(0);
    expect(rows(sql.run('VALUES (1, 2)')).rows).toEqual([[1, 2]]);
  });

  it('gives queries no way to load code or lift the time limit they run under', () => {
    expect(failure(sql.run("SELECT load_extension('/tmp/x.so')")).message).toMatch(/not authorized/);
    expect(failure(sql.run('SELECT streamscope_time_limit(100000)')).message).toMatch(/a time limit is already set/);
    expect(failure(sql.run('SELECT streamscope_time_limit_clear(1)')).message).toMatch(/not the token of the armed time limit/);
  });

  it('stops a runaway query at its time limit, with a message, and runs the next one', () => {
    const f = failure(sql.run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', { timeoutMs: 300 }));
    expect(f.problem).toBe('timeout');
    expect(f.message).toBe(
      `${file}: the query ran longer than 0.3 s and was stopped (its time limit): narrow it with WHERE or LIMIT (a recursive CTE needs a condition that ends it), or give it longer (streamscope sql --timeout)`,
    );
    expect(rows(sql.run('SELECT count(*) FROM kernels')).rows[0]![0]).toBeGreaterThan(0);
    // One that returns rows forever is stopped the same way.
    expect(failure(sql.run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0', { timeoutMs: 200 })).problem).toBe(
      'timeout',
    );
  });

  it('keeps at most rowLimit rows and says when there were more', () => {
    const upTo = (n: number) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT x FROM c`;
    const cut = rows(sql.run(upTo(SQL_ROW_LIMIT + 5)));
    expect([cut.rows.length, cut.truncated, cut.rowLimit, cut.rows.at(-1)]).toEqual([SQL_ROW_LIMIT, true, SQL_ROW_LIMIT, [SQL_ROW_LIMIT]]);
    const exact = rows(sql.run(upTo(SQL_ROW_LIMIT)));
    expect([exact.rows.length, exact.truncated]).toEqual([SQL_ROW_LIMIT, false]);
    const few = rows(sql.run(upTo(10), { rowLimit: 3 }));
    expect([few.rows, few.truncated]).toEqual([[[1], [2], [3]], true]);
  });

  it('leaves the file as it was', () => {
    expect(sha256(file)).toBe(before);
  });
});

describe('values, columns and errors', () => {
  let sql: SqlConsole;
  beforeAll(() => {
    sql = new SqlConsole(fixture('torch_prefetch'));
  });
  afterAll(() => sql.close());

  it('sends integers beyond 2^53 as their digits, blobs as hex literals, NULL as null', () => {
    const r = rows(sql.run("SELECT 9007199254740993 AS big, 9007199254740991 AS safe, x'00ff' AS b, NULL AS n, 1.5 AS f, 'é' AS t"));
    expect(r.rows).toEqual([['9007199254740993', 9007199254740991, "x'00ff'", null, 1.5, 'é']]);
  });

  it('marks the columns named after an item table as links, whatever their case', () => {
    expect(sqlItemColumns(['x', 'Kernel_ID', 'memcpy_id', 'nvtx_range_id', 'id'])).toEqual([
      { column: 1, table: 'kernels' },
      { column: 2, table: 'memcpys' },
      { column: 3, table: 'nvtx_ranges' },
    ]);
    expect(rows(sql.run('SELECT id AS kernel_id FROM kernels LIMIT 1')).items).toEqual([{ column: 0, table: 'kernels' }]);
  });

  const errors: [string, string, string | null][] = [
    ['SELECT * FROMM kernels', 'near "FROMM": syntax error', 'FROMM'],
    ['SELECT nme FROM kernel_view', 'no such column: nme', 'nme'],
    ['SELECT k.nme FROM kernel_view k', 'no such column: k.nme', 'k.nme'],
    ['SELECT * FROM kernel_vew', 'no such table: kernel_vew', 'kernel_vew'],
    ['SELECT sums(1)', 'no such function: sums', 'sums'],
    ['SELECT id FROM kernels, memcpys', 'ambiguous column name: id', 'id'],
    ["SELECT 'name' AS kernel FROM kernels WHERE", 'incomplete input', ''],
  ];
  it.each(errors)('%j: SQLite says %j, pointing at %j', (query, message, token) => {
    const f = failure(sql.run(query));
    expect(f.problem).toBe('error');
    expect(f.message).toBe(`${path.join(fixtures, 'torch_prefetch.sqlite')}: ${message}`);
    expect(f.position).not.toBeNull();
    expect(query.slice(f.position!.start, f.position!.end)).toBe(token);
    if (token === '') expect(f.position!.start).toBe(query.length);
  });

  it('finds the token outside comments and strings, as a whole word', () => {
    const q = "-- nme here is a comment\nSELECT 'nme', nmex, nme FROM t";
    expect(errorPosition(q, 'no such column: nme')).toEqual({ start: q.lastIndexOf('nme'), end: q.lastIndexOf('nme') + 3 });
    expect(errorPosition('SELECT 1', 'some other error')).toBeNull();
    expect(refusalOf("SELECT 'a;b' -- ; DELETE\n")).toBeNull();
    expect(refusalOf('/* DELETE */ SELECT 1')).toBeNull();
    expect(refusalOf('SELECT [a;b] FROM t')).toBeNull();
  });

  it('names the file a console cannot open, with its problem', () => {
    expect(() => new SqlConsole(path.join(fixtures, 'PROVENANCE.md'))).toThrow(ApiError);
    expect(() => new SqlConsole(path.join(fixtures, 'no-such.sqlite'))).toThrow(/no-such\.sqlite: no such file/);
  });
});
