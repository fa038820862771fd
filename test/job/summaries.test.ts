// A job reported from its ranks' summaries (profiler/job/, issue 29), on the
// real data-parallel jobs recorded on H200s (test/fixtures/ddp: two ranks
// and four, DDP, all-reduces by hand, one rank slowed, FSDP). For the whole
// recording the answers are exactly those of the rank-by-rank analysis of
// the merged file (the same pids, GPUs, row ids and times: the summaries
// are placed as merge places the recordings). For the steady state of the
// ranks summarized together, cut where the job's start-up ends
// (job-cut.ts), exactly those too; of each rank summarized on its own, cut
// after its own start-up, each rank's times are those of its own
// recording's steady state, and the findings and straggler the merged
// recording's (the breakdowns differ by what the early ranks spent in the
// first collectives waiting for the last — up to 19.5 points of overlap in
// the four-rank DDP job).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeJob, type JobAnalysis } from '../../profiler/analysis/diagnosis/job.ts';
import { jobStartup } from '../../profiler/analysis/job-scope.ts';
import { readTraceTables } from '../../profiler/analysis/trace.ts';
import { jobStartupOfFiles } from '../../profiler/job/job-cut.ts';
import { analyzeJobOfSummaries, placeSummaries } from '../../profiler/job/of-summaries.ts';
import { summarizeFiles } from '../../profiler/job/summarize.ts';
import { buildRankSummary, type RankSummary, type SummaryScope } from '../../profiler/job/summary.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { readRankSummary, recordingFingerprint } from '../../profiler/store/rank-summary.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'summaries-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const JOBS = [
  { name: 'two ranks', dir: fixtures, ranks: 2, shapes: ['ddp', 'serial', 'slow'] },
  { name: 'four ranks', dir: path.join(fixtures, 'four-ranks'), ranks: 4, shapes: ['ddp', 'serial', 'slow', 'fsdp'] },
];

/** Copies of a job's recordings (a reader migrates an older file in place; summarize writes into them). */
function copies(dir: string, ranks: number, shape: string): string[] {
  const to = fs.mkdtempSync(path.join(tmp, `${shape}-`));
  return Array.from({ length: ranks }, (_, k) => {
    const file = path.join(to, `${shape}-rank${k}.sqlite`);
    fs.copyFileSync(path.join(dir, `${shape}-rank${k}.sqlite`), file);
    return file;
  });
}

async function mergedAnalysis(files: string[], scope: SummaryScope): Promise<JobAnalysis> {
  const out = path.join(path.dirname(files[0]!), 'merged.sqlite');
  if (!fs.existsSync(out)) mergeRecordings(files, out);
  const db = openRecording(out, { readonly: true });
  try {
    return await analyzeJob(db, { scope: { kind: scope }, workers: 0 });
  } finally {
    db.close();
  }
}

/** String ids differ (a summary keeps only the names it refers to): compared by the names. */
const withoutNameIds = (x: unknown) => JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'nameId' ? undefined : v)));

