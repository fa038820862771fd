// The Query tab's values (cell-text.ts, export.ts) on a real result: the SQL
// console's answer on a PyTorch recording, where SQLite's averages come with
// every digit a double has. REAL columns read with one number of decimals
// each, integers (counts, ns timestamps) as they are, and what is saved
// keeps every digit.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SqlRows } from '../../../profiler/contract/sql.ts';
import { SqlConsole } from '../../../profiler/query/sql-console.ts';
import { cellText, columnDecimals, exactText, resultDecimals } from './cell-text.ts';
import { resultCsv, resultJson } from './export.ts';

const torch = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings/torch_prefetch.sqlite');
const QUERY =
  'SELECT name, count(*) AS launches, avg(duration_us) AS mean_us, min(start_ns) AS first_ns, sum(duration_us) / 1000.0 AS total_ms, ' +
  '9007199254740993 AS big FROM kernel_view GROUP BY name ORDER BY total_ms DESC';

let r: SqlRows;
beforeAll(() => {
  const sql = new SqlConsole(torch);
  const answer = sql.run(QUERY);
  sql.close();
  if (!answer.ok) throw new Error(answer.message);
  r = answer;
});

const column = (name: string) => r.rows.map((row) => row[r.columns.indexOf(name)]!);

describe('Query tab values', () => {
  it('REAL columns: the largest value to 6 significant digits, the whole column with its decimals', () => {
    const mean = column('mean_us') as number[];
    // What SQLite gives: every digit of a double (this recording's GEMM: 1361.9709444444443 µs).
    expect(mean.some((v) => String(v).length > 12)).toBe(true);
    const decimals = resultDecimals(r);
    expect(decimals[r.columns.indexOf('mean_us')]).toBe(2);
    expect(mean.map((v) => cellText(v, 2))).toEqual(mean.map((v) => v.toFixed(2)));
    expect(cellText(mean[0]!, 2)).toBe('1361.97');
    expect(decimals[r.columns.indexOf('total_ms')]).toBe(4);
    // Every shown value is its exact value rounded: nothing else changed.
    for (const [c, d] of decimals.entries()) for (const row of r.rows) if (d !== null) expect(Number(cellText(row[c]!, d))).toBeCloseTo(row[c] as number, d);
  });

  it('integers (counts, ns timestamps), text and integers past 2^53 are shown as they are', () => {
    const decimals = resultDecimals(r);
    for (const name of ['name', 'launches', 'first_ns', 'big']) expect(decimals[r.columns.indexOf(name)], name).toBeNull();
    const first = column('first_ns') as number[];
    expect(first.every((v) => Number.isInteger(v) && v > 1e8)).toBe(true);
    expect(first.map((v) => cellText(v, null))).toEqual(first.map(String));
    expect(column('big')).toEqual(r.rows.map(() => '9007199254740993'));
    expect(cellText('9007199254740993', null)).toBe('9007199254740993');
    expect(cellText(null, 3)).toBe('NULL');
  });

  it('no more decimals than the values need; a value that would read 0 is written as itself', () => {
    expect(columnDecimals([0.5, 0.25, 2])).toBe(2);
    expect(columnDecimals([1, 2, 3])).toBeNull();
    expect(columnDecimals([0.001234567, 0.5])).toBe(6);
    const d = columnDecimals([1234.5, 1e-12])!;
    expect(d).toBe(1);
    expect(cellText(1e-12, d)).toBe('1e-12');
    expect(cellText(0, d)).toBe('0.0');
  });

  it('CSV and JSON keep every digit', () => {
    const csv = resultCsv(r).trimEnd().split('\r\n');
    expect(csv[0]).toBe(r.columns.join(','));
    expect(csv).toHaveLength(r.rows.length + 1);
    const mean = r.columns.indexOf('mean_us');
    // The kernel names hold commas, quoted: the mean is the 4th field from the end of its line.
    for (const [i, line] of csv.slice(1).entries()) {
      const fields = line.split(',');
      expect(Number(fields.at(-4))).toBe(r.rows[i]![mean]);
      expect(fields.at(-4)).toBe(exactText(r.rows[i]![mean]!));
    }
    expect(csv.slice(1).filter((l) => l.startsWith('"void at::native::'))).toHaveLength(1);
    expect(JSON.parse(resultJson(r)).rows).toEqual(r.rows);
  });
});
