// Statistics of a recording on the scope picked at the top (stats(id,
// scope): the same scope as the findings panel's): overlap factors,
// communication and stragglers (multi-rank jobs), kernels, copies,
// per-stream utilization and the stream-pair overlap matrix; and, when an NVTX range repeats, one row per instance (click one
// to analyse it alone). Sortable tables (click a header; again to reverse),
// with small bars where a bar reads faster than a number.
import { interpolateBlues } from 'd3';
import { Bar, SortTable } from '../base/tables.tsx';
import type {
  Communication as CommunicationStats,
  IterationRow,
  RangeName,
  RecordingSummary,
  Stragglers as StragglerStats,
} from '../../../profiler/contract/api.ts';
import { participantName } from '../../../profiler/contract/stragglers.ts';
import { KIND_COLORS } from '../base/colors.ts';
import { deviceTitle, gpuName } from '../base/gpus.ts';
import { fullName, readableNames } from '../../../profiler/contract/names.ts';
import { formatTimestamp } from '../base/time.ts';
import { formatBytes, formatDuration } from '../../../profiler/contract/time.ts';
import { scopeKey, type Scope } from '../scope/scope.ts';
import { ScopePicker } from '../scope/ScopePicker.tsx';
import { useScopedAnswer } from '../scope/scoped-answer.ts';
import { progressText } from '../panels/progress-text.ts';
import type { IterationTrack } from '../timeline/iterations.ts';

/** Overlap factor: 1 = nothing ran concurrently; shown against the number of streams that could overlap. */
function Factor(props: { value: number; max: number }) {
  if (!Number.isFinite(props.value) || props.value === 0) return <span className="hint">—</span>;
  return <Bar share={(props.value - 1) / Math.max(1, props.max - 1)} text={`${props.value.toFixed(2)}×`} color="#6a9fd0" />;
}

/**
 * Communication (issue 13; `report`'s Communication section): per rank and
 * GPU, its time over the scope's GPU span as compute, communication
 * (hidden behind compute or exposed), other copies and idle, and the share
 * of communication compute hid; the collectives by kind.
 */
function Communication(props: { communication: CommunicationStats; devName: (id: number | null) => string }) {
  const c = props.communication;
  const rows = c.ranks.flatMap((r) => r.devices.map((d) => ({ ...d, pid: r.pid, rank: r.rank, worldSize: r.worldSize })));
  const time = (ns: number, span: number, color: string) => <Bar share={span > 0 ? ns / span : 0} text={formatDuration(ns)} color={color} />;
  return (
    <section>
      <h2>
        Communication <span className="h-note">NCCL kernels and peer copies; per rank and GPU: compute + exposed + copies + idle = the GPU span</span>
      </h2>
      <SortTable
        testId="stats-communication"
        initial="overlap"
        rows={rows}
        cols={[
          {
            key: 'rank',
            label: 'rank',
            value: (r) => r.rank ?? -1,
            show: (r) => (r.rank === null ? '—' : `${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''}`),
          },
          { key: 'pid', label: 'pid', numeric: true, value: (r) => r.pid },
          { key: 'device', label: 'device', value: (r) => r.deviceId, show: (r) => props.devName(r.deviceId) },
          { key: 'compute', label: 'compute', numeric: true, value: (r) => r.computeNs, show: (r) => time(r.computeNs, r.spanNs, KIND_COLORS.kernel) },
          { key: 'comm', label: 'communication', numeric: true, value: (r) => r.communicationNs, show: (r) => time(r.communicationNs, r.spanNs, '#c0504d') },
          { key: 'exposed', label: 'exposed', numeric: true, value: (r) => r.exposedNs, show: (r) => time(r.exposedNs, r.spanNs, '#c0504d') },
          { key: 'copies', label: 'copies', numeric: true, value: (r) => r.copyNs, show: (r) => time(r.copyNs, r.spanNs, '#6a9fd0') },
          { key: 'idle', label: 'idle', numeric: true, value: (r) => r.idleNs, show: (r) => time(r.idleNs, r.spanNs, '#999') },
          {
            key: 'overlap',
            label: 'hidden behind compute',
            numeric: true,
            value: (r) => r.overlap ?? -1,
            show: (r) => (r.overlap === null ? <span className="hint">—</span> : <Bar share={r.overlap} />),
          },
        ]}
      />
      <SortTable
        testId="stats-collectives"
        initial="total"
        rows={[
          ...c.collectives.map((k) => ({ kind: k.collective, count: k.count, totalNs: k.totalNs })),
          ...(c.peerCopies.count > 0 ? [{ kind: 'peer copies', count: c.peerCopies.count, totalNs: c.peerCopies.totalNs }] : []),
        ]}
        cols={[
          { key: 'kind', label: 'collective', value: (r) => r.kind },
          { key: 'count', label: 'count', numeric: true, value: (r) => r.count },
          { key: 'total', label: 'total', numeric: true, value: (r) => r.totalNs, show: (r) => formatDuration(r.totalNs) },
        ]}
      />
    </section>
  );
}