describe.each(JOBS)('the job of $name', (j) => {
  describe.each(j.shapes)('in the %s shape', (shape) => {
    const files = copies(j.dir, j.ranks, shape);

    it('whole recording: communication, stragglers, findings and GPU span exactly as the merged recording analysed rank by rank', async () => {
      const job = analyzeJobOfSummaries(files.map((f) => buildRankSummary(f, 'whole')));
      const merged = await mergedAnalysis(files, 'whole');
      expect(job.analysis.gpuSpan).toEqual(merged.gpuSpan);
      expect(job.analysis.ranks).toBe(j.ranks);
      expect(withoutNameIds(job.analysis.communication)).toEqual(withoutNameIds(merged.communication));
      expect(job.analysis.stragglers).toEqual(merged.stragglers);
      expect(job.analysis.findings).toEqual(merged.findings);
      expect(job.analysis.scope.windows).toEqual(merged.scope.windows);
      // Placed as merge places them: every recording after the first corrected by its collectives, the residual small.
      expect(job.sources.map((s) => s.clock)).toEqual(['reference', ...new Array(j.ranks - 1).fill('collectives')]);
      for (const s of job.sources) expect(s.residualNs!).toBeLessThan(20_000);
    });

    it("the job's start-up from the ranks' files, placed in the job: the merged recording's, and not where any rank's own ends", () => {
      const placement = placeSummaries(files.map((f) => buildRankSummary(f, 'whole')));
      const ours = jobStartupOfFiles(files.map((file, i) => ({ file, shift: placement.shifts[i]!, correctionNs: placement.alignment[i]!.correctionNs })));
      const out = path.join(path.dirname(files[0]!), 'merged.sqlite');
      if (!fs.existsSync(out)) mergeRecordings(files, out);
      const db = openRecording(out, { readonly: true });
      const tables = readTraceTables(db);
      const theirs = jobStartup(db, out, tables.meta, tables.strings).startup;
      db.close();
      expect(theirs).not.toBeNull();
      expect(ours).toEqual(theirs);
    });

    it('steady state of the ranks summarized together, cut where the job started: exactly the merged recording analysed rank by rank', async () => {
      const summarized = await summarizeFiles(files, { workers: 0, force: true });
      const job = analyzeJobOfSummaries(summarized.map((r) => r.summaries['steady-state']!));
      const merged = await mergedAnalysis(files, 'steady-state');
      expect(job.analysis.scope).toEqual(merged.scope);
      expect(job.analysis.scope.label).toMatch(/^steady state, after .* of start-up$/);
      expect(job.analysis.gpuSpan).toEqual(merged.gpuSpan);
      expect(withoutNameIds(job.analysis.communication)).toEqual(withoutNameIds(merged.communication));
      expect(job.analysis.stragglers).toEqual(merged.stragglers);
      expect(job.analysis.findings).toEqual(merged.findings);
    });

    it("steady state, each rank after its own start-up: each rank's times are its own recording's, the findings and straggler the merged recording's", async () => {
      const summaries = files.map((f) => buildRankSummary(f, 'steady-state'));
      const job = analyzeJobOfSummaries(summaries);
      const merged = await mergedAnalysis(files, 'steady-state');
      const kinds = (a: JobAnalysis) => a.findings.map((f) => `${f.kind} ${f.pid} ${f.severity}`).sort();
      expect(kinds(job.analysis)).toEqual(kinds(merged));
      expect(job.analysis.stragglers.straggler?.pid ?? null).toBe(merged.stragglers.straggler?.pid ?? null);
      expect(job.analysis.communication.ranks.map((r) => r.pid)).toEqual(merged.communication.ranks.map((r) => r.pid));
      // Each rank's compute, communication and hidden time: its own recording's steady state, analysed alone.
      for (const [k, file] of files.entries()) {
        const db = openRecording(file, { readonly: true });
        const own = await analyzeJob(db, { scope: { kind: 'steady-state' }, workers: 0 }).finally(() => db.close());
        const times = (r: JobAnalysis['communication']['ranks'][number]) => [r.total.computeNs, r.total.communicationNs, r.total.hiddenNs];
        expect(times(job.analysis.communication.ranks[k]!)).toEqual(times(own.communication.ranks[0]!));
      }
      expect(job.analysis.scope.label).toMatch(/^steady state, each rank after its own start-up/);
    });
  });
});

