// The merge's page writer (native/addon/src/page_merge.cc) against SQLite
// itself: tables written with 512-byte pages, so that a few thousand rows
// make b-trees of several interior levels on both sides, merged by it, then
// read back by SQLite — integrity_check over the pages as written, and every
// row equal to what SQL computes with the same moves. Also what it must
// refuse: records it cannot rewrite (overflowing their page, a moved column
// that is not an integer) as unsupported, a damaged input as an error that
// names the file.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { appendTablePages, type PageColumnOp, type PageMergeTable } from '../../profiler/native/addon.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('page-merge');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SCHEMA = 'CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, name_id INTEGER, dev INTEGER, note TEXT)';
const SMALL = 'CREATE TABLE small (id INTEGER PRIMARY KEY, v INTEGER)';

/** A database of 512-byte pages with `rows` rows in t (ids from `first`, every 7th skipped: gaps) and one in small. */
function input(name: string, first: number, rows: number, extra = ''): string {
  const file = path.join(dir, `${name}.sqlite`);
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  db.pragma('page_size = 512');
  db.exec(SCHEMA);
  db.exec(SMALL);
  const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0, id = first; i < rows; id++) {
      if (id % 7 === 3) continue;
      // Values of every width SQLite stores: 0 and 1 (no body), 1 to 8 bytes, negative, NULL.
      const a = [0, 1, 127, 128, -129, 40_000, -9_000_000, 3_000_000_000, 2 ** 47 + 5, null][i % 10];
      ins.run(id, a, id * 1000 + i, i % 5, i % 3, i % 4 === 0 ? null : `n${i}${extra}`);
      i++;
    }
  })();
  db.prepare('INSERT INTO small VALUES (?, ?)').run(first, rows);
  db.close();
  return file;
}

/** An empty output of 512-byte pages with both tables; their root pages. */
function output(name: string): { file: string; roots: Record<string, number> } {
  const file = path.join(dir, `${name}.sqlite`);
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  db.pragma('page_size = 512');
  db.exec(SCHEMA);
  db.exec(SMALL);
  db.exec('CREATE TABLE other (x)'); // a table the writer leaves alone
  db.prepare('INSERT INTO other VALUES (?)').run('kept');
  const roots = Object.fromEntries(db.prepare("SELECT name, rootpage FROM sqlite_schema WHERE type = 'table'").raw().all() as [string, number][]);
  db.close();
  return { file, roots };
}

function rootOf(file: string, table: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT rootpage FROM sqlite_schema WHERE name = ?').pluck().get(table) as number;
  } finally {
    db.close();
  }
}

const keep: PageColumnOp = { kind: 'keep' };