/**
 * Stragglers (issue 13; `report`'s Stragglers section): the NCCL collective
 * instances matched across ranks; per rank how often it arrived last, the
 * wait that caused the others and its own wait, how late it arrives; the
 * straggler, when one is named.
 */
function Stragglers(props: { stragglers: StragglerStats; devName: (id: number | null) => string }) {
  const s = props.stragglers;
  const maxWait = s.ranks.reduce((m, r) => Math.max(m, r.causedWaitNs, r.waitedNs), 1);
  const wait = (ns: number) => <Bar share={ns / maxWait} text={formatDuration(ns)} color="#c0504d" />;
  const g = s.gaps;
  const skipped = g.partialInstances + g.unsynchronizedInstances;
  return (
    <section>
      <h2>
        Stragglers{' '}
        <span className="h-note">
          {s.instances.toLocaleString('en-US')} NCCL collective instances matched across {s.ranks.length} ranks
          {skipped > 0 ? ` (${skipped.toLocaleString('en-US')} more not matched on every rank)` : ''}; wait: time spent in a collective before its last rank
          arrived
        </span>
      </h2>
      <p className="hint" data-testid="stats-straggler">
        {s.straggler
          ? `Straggler: ${participantName(s.straggler)}, last at ${s.straggler.lastCount} of ${s.straggler.instances}; the others waited ${formatDuration(s.straggler.causedWaitNs)} for it.`
          : 'No straggler: no rank arrives last more often than chance has it, with a wait that matters.'}
      </p>
      <SortTable
        testId="stats-stragglers"
        initial="caused"
        rows={s.ranks}
        cols={[
          {
            key: 'rank',
            label: 'rank',
            value: (r) => r.rank ?? -1,
            show: (r) => (r.rank === null ? '—' : `${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''}`),
          },
          { key: 'host', label: 'host', value: (r) => r.host ?? '' },
          { key: 'pid', label: 'pid', numeric: true, value: (r) => r.pid },
          { key: 'device', label: 'device', value: (r) => r.deviceId, show: (r) => props.devName(r.deviceId) },
          {
            key: 'last',
            label: 'last',
            numeric: true,
            value: (r) => r.lastCount,
            show: (r) => <Bar share={r.instances > 0 ? r.lastCount / r.instances : 0} text={`${r.lastCount} of ${r.instances}`} />,
          },
          { key: 'caused', label: 'wait caused', numeric: true, value: (r) => r.causedWaitNs, show: (r) => wait(r.causedWaitNs) },
          { key: 'waited', label: 'waited', numeric: true, value: (r) => r.waitedNs, show: (r) => wait(r.waitedNs) },
          { key: 'late', label: 'mean late', numeric: true, value: (r) => r.meanLateNs, show: (r) => formatDuration(r.meanLateNs) },
          {
            key: 'skew',
            label: 'skew when last',
            numeric: true,
            value: (r) => r.meanSkewWhenLastNs ?? -1,
            show: (r) =>
              r.meanSkewWhenLastNs === null ? (
                <span className="hint">—</span>
              ) : (
                `${formatDuration(r.meanSkewWhenLastNs)} (max ${formatDuration(r.maxSkewWhenLastNs!)})`
              ),
          },
        ]}
      />
    </section>
  );
}

