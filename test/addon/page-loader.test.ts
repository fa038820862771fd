// The column loader reading a recording's table b-trees from its pages
// (native/addon/src/btree_reader.h, table_loader.cc PageSource) against the
// same loader through SQLite: column for column, row for row, on real
// files — every GPU recording among the fixtures, a merged job, imported
// traces — and on files made to be awkward: small pages (deep trees),
// tables given columns by ALTER TABLE ADD COLUMN after rows were written
// (short records read the default), integers of every stored width. A value
// that is not an integer where one is read (a REAL, NULL, TEXT, a BLOB,
// stored or a short record's default) is refused the same way both ways,
// naming its row (native/addon/src/row_rules.h). What the pages cannot give
// exactly (a record overflowing its page, a live WAL) is read through
// SQLite, and says why; damaged recordings fail as they do through SQLite.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { importTrace } from '../../profiler/import/index.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { ColumnPool, loadRows, loadTimelineColumns, type CallColumns, type OpColumns } from '../../profiler/native/addon.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const recording = (name: string) => path.join(fixtures, 'recordings', `${name}.sqlite`);
const dir = tempDir('page-loader');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Columns = OpColumns | CallColumns;

/** Every column's values as plain arrays (toEqual on typed arrays of millions is slow to report). */
function plain(c: Columns): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [k, v] of Object.entries(c)) if (k !== 'length') out[k] = Array.from(v as Float64Array);
  return out;
}

/** Loads `file` through SQLite and through its pages (forced: it throws where it cannot); the two must agree. */
function samePagesAsSql(file: string): { ops: number; calls: number } {
  const sql = loadTimelineColumns(file, { via: 'sql' });
  const pages = loadTimelineColumns(file, { via: 'pages' });
  expect(sql.via).toBe('sql: asked for');
  expect(pages.via).toBe('pages');
  expect(pages.ops.length).toBe(sql.ops.length);
  expect(pages.calls.length).toBe(sql.calls.length);
  expect(plain(pages.ops)).toEqual(plain(sql.ops));
  expect(plain(pages.calls)).toEqual(plain(sql.calls));
  return { ops: sql.ops.length, calls: sql.calls.length };
}

function copy(from: string, name: string): string {
  const to = path.join(dir, name);
  fs.copyFileSync(from, to);
  return to;
}

function edit(file: string, sql: string): void {
  const db = new Database(file);
  try {
    db.exec(`PRAGMA foreign_keys = OFF; ${sql}`);
  } finally {
    db.close();
  }
}

describe('page loader: the same columns as SQLite', () => {
  const gpu = fs
    .readdirSync(path.join(fixtures, 'recordings'))
    .filter((f) => f.endsWith('.sqlite'))
    .map((f) => path.join(fixtures, 'recordings', f));

  it.each(gpu.map((f) => [path.basename(f), f]))('GPU recording %s', (_, file) => {
    samePagesAsSql(file);
  });

  it('a merged job (its tables written as pages by the merge)', () => {
    const out = path.join(dir, 'job.sqlite');
    mergeRecordings([recording('nccl-node0-h200x2'), recording('nccl-node1-h200x2')], out);
    const n = samePagesAsSql(out);
    expect(n.ops).toBeGreaterThan(1000);
  });

  it('imported traces: a PyTorch profiler trace and an Nsight Systems export', async () => {
    for (const [from, name] of [
      [path.join(fixtures, 'kineto/torch_streams_h100.json'), 'kineto.sqlite'],
      [path.join(fixtures, 'nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite'), 'nsys.sqlite'],
    ] as const) {
      const out = path.join(dir, name);
      await importTrace(from, out);
      expect(samePagesAsSql(out).ops).toBeGreaterThan(0);
    }
  });

  it('pages of 512 and 1024 bytes: trees four and five levels deep', () => {
    for (const size of [512, 1024]) {
      const file = copy(recording('nccl-overlap-h200x2'), `small-${size}.sqlite`);
      edit(file, `PRAGMA page_size = ${size}; VACUUM;`);
      const db = new Database(file, { readonly: true });
      expect(db.pragma('page_size', { simple: true })).toBe(size);
      db.close();
      expect(samePagesAsSql(file).calls).toBe(49348);
    }
  });

  it('rowid ranges (loadRows), whole and narrow, by pid and zones, agree too', () => {
    const file = recording('nccl-straggler-h200x2');
    const db = new Database(file, { readonly: true });
    const max = (t: string) => (db.prepare(`SELECT max(id) AS n FROM ${t}`).get() as { n: number }).n;
    const ranges = { kernels: [1, 50, 200, max('kernels')], memcpys: [1, max('memcpys')], memsets: [1, max('memsets') ?? 0], apiCalls: [3, max('api_calls')] };
    db.close();
    for (const options of [{}, { narrow: true }, { pids: [883] }, { callMinNs: 10_000, maxStart: 2e9 }]) {
      const sql = loadRows(file, ranges, { ...options, via: 'sql' }, new ColumnPool());
      const pages = loadRows(file, ranges, { ...options, via: 'pages' }, new ColumnPool());
      expect(pages.via).toBe('pages');
      expect(plain(pages.ops)).toEqual(plain(sql.ops));
      expect(plain(pages.calls)).toEqual(plain(sql.calls));
    }
  });
});

