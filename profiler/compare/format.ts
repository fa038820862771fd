// `streamscope diff` as text: what changed, biggest first, signed.
import { readableNames } from '../contract/names.ts';
import { formatBytes, formatDuration } from '../contract/time.ts';
import { renderTable } from '../report/table.ts';
import type { Delta, DiffSummary } from '../contract/diff.ts';

const pct = (d: Delta) => (d.relative === null ? '' : `${d.relative >= 0 ? '+' : ''}${(d.relative * 100).toFixed(1)}%`);
const dur = (v: number | null) => (v === null ? '-' : formatDuration(v));
const signedDur = (d: Delta) => (d.delta === null ? '-' : `${d.delta >= 0 ? '+' : '−'}${formatDuration(Math.abs(d.delta))}`);
const fx = (v: number | null) => (v === null ? '-' : v.toFixed(2));

export function formatDiff(d: DiffSummary): string {
  const out: string[] = [`StreamScope diff\n  A  ${d.a}  (${d.scopeA})\n  B  ${d.b}  (${d.scopeB})`, ''];
  out.push(
    renderTable(
      ['', 'A', 'B', 'change', ''],
      [
        ['GPU span (first op → last op)', dur(d.gpuSpanNs.a), dur(d.gpuSpanNs.b), signedDur(d.gpuSpanNs), pct(d.gpuSpanNs)],
        ['process wall time', dur(d.durationNs.a), dur(d.durationNs.b), signedDur(d.durationNs), pct(d.durationNs)],
      ],
    ),
  );
  out.push('', 'Devices (busy = union of GPU work; overlap = sum of busy / union; 1.00 = nothing overlapped)');
  out.push(
    renderTable(
      ['GPU', 'busy A', 'busy B', 'change', 'overlap all A → B', 'compute', 'HtoD', 'DtoH'],
      d.devices.map((x) => [
        `${x.gpu}: ${x.name ?? '?'}`,
        dur(x.busyNs.a),
        dur(x.busyNs.b),
        `${signedDur(x.busyNs)} ${pct(x.busyNs)}`,
        `${fx(x.overlap.all.a)} → ${fx(x.overlap.all.b)}`,
        `${fx(x.overlap.compute.a)} → ${fx(x.overlap.compute.b)}`,
        `${fx(x.overlap.htod.a)} → ${fx(x.overlap.htod.b)}`,
        `${fx(x.overlap.dtoh.a)} → ${fx(x.overlap.dtoh.b)}`,
      ]),
    ),
  );
  out.push('', 'Findings');
  out.push(
    d.findings.length === 0
      ? '  none in either'
      : renderTable(
          ['status', 'kind', 'cost A', 'cost B', 'B'],
          d.findings.map((f) => [f.status.toUpperCase(), f.kind, dur(f.costNs.a), dur(f.costNs.b), f.titleB ?? f.titleA ?? '']),
        ),
  );
  out.push('', 'Kernels (matched by name; biggest change in total time first)');
  const kernelName = readableNames(d.kernels);
  out.push(
    renderTable(
      ['count A → B', 'total A', 'total B', 'change', 'mean A → B', 'name'],
      d.kernels.slice(0, 20).map((k) => {
        const name = kernelName.get(k.name)!;
        return [
          `${k.count.a} → ${k.count.b}`,
          dur(k.totalNs.a),
          dur(k.totalNs.b),
          `${signedDur(k.totalNs)} ${pct(k.totalNs)}`,
          `${dur(k.meanNs.a)} → ${dur(k.meanNs.b)}`,
          name.length > 100 ? `${name.slice(0, 99)}…` : name,
        ];
      }),
    ),
  );
  out.push('', 'Copies and memsets');
  out.push(
    renderTable(
      ['direction', 'from', 'to', 'bytes A → B', 'GB/s A → B'],
      d.copies.map((c) => [
        c.direction,
        c.srcKind,
        c.dstKind,
        `${formatBytes(c.bytes.a ?? 0)} → ${formatBytes(c.bytes.b ?? 0)}`,
        `${fx(c.gbPerS.a)} → ${fx(c.gbPerS.b)}`,
      ]),
    ),
  );
  return out.join('\n') + '\n';
}