export function StatsView(props: {
  summary: RecordingSummary;
  /** A recording being written: ask again when this changes (app/use-live.ts, at most every 5 s). */
  refresh?: number;
  scope: Scope;
  onScope: (s: Scope) => void;
  ranges: RangeName[] | undefined;
  selection: Scope | null;
  iterations: IterationTrack | null | undefined;
  onShowStream: (rowId: string) => void;
}) {
  const { summary, scope } = props;
  const { shown, pending, error, waiting } = useScopedAnswer('stats', summary.recordingId, scope, true, props.refresh);
  const progress = progressText(waiting, scope);
  const head = (
    <div className="stats-scope" data-testid="stats-scope" data-scope={shown ? scopeKey(shown.scope) : ''} data-pending={pending ? 'true' : 'false'}>
      <ScopePicker scope={scope} onScope={props.onScope} ranges={props.ranges} selection={props.selection} />
      {shown && (
        <span className="scope-label" data-testid="stats-scope-label">
          {shown.info.label}
          {pending ? ` · updating…${progress ? ` ${progress}` : ''}` : ''}
        </span>
      )}
      {error && <span className="hint scope-error">{error}</span>}
    </div>
  );
  const iterations = props.iterations && <Iterations track={props.iterations} scope={scope} onScope={props.onScope} />;
  if (!shown)
    return (
      <div className="stats-view">
        {head}
        {!error && (
          <p className="hint" data-testid="stats-progress">
            Loading statistics…{progress ? ` ${progress}` : ''}
          </p>
        )}
        {iterations}
      </div>
    );
  const stats = shown.value;
  const streamOf = (streamId: number) => summary.streams.find((s) => s.id === streamId);
  const label = (streamId: number) => String(streamOf(streamId)?.cuptiStreamId ?? streamId);
  const devName = (id: number | null) => gpuName(summary.devices, id);
  // The names beyond the listed ones (the 1,000 with the most time) count too.
  const leftOut = stats.kernelsLeftOut;
  const launches = stats.kernels.reduce((n, k) => n + k.count, 0) + (leftOut?.count ?? 0);
  const distinct = stats.kernels.length + (leftOut?.names ?? 0);
  const maxStreams = (deviceId: number) => Math.max(2, summary.streams.filter((s) => s.deviceId === deviceId).length);
  const maxKernelNs = stats.kernels.reduce((m, k) => Math.max(m, k.totalNs), 1);
  const maxCopyNs = stats.copies.reduce((m, c) => Math.max(m, c.totalNs), 1);
  // As `streamscope report` names the kernels of the same scope: short names where they tell them apart.
  const kernelName = readableNames(stats.kernels);
  return (
    <div className={`stats-view${pending ? ' stale' : ''}`} data-testid="stats-view">
      {head}
      <section>
        <h2>
          Overlap factors <span className="h-note">sum of busy time ÷ union of busy time, per device: 1.00× = nothing ran concurrently</span>
        </h2>
        <SortTable
          testId="stats-overlap"
          initial="all"
          rows={stats.overlapFactors}
          cols={[
            { key: 'device', label: 'device', value: (r) => r.deviceId, show: (r) => devName(r.deviceId) },
            {
              key: 'compute',
              label: 'compute',
              numeric: true,
              value: (r) => r.compute,
              show: (r) => <Factor value={r.compute} max={maxStreams(r.deviceId)} />,
            },
            { key: 'h2d', label: 'HtoD', numeric: true, value: (r) => r.h2d, show: (r) => <Factor value={r.h2d} max={maxStreams(r.deviceId)} /> },
            { key: 'd2h', label: 'DtoH', numeric: true, value: (r) => r.d2h, show: (r) => <Factor value={r.d2h} max={maxStreams(r.deviceId)} /> },
            { key: 'all', label: 'all work', numeric: true, value: (r) => r.all, show: (r) => <Factor value={r.all} max={maxStreams(r.deviceId)} /> },
          ]}
        />
      </section>
      {stats.communication?.present && <Communication communication={stats.communication} devName={devName} />}
      {stats.stragglers?.present && <Stragglers stragglers={stats.stragglers} devName={devName} />}
      <section>
        <h2>
          Kernels{' '}
          <span className="h-note">
            {distinct.toLocaleString('en-US')} distinct, {launches.toLocaleString('en-US')} launches
            {leftOut && (
              <span data-testid="stats-kernels-left-out">
                {' '}
                · the {stats.kernels.length.toLocaleString('en-US')} with the most time listed; the other {leftOut.names.toLocaleString('en-US')}:{' '}
                {leftOut.count.toLocaleString('en-US')} launches, {formatDuration(leftOut.totalNs)} ({(leftOut.share * 100).toFixed(1)}% of kernel time)
              </span>
            )}
          </span>
        </h2>
        <SortTable
          testId="stats-kernels"
          initial="total"
          rows={stats.kernels}
          cols={[
            {
              key: 'name',
              label: 'name',
              value: (r) => kernelName.get(r.name)!,
              title: (r) => fullName(r),
              show: (r) => (
                // Wider than a .kname elsewhere: what tells two instances of one template apart is in their arguments.
                <span className="kname" data-testid="stats-kernel-name" style={{ maxWidth: '96ch' }}>
                  {kernelName.get(r.name)}
                </span>
              ),
            },
            { key: 'count', label: 'count', numeric: true, value: (r) => r.count },
            {
              key: 'total',
              label: 'total',
              numeric: true,
              value: (r) => r.totalNs,
              show: (r) => <Bar share={r.totalNs / maxKernelNs} text={formatDuration(r.totalNs)} color={KIND_COLORS.kernel} />,
            },
            { key: 'mean', label: 'mean', numeric: true, value: (r) => r.meanNs, show: (r) => formatDuration(r.meanNs) },
            { key: 'min', label: 'min', numeric: true, value: (r) => r.minNs, show: (r) => formatDuration(r.minNs) },
            { key: 'max', label: 'max', numeric: true, value: (r) => r.maxNs, show: (r) => formatDuration(r.maxNs) },
            { key: 'share', label: 'share of kernel time', numeric: true, value: (r) => r.share, show: (r) => <Bar share={r.share} /> },
          ]}
        />
      </section>
      <section>
        <h2>Copies and memsets</h2>
        <SortTable
          testId="stats-copies"
          initial="time"
          rows={stats.copies}
          cols={[
            { key: 'dir', label: 'direction', value: (r) => r.direction },
            { key: 'src', label: 'from', value: (r) => r.srcKind },
            { key: 'dst', label: 'to', value: (r) => r.dstKind },
            { key: 'count', label: 'count', numeric: true, value: (r) => r.count },
            {
              key: 'bytes',
              label: 'bytes',
              numeric: true,
              value: (r) => r.bytes,
              show: (r) => formatBytes(r.bytes),
              title: (r) => `${r.bytes.toLocaleString('en-US')} bytes`,
            },
            {
              key: 'time',
              label: 'time',
              numeric: true,
              value: (r) => r.totalNs,
              show: (r) => <Bar share={r.totalNs / maxCopyNs} text={formatDuration(r.totalNs)} color={KIND_COLORS['memcpy-h2d']} />,
            },
            { key: 'gbps', label: 'GB/s', numeric: true, value: (r) => r.gbPerS, show: (r) => r.gbPerS.toFixed(1) },
          ]}
        />
      </section>
      <section>
        <h2>
          Streams <span className="h-note">click a stream to show it on the timeline</span>
        </h2>
        <SortTable
          testId="stats-streams"
          initial="busy"
          rows={stats.streams}
          cols={[
            {
              key: 'stream',
              label: 'stream',
              numeric: true,
              value: (r) => Number(label(r.streamId)),
              show: (r) => (
                <button className="linkish" onClick={() => props.onShowStream(r.rowId)}>
                  {label(r.streamId)}
                </button>
              ),
            },
            { key: 'kind', label: 'kind', value: (r) => streamOf(r.streamId)?.kind ?? '' },
            { key: 'prio', label: 'priority', numeric: true, value: (r) => streamOf(r.streamId)?.priority ?? 0 },
            { key: 'device', label: 'device', value: (r) => r.deviceId ?? -1, show: (r) => devName(r.deviceId) },
            { key: 'kernels', label: 'kernels', numeric: true, value: (r) => r.kernels },
            { key: 'copies', label: 'copies', numeric: true, value: (r) => r.copies },
            { key: 'busy', label: 'busy', numeric: true, value: (r) => r.busyNs, show: (r) => formatDuration(r.busyNs) },
            { key: 'util', label: 'utilization of the device span', numeric: true, value: (r) => r.utilization, show: (r) => <Bar share={r.utilization} /> },
          ]}
        />
      </section>
      {stats.overlap.map((m) => {
        const max = m.overlapNs.reduce((most, row, i) => row.reduce((mm, ns, j) => (i === j ? mm : Math.max(mm, ns)), most), 1);
        const dev = summary.devices.find((d) => d.id === m.deviceId);
        return (
          <section key={m.deviceId}>
            <h2>
              Stream-pair overlap · {dev ? deviceTitle(dev) : devName(m.deviceId)}{' '}
              <span className="h-note">
                time both streams had an operation running; diagonal: the stream's busy time
                {m.streamsLeftOut > 0 && ` · the ${m.streamIds.length} busiest streams; ${m.streamsLeftOut.toLocaleString('en-US')} others not shown`}
              </span>
            </h2>
            <table className="matrix" data-testid="stats-matrix">
              <thead>
                <tr>
                  <th className="corner">stream</th>
                  {m.streamIds.map((s) => (
                    <th key={s}>{label(s)}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {m.streamIds.map((a, i) => (
                  <tr key={a}>
                    <th>{label(a)}</th>
                    {m.streamIds.map((b, j) => {
                      const v = m.overlapNs[i]![j]!;
                      const t = i === j ? 0 : v / max;
                      return (
                        <td
                          key={b}
                          className={i === j ? 'diag' : ''}
                          title={`streams ${label(a)} × ${label(b)}: ${formatDuration(v)}`}
                          style={i === j ? undefined : { background: v ? interpolateBlues(0.08 + 0.8 * t) : '#fff', color: t > 0.55 ? '#fff' : '#223' }}
                        >
                          {v ? formatDuration(v) : '·'}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        );
      })}
      {iterations}
    </div>
  );
}

/**
 * The instances of the repeating NVTX range (api.iterations): GPU span,
 * work per GPU, worst finding, flags. Clicking an instance makes it the
 * scope of these statistics and of the findings.
 */
function Iterations(props: { track: IterationTrack; scope: Scope; onScope: (s: Scope) => void }) {
  const { track: t, scope } = props;
  const chosen = scope.kind === 'range' && scope.name === t.name ? (scope.instance ?? null) : null;
  const span = (r: IterationRow) => (r.gpuStartNs !== null && r.gpuEndNs !== null ? r.gpuEndNs - r.gpuStartNs : null);
  const maxSpan = t.rows.reduce((m, r) => Math.max(m, span(r) ?? 0), 1);
  return (
    <section>
      <h2>
        Iterations · '{t.name}'{' '}
        <span className="h-note">
          {t.rows.length} instances, median {formatDuration(t.medianNs)}; click an instance to analyse it alone
        </span>
      </h2>
      <SortTable
        testId="stats-iterations"
        initial="instance"
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
              ) : (
                '—'
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
