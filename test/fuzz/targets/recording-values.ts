// Fuzz target: one value of a real recording made what no writer stores —
// of the wrong SQLite type (TEXT, REAL, BLOB, NULL where the schema is
// edited to allow it), a time near ±2^63, an id naming no row — or made
// impossible in its row (an end before its start, a negative size), in a
// column the readers read (issue 27, item 4: malformed recordings read as
// clean), then what `streamscope report` reads of it (handlers/report.ts, in
// the sandbox). Property: the answer store/SCHEMA.md ("Rows a reader
// refuses or leaves out") promises for that value — the file refused with
// the project's one-line error naming its table, row and column; or the
// report made without the row, its notes naming it; or, for a value a
// recording may hold (a NULL where one is allowed, a name's text, a large
// count), a report or a file error as recording-report asks of any file.
// A kept failing input is its recipe (JSON): regressions.test.ts makes the
// file again from the fixture and checks it the same way.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { fuzz, workDir, type FuzzTarget, saveJson } from '../lib/harness.ts';
import { reportSandbox } from '../lib/report-check.ts';
import { outcomeProblem, sha256, type Outcome } from '../lib/outcome.ts';
import type { Sandbox } from '../lib/sandbox.ts';
import type { ReportInput } from '../handlers/report.ts';

const recordings = path.resolve(import.meta.dirname, '../../fixtures/recordings');

/** Small and different: one GPU, several, NVTX, PyTorch, several processes, NCCL, an imported-style stream layout. */
const FIXTURES = ['normalise-concurrent', 'matmul-events', 'nvtx_torch', 'torch_streams', 'multiprocess_cupy', 'matmul-multi-gpu-h200x2', 'nccl-1gpu-overlap'];

/** A column the readers read, and what the rules say of it. */
interface Spot {
  table: string;
  column: string;
  /** The table its value names a row of. */
  ref?: string;
  /** A time: beyond ±(2^53 − 1) refuses. */
  time?: boolean;
  /** A size: negative leaves the row out. */
  bytes?: boolean;
  /** Declared TEXT (a name): text is what it holds. */
  text?: boolean;
  /** NULL is allowed. */
  nullable?: boolean;
}

const SPOTS: Spot[] = [
  ...['kernels', 'memcpys', 'memsets'].flatMap((table): Spot[] => [
    { table, column: 'start_ns', time: true },
    { table, column: 'end_ns', time: true },
    { table, column: 'stream_id', ref: 'streams' },
    { table, column: 'device_id', ref: 'devices' },
    { table, column: 'context_id', ref: 'contexts' },
    { table, column: 'correlation_id' },
  ]),
  { table: 'kernels', column: 'name_id', ref: 'strings' },
  { table: 'kernels', column: 'grid_x' },
  { table: 'kernels', column: 'registers_per_thread' },
  { table: 'memcpys', column: 'bytes', bytes: true },
  { table: 'memcpys', column: 'copy_kind' },
  { table: 'memcpys', column: 'is_async' },
  { table: 'memsets', column: 'bytes', bytes: true },
  { table: 'api_calls', column: 'start_ns', time: true },
  { table: 'api_calls', column: 'end_ns', time: true },
  { table: 'api_calls', column: 'name_id', ref: 'strings' },
  { table: 'api_calls', column: 'pid' },
  { table: 'api_calls', column: 'correlation_id' },
  { table: 'streams', column: 'context_id', ref: 'contexts' },
  { table: 'streams', column: 'device_id', ref: 'devices', nullable: true },
  { table: 'streams', column: 'cupti_stream_id' },
  { table: 'contexts', column: 'device_id', ref: 'devices', nullable: true },
  { table: 'devices', column: 'name', text: true, nullable: true },
  { table: 'devices', column: 'sm_count', nullable: true },
  { table: 'strings', column: 'value', text: true },
  { table: 'processes', column: 'command', text: true, nullable: true },
];

