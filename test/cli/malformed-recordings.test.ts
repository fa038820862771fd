// Malformed recordings (issue 27, item 4): real recordings changed through
// SQL as a bad tool or a hand edit would — a time stored as TEXT or REAL, a
// NULL device id, an end before its start, a time of 2^62, a name stored as
// a BLOB, a stream id the recording lacks, a negative copy size — read by
// every reader a user has: `report`, `check`, `export` as a user runs them,
// and `serve`'s API as the page calls it. Each file is refused, its table,
// row and column named, the same words everywhere (exit 2; HTTP 422 with
// the API's `not-a-recording`, never 500), or its impossible rows are left
// out and said, how many and the first (store/SCHEMA.md, "Rows a reader
// refuses or leaves out"). Before, every one of them gave a report with
// exit 0: a phantom 332 ms kernel, negative totals, a phantom GPU, kernels
// that vanish — and serve answered 500 on the BLOB name.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import type { OpenFailure, RecordingHandle } from '../../profiler/contract/api.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
const dir = tempDir('malformed');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A copy of the fixture changed by `sql`; `notNull`: a column of kernels whose NOT NULL the schema loses first (a tool that wrote its own). */
function malformed(name: string, sql: string, notNull?: string): string {
  const file = path.join(dir, `${name}.sqlite`);
  fs.copyFileSync(fixture, file);
  if (notNull) {
    const db = new Database(file);
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    const ddl = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'kernels'").pluck().get() as string;
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'kernels'").run(ddl.replace(new RegExp(`(${notNull}\\s+INTEGER) NOT NULL`), '$1'));
    db.pragma('writable_schema = OFF');
    db.close();
  }
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  db.exec(sql);
  db.close();
  return file;
}

const AS_WRITTEN = 'not a StreamScope recording as written';

/** Refused: the file's one line, naming the table, the row and the column. */
const refused: { name: string; sql: string; notNull?: string; problem: string }[] = [
  { name: 'start-text', sql: "UPDATE kernels SET start_ns = 'soon' WHERE id = 3", problem: "kernels row 3: start_ns holds the text 'soon', not an integer" },
  {
    name: 'start-real',
    sql: 'UPDATE kernels SET start_ns = start_ns + 0.5 WHERE id = 3',
    problem: 'kernels row 3: start_ns holds the real 332391332.5, not an integer',
  },
  {
    name: 'device-null',
    sql: 'UPDATE kernels SET device_id = NULL WHERE id = 3',
    notNull: 'device_id',
    problem: 'kernels row 3: device_id holds NULL, not an integer',
  },
  {
    name: 'stream-null',
    sql: 'UPDATE kernels SET stream_id = NULL WHERE id = 5',
    notNull: 'stream_id',
    problem: 'kernels row 5: stream_id holds NULL, not an integer',
  },
  {
    name: 'start-2-62',
    sql: 'UPDATE kernels SET start_ns = 4611686018427387904 WHERE id = 3',
    problem: "kernels row 3: start_ns 4611686018427387904 is beyond the ±2^53 ns (104 days) from its origin that a recording's times hold",
  },
  {
    name: 'call-end-min',
    sql: 'UPDATE api_calls SET end_ns = -9223372036854775808 WHERE id = 100',
    problem: 'api_calls row 100: end_ns -9223372036854775808 is beyond',
  },
  { name: 'stream-dangling', sql: 'UPDATE kernels SET stream_id = 999 WHERE id = 3', problem: 'kernels row 3: stream_id 999 names no row of streams' },
  { name: 'device-dangling', sql: 'UPDATE memcpys SET device_id = 7 WHERE id = 4', problem: 'memcpys row 4: device_id 7 names no row of devices' },
  { name: 'name-dangling', sql: 'UPDATE kernels SET name_id = 9999 WHERE id = 3', problem: 'kernels row 3: name_id 9999 names no row of strings' },
  {
    name: 'name-blob',
    sql: "UPDATE strings SET value = x'00ff01' WHERE id = (SELECT name_id FROM kernels WHERE id = 3)",
    problem: 'strings row 24: value holds a blob of 3 bytes, not a text',
  },
  {
    name: 'stream-context-dangling',
    sql: 'UPDATE streams SET context_id = 42 WHERE id = 13',
    problem: 'streams row 13: context_id 42 names no row of contexts',
  },
];

/** Left out: the command runs on the other rows and says how many it left out, and the first. */
const leftOut: { name: string; sql: string; first: string }[] = [
  {
    name: 'end-before-start',
    sql: 'UPDATE kernels SET end_ns = start_ns - 1000000 WHERE id = 3',
    first: 'kernels row 3: end_ns 331391332 is before start_ns 332391332',
  },
  { name: 'bytes-negative', sql: 'UPDATE memcpys SET bytes = -5 WHERE id = 2', first: 'memcpys row 2: bytes -5 is negative' },
];

