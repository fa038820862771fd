// The Query tab: SQL on the shown recording (the API's sql(); the same
// console as `streamscope sql`: read-only, one statement, 5 s, 10 000 rows,
// the views of SCHEMA.md). An editor (Ctrl/Cmd+Enter runs), the example
// queries, the rows as a table — a value in a column that names an
// operation (`kernel_id`, `memcpy_id`, …: contract/sql.ts SQL_ITEM_COLUMNS)
// is a link to it on the timeline, and so is a click on its row; REAL
// values rounded for reading (cell-text.ts), exact in their tooltips, in a
// copy of the table and in its CSV and JSON (export.ts) — or the failure:
// SQLite's message, and where it points, the line with a caret under the
// token and the token selected in the editor.
import { useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { SqlFailure, SqlRows } from '../../../profiler/contract/api.ts';
import { pointAt, SQL_EXAMPLES, SQL_ITEM_COLUMNS, SQL_ROW_LIMIT, SQL_TIME_LIMIT_MS, SQL_VIEWS } from '../../../profiler/contract/sql.ts';
import { cellText, exactText, resultDecimals } from './cell-text.ts';
import { resultCsv, resultJson, saveText, selectedCellsText } from './export.ts';
import type { QueryState } from './use-query.ts';

/** Rows drawn at first, and added per "more" (a result holds up to 10 000: as DOM, a few at a time). */
const PAGE_ROWS = 1000;

export function QueryView(props: { query: QueryState }) {
  const { text, setText, answer, running, run, show } = props.query;
  const editor = useRef<HTMLTextAreaElement>(null);

  // A failure that points somewhere selects that token in the editor (when the text is still the one it answered).
  // A layout effect: the selection is set in the commit that shows the failure. A passive effect runs in a
  // later task, after the page has shown the error and may already be typed into: select all, then the
  // late effect selects the token, and what is typed next replaces only the token (the query text mangled,
  // e.g. "SELECT * DELETE FROM kernels kernel_view" after "SELECT * FROMM kernel_view").
  const failure = answer && !answer.answer.ok ? answer.answer : null;
  useLayoutEffect(() => {
    const el = editor.current;
    if (!el || !failure?.position || answer?.query !== el.value) return;
    el.focus();
    el.setSelectionRange(failure.position.start, Math.max(failure.position.end, failure.position.start));
  }, [failure, answer?.query]);

  return (
    <div className="query-view" data-testid="query-view">
      <div className="query-editor">
        <div className="query-bar">
          <button className="primary" data-testid="query-run" disabled={running} onClick={() => run()} title="Run the query (Ctrl+Enter, ⌘+Enter)">
            Run
          </button>
          <select
            data-testid="query-examples"
            value=""
            onChange={(e) => {
              const ex = SQL_EXAMPLES[Number(e.target.value)];
              if (ex) run(ex.sql);
            }}
          >
            <option value="">Examples…</option>
            {SQL_EXAMPLES.map((ex, i) => (
              <option key={ex.title} value={i}>
                {ex.title}
              </option>
            ))}
          </select>
          <span className="query-status" data-testid="query-status">
            {running ? 'running…' : answer?.answer.ok ? rowsText(answer.answer) : ''}
          </span>
          <span className="spacer" />
          <span className="hint" title={SQL_VIEWS.map((v) => `${v.name}: ${v.about}`).join('\n')}>
            read-only · one statement · {SQL_TIME_LIMIT_MS / 1000} s · {SQL_ROW_LIMIT.toLocaleString('en-US')} rows · views:{' '}
            {SQL_VIEWS.map((v) => v.name).join(', ')}
          </span>
        </div>
        <textarea
          ref={editor}
          className="query-text"
          data-testid="query-text"
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              run();
            }
          }}
        />
      </div>
      {failure && answer && <Failure failure={failure} query={answer.query} />}
      {answer?.answer.ok && <Results key={answer.query} rows={answer.answer} onShow={show} />}
    </div>
  );
}

function rowsText(r: SqlRows): string {
  const n = r.rows.length.toLocaleString('en-US');
  const ms = `${r.elapsedMs < 10 ? r.elapsedMs.toFixed(1) : Math.round(r.elapsedMs)} ms`;
  return `${r.truncated ? `first ${n} rows (there are more)` : `${n} row${r.rows.length === 1 ? '' : 's'}`} · ${ms}`;
}

