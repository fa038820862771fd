// Each rank's own top findings in its summary (`summarize --findings`,
// issue 29: a summary carries "its top findings") and in the report of the
// job from its ranks' summaries, on the DDP jobs recorded on H200s
// (test/fixtures/ddp: two ranks, and four). A rank's top findings are its
// own file's: `report FILE --json`'s worst five, the same kinds, titles,
// costs and what-ifs, and how many there were in all. In the job's report
// they are placed as merge places the recordings: the merged file's pids,
// GPUs, evidence rows and times, each title starting with whose it is.
//
// A rank's steady state in its summary is cut where the job's start-up
// ended (the ranks summarized together: job-cut.ts), so its findings for the
// steady state are its own diagnosis cut there, which `report FILE` (cut
// after the rank's own start-up) is not: they are held to analyze() given
// that start-up.
//
// What differs from the merged recording's own findings of that rank (its
// whole scope): the costs of findings with a
// what-if — a merged file's replay moves every rank's calls of the fix at
// once and gives each finding naming it the whole saving, where the rank's
// own replay moves its calls alone — and the titles of the kinds that name
// their GPU themselves (idle gaps, low utilization): the rank's file named
// it "GPU 0", so the job's report puts whose it is before it ("Rank 1 (vm,
// GPU 1): GPU 1 idle…"), where the merged file's rule wrote "rank 1 (vm,
// GPU 1) idle…"; and an idle gap's calls "the host was in" meanwhile: the
// merged file's rule reads every rank's calls, and on the four-rank job
// names rank 3's cuMemExportToShareableHandle for rank 0's gap, where the
// rank's own file names its own (same name, same time). Every other field —
// kind, the rule's own cost, pid, GPU, evidence rows and window — is the
// merged file's.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../profiler/contract/findings.ts';
import { RANK_TOP_FINDINGS } from '../../profiler/contract/job.ts';
import { summarizeRecordedRank } from '../../profiler/cli/job-commands.ts';
import { analyzeJobOfSummaries } from '../../profiler/job/of-summaries.ts';
import { summarizeFiles } from '../../profiler/job/summarize.ts';
import { buildRankSummaries, SUMMARY_SCOPES, type RankSummary, type SummaryScope } from '../../profiler/job/summary.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import type { JobReport, Report } from '../../profiler/report/report.ts';
import { tempDir } from '../helpers/native.ts';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { openRecording } from '../../profiler/store/database.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return { stdout: r.stdout, stderr: r.stderr };
};
const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');
const tmp = tempDir('rank-findings');
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Copies of the job's recordings: summarize writes into them (never into test/fixtures). */
function copies(dir: string, ranks: number, name: string): string[] {
  const to = fs.mkdtempSync(path.join(tmp, `${name}-`));
  return Array.from({ length: ranks }, (_, k) => {
    const file = path.join(to, `ddp-rank${k}.sqlite`);
    fs.copyFileSync(path.join(dir, `ddp-rank${k}.sqlite`), file);
    return file;
  });
}

const scopeArgs = (scope: SummaryScope) => (scope === 'whole' ? ['--whole'] : []);
const PREFIX = /^Rank (\d+) \(vm, GPU (\d+)\): /;

const JOBS = [
  { name: 'two-rank', dir: fixtures, ranks: 2 },
  { name: 'four-rank', dir: path.join(fixtures, 'four-ranks'), ranks: 4 },
];

