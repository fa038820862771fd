// Plain-text tables for terminal output: numbers right-aligned, text left.
export function renderTable(headers: string[], rows: (string | number)[][]): string {
  if (rows.length === 0) return '  (none)';
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const numeric = headers.map((_, c) => rows.every((r) => typeof r[c] === 'number' || /^[-\d.,%]+( \S+)?$/.test(String(r[c]))));
  // A loop, not Math.max(...cells): a spread of a few hundred thousand arguments overflows the stack (a report of 130 k kernel names did).
  const widths = headers.map((_, c) => cells.reduce((w, r) => Math.max(w, (r[c] ?? '').length), 0));
  const line = (r: string[]) =>
    '  ' +
    r
      .map((v, c) => (numeric[c] ? v.padStart(widths[c]!) : v.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}
