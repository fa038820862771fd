// The findings of two recordings matched finding by finding, by what each
// is about (shape: contract/diff.ts, FindingDiff). Matching by kind alone
// set a per-step cudaStreamSynchronize in A against a final
// cudaDeviceSynchronize in B and called the finding unchanged: one cause
// can be about many different things.
//
// A finding is identified by its kind, its GPU (through the diff's device
// rows: ids differ between files), its process (through the rank rows of a
// multi-rank diff: pids differ between runs), and what it is about, read
// through its evidence: evidence ids are rows of each recording's own
// tables, so they are compared by what they name (call names through the
// loaded Host, copies by direction and memory kinds, kernels by name),
// never by id.
import type { Analysis } from '../analysis/diagnosis/analyze.ts';
import { baseCallName } from '../cuda/call-families.ts';
import { EVIDENCE_CAP } from '../analysis/diagnosis/findings/context.ts';
import { callName } from '../analysis/host.ts';
import { summarizeCopies } from '../analysis/summary.ts';
import { allocateOps, OP_CATEGORY_NAMES, OpKind, type OpKindValue } from '../analysis/trace.ts';
import type { FindingDiff, FindingSubject } from '../contract/diff.ts';
import type { Finding, FindingKind } from '../contract/findings.ts';
import type { Ns } from '../contract/time.ts';
import { delta } from './delta.ts';
import type { DevicePair, ProcessPair } from './ranks.ts';

type SubjectKind = NonNullable<FindingDiff['subjectKind']>;

/**
 * What each kind's subjects are, and whether they identify it: a finding
 * about calls or copies is about those calls or copies (two sharing none
 * are two findings); the work on a legacy default stream or the
 * collectives of a rank describe a finding identified by its stream or
 * rank, so different work there is the same finding changed. Kinds not
 * listed are about a GPU or a process as a whole, and their evidence is a
 * sample (the first short kernels, every operation of the process): the
 * key alone identifies them.
 */
const SUBJECTS: Partial<Record<FindingKind, { of: SubjectKind; identify: boolean }>> = {
  'host-blocking-call': { of: 'calls', identify: true },
  'event-ordering': { of: 'calls', identify: false },
  'pageable-async-copy': { of: 'copies', identify: true },
  'blocking-readback': { of: 'copies', identify: true },
  'sync-copy': { of: 'copies', identify: true },
  'sync-memset': { of: 'copies', identify: true },
  'copy-engine-queue': { of: 'copies', identify: true },
  'legacy-default-stream': { of: 'operations', identify: false },
  'serialized-collective': { of: 'operations', identify: false },
};

/** How one side's device rows and rank rows are reached from its findings' deviceId and pid. */
export interface FindingPlaces {
  /** Device id → its row of the diff (DeviceDiff.index). */
  deviceRow: Map<number, number>;
  /** Pid → its rank row's label; null for a diff without rank rows (one process a side: pids need no pairing). */
  rankOf: Map<number, string> | null;
}

/** The places of each side's findings, from the pairings the diff's device and rank rows were built from. */
export function findingPlaces(devices: DevicePair[], processes: ProcessPair[] | null): { a: FindingPlaces; b: FindingPlaces } {
  const side = (s: 'a' | 'b'): FindingPlaces => ({
    deviceRow: new Map(devices.flatMap((p, row) => (p[s] === null ? [] : [[p[s], row] as const]))),
    rankOf: processes && new Map(processes.flatMap((p) => (p[s] === null ? [] : [[p[s].pid, p.label] as const]))),
  });
  return { a: side('a'), b: side('b') };
}

/** A finding with what identifies it. */
interface Described {
  finding: Finding;
  /** Kind, GPU row, process, discriminator: equal keys are candidates for one another. */
  key: string;
  gpu: number | null;
  rank: string | null;
  about: string;
  subjects: Map<string, { count: number; atLeast: boolean }>;
  /** Its own cost (ownCosts). */
  costNs: Ns;
}

/** Row ids of evidence → indexes into the loaded columns, for the rows some finding's subjects need (one pass over each column). */
interface EvidenceRows {
  call: Map<number, number>;
  op: Map<OpKindValue, Map<number, number>>;
}