function Failure(props: { failure: SqlFailure; query: string }) {
  const { failure, query } = props;
  const at = failure.position ? pointAt(query, failure.position) : null;
  const title = failure.problem === 'timeout' ? 'Stopped at the time limit' : failure.problem === 'refused' ? 'Not run' : 'SQLite error';
  return (
    <div className="query-error" role="alert" data-testid="query-error" data-problem={failure.problem}>
      <strong>{title}</strong> {failure.message}
      {at && (
        <pre className="query-pointer" data-testid="query-error-pointer" data-start={failure.position!.start} data-end={failure.position!.end}>
          <span className="hint">line {at.lineNumber} │ </span>
          {at.text.slice(0, at.column)}
          <mark>{at.text.slice(at.column, at.column + at.width)}</mark>
          {at.text.slice(at.column + at.width)}
          {'\n'}
          <span className="hint">{' '.repeat(`line ${at.lineNumber} │ `.length)}</span>
          <span className="caret">
            {' '.repeat(at.column)}
            {'^'.repeat(at.width)}
          </span>
        </pre>
      )}
    </div>
  );
}

function Results(props: { rows: SqlRows; onShow: QueryState['show'] }) {
  const { rows: r, onShow } = props;
  const [shown, setShown] = useState(PAGE_ROWS);
  const decimals = useMemo(() => resultDecimals(r), [r]);
  const body = useRef<HTMLTableSectionElement>(null);
  const rounded = decimals.some((d) => d !== null);
  const links = new Map(r.items.map((c) => [c.column, c.table]));
  const linkColumns = Object.values(SQL_ITEM_COLUMNS).join(', ');
  /** The first operation a row names: what a click on the row shows. */
  const firstRef = (row: SqlRows['rows'][number]) => {
    for (const c of r.items) if (typeof row[c.column] === 'number') return { table: c.table, id: row[c.column] as number };
    return null;
  };
  return (
    <div className="query-results-wrap">
      {r.truncated && (
        <p className="query-truncated" data-testid="query-truncated">
          The first {r.rows.length.toLocaleString('en-US')} rows: the query has more (narrow it with WHERE or LIMIT).
        </p>
      )}
      {r.items.length === 0 && r.rows.length > 0 && (
        <p className="hint">Columns named {linkColumns} link their rows to the timeline (e.g. SELECT id AS kernel_id FROM kernels).</p>
      )}
      {r.rows.length > 0 && (
        <p className="hint">
          {rounded && 'Decimals rounded for reading: hover a value, copy or save the rows for every digit. '}
          Save as{' '}
          <button className="linkish" data-testid="query-save-csv" onClick={() => saveText(resultCsv(r), 'query.csv', 'text/csv')}>
            CSV
          </button>{' '}
          ·{' '}
          <button className="linkish" data-testid="query-save-json" onClick={() => saveText(resultJson(r), 'query.json', 'application/json')}>
            JSON
          </button>
        </p>
      )}
      <table
        className="stats query-results"
        data-testid="query-results"
        onCopy={(e) => {
          // The selected cells' exact values, not the rounded text the table shows.
          const selection = window.getSelection();
          const trs = body.current ? [...body.current.rows] : [];
          const text =
            selection &&
            selectedCellsText(
              selection,
              trs.map((tr, i) => ({ tr, row: r.rows[i]! })),
            );
          if (!text) return;
          e.preventDefault();
          e.clipboardData.setData('text/plain', text);
        }}
      >
        <thead>
          <tr>
            {r.columns.map((c, i) => (
              <th key={i} className={links.has(i) ? 'link-col' : ''} title={links.has(i) ? `${links.get(i)}.id: a link to the operation` : undefined}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody ref={body}>
          {r.rows.slice(0, shown).map((row, i) => {
            const ref = firstRef(row);
            return (
              <tr
                key={i}
                data-testid="query-row"
                className={ref ? 'linked' : ''}
                title={ref ? `Show ${ref.table} ${ref.id} on the timeline` : undefined}
                onClick={ref ? () => onShow(ref) : undefined}
              >
                {row.map((v, c) => {
                  const table = links.get(c);
                  const text = cellText(v, decimals[c]!);
                  let cell: ReactNode = text;
                  if (table && typeof v === 'number') {
                    cell = (
                      <button
                        className="linkish"
                        data-testid="query-link"
                        data-table={table}
                        data-id={v}
                        onClick={(e) => {
                          e.stopPropagation();
                          onShow({ table, id: v });
                        }}
                      >
                        {v}
                      </button>
                    );
                  }
                  return (
                    <td
                      key={c}
                      className={`${typeof v === 'number' ? 'num' : ''}${v === null ? ' null' : ''}`}
                      title={(typeof v === 'string' && v.length > 60) || text !== exactText(v) ? exactText(v) : undefined}
                    >
                      {cell}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
      {r.rows.length === 0 && <p className="hint">No rows.</p>}
      {r.rows.length > shown && (
        <button data-testid="query-more" onClick={() => setShown((s) => s + PAGE_ROWS)}>
          Show {Math.min(PAGE_ROWS, r.rows.length - shown).toLocaleString('en-US')} more of {r.rows.length.toLocaleString('en-US')} rows
        </button>
      )}
    </div>
  );
}
