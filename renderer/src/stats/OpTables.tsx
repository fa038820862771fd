// The Stats tab's tables of operations on the scope: overlap factors per
// device, kernels (named as `streamscope report` names them; the names past
// the 1,000 with the most time summed), copies and memsets, streams (a
// click shows one on the timeline) and each device's stream-pair overlap
// matrix.
import { interpolateBlues } from 'd3';
import type { RecordingSummary, StatsResponse } from '../../../profiler/contract/api.ts';
import { fullName, readableNames } from '../../../profiler/contract/names.ts';
import { formatBytes, formatDuration } from '../../../profiler/contract/time.ts';
import { KIND_COLORS } from '../base/colors.ts';
import type { GpuNames } from '../../../profiler/contract/ranks.ts';
import { deviceTitle, gpuName, recordingGpuNames } from '../base/gpus.ts';
import { Bar, SortTable } from '../base/tables.tsx';

/** How the tables name the recording's streams and GPUs. */
export interface Names {
  summary: RecordingSummary;
  /** A stream's CUPTI id, as its label. */
  label: (streamId: number) => string;
  /** A GPU ("GPU 0"; in a job with the ranks that ran on it: base/gpus.ts). */
  devName: (id: number | null) => string;
  /** A GPU as one process used it: a row of one rank names that rank only (two ranks may share a GPU). */
  devOf: (id: number | null, pid: number) => string;
  gpus: GpuNames;
}

export function namesOf(summary: RecordingSummary): Names {
  const streamOf = (streamId: number) => summary.streams.find((s) => s.id === streamId);
  const gpus = recordingGpuNames(summary);
  return {
    summary,
    label: (streamId) => String(streamOf(streamId)?.cuptiStreamId ?? streamId),
    devName: (id) => (id === null || !gpus.byRank ? gpuName(summary.devices, id) : gpus.device(id)),
    devOf: (id, pid) => (id === null || !gpus.byRank ? gpuName(summary.devices, id) : gpus.ofProcess(id, pid)),
    gpus,
  };
}

/** Overlap factor: 1 = nothing ran concurrently; shown against the number of streams that could overlap. */
function Factor(props: { value: number; max: number }) {
  if (!Number.isFinite(props.value) || props.value === 0) return <span className="hint">—</span>;
  return <Bar share={(props.value - 1) / Math.max(1, props.max - 1)} text={`${props.value.toFixed(2)}×`} color="#6a9fd0" />;
}

export function OverlapFactors({ stats, names }: { stats: StatsResponse; names: Names }) {
  const { summary, devName } = names;
  const maxStreams = (deviceId: number) => Math.max(2, summary.streams.filter((s) => s.deviceId === deviceId).length);
  return (
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
  );
}

export function Kernels({ stats }: { stats: StatsResponse }) {
  // The names beyond the listed ones (the 1,000 with the most time) count too.
  const leftOut = stats.kernelsLeftOut;
  const launches = stats.kernels.reduce((n, k) => n + k.count, 0) + (leftOut?.count ?? 0);
  const distinct = stats.kernels.length + (leftOut?.names ?? 0);
  const maxKernelNs = stats.kernels.reduce((m, k) => Math.max(m, k.totalNs), 1);
  // As `streamscope report` names the kernels of the same scope: short names where they tell them apart.
  const kernelName = readableNames(stats.kernels);
  return (
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
  );
}

export function Copies({ stats }: { stats: StatsResponse }) {
  const maxCopyNs = stats.copies.reduce((m, c) => Math.max(m, c.totalNs), 1);
  return (
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
  );
}

export function Streams({ stats, names, onShowStream }: { stats: StatsResponse; names: Names; onShowStream: (rowId: string) => void }) {
  const { summary, label, devOf } = names;
  const streamOf = (streamId: number) => summary.streams.find((s) => s.id === streamId);
  return (
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
              <button className="linkish" onClick={() => onShowStream(r.rowId)}>
                {label(r.streamId)}
              </button>
            ),
          },
          { key: 'kind', label: 'kind', value: (r) => streamOf(r.streamId)?.kind ?? '' },
          { key: 'prio', label: 'priority', numeric: true, value: (r) => streamOf(r.streamId)?.priority ?? 0 },
          { key: 'device', label: 'device', value: (r) => r.deviceId ?? -1, show: (r) => devOf(r.deviceId, streamOf(r.streamId)?.pid ?? -1) },
          { key: 'kernels', label: 'kernels', numeric: true, value: (r) => r.kernels },
          { key: 'copies', label: 'copies', numeric: true, value: (r) => r.copies },
          { key: 'busy', label: 'busy', numeric: true, value: (r) => r.busyNs, show: (r) => formatDuration(r.busyNs) },
          { key: 'util', label: 'utilization of the device span', numeric: true, value: (r) => r.utilization, show: (r) => <Bar share={r.utilization} /> },
        ]}
      />
    </section>
  );
}

/** Per device, how long each pair of its streams both had an operation running (the diagonal: a stream's busy time). */
export function StreamPairOverlap({ m, names }: { m: StatsResponse['overlap'][number]; names: Names }) {
  const { summary, label, devName } = names;
  const max = m.overlapNs.reduce((most, row, i) => row.reduce((mm, ns, j) => (i === j ? mm : Math.max(mm, ns)), most), 1);
  const dev = summary.devices.find((d) => d.id === m.deviceId);
  return (
    <section>
      <h2>
        Stream-pair overlap · {dev ? deviceTitle(dev, names.gpus) : devName(m.deviceId)}{' '}
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
}
