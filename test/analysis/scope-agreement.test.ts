// One answer per recording, whatever the scope. On the PyTorch training
// loops that mark their steps with an NVTX range (the corpus pairs whose
// program pushes "train_step" or "step", both rounds of their recordings,
// and test/fixtures/recordings/torch_train_loop*), four ways of asking must rank the same finding
// kinds in the same order and give them the same cost within 10%:
//
//   steady    the steady state (report's default)
//   range     `report --range NAME`, every instance
//   iter-sum  the iterations' rows added up: each row is `--range NAME#k`
//             (iterations.ts), the instance's share of the range's
//             findings (attribution.ts), so the rows must add up to it
//   menu      the timeline's scope menu: the API's findings for the Scope
//             the picker sends (renderer/src/scope/scope.ts), through
//             RecordingQuery as the app asks it
//
// A finding is keyed by its kind and, for findings about calls, the call
// family (host-blocking-call/sync); findings of one key add up (one per
// thread or device). Ranked by cost, not by severity: severity is the cost
// as a share of each scope's GPU span, which the scopes do not share.
//
// Where two scopes disagree for a reason that is not the scope selection's
// to fix, the case is listed in KNOWN below: `outside` — the steady state
// holds work that no instance owns, said by the range scope's notes;
// `pending` — the cause is in the what-if replay or a finding rule, which
// are being changed elsewhere (each has an it.todo naming it). An `outside`
// case that agrees again fails the test, so that list cannot outlive its
// cause; a `pending` one is left to whoever changes its rule.
//
// SCOPE_AGREEMENT_TABLE=1 prints the table of every recording and scope.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterationsOf } from '../../profiler/analysis/diagnosis/iterations.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import type { Finding } from '../../profiler/contract/findings.ts';
import type { Scope } from '../../profiler/contract/scope.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { parseScope, scopeKey } from '../../renderer/src/scope/scope.ts';
import { CORPUS_DIR, corpusPairs } from '../helpers/corpus.ts';

const fixtures = path.join(repoRoot, 'test/fixtures');

/** The recordings: the corpus pairs whose program pushes a step range (every round: corpusPairs), and the training loop of test/gpu/scripts. */
function recordings(): { file: string; range: string }[] {
  const out: { file: string; range: string }[] = [];
  for (const pair of corpusPairs()) {
    const program = path.join(CORPUS_DIR, pair.name, 'program.py');
    if (!fs.existsSync(program)) continue;
    const m = /torch\.cuda\.nvtx\.range_push\("(train_step|step)"\)/.exec(fs.readFileSync(program, 'utf8'));
    if (!m) continue;
    for (const side of ['bug', 'fix']) out.push({ file: path.relative(fixtures, path.join(pair.dir, `${side}.sqlite`)), range: m[1]! });
  }
  for (const f of ['torch_train_loop.sqlite', 'torch_train_loop-fixed.sqlite']) out.push({ file: `recordings/${f}`, range: 'train_step' });
  return out;
}

type Answer = 'steady' | 'range' | 'iter-sum' | 'menu';
type Costs = Map<string, number>;

const keyOf = (f: Finding) => (f.callFamily ? `${f.kind}/${f.callFamily}` : f.kind);

function costsOf(findings: Finding[]): Costs {
  const m: Costs = new Map();
  for (const f of findings) m.set(keyOf(f), (m.get(keyOf(f)) ?? 0) + f.costNs);
  return m;
}

/** Within 10% of the larger. */
const TOLERANCE = 0.1;
const close = (a: number, b: number) => Math.abs(a - b) <= TOLERANCE * Math.max(a, b);

/** A finding counts from 2% of the range's GPU span (below: severity info, and too small to rank reliably). */
const SIGNIFICANT = 0.02;

interface Known {
  file: string;
  /** The two answers compared (the second is always `range`, the reference). */
  answer: Exclude<Answer, 'range'>;
  key: string;
  why: 'outside' | 'pending';
  /** What differs and where the cause lies, as said in the report. */
  reason: string;
}

/** The same case on several recordings. */
function cases(files: string[], answer: Known['answer'], key: string, why: Known['why'], reason: string): Known[] {
  return files.map((f) => ({ file: f, answer, key, why, reason }));
}

const C = (pair: string, ...sides: ('bug' | 'fix')[]) => sides.map((side) => `corpus/${pair}/${side}.sqlite`);
/** The same pair's second recordings (test/fixtures/corpus/<pair>/round-2/). */
const C2 = (pair: string, ...sides: ('bug' | 'fix')[]) => sides.map((side) => `corpus/${pair}/round-2/${side}.sqlite`);
const TRAIN_LOOP = 'recordings/torch_train_loop.sqlite';
const TRAIN_LOOP_FIXED = 'recordings/torch_train_loop-fixed.sqlite';