describe('page loader: records and values', () => {
  it('integers of every stored width, and SQLite 0 and 1 without body bytes', () => {
    const file = copy(recording('torch_streams'), 'widths.sqlite');
    // Serial types 8 and 9 (0, 1), 1–6 (1, 2, 3, 4, 6, 8 bytes), negative and positive.
    const values = [0, 1, -1, 127, -128, 200, -32768, 40_000, -8_388_608, 2_147_483_647, -2_147_483_648, 2 ** 40, -(2 ** 40), 2 ** 47, 2 ** 53 - 1, -(2 ** 53)];
    edit(
      file,
      `UPDATE kernels SET correlation_id = CASE id % ${values.length} ${values.map((v, k) => `WHEN ${k} THEN ${v}`).join(' ')} END,
         grid_y = CASE id % 3 WHEN 0 THEN 0 WHEN 1 THEN 1 ELSE 65535 END, registers_per_thread = -(id % 5) * 70000;
       UPDATE api_calls SET domain = (id % 3) - 1;
       UPDATE memcpys SET bytes = CASE id % 3 WHEN 0 THEN 9223372036854775807 WHEN 1 THEN 0 ELSE 4294967296 END;`,
    );
    samePagesAsSql(file);
  });

  it('a value that is not an integer where one is read: refused the same way both ways, its table, row and column named', () => {
    const cases: [string, string, RegExp][] = [
      ['UPDATE kernels SET correlation_id = 1.5 WHERE id = 4', 'real', /kernels row 4: correlation_id holds the real 1\.5, not an integer/],
      ["UPDATE kernels SET stream_id = '12abc' WHERE id = 3", 'text', /kernels row 3: stream_id holds the text '12abc', not an integer/],
      ["UPDATE memcpys SET bytes = x'0102' WHERE id = 2", 'blob', /memcpys row 2: bytes holds a blob of 2 bytes, not an integer/],
      ['UPDATE api_calls SET end_ns = end_ns + 0.25 WHERE id = 5', 'real-time', /api_calls row 5: end_ns holds the real [0-9.]+25, not an integer/],
    ];
    for (const [sql, name, message] of cases) {
      const file = copy(recording('torch_streams'), `odd-${name}.sqlite`);
      edit(file, sql);
      for (const via of ['sql', 'pages', 'auto'] as const) {
        expect(() => loadTimelineColumns(file, { via }), `${name} via ${via}`).toThrow(message);
        expect(() => loadRows(file, { kernels: [1, 1e6], memcpys: [1, 1e6], apiCalls: [1, 1e6] }, { via }, new ColumnPool()), name).toThrow(message);
      }
      try {
        loadTimelineColumns(file);
      } catch (err) {
        expect(err).toMatchObject({ code: 'STREAMSCOPE_MALFORMED_ROW', file, problem: expect.stringMatching(message) });
      }
    }
  });

  it('columns added by ALTER TABLE after rows were written: short records read the default, as SQLite computes it', () => {
    // kernels rebuilt without its shape and later columns (nullable, so NULLs can be stored), the rows
    // copied, the columns then added with defaults of every kind that reads as an integer, and more rows
    // written in full.
    const defaults: Record<string, string> = {
      grid_y: '2',
      grid_z: "'3'",
      block_x: '4',
      block_y: '-1',
      block_z: '5',
      registers_per_thread: '9007199254740993',
      static_shared_bytes: '1e3',
      dynamic_shared_bytes: '(-5)',
    };
    const file = altered('altered.sqlite', defaults);
    const db = new Database(file, { readonly: true });
    const short = db.prepare('SELECT count(*) AS n FROM kernels WHERE id < 100000').get() as { n: number };
    db.close();
    expect(short.n).toBeGreaterThan(5);
    samePagesAsSql(file);
    // A NULL stored where an integer is read: refused the same way both ways.
    edit(file, 'UPDATE kernels SET grid_x = NULL WHERE id = 100002');
    for (const via of ['sql', 'pages'] as const)
      expect(() => loadTimelineColumns(file, { via })).toThrow(/kernels row 100002: grid_x holds NULL, not an integer/);
    // A default that is not an integer (a REAL, NULL, none): what a short record reads there, refused so too.
    for (const [name, dflt, holds] of [
      ['real', '4.75', 'the real 4.75'],
      ['null', 'NULL', 'NULL'],
      ['none', '', 'NULL'],
    ] as const) {
      const odd = altered(`altered-${name}.sqlite`, { ...defaults, block_z: dflt });
      for (const via of ['sql', 'pages'] as const)
        expect(() => loadTimelineColumns(odd, { via }), `${name} via ${via}`).toThrow(`kernels row 1: block_z holds ${holds}, not an integer`);
    }
  });

  it('a record overflowing its page: through SQLite', () => {
    const file = copy(recording('torch_streams'), 'overflow.sqlite');
    edit(file, `ALTER TABLE api_calls ADD COLUMN note TEXT; UPDATE api_calls SET note = '${'x'.repeat(9000)}' WHERE id = 5;`);
    const auto = loadTimelineColumns(file);
    expect(auto.via).toBe('sql: a record overflows its page');
    expect(plain(auto.calls)).toEqual(plain(loadTimelineColumns(file, { via: 'sql' }).calls));
  });

  it('a WAL recording being written (its -wal not empty): through SQLite, which sees the rows the WAL holds', () => {
    const file = copy(recording('torch_streams'), 'wal.sqlite');
    edit(file, 'PRAGMA journal_mode = WAL;');
    const writer = new Database(file);
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec(
      'INSERT INTO kernels SELECT id + 100000, start_ns + 5, end_ns + 5, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, launch_type, is_device_launched, graph_id, graph_node_id, cluster_x, cluster_y, cluster_z, channel_id FROM kernels',
    );
    // The live file as a reader finds it: the database and its -wal, copied while the writer holds them.
    const live = path.join(dir, 'live.sqlite');
    fs.copyFileSync(file, live);
    fs.copyFileSync(`${file}-wal`, `${live}-wal`);
    writer.close();
    expect(fs.statSync(`${live}-wal`).size).toBeGreaterThan(0);
    const auto = loadTimelineColumns(live);
    expect(auto.via).toBe('sql: WAL mode with a non-empty -wal file (a recording still being written)');
    const sql = loadTimelineColumns(live, { via: 'sql' });
    expect(plain(auto.ops)).toEqual(plain(sql.ops));
    expect(auto.ops.length).toBeGreaterThan(loadTimelineColumns(recording('torch_streams'), { via: 'sql' }).ops.length);
    // Checkpointed (the -wal emptied): the pages again.
    edit(live, 'PRAGMA wal_checkpoint(TRUNCATE);');
    expect(loadTimelineColumns(live).via).toBe('pages');
  });

  it('damaged recordings fail as they do through SQLite, naming the file, or give what SQLite gives', () => {
    const damaged = path.join(fixtures, 'fuzz/recording-report');
    // api-call-id-negative-hang: ids from -2^63 up, which the loader sizes its parts by, through SQLite too (the report reads it otherwise).
    for (const name of fs.readdirSync(damaged).filter((f) => f.endsWith('.sqlite') && !f.includes('-hang'))) {
      const file = copy(path.join(damaged, name), `damaged-${name}`);
      const outcome = (via: 'auto' | 'sql') => {
        try {
          const t = loadTimelineColumns(file, { via });
          return { ops: plain(t.ops), calls: plain(t.calls) };
        } catch (e) {
          return { error: (e as Error).message };
        }
      };
      const sql = outcome('sql');
      expect(outcome('auto'), name).toEqual(sql);
      if ('error' in sql) expect(sql.error).toContain(file);
    }
  });

  it('a table whose interior page names the root as every child (a cycle, met ahead of the walk too) fails as damaged, naming the file, at once', () => {
    const file = copy(recording('nccl-overlap-h200x2'), 'cycle.sqlite');
    // Small pages: its kernels several levels deep (as the test above).
    edit(file, 'PRAGMA page_size = 512; VACUUM;');
    const db = new Database(file, { readonly: true });
    const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'kernels'").pluck().get() as number;
    db.close();
    const bytes = fs.readFileSync(file);
    const pageSize = bytes.readUInt16BE(16) === 1 ? 65536 : bytes.readUInt16BE(16);
    const headerOf = (pgno: number) => (pgno - 1) * pageSize + (pgno === 1 ? 100 : 0);
    const childAt = (pgno: number, i: number) => (pgno - 1) * pageSize + bytes.readUInt16BE(headerOf(pgno) + 12 + 2 * i);
    expect(bytes[headerOf(root)]).toBe(0x05); // an interior page: the table is more than one page deep
    expect(bytes.readUInt16BE(headerOf(root) + 3)).toBeGreaterThan(1);
    // The root's second child (neither SQLite's min() nor its max() descends there: the file opens and counts) names the
    // root as every child of its own: root → it → root …
    const middle = bytes.readUInt32BE(childAt(root, 1));
    expect(bytes[headerOf(middle)]).toBe(0x05);
    const cells = bytes.readUInt16BE(headerOf(middle) + 3);
    for (let i = 0; i < cells; i++) bytes.writeUInt32BE(root, childAt(middle, i));
    bytes.writeUInt32BE(root, headerOf(middle) + 8);
    fs.writeFileSync(file, bytes);
    let message = '';
    try {
      loadTimelineColumns(file, { via: 'pages' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(file);
    expect(message).toMatch(/damaged b-tree/);
  });
});

/** A copy of matmul-concurrent whose kernels' columns from grid_y on were added after its rows, with these DEFAULTs ('' or absent: none); more rows written in full (ids from 100002). */
function altered(name: string, defaults: Record<string, string>): string {
  const file = copy(recording('matmul-concurrent'), name);
  const cols = db0Columns(file, 'kernels');
  const head = cols.slice(0, cols.indexOf('grid_y'));
  const tail = cols.slice(cols.indexOf('grid_y'));
  edit(
    file,
    `ALTER TABLE kernels RENAME TO old_kernels;
     CREATE TABLE kernels (id INTEGER PRIMARY KEY, ${head.slice(1).join(' INTEGER, ')} INTEGER);
     INSERT INTO kernels SELECT ${head.join(', ')} FROM old_kernels;
     ${tail.map((c) => `ALTER TABLE kernels ADD COLUMN ${c} INTEGER${defaults[c] ? ` DEFAULT ${defaults[c]}` : ''};`).join('\n')}
     INSERT INTO kernels SELECT id + 100000, ${cols.slice(1).join(', ')} FROM old_kernels WHERE id % 2 = 0;
     DROP TABLE old_kernels;`,
  );
  return file;
}

function db0Columns(file: string, table: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

// The pages' layouts of the tables (table_loader.cc LayoutCache) are kept
// from one load to the next, keyed by each table's sqlite_schema row: a
// table migrated or a file replaced between two loads must read with its
// new layout, even where path, inode, schema cookie and user_version stay.
describe('page loader: table layouts kept between loads', () => {
  /** kernels rebuilt with its columns after `id` in the given order (same statements, so the same schema cookie). */
  const rebuild = (file: string, columns: string[]) =>
    edit(
      file,
      `ALTER TABLE kernels RENAME TO old_kernels;
       CREATE TABLE kernels (id INTEGER PRIMARY KEY, ${columns.join(' INTEGER, ')} INTEGER);
       INSERT INTO kernels (id, ${columns.join(', ')}) SELECT id, ${columns.join(', ')} FROM old_kernels;
       DROP TABLE old_kernels;`,
    );
  const header = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return { cookie: db.pragma('schema_version', { simple: true }), user: db.pragma('user_version', { simple: true }) };
    } finally {
      db.close();
    }
  };

  it('two loads of a file give the same columns', () => {
    const file = recording('nccl-straggler-h200x2');
    const first = loadTimelineColumns(file, { via: 'pages' });
    const second = loadTimelineColumns(file, { via: 'pages' });
    expect(second.via).toBe('pages');
    expect(plain(second.ops)).toEqual(plain(first.ops));
    expect(plain(second.calls)).toEqual(plain(first.calls));
  });

  it('a table migrated in place between loads reads with its new columns', () => {
    const file = copy(recording('matmul-concurrent'), 'migrated.sqlite');
    samePagesAsSql(file);
    const cols = db0Columns(file, 'kernels').slice(1);
    rebuild(file, [...cols].reverse());
    expect(db0Columns(file, 'kernels').slice(1)).toEqual([...cols].reverse());
    samePagesAsSql(file);
  });

  it('a file replaced by another of the same path, inode, schema cookie and user_version but another layout', () => {
    const file = copy(recording('matmul-concurrent'), 'replaced.sqlite');
    const other = copy(recording('matmul-concurrent'), 'replacement.sqlite');
    const cols = db0Columns(file, 'kernels').slice(1);
    rebuild(file, cols);
    rebuild(other, [...cols].reverse());
    expect(header(other)).toEqual(header(file));
    samePagesAsSql(file);
    const inode = fs.statSync(file).ino;
    fs.writeFileSync(file, fs.readFileSync(other)); // over the same inode
    expect(fs.statSync(file).ino).toBe(inode);
    samePagesAsSql(file);
    // Replaced by a rename (a new inode) back to the first layout.
    rebuild(other, cols);
    fs.renameSync(other, file);
    samePagesAsSql(file);
  });

  it('loadRows on workers at once: every load the same columns', async () => {
    const file = recording('nccl-straggler-h200x2');
    const ranges = { kernels: [1, 400], memcpys: [1, 400], memsets: [], apiCalls: [1, 400] };
    const expected = loadRows(file, ranges, { via: 'sql' }, new ColumnPool());
    const { Worker } = await import('node:worker_threads');
    const addon = path.resolve(import.meta.dirname, '../../profiler/native/addon.ts');
    const script = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.addon).then(({ ColumnPool, loadRows }) => {
        const out = [];
        for (let k = 0; k < 20; k++) {
          const t = loadRows(workerData.file, workerData.ranges, { via: 'pages' }, new ColumnPool());
          out.push({ via: t.via, ops: Array.from(t.ops.start), calls: Array.from(t.calls.start) });
        }
        parentPort.postMessage(out);
      });`;
    const runs = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<{ via: string; ops: number[]; calls: number[] }[]>((resolve, reject) => {
            const w = new Worker(script, { eval: true, workerData: { file, addon, ranges } });
            w.once('message', (m) => {
              resolve(m);
              void w.terminate();
            });
            w.once('error', reject);
          }),
      ),
    );
    for (const run of runs) {
      expect(run).toHaveLength(20);
      for (const r of run) {
        expect(r.via).toBe('pages');
        expect(r.ops).toEqual(Array.from(expected.ops.start));
        expect(r.calls).toEqual(Array.from(expected.calls.start));
      }
    }
  });
});
