// The diff summary beside the compared timelines: what changed from the base
// recording to another one (api.compare, the summary `streamscope diff`
// prints). Every delta is coloured by whether it is an improvement — lower
// is better for times, higher for overlap factors and throughput — and the
// tables sort by any column; kernel time deltas get a diverging bar, which
// shows at a glance which kernels the change made faster or slower.
import type { DiffSummary } from '../../../profiler/contract/api.ts';
import type { Delta } from '../../../profiler/contract/diff.ts';
import { fullName, shortName } from '../../../profiler/contract/names.ts';
import { SortTable, type Col } from '../base/tables.tsx';
import { formatBytes, formatDuration } from '../../../profiler/contract/time.ts';

type Better = 'lower' | 'higher';

/** Relative changes smaller than this are noise between two runs, not a difference. */
const NOISE = 0.02;

/** 'good', 'bad' or '' for a delta, given which direction is an improvement. */
export function verdict(d: Delta, better: Better): 'good' | 'bad' | '' {
  if (d.delta === null || d.delta === 0) return '';
  if (d.relative !== null && Math.abs(d.relative) < NOISE) return '';
  const improved = better === 'lower' ? d.delta < 0 : d.delta > 0;
  return improved ? 'good' : 'bad';
}

const pct = (r: number | null) => (r === null ? '' : `${r > 0 ? '+' : ''}${(r * 100).toFixed(Math.abs(r) < 0.1 ? 1 : 0)}%`);
const factor = (v: number | null) => (v === null ? '–' : `${v.toFixed(2)}×`);
const gbps = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)} GB/s`);
const dur = (v: number | null) => (v === null ? '–' : formatDuration(v));
const count = (v: number | null) => (v === null ? '–' : v.toLocaleString('en-US'));

/** "a → b  (±x%)", coloured. */
function Change(props: { d: Delta; better: Better; format: (v: number | null) => string; testId?: string }) {
  const { d, better, format } = props;
  return (
    <span className={`chg ${verdict(d, better)}`} data-testid={props.testId}>
      {format(d.a)} → {format(d.b)}
      {d.relative !== null && <span className="chg-rel"> {pct(d.relative)}</span>}
    </span>
  );
}

/** A diverging bar: the share of the largest change, right when slower, left when faster; red or green unless within noise. */
function DeltaBar(props: { d: Delta; max: number }) {
  const delta = props.d.delta ?? 0;
  const share = props.max > 0 ? Math.min(1, Math.abs(delta) / props.max) : 0;
  const slower = delta > 0;
  const tone = verdict(props.d, 'lower') || 'same';
  return (
    <span className="dbar" title={`${delta > 0 ? '+' : ''}${formatDuration(delta)}`}>
      <span className={`dbar-fill ${tone}`} style={{ width: `${(share * 50).toFixed(1)}%`, [slower ? 'left' : 'right']: '50%' }} />
      <span className="dbar-axis" />
    </span>
  );
}

/** The rows of the per-device table: one metric per row, one GPU per column (devices matched by position). */
const DEVICE_ROWS: [string, (d: DiffSummary['devices'][number]) => Delta, Better, (v: number | null) => string][] = [
  ['busy (union)', (d) => d.busyNs, 'lower', dur],
  ['overlap, all work', (d) => d.overlap.all, 'higher', factor],
  ['overlap, compute', (d) => d.overlap.compute, 'higher', factor],
  ['overlap, HtoD', (d) => d.overlap.htod, 'higher', factor],
  ['overlap, DtoH', (d) => d.overlap.dtoh, 'higher', factor],
];

const fileName = (p: string) => p.split(/[\\/]/).pop() ?? p;

export function DiffPanel(props: { diff: DiffSummary | null; error: string | null }) {
  const { diff } = props;
  if (props.error)
    return (
      <div className="panel diff-panel">
        <p className="hint">{props.error}</p>
      </div>
    );
  if (!diff)
    return (
      <div className="panel diff-panel">
        <p className="hint">Comparing…</p>
      </div>
    );
  const fixed = diff.findings.filter((f) => f.status === 'fixed');
  const added = diff.findings.filter((f) => f.status === 'new');
  const same = diff.findings.filter((f) => f.status === 'unchanged');
  const maxKernelDelta = Math.max(0, ...diff.kernels.map((k) => Math.abs(k.totalNs.delta ?? 0)));

  const kernelCols: Col<DiffSummary['kernels'][number]>[] = [
    {
      key: 'name',
      label: 'kernel',
      value: (k) => shortName(fullName(k)),
      show: (k) => (
        <span className="kname" title={fullName(k)}>
          {shortName(fullName(k))}
        </span>
      ),
    },
    {
      key: 'count',
      label: 'count',
      numeric: true,
      value: (k) => k.count.b ?? k.count.a ?? 0,
      show: (k) => <Change d={k.count} better="lower" format={count} />,
    },
    { key: 'total', label: 'total', numeric: true, value: (k) => k.totalNs.b ?? 0, show: (k) => <Change d={k.totalNs} better="lower" format={dur} /> },
    {
      key: 'delta',
      label: 'Δ total',
      numeric: true,
      value: (k) => k.totalNs.delta ?? 0,
      show: (k) =>
        k.totalNs.delta === null ? (
          <span className="hint">{k.totalNs.a === null ? 'only in B' : 'only in A'}</span>
        ) : (
          <DeltaBar d={k.totalNs} max={maxKernelDelta} />
        ),
    },
    { key: 'mean', label: 'mean', numeric: true, value: (k) => k.meanNs.b ?? 0, show: (k) => <Change d={k.meanNs} better="lower" format={dur} /> },
  ];
  const copyCols: Col<DiffSummary['copies'][number]>[] = [
    {
      key: 'dir',
      label: 'direction',
      value: (c) => `${c.direction} ${c.srcKind}→${c.dstKind}`,
      show: (c) => (
        <>
          {c.direction}{' '}
          <span className="hint">
            {c.srcKind} → {c.dstKind}
          </span>
        </>
      ),
    },
    {
      key: 'bytes',
      label: 'bytes',
      numeric: true,
      value: (c) => c.bytes.b ?? 0,
      show: (c) => <Change d={c.bytes} better="lower" format={(v) => (v === null ? '–' : formatBytes(v))} />,
    },
    { key: 'gbps', label: 'throughput', numeric: true, value: (c) => c.gbPerS.b ?? 0, show: (c) => <Change d={c.gbPerS} better="higher" format={gbps} /> },
  ];

  return (
    <div className="diff-panel" data-testid="diff-panel">
      <div className="panel">
        <h2>What changed</h2>
        <p className="diff-files">
          <b>A</b> {fileName(diff.a)} → <b>B</b> {fileName(diff.b)}
        </p>
        <table className="kv d-summary">
          <tbody>
            <tr>
              <th>GPU span</th>
              <td>
                <Change d={diff.gpuSpanNs} better="lower" format={dur} testId="diff-gpu-span" />
              </td>
            </tr>
            <tr>
              <th>Wall time</th>
              <td>
                <Change d={diff.durationNs} better="lower" format={dur} testId="diff-wall" />
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      <div className="panel">
        <h2>Per device</h2>
        <p className="hint">Overlap = busy time summed over streams ÷ busy union: higher means more ran at once.</p>
        <table className="stats diff-devices" data-testid="diff-devices">
          <thead>
            <tr>
              <th />
              {diff.devices.map((d) => (
                <th key={d.index} className="num" title={d.name ?? ''}>
                  GPU {d.gpu}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {DEVICE_ROWS.map(([label, pick, better, format]) => (
              <tr key={label}>
                <th>{label}</th>
                {diff.devices.map((d) => (
                  <td key={d.index} className="num">
                    <Change d={pick(d)} better={better} format={format} testId={label === 'overlap, all work' ? `diff-overlap-${d.index}` : undefined} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="panel">
        <h2>
          Findings{' '}
          <span className="count">
            {fixed.length} fixed · {added.length} new · {same.length} unchanged
          </span>
        </h2>
        <ul className="diff-findings" data-testid="diff-findings">
          {[...fixed, ...added, ...same].map((f, i) => (
            <li key={i} className={`df df-${f.status}`} data-testid={`finding-${f.status}`} data-kind={f.kind}>
              <span className="df-status">{f.status}</span>
              <span className="df-title">{f.titleB ?? f.titleA}</span>
              <span className="df-cost">
                <Change d={f.costNs} better="lower" format={dur} />
              </span>
            </li>
          ))}
          {diff.findings.length === 0 && <li className="hint">No findings in either recording.</li>}
        </ul>
      </div>
      <div className="panel">
        <h2>
          Kernels <span className="h-note">matched by name; bar: Δ total time, green faster</span>
        </h2>
        <SortTable rows={diff.kernels} cols={kernelCols} testId="diff-kernels" initial="delta" empty="No kernels in either recording." />
      </div>
      <div className="panel">
        <h2>
          Copies <span className="h-note">by direction and memory kind</span>
        </h2>
        <SortTable rows={diff.copies} cols={copyCols} testId="diff-copies" initial="gbps" empty="No copies in either recording." />
      </div>
    </div>
  );
}