// The cases where two answers disagree for a reason outside the scope
// selection: the steady state's work outside the instances (`outside`), or
// a rule or what-if (`pending`: those files are being changed elsewhere).
const KNOWN: Known[] = [
  // steady against range: what the steady state holds outside the instances.
  ...cases(
    [TRAIN_LOOP, TRAIN_LOOP_FIXED],
    'steady',
    'gpu-idle-gap',
    'outside',
    'after the loop the program checks its losses with kernels it never ran before: 2 cuLibraryLoadData calls (16-20 ms) leave the GPU idle; start-up detection keeps a late load in the steady state, and no instance owns it',
  ),
  ...cases(
    [TRAIN_LOOP, TRAIN_LOOP_FIXED],
    'steady',
    'low-utilization',
    'outside',
    'the same module loads after the loop (the last windows of the steady state)',
  ),
  ...cases(
    [TRAIN_LOOP],
    'steady',
    'blocking-readback',
    'outside',
    "the steady state has 29 reads (the warm-up steps before the first instance and the check after the loop), the range 23: the last step's loss.item() follows the scope's last launch and blocking-copies.ts does not count it",
  ),
  ...cases(
    [...C('torch-pageable-batches', 'bug', 'fix'), ...C2('torch-pageable-batches', 'bug', 'fix')],
    'steady',
    'gpu-idle-gap',
    'outside',
    "between start-up's end and the first instance cuLibraryLoadData loads the check's kernels (27 ms bug, 17 ms fix; round 2: 16 ms, 13 ms): start-up ended after the 3 warm-up steps, over a tenth of the kernel time, so the steady state holds the load, and no instance does",
  ),
  ...cases(
    [...C('torch-pageable-batches', 'bug', 'fix'), ...C2('torch-pageable-batches', 'bug', 'fix')],
    'steady',
    'low-utilization',
    'outside',
    'the same module loads before the loop (the first windows of the steady state)',
  ),
  ...cases(
    [...C('torch-item-per-step', 'bug'), ...C2('torch-item-per-step', 'bug')],
    'steady',
    'low-utilization',
    'outside',
    "the steady state's first 15 ms window holds the warm-up steps before the first instance",
  ),
  ...cases(
    C('torch-launch-bound-graphs', 'fix'),
    'steady',
    'single-stream',
    'outside',
    "the process's only device-to-host copies (2, 4 µs: the result check after the loop) are outside the range; with them single-stream.ts finds copies and kernels on one stream, busy 34.0 ms against its busiest engine's 29.3 ms (a 32 KiB device-to-device copy recorded as lasting the loop)",
  ),
  ...cases(
    C2('torch-pageable-batches', 'fix'),
    'steady',
    'single-stream',
    'outside',
    "the steady state's work outside the instances (the warm-up steps before the loop, the check after it) ran on the same one stream: 17.4 ms to gain against the instances' 15.5 ms",
  ),
  // The fixed graph program's calls around its loop: each a cause the steady state holds and no instance does.
  ...cases(
    [...C('torch-launch-bound-graphs', 'fix'), ...C2('torch-launch-bound-graphs', 'fix'), ...C2('torch-allocator-churn', 'fix')],
    'steady',
    'host-blocking-call/sync',
    'outside',
    'torch.cuda.synchronize() before the loop and after it (the one after waits for the queued loop: 21.7 ms, 63.4 ms in torch-allocator-churn): host-side they are in no instance',
  ),
  ...cases(
    [...C('torch-launch-bound-graphs', 'fix'), ...C2('torch-launch-bound-graphs', 'fix')],
    'steady',
    'host-blocking-call/pinned-alloc',
    'outside',
    "a cudaHostAlloc before the loop (PyTorch's pinned buffer for the result check's copy)",
  ),
  ...cases(
    [...C('torch-launch-bound-graphs', 'fix'), ...C2('torch-launch-bound-graphs', 'fix')],
    'steady',
    'blocking-readback',
    'outside',
    'the 1-byte reads before the loop (torch.allclose of the reference with itself, loading its kernels)',
  ),
  ...cases(
    [...C('torch-launch-bound-graphs', 'fix'), ...C2('torch-launch-bound-graphs', 'fix')],
    'steady',
    'gpu-idle-gap',
    'outside',
    'the torch.cuda.synchronize() calls before and after the loop (5.4 ms of idle GPU; round 2: 1.8 ms) are in no instance',
  ),
  ...cases(
    [...C('torch-launch-bound-graphs', 'fix'), ...C2('torch-launch-bound-graphs', 'fix')],
    'steady',
    'low-utilization',
    'outside',
    'the same synchronizations before and after the loop',
  ),
  ...cases(
    C('two-processes-one-gpu', 'bug'),
    'steady',
    'legacy-default-stream',
    'outside',
    'the one copy and memset on another stream are outside the loop; the range has no other stream, so no finding (pending: whatif.ts move-default-stream saves 8.2 ms where the finding measures 34 µs of idle engine)',
  ),
  // pending: idle.ts's low-utilization windows (a grid of span/20 and a 50% threshold): the scopes' spans differ by a few ms.
  ...cases(
    C('torch-synchronize-in-loop', 'bug'),
    'steady',
    'low-utilization',
    'pending',
    "idle.ts: the GPU is about half busy throughout, and 8 of the steady state's 20 windows of 10.4 ms fall under 50% against 6 of the range's 20 of 10.2 ms (a whole window more or less at each threshold crossing)",
  ),
  // pending: launch-bound.ts finds a device launch-bound where at least half its kernels are shorter than their launch.
  ...cases(
    [...C2('torch-synchronize-in-loop', 'bug'), ...C2('two-processes-one-gpu', 'bug')],
    'steady',
    'launch-bound',
    'pending',
    "launch-bound.ts: a PyTorch MLP's kernels are exactly half short (each Linear's GEMM long, its GELU short), and the steady state's few kernels beyond the instances tip the share over a half (1,636 of 3,263; 1,840 of 3,666) where the range's stays under: a finding of 13.3 ms (13.7 ms) against none. A lower share is no cure: at 0.4 the fixed two-processes-one-gpu of round 2 (1,605 of 3,666 short) gets a launch-bound error predicting 153 → 82 ms that round 1's fix does not",
  ),
  ...cases(
    [...C2('torch-synchronize-in-loop', 'fix'), ...C2('two-processes-one-gpu', 'bug')],
    'steady',
    'low-utilization',
    'pending',
    'idle.ts: the GPU is about half busy throughout (round 2), and a window more or less falls under 50% in each scope: 6.05 against 8.78 ms, 10.14 against 5.05 ms',
  ),
  ...cases(
    [...C('two-processes-one-gpu', 'fix'), ...C2('two-processes-one-gpu', 'fix')],
    'steady',
    'low-utilization',
    'pending',
    'idle.ts: one low window in both, 7.02 ms wide in the steady state and 6.84 ms in the range (windows are span/20): 4.32 against 3.88 ms (round 2: 17.60 against 12.82 ms)',
  ),
];

