// The Stats tab's iterations table: one row per instance of the repeating
// NVTX range; a click on an instance makes it the scope.
import type { IterationRow } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { Bar, SortTable } from '../base/tables.tsx';
import { formatTimestamp } from '../base/time.ts';
import type { Scope } from '../scope/scope.ts';
import type { IterationTrack } from '../timeline/iterations.ts';

/**
 * The instances of the repeating NVTX range (api.iterations): GPU span,
 * work per GPU, worst finding, flags. Clicking an instance makes it the
 * scope of these statistics and of the findings.
 */
export function Iterations(props: { track: IterationTrack; scope: Scope; onScope: (s: Scope) => void }) {
  const { track: t, scope } = props;
  const chosen = scope.kind === 'range' && scope.name === t.name ? (scope.instance ?? null) : null;
  const span = (r: IterationRow) => (r.gpuStartNs !== null && r.gpuEndNs !== null ? r.gpuEndNs - r.gpuStartNs : null);
  const maxSpan = t.rows.reduce((m, r) => Math.max(m, span(r) ?? 0), 1);
  // A job's ranks each run the range: each row says whose step it is (the instances of the ranks interleave).
  const ranks = new Set(t.rows.map((r) => r.pid)).size;
  const perRank = ranks > 1;
  const whose = (r: IterationRow) => `${r.rank !== null ? `rank ${r.rank}` : `pid ${r.pid}`}${r.host ? ` (${r.host})` : ''} · step ${r.step}`;
  return (
    <section>
      <h2>
        Iterations · '{t.name}'{' '}
        <span className="h-note">
          {t.rows.length} instances{perRank ? ` on ${ranks} ranks` : ''}, median {formatDuration(t.medianNs)}; click an instance to analyse it alone
        </span>
      </h2>
      <SortTable
        testId="stats-iterations"
        initial={perRank ? 'rank' : 'instance'}
        rows={t.rows}
        cols={[
          // Sorted by −instance: the table's first (descending) order lists #1 first.
          {
            key: 'instance',
            label: 'instance',
            numeric: true,
            value: (r) => -r.instance,
            show: (r) => (
              <button
                className={`linkish${r.instance === chosen ? ' chosen' : ''}`}
                data-testid="iteration-pick"
                onClick={() => props.onScope({ kind: 'range', name: t.name, instance: r.instance })}
              >
                #{r.instance}
              </button>
            ),
          },
          ...(perRank
            ? [
                {
                  key: 'rank',
                  label: 'rank · step',
                  numeric: true,
                  // Descending first, as instance: rank 0's first step on top.
                  value: (r: IterationRow) => -((r.rank ?? r.pid) * 1e6 + r.step),
                  show: (r: IterationRow) => <span data-testid="iteration-rank">{whose(r)}</span>,
                },
              ]
            : []),
          {
            key: 'start',
            label: 'GPU start',
            numeric: true,
            value: (r) => r.gpuStartNs ?? r.startNs,
            show: (r) => (r.gpuStartNs === null ? '—' : formatTimestamp(r.gpuStartNs, 1000)),
          },
          {
            key: 'span',
            label: 'GPU span',
            numeric: true,
            value: (r) => span(r) ?? 0,
            show: (r) => {
              const v = span(r);
              return v === null ? (
                <span className="hint">no GPU work</span>
              ) : (
                <Bar share={v / maxSpan} text={formatDuration(v)} color={r.outlier ? '#e69500' : '#8fb3da'} />
              );
            },
          },
          { key: 'ops', label: 'operations', numeric: true, value: (r) => r.operations },
          {
            key: 'gpus',
            label: 'busy · overlap per GPU',
            value: (r) => r.devices.reduce((n, d) => n + d.busyNs, 0),
            show: (r) =>
              r.devices.map((d) => `GPU ${d.gpu}: ${formatDuration(d.busyNs)}${d.overlap !== null ? ` · ${d.overlap.toFixed(2)}×` : ''}`).join('; ') || '—',
          },
          {
            key: 'finding',
            label: 'top finding',
            value: (r) => r.topFinding?.costNs ?? 0,
            title: (r) => r.topFinding?.title ?? '',
            show: (r) =>
              r.topFinding ? (
                <span className="it-finding">
                  {r.topFinding.title} <span className="hint">({formatDuration(r.topFinding.costNs)})</span>
                </span>
              ) : t.findings ? (
                '—'
              ) : (
                <span className="hint" data-testid="iteration-finding-pending">
                  estimating…
                </span>
              ),
          },
          {
            key: 'flags',
            label: 'flags',
            value: (r) => (r.warmUp ? 2 : 0) + (r.outlier ? 1 : 0),
            show: (r) => [r.warmUp ? 'warm-up' : '', r.outlier ? 'outlier' : ''].filter(Boolean).join(', '),
          },
        ]}
      />
    </section>
  );
}
