// The diff's findings matched by what each is about (profiler/compare/
// findings.ts), on real GPU recordings: the corpus's bug/fix pairs and
// torch_train_loop against its fixed program. The diagnosis is changing
// under this test (costs, even which findings there are), so nothing here
// names a finding the diagnosis must make: every expectation is derived
// from each file's own analysis, and the evidence ids of every finding are
// read back with SQL on its file (ids differ between recordings; what they
// name does not). What is asserted is the matching: which findings pair,
// and what a row says about each side.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { baseCallName } from '../../profiler/cuda/call-families.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { categoryOfCopyKind, OP_CATEGORY_NAMES } from '../../profiler/analysis/trace.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import { formatDiff } from '../../profiler/compare/format.ts';
import type { DiffSummary, FindingDiff, FindingSubject } from '../../profiler/contract/diff.ts';
import type { Finding, FindingKind } from '../../profiler/contract/findings.ts';
import { readableNames } from '../../profiler/contract/names.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { MEMORY_KIND_NAMES } from '../../profiler/cuda/cupti-kinds.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const corpus = path.join(fixtures, 'corpus');
const PAIRS = fs
  .readdirSync(corpus)
  .filter((p) => fs.existsSync(path.join(corpus, p, 'bug.sqlite')) && fs.existsSync(path.join(corpus, p, 'fix.sqlite')))
  .sort()
  .map((p): [string, string, string] => [p, path.join(corpus, p, 'bug.sqlite'), path.join(corpus, p, 'fix.sqlite')]);
const trainLoop = path.join(fixtures, 'recordings/torch_train_loop.sqlite');
const trainLoopFixed = path.join(fixtures, 'recordings/torch_train_loop-fixed.sqlite');
PAIRS.push(['torch_train_loop', trainLoop, trainLoopFixed]);
// The compare view's own pair (test/e2e/compare.test.ts): the concurrent run's copies wait for the copy engines.
const defaultStream = path.join(fixtures, 'recordings/normalise-default-stream.sqlite');
const concurrent = path.join(fixtures, 'recordings/normalise-concurrent.sqlite');
PAIRS.push(['normalise', defaultStream, concurrent]);

const analyses = new Map<string, Analysis>();
function analysed(file: string): Analysis {
  let x = analyses.get(file);
  if (!x) {
    const db = openRecording(file, { readonly: true });
    try {
      analyses.set(file, (x = analyze(db, { file })));
    } finally {
      db.close();
    }
  }
  return x;
}

const diffs = new Map<string, DiffSummary>();
function diff(a: string, b: string): DiffSummary {
  const key = `${a}\n${b}`;
  let d = diffs.get(key);
  if (!d) diffs.set(key, (d = diffRecordings(a, analysed(a), b, analysed(b))));
  return d;
}

/** Rows of a file by id, read with SQLite alone (not through the analysis the diff reads them with). */
function rowsById<T>(file: string, query: string, ids: number[]): Map<number, T> {
  if (ids.length === 0) return new Map();
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(query.replace('?', `(SELECT value FROM json_each(?))`)).all(JSON.stringify(ids)) as ({ id: number } & T)[];
    return new Map(rows.map((r) => [r.id, r]));
  } finally {
    db.close();
  }
}

// The subjects and identity of each kind as docs/FORMATS.md documents them ("Findings, matched by what they are about").
const CALLS: FindingKind[] = ['host-blocking-call', 'event-ordering'];
const COPIES: FindingKind[] = ['pageable-async-copy', 'blocking-readback', 'sync-copy', 'sync-memset', 'copy-engine-queue'];
const OPERATIONS: FindingKind[] = ['legacy-default-stream', 'serialized-collective'];
/** Kinds whose subjects identify them: two sharing none are two findings. */
const IDENTIFYING: FindingKind[] = ['host-blocking-call', ...COPIES];

type Counts = Map<string, number>;
const add = (m: Counts, name: string) => m.set(name, (m.get(name) ?? 0) + 1);