const KINDS = ['text', 'real', 'blob', 'null', 'huge', 'dangling', 'end-before-start', 'negative'] as const;
type Kind = (typeof KINDS)[number];

const TEXTS = ['x', 'abc', '12abc', '', 'NaN', '0x10'];
const REALS = [0.5, -2.75, 1e300, -1e300, 123456789.9];
const HUGE = [2n ** 62n, -(2n ** 63n), 2n ** 53n, 2n ** 63n - 1n, -(2n ** 53n)];

export interface ValueRecipe {
  fixture: string;
  /** Which column: `table.column` among SPOTS. */
  spot: string;
  /** Which row, by its place in the table (modulo its rows; -1: the last). */
  row: number;
  kind: Kind;
  /** Which value of the kind. */
  variant: number;
  whole: boolean;
}

const recipe: fc.Arbitrary<ValueRecipe> = fc.record({
  fixture: fc.constantFrom(...FIXTURES),
  spot: fc.constantFrom(...SPOTS.map((s) => `${s.table}.${s.column}`)),
  // The first and last rows most of all: where a reader's state starts and a part ends.
  row: fc.oneof(fc.constant(0), fc.constant(-1), { weight: 3, arbitrary: fc.nat() }),
  kind: fc.constantFrom(...KINDS),
  variant: fc.nat(),
  whole: fc.boolean(),
});

/** What the rules say of the value written: refused, naming the row; left out, naming it; or a value a recording may hold. */
export type Expected = { kind: 'refused' | 'left-out'; table: string; rowid: number; column: string } | { kind: 'may-hold' };

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The fixture changed as `r` says, at `out`; what the readers must answer. */
export function materializeValue(r: ValueRecipe, out: string): Expected {
  fs.copyFileSync(path.join(recordings, `${r.fixture}.sqlite`), out);
  const spot = SPOTS.find((s) => `${s.table}.${s.column}` === r.spot);
  if (!spot) throw new Error(`recording-values: no column ${r.spot} among the target's`);
  const { table, column } = spot;
  const db = new Database(out);
  try {
    db.pragma('foreign_keys = OFF');
    const rows = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    if (rows === 0) return { kind: 'may-hold' };
    const rowid = db
      .prepare(`SELECT rowid FROM ${table} ORDER BY rowid LIMIT 1 OFFSET ?`)
      .pluck()
      .get(r.row < 0 ? rows - 1 : r.row % rows) as number;
    const set = (value: unknown) => {
      try {
        db.prepare(`UPDATE ${quote(table)} SET ${quote(column)} = ? WHERE rowid = ?`).run(value, rowid);
        return true;
      } catch {
        return false; // a UNIQUE name already taken: nothing changed
      }
    };
    const at = (kind: 'refused' | 'left-out', c = column): Expected => ({ kind, table, rowid, column: c });
    const pick = <T>(xs: readonly T[]) => xs[r.variant % xs.length]!;
    switch (r.kind) {
      case 'text':
        return set(pick(TEXTS)) ? (spot.text ? { kind: 'may-hold' } : at('refused')) : { kind: 'may-hold' };
      case 'real':
        // A TEXT column stores a number as its text (SQLite's TEXT affinity): a name of digits.
        return set(pick(REALS)) && !spot.text ? at('refused') : { kind: 'may-hold' };
      case 'blob':
        return set(Buffer.from([0, 255, r.variant & 255].slice(0, r.variant % 4))) ? at('refused') : { kind: 'may-hold' };
      case 'null':
        if (!spot.nullable) allowNull(db, table, column);
        return set(null) ? (spot.nullable ? { kind: 'may-hold' } : at('refused')) : { kind: 'may-hold' };
      case 'huge':
        if (spot.text) return { kind: 'may-hold' };
        db.defaultSafeIntegers(true);
        return set(pick(HUGE)) ? (spot.time || spot.ref ? at('refused') : { kind: 'may-hold' }) : { kind: 'may-hold' };
      case 'dangling': {
        if (!spot.ref) return { kind: 'may-hold' };
        const max = (db.prepare(`SELECT coalesce(max(id), 0) FROM ${spot.ref}`).pluck().get() as number) + 1 + (r.variant % 1000);
        return set(max) ? at('refused') : { kind: 'may-hold' };
      }
      case 'end-before-start':
        // The loader's tables only, whatever column the spot names: the row's end set before its start.
        if (!['kernels', 'memcpys', 'memsets', 'api_calls'].includes(table)) return { kind: 'may-hold' };
        db.prepare(`UPDATE ${table} SET end_ns = start_ns - ? WHERE rowid = ?`).run(1 + (r.variant % 1_000_000), rowid);
        return at('left-out', 'end_ns');
      case 'negative':
        if (!spot.bytes) return { kind: 'may-hold' };
        return set(-1 - (r.variant % 1_000_000)) ? at('left-out') : { kind: 'may-hold' };
    }
  } finally {
    db.close();
  }
}