interface Computed {
  answers: Record<Answer, Costs>;
  /** The menu's steady state. */
  menuSteady: Costs;
  /** Reference for "significant": the range's GPU span. */
  rangeSpanNs: number;
  steady: Analysis;
  range: Analysis;
  /** Per instance: its ops, whether iterations flags it warm-up, its scope notes, its first finding, the iterations row's top finding. */
  instances: { ops: number; warmUp: boolean; notes: string[]; top: string | null; rowTop: string | null }[];
}

const computed = new Map<string, Computed>();

function compute(file: string, name: string): Computed {
  const full = path.join(fixtures, file);
  const db = openRecording(full, { readonly: true });
  try {
    const steady = analyze(db);
    const { columns } = steady;
    const range = analyze(db, { scope: { kind: 'range', name }, columns });
    const iterations = iterationsOf(db, columns, name);
    const sum: Costs = new Map();
    const instances: Computed['instances'] = [];
    for (const row of iterations.rows) {
      const one = analyze(db, { scope: { kind: 'range', name, instance: row.instance }, columns });
      for (const [k, v] of costsOf(one.diagnosis.findings)) sum.set(k, (sum.get(k) ?? 0) + v);
      instances.push({
        ops: one.trace.ops.length,
        warmUp: row.warmUp,
        notes: one.scope.notes ?? [],
        top: one.diagnosis.findings[0]?.kind ?? null,
        rowTop: row.topFinding?.kind ?? null,
      });
    }
    // The menu: the Scope objects the picker sends for "steady state" and "<range> · n×", asked as the app asks.
    const q = new RecordingQuery('agreement', full);
    const menuRange: Scope = parseScope(scopeKey({ kind: 'range', name }));
    const menu = q.findings(menuRange);
    const menuSteady = q.findings(parseScope('steady'));
    const span = range.diagnosis.context.gpuSpan;
    return {
      answers: { steady: costsOf(steady.diagnosis.findings), range: costsOf(range.diagnosis.findings), 'iter-sum': sum, menu: costsOf(menu) },
      menuSteady: costsOf(menuSteady),
      rangeSpanNs: span.end - span.start,
      steady,
      range,
      instances,
    };
  } finally {
    db.close();
  }
}

