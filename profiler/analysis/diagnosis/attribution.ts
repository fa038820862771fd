// A part of a range scope (one instance, `--range NAME#k`, and each row of
// the iterations) is diagnosed as its share of the whole range's diagnosis,
// not alone. Alone, an instance loses what crosses its edges: the
// synchronize or `.item()` that ends a step costs nothing until the next
// step's launches wait for it, a pinned copy saves little until the host
// runs ahead into the next step, an instance has too few kernels for the
// launch-bound rule, and idle time is measured between its own operations,
// which the host's running ahead spreads over the next steps. Shared out,
// the parts add up to the range, and every scope gives one answer.
//
// How a finding of the range is shared out among the parts (each part is
// the operations and calls it owns: scope.ts, rangeOwnership):
//  * with a what-if: from the replay with the fix (the diagnosis's own:
//    diagnose's replays), how much sooner after the range's first
//    operation each part ends, parts in the order they ended: what a part
//    adds to that is its share (a fix that overlaps steps rather than
//    shortening them still shares out), the range's saving split in
//    proportion;
//  * without one: in proportion to the part's share of the finding's
//    evidence (operations and calls), or, for a finding about time windows
//    (low utilization), of its window, or, for a gap between parts, to the
//    part it held back (the first to start after it);
// A part's finding keeps the range finding's kind, fix and title, its
// evidence cut down to the part's own, its severity against the part's
// span, and says whose share it is.
import { rankFindings } from './findings/ranking.ts';
import type { Finding, FixId } from '../../contract/findings.ts';
import { fixLabel } from '../replay/whatif.ts';
import { severityInSpan } from './findings/context.ts';
import type { ReplayResult } from '../replay/replay.ts';
import type { Host } from '../host.ts';
import { OpKind, type Trace } from '../trace.ts';
import { rangeOwnership, type RangeInstance } from '../../cuda/nvtx-ranges.ts';
import { type TimelineColumns } from '../../native/columns.ts';

export interface PartOwnership {
  /** Per op of the range's trace: the part that owns it (0-based), -1 for none. */
  opOwner: Int32Array;
  /** Per call of the range's host: the part that owns it, -1 for none. */
  callOwner: Int32Array;
  parts: number;
  /** How a part is named in a finding's explanation: "step #3 of 24". */
  label: (part: number) => string;
}

/**
 * An operation's row as one number, its table (OpKind, 1–3) and its id in
 * it: a Map key per operation without a string made for each (row ids stay
 * far below 2^51).
 */
function opRow(kind: number, rowId: number): number {
  return rowId * 4 + kind;
}

/**
 * Each part's findings (index = part), sorted as the diagnosis sorts them.
 * `replays`: the replay of each fix the diagnosis estimated (diagnose's
 * `replays`), by fix.
 */