/** What a finding is about, from its evidence ids read back in its file; kernels named as the diff's Kernels table names them. */
function subjectsBySql(file: string, f: Finding, d: DiffSummary): Counts {
  const out: Counts = new Map();
  if (CALLS.includes(f.kind)) {
    const calls = rowsById<{ name: string }>(
      file,
      'SELECT a.id, s.value AS name FROM api_calls a JOIN strings s ON s.id = a.name_id WHERE a.id IN ?',
      f.evidence.apiCalls,
    );
    for (const id of f.evidence.apiCalls) add(out, baseCallName(calls.get(id)!.name));
  }
  if (OPERATIONS.includes(f.kind)) {
    const kernels = rowsById<{ name: string }>(
      file,
      'SELECT k.id, s.value AS name FROM kernels k JOIN strings s ON s.id = k.name_id WHERE k.id IN ?',
      f.evidence.kernels,
    );
    const label = readableNames(d.kernels);
    for (const id of f.evidence.kernels) add(out, label.get(kernels.get(id)!.name)!);
  }
  if (COPIES.includes(f.kind) || OPERATIONS.includes(f.kind)) {
    const copies = rowsById<{ copy_kind: number; src_kind: number; dst_kind: number }>(
      file,
      'SELECT id, copy_kind, src_kind, dst_kind FROM memcpys WHERE id IN ?',
      f.evidence.memcpys,
    );
    for (const id of f.evidence.memcpys) {
      const c = copies.get(id)!;
      add(out, `${OP_CATEGORY_NAMES[categoryOfCopyKind(c.copy_kind)]} ${MEMORY_KIND_NAMES[c.src_kind]}→${MEMORY_KIND_NAMES[c.dst_kind]}`);
    }
    const sets = rowsById<{ memory_kind: number }>(file, 'SELECT id, memory_kind FROM memsets WHERE id IN ?', f.evidence.memsets);
    for (const id of f.evidence.memsets) add(out, `memset ${MEMORY_KIND_NAMES[sets.get(id)!.memory_kind]}`);
  }
  return out;
}

/** The stream (CUPTI id) of a finding's operations, by SQL. */
function streamsBySql(file: string, f: Finding): number[] {
  const ids = new Set<number>();
  for (const [table, list] of [
    ['kernels', f.evidence.kernels],
    ['memcpys', f.evidence.memcpys],
    ['memsets', f.evidence.memsets],
  ] as const)
    for (const r of rowsById<{ s: number }>(
      file,
      `SELECT o.id, st.cupti_stream_id AS s FROM ${table} o JOIN streams st ON st.id = o.stream_id WHERE o.id IN ?`,
      list,
    ).values())
      ids.add(r.s);
  return [...ids].sort();
}

/**
 * A finding's identity as the brief of the matching states it: kind, GPU
 * (CUDA ordinal), process (its rank row in a multi-rank diff), call family,
 * copy direction (copy-engine-queue), stream (legacy-default-stream).
 */
function identity(file: string, x: Analysis, d: DiffSummary, side: 'a' | 'b', f: Finding): string {
  const ordinal = f.deviceId === null ? null : (x.trace.devices.find((dev) => dev.id === f.deviceId)?.ordinal ?? f.deviceId);
  const rank = d.ranks && f.pid !== null ? (d.ranks.find((r) => r[side]?.pid === f.pid)?.label ?? null) : null;
  const extra =
    f.kind === 'copy-engine-queue'
      ? [...subjectsBySql(file, f, d).keys()].map((n) => n.split(' ')[0]).sort()
      : f.kind === 'legacy-default-stream'
        ? streamsBySql(file, f)
        : null;
  return JSON.stringify([f.kind, ordinal, rank, f.callFamily ?? null, extra]);
}

const asCounts = (xs: FindingSubject[]) => new Map(xs.map((s) => [s.name, s.count]));
const sameCounts = (x: Counts, y: Counts) => x.size === y.size && [...x].every(([n, c]) => y.get(n) === c);
const shareOne = (x: Counts, y: Counts) => [...x.keys()].some((n) => y.has(n));
const intended = (f: Finding) => f.severity === 'info' && f.costNs === 0;

/**
 * A finding's own cost as the diff's rows are to show it, from the
 * diagnosis alone: the diagnosis charges each finding naming a fix the
 * fix's whole saving; several such findings share it in proportion to
 * their rules' own measures.
 */
function ownCost(f: Finding, all: Finding[]): number {
  if (!f.fixId || !f.whatIf) return f.costNs;
  const sharing = all.filter((g) => g.fixId === f.fixId && g.whatIf);
  if (sharing.length === 1) return f.costNs;
  const total = sharing.reduce((n, g) => n + (g.ruleCostNs ?? 0), 0);
  return total > 0 ? (f.costNs * (f.ruleCostNs ?? 0)) / total : f.costNs / sharing.length;
}