describe.each(JOBS)('the $name DDP job', (j) => {
  const files = copies(j.dir, j.ranks, j.name);
  let summaries: Record<SummaryScope, RankSummary[]>;

  it("summarize --findings: each summary holds its rank's worst findings as its own report --json lists them, and how many", async () => {
    // One worker thread: the path `summarize` takes (the recorder's summary is built on the calling thread).
    const built = await summarizeFiles(files, { store: true, force: true, findings: true, workers: 1 });
    expect(built.map((b) => [b.from, b.stored])).toEqual(files.map(() => ['built', true]));
    // Read back as stored: what a report reads.
    const stored = await summarizeFiles(files, { findings: true });
    expect(stored.map((s) => s.from)).toEqual(files.map(() => 'stored'));
    summaries = Object.fromEntries(SUMMARY_SCOPES.map((scope) => [scope, stored.map((s) => s.summaries[scope]!)])) as typeof summaries;
    // Both scopes of the two-rank job, the steady state (report's default) of the four ranks: a report is a process each.
    const scopes: SummaryScope[] = j.ranks === 2 ? ['whole', 'steady-state'] : ['steady-state'];
    for (const scope of scopes) {
      files.forEach((file, k) => {
        const summary = summaries[scope][k]!;
        let own: Finding[];
        if (scope === 'whole') own = (JSON.parse(run(['report', file, '--json', ...scopeArgs(scope)]).stdout) as Report).findings;
        else {
          // Cut for the job: the rank's own diagnosis, its steady state after the job's start-up.
          expect(summary.jobCut).toBeDefined();
          const db = openRecording(file, { readonly: true });
          own = analyze(db, { scope: { kind: 'steady-state' }, startup: summary.startup }).diagnosis.findings;
          db.close();
        }
        const mine = summary.findings!;
        expect(own.length).toBeGreaterThan(RANK_TOP_FINDINGS);
        expect(mine.total).toBe(own.length);
        expect(mine.top).toEqual(own.slice(0, RANK_TOP_FINDINGS));
        // Worst first, as the report orders them: not what the rules' order would give.
        expect(mine.top.map((f) => f.kind)).toContain('low-utilization');
      });
    }
  });

  it("the job's report from summaries: each rank's findings after the job's, in the merged file's ids, named by rank", async () => {
    const merged = path.join(path.dirname(files[0]!), 'merged.sqlite');
    mergeRecordings(files, merged);
    const mergedFindings = (JSON.parse(run(['report', merged, '--whole', '--json']).stdout) as Report).findings;
    const job = analyzeJobOfSummaries(summaries.whole);
    expect(job.rankFindings.map((r) => [r.file, r.ranks, r.total])).toEqual(files.map((f, k) => [f, [k], summaries.whole[k]!.findings!.total]));
    job.rankFindings.forEach((r, k) => {
      const own = summaries.whole[k]!.findings!.top;
      expect(r.findings!.length).toBe(own.length);
      r.findings!.forEach((f, n) => {
        const mine = own[n]!;
        // Named by its rank, its own title after it; its numbers the rank's own.
        const [, rank, gpu] = PREFIX.exec(f.title) ?? [];
        expect([rank, f.title.replace(PREFIX, '')]).toEqual([String(k), mine.title]);
        expect([f.kind, f.severity, f.costNs, f.whatIf]).toEqual([mine.kind, mine.severity, mine.costNs, mine.whatIf]);
        // The merged file's finding of that rank: the same pid, GPU, evidence rows and times (the job's ids and clock).
        const same = mergedFindings.filter((m) => m.kind === f.kind && m.pid === f.pid && m.deviceId === f.deviceId && sameEvidence(m, f));
        expect(same, f.title).toHaveLength(1);
        const m = same[0]!;
        expect(m.ruleCostNs ?? m.costNs).toBe(f.ruleCostNs ?? f.costNs);
        if (m.title !== f.title) {
          // A kind that names its GPU itself: the merged rule named it with its rank, the rank's own file "GPU n".
          expect(m.title.startsWith(`rank ${k} (vm, GPU ${gpu})`), m.title).toBe(true);
          expect(mine.title.startsWith(`GPU ${gpu} `), mine.title).toBe(true);
        }
      });
      // Not the rank's own ids and times: every rank after the first has its rows' ids moved.
      if (k > 0) expect(r.findings!.some((f, n) => !sameEvidence(f, own[n]!))).toBe(true);
    });
  });

  it("the report, text and JSON: the job's findings, then each rank's with its counts and its own report", () => {
    const report = JSON.parse(run(['report', ...files, '--json']).stdout) as JobReport;
    expect(report.rankFindings!.map((r) => r.findings!.map((f) => f.title))).toEqual(
      analyzeJobOfSummaries(summaries['steady-state']).rankFindings.map((r) => r.findings!.map((f) => f.title)),
    );
    const text = run(['report', ...files]).stdout;
    const across = text.indexOf('Findings across ranks');
    const own = text.indexOf("Each rank's own top findings");
    expect(across).toBeGreaterThan(0);
    expect(own).toBeGreaterThan(across);
    files.forEach((file, k) => {
      const { total } = summaries['steady-state'][k]!.findings!;
      expect(text).toContain(`  ${RANK_TOP_FINDINGS} of ${total} findings of rank ${k}; its own report: streamscope report ${file}\n`);
    });
    expect(text.slice(own).match(/^ {4}(WARN|info|ERROR)\s.*$/gm)!.length).toBe(RANK_TOP_FINDINGS * j.ranks);
  });
});