function evidenceRows(x: Analysis, findings: Finding[]): EvidenceRows {
  const wantCalls = new Set<number>();
  const wantOps = new Map<OpKindValue, Set<number>>([
    [OpKind.Kernel, new Set()],
    [OpKind.Memcpy, new Set()],
    [OpKind.Memset, new Set()],
  ]);
  for (const f of findings) {
    const of = SUBJECTS[f.kind]?.of;
    if (of === 'calls') for (const id of f.evidence.apiCalls) wantCalls.add(id);
    if (of === 'operations') for (const id of f.evidence.kernels) wantOps.get(OpKind.Kernel)!.add(id);
    if (of === 'copies' || of === 'operations') {
      for (const id of f.evidence.memcpys) wantOps.get(OpKind.Memcpy)!.add(id);
      for (const id of f.evidence.memsets) wantOps.get(OpKind.Memset)!.add(id);
    }
  }
  const call = new Map<number, number>();
  if (wantCalls.size > 0) {
    const { rowId } = x.host.calls;
    for (let k = 0; k < x.host.calls.length; k++) if (wantCalls.has(rowId[k]!)) call.set(rowId[k]!, k);
  }
  const op = new Map<OpKindValue, Map<number, number>>([...wantOps.keys()].map((kind) => [kind, new Map()]));
  if ([...wantOps.values()].some((s) => s.size > 0)) {
    const { kind, rowId } = x.trace.ops;
    for (let i = 0; i < x.trace.ops.length; i++) {
      const k = kind[i] as OpKindValue;
      if (wantOps.get(k)?.has(rowId[i]!)) op.get(k)!.set(rowId[i]!, i);
    }
  }
  return { call, op };
}

type Subjects = Described['subjects'];

function count(into: Subjects, name: string, n: number, atLeast: boolean): void {
  const s = into.get(name);
  if (s) {
    s.count += n;
    s.atLeast ||= atLeast;
  } else into.set(name, { count: n, atLeast });
}

/** The op indexes of a list of evidence ids (those not in the scope's columns are left out). */
function opsOf(rows: EvidenceRows, kind: OpKindValue, ids: number[]): number[] {
  const m = rows.op.get(kind)!;
  return ids.flatMap((id) => {
    const i = m.get(id);
    return i === undefined ? [] : [i];
  });
}

/**
 * Copies and memsets by direction and memory kinds, named as the diff's
 * copy table names them (summarizeCopies over just these operations).
 */
function countCopies(x: Analysis, indexes: number[], atLeast: boolean, into: Subjects): void {
  if (indexes.length === 0) return;
  const { ops } = x.trace;
  const subset = allocateOps(indexes.length);
  indexes.forEach((i, j) => {
    subset.kind[j] = ops.kind[i]!;
    subset.category[j] = ops.category[i]!;
    subset.detail[j] = ops.detail[i]!;
  });
  for (const c of summarizeCopies({ ...x.trace, ops: subset }))
    count(into, c.direction === 'memset' ? `memset ${c.dstKind}` : `${c.direction} ${c.srcKind}→${c.dstKind}`, c.count, atLeast);
}

/**
 * A finding's subjects, counted from its evidence. The diagnosis keeps at
 * most EVIDENCE_CAP ids per evidence table (docs/FORMATS.md, Findings):
 * a list that long was cut, and what is counted from it is a lower bound.
 */
function subjectsOf(x: Analysis, f: Finding, rows: EvidenceRows, kernelName: KernelNames): Subjects {
  const out: Subjects = new Map();
  const of = SUBJECTS[f.kind]?.of;
  const ev = f.evidence;
  if (of === 'calls') {
    const cut = ev.apiCalls.length >= EVIDENCE_CAP;
    for (const id of ev.apiCalls) {
      const k = rows.call.get(id);
      // Base names: cudaStreamSynchronize_ptsz in a per-thread-stream build is the same call.
      count(out, (k === undefined ? '' : baseCallName(callName(x.host, k))) || 'unknown call', 1, cut);
    }
  }
  if (of === 'operations') {
    const cut = ev.kernels.length >= EVIDENCE_CAP;
    for (const i of opsOf(rows, OpKind.Kernel, ev.kernels)) {
      const name = x.trace.strings.get(x.trace.ops.detail[i]!) ?? '?';
      count(out, kernelName.get(name) ?? name, 1, cut);
    }
  }
  if (of === 'copies' || of === 'operations') {
    countCopies(x, opsOf(rows, OpKind.Memcpy, ev.memcpys), ev.memcpys.length >= EVIDENCE_CAP, out);
    countCopies(x, opsOf(rows, OpKind.Memset, ev.memsets), ev.memsets.length >= EVIDENCE_CAP, out);
  }
  return out;
}

/**
 * What tells findings of one kind on one GPU and process apart, as a key
 * part and in words: host-blocking-call's call family (one finding per
 * family: its fix follows the family), copy-engine-queue's direction (one
 * finding per engine), legacy-default-stream's stream (by CUPTI id: a
 * program run twice creates its streams in the same order).
 */