/** The table's CREATE TABLE without NOT NULL on `column`, as a tool that wrote its own schema would have it. */
function allowNull(db: Database.Database, table: string, column: string): void {
  db.unsafeMode(true);
  db.pragma('writable_schema = ON');
  const ddl = db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').pluck().get(table) as string;
  db.prepare('UPDATE sqlite_schema SET sql = ? WHERE name = ?').run(ddl.replace(new RegExp(`(\\b${column}\\s+\\w+)\\s+NOT NULL`), '$1'), table);
  db.pragma('writable_schema = OFF');
  db.unsafeMode(false);
}

/** What is wrong with the answer to a file made as `expected` says (null: nothing). */
export function valueProblem(file: string, expected: Expected, outcome: Outcome): string | null {
  const basic = outcomeProblem(file, outcome);
  if (basic) return basic;
  if (expected.kind === 'may-hold') return null;
  const where = `${expected.table} row ${expected.rowid}: ${expected.column}`;
  if (expected.kind === 'refused') {
    if (outcome.ok) return `read as clean: ${where} should refuse the file`;
    return outcome.message.includes(`: not a StreamScope recording as written: ${where} `)
      ? null
      : `refused, but not naming ${where}: ${outcome.message.slice(0, 300)}`;
  }
  if (!outcome.ok) return `refused where ${where} should be left out: ${outcome.message.slice(0, 300)}`;
  return (outcome.notes ?? []).some((n) => n.includes(where))
    ? null
    : `${where} not said left out (notes: ${JSON.stringify(outcome.notes ?? []).slice(0, 200)})`;
}

/** One recipe run: the file made, read in the sandbox, the answer checked; the input file must not change. */
export async function valueRecipeProblem(sandbox: Sandbox<ReportInput, Outcome>, r: ValueRecipe, file: string): Promise<string | null> {
  try {
    const expected = materializeValue(r, file);
    const before = sha256(file);
    const answer = await sandbox.run({ file, whole: r.whole });
    if (answer.kind === 'hang') return `hang: no answer within ${answer.ms} ms`;
    if (answer.kind === 'died') return `the worker died: ${answer.message}`;
    return valueProblem(file, expected, answer.value) ?? (sha256(file) === before ? null : 'the input file was changed');
  } finally {
    for (const f of [file, `${file}-journal`]) fs.rmSync(f, { force: true });
  }
}

export const target: FuzzTarget = {
  name: 'recording-values',
  async run(options) {
    const work = workDir('recording-values');
    const sandbox = reportSandbox();
    let n = 0;
    try {
      return await fuzz(
        {
          name: 'recording-values',
          arbitrary: recipe,
          check: (r) => valueRecipeProblem(sandbox, r, path.join(work, `input-${n++}.sqlite`)),
          save: saveJson,
        },
        options,
      );
    } finally {
      await sandbox.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
