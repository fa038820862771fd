// `streamscope sql`, run as a user runs it (a child process) on real
// recordings: its rows against what the `sqlite3` shell gives for the same
// query (the views created in the shell from the same DDL), --json and
// --csv, what it refuses or stops — each with a message naming the file —
// the prompt driven through stdin, and every fixture's bytes unchanged.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { SQL_EXAMPLES } from '../../profiler/contract/sql.ts';
import { sqlViewsDdl } from '../../profiler/query/sql-views.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const SQLITE3 = '/usr/bin/sqlite3';
const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
const fixture = (name: string) => path.join(fixtures, `${name}.sqlite`);
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

let dir: string;
beforeAll(() => {
  dir = tempDir('sql');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [cli, 'sql', ...args], {
    encoding: 'utf8',
    input,
    env: { ...process.env, STREAMSCOPE_CACHE_DIR: path.join(dir, 'cache') },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same query in the sqlite3 shell, read-only, after the console's views: its rows as objects (sqlite3 -json). */
function sqlite3Json(file: string, query: string): Record<string, unknown>[] {
  const r = spawnSync(SQLITE3, ['-readonly', '-json', file], { encoding: 'utf8', input: `${sqlViewsDdl()}\n${query}\n` });
  if (r.status !== 0 || r.stderr) throw new Error(`sqlite3: ${r.stderr}`);
  return r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, unknown>[]) : [];
}

/** Equal as the two print them: integers and text exactly, reals to 12 significant digits (sqlite3 prints 15 or 17). */
function expectSameValue(ours: unknown, theirs: unknown, where: string) {
  if (typeof ours === 'number' && typeof theirs === 'number' && !Number.isInteger(ours)) {
    expect(Math.abs(ours - theirs), where).toBeLessThanOrEqual(Math.abs(theirs) * 1e-12);
  } else expect(ours, where).toEqual(theirs);
}

describe('streamscope sql FILE QUERY: the same rows as sqlite3', () => {
  const cases: [string, string, string][] = [
    ['normalise-concurrent', 'kernels', 'SELECT id, start_ns, end_ns, stream_id, name_id FROM kernels ORDER BY id'],
    [
      'torch_prefetch',
      'calls by name',
      'SELECT s.value, count(*) AS n, sum(end_ns - start_ns) AS total FROM api_calls a JOIN strings s ON s.id = a.name_id GROUP BY s.value ORDER BY total DESC',
    ],
    [
      'nccl-serial-h200x2',
      'kernel_view',
      "SELECT kernel_id, name, stream, stream_kind, gpu, duration_us FROM kernel_view WHERE name LIKE 'nccl%' ORDER BY kernel_id",
    ],
    ['normalise-pageable', 'copy_view', 'SELECT * FROM copy_view ORDER BY memcpy_id'],
    ['cupy_streams_events', 'operation_view', 'SELECT * FROM operation_view ORDER BY start_ns, kind'],
    ['nvtx_torch', 'nvtx_view', 'SELECT * FROM nvtx_view ORDER BY nvtx_range_id'],
    ['torch_prefetch', 'meta (origins beyond 2^53 as text)', 'SELECT key, value FROM meta ORDER BY key'],
    ...SQL_EXAMPLES.flatMap((e): [string, string, string][] => [
      ['nccl-overlap-h200x2', `example: ${e.title}`, e.sql],
      ['torch_prefetch', `example: ${e.title}`, e.sql],
    ]),
  ];
  it.each(cases)('%s: %s', (name, _label, query) => {
    const r = run([fixture(name), query, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const ours = JSON.parse(r.stdout) as { file: string; columns: string[]; rows: unknown[][]; truncated: boolean };
    expect(ours.file).toBe(fixture(name));
    expect(ours.truncated).toBe(false);
    const theirs = sqlite3Json(fixture(name), query);
    expect(ours.rows.length).toBe(theirs.length);
    theirs.forEach((row, i) => {
      expect(Object.keys(row)).toEqual(ours.columns);
      ours.columns.forEach((c, j) => expectSameValue(ours.rows[i]![j], row[c], `row ${i} ${c}`));
    });
  });

  it('--csv is what sqlite3 -csv -header prints', () => {
    const query = 'SELECT kernel_id, name, stream, stream_kind, NULL AS missing, \'a,"b"\' AS quoted FROM kernel_view ORDER BY kernel_id LIMIT 50';
    const r = run([fixture('torch_prefetch'), query, '--csv']);
    expect(r.code).toBe(0);
    const theirs = spawnSync(SQLITE3, ['-readonly', '-csv', '-header', fixture('torch_prefetch')], {
      encoding: 'utf8',
      input: `${sqlViewsDdl()}\n${query};\n`,
    });
    expect(r.stdout).toBe(theirs.stdout);
    expect(r.stdout.split('\n')[0]).toBe('kernel_id,name,stream,stream_kind,missing,quoted');
  });

  it('prints a table for people, with a line counting the rows', () => {
    const r = run([fixture('normalise-concurrent'), 'SELECT gpu, stream, count(*) AS kernels FROM kernel_view GROUP BY stream_id ORDER BY stream']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s+gpu\s+stream\s+kernels$/);
    expect(lines[1]).toMatch(/^\s+-+\s+-+\s+-+$/);
    expect(lines.at(-1)).toMatch(/^\(\d+ rows?, [\d.]+ ms\)$/);
    expect(lines.length).toBe(
      Number(run([fixture('normalise-concurrent'), 'SELECT count(DISTINCT stream_id) FROM kernels', '--csv']).stdout.split('\n')[1]) + 3,
    );
  });

  it('--json carries the columns, the rows as arrays, and whether the row cap cut them', () => {
    const r = run([fixture('normalise-concurrent'), 'SELECT kernel_id, name FROM kernel_view ORDER BY kernel_id', '--json', '--max-rows', '3']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['file', 'columns', 'rows', 'truncated', 'rowLimit', 'elapsedMs']);
    expect(out.columns).toEqual(['kernel_id', 'name']);
    expect(out.rows.map((row: unknown[]) => row[0])).toEqual([1, 2, 3]);
    expect([out.truncated, out.rowLimit]).toEqual([true, 3]);
    expect(r.stderr).toMatch(/the first 3 rows: the query has more/);
  });

  it('reads the query from stdin with -', () => {
    const r = run([fixture('normalise-concurrent'), '-', '--csv'], '-- a comment first\nSELECT count(*) AS n FROM kernels;\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^n\n\d+\n$/);
  });
});

describe('streamscope sql: refused or stopped, with a message, the file unchanged', () => {
  const file = fixture('matmul-concurrent');
  let before: string;
  beforeAll(() => {
    before = sha256(file);
  });

  const cases: [string, RegExp, string][] = [
    ['DELETE FROM kernels', /DELETE is refused: the SQL console only reads/, '^^^^^^'],
    ["ATTACH DATABASE '" + '/tmp/streamscope-sql-test.sqlite' + "' AS other", /ATTACH is refused: the console reads this recording and nothing else/, '^^^^^^'],
    ['PRAGMA writable_schema=1', /PRAGMA writable_schema is refused/, '^^^^^^^^^^^^^^^'],
  ];
  it.each(cases)('%s', (query, message, caret) => {
    const r = run([file, query]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const [line, echo, marks] = r.stderr.split('\n');
    expect(line).toMatch(new RegExp(`^streamscope: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    expect(line).toMatch(message);
    expect(echo).toBe(`  ${query}`);
    expect(marks!.trim()).toBe(caret);
    expect(fs.existsSync('/tmp/streamscope-sql-test.sqlite')).toBe(false);
  });

  it('stops a runaway recursive CTE after its time limit (5 s by default)', () => {
    const r = run([file, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`streamscope: ${file}: the query ran longer than 5 s and was stopped (its time limit)`);
  });

  it('--timeout sets another limit', () => {
    const r = run([file, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT max(x) FROM c', '--timeout', '250ms']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the query ran longer than 0.3 s and was stopped');
  });

  it("SQLite's errors point at the token they name", () => {
    const r = run([file, 'SELECT name,\n       launches\nFROM kernel_view']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`streamscope: ${file}: no such column: launches\n         launches\n         ^^^^^^^^\n`);
  });

  it('leaves the file as it was', () => {
    expect(sha256(file)).toBe(before);
  });
});

describe('streamscope sql: usage and files', () => {
  it('exits 2 for a file that is not a recording, naming it', () => {
    const r = run([path.join(fixtures, 'PROVENANCE.md'), 'SELECT 1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PROVENANCE\.md: .*not a SQLite database/);
    const missing = run([path.join(dir, 'none.sqlite'), 'SELECT 1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/none\.sqlite: no such file/);
  });

  it('exits 2 for bad usage, with the usage line', () => {
    for (const args of [
      [],
      ['--json'],
      [fixture('matmul-serial'), 'SELECT 1', '--jsn'],
      [fixture('matmul-serial'), 'SELECT 1', '--json', '--csv'],
      [fixture('matmul-serial'), 'SELECT 1', '--timeout', 'soon'],
    ]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^streamscope sql: .+\n(usage: streamscope sql .+\n)?see streamscope sql --help\n$/);
    }
    expect(run([]).stderr).toContain('usage: streamscope sql FILE');
  });

  it('takes a query that starts with a comment for a query, not an option', () => {
    const r = run([fixture('matmul-serial'), '-- how many\nSELECT count(*) FROM kernels', '--csv']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^count\(\*\)\n\d+\n$/);
  });
});

describe('streamscope sql FILE: the prompt', () => {
  const file = fixture('normalise-concurrent');

  it('runs statements as a ; ends them, and the dot commands', () => {
    const input = [
      '.tables',
      'SELECT count(*) AS kernels',
      '  FROM kernel_view;  SELECT 1 AS one; SELECT',
      "  'two' AS two;",
      '.schema copy_view',
      '.mode csv',
      'SELECT kernel_id FROM kernel_view ORDER BY kernel_id LIMIT 2;',
      'DELETE FROM kernels;',
      '.help',
      'SELECT 3 AS three',
    ].join('\n');
    const r = run([file], input);
    // Not a terminal: results only (no banner, no prompts), and exit 1 because a statement failed.
    expect(r.code).toBe(1);
    const out = r.stdout;
    for (const name of ['kernels', 'memcpys', 'strings', 'kernel_view  (view of the console)', 'operation_view  (view of the console)'])
      expect(out).toContain(`${name}\n`);
    const kernels = Number(run([file, 'SELECT count(*) FROM kernels', '--csv']).stdout.split('\n')[1]);
    expect(out).toMatch(new RegExp(`\\n\\s+kernels\\n\\s+-+\\n\\s+${kernels}\\n\\(1 row, `));
    expect(out).toMatch(/\n\s+one\n\s+---\n\s+1\n\(1 row, /);
    expect(out).toMatch(/\n\s+two\n\s+---\n\s+two\n\(1 row, /);
    expect(out).toContain('CREATE TEMP VIEW copy_view AS\nSELECT m.id AS memcpy_id');
    expect(out).toContain('kernel_id\n1\n2\n');
    expect(out).toContain('.tables            the recording');
    // What was left when the input ended ran too.
    expect(out.trimEnd().endsWith('three\n3')).toBe(true);
    expect(out).not.toContain('sql>');
    expect(r.stderr).toContain(`streamscope: ${file}: DELETE is refused`);
  });

  it('shows its banner and prompts with --interactive, stops at .quit, and keeps a history', () => {
    const history = path.join(dir, 'cache', 'sql-history');
    fs.rmSync(history, { force: true });
    const r = run([file, '--interactive'], 'SELECT 41 + 1 AS answer;\nSELECT 1,\n2;\n.quit\nSELECT 99;\n');
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`StreamScope SQL console on ${file} (read-only). .help for help, .quit to leave.\nsql> `)).toBe(true);
    expect(r.stdout).toContain('answer');
    expect(r.stdout).toContain('...> ');
    expect(r.stdout).not.toContain('99');
    expect(fs.readFileSync(history, 'utf8')).toBe('SELECT 41 + 1 AS answer;\nSELECT 1, 2;\n.quit\n');
    // A second session adds to it.
    run([file], 'SELECT 7;\n');
    expect(fs.readFileSync(history, 'utf8').split('\n').filter(Boolean)).toEqual(['SELECT 41 + 1 AS answer;', 'SELECT 1, 2;', '.quit', 'SELECT 7;']);
  });
});