function discriminator(x: Analysis, f: Finding, rows: EvidenceRows): string {
  if (f.kind === 'host-blocking-call') return f.callFamily ? `${f.callFamily} calls` : '';
  if (f.kind === 'copy-engine-queue') {
    const { category } = x.trace.ops;
    const directions = new Set(opsOf(rows, OpKind.Memcpy, f.evidence.memcpys).map((i) => OP_CATEGORY_NAMES[category[i]!]));
    return directions.size > 0 ? `${[...directions].sort().join('+')} copies` : '';
  }
  if (f.kind === 'legacy-default-stream') {
    const ev = f.evidence;
    const first = [...opsOf(rows, OpKind.Kernel, ev.kernels), ...opsOf(rows, OpKind.Memcpy, ev.memcpys), ...opsOf(rows, OpKind.Memset, ev.memsets)][0];
    const stream = first === undefined ? undefined : x.trace.streams.find((s) => s.id === x.trace.ops.stream[first]);
    return stream ? `stream ${stream.cuptiStreamId}` : '';
  }
  return '';
}

/**
 * Each finding's own cost. The diagnosis charges every finding that names
 * a fix the whole of that fix's what-if saving (diagnose.ts): two threads'
 * synchronize findings both cost what removing the synchronizes of both
 * saves. A row of the diff is one finding, so findings of one recording
 * sharing a fix's saving get it split in proportion to their rules' own
 * measures (ruleCostNs; evenly where those are all 0), and the rows add up
 * to the saving once. Any other finding costs its costNs.
 */
export function ownCosts(findings: readonly Finding[]): Map<Finding, Ns> {
  const byFix = new Map<string, Finding[]>();
  for (const f of findings) {
    if (!f.fixId || !f.whatIf) continue;
    let g = byFix.get(f.fixId);
    if (!g) byFix.set(f.fixId, (g = []));
    g.push(f);
  }
  const out = new Map(findings.map((f) => [f, f.costNs]));
  for (const group of byFix.values()) {
    if (group.length < 2) continue;
    const measure = (f: Finding) => Math.max(0, f.ruleCostNs ?? 0);
    const total = group.reduce((n, f) => n + measure(f), 0);
    for (const f of group) out.set(f, f.costNs * (total > 0 ? measure(f) / total : 1 / group.length));
  }
  return out;
}

/** A kernel's stored name → how the diff names it (readableNames over both recordings' kernels). */
export type KernelNames = ReadonlyMap<string, string>;

function describe(x: Analysis, findings: Finding[], places: FindingPlaces, gpuOfRow: (row: number) => number, kernelName: KernelNames): Described[] {
  const rows = evidenceRows(x, findings);
  const cost = ownCosts(findings);
  const ordinal = new Map(x.trace.devices.map((d) => [d.id, d.ordinal ?? d.id]));
  return findings.map((f) => {
    const row = f.deviceId === null ? undefined : places.deviceRow.get(f.deviceId);
    // A device without a row (no operations in the scope) still has its ordinal.
    const gpu = f.deviceId === null ? null : row !== undefined ? gpuOfRow(row) : (ordinal.get(f.deviceId) ?? f.deviceId);
    const gpuKey = f.deviceId === null ? '-' : row !== undefined ? `row ${row}` : `gpu ${gpu}`;
    // One process a side (no rank rows): its findings are that process's whatever the pid.
    const rank = f.pid === null || !places.rankOf ? null : (places.rankOf.get(f.pid) ?? `pid ${f.pid}`);
    const what = discriminator(x, f, rows);
    return {
      finding: f,
      key: JSON.stringify([f.kind, gpuKey, rank, what]),
      gpu,
      rank,
      about: [rank, gpu === null ? null : `GPU ${gpu}`, what].filter(Boolean).join(' · '),
      subjects: subjectsOf(x, f, rows, kernelName),
      costNs: cost.get(f)!,
    };
  });
}

/** Subjects both name, counted as many times as both name them. */
function shared(x: Subjects, y: Subjects): number {
  let n = 0;
  for (const [name, s] of x) n += Math.min(s.count, y.get(name)?.count ?? 0);
  return n;
}

function sameSubjects(x: Subjects, y: Subjects): boolean {
  if (x.size !== y.size) return false;
  for (const [name, s] of x) {
    const t = y.get(name);
    if (!t || t.count !== s.count || t.atLeast !== s.atLeast) return false;
  }
  return true;
}

/** How alike two findings' subjects are, 0–1: the counts both name over the counts either names (1: the same subjects as often). */
function similarity(x: Subjects, y: Subjects): number {
  let either = 0;
  for (const name of new Set([...x.keys(), ...y.keys()])) either += Math.max(x.get(name)?.count ?? 0, y.get(name)?.count ?? 0);
  return either === 0 ? 1 : shared(x, y) / either;
}

