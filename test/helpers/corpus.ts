// The bug/fix corpus (test/fixtures/corpus/<pair>/: bug.sqlite, fix.sqlite,
// the program, expected.json; round-N/: the same two recorded again on
// another day): each pair a common mistake and its fix, recorded on the GPU
// machine. One evaluation of a pair's round, shared by the corpus test
// (test/analysis/corpus.test.ts) and the benchmark's table (`npm run bench
// -- --only corpus`): the diagnosis of bug.sqlite, its top finding, and the
// what-if of the finding naming the pair's fix against the GPU span
// measured in fix.sqlite — the span `diff bug fix` reports as B's.
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
  /** 1: the recordings beside the program; N: those in round-N/, the same programs recorded again. */
  round: number;
  /** The folder of the round's bug.sqlite and fix.sqlite. */
  dir: string;
  expected: Expected;
}

/** Every round of every pair, by pair then round. */
export function corpusPairs(dir = CORPUS_DIR): Pair[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, 'expected.json')))
    .flatMap((e) => {
      const pairDir = path.join(dir, e.name);
      const expected = JSON.parse(fs.readFileSync(path.join(pairDir, 'expected.json'), 'utf8')) as Expected;
      const rounds = fs
        .readdirSync(pairDir)
        .flatMap((f) => (/^round-\d+$/.test(f) && fs.existsSync(path.join(pairDir, f, 'bug.sqlite')) ? [Number(f.slice(6))] : []));
      return [
        { name: e.name, round: 1, dir: pairDir, expected },
        ...rounds.map((round) => ({ name: e.name, round, dir: path.join(pairDir, `round-${round}`), expected })),
      ];
    })
    .sort((a, b) => a.name.localeCompare(b.name) || a.round - b.round);
}

export interface PairResult {
  pair: string;
  round: number;
  expectedFix: FixId;
  /** bug.sqlite's top finding (the diagnosis' first). */
  top: Finding | undefined;
  /** bug.sqlite's first finding naming the pair's fix (the top, where the diagnosis is right). */
  fixFinding: Finding | undefined;
  /**
   * Where the top names another fix: whether that is a second mistake of the program — a cause the fixed run
   * still has (fix.sqlite's diagnosis names the same fix, as a warning or worse) — and the pair's fix leads the causes
   * the fix took away. Both recordings say so; the program makes two mistakes, and which costs more varies.
   */
  secondMistake: boolean;
  /** The fix finding's what-if: its predicted GPU span, or null where it has none. */
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
    const findings = bug.diagnosis.findings;
    const top = findings[0];
    const fixFinding = findings.find((f) => f.fixId === p.expected.fixId);
    // A cause the fixed run still has: found there too, saving enough to be a warning or worse (2% of its span: severityByCost).
    const stillThere = new Set(fix.diagnosis.findings.flatMap((f) => (f.fixId && f.whatIf && f.severity !== 'info' ? [f.fixId] : [])));
    const firstRemoved = findings.find((f) => f.fixId && !stillThere.has(f.fixId));
    const secondMistake = top?.fixId !== p.expected.fixId && top?.fixId !== undefined && stillThere.has(top.fixId) && firstRemoved?.fixId === p.expected.fixId;
    const predictedNs = fixFinding?.whatIf?.predictedNs ?? null;
    const fixSpanNs = diff.gpuSpanNs.b!;
    return {
      pair: p.name,
      round: p.round,
      expectedFix: p.expected.fixId,
      top,
      fixFinding,
      secondMistake,
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
    String(r.round),
    `${r.top ? `${r.top.kind}/${r.top.fixId ?? '-'}` : 'none'}${r.top?.fixId === r.expectedFix ? '' : r.secondMistake ? ` (a second mistake; then ${r.expectedFix})` : ` (want ${r.expectedFix})`}`,
    ms(r.bugSpanNs),
    ms(r.predictedNs),
    ms(r.fixSpanNs),
    r.error === null ? '-' : `${r.error >= 0 ? '+' : ''}${(r.error * 100).toFixed(1)}%`,
  ]);
  const head = ['pair', 'round', 'top finding / fix', 'bug ms', 'predicted ms', 'fix measured ms', 'error'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((x, c) => (c >= 3 || c === 1 ? x.padStart(widths[c]!) : x.padEnd(widths[c]!))).join('  ');
  const errors = results.filter((r) => r.error !== null).map((r) => Math.abs(r.error!));
  const named = results.filter((r) => r.top?.fixId === r.expectedFix).length;
  const second = results.filter((r) => r.secondMistake).length;
  const rounds = new Set(results.map((r) => r.round)).size;
  return [
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    `${results.length} recordings of pairs (${rounds} round${rounds > 1 ? 's' : ''}): top finding names the fix ${named}/${results.length}${second > 0 ? `, a second mistake the fixed run still has before it ${second}` : ''}; what-if of the fix's finding: error |median| ${(median(errors) * 100).toFixed(1)}%, worst ${(Math.max(...errors) * 100).toFixed(1)}% (targets ${CORPUS_MEDIAN * 100}%, ${CORPUS_WORST * 100}%)`,
  ];
}
