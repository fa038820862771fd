// The diff summary beside the compared timelines: what changed from the base
// recording to another one (api.compare, the summary `streamscope diff`
// prints). Every delta is coloured by whether it is an improvement — lower
// is better for times, higher for overlap factors and throughput — and the
// tables sort by any column; kernel time deltas get a diverging bar, which
// shows at a glance which kernels the change made faster or slower. A
// multi-rank diff adds each rank against the same rank (paired by rank, not
// pid) and the collectives. Findings are matched one by one by what they are
// about (their GPU, process, calls or copies): a changed one shows its
// subjects on both sides. A limit (the copy engines or SMs were full) is
// listed apart, in no colour: the program did not cause it, so a new one is
// no regression.
import type { DiffSummary } from '../../../profiler/contract/api.ts';
import type { Delta, FindingDiff, FindingSubject, RankDiff } from '../../../profiler/contract/diff.ts';
import { fullName, readableNames } from '../../../profiler/contract/names.ts';
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

const share = (v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(0)}%`);
/** A share's change in percentage points: a relative change of a percentage reads wrongly. */
const points = (d: Delta) => (d.delta === null ? null : `${d.delta > 0 ? '+' : ''}${(d.delta * 100).toFixed(0)} pt`);
const relative = (d: Delta) => (d.relative === null ? null : pct(d.relative));

/** "a → b  (±x%)", coloured (`better` null: in no colour); `change` says how the change itself reads (default: relative). */
function Change(props: { d: Delta; better: Better | null; format: (v: number | null) => string; change?: (d: Delta) => string | null; testId?: string }) {
  const { d, better, format } = props;
  const change = (props.change ?? relative)(d);
  return (
    <span className={`chg ${better === null ? '' : verdict(d, better)}`} data-testid={props.testId}>
      {format(d.a)} → {format(d.b)}
      {change !== null && <span className="chg-rel"> {change}</span>}
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

/** The columns of the per-rank table: one rank per row, A → B in each cell. */
const RANK_VALUES: [key: string, label: string, pick: (r: RankDiff) => Delta, better: Better, format: (v: number | null) => string][] = [
  ['exposed', 'exposed', (r) => r.exposedNs, 'lower', dur],
  ['comm', 'communication', (r) => r.communicationNs, 'lower', dur],
  ['compute', 'compute', (r) => r.computeNs, 'lower', dur],
  ['span', 'GPU span', (r) => r.gpuSpanNs, 'lower', dur],
];

/** Which process a rank is on each side, and its streams as paired: the rank cell's tooltip. */
function rankTitle(r: RankDiff): string {
  const side = (x: RankDiff['a']) => (x ? `pid ${x.pid}${x.host ? ` on ${x.host}` : ''}, GPU ${x.gpus.join(', ')}` : 'not in this recording');
  const streams = r.streams.map((s) => `${s.a?.cuptiStreamId ?? '–'} → ${s.b?.cuptiStreamId ?? '–'} (${s.role})`);
  return `A: ${side(r.a)}\nB: ${side(r.b)}\nstreams A → B: ${streams.join(', ')}`;
}

const rankCols: Col<RankDiff>[] = [
  {
    key: 'rank',
    label: 'rank',
    // Sorted descending first: ranked rows by rank, pid-order rows after them (in their order).
    value: (r) => (r.rank === null ? -Number.MAX_SAFE_INTEGER : -r.rank),
    title: rankTitle,
    show: (r) => (
      <span data-testid="diff-rank" data-rank={r.rank ?? ''} data-pid-a={r.a?.pid ?? ''} data-pid-b={r.b?.pid ?? ''}>
        {r.label}
        {(!r.a || !r.b) && <span className="hint"> only in {r.a ? 'A' : 'B'}</span>}
      </span>
    ),
  },
  // The overlap first: what a change to a job's communication is for; the panel may scroll the rest.
  {
    key: 'overlap',
    label: 'overlap',
    numeric: true,
    value: (r) => r.overlap.delta ?? 0,
    show: (r) => <Change d={r.overlap} better="higher" format={share} change={points} testId={`diff-rank-overlap-${r.label}`} />,
  },
  ...RANK_VALUES.map(([key, label, pick, better, format]): Col<RankDiff> => ({
    key,
    label,
    numeric: true,
    value: (r) => pick(r).delta ?? 0,
    show: (r) => <Change d={pick(r)} better={better} format={format} />,
  })),
];

const collectiveCols: Col<DiffSummary['collectives'][number]>[] = [
  { key: 'collective', label: 'collective', value: (c) => c.collective },
  { key: 'count', label: 'count', numeric: true, value: (c) => c.count.b ?? 0, show: (c) => <Change d={c.count} better="lower" format={count} /> },
  { key: 'total', label: 'total', numeric: true, value: (c) => c.totalNs.b ?? 0, show: (c) => <Change d={c.totalNs} better="lower" format={dur} /> },
];

/** "cudaStreamSynchronize ×78, cudaDeviceSynchronize ×1" ("×1000+": the evidence list was cut at its limit). */
const subjectText = (xs: FindingSubject[] | null) =>
  xs === null || xs.length === 0 ? 'none' : xs.map((x) => `${x.name} ×${x.count.toLocaleString('en-US')}${x.atLeast ? '+' : ''}`).join(', ');

/** What a finding is about on each side: "A → B" where it changed or is on one side only, once where unchanged; null for kinds without subjects. */
function subjectChange(f: FindingDiff): string | null {
  if (f.subjectKind === null) return null;
  return f.status === 'unchanged' ? subjectText(f.subjectsA) : `${subjectText(f.subjectsA)} → ${subjectText(f.subjectsB)}`;
}

/** Changed findings between fixed (green) and new (red): amber, without a rule of the shared stylesheet. */
const CHANGED_STYLE = { borderLeftColor: '#b7791f', background: '#fdf8ee' };

/** Where a limit row's finding is, said in place of fixed / new / changed. */
const LIMIT_WHERE: Record<FindingDiff['status'], string> = { fixed: 'only in A', new: 'only in B', changed: 'in both', unchanged: 'in both' };

/** A finding's cost on each side, '–' (null) on a side it is not on, rather than 0. */
const findingCost = (f: FindingDiff): Delta => ({ ...f.costNs, a: f.titleA === null ? null : f.costNs.a, b: f.titleB === null ? null : f.costNs.b });

/** "paired by rank · rank 3 only in A": how the rows came about. */
function rankNote(ranks: RankDiff[]): string {
  const byRank = ranks.some((r) => r.pairedBy === 'rank');
  const byPid = ranks.some((r) => r.pairedBy === 'pid-order');
  const how = byRank && byPid ? 'paired by rank, then pid order' : byRank ? 'paired by rank' : 'paired in pid order (no ranks recorded)';
  const only = (side: 'A' | 'B') =>
    ranks
      .filter((r) => (side === 'A' ? !r.b : !r.a))
      .map((r) => r.label)
      .join(', ');
  return [how, only('A') && `${only('A')} only in A`, only('B') && `${only('B')} only in B`].filter(Boolean).join(' · ');
}

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
  return (
    <div className="diff-panel" data-testid="diff-panel">
      <WhatChanged diff={diff} />
      <PerDevice diff={diff} />
      {diff.ranks && <PerRank ranks={diff.ranks} />}
      {diff.collectives.length > 0 && (
        <div className="panel">
          <h2>
            Collectives <span className="h-note">NCCL kernels, every rank</span>
          </h2>
          <SortTable rows={diff.collectives} cols={collectiveCols} testId="diff-collectives" initial="total" />
        </div>
      )}
      <Findings findings={diff.findings} />
      <div className="panel">
        <h2>
          Kernels <span className="h-note">matched by name; bar: Δ total time, green faster</span>
        </h2>
        <SortTable rows={diff.kernels} cols={kernelCols(diff)} testId="diff-kernels" initial="delta" empty="No kernels in either recording." />
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

/** The two files, and the GPU span and wall time of each. */
function WhatChanged({ diff }: { diff: DiffSummary }) {
  return (
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
  );
}

/** Busy time and overlap factors, one GPU per column (DEVICE_ROWS). */
function PerDevice({ diff }: { diff: DiffSummary }) {
  return (
    <div className="panel">
      <h2>Per device</h2>
      <p className="hint">Overlap = busy time summed over streams ÷ busy union: higher means more ran at once.</p>
      <div className="diff-scroll">
        <table className="stats diff-devices" data-testid="diff-devices">
          <thead>
            <tr>
              <th />
              {diff.devices.map((d) => (
                <th key={d.index} className="num" title={d.name ?? ''}>
                  {d.rank && <span className="hint">{d.rank} · </span>}GPU {d.gpu}
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
    </div>
  );
}

/** A multi-rank diff: each rank against the same rank of the other recording (rankCols). */
function PerRank({ ranks }: { ranks: RankDiff[] }) {
  return (
    <div className="panel">
      <h2>
        Per rank <span className="h-note">{rankNote(ranks)}</span>
      </h2>
      <p className="hint">
        Times summed over the rank&rsquo;s GPUs; exposed = communication while no compute ran; overlap = the share of communication hidden behind compute. Hover
        a rank for its processes and streams, paired within it.
      </p>
      <div className="diff-scroll diff-ranks">
        <SortTable rows={ranks} cols={rankCols} testId="diff-ranks" initial="rank" />
      </div>
    </div>
  );
}

/** The findings matched one by one: fixed, new, changed, unchanged, then the limits apart (in no colour). */
function Findings({ findings }: { findings: FindingDiff[] }) {
  const causes = findings.filter((f) => !f.limit);
  const fixed = causes.filter((f) => f.status === 'fixed');
  const added = causes.filter((f) => f.status === 'new');
  const changed = causes.filter((f) => f.status === 'changed');
  const same = causes.filter((f) => f.status === 'unchanged');
  const limits = findings.filter((f) => f.limit);
  return (
    <div className="panel">
      <h2>
        Findings{' '}
        <span className="count">
          {fixed.length} fixed · {added.length} new · {changed.length} changed · {same.length} unchanged
          {limits.length > 0 && ` · ${limits.length} ${limits.length === 1 ? 'limit' : 'limits'}`}
        </span>
      </h2>
      <ul className="diff-findings" data-testid="diff-findings">
        {[...fixed, ...added, ...changed, ...same, ...limits].map((f, i) => (
          <FindingRow key={i} f={f} />
        ))}
        {findings.length === 0 && <li className="hint">No findings in either recording.</li>}
      </ul>
    </div>
  );
}

function FindingRow({ f }: { f: FindingDiff }) {
  const subjects = subjectChange(f);
  return (
    <li
      // A limit has no rule of its own: .df's neutral border and grey status.
      className={f.limit ? 'df df-limit' : `df df-${f.status}`}
      style={!f.limit && f.status === 'changed' ? CHANGED_STYLE : undefined}
      data-testid={f.limit ? 'finding-limit' : `finding-${f.status}`}
      data-status={f.status}
      data-kind={f.kind}
      title={[f.titleA && `A: ${f.titleA}`, f.titleB && `B: ${f.titleB}`, f.limit && 'A hardware limit the run met, not something the program did wrong']
        .filter(Boolean)
        .join('\n')}
    >
      <span className="df-status">{f.limit ? 'limit' : f.status}</span>
      <span className="df-title">
        {f.titleB ?? f.titleA}
        {f.about && <span className="hint"> · {f.about}</span>}
        {f.limit && <span className="hint"> · {LIMIT_WHERE[f.status]}</span>}
        {subjects && (
          <span className="hint" data-testid="finding-subjects">
            <br />
            {subjects}
          </span>
        )}
      </span>
      <span className="df-cost" data-testid="finding-cost">
        <Change d={findingCost(f)} better={f.limit ? null : 'lower'} format={dur} />
      </span>
    </li>
  );
}

/** The kernels' columns: named as `streamscope diff` names them (short names where they tell the kernels apart), Δ total as a bar against the largest. */
function kernelCols(diff: DiffSummary): Col<DiffSummary['kernels'][number]>[] {
  const maxKernelDelta = diff.kernels.reduce((m, k) => Math.max(m, Math.abs(k.totalNs.delta ?? 0)), 0);
  const kernelName = readableNames(diff.kernels);
  return [
    {
      key: 'name',
      label: 'kernel',
      value: (k) => kernelName.get(k.name)!,
      show: (k) => (
        <span className="kname" data-testid="diff-kernel-name" title={fullName(k)}>
          {kernelName.get(k.name)}
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
}

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
