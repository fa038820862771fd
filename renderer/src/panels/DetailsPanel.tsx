// The selected operation: a readable summary on top (launch configuration,
// bytes and bandwidth, memory kinds, stream, device, timing), then every
// field of details() as stored (data-field cells hold the raw value), then
// the related API call or GPU operations (click to go there; a CUDA graph
// launch's operations share one call, and say their graph and node), and its
// dependencies (dependencies(): what it waited for and how long, what
// waited for it, its critical chain; click to go there).
import { memo } from 'react';
import type { Dependency, DependencyEnd, FieldValue, ItemDependencies, ItemDetails, ItemRef, RecordingSummary } from '../../../profiler/contract/api.ts';
import { KIND_COLORS, KIND_LABELS } from '../base/colors.ts';
import { deviceTitle, recordingGpuNames } from '../base/gpus.ts';
import { fullName, shortName } from '../../../profiler/contract/names.ts';
import { graphLaunchText, graphOpsText } from '../../../profiler/contract/graphs.ts';
import { formatTimestamp } from '../base/time.ts';
import { formatBytes, formatDuration } from '../../../profiler/contract/time.ts';
import { refKey } from '../base/item-ref.ts';

const num = (v: FieldValue | undefined) => (typeof v === 'number' ? v : null);

/** A summary row: label, value; a sentence (wrapped between words) carries the test id the end-to-end tests read it by. */
type SummaryRow = [string, string] | [string, string, { sentence: string }];

function summaryRows(d: ItemDetails, s: RecordingSummary): SummaryRow[] {
  const f = d.fields;
  const rows: SummaryRow[] = [];
  const dim = (p: string) => {
    const [x, y, z] = [num(f[`${p}_x`]), num(f[`${p}_y`]), num(f[`${p}_z`])];
    return x === null ? null : `(${x}, ${y ?? 1}, ${z ?? 1})`;
  };
  rows.push(['Duration', formatDuration(d.durationNs)]);
  rows.push(['Start', formatTimestamp(d.startNs)]);
  rows.push(['End', formatTimestamp(d.endNs)]);
  const grid = dim('grid');
  const block = dim('block');
  if (grid) rows.push(['Grid', grid]);
  if (block) rows.push(['Block', block]);
  if (grid && block) {
    const threads = ['x', 'y', 'z'].reduce((p, a) => p * (num(f[`grid_${a}`]) ?? 1) * (num(f[`block_${a}`]) ?? 1), 1);
    rows.push(['Threads', threads.toLocaleString('en-US')]);
  }
  const regs = num(f.registers_per_thread);
  if (regs !== null) rows.push(['Registers / thread', String(regs)]);
  const shStatic = num(f.static_shared_bytes) ?? num(f.static_shared_memory);
  const shDyn = num(f.dynamic_shared_bytes) ?? num(f.dynamic_shared_memory);
  if (shStatic !== null || shDyn !== null) rows.push(['Shared memory', `${formatBytes(shStatic ?? 0)} static + ${formatBytes(shDyn ?? 0)} dynamic`]);
  const bytes = num(f.bytes);
  if (bytes !== null) rows.push(['Bytes', `${formatBytes(bytes)} (${bytes.toLocaleString('en-US')})`]);
  if (f['GB/s'] !== undefined && f['GB/s'] !== null) rows.push(['Throughput', `${f['GB/s']} GB/s`]);
  if (typeof f.src === 'string' || typeof f.dst === 'string') rows.push(['Memory', `${f.src ?? '?'} → ${f.dst ?? '?'}`]);
  if (typeof f.stream === 'string') rows.push(['Stream', f.stream]);
  const dev = num(f.device_id);
  if (dev !== null) {
    const info = s.devices.find((x) => x.id === dev);
    rows.push(['Device', info ? deviceTitle(info, recordingGpuNames(s)) : String(dev)]);
  }
  const corr = num(f.correlation_id);
  if (corr !== null) rows.push(['Correlation id', String(corr)]);
  if (d.graph) {
    rows.push(['CUDA graph', graphLaunchText(d.graph), { sentence: 'details-graph' }]);
    const g = d.graph;
    if (g.position !== null) rows.push(['Place in launch', `${g.position} of ${g.kernels + g.memcpys + g.memsets}`]);
  }
  return rows;
}

/** What a dependency is, as the list says it. */
const DEPENDENCY_WORDS: Record<Dependency['kind'], string> = {
  launch: 'launch',
  stream: 'stream order',
  event: 'event wait',
  barrier: 'legacy-stream barrier',
  sync: 'synchronize',
};

function endName(e: DependencyEnd): string {
  return e.name === null ? KIND_LABELS[e.kind] : e.kind === 'kernel' ? shortName(e.name) : e.name;
}

/** One dependency, showing its other end (`end`): a button that goes there. */
function DependencyRow(props: { dep: Dependency; end: DependencyEnd; dir: string; onGo: (e: DependencyEnd) => void }) {
  const { dep, end } = props;
  const time =
    dep.waitNs === null
      ? DEPENDENCY_WORDS[dep.kind]
      : `${DEPENDENCY_WORDS[dep.kind]} · ${dep.kind === 'sync' ? 'blocked' : 'waited'} ${formatDuration(dep.waitNs)}`;
  const via = dep.record && dep.wait ? ` · ${dep.record.name ?? 'record'} → ${dep.wait.name ?? 'wait'}` : '';
  return (
    <button
      className="related dependency"
      data-testid="dependency"
      data-dir={props.dir}
      data-kind={dep.kind}
      data-ref={refKey(end.ref)}
      title={`${end.name ?? KIND_LABELS[end.kind]} · ${end.rowId}${via}`}
      onClick={() => props.onGo(end)}
    >
      <i className="swatch" style={{ background: KIND_COLORS[end.kind] }} />
      <span className="r-name">{endName(end)}</span>
      <span className="r-dur">{time}</span>
    </button>
  );
}

