// Sortable tables (click a header; again to reverse) and the small inline
// bar that reads faster than a number, shared by the stats and compare views.
import { useMemo, useState, type ReactNode } from 'react';
import { formatPercent } from './time.ts';

export interface Col<T> {
  key: string;
  label: string;
  value: (r: T) => number | string;
  show?: (r: T) => ReactNode;
  title?: (r: T) => string;
  numeric?: boolean;
}

export function SortTable<T>(props: { rows: T[]; cols: Col<T>[]; testId: string; initial: string; empty?: string }) {
  const [sort, setSort] = useState<{ key: string; desc: boolean }>({ key: props.initial, desc: true });
  const sorted = useMemo(() => {
    const col = props.cols.find((c) => c.key === sort.key) ?? props.cols[0]!;
    return [...props.rows].sort((a, b) => {
      const x = col.value(a);
      const y = col.value(b);
      const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return sort.desc ? -d : d;
    });
  }, [props.rows, props.cols, sort]);
  if (props.rows.length === 0) return <p className="hint">{props.empty ?? 'None in this scope.'}</p>;
  return (
    <table className="stats" data-testid={props.testId}>
      <thead>
        <tr>
          {props.cols.map((c) => (
            <th
              key={c.key}
              className={c.numeric ? 'num' : ''}
              aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
              onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : true }))}
            >
              {c.label}
              <span className="sort">{sort.key === c.key ? (sort.desc ? '▾' : '▴') : ''}</span>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {sorted.map((r, i) => (
          <tr key={i}>
            {props.cols.map((c) => (
              <td key={c.key} className={c.numeric ? 'num' : ''} title={c.title?.(r)}>
                {c.show ? c.show(r) : String(c.value(r))}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Bar(props: { share: number; color?: string; text?: string }) {
  const share = Math.min(1, Math.max(0, props.share));
  return (
    <span className="bar">
      <span className="fill" style={{ width: `${(share * 100).toFixed(1)}%`, background: props.color }} />
      <span className="num">{props.text ?? formatPercent(props.share)}</span>
    </span>
  );
}
