// A Query tab result as it leaves the page — saved as CSV or JSON, or
// copied from the table — with every value exact: the table rounds REAL
// values for reading (cell-text.ts), what is taken away must not.
import type { SqlRows, SqlValue } from '../../../profiler/contract/sql.ts';
import { exactText } from './cell-text.ts';

/** RFC 4180: a field quoted when it holds a comma, a quote or a line break. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A header line, then a line per row; NULL as an empty field, numbers with every digit. */
export function resultCsv(r: SqlRows): string {
  const field = (v: SqlValue) => (v === null ? '' : csvField(exactText(v)));
  return [r.columns.map(csvField).join(','), ...r.rows.map((row) => row.map(field).join(','))].map((l) => `${l}\r\n`).join('');
}

/** `{ columns, rows }`, the rows as arrays in column order, values as the API sent them. */
export function resultJson(r: SqlRows): string {
  return JSON.stringify({ columns: r.columns, rows: r.rows, truncated: r.truncated }, null, 1);
}

/** Saves `text` as a file the user is offered (browser mode: a download; Electron: its save dialog). */
export function saveText(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/**
 * What a copy of a selection in the results table puts on the clipboard:
 * the selected cells' exact values, a tab between cells and a line per
 * row (as spreadsheets paste them). `rows`: the table's body rows, each
 * with its result row's index; null when no cell of the table is selected.
 */
export function selectedCellsText(selection: Selection, rows: Iterable<{ tr: HTMLTableRowElement; row: SqlValue[] }>): string | null {
  const lines: string[] = [];
  for (const { tr, row } of rows) {
    if (!selection.containsNode(tr, true)) continue;
    const cells = [...tr.cells].flatMap((td, c) => (selection.containsNode(td, true) ? [exactText(row[c]!)] : []));
    if (cells.length > 0) lines.push(cells.join('\t'));
  }
  return lines.length === 0 ? null : lines.join('\n');
}
