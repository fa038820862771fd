// `streamscope sql` on results larger than one string can be (issue 27:
// `sql --json` and `--csv` ended with RangeError: Invalid string length).
// The output is written as it is made (sql-format.ts resultText and
// writeText), so its size is the output's business, not a string's; the
// one value JavaScript cannot hold at all — a BLOB whose hex is longer than
// a string — is refused by its row and column. Run in-process where the
// result can be one string repeated (cheap), and as a user runs it where
// SQLite makes the value.
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:buffer';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { resultText, writeText } from '../../profiler/cli/sql-format.ts';
import type { SqlRows, SqlValue } from '../../profiler/contract/sql.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const file = path.join(repoRoot, 'test/fixtures/recordings/cupy_streams.sqlite');

const result = (columns: string[], rows: SqlValue[][]): SqlRows => ({ ok: true, columns, rows, truncated: false, rowLimit: 10, elapsedMs: 1, items: [] });

/** A stream that keeps only the count of what it was given, and its first and last characters. */
function counter() {
  const seen = { chars: 0, head: '', tail: '' };
  const out = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      seen.chars += chunk.length;
      if (seen.head.length < 200) seen.head += chunk.slice(0, 200);
      seen.tail = (seen.tail + chunk).slice(-200);
      done();
    },
  });
  return { out, seen };
}

describe('streamscope sql: results of any size', () => {
  it('writes JSON and CSV longer than a string can be, as JSON.stringify and the CSV lines would be', async () => {
    // One string of 100 M characters in six rows: 600 M characters out, over the 2^29 − 24 of a string.
    const big = 'x'.repeat(100_000_000);
    const r = result(
      ['i', 'text'],
      Array.from({ length: 6 }, (_, i) => [i, big]),
    );
    const head = '{"file":"f.sqlite","columns":["i","text"],"rows":[';
    const tail = '],"truncated":false,"rowLimit":10,"elapsedMs":1}\n';
    const json = counter();
    expect(await writeText(json.out, resultText(r, 'json', 'f.sqlite'))).toBe(true);
    expect(json.seen.chars).toBe(head.length + 6 * (`[0,""]`.length + big.length) + 5 + tail.length);
    expect(json.seen.chars).toBeGreaterThan(constants.MAX_STRING_LENGTH);
    expect(json.seen.head.startsWith(`${head}[0,"xxx`)).toBe(true);
    expect(json.seen.tail.endsWith(`xxx"]${tail}`)).toBe(true);
    const csv = counter();
    expect(await writeText(csv.out, resultText(r, 'csv', 'f.sqlite'))).toBe(true);
    expect(csv.seen.chars).toBe('i,text\n'.length + 6 * ('0,\n'.length + big.length));
    expect(csv.seen.head.startsWith('i,text\n0,xxx')).toBe(true);
    expect(csv.seen.tail.endsWith('xxx\n')).toBe(true);
  }, 60_000);

  it('cuts long values into pieces without changing a character: escapes, quotes, surrogate pairs', () => {
    const values: SqlValue[] = [
      'a"b,c',
      'two\nlines\r\n',
      '\u0000\u001f\\',
      '😀😀😀x😀',
      'lone \ud800 half',
      'plain',
      1.5,
      42,
      null,
      0.1 + 0.2,
      '9007199254740993',
      '',
    ];
    const r = result(
      values.map((_, i) => `c${i}`),
      [values, [...values].reverse()],
    );
    const whole = { json: [...resultText(r, 'json', 'f')].join(''), csv: [...resultText(r, 'csv', 'f')].join('') };
    expect(whole.json).toBe(JSON.stringify({ file: 'f', columns: r.columns, rows: r.rows, truncated: false, rowLimit: 10, elapsedMs: 1 }) + '\n');
    for (const pieceChars of [1, 2, 3, 5, 8]) {
      expect([...resultText(r, 'json', 'f', pieceChars)].join(''), `${pieceChars}`).toBe(whole.json);
      expect([...resultText(r, 'csv', 'f', pieceChars)].join(''), `${pieceChars}`).toBe(whole.csv);
      // No pair is split between two pieces: each is encoded as UTF-8 on its own.
      const pieces = [...resultText(r, 'csv', 'f', pieceChars)];
      const split = pieces.slice(1).filter((p, i) => /[\ud800-\udbff]$/.test(pieces[i]!) && /^[\udc00-\udfff]/.test(p));
      expect(split).toEqual([]);
    }
  });

  it('prints a value whose JSON is longer than a string can be (90 M NULs: \\u0000 each)', async () => {
    const child = spawn(process.execPath, [cli, 'sql', file, 'SELECT 1 AS a, CAST(zeroblob(90000000) AS TEXT) AS nuls', '--json']);
    let bytes = 0;
    let head = '';
    let tail = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      bytes += b.length;
      if (head.length < 200) head += b.toString('latin1', 0, 200);
      tail = (tail + b.toString('latin1', Math.max(0, b.length - 200))).slice(-200);
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const opening = `{"file":${JSON.stringify(file)},"columns":["a","nuls"],"rows":[[1,"`;
    expect(head.startsWith(opening + '\\u0000\\u0000')).toBe(true);
    const closing = /\\u0000"\]\],"truncated":false,"rowLimit":10000,"elapsedMs":[\d.]+\}\n$/.exec(tail);
    expect(closing).not.toBeNull();
    expect(bytes - opening.length - (closing![0].length - 6)).toBe(6 * 90_000_000);
  }, 60_000);

  it('refuses a BLOB whose hex is longer than a string can be, naming its row and column', () => {
    // 2 × 268,435,443 + 3 characters as x'…': one over the limit.
    const bytes = (constants.MAX_STRING_LENGTH - 3) / 2 + 1;
    const r = spawnSync(process.execPath, [cli, 'sql', file, `SELECT 1 AS a, zeroblob(${Math.floor(bytes)}) AS payload`, '--csv'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(`^streamscope: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: row 1, column 'payload': a BLOB of 268,435,443 bytes is too large to show`),
    );
    expect(r.stderr).toContain('substr(payload, 1, 1000000)');
  }, 60_000);

  it('stops quietly when the reader goes away (| head)', async () => {
    const query = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000) SELECT i, i * 2 AS twice FROM n';
    const child = spawn(process.execPath, [cli, 'sql', file, query, '--csv', '--max-rows', '1000000']);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 60_000);
});