/** The keys worth comparing: significant in either answer. */
function significant(c: Computed, a: Costs, b: Costs): string[] {
  const floor = SIGNIFICANT * c.rangeSpanNs;
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => (a.get(k) ?? 0) >= floor || (b.get(k) ?? 0) >= floor);
}

/**
 * The keys on which `a` and `b` disagree: a cost more than 10% apart, or
 * two keys ranked the other way round (unless either answer has them within
 * 10% of each other: a tie).
 */
function disagreements(c: Computed, a: Costs, b: Costs): Map<string, string> {
  const out = new Map<string, string>();
  const keys = significant(c, a, b);
  const ms = (v: number | undefined) => `${((v ?? 0) / 1e6).toFixed(2)} ms`;
  for (const k of keys) if (!close(a.get(k) ?? 0, b.get(k) ?? 0)) out.set(k, `${ms(a.get(k))} against ${ms(b.get(k))}`);
  for (const x of keys) {
    for (const y of keys) {
      const [ax, ay, bx, by] = [a.get(x) ?? 0, a.get(y) ?? 0, b.get(x) ?? 0, b.get(y) ?? 0];
      if (ax > ay && by > bx && !close(ax, ay) && !close(bx, by) && !out.has(x) && !out.has(y)) out.set(x, `ranked above ${y} here, below it in the range`);
    }
  }
  return out;
}

function table(): string {
  const lines: string[] = [];
  for (const [file, c] of computed) {
    const floor = SIGNIFICANT * c.rangeSpanNs;
    lines.push(`${file} (findings from ${(floor / 1e6).toFixed(2)} ms: 2% of the range's GPU span)`);
    for (const answer of ['steady', 'range', 'iter-sum', 'menu'] as const) {
      const list = [...c.answers[answer]]
        .filter(([, v]) => v >= floor)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / 1e6).toFixed(2)}`);
      lines.push(`  ${answer.padEnd(8)} ${list.join(', ') || '—'}`);
    }
  }
  return lines.join('\n');
}

afterAll(() => {
  if (process.env.SCOPE_AGREEMENT_TABLE) console.log(table());
});

describe.each(recordings())('$file', ({ file, range }) => {
  let c: Computed;
  beforeAll(() => {
    c = compute(file, range);
    computed.set(file, c);
  }, 120_000);
  const known = (answer: Known['answer']) => KNOWN.filter((k) => k.file === file && k.answer === answer);

  it('the menu asks the same analysis as --range and the steady state', () => {
    expect(c.answers.menu).toEqual(c.answers.range);
    expect(c.menuSteady).toEqual(c.answers.steady);
  });

  it('the iterations share out the range: every operation in one row; a row is what --range NAME#k reports', () => {
    expect(c.instances.reduce((t, r) => t + r.ops, 0)).toBe(c.range.trace.ops.length);
    for (const r of c.instances) expect(r.rowTop).toBe(r.top);
    // A warm-up row is said to be one where its instance is analysed alone.
    for (const r of c.instances)
      expect(
        r.notes.some((n) => n.startsWith('a warm-up instance')),
        `notes: ${r.notes.join(' | ')}`,
      ).toBe(r.warmUp);
  });

  for (const answer of ['steady', 'iter-sum'] as const) {
    it(`${answer} ranks the same findings as the range, at the same cost within 10%`, () => {
      const found = disagreements(c, c.answers[answer], c.answers.range);
      const listed = known(answer);
      for (const k of listed.filter((k) => k.why === 'outside')) {
        // Work outside the instances is a reason only where the range scope says there is some, and while it still differs.
        expect(c.range.scope.notes?.some((n) => n.includes('belong to no instance'))).toBe(true);
        expect(found.has(k.key), `${file}: ${answer} and range agree on ${k.key} now; remove it from KNOWN`).toBe(true);
      }
      // A pending case that agrees again is not an error here (its rule is being changed elsewhere); its it.todo stays until it is removed.
      const unexplained = [...found].filter(([k]) => !listed.some((l) => l.key === k)).map(([k, what]) => `${k}: ${what}`);
      expect(unexplained.join('; '), `${file}: ${answer} against range`).toBe('');
    });
    for (const k of known(answer).filter((k) => k.why === 'pending')) {
      // pending: the cause is in the what-if replay or a finding rule (see `reason`).
      it.todo(`pending: ${answer} against range on ${k.key}: ${k.reason}`);
    }
  }
});
