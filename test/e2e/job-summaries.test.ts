/// <reference lib="dom" />
// A job opened from its ranks' summaries in Debian's Chromium against the
// real server (issue 29, profiler/query/job-query.ts): `serve --job-view
// summaries` of the real two-rank job whose recorders stored their
// summaries (test/fixtures/ddp/summarized, PROVENANCE.md; copies: reading
// an older schema migrates a file in place), beside the merged recording
// of the same files served as before. The page shows the job host → rank,
// each rank folded to a GPU-busy row drawn from the zones; a rank unfolded
// shows its streams, read from its own file, at the times the merged
// recording has them.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding, RecordingSummary, ScopeInfo, WindowResponse } from '../../profiler/contract/api.ts';
import { analyzeJobOfSummaries } from '../../profiler/job/of-summaries.ts';
import { summarizeFiles } from '../../profiler/job/summarize.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { buildRenderer, callApi, inkInRow, launch, openApp, rendererDist, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/ddp/summarized');
const dir = tempDir('e2e-job-summaries');

let browser: Browser;
let fromSummaries: RunningServer;
let merged: RunningServer;
let jobId: string;
let mergedId: string;
let summary: RecordingSummary;
beforeAll(async () => {
  const ranks = ['run-vm-0.sqlite', 'run-vm-1.sqlite'].map((f) => {
    fs.copyFileSync(path.join(fixtures, f), path.join(dir, f));
    return path.join(dir, f);
  });
  const mergedFile = path.join(dir, 'merged.sqlite');
  mergeRecordings(ranks, mergedFile);
  buildRenderer();
  [browser, fromSummaries, merged] = await Promise.all([
    launch(),
    startServer({ files: ranks, port: 0, staticDir: rendererDist, jobView: 'summaries', jobCacheDir: path.join(dir, 'cache') }),
    serve([mergedFile]),
  ]);
  expect(fromSummaries.failed).toEqual([]);
  jobId = (await callApi<{ recordingId: string }[]>(fromSummaries, 'listRecordings'))[0]!.recordingId;
  mergedId = (await callApi<{ recordingId: string }[]>(merged, 'listRecordings'))[0]!.recordingId;
  summary = await callApi<RecordingSummary>(fromSummaries, 'summary', jobId);
}, 180_000);
afterAll(async () => {
  await Promise.all([fromSummaries?.close(), merged?.close(), browser?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a job from its ranks summaries on the timeline', () => {
  it('folded: one GPU-busy row per rank, drawn from the zones, on the job headline that says it was not merged', async () => {
    const ranks = summary.processes.filter((p) => p.rank !== null).sort((a, b) => a.rank! - b.rank!);
    expect(ranks.map((p) => p.rank)).toEqual([0, 1]);
    const fold = ranks.map((p) => `proc:${p.pid}`).join(',');
    const page = await openApp(browser, `${fromSummaries.url}#rec=${jobId}&fold=${encodeURIComponent(fold)}`);
    await settled(page);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBe(0);
    for (const p of ranks) {
      const label = await page.locator(`[data-testid="group-proc:${p.pid}"]`).textContent();
      expect(label).toContain(`rank ${p.rank}`);
      const busy = page.locator(`[data-testid="row-busy:${p.pid}"]`);
      expect(await busy.textContent()).toContain('GPU busy');
      expect(await inkInRow(page, `row-busy:${p.pid}`), `rank ${p.rank}`).toBeGreaterThan(50);
    }
    expect(await page.locator('[data-testid="job-headline"]').textContent()).toMatch(/^2 recordings as one job from their summaries \(not merged/);
    await page.close();
  });

  it("a rank unfolded: its streams from its own file, at the merged recording's times", async () => {
    const rank1 = summary.processes.find((p) => p.rank === 1)!;
    const rank0 = summary.processes.find((p) => p.rank === 0)!;
    const page = await openApp(browser, `${fromSummaries.url}#rec=${jobId}&fold=${encodeURIComponent(`proc:${rank0.pid},proc:${rank1.pid}`)}`);
    await settled(page);
    await page.click(`[data-testid="fold-proc:${rank1.pid}"]`);
    const own = summary.streams.filter((st) => st.pid === rank1.pid && st.counts.kernels > 0);
    expect(own.length).toBeGreaterThan(0);
    for (const st of own) await page.waitForSelector(`[data-testid="row-stream:${st.id}"]`);
    await settled(page);
    const busiest = [...own].sort((a, b) => b.busyNs - a.busyNs)[0]!;
    expect(await inkInRow(page, `row-stream:${busiest.id}`)).toBeGreaterThan(50);
    // Its steps (train_step) in its own iterations row, from its summary: the job view reads no row for them.
    const steps = page.locator(`[data-testid="row-iterations:${rank1.pid}"]`);
    await steps.waitFor();
    expect(await steps.textContent()).toMatch(/Iterations.*train_step/s);
    expect(await inkInRow(page, `row-iterations:${rank1.pid}`)).toBeGreaterThan(50);
    // The view the page drew, asked of both servers: the same kernels at the same times.
    const view = await page.evaluate(() => window.__streamscope!.view());
    const req = { rows: own.map((st) => st.rowId), startNs: Math.round(view.start), endNs: Math.round(view.end), resolutionNs: 1 };
    const got = await callApi<WindowResponse>(fromSummaries, 'window', jobId, req);
    const want = await callApi<WindowResponse>(merged, 'window', mergedId, req);
    const kernels = (w: WindowResponse) =>
      w.rows.flatMap((r) => r.items.filter((i) => i.kind === 'kernel').map((i) => [i.ref.id, i.startNs, i.endNs, w.strings[i.nameId]]));
    expect(kernels(got).length).toBeGreaterThan(10);
    expect(kernels(got)).toEqual(kernels(want));
    // One kernel selected on the canvas's data: its details (its file's row, shifted) as the merged recording's.
    const ref = got.rows.flatMap((r) => r.items).find((i) => i.kind === 'kernel')!.ref;
    const [d, w] = await Promise.all([
      callApi<{ startNs: number; rowId: string }>(fromSummaries, 'details', jobId, ref),
      callApi<{ startNs: number; rowId: string }>(merged, 'details', mergedId, ref),
    ]);
    expect([d.startNs, d.rowId]).toEqual([w.startNs, w.rowId]);
    // The job's shift of rank 1's file is the merged recording's (the clocks aligned alike).
    const shifts = (s: RecordingSummary) => s.job!.sources.map((x) => x.shiftNs);
    expect(shifts(summary)).toEqual(shifts(await callApi<RecordingSummary>(merged, 'summary', mergedId)));
    await page.close();
  });

  it("the findings are the job report's, from the ranks' summaries, computed on the analysis thread; the panel shows them", async () => {
    const ranks = summary.job!.sources.map((x) => x.file);
    for (const kind of ['whole', 'steady-state'] as const) {
      const report = analyzeJobOfSummaries((await summarizeFiles(ranks, { scopes: [kind] })).map((f) => f.summaries[kind]!)).analysis;
      expect(await callApi<Finding[]>(fromSummaries, 'findings', jobId, { kind })).toEqual(report.findings);
      expect(await callApi<ScopeInfo>(fromSummaries, 'scopeInfo', jobId, { kind })).toEqual(report.scope);
    }
    const page = await openApp(browser, `${fromSummaries.url}#rec=${jobId}`);
    await page.waitForFunction(
      // Summarized for this view (the recorders' summaries are of an older format): cut where the job's start-up ended.
      () => /steady state, after .* of start-up/.test(document.querySelector('[data-testid="scope-label"]')?.textContent ?? ''),
      undefined,
      {
        timeout: 60_000,
      },
    );
    expect(await page.locator('[data-testid="scope-error"]').count()).toBe(0);
    await page.close();
  });
});
