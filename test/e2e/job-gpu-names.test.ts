/// <reference lib="dom" />
// The Stats tab of a merged job in Debian's Chromium against the real
// server (issue 29): every GPU named with its rank and host, as the report
// names it (profiler/contract/ranks.ts gpuNames), in the overlap and stream
// tables and the stream-pair headings; the iterations table saying whose
// step each row is. The two-host job is GENERATED (bench/generate-ranks.ts:
// each rank's GPU is GPU 0 of its own host, the case); the DDP job
// is the real one of test/fixtures/ddp; a recording of one process keeps
// its "GPU 0". And the ruler of the real two-node job whose launchers
// initialised CUDA seconds before their ranks (nccl-node0/1-h200x2): from
// the job's own start, as the report's start-up line.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const dir = tempDir('e2e-job-gpu-names');

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
beforeAll(async () => {
  const generated = path.join(dir, 'generated.sqlite');
  mergeRecordings(
    generateRanks(path.join(dir, 'ranks'), 2, 4000, 4, undefined, true).map((r) => r.file),
    generated,
  );
  const ddp = [0, 1].map((k) => {
    const to = path.join(dir, `ddp-rank${k}.sqlite`);
    fs.copyFileSync(path.join(fixtures, `ddp/ddp-rank${k}.sqlite`), to);
    return to;
  });
  mergeRecordings(ddp, path.join(dir, 'ddp.sqlite'));
  const one = path.join(dir, 'normalise-concurrent.sqlite');
  fs.copyFileSync(path.join(fixtures, 'recordings/normalise-concurrent.sqlite'), one);
  const nodes = [0, 1].map((k) => {
    const to = path.join(dir, `nccl-node${k}.sqlite`);
    fs.copyFileSync(path.join(fixtures, `recordings/nccl-node${k}-h200x2.sqlite`), to);
    return to;
  });
  mergeRecordings(nodes, path.join(dir, 'nodes.sqlite'));
  [browser, server] = await Promise.all([launch(), serve([generated, path.join(dir, 'ddp.sqlite'), one, path.join(dir, 'nodes.sqlite')])]);
  const list = await callApi<{ recordingId: string; name: string }[]>(server, 'listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 180_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The Stats tab of a recording, its answer for the whole recording shown. */
async function stats(name: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`${server.url}#${new URLSearchParams({ rec: ids[name]!, tab: 'stats', scope: 'whole' })}`);
  await page.waitForSelector('[data-testid="stats-scope"][data-scope="whole"][data-pending="false"]');
  return page;
}

/** The cells of a table's column, by its header's text. */
async function column(page: Page, table: string, header: string): Promise<string[]> {
  const heads = (await page.locator(`[data-testid="${table}"] thead th`).allTextContents()).map((h) => h.replace(/[▾▴]/g, '').trim());
  const k = heads.indexOf(header);
  expect(k, `${table} has no column '${header}': ${heads.join(', ')}`).toBeGreaterThanOrEqual(0);
  return (await page.locator(`[data-testid="${table}"] tbody tr td:nth-child(${k + 1})`).allTextContents()).map((t) => t.trim());
}

describe('GPU names in the Stats tab', () => {
  it('a job of two hosts: each GPU 0 named with its rank and host in the overlap, streams and stream-pair tables', async () => {
    const page = await stats('generated.sqlite');
    expect((await column(page, 'stats-overlap', 'device')).sort()).toEqual(['rank 0 (node-000, GPU 0)', 'rank 1 (node-001, GPU 0)']);
    const streams = await column(page, 'stats-streams', 'device');
    expect(streams).toHaveLength(8);
    expect(streams.filter((d) => d === 'rank 0 (node-000, GPU 0)')).toHaveLength(4);
    expect(streams.filter((d) => d === 'rank 1 (node-001, GPU 0)')).toHaveLength(4);
    const headings = await page.locator('h2', { hasText: 'Stream-pair overlap' }).allTextContents();
    expect(headings.map((h) => h.match(/Stream-pair overlap · (.*?) · generated GPU/)?.[1]).sort()).toEqual([
      'rank 0 (node-000, GPU 0)',
      'rank 1 (node-001, GPU 0)',
    ]);
    await page.close();
  });

  it("the DDP job: its GPUs named with their ranks; the iterations table says each row's rank and step", async () => {
    const page = await stats('ddp.sqlite');
    expect((await column(page, 'stats-overlap', 'device')).sort()).toEqual(['rank 0 (vm, GPU 0)', 'rank 1 (vm, GPU 1)']);
    await page.waitForSelector('[data-testid="stats-iterations"]');
    const whose = await page.locator('[data-testid="iteration-rank"]').allTextContents();
    expect(whose).toHaveLength(20);
    expect(whose.slice(0, 3)).toEqual(['rank 0 (vm) · step 1', 'rank 0 (vm) · step 2', 'rank 0 (vm) · step 3']);
    expect(whose.filter((w) => w.startsWith('rank 1 (vm) · step '))).toHaveLength(10);
    await page.close();
  });

  it('one process: "GPU 0", as ever, and no rank column in the iterations table', async () => {
    const page = await stats('normalise-concurrent.sqlite');
    expect(await column(page, 'stats-overlap', 'device')).toEqual(['GPU 0']);
    expect(await page.locator('[data-testid="iteration-rank"]').count()).toBe(0);
    await page.close();
  });
});

describe("a merged job's time axis", () => {
  it('two nodes whose launchers started CUDA 3.7 s and 3.4 s before their ranks: the whole job on the ruler from 0, start-up from 0', async () => {
    const page = await openApp(browser, `${server.url}#rec=${ids['nodes.sqlite']}`);
    await page.click('[data-testid="zoom-all"]');
    await settled(page);
    await page.waitForFunction(() => window.__streamscope!.rulers().some((r) => r?.startup));
    const ruler = await page.evaluate(() => window.__streamscope!.rulers()[0]!);
    const view = await page.evaluate(() => window.__streamscope!.view());
    // Fit shows the recording with a margin of 2% of the view each side (timeline/view.ts clampView): never before 0 here.
    expect(view.start).toBeGreaterThanOrEqual(0);
    // The first tick is the job's start (drawn or, at the canvas's edge, left unlabelled).
    expect(ruler.ticks[0]!.label).toMatch(/^0( s| ms)?$/);
    expect(ruler.ticks.some((t) => t.label.startsWith('-') || t.label.startsWith('−'))).toBe(false);
    expect(ruler.startup!.startNs).toBe(0);
    expect(ruler.startup!.endNs).toBeGreaterThan(4e9);
    await page.close();
  });
});
