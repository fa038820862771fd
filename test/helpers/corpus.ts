// The bug/fix corpus (test/fixtures/corpus/<pair>/: bug.sqlite, fix.sqlite,
// the program, expected.json): each pair a common mistake and its fix,
// recorded on the GPU machine. One evaluation of a pair, shared by the
// corpus test (test/analysis/corpus.test.ts) and the benchmark's table
// (`npm run bench -- --only corpus`): the diagnosis of bug.sqlite, its top
// finding, and that finding's what-if against the GPU span measured in
// fix.sqlite — the span `diff bug fix` reports as B's.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import type { Finding, FixId } from '../../profiler/contract/findings.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { median } from '../../bench/stats.ts';

export const CORPUS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/corpus');

/** What a pair's expected.json says. */
export interface Expected {
  /** The fix that must lead bug.sqlite's diagnosis (its top finding's fixId). */
  fixId: FixId;
  /** Largest |predicted − measured| / measured accepted for this pair (default CORPUS_WORST). */
  tolerance?: number;
}

/** The corpus's targets (issue 25): the what-if's median error and its worst. */
export const CORPUS_MEDIAN = 0.1;
export const CORPUS_WORST = 0.25;

export interface Pair {
  name: string;
  dir: string;
  expected: Expected;
}

export function corpusPairs(dir = CORPUS_DIR): Pair[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, 'expected.json')))
    .map((e) => ({
      name: e.name,
      dir: path.join(dir, e.name),
      expected: JSON.parse(fs.readFileSync(path.join(dir, e.name, 'expected.json'), 'utf8')) as Expected,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface PairResult {
  pair: string;
  expectedFix: FixId;
  /** bug.sqlite's top finding (the diagnosis' first). */
  top: Finding | undefined;
  /** Its what-if's predicted GPU span, or null where it has none. */
  predictedNs: number | null;
  /** bug.sqlite's GPU span (steady state) and fix.sqlite's, as `diff bug fix` reports them. */
  bugSpanNs: number;
  fixSpanNs: number;
  /** (predicted − measured) / measured; null without a prediction. */
  error: number | null;
  /** Each recording's process wall time (meta duration). */
  bugWallNs: number | null;
  fixWallNs: number | null;
  analyses: { bug: Analysis; fix: Analysis };
}

export function evaluatePair(p: Pair): PairResult {
  const files = { bug: path.join(p.dir, 'bug.sqlite'), fix: path.join(p.dir, 'fix.sqlite') };
  const dbs = { bug: openRecording(files.bug, { readonly: true }), fix: openRecording(files.fix, { readonly: true }) };
  try {
    const bug = analyze(dbs.bug, { file: files.bug });
    const fix = analyze(dbs.fix, { file: files.fix });
    const diff = diffRecordings(files.bug, bug, files.fix, fix);
    const top = bug.diagnosis.findings[0];
    const predictedNs = top?.whatIf?.predictedNs ?? null;
    const fixSpanNs = diff.gpuSpanNs.b!;
    return {
      pair: p.name,
      expectedFix: p.expected.fixId,
      top,
      predictedNs,
      bugSpanNs: diff.gpuSpanNs.a!,
      fixSpanNs,
      error: predictedNs === null ? null : (predictedNs - fixSpanNs) / fixSpanNs,
      bugWallNs: diff.durationNs.a,
      fixWallNs: diff.durationNs.b,
      analyses: { bug, fix },
    };
  } finally {
    dbs.bug.close();
    dbs.fix.close();
  }
}

/** The per-pair table, as the benchmark prints it and bench/RESULTS.md quotes it. */
export function corpusTable(results: PairResult[]): string[] {
  const ms = (ns: number | null) => (ns === null ? '-' : (ns / 1e6).toFixed(1));
  const rows = results.map((r) => [
    r.pair,
    `${r.top ? `${r.top.kind}/${r.top.fixId ?? '-'}` : 'none'}${r.top?.fixId === r.expectedFix ? '' : ` (want ${r.expectedFix})`}`,
    ms(r.bugSpanNs),
    ms(r.predictedNs),
    ms(r.fixSpanNs),
    r.error === null ? '-' : `${r.error >= 0 ? '+' : ''}${(r.error * 100).toFixed(1)}%`,
  ]);
  const head = ['pair', 'top finding / fix', 'bug ms', 'predicted ms', 'fix measured ms', 'error'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((x, c) => (c >= 2 ? x.padStart(widths[c]!) : x.padEnd(widths[c]!))).join('  ');
  const errors = results.filter((r) => r.error !== null).map((r) => Math.abs(r.error!));
  const named = results.filter((r) => r.top?.fixId === r.expectedFix).length;
  return [
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    `top finding names the fix: ${named}/${results.length}; what-if error |median| ${(median(errors) * 100).toFixed(1)}%, worst ${(Math.max(...errors) * 100).toFixed(1)}% (targets ${CORPUS_MEDIAN * 100}%, ${CORPUS_WORST * 100}%)`,
  ];
}
