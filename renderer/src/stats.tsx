// Stats views: kernel summary, copy summary, per-stream utilization and the
// stream-pair overlap matrix, as sortable tables with small bars where a bar
// reads faster than a number.
import { useEffect, useMemo, useState } from 'react';
import type { RecordingSummary, StatsResponse } from '../../profiler/query/api.ts';
import { api } from './api.ts';
import { formatNs } from './format.ts';

type Col<T> = { key: string; label: string; value: (r: T) => number | string; show?: (r: T) => React.ReactNode };

function SortTable<T>(props: { rows: T[]; cols: Col<T>[]; testId: string; initial: string }) {
  const [sort, setSort] = useState<{ key: string; desc: boolean }>({ key: props.initial, desc: true });
  const sorted = useMemo(() => {
    const col = props.cols.find((c) => c.key === sort.key)!;
    return [...props.rows].sort((a, b) => {
      const x = col.value(a);
      const y = col.value(b);
      const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return sort.desc ? -d : d;
    });
  }, [props.rows, props.cols, sort]);
  return (
    <table className="stats" data-testid={props.testId}>
      <thead><tr>{props.cols.map((c) => (
        <th key={c.key} onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : true }))}>
          {c.label}{sort.key === c.key ? (sort.desc ? ' ▾' : ' ▴') : ''}
        </th>
      ))}</tr></thead>
      <tbody>{sorted.map((r, i) => <tr key={i}>{props.cols.map((c) => <td key={c.key}>{c.show ? c.show(r) : String(c.value(r))}</td>)}</tr>)}</tbody>
    </table>
  );
}

const bar = (share: number) => (
  <span className="bar"><span className="fill" style={{ width: `${Math.round(Math.min(1, Math.max(0, share)) * 100)}%` }} /><span className="num">{(share * 100).toFixed(1)}%</span></span>
);

export function Stats(props: { summary: RecordingSummary }) {
  const [stats, setStats] = useState<StatsResponse | null>(null);
  useEffect(() => { api.stats(props.summary.recordingId).then(setStats).catch(() => setStats(null)); }, [props.summary]);
  if (!stats) return <p className="hint">Loading statistics…</p>;
  const label = (streamId: number) => props.summary.streams.find((s) => s.id === streamId)?.cuptiStreamId ?? streamId;
  return (
    <div className="stats-view">
      <h2>Overlap factors (sum of busy / union; 1.00 = nothing overlapped)</h2>
      <SortTable testId="stats-overlap" initial="all" rows={stats.overlapFactors} cols={[
        { key: 'device', label: 'device', value: (r) => r.deviceId },
        { key: 'compute', label: 'compute', value: (r) => r.compute, show: (r) => r.compute.toFixed(2) },
        { key: 'h2d', label: 'HtoD', value: (r) => r.h2d, show: (r) => r.h2d.toFixed(2) },
        { key: 'd2h', label: 'DtoH', value: (r) => r.d2h, show: (r) => r.d2h.toFixed(2) },
        { key: 'all', label: 'all', value: (r) => r.all, show: (r) => r.all.toFixed(2) },
      ]} />
      <h2>Kernels</h2>
      <SortTable testId="stats-kernels" initial="total" rows={stats.kernels} cols={[
        { key: 'name', label: 'name', value: (r) => r.name, show: (r) => <span className="kname" title={r.name}>{r.name}</span> },
        { key: 'count', label: 'count', value: (r) => r.count },
        { key: 'total', label: 'total', value: (r) => r.totalNs, show: (r) => formatNs(r.totalNs) },
        { key: 'mean', label: 'mean', value: (r) => r.meanNs, show: (r) => formatNs(r.meanNs) },
        { key: 'min', label: 'min', value: (r) => r.minNs, show: (r) => formatNs(r.minNs) },
        { key: 'max', label: 'max', value: (r) => r.maxNs, show: (r) => formatNs(r.maxNs) },
        { key: 'share', label: 'share', value: (r) => r.share, show: (r) => bar(r.share) },
      ]} />
      <h2>Copies and memsets</h2>
      <SortTable testId="stats-copies" initial="bytes" rows={stats.copies} cols={[
        { key: 'dir', label: 'direction', value: (r) => r.direction },
        { key: 'src', label: 'from', value: (r) => r.srcKind },
        { key: 'dst', label: 'to', value: (r) => r.dstKind },
        { key: 'count', label: 'count', value: (r) => r.count },
        { key: 'bytes', label: 'bytes', value: (r) => r.bytes, show: (r) => `${(r.bytes / 2 ** 20).toFixed(1)} MiB` },
        { key: 'time', label: 'time', value: (r) => r.totalNs, show: (r) => formatNs(r.totalNs) },
        { key: 'gbps', label: 'GB/s', value: (r) => r.gbPerS, show: (r) => r.gbPerS.toFixed(1) },
      ]} />
      <h2>Streams</h2>
      <SortTable testId="stats-streams" initial="busy" rows={stats.streams} cols={[
        { key: 'stream', label: 'stream', value: (r) => label(r.streamId) },
        { key: 'device', label: 'device', value: (r) => r.deviceId ?? -1 },
        { key: 'kernels', label: 'kernels', value: (r) => r.kernels },
        { key: 'copies', label: 'copies', value: (r) => r.copies },
        { key: 'busy', label: 'busy', value: (r) => r.busyNs, show: (r) => formatNs(r.busyNs) },
        { key: 'util', label: 'share of device busy', value: (r) => r.utilization, show: (r) => bar(r.utilization) },
      ]} />
      {stats.overlap.map((m) => (
        <div key={m.deviceId}>
          <h2>Stream-pair overlap, device {m.deviceId} (time both ran)</h2>
          <table className="matrix" data-testid="stats-matrix">
            <thead><tr><th />{m.streamIds.map((s) => <th key={s}>{label(s)}</th>)}</tr></thead>
            <tbody>{m.streamIds.map((a, i) => {
              const max = Math.max(1, ...m.overlapNs.flat());
              return (
                <tr key={a}><th>{label(a)}</th>{m.streamIds.map((b, j) => (
                  <td key={b} title={`${label(a)} × ${label(b)}: ${formatNs(m.overlapNs[i]![j]!)}`}
                    style={{ backgroundColor: i === j ? '#ddd' : `rgba(78, 121, 167, ${m.overlapNs[i]![j]! / max})` }}>
                    {i === j ? '' : formatNs(m.overlapNs[i]![j]!)}
                  </td>
                ))}</tr>
              );
            })}</tbody>
          </table>
        </div>
      ))}
    </div>
  );
}