const closeness = (p: number, q: number) => (Math.max(p, q) === 0 ? 1 : Math.min(p, q) / Math.max(p, q));

/**
 * Pairs of one key: where its kind's subjects identify it, only findings
 * with a subject in common (a finding without subjects, its evidence
 * empty, cannot be told apart and may pair with any). The most alike
 * pairs first (several threads' findings of one family and process), then
 * the closest in cost, then in the diagnosis's order.
 */
function pairWithin(xs: Described[], ys: Described[]): [Described | null, Described | null][] {
  const identify = SUBJECTS[(xs[0] ?? ys[0])!.finding.kind]?.identify ?? false;
  const candidates: { i: number; j: number; alike: number; cost: number }[] = [];
  xs.forEach((x, i) =>
    ys.forEach((y, j) => {
      if (identify && x.subjects.size > 0 && y.subjects.size > 0 && shared(x.subjects, y.subjects) === 0) return;
      candidates.push({ i, j, alike: similarity(x.subjects, y.subjects), cost: closeness(x.costNs, y.costNs) });
    }),
  );
  candidates.sort((p, q) => q.alike - p.alike || q.cost - p.cost || p.i - q.i || p.j - q.j);
  const mateOfX = new Map<number, number>();
  const takenY = new Set<number>();
  for (const c of candidates) {
    if (mateOfX.has(c.i) || takenY.has(c.j)) continue;
    mateOfX.set(c.i, c.j);
    takenY.add(c.j);
  }
  return [
    ...xs.map((x, i): [Described, Described | null] => [x, mateOfX.has(i) ? ys[mateOfX.get(i)!]! : null]),
    ...ys.filter((_, j) => !takenY.has(j)).map((y): [null, Described] => [null, y]),
  ];
}

const subjectList = (s: Subjects): FindingSubject[] =>
  [...s]
    .map(([name, v]) => ({ name, count: v.count, atLeast: v.atLeast }))
    .sort((p, q) => q.count - p.count || (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));

/** Intended behaviour (info at no cost): nothing to compare. */
const intended = (f: Finding | undefined) => !f || (f.severity === 'info' && f.costNs === 0);

/**
 * The findings of A against those of B. `gpuOfRow`: the CUDA ordinal the
 * diff gives each device row; `kernelName`: how the diff names kernels.
 * Rows in which the finding is intended behaviour on every side it is on
 * are left out, after matching: a finding that cost nothing in A and
 * something in B is the same finding.
 */
export function diffFindings(
  a: Analysis,
  b: Analysis,
  places: { a: FindingPlaces; b: FindingPlaces },
  gpuOfRow: (row: number) => number,
  kernelName: KernelNames,
): FindingDiff[] {
  const da = describe(a, a.diagnosis.findings, places.a, gpuOfRow, kernelName);
  const db = describe(b, b.diagnosis.findings, places.b, gpuOfRow, kernelName);
  const byKey = new Map<string, { a: Described[]; b: Described[] }>();
  for (const [side, list] of [
    ['a', da],
    ['b', db],
  ] as const)
    for (const d of list) {
      let g = byKey.get(d.key);
      if (!g) byKey.set(d.key, (g = { a: [], b: [] }));
      g[side].push(d);
    }
  const rows: FindingDiff[] = [];
  for (const g of byKey.values())
    for (const [x, y] of pairWithin(g.a, g.b)) {
      if (intended(x?.finding) && intended(y?.finding)) continue;
      const f = (x ?? y)!;
      const of = SUBJECTS[f.finding.kind]?.of ?? null;
      rows.push({
        kind: f.finding.kind,
        status: !y ? 'fixed' : !x ? 'new' : sameSubjects(x.subjects, y.subjects) ? 'unchanged' : 'changed',
        gpu: f.gpu,
        rank: f.rank,
        callFamily: f.finding.callFamily ?? null,
        about: f.about,
        subjectKind: of,
        subjectsA: x ? subjectList(x.subjects) : null,
        subjectsB: y ? subjectList(y.subjects) : null,
        limit: [x, y].every((d) => !d || d.finding.fix === ''),
        costNs: delta(x?.costNs ?? 0, y?.costNs ?? 0),
        titleA: x?.finding.title ?? null,
        titleB: y?.finding.title ?? null,
      });
    }
  return rows.sort((p, q) => Math.max(q.costNs.a ?? 0, q.costNs.b ?? 0) - Math.max(p.costNs.a ?? 0, p.costNs.b ?? 0));
}