describe('summaries kept in the recordings', () => {
  const files = copies(fixtures, 2, 'slow');

  it('summarize stores them; the next asks read them; a recording that changed, or a summary of another version, is built again', async () => {
    const first = await summarizeFiles(files, { store: true, workers: 0 });
    expect(first.map((r) => [r.from, r.stored])).toEqual([
      ['built', true],
      ['built', true],
    ]);
    const again = await summarizeFiles(files, { workers: 0 });
    expect(again.map((r) => r.from)).toEqual(['stored', 'stored']);
    expect(again[0]!.summaries.whole).toEqual(first[0]!.summaries.whole);
    // Their steady states stored as cut for this job (these recordings): a report reads them as the merged file's scope.
    const job = again.map((r) => r.summaries['steady-state']!);
    const fingerprints = job.map((s) => s.fingerprint).sort();
    expect(job.map((s) => s.jobCut?.job)).toEqual([fingerprints, fingerprints]);
    const scope = analyzeJobOfSummaries(job).analysis.scope;
    expect(scope.label).toMatch(/^steady state, after .* of start-up$/);
    // The files in another order: the same job, the same cut (placed from the other rank's clock), nothing built again.
    const swapped = await summarizeFiles([...files].reverse(), { workers: 0, store: true });
    expect(swapped.map((r) => r.from)).toEqual(['stored', 'stored']);
    const reversed = analyzeJobOfSummaries(swapped.map((r) => r.summaries['steady-state']!)).analysis.scope;
    expect(reversed.label).toBe(scope.label);
    expect(reversed.startup!.endNs - reversed.startup!.startNs).toBe(scope.startup!.endNs - scope.startup!.startNs);
    // One rank alone is not that job: a report of it cuts it again, where its own start-up ends (not stored).
    const alone = (await summarizeFiles([files[0]!], { workers: 0 }))[0]!;
    expect(alone.from).toBe('built');
    expect(alone.summaries['steady-state']!.jobCut?.job).toEqual([job[0]!.fingerprint]);
    expect(alone.summaries['steady-state']!.startup).toEqual(buildRankSummary(files[0]!, 'steady-state').startup);
    // What is stored stays the job's.
    const kept = openRecording(files[0]!, { readonly: true });
    expect((JSON.parse(readRankSummary(kept, 'steady-state')!) as RankSummary).jobCut?.job).toEqual(fingerprints);
    kept.close();

    // Another recording under the same name: its fingerprint (origin, last ids) differs.
    const db = openRecording(files[0]!);
    db.prepare('DELETE FROM kernels WHERE id = (SELECT max(id) FROM kernels)').run();
    db.close();
    // Another StreamScope wrote the other's.
    const other = openRecording(files[1]!);
    other.prepare("UPDATE rank_summary SET built_with = '0.0.1'").run();
    expect(readRankSummary(other, 'whole')).toBeNull();
    other.close();
    const rebuilt = await summarizeFiles(files, { workers: 0 });
    expect(rebuilt.map((r) => r.from)).toEqual(['built', 'built']);
    // Before: not stored by a report (read-only use).
    expect(rebuilt.map((r) => r.stored)).toEqual([false, false]);
  });

  it("the same recording twice is no job: each summarized with its own cut, the job's report refusing them by name", async () => {
    const twin = path.join(path.dirname(files[0]!), 'twin.sqlite');
    fs.copyFileSync(files[0]!, twin);
    const both = await summarizeFiles([files[0]!, twin], { workers: 0, force: true });
    expect(both.map((r) => r.summaries['steady-state']!.startup)).toEqual([
      buildRankSummary(files[0]!, 'steady-state').startup,
      buildRankSummary(twin, 'steady-state').startup,
    ]);
    expect(() => analyzeJobOfSummaries(both.map((r) => r.summaries['steady-state']!))).toThrow(/twin\.sqlite: holds the same recording as/);
  });

  it("the recorders' summaries (each rank's own cut): a report cuts every rank where the job started, as the merged file, without storing it", async () => {
    // Four-rank DDP: a rank's overlap differed from the merged file's by up to 19.5 points with its own cut.
    const ranks = copies(path.join(fixtures, 'four-ranks'), 4, 'ddp');
    // As the recorder stores them: each rank summarized alone, when it ends.
    for (const file of ranks) await summarizeFiles([file], { store: true, workers: 0, findings: true });
    const stored = (file: string) => {
      const db = openRecording(file, { readonly: true });
      try {
        return readRankSummary(db, 'steady-state');
      } finally {
        db.close();
      }
    };
    const before = ranks.map(stored);
    const report = await summarizeFiles(ranks, { scopes: ['steady-state'], workers: 0 });
    expect(report.map((r) => [r.from, r.recut, r.stored])).toEqual(new Array(4).fill(['built', true, false]));
    const job = analyzeJobOfSummaries(report.map((r) => r.summaries['steady-state']!));
    const merged = await mergedAnalysis(ranks, 'steady-state');
    expect(job.analysis.scope).toEqual(merged.scope);
    expect(withoutNameIds(job.analysis.communication)).toEqual(withoutNameIds(merged.communication));
    // What the recorders stored is as it was: `summarize` of the job's files keeps the job's cut.
    expect(ranks.map(stored)).toEqual(before);
    const kept = await summarizeFiles(ranks, { store: true, workers: 0 });
    expect(kept.map((r) => r.recut)).toEqual(new Array(4).fill(true));
    const next = await summarizeFiles(ranks, { scopes: ['steady-state'], workers: 0 });
    expect(next.map((r) => [r.from, r.recut])).toEqual(new Array(4).fill(['stored', false]));
  });

  it('on worker threads: the same summaries as built here', async () => {
    const here = await summarizeFiles(files, { workers: 0, force: true, scopes: ['whole'] });
    const there = await summarizeFiles(files, { workers: 2, force: true, scopes: ['whole'] });
    const strip = (r: (typeof here)[number]) => ({ ...r.summaries.whole!, ms: 0 });
    expect(there.map(strip)).toEqual(here.map(strip));
  });

  it('a merged job is refused, naming the file and what to summarize instead', async () => {
    const merged = path.join(path.dirname(files[0]!), 'job.sqlite');
    mergeRecordings(files, merged);
    await expect(summarizeFiles([merged], { workers: 0 })).rejects.toThrow(/job\.sqlite: is a merged job: summarize the recordings of its ranks/);
  });
});

