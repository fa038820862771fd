// A job of rank files opened from their summaries, without merging
// (profiler/query/job-query.ts, issue 29), against the merged recording of
// the same files in the same order: the real two-rank DDP job recorded on
// two H100s (test/fixtures/ddp/ddp-rank*.sqlite: no stored summary, built on
// open) and the one whose recorders stored their summaries on an H200
// (ddp/summarized: both ranks on one GPU). Copies: reading an older schema
// migrates a file in place.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { jobViewOf, JOB_VIEW_MERGED_UP_TO } from '../../profiler/contract/job.ts';
import { analyzeJobOfSummaries } from '../../profiler/job/of-summaries.ts';
import { summarizeFiles } from '../../profiler/job/summarize.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { JobQuery } from '../../profiler/query/job-query.ts';
import { READ_ON_WORKERS_FROM } from '../../profiler/query/open-read.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { SessionRegistry } from '../../profiler/query/session.ts';
import { tempDir } from '../helpers/native.ts';

const ddp = path.resolve(import.meta.dirname, '../fixtures/ddp');
const dir = tempDir('job-query');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Copies of `files` in a folder of their own, and their merged recording. */
function job(name: string, files: string[]): { ranks: string[]; merged: string } {
  const d = path.join(dir, name);
  fs.mkdirSync(d, { recursive: true });
  const ranks = files.map((f) => {
    const to = path.join(d, path.basename(f));
    fs.copyFileSync(f, to);
    return to;
  });
  const merged = path.join(d, 'merged.sqlite');
  mergeRecordings(ranks, merged);
  return { ranks, merged };
}

const JOBS = {
  'ddp (two H100s, summaries built on open)': [path.join(ddp, 'ddp-rank0.sqlite'), path.join(ddp, 'ddp-rank1.sqlite')],
  'summarized by the recorders (one H200)': [path.join(ddp, 'summarized/run-vm-0.sqlite'), path.join(ddp, 'summarized/run-vm-1.sqlite')],
  // Two nodes of two H200s each, a recording per node (torchrun recorded with its ranks: rows before the origin).
  'nodes (two H200 nodes of two ranks each)': [
    path.resolve(import.meta.dirname, '../fixtures/recordings/nccl-node0-h200x2.sqlite'),
    path.resolve(import.meta.dirname, '../fixtures/recordings/nccl-node1-h200x2.sqlite'),
  ],
};

describe('which view a job opens in', () => {
  it(`merged up to ${JOB_VIEW_MERGED_UP_TO} files, from the summaries above; --job-view decides either way`, () => {
    expect(jobViewOf(2)).toBe('merged');
    expect(jobViewOf(JOB_VIEW_MERGED_UP_TO)).toBe('merged');
    expect(jobViewOf(JOB_VIEW_MERGED_UP_TO + 1)).toBe('summaries');
    expect(jobViewOf(1024, 'merged')).toBe('merged');
    expect(jobViewOf(2, 'summaries')).toBe('summaries');
  });
});