export function shareFindings(trace: Trace, host: Host, findings: Finding[], own: PartOwnership, replays: ReadonlyMap<FixId, ReplayResult>): Finding[][] {
  const { ops } = trace;
  const P = own.parts;
  // Each part's recorded GPU span.
  const recStart = new Float64Array(P).fill(Infinity);
  const recEnd = new Float64Array(P).fill(-Infinity);
  for (let i = 0; i < ops.length; i++) {
    const p = own.opOwner[i]!;
    if (p < 0) continue;
    if (ops.start[i]! < recStart[p]!) recStart[p] = ops.start[i]!;
    if (ops.end[i]! > recEnd[p]!) recEnd[p] = ops.end[i]!;
  }
  // Which part owns each evidence row, by table and row id: for the rows the
  // findings name only (a map of every row cost 8 s and GBs at 10 M operations).
  const opPart = new Map<number, number>();
  const callPart = new Map<number, number>();
  for (const { evidence: ev } of findings) {
    for (const [kind, ids] of [
      [OpKind.Kernel, ev.kernels],
      [OpKind.Memcpy, ev.memcpys],
      [OpKind.Memset, ev.memsets],
    ] as const)
      for (const id of ids) opPart.set(opRow(kind, id), -1);
    for (const id of ev.apiCalls) callPart.set(id, -1);
  }
  if (opPart.size > 0)
    for (let i = 0; i < ops.length; i++) {
      if (own.opOwner[i]! < 0) continue;
      const row = opRow(ops.kind[i]!, ops.rowId[i]!);
      if (opPart.has(row)) opPart.set(row, own.opOwner[i]!);
    }
  if (callPart.size > 0)
    for (let k = 0; k < host.calls.length; k++)
      if (own.callOwner[k]! >= 0 && callPart.has(host.calls.rowId[k]!)) callPart.set(host.calls.rowId[k]!, own.callOwner[k]!);
  for (const parts of [opPart, callPart]) for (const [row, p] of parts) if (p < 0) parts.delete(row);

  const out: Finding[][] = Array.from({ length: P }, () => []);
  for (const f of findings) {
    const weight = new Float64Array(P);
    // A finding with a what-if had its fix replayed by the diagnosis.
    const pred = f.fixId && f.whatIf ? (replays.get(f.fixId) ?? null) : null;
    if (pred) {
      const s = new Float64Array(P).fill(Infinity);
      const e = new Float64Array(P).fill(-Infinity);
      for (let i = 0; i < ops.length; i++) {
        const p = own.opOwner[i]!;
        if (p < 0) continue;
        if (pred.start[i]! < s[p]!) s[p] = pred.start[i]!;
        if (pred.end[i]! > e[p]!) e[p] = pred.end[i]!;
      }
      // How much sooner, after the first part's start, each part ends with
      // the fix, parts taken in the order they ended: what it adds to that
      // is its share. A part that only moved earlier with those before it
      // (a pipelining fix shortens no step, it overlaps them) adds nothing.
      const order = [...Array(P).keys()].filter((p) => Number.isFinite(s[p]!)).sort((x, y) => recEnd[x]! - recEnd[y]!);
      const first = order.reduce((m, p) => Math.min(m, recStart[p]!), Infinity);
      const firstPred = order.reduce((m, p) => Math.min(m, s[p]!), Infinity);
      let before = 0;
      for (const p of order) {
        const upTo = recEnd[p]! - first - (e[p]! - firstPred);
        weight[p] = Math.max(0, upTo - before);
        before = Math.max(before, upTo);
      }
    } else {
      const ev = f.evidence;
      const count = (kind: number, ids: number[]) => {
        for (const id of ids) {
          const p = opPart.get(opRow(kind, id));
          if (p !== undefined) weight[p]!++;
        }
      };
      count(OpKind.Kernel, ev.kernels);
      count(OpKind.Memcpy, ev.memcpys);
      count(OpKind.Memset, ev.memsets);
      for (const id of ev.apiCalls) {
        const p = callPart.get(id);
        if (p !== undefined) weight[p]!++;
      }
    }
    let total = weight.reduce((a, b) => a + b, 0);
    if (total <= 0) {
      // Nothing to go by in the rows (a finding about time windows, low
      // utilization): by how much of its window each part's span covers.
      for (let p = 0; p < P; p++) weight[p] = Math.max(0, Math.min(recEnd[p]!, f.evidence.window.end) - Math.max(recStart[p]!, f.evidence.window.start));
      total = weight.reduce((a, b) => a + b, 0);
      if (total <= 0) {
        // A gap between two parts' spans: the part it held back, the first to start after it.
        let next = -1;
        for (let p = 0; p < P; p++) if (recStart[p]! >= f.evidence.window.start && (next < 0 || recStart[p]! < recStart[next]!)) next = p;
        if (next < 0) continue;
        weight[next] = 1;
        total = 1;
      }
    }
    for (let p = 0; p < P; p++) {
      if (weight[p]! <= 0) continue;
      const cost = (f.costNs * weight[p]!) / total;
      const span = recEnd[p]! - recStart[p]!;
      const keep = <T>(ids: number[], part: (id: number) => number | undefined) => ids.filter((id) => part(id) === p) as T[];
      out[p]!.push({
        ...f,
        costNs: cost,
        severity: f.costNs > 0 ? severityInSpan({ start: recStart[p]!, end: recEnd[p]! }, cost) : f.severity,
        explanation:
          `${f.explanation} This is ${own.label(p)}'s share of the finding over the whole range` +
          (pred ? ', in proportion to how much shorter the what-if of the whole range makes it.' : ', by its share of the evidence.'),
        evidence: {
          kernels: keep(f.evidence.kernels, (id) => opPart.get(opRow(OpKind.Kernel, id))),
          memcpys: keep(f.evidence.memcpys, (id) => opPart.get(opRow(OpKind.Memcpy, id))),
          memsets: keep(f.evidence.memsets, (id) => opPart.get(opRow(OpKind.Memset, id))),
          apiCalls: keep(f.evidence.apiCalls, (id) => callPart.get(id)),
          syncs: [],
          window: { start: recStart[p]!, end: recEnd[p]! },
        },
        ...(f.whatIf && f.fixId ? { whatIf: { fix: fixLabel(f.fixId), measuredNs: span, predictedNs: span - cost, savedNs: cost } } : {}),
      });
    }
  }
  // Ranked as the diagnosis ranks: the range's symptoms already say what explains them.
  return out.map((list) => rankFindings(list));
}

/**
 * Who owns each operation and call of the range's trace and host (the
 * range of all of `instances`, as analyze() loads it): part x is instance
 * x. That trace and host are what the instances own of `columns`, row for
 * row in the ownership's order (scope.ts: selectScope selects them with
 * selectOwned of all instances, and loadTrace and loadHost keep those
 * columns as they are), so each row's owner is read off the ownership
 * itself, with no join by row ids.
 */
export function instanceParts(columns: TimelineColumns, instances: RangeInstance[], name: string): PartOwnership {
  const own = rangeOwnership(columns, instances);
  return { opOwner: own.opOwner, callOwner: own.callOwner, parts: instances.length, label: (p) => `'${name}' #${p + 1} of ${instances.length}` };
}