/** What the item waited for, what waited for it, the waits a call took part in, its critical chain. */
function Dependencies(props: { deps: ItemDependencies; onGo: (e: DependencyEnd) => void }) {
  const { deps, onGo } = props;
  if (deps.waitedFor.length + deps.waitedBy.length + deps.through.length + deps.chain.length === 0) return null;
  return (
    <div data-testid="dependencies">
      {deps.waitedFor.length > 0 && <h3>Waited for</h3>}
      {deps.waitedFor.map((d, i) => (
        <DependencyRow key={`f${i}`} dep={d} end={d.from} dir="for" onGo={onGo} />
      ))}
      {deps.waitedBy.length > 0 && <h3>Waited for it</h3>}
      {deps.waitedBy.map((d, i) => (
        <DependencyRow key={`b${i}`} dep={d} end={d.to} dir="by" onGo={onGo} />
      ))}
      {deps.through.length > 0 && <h3>Event waits it took part in</h3>}
      {deps.through.map((d, i) => (
        <DependencyRow key={`t${i}`} dep={d} end={d.to} dir="through" onGo={onGo} />
      ))}
      {deps.chain.length > 0 && (
        <h3 title="At each step the dependency that ended last, back to the host call that made this operation possible">
          Critical chain ({deps.chain.length} step{deps.chain.length === 1 ? '' : 's'}
          {deps.chainComplete ? '' : ', cut'})
        </h3>
      )}
      {deps.chain.map((d, i) => (
        <DependencyRow key={`c${i}`} dep={d} end={d.from} dir="chain" onGo={onGo} />
      ))}
    </div>
  );
}

// Memoised: the app re-renders on every view change while panning, and
// this panel does not depend on the view.
export const DetailsPanel = memo(function DetailsPanel(props: {
  details: ItemDetails | null;
  summary: RecordingSummary;
  loading: boolean;
  onGo: (ref: ItemRef, startNs: number, endNs: number) => void;
  /** The item's dependencies, when they have arrived (they come after the details). */
  dependencies?: ItemDependencies | null;
  onGoDependency?: (end: DependencyEnd) => void;
}) {
  const { details: d, summary } = props;
  return (
    <section className="panel" data-testid="details">
      <h2>Details</h2>
      {!d && (
        <p className="hint">
          {props.loading ? 'Loading…' : 'Click an operation on the timeline to see every stored field, its launch and the work it launched.'}
        </p>
      )}
      {d && (
        <>
          <div className="d-head">
            <i className="swatch" style={{ background: KIND_COLORS[d.kind] }} />
            <span className="d-kind">{KIND_LABELS[d.kind]}</span>
            <span className="d-dur">{formatDuration(d.durationNs)}</span>
          </div>
          {/* A kernel: its own name, then both full forms (demangled, as stored) where they say more. */}
          <div className="d-name" data-testid="details-name" title={fullName(d)}>
            {d.kind === 'kernel' ? shortName(fullName(d)) : d.name}
          </div>
          {d.kind === 'kernel' && d.demangledName !== null && (
            <div className="d-demangled" data-testid="details-demangled" title="Demangled name">
              {d.demangledName}
            </div>
          )}
          {d.kind === 'kernel' && shortName(fullName(d)) !== d.name && (
            <div className="d-mangled" data-testid="details-stored-name" title="Name as stored">
              {d.name}
            </div>
          )}
          <table className="kv d-summary">
            <tbody>
              {summaryRows(d, summary).map(([k, v, sentence]) => (
                <tr key={k} data-testid={sentence?.sentence} className={sentence ? 'sentence' : undefined}>
                  <th>{k}</th>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {d.related.length > 0 && (
            <>
              <h3>
                {d.ref.table !== 'api_calls'
                  ? 'Launched by'
                  : d.graph
                    ? `GPU work it launched (CUDA graph ${d.graph.graphId}: ${graphOpsText(d.graph)})`
                    : `GPU work it launched (${d.related.length})`}
              </h3>
              {d.related.map((r) => (
                <button
                  key={refKey(r.ref)}
                  className="related"
                  data-testid="related"
                  title={`${fullName(r)} · ${r.rowId}`}
                  onClick={() => props.onGo(r.ref, Math.min(r.startNs, d.startNs), Math.max(r.endNs, d.endNs))}
                >
                  <i className="swatch" style={{ background: KIND_COLORS[r.kind] }} />
                  <span className="r-name">{r.kind === 'kernel' ? shortName(fullName(r)) : r.name}</span>
                  <span className="r-dur">{formatDuration(r.endNs - r.startNs)}</span>
                </button>
              ))}
            </>
          )}
          {props.dependencies && refKey(props.dependencies.ref) === refKey(d.ref) && props.onGoDependency && (
            <Dependencies deps={props.dependencies} onGo={props.onGoDependency} />
          )}
          <h3>All fields</h3>
          <table className="kv d-fields" data-testid="details-fields">
            <tbody>
              {Object.entries({ name: d.name, ...d.fields }).map(([k, v]) => (
                <tr key={k}>
                  <th>{k}</th>
                  <td data-field={k}>{v === null ? '—' : String(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
});