describe('summaries without findings', () => {
  const files = copies(fixtures, 2, 'plain');

  it('plain summarize holds none and the report says how to get them; --findings builds them again; a plain one keeps them', async () => {
    const first = run(['summarize', '--json', ...files])
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { from: string; findings: boolean });
    expect(first.map((x) => [x.from, x.findings])).toEqual(files.map(() => ['built', false]));
    const plain = await summarizeFiles(files, { scopes: ['steady-state'] });
    expect(plain.map((p) => [p.from, p.summaries['steady-state']!.findings ?? null])).toEqual(files.map(() => ['stored', null]));
    const report = JSON.parse(run(['report', ...files, '--json']).stdout) as JobReport;
    expect(report.rankFindings!.map((r) => [r.findings, r.total])).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(run(['report', ...files]).stdout).toContain(
      `Each rank's own findings: not in these summaries (streamscope summarize --findings ${files.join(' ')} puts each rank's top findings in its summary)`,
    );

    // Stored without findings: not current for a --findings ask.
    const asked = run(['summarize', '--findings', ...files]).stderr;
    for (const file of files) expect(asked).toContain(`${file}: summarized with its top findings in `);
    // With them: current for a plain ask too, kept.
    const kept = run(['summarize', ...files]).stderr;
    for (const file of files) expect(kept).toContain(`${file}: its summary is current, with its top findings (kept; --force builds it again)`);
    const json = run(['summarize', '--json', ...files])
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { from: string; findings: boolean });
    expect(json.map((x) => [x.from, x.findings])).toEqual(files.map(() => ['stored', true]));
    const after = JSON.parse(run(['report', ...files, '--json']).stdout) as JobReport;
    expect(after.rankFindings!.map((r) => r.findings!.length)).toEqual([RANK_TOP_FINDINGS, RANK_TOP_FINDINGS]);

    // One built again without them: its rank's listed, the other said.
    run(['summarize', '--force', files[1]!]);
    const mixed = run(['report', ...files]).stdout;
    expect(mixed).toContain(`of rank 0; its own report: streamscope report ${files[0]}\n`);
    expect(mixed).toContain(`  1 of 2 summaries hold no findings: streamscope summarize --findings ${files[1]} puts each rank's top findings in its summary\n`);
  });

  it("the summary `record` writes at a rank's end holds its top findings", async () => {
    const [file] = copies(fixtures, 1, 'recorded');
    expect(await summarizeRecordedRank(file!)).toMatch(/^summarized rank 0 with its top findings for the job's report in [\d.]+ s/);
    const [stored] = await summarizeFiles([file!], { findings: true });
    expect(stored!.from).toBe('stored');
    expect(stored!.summaries.whole!.findings!.top).toHaveLength(RANK_TOP_FINDINGS);
  });
});

describe('ranks without start-up (generated)', () => {
  // The steady state of a rank without start-up is its whole recording (summary.ts topFindings diagnoses it once).
  it("each scope's top findings are its own report's, whole and steady state", async () => {
    const files = generateRanks(fs.mkdtempSync(path.join(tmp, 'no-startup-')), 2, 20_000, 4).map((g) => g.file);
    const [built] = await summarizeFiles(files.slice(0, 1), { store: true, force: true, findings: true, workers: 0 });
    for (const scope of SUMMARY_SCOPES) {
      const summary = built!.summaries[scope]!;
      expect(summary.startup, scope).toBeNull();
      const own = (JSON.parse(run(['report', files[0]!, '--json', ...scopeArgs(scope)]).stdout) as Report).findings;
      expect(summary.findings!.total).toBe(own.length);
      expect(summary.findings!.top).toEqual(own.slice(0, RANK_TOP_FINDINGS));
    }
  });
});

/**
 * The same evidence: rows, and window to the nanosecond (a window's end is a sum of fractions of ns, shifted after it
 * was summed here and before in a merged file: 9492482998.000002 vs 9492482998); an idle gap's calls aside (the merged
 * file's are any rank's: above).
 */
function sameEvidence(a: Finding, b: Finding): boolean {
  const rows = (f: Finding) => JSON.stringify({ ...f.evidence, window: null, apiCalls: f.kind === 'gpu-idle-gap' ? [] : f.evidence.apiCalls });
  const near = (x: number, y: number) => Math.abs(x - y) < 1;
  return rows(a) === rows(b) && near(a.evidence.window.start, b.evidence.window.start) && near(a.evidence.window.end, b.evidence.window.end);
}

describe('a recording of several ranks (two processes on two GPUs under one recorder: nccl-overlap-h200x2)', () => {
  it("with its findings: each part's rows taken from the diagnosis's load, the same summaries as read from the file; the findings its own report's", () => {
    const file = path.join(tmp, 'two-ranks-one-file.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/recordings/nccl-overlap-h200x2.sqlite'), file);
    const plain = buildRankSummaries(file, SUMMARY_SCOPES, 0);
    expect(plain[0]!.parts.length).toBeGreaterThan(1);
    const withFindings = buildRankSummaries(file, SUMMARY_SCOPES, 0, undefined, true);
    withFindings.forEach((s, k) => {
      expect({ ...s, ms: 0, findings: undefined }).toEqual({ ...plain[k]!, ms: 0 });
      const own = (JSON.parse(run(['report', file, '--json', ...scopeArgs(s.scope)]).stdout) as Report).findings;
      expect(s.findings!.top).toEqual(own.slice(0, RANK_TOP_FINDINGS));
      expect(s.findings!.total).toBe(own.length);
    });
  });
});