describe.each(Object.entries(JOBS))('a job from its ranks summaries: %s', (name, files) => {
  const { ranks, merged } = job(name.split(' ')[0]!, files);
  let q: JobQuery;
  let m: RecordingQuery;
  afterAll(() => {
    q?.close();
    m?.close();
  });

  it("has the merged recording's processes, GPUs, streams and span, and its clocks' placement", async () => {
    // The recorders stored summaries of format 1 (before the iterations): stored again by summarize, as after an upgrade, so that they are read.
    if (name.startsWith('summarized')) await summarizeFiles(ranks, { store: true, workers: 0 });
    q = await JobQuery.open('job', ranks);
    m = new RecordingQuery('merged', merged);
    const s = q.summary();
    const ms = m.summary();
    expect(q.summarized).toEqual(name.startsWith('summarized') ? [] : ranks);
    expect(s.job?.fromSummaries).toBe(true);
    expect(s.processes.map((p) => [p.pid, p.rank, p.host, p.sourceId, p.originalPid])).toEqual(
      ms.processes.map((p) => [p.pid, p.rank, p.host, p.sourceId, p.originalPid]),
    );
    expect(s.processes.map((p) => p.threads.map((t) => [t.apiRowId, t.nvtxRowId, t.apiCalls, t.nvtxRanges]))).toEqual(
      ms.processes.map((p) => p.threads.map((t) => [t.apiRowId, t.nvtxRowId, t.apiCalls, t.nvtxRanges])),
    );
    expect(s.devices.map((d) => [d.id, d.uuid, d.busyNs])).toEqual(ms.devices.map((d) => [d.id, d.uuid, d.busyNs]));
    expect(s.streams.map((st) => [st.rowId, st.pid, st.deviceId, st.cuptiStreamId, st.busyNs, st.counts])).toEqual(
      ms.streams.map((st) => [st.rowId, st.pid, st.deviceId, st.cuptiStreamId, st.busyNs, st.counts]),
    );
    expect(s.counts).toEqual(ms.counts);
    // Each file's shift and clock as merge wrote them into the merged file's sources.
    expect(s.job!.sources.map((x) => [x.id, x.clock, x.shiftNs, x.correctionNs, x.residualNs])).toEqual(
      ms.job!.sources.map((x) => [x.id, x.clock, x.shiftNs, x.correctionNs, x.residualNs]),
    );
    expect([s.startNs, s.endNs, s.gpuSpan]).toEqual([ms.startNs, ms.endNs, ms.gpuSpan]);
  });

  it("folded ranks' GPU busy: the merged recording's overview, from each file's zones", () => {
    const s = q.summary();
    const range = { startNs: s.startNs, endNs: s.endNs };
    const got = q.overview(400, range);
    const want = m.overview(400, range);
    expect(got.devices.map((d) => d.deviceId)).toEqual(want.devices.map((d) => d.deviceId));
    got.devices.forEach((d, i) => {
      for (const track of ['kernels', 'copies', 'other'] as const)
        d[track].forEach((v, b) => expect(v, `${track}[${b}]`).toBeCloseTo(want.devices[i]![track][b]!, 9));
    });
    // The busy rows near the view only (the page's ids), and the minimap of many GPUs (their sum).
    const last = want.devices.at(-1)!;
    expect(q.overview(400, range, { ids: [last.deviceId] }).devices).toEqual([last]);
    const total = q.overview(400, range, { total: true }).devices;
    expect(total.map((d) => d.deviceId)).toEqual([-1]);
    total[0]!.kernels.forEach((v, b) =>
      expect(v).toBeCloseTo(
        want.devices.reduce((n, d) => n + d.kernels[b]!, 0),
        9,
      ),
    );
    expect(m.overview(400, range, { total: true })).toEqual(q.overview(400, range, { total: true }));
  });

  it("a rank's detail: its streams' and threads' windows and an item's details from its own file, equal to the merged recording's", () => {
    const s = q.summary();
    // Each process with GPU work (a recorded launcher has none).
    for (const p of s.processes.filter((x) => s.streams.some((st) => st.pid === x.pid))) {
      const rows = [...s.streams.filter((st) => st.pid === p.pid).map((st) => st.rowId), ...p.threads.flatMap((t) => [t.apiRowId, t.nvtxRowId])];
      const deviceId = s.streams.find((st) => st.pid === p.pid)!.deviceId!;
      // A few ms in the middle of the GPU span, at 1 µs a pixel: items and coverage both.
      const mid = (s.gpuSpan!.startNs + s.gpuSpan!.endNs) / 2;
      for (const resolutionNs of [1_000, 1]) {
        const req = {
          rows,
          startNs: Math.round(mid),
          endNs: Math.round(mid + 5_000_000),
          resolutionNs,
          concurrency: [{ deviceId, rows: s.streams.filter((st) => st.deviceId === deviceId).map((st) => st.rowId), buckets: 64 }],
        };
        const got = q.window(req);
        const want = m.window(req);
        expect(got.rows.map((r) => r.rowId)).toEqual(rows);
        got.rows.forEach((r, i) => {
          const w = want.rows[i]!;
          expect(r.items.map((it) => [it.ref, it.kind, it.startNs, it.endNs, got.strings[it.nameId] ?? null, it.depth])).toEqual(
            w.items.map((it) => [it.ref, it.kind, it.startNs, it.endNs, want.strings[it.nameId] ?? null, it.depth]),
          );
          expect(r.coverage).toEqual(w.coverage);
        });
        expect(got.concurrency).toEqual(want.concurrency);
      }
      const kernel = q
        .window({ rows: rows.filter((r) => r.startsWith('stream:')), startNs: s.gpuSpan!.startNs, endNs: s.gpuSpan!.endNs, resolutionNs: 1 })
        .rows.flatMap((r) => r.items)
        .find((it) => it.ref.table === 'kernels')!;
      const d = q.details(kernel.ref);
      const w = m.details(kernel.ref);
      expect([d.ref, d.startNs, d.endNs, d.rowId, d.name, d.fields.start_ns, d.fields.stream_id]).toEqual([
        w.ref,
        w.startNs,
        w.endNs,
        w.rowId,
        w.name,
        w.fields.start_ns,
        w.fields.stream_id,
      ]);
      expect(d.related.map((r) => [r.ref, r.startNs, r.rowId])).toEqual(w.related.map((r) => [r.ref, r.startNs, r.rowId]));
    }
  });

  it("the iterations row: each rank's steps from its summary, the merged recording's rows, lane by lane; no findings per step", () => {
    const want = m.iterations(null, false);
    const got = q.iterations(null);
    if (want === null) return expect(got).toBeNull();
    expect(got).not.toBeNull();
    const { without, ...it } = got as NonNullable<typeof got> & { without: unknown[] };
    expect(without).toEqual([]);
    // Per rank and step, every field the timeline's row and its tooltip read: times on the job's clock, the job's pids
    // and GPUs, the instance numbering, the per-device busy time and breakdown, warm-up and outliers.
    expect(it).toEqual(want);
    expect(it.findings).toBe(false);
    expect(new Set(it.rows.map((r) => r.pid)).size).toBe(it.processes);
    // Only the range the summaries hold: another name is none of theirs.
    expect(q.iterations(want.name)).toBe(got);
    expect(q.iterations(`${want.name}-not-a-range`)).toBeNull();
  });

  it("the findings are the job report's, from the same summaries; what reads every rank's rows is refused, saying where it is", async () => {
    const reg = new SessionRegistry();
    try {
      const r = await reg.openFiles(ranks, { jobCacheDir: path.join(dir, 'unused-cache'), jobView: 'summaries' });
      expect(r.failed).toEqual([]);
      expect(r.job).toMatchObject({ view: 'summaries', inputs: ranks });
      const id = r.opened[0]!.recordingId;
      expect(reg.view(id).summary().job?.fromSummaries).toBe(true);
      for (const kind of ['whole', 'steady-state'] as const) {
        const report = analyzeJobOfSummaries((await summarizeFiles(ranks, { scopes: [kind] })).map((f) => f.summaries[kind]!)).analysis;
        expect(await reg.findings(id, { kind })).toEqual(report.findings);
        expect(await reg.scopeInfo(id, { kind })).toEqual(report.scope);
      }
      await expect(reg.findings(id, { kind: 'window', startNs: 0, endNs: 10 })).rejects.toThrow(/whole job or each rank's steady state/);
      await expect(reg.stats(id, { kind: 'steady-state' })).rejects.toThrow(/streamscope report/);
      expect(() => reg.get(id, 'a search')).toThrow(/--job-view merged/);
      expect(await reg.ranges(id)).toEqual([]);
      // The iterations row from the summaries (above), whether asked with findings or not: a summary has none per step.
      expect(await reg.iterations(id, null, true)).toEqual((reg.view(id) as JobQuery).iterations(null));
      expect(fs.existsSync(path.join(dir, 'unused-cache'))).toBe(false);
    } finally {
      reg.closeAll();
    }
  });
});

describe("a job whose summaries hold each rank's top findings (summarize --findings)", () => {
  it("the findings panel lists them after the job's own, each named by its rank, in the job's ids: the report's", async () => {
    const { ranks } = job(
      'four-ddp',
      [0, 1, 2, 3].map((k) => path.join(ddp, `four-ranks/ddp-rank${k}.sqlite`)),
    );
    await summarizeFiles(ranks, { store: true, findings: true, workers: 0 });
    const reg = new SessionRegistry();
    try {
      const r = await reg.openFiles(ranks, { jobCacheDir: path.join(dir, 'unused-cache'), jobView: 'summaries' });
      const id = r.opened[0]!.recordingId;
      for (const kind of ['whole', 'steady-state'] as const) {
        const report = analyzeJobOfSummaries((await summarizeFiles(ranks, { scopes: [kind] })).map((f) => f.summaries[kind]!));
        const own = report.rankFindings.flatMap((x) => x.findings ?? []);
        expect(report.rankFindings.every((x) => x.findings !== null)).toBe(true);
        expect(own.length).toBeGreaterThanOrEqual(4);
        expect(await reg.findings(id, { kind })).toEqual([...report.analysis.findings, ...own]);
        // Every rank's, each saying whose it is.
        for (const rank of [0, 1, 2, 3])
          expect(
            own.some((f) => f.title.startsWith(`Rank ${rank} (`)),
            `rank ${rank}`,
          ).toBe(true);
      }
    } finally {
      reg.closeAll();
    }
  });
});

describe(`many files opened at once (${READ_ON_WORKERS_FROM} or more): each read once, on worker threads`, () => {
  // Generated ranks with their launcher's variables: one job by their ranks; and a file that is no recording among them.
  const d = path.join(dir, 'many');
  const ranks = generateRanks(d, READ_ON_WORKERS_FROM + 4, 2_000, 2, 7, true).map((g) => g.file);
  const bad = path.join(d, 'notes.sqlite');
  fs.writeFileSync(bad, 'not a recording\n');

  it('opens the job the files make, in the view a job of that size opens in, as the files read one by one give it', async () => {
    const reg = new SessionRegistry({ analysisThread: false });
    let alone: JobQuery | undefined;
    try {
      const r = await reg.openFiles([...ranks, bad], { jobCacheDir: path.join(dir, 'unused-cache') });
      expect(r.job).toMatchObject({ view: 'summaries', inputs: ranks });
      // The file a worker could not read is refused where it is opened, by name, as ever.
      expect(r.failed.map((f) => f.file)).toEqual([bad]);
      expect(r.failed[0]!.message).toContain(bad);
      alone = await JobQuery.open('alone', ranks);
      const { recordingId: _a, ...viaWorkers } = reg.view(r.opened[0]!.recordingId).summary();
      const { recordingId: _b, ...oneByOne } = alone.summary();
      expect(viaWorkers).toEqual(oneByOne);
    } finally {
      alone?.close();
      reg.closeAll();
    }
  });
});