describe('a malformed recording, read by each command', () => {
  it.each(refused)(
    '$name: report (whole, and rank by rank), check and export refuse it, naming table, row and column, exit 2',
    ({ name, sql, notNull, problem }) => {
      const file = malformed(name, sql, notNull);
      const line = `streamscope: ${file}: ${AS_WRITTEN}: ${problem}`;
      // report --job: read rank by rank (as a job of many ranks is), through the narrow loads of job.ts.
      for (const args of [
        ['report', file],
        ['report', file, '--job'],
        ['check', file, '--min-overlap', '1.5'],
        ['export', file, '-o', path.join(dir, `${name}.json`)],
      ]) {
        const r = run(args);
        expect(r.stderr.trim(), args[0]).toContain(line);
        expect(r.stderr.trim().split('\n'), args[0]).toHaveLength(1);
        expect(r.code, args[0]).toBe(2);
        expect(r.stdout, args[0]).toBe('');
      }
      expect(fs.existsSync(path.join(dir, `${name}.json`))).toBe(false);
    },
  );

  it.each(leftOut)('$name: report, check and export leave the row out and say so, how many and the first', ({ name, sql, first }) => {
    const file = malformed(name, sql);
    const note = `1 row left out as not possible (an end before its start, or a negative size), the first: ${first}`;
    const report = run(['report', file]);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(note);
    // No negative total, no share of 0%: the kernels' table as without the row.
    expect(report.stdout).not.toMatch(/-\d[\d.]* [mµ]?s/);
    const json = JSON.parse(run(['report', file, '--json']).stdout) as { scope: { notes?: string[] } };
    expect(json.scope.notes).toContain(note);
    const check = run(['check', file, '--json']);
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout).leftOut).toEqual({ rows: 1, first });
    expect(check.stderr).toContain(`; ${note}`);
    const out = path.join(dir, `${name}.json`);
    const exported = run(['export', file, '-o', out]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain(`streamscope: note: ${note}`);
    const events = (JSON.parse(fs.readFileSync(out, 'utf8')) as { traceEvents: { dur?: number; args?: { bytes?: number } }[] }).traceEvents;
    expect(events.filter((e) => (e.dur ?? 0) < 0 || (e.args?.bytes ?? 0) < 0)).toEqual([]);
  });
});

describe('a malformed recording, served (browser mode and the app use the same API)', () => {
  let server: RunningServer;
  let files: Record<string, string>;
  beforeAll(async () => {
    files = {
      text: malformed('serve-start-text', "UPDATE kernels SET start_ns = 'soon' WHERE id = 3"),
      blob: malformed('serve-name-blob', "UPDATE strings SET value = x'00ff01' WHERE id = (SELECT name_id FROM kernels WHERE id = 3)"),
      dangling: malformed('serve-stream-dangling', 'UPDATE kernels SET stream_id = 999 WHERE id = 3'),
      left: malformed('serve-end-before-start', 'UPDATE kernels SET end_ns = start_ns - 1000000 WHERE id = 3'),
    };
    const dist = path.join(dir, 'dist');
    fs.mkdirSync(dist, { recursive: true });
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html>');
    server = await startServer({ files: Object.values(files), port: 0, staticDir: dist, onOpenError: () => {} });
  });
  afterAll(() => server?.close());

  async function api(method: string, ...args: unknown[]): Promise<{ status: number; body: Record<string, unknown> & { code?: string; message?: string } }> {
    const r = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, {
      method: 'POST',
      headers: { 'x-streamscope-token': server.token },
      body: JSON.stringify({ args }),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  }
  const idOf = async (file: string) => ((await api('listRecordings')).body as unknown as RecordingHandle[]).find((h) => h.path === file)?.recordingId;

  it('a BLOB name (refused as the file opens): listed among the files that could not be opened, with report’s words', async () => {
    expect(await idOf(files.blob!)).toBeUndefined();
    const id = (await idOf(files.text!))!;
    const failed = (await api('summary', id)).body.openErrors as OpenFailure[];
    expect(failed).toContainEqual({
      file: files.blob,
      code: 'not-a-recording',
      message: `${files.blob}: ${AS_WRITTEN}: strings row 24: value holds a blob of 3 bytes, not a text`,
    });
  });

  it.each([
    ['text', "kernels row 3: start_ns holds the text 'soon', not an integer"],
    ['dangling', 'kernels row 3: stream_id 999 names no row of streams'],
  ])('%s: the analysis answers not-a-recording (HTTP 422) naming the row, and so does every answer after it', async (key, problem) => {
    const file = files[key]!;
    const id = (await idOf(file))!;
    const want = { code: 'not-a-recording', message: `${file}: ${AS_WRITTEN}: ${problem}`, file };
    for (const method of ['findings', 'stats', 'scopeInfo'] as const) {
      const r = await api(method, id, { kind: 'steady-state' });
      expect(r.status, method).toBe(422);
      expect(r.body, method).toEqual(want);
    }
    // The timeline is not drawn from rows the analysis refused.
    const w = await api('window', id, { rows: ['stream:8'], startNs: 0, endNs: 5e8, resolutionNs: 1000 });
    expect(w.status).toBe(422);
    expect(w.body).toEqual(want);
  });

  it('a row left out: the findings are without it, and the scope says so', async () => {
    const id = (await idOf(files.left!))!;
    expect((await api('findings', id, { kind: 'steady-state' })).status).toBe(200);
    const info = await api('scopeInfo', id, { kind: 'steady-state' });
    expect(info.body.notes).toContain(
      '1 row left out as not possible (an end before its start, or a negative size), the first: kernels row 3: end_ns 331391332 is before start_ns 332391332',
    );
    // The window does not draw it either.
    const w = await api('window', id, { rows: ['stream:15'], startNs: 3.2e8, endNs: 3.5e8, resolutionNs: 1000 });
    const items = (w.body.rows as { items: { ref: { table: string; id: number } }[] }[])[0]!.items;
    expect(items.some((i) => i.ref.table === 'kernels' && i.ref.id === 3)).toBe(false);
    expect(items.length).toBeGreaterThan(0);
  });
});