describe('summaries written by the recorder (test/fixtures/ddp/summarized: the README recipe run on an H200)', () => {
  const recorded = [0, 1].map((k) => path.resolve(fixtures, `summarized/run-vm-${k}.sqlite`));

  it("each rank's recording holds both scopes' summaries, of that very recording; the job from them names both ranks", () => {
    for (const file of recorded) {
      const db = openRecording(file, { readonly: true });
      try {
        const rows = db.prepare('SELECT scope, fingerprint, payload FROM rank_summary ORDER BY scope').all() as {
          scope: string;
          fingerprint: string;
          payload: string;
        }[];
        expect(rows.map((r) => r.scope)).toEqual(['steady-state', 'whole']);
        // Built from this recording as it is (another, or one grown since, has another fingerprint).
        for (const r of rows) expect(r.fingerprint).toBe(recordingFingerprint(db));
      } finally {
        db.close();
      }
    }
    const stored = recorded.map((file) => {
      const db = openRecording(file, { readonly: true });
      try {
        return JSON.parse(db.prepare("SELECT payload FROM rank_summary WHERE scope = 'steady-state'").pluck().get() as string) as RankSummary;
      } finally {
        db.close();
      }
    });
    const job = analyzeJobOfSummaries(stored);
    expect(job.analysis.communication.ranks.map((r) => r.rank)).toEqual([0, 1]);
    expect(job.sources.map((s) => s.clock)).toEqual(['reference', 'collectives']);
    // What the recorder stored is what summarize builds from the file now (but the time it took, and what the
    // format added since: the iterations, format 2), and a summary of the older format is not read as current.
    const rebuilt = buildRankSummary(recorded[0]!, 'steady-state');
    expect(stored[0]!.format).toBe(1);
    expect({ ...rebuilt, file: '', ms: 0, format: 1, iterations: undefined, fingerprint: undefined }).toEqual({ ...stored[0]!, file: '', ms: 0 });
    expect(rebuilt.iterations?.rows.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    const db = openRecording(recorded[0]!, { readonly: true });
    expect(readRankSummary(db, 'steady-state')).toBeNull();
    db.close();
  });
});