/**
 * Each row's finding on one side, found by its title among that side's
 * findings (each used once; of several with one title, the one whose
 * share of its fix's saving is the row's cost).
 */
function rowFindings(d: DiffSummary, findings: Finding[], side: 'a' | 'b'): Map<FindingDiff, Finding> {
  const left = [...findings];
  const out = new Map<FindingDiff, Finding>();
  const close = (x: number, y: number) => Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(y));
  for (const row of d.findings) {
    const title = side === 'a' ? row.titleA : row.titleB;
    if (title === null) continue;
    const same = left.filter((f) => f.kind === row.kind && f.title === title);
    const k = left.indexOf(same.length === 1 ? same[0]! : (same.find((f) => close(ownCost(f, findings), row.costNs[side]!)) ?? same[0]!));
    expect(k, `${side}: ${row.kind} "${title}" is one of the file's findings`).toBeGreaterThanOrEqual(0);
    out.set(row, left.splice(k, 1)[0]!);
  }
  return out;
}

describe('diff findings: matched by what they are about (real recordings)', () => {
  it.each(PAIRS)('%s: pairs exactly the findings whose identities match, each once', (_name, bugFile, fixFile) => {
    const a = analysed(bugFile);
    const b = analysed(fixFile);
    const d = diff(bugFile, fixFile);
    const inA = rowFindings(d, a.diagnosis.findings, 'a');
    const inB = rowFindings(d, b.diagnosis.findings, 'b');
    // Every finding is in one row, except intended behaviour that is intended on every side of its row.
    const placed = (fs: Finding[], rows: Map<FindingDiff, Finding>) => fs.filter((f) => ![...rows.values()].includes(f));
    for (const f of [...placed(a.diagnosis.findings, inA), ...placed(b.diagnosis.findings, inB)]) expect(intended(f), f.title).toBe(true);

    for (const row of d.findings) {
      const x = inA.get(row);
      const y = inB.get(row);
      expect(row.status).toBe(x && y ? row.status : x ? 'fixed' : 'new');
      // A limit: no side's finding names a fix.
      expect(row.limit, `${row.kind} ${row.about}`).toBe([x, y].every((f) => !f || f.fix === ''));
      expect([row.subjectsA === null, row.subjectsB === null]).toEqual([!x, !y]);
      // What a row says each side is about is what the evidence ids name in that file.
      const sx = x && subjectsBySql(bugFile, x, d);
      const sy = y && subjectsBySql(fixFile, y, d);
      if (sx) expect(asCounts(row.subjectsA!)).toEqual(sx);
      if (sy) expect(asCounts(row.subjectsB!)).toEqual(sy);
      if (!x || !y) continue;
      expect(identity(fixFile, b, d, 'b', y)).toBe(identity(bugFile, a, d, 'a', x));
      // Findings about calls (copies) that share none are never one row.
      if (IDENTIFYING.includes(row.kind) && sx!.size > 0 && sy!.size > 0) expect(shareOne(sx!, sy!), `${row.kind}: ${row.about}`).toBe(true);
      // Changed exactly when the calls or copies, or how many of them, differ.
      expect(row.status).toBe(sameCounts(sx!, sy!) ? 'unchanged' : 'changed');
    }
    // Nothing left unpaired that should have paired: a fixed and a new row of one identity
    // are about different calls or copies.
    const fixed = d.findings.filter((r) => r.status === 'fixed');
    const added = d.findings.filter((r) => r.status === 'new');
    for (const r of fixed)
      for (const s of added) {
        const x = inA.get(r)!;
        const y = inB.get(s)!;
        if (identity(bugFile, a, d, 'a', x) !== identity(fixFile, b, d, 'b', y)) continue;
        const [sx, sy] = [subjectsBySql(bugFile, x, d), subjectsBySql(fixFile, y, d)];
        expect(IDENTIFYING.includes(r.kind) && sx.size > 0 && sy.size > 0 && !shareOne(sx, sy), `${r.kind} ${r.about}: fixed and new`).toBe(true);
      }
  });

  it.each(PAIRS)("%s: each row costs its own finding; a fix's saving that several findings share is counted once", (_name, bugFile, fixFile) => {
    const d = diff(bugFile, fixFile);
    for (const [side, file] of [
      ['a', bugFile],
      ['b', fixFile],
    ] as const) {
      const findings = analysed(file).diagnosis.findings;
      const rows = rowFindings(d, findings, side);
      const byFix = new Map<string, { saved: number; rows: number }>();
      for (const [row, f] of rows) {
        expect(row.costNs[side]!, f.title).toBeCloseTo(ownCost(f, findings), 3);
        if (!f.fixId || !f.whatIf) continue;
        const g = byFix.get(f.fixId) ?? { saved: f.whatIf.savedNs, rows: 0 };
        byFix.set(f.fixId, { saved: g.saved, rows: g.rows + row.costNs[side]! });
      }
      for (const [fix, g] of byFix) expect(g.rows, `${side}: ${fix}`).toBeCloseTo(g.saved, 0);
    }
  });

  it("two processes' synchronize findings share one what-if: each row shows its own part, not the whole saving twice", () => {
    const dir = path.join(corpus, 'two-processes-one-gpu');
    const [bug, fix] = [path.join(dir, 'bug.sqlite'), path.join(dir, 'fix.sqlite')];
    const sharing = analysed(bug).diagnosis.findings.filter((f) => f.fixId === 'remove-host-blocking' && f.callFamily === 'sync');
    expect(sharing.map((f) => f.pid).sort(), 'one finding per process').toHaveLength(2);
    const saved = sharing[0]!.whatIf!.savedNs;
    // The diagnosis charges both the whole saving; their titles each say a GPU idle time of their own.
    expect(sharing.map((f) => f.costNs)).toEqual([saved, saved]);
    const rows = diff(bug, fix).findings.filter((r) => r.kind === 'host-blocking-call' && r.callFamily === 'sync' && r.titleA !== null);
    expect(rows).toHaveLength(2);
    const costs = rows.map((r) => r.costNs.a!);
    for (const c of costs) expect(c).toBeLessThan(saved);
    expect(costs[0]! + costs[1]!).toBeCloseTo(saved, 0);
    // In proportion to what each rule measured.
    const measured = new Map(sharing.map((f) => [f.title, f.ruleCostNs!]));
    const total = [...measured.values()].reduce((n, v) => n + v, 0);
    for (const r of rows) expect(r.costNs.a! / saved).toBeCloseTo(measured.get(r.titleA!)! / total, 6);
  });

  it('a copy-engine wait is a limit, not a new regression: the row says so, and the text prints it as one', () => {
    const d = diff(defaultStream, concurrent);
    const engine = d.findings.filter((r) => r.kind === 'copy-engine-queue');
    expect(engine.map((r) => r.status)).toEqual(['new', 'new']);
    for (const r of engine) {
      expect(r.limit).toBe(true);
      expect(r.titleB).toMatch(/waited .* for the copy engine \(a hardware limit\)$/);
    }
    // What the program changed: the default stream's finding is gone, nothing of its own is new.
    expect(d.findings.filter((r) => !r.limit).map((r) => [r.status, r.kind])).toEqual([['fixed', 'legacy-default-stream']]);
    const text = formatDiff(d);
    expect(text).toMatch(/^\s+limit\s+copy-engine-queue\s+GPU 0 · HtoD copies\s+none → HtoD pinned→device ×\d+, cost - → \S+ \S+$/m);
    expect(text).not.toMatch(/NEW\s+copy-engine-queue/);
    expect(text).toMatch(/^\s+FIXED\s+legacy-default-stream/m);
  });

  it.each(
    PAIRS.flatMap(([name, bug, fix]): [string, string][] => [
      [`${name}/bug`, bug],
      [`${name}/fix`, fix],
    ]),
  )('%s against itself: every finding unchanged, about the same subjects', (_name, file) => {
    const d = diff(file, file);
    const findings = analysed(file).diagnosis.findings;
    expect(d.findings.length).toBe(findings.filter((f) => !intended(f)).length);
    for (const row of d.findings) {
      expect(row.status, `${row.kind} ${row.about}`).toBe('unchanged');
      expect(row.titleA).toBe(row.titleB);
      expect(row.costNs.delta).toBe(0);
      expect(row.subjectsA).toEqual(row.subjectsB);
    }
    // Each row is one finding, paired with itself.
    const inA = rowFindings(d, findings, 'a');
    const inB = rowFindings(d, findings, 'b');
    for (const row of d.findings) expect(inA.get(row)).toBe(inB.get(row));
  });

  // Synchronize findings about disjoint calls (cudaDeviceSynchronize per step in one program,
  // cudaStreamSynchronize from .item() in another): whichever files the diagnosis gives such findings.
  it('findings about different calls are different findings: one fixed, one new, never unchanged', () => {
    const files = PAIRS.flatMap(([, bug, fix]) => [bug, fix]);
    const syncCalls = (file: string) =>
      analysed(file)
        .diagnosis.findings.filter((f) => f.kind === 'host-blocking-call' && f.callFamily === 'sync' && !intended(f))
        .map((f) => ({ f, calls: subjectsBySql(file, f, diff(file, file)) }));
    const single = files.filter((f) => !diff(f, f).ranks && syncCalls(f).length === 1);
    const disjoint: [string, string][] = [];
    for (const x of single) for (const y of single) if (x !== y && !shareOne(syncCalls(x)[0]!.calls, syncCalls(y)[0]!.calls)) disjoint.push([x, y]);
    expect(disjoint.length, 'some recordings synchronize with different calls').toBeGreaterThan(0);
    for (const [x, y] of disjoint.slice(0, 6)) {
      const rows = diff(x, y).findings.filter((r) => r.kind === 'host-blocking-call' && r.callFamily === 'sync');
      const [fx, fy] = [syncCalls(x)[0]!, syncCalls(y)[0]!];
      expect(rows.map((r) => r.status).sort(), `${x} → ${y}`).toEqual(['fixed', 'new']);
      expect(asCounts(rows.find((r) => r.status === 'fixed')!.subjectsA!)).toEqual(fx.calls);
      expect(asCounts(rows.find((r) => r.status === 'new')!.subjectsB!)).toEqual(fy.calls);
      const text = formatDiff(diff(x, y));
      const [first] = [...fx.calls.keys()];
      expect(text).toMatch(new RegExp(`^\\s+FIXED\\s+host-blocking-call\\s+GPU \\d+ · sync calls\\s+${first} ×\\d+.* → none, cost `, 'm'));
      expect(text).not.toMatch(/^\s+UNCHANGED\s+host-blocking-call\s+GPU \d+ · sync calls\s+.*→/m);
    }
  });

  it('text: a changed finding says what its calls were on each side and its cost', () => {
    for (const [, bug, fix] of PAIRS) {
      const d = diff(bug, fix);
      const text = formatDiff(d);
      for (const row of d.findings.filter((r) => r.status === 'changed' && r.kind === 'host-blocking-call')) {
        const list = (xs: FindingSubject[]) => xs.map((s) => `${s.name} ×${s.count}${s.atLeast ? '+' : ''}`).join(', ');
        const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        expect(text).toMatch(
          new RegExp(
            `^\\s+CHANGED\\s+host-blocking-call\\s+${esc(row.about)}\\s+${esc(list(row.subjectsA!))} → ${esc(list(row.subjectsB!))}, cost \\S+ \\S+ → \\S+ \\S+$`,
            'm',
          ),
        );
      }
    }
    // torch-synchronize-in-loop: a cudaDeviceSynchronize per step against one at the end. Whatever the
    // diagnosis charges them, where both runs have the finding with other counts it is changed, not unchanged.
    const dir = path.join(corpus, 'torch-synchronize-in-loop');
    const rows = diff(path.join(dir, 'bug.sqlite'), path.join(dir, 'fix.sqlite')).findings.filter(
      (r) => r.kind === 'host-blocking-call' && r.callFamily === 'sync',
    );
    for (const r of rows.filter((r) => r.subjectsA && r.subjectsB))
      expect(r.status).toBe(sameCounts(asCounts(r.subjectsA!), asCounts(r.subjectsB!)) ? 'unchanged' : 'changed');
  });

  it('JSON: diffVersion 5, every row names its GPU, its family where it has one, and its subjects on each side', () => {
    const d = diff(trainLoop, trainLoopFixed);
    expect(d.diffVersion).toBe(5);
    for (const row of d.findings) {
      expect(['fixed', 'new', 'changed', 'unchanged']).toContain(row.status);
      expect(row.callFamily).toEqual(row.kind === 'host-blocking-call' ? expect.any(String) : null);
      if (row.gpu !== null) expect(row.about).toContain(`GPU ${row.gpu}`);
      if (row.callFamily) expect(row.about).toContain(`${row.callFamily} calls`);
      if (row.subjectKind === null) expect([row.subjectsA ?? [], row.subjectsB ?? []]).toEqual([[], []]);
    }
  });
});
