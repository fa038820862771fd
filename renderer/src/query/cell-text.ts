// How the Query tab writes a result's values. SQLite's REAL values come as
// doubles with every digit (`avg(duration_us)` → 47.3106833436825), which
// no one reads, and a column of them whose numbers do not line up is hard
// to scan. A column holding a number with a fraction is a REAL column: its
// numbers are shown with one number of decimals, chosen from the column's
// values (6 significant digits of its largest, fewer where no value needs
// more). Integers (ids, counts, ns timestamps) are shown as they are, and
// so is every value of another column. The exact value stays in the
// cell's tooltip and in what is copied or exported (export.ts).
import { sqlValueText, type SqlRows, type SqlValue } from '../../../profiler/contract/sql.ts';

/** Significant digits the largest value of a REAL column is shown with. */
const SIGNIFICANT = 6;
/** Decimals no column goes beyond, however small its values (a smaller one is written as itself: exactText). */
const MAX_DECIMALS = 9;

/**
 * The decimals a column's numbers are shown with; null for a column with
 * no number that has a fraction (integers, text, NULLs), shown as it is.
 */
export function columnDecimals(values: Iterable<SqlValue>): number | null {
  let max = 0;
  let fraction = false;
  const numbers: number[] = [];
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    numbers.push(v);
    max = Math.max(max, Math.abs(v));
    fraction ||= !Number.isInteger(v);
  }
  if (!fraction) return null;
  let decimals = Math.min(MAX_DECIMALS, Math.max(0, SIGNIFICANT - 1 - Math.floor(Math.log10(max))));
  // Fewer where every value reads the same with one decimal less (0.5 and 0.25: 0.50, 0.25, not 0.500000).
  while (decimals > 0 && numbers.every((v) => Number(v.toFixed(decimals - 1)) === Number(v.toFixed(decimals)))) decimals--;
  return decimals;
}

/** Each column's decimals (columnDecimals) over a result's rows. */
export function resultDecimals(r: SqlRows): (number | null)[] {
  return r.columns.map((_, c) => columnDecimals(r.rows.map((row) => row[c]!)));
}

/**
 * A value as the table shows it: with its column's decimals when it is a
 * number of a REAL column — unless those would show a value that is not 0
 * as 0 (1e-12 among values near 1000), which is written as itself — else
 * as the console writes it (sqlValueText).
 */
export function cellText(v: SqlValue, decimals: number | null): string {
  if (decimals === null || typeof v !== 'number' || !Number.isFinite(v)) return sqlValueText(v);
  const fixed = v.toFixed(decimals);
  return v !== 0 && Number(fixed) === 0 ? exactText(v) : fixed;
}

/** A value with every digit it has (the shortest text that reads back as the same double), for tooltips, copies and exports. */
export function exactText(v: SqlValue): string {
  return v === null ? 'NULL' : String(v);
}
