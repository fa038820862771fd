// `streamscope diff`'s CI gates: B is checked against A, and each broken
// limit is one reason (the CLI prints them on one FAIL line, exit 1).
import type { DiffSummary } from '../contract/diff.ts';
import { formatDuration } from '../contract/time.ts';

export interface DiffLimits {
  /** --fail-if-slower: the largest growth of the GPU span allowed, as a fraction (0.05 = 5%); null: not checked. */
  slower: number | null;
  /**
   * --fail-if-overlap-drops: the largest fall of a rank's communication
   * overlap (the share hidden behind compute) allowed, in percentage
   * points (10: 80% → 70% passes, 80% → 69% fails); null: not checked.
   */
  overlapDropPoints: number | null;
}

export function diffGateFailures(d: DiffSummary, limits: DiffLimits): string[] {
  const reasons: string[] = [];
  const slower = d.gpuSpanNs.relative;
  if (limits.slower !== null && slower !== null && slower > limits.slower)
    reasons.push(
      `${d.b} is ${(slower * 100).toFixed(1)}% slower than ${d.a} (GPU span ${formatDuration(d.gpuSpanNs.a!)} → ${formatDuration(d.gpuSpanNs.b!)}; limit ${(limits.slower * 100).toFixed(1)}%)`,
    );
  if (limits.overlapDropPoints !== null) {
    // Only ranks in both recordings with communication in both have an overlap to compare.
    const compared = (d.ranks ?? []).filter((r) => r.overlap.delta !== null);
    const limit = limits.overlapDropPoints;
    const fell = compared.filter((r) => -r.overlap.delta! * 100 > limit).sort((x, y) => x.overlap.delta! - y.overlap.delta!);
    const pc = (v: number) => `${(v * 100).toFixed(0)}%`;
    if (compared.length === 0) reasons.push(`no rank has communication in both ${d.a} and ${d.b}: no overlap to compare (--fail-if-overlap-drops)`);
    else if (fell.length > 0) {
      const w = fell[0]!;
      reasons.push(
        `${w.label}'s communication overlap fell from ${pc(w.overlap.a!)} to ${pc(w.overlap.b!)} in ${d.b} ` +
          `(−${(-w.overlap.delta! * 100).toFixed(1)} points; limit ${limit} points)` +
          (fell.length > 1
            ? `, and ${fell.length - 1} more rank${fell.length > 2 ? 's' : ''}: ${fell
                .slice(1)
                .map((r) => r.label)
                .join(', ')}`
            : ''),
      );
    }
  }
  return reasons;
}
