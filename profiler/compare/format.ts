// `streamscope diff` as text: what changed, biggest first, signed.
import { readableNames } from '../contract/names.ts';
import { formatBytes, formatDuration } from '../contract/time.ts';
import { renderTable } from '../report/table.ts';
import type { Delta, DiffSummary, FindingDiff, FindingSubject, RankDiff } from '../contract/diff.ts';

const pct = (d: Delta) => (d.relative === null ? '' : `${d.relative >= 0 ? '+' : ''}${(d.relative * 100).toFixed(1)}%`);
const dur = (v: number | null) => (v === null ? '-' : formatDuration(v));
const signedDur = (d: Delta) => (d.delta === null ? '-' : `${d.delta >= 0 ? '+' : '−'}${formatDuration(Math.abs(d.delta))}`);
const fx = (v: number | null) => (v === null ? '-' : v.toFixed(2));
const share = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(0)}%`);
/** "1.2 ms → 1.5 ms +25.0%": one cell per value of a row. */
const durChange = (d: Delta) => `${dur(d.a)} → ${dur(d.b)} ${pct(d)}`.trimEnd();
/** A share's change in percentage points (a relative change of a percentage reads wrongly). */
const points = (d: Delta) => (d.delta === null ? '' : `${d.delta >= 0 ? '+' : '−'}${Math.abs(d.delta * 100).toFixed(0)} pt`);

/** Stream rows printed before the rest is left to --json. */
const STREAM_ROWS = 64;

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
        `${x.rank ? `${x.rank} · ` : ''}${x.gpu}: ${x.name ?? '?'}`,
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
  if (d.ranks) {
    out.push('');
    for (const line of formatRanks(d.ranks)) out.push(line);
  }
  if (d.collectives.length > 0) {
    out.push('', 'Collectives (NCCL kernels, every rank)');
    out.push(
      renderTable(
        ['collective', 'count A → B', 'total A', 'total B', 'change'],
        d.collectives.map((c) => [
          c.collective,
          `${c.count.a} → ${c.count.b}`,
          dur(c.totalNs.a),
          dur(c.totalNs.b),
          `${signedDur(c.totalNs)} ${pct(c.totalNs)}`,
        ]),
      ),
    );
  }
  out.push('', 'Findings');
  out.push(
    d.findings.length === 0
      ? '  none in either'
      : renderTable(
          ['status', 'kind', 'about', 'what changed'],
          // A limit is printed as such, not as NEW or FIXED: the program did not cause it (FindingDiff.limit).
          d.findings.map((f) => [f.limit ? 'limit' : f.status.toUpperCase(), f.kind, f.about, findingChange(f)]),
        ),
  );
  if (d.findings.length > 0)
    out.push('  matched by kind, GPU, process and what each is about (its calls, copies or stream): findings about different calls are different findings');
  if (d.findings.some((f) => f.limit)) out.push('  limit: the copy engines or SMs were full, a hardware limit, not a regression (nothing to fix)');
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

/** Subjects of a finding printed per side; the rest are in --json. */
const SUBJECT_NAMES = 4;

/** "cudaStreamSynchronize ×78, cudaDeviceSynchronize ×1"; "×1000+" where the evidence list was cut at its limit. */
function subjects(xs: FindingSubject[]): string {
  if (xs.length === 0) return 'none';
  const shown = xs.slice(0, SUBJECT_NAMES).map((x) => `${x.name.length > 60 ? `${x.name.slice(0, 59)}…` : x.name} ×${x.count}${x.atLeast ? '+' : ''}`);
  return [...shown, ...(xs.length > SUBJECT_NAMES ? [`${xs.length - SUBJECT_NAMES} more`] : [])].join(', ');
}

/**
 * What a finding row says changed: its subjects A → B and its cost
 * ("cudaStreamSynchronize ×78 → cudaDeviceSynchronize ×1, cost 30.1 ms →
 * 2.05 ms"; "none" on the side it is not on, the subjects once when
 * unchanged); for kinds without subjects the cost and its title (B's, else A's).
 */
function findingChange(f: FindingDiff): string {
  const cost = `cost ${f.status === 'new' ? '-' : dur(f.costNs.a)} → ${f.status === 'fixed' ? '-' : dur(f.costNs.b)}`;
  if (f.subjectKind === null) return `${cost}: ${f.titleB ?? f.titleA ?? ''}`;
  if (f.status === 'unchanged') return `${subjects(f.subjectsA ?? [])}, ${cost}`;
  return `${subjects(f.subjectsA ?? [])} → ${subjects(f.subjectsB ?? [])}, ${cost}`;
}

/** Each rank against the same rank of B, then its streams paired within it. */
function formatRanks(ranks: RankDiff[]): string[] {
  const byRank = ranks.filter((r) => r.pairedBy === 'rank').length;
  const only = (side: 'a' | 'b') =>
    ranks
      .filter((r) => r[side] === null)
      .map((r) => r.label)
      .join(', ') || 'none';
  const out = [
    `Ranks (${byRank} paired by rank, ${ranks.length - byRank} by pid order; only in A: ${only('b')}; only in B: ${only('a')})`,
    renderTable(
      ['rank', 'pid A → B', 'GPU span (its own)', 'compute', 'communication', 'exposed', 'overlap A → B'],
      ranks.map((r) => [
        r.label,
        `${r.a?.pid ?? '-'} → ${r.b?.pid ?? '-'}`,
        durChange(r.gpuSpanNs),
        durChange(r.computeNs),
        durChange(r.communicationNs),
        durChange(r.exposedNs),
        `${share(r.overlap.a)} → ${share(r.overlap.b)} ${points(r.overlap)}`.trimEnd(),
      ]),
    ),
    '  exposed: communication while no compute ran on the GPU; overlap = the share of communication hidden behind compute',
  ];
  const streams = ranks.flatMap((r) => r.streams.map((s) => ({ rank: r.label, ...s })));
  out.push(
    '',
    'Streams of each rank (paired within the rank and GPU: the same CUPTI stream id, else in order of first operation; same role)',
    renderTable(
      ['rank', 'GPU', 'stream A → B', 'role', 'ops A → B', 'busy A → B'],
      streams
        .slice(0, STREAM_ROWS)
        .map((s) => [
          s.rank,
          `${s.a?.gpu ?? '-'} → ${s.b?.gpu ?? '-'}`,
          `${s.a?.cuptiStreamId ?? '-'} → ${s.b?.cuptiStreamId ?? '-'}`,
          s.role,
          `${s.ops.a ?? '-'} → ${s.ops.b ?? '-'}`,
          durChange(s.busyNs),
        ]),
    ),
  );
  if (streams.length > STREAM_ROWS) out.push(`  … ${streams.length - STREAM_ROWS} more streams in --json`);
  return out;
}
