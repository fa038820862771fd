// Plain-text tables for terminal output: numbers right-aligned, text left.
export function renderTable(headers: string[], rows: (string | number)[][]): string {
  return Array.from(tableLines(headers, rows)).join('\n');
}

/**
 * The table's lines one at a time (no line break at their ends): for a
 * caller that writes them as they come (`streamscope sql`), where the whole
 * table as one string could be longer than a string can be.
 */
export function* tableLines(headers: string[], rows: (string | number)[][]): Generator<string> {
  if (rows.length === 0) {
    yield '  (none)';
    return;
  }
  const numeric = headers.map((_, c) => rows.every((r) => typeof r[c] === 'number' || /^[-\d.,%]+( \S+)?$/.test(String(r[c]))));
  // A loop, not Math.max(...cells): a spread of a few hundred thousand arguments overflows the stack (a report of 130 k kernel names did).
  const widths = headers.map((h, c) => rows.reduce((w, r) => Math.max(w, String(r[c] ?? '').length), h.length));
  const line = (r: string[]) =>
    '  ' +
    r
      .map((v, c) => (numeric[c] ? v.padStart(widths[c]!) : v.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  yield line(headers);
  yield line(widths.map((w) => '-'.repeat(w)));
  for (const r of rows) yield line(r.map(String));
}