describe('the page writer', () => {
  it('appends rows of many inputs with their columns moved: a sound file, every row as SQL computes it', () => {
    const inputs = [
      {
        file: input('in0', 1, 3000),
        rowidAdd: 0,
        shift: 1_000,
        names: [
          [1, 11],
          [3, 13],
        ],
      },
      { file: input('in1', 1, 1, 'x'), rowidAdd: 10_000, shift: -5, names: [] },
      { file: input('in2', 5, 2500), rowidAdd: 20_000, shift: 2 ** 40, names: [[0, 4_000_000_000]] },
    ];
    const out = output('out');
    const columns = (shift: number, names: number[][]): PageColumnOp[] => [
      keep, // id: the rowid moves by rowidAdd
      { kind: 'add', add: shift },
      keep,
      names.length ? { kind: 'map', pairs: names.flat(), keepOthers: true } : keep,
      { kind: 'map', pairs: [0, 7, 1, 8], keepOthers: false }, // 2 → NULL
      keep,
    ];
    const tables: PageMergeTable[] = [
      {
        name: 't',
        root: out.roots.t!,
        inputs: inputs.map((i) => ({ file: i.file, root: rootOf(i.file, 't'), rowidAdd: i.rowidAdd, columns: columns(i.shift, i.names) })),
      },
      {
        name: 'small',
        root: out.roots.small!,
        inputs: inputs.map((i) => ({ file: i.file, root: rootOf(i.file, 'small'), rowidAdd: i.rowidAdd, columns: [keep, { kind: 'add', add: 1 }] })),
      },
    ];
    const r = appendTablePages(out.file, tables);
    expect(r.rows[0]!.map((x) => x.rows)).toEqual([3000, 1, 2500]);
    expect(r.rows[1]!.map((x) => x.rows)).toEqual([1, 1, 1]);

    const db = new Database(out.file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      // Deep enough to test the interior levels: 5,500 rows on 512-byte pages.
      const depth = db.prepare("SELECT max(length(path) - length(replace(path, '/', ''))) FROM dbstat WHERE name = 't'").pluck().get() as number;
      expect(depth).toBeGreaterThanOrEqual(3);
      db.exec(`ATTACH '${inputs[0]!.file}' AS i0; ATTACH '${inputs[1]!.file}' AS i1; ATTACH '${inputs[2]!.file}' AS i2`);
      const want = inputs.flatMap((inp, k) =>
        db
          .prepare(
            `SELECT id + ${inp.rowidAdd} AS id, a + ${inp.shift} AS a, b,
              ${inp.names.length ? `CASE name_id ${inp.names.map(([x, y]) => `WHEN ${x} THEN ${y}`).join(' ')} ELSE name_id END` : 'name_id'} AS name_id,
              CASE dev WHEN 0 THEN 7 WHEN 1 THEN 8 ELSE NULL END AS dev, note FROM i${k}.t ORDER BY id`,
          )
          .all(),
      );
      const got = db.prepare('SELECT * FROM main.t ORDER BY id').all();
      expect(got).toEqual(want);
      // Lookups by rowid walk the interior pages written.
      const probe = want[4321] as { id: number };
      expect(db.prepare('SELECT * FROM main.t WHERE id = ?').get(probe.id)).toEqual(probe);
      expect(db.prepare('SELECT id, v FROM main.small ORDER BY id').raw().all()).toEqual([
        [1, 3001],
        [10_001, 2],
        [20_005, 2501],
      ]);
      expect(db.prepare('SELECT x FROM other').pluck().all()).toEqual(['kept']);
    } finally {
      db.close();
    }
    // The file takes more rows afterwards, as SQLite's own would.
    const w = new Database(out.file);
    w.prepare('INSERT INTO t (id, a) VALUES (?, ?)').run(10 ** 9, 1);
    w.exec('DELETE FROM t WHERE id < 20000');
    expect(w.pragma('integrity_check', { simple: true })).toBe('ok');
    w.close();
  });

  it('skips the page at the first GiB, which SQLite keeps for its locks, and keeps the free list', () => {
    // An output of 64 KiB pages that already holds 1 GB, all of it freed: the rows appended cross page 2^30 / 65536 + 1.
    const file = path.join(dir, 'gib.sqlite');
    const db = new Database(file);
    db.pragma('page_size = 65536');
    db.pragma('journal_mode = OFF');
    db.exec(SCHEMA);
    db.exec('CREATE TABLE pad (x)');
    const pad = db.prepare('INSERT INTO pad VALUES (zeroblob(?))');
    for (let i = 0; i < 3; i++) pad.run(356_500_000);
    db.exec('DELETE FROM pad');
    const freeBefore = db.pragma('freelist_count', { simple: true }) as number;
    const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 't'").pluck().get() as number;
    db.close();
    const from = input('gib-in', 1, 24_000, 'y'.repeat(300));
    try {
      const r = appendTablePages(file, [{ name: 't', root, inputs: [{ file: from, root: rootOf(from, 't'), rowidAdd: 0, columns: Array(6).fill(keep) }] }]);
      expect(r.pages).toBeGreaterThan(2 ** 30 / 65536 + 1);
      const out = new Database(file, { readonly: true });
      try {
        expect(out.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(out.pragma('freelist_count', { simple: true })).toBe(freeBefore);
        out.exec(`ATTACH '${from}' AS i`);
        expect(out.prepare('SELECT count(*) FROM main.t t JOIN i.t u USING (id) WHERE t.note IS u.note AND t.a IS u.a').pluck().get()).toBe(24_000);
      } finally {
        out.close();
      }
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('copies records written before a column was added, which read as its default', () => {
    const file = path.join(dir, 'altered.sqlite');
    const db = new Database(file);
    db.exec('CREATE TABLE s (id INTEGER PRIMARY KEY, a INTEGER)');
    db.exec('INSERT INTO s VALUES (1, 10), (2, 20)');
    db.exec('ALTER TABLE s ADD COLUMN b INTEGER DEFAULT 5');
    db.exec('INSERT INTO s VALUES (3, 30, 7)');
    db.close();
    const make = (name: string) => {
      const out = path.join(dir, `${name}.sqlite`);
      fs.rmSync(out, { force: true });
      const o = new Database(out);
      o.exec('CREATE TABLE s (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER DEFAULT 5)');
      const root = o.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 's'").pluck().get() as number;
      o.close();
      return { out, root };
    };
    const ok = make('altered-out');
    appendTablePages(ok.out, [
      { name: 's', root: ok.root, inputs: [{ file, root: rootOf(file, 's'), rowidAdd: 100, columns: [keep, { kind: 'add', add: 1 }, keep] }] },
    ]);
    const o = new Database(ok.out, { readonly: true });
    expect(o.prepare('SELECT * FROM s ORDER BY id').raw().all()).toEqual([
      [101, 11, 5],
      [102, 21, 5],
      [103, 31, 7],
    ]);
    o.close();
    // A column to move that an old record lacks: its default would have to move too.
    const moved = make('altered-moved');
    expect(() =>
      appendTablePages(moved.out, [
        { name: 's', root: moved.root, inputs: [{ file, root: rootOf(file, 's'), rowidAdd: 0, columns: [keep, keep, { kind: 'add', add: 1 }] }] },
      ]),
    ).toThrow(/lacks a column to move/);
  });

  it('refuses what it cannot rewrite, as unsupported', () => {
    const big = input('big', 1, 3);
    const db = new Database(big);
    db.prepare('UPDATE t SET note = ? WHERE id = 2').run('x'.repeat(2000)); // overflows a 512-byte page
    db.close();
    const real = input('real', 1, 3);
    const db2 = new Database(real);
    db2.prepare('UPDATE t SET a = 1.5 WHERE id = 2').run();
    db2.close();
    const cases: [string, PageColumnOp[]][] = [
      [big, [keep, keep, keep, keep, keep, keep]],
      [real, [keep, { kind: 'add', add: 1 }, keep, keep, keep, keep]],
    ];
    for (const [file, columns] of cases) {
      const out = output('refused');
      let error: (Error & { code?: string }) | null = null;
      try {
        appendTablePages(out.file, [{ name: 't', root: out.roots.t!, inputs: [{ file, root: rootOf(file, 't'), rowidAdd: 0, columns }] }]);
      } catch (e) {
        error = e as Error & { code?: string };
      }
      expect(error?.code).toBe('PAGE_MERGE_UNSUPPORTED');
      expect(error?.message).toContain(file);
    }
  });

  it('names a damaged input', () => {
    const file = input('damaged', 1, 2000);
    const root = rootOf(file, 't');
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(512, 0x41), 0, 512, (root - 1) * 512); // the root page overwritten
    fs.closeSync(fd);
    const out = output('damaged-out');
    expect(() => appendTablePages(out.file, [{ name: 't', root: out.roots.t!, inputs: [{ file, root, rowidAdd: 0, columns: Array(6).fill(keep) }] }])).toThrow(
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: damaged`),
    );
  });
});

// Every input unmapped and its descriptor closed, also where its header is
// refused (the mapping is released by its owner as the input fails to build).
describe('appendTablePages: its inputs left closed', () => {
  const keepAll: PageColumnOp[] = Array(6).fill(keep);
  const openFds = () => fs.readdirSync('/proc/self/fd').length;
  const mapped = (file: string) => fs.readFileSync('/proc/self/maps', 'utf8').includes(file);

  it('after a merge, and after an input refused by its header (not a database, text not UTF-8)', () => {
    const good = input('closed-good', 1, 50);
    const notDb = path.join(dir, 'closed-not-db.sqlite');
    fs.writeFileSync(notDb, Buffer.alloc(4096, 0x41));
    const utf16 = path.join(dir, 'closed-utf16.sqlite');
    fs.rmSync(utf16, { force: true });
    const db = new Database(utf16);
    db.pragma("encoding = 'UTF-16le'");
    db.exec(SCHEMA);
    db.close();
    const before = openFds();
    for (let k = 0; k < 20; k++) {
      for (const file of [notDb, utf16]) {
        const out = output(`closed-out-${k}`);
        expect(() => appendTablePages(out.file, [{ name: 't', root: out.roots.t!, inputs: [{ file, root: 2, rowidAdd: 0, columns: keepAll }] }])).toThrow(file);
      }
      const out = output(`closed-ok-${k}`);
      appendTablePages(out.file, [{ name: 't', root: out.roots.t!, inputs: [{ file: good, root: rootOf(good, 't'), rowidAdd: 0, columns: keepAll }] }]);
    }
    expect(openFds()).toBe(before);
    for (const file of [good, notDb, utf16]) expect(mapped(file), file).toBe(false);
  });
});
