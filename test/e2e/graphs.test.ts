/// <reference lib="dom" />
// CUDA graph launches in Debian's Chromium against the real server, on a
// real recording: PyTorch 2.11 on an H200, a small network captured once
// with torch.cuda.graph and replayed 300 times, one cudaGraphLaunch a step
// for 40 kernels (test/fixtures/corpus/torch-launch-bound-graphs/fix.sqlite).
// A kernel of one launch is clicked on the timeline: the details panel shows
// its graph and node id as stored, the sentence that places it in its launch
// and the cudaGraphLaunch as its launch; following that link, the call's
// details count the 40 kernels it launched and list them. Compared with SQL.
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const fix = path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/fix.sqlite');

let browser: Browser;
let server: RunningServer;
let id: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([fix])]);
  id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

const field = (page: Page, name: string) => page.locator(`[data-testid="details"] [data-field="${name}"]`).textContent();

describe('CUDA graph launches in the details panel', () => {
  it('a graph kernel shows its graph and node id and its cudaGraphLaunch; the call counts the 40 kernels it launched', async () => {
    const db = new Database(fix, { readonly: true });
    // The 100th launch (steady state) and its kernels in start order.
    const call = db
      .prepare(
        `SELECT a.id, a.correlation_id AS corr FROM api_calls a JOIN strings s ON s.id = a.name_id
         WHERE s.value = 'cudaGraphLaunch' ORDER BY a.start_ns LIMIT 1 OFFSET 99`,
      )
      .get() as { id: number; corr: number };
    const kernels = db
      .prepare(
        `SELECT k.id, k.start_ns AS start, k.end_ns AS end, k.graph_id AS graph, k.graph_node_id AS node FROM kernels k
         JOIN contexts c ON c.id = k.context_id JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id
         WHERE a.id = ? ORDER BY k.start_ns`,
      )
      .all(call.id) as { id: number; start: number; end: number; graph: number; node: number }[];
    db.close();
    expect(kernels).toHaveLength(40);
    const k = kernels[4]!;
    expect(k.graph).toBe(2);

    // The launch's kernels across the view: a few µs each, drawn wide enough to click.
    const from = kernels[0]!.start - 2_000;
    const to = kernels.at(-1)!.end + 2_000;
    const page = await openApp(browser, `${server.url}#rec=${id}&start=${from}&end=${to}`);
    await page.waitForFunction((i) => window.__streamscope!.itemRect('kernels', i) !== null, k.id);
    const r = (await page.evaluate((i) => window.__streamscope!.itemRect('kernels', i), k.id))!;
    expect(r.w).toBeGreaterThan(4);
    await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
    await page.waitForFunction((i) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(i), k.id);

    // Its graph and node id, as stored, and the sentence that puts them together.
    expect(await field(page, 'graph_id')).toBe('2');
    expect(await field(page, 'graph_node_id')).toBe(String(k.node));
    const sentence = `graph 2, node ${k.node}, launched by cudaGraphLaunch (call id ${call.id}) with 40 kernels`;
    expect(await page.locator('[data-testid="details-graph"] td').textContent()).toBe(sentence);
    expect(await field(page, 'graph_launch')).toBe(sentence);
    expect(await page.locator('[data-testid="details"]').textContent()).toContain('Place in launch5 of 40');
    // Launched by the one call.
    await expect(page.locator('[data-testid="related"]').count()).resolves.toBe(1);
    expect(await page.locator('[data-testid="related"]').textContent()).toContain('cudaGraphLaunch');

    // The call: the kernels it launched, counted and listed, each a link.
    await page.locator('[data-testid="related"]').click();
    await page.waitForFunction((i) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(i), call.id);
    expect(await page.locator('[data-testid="details-graph"] td').textContent()).toBe('graph 2: 40 kernels (40 nodes)');
    expect(await page.locator('[data-testid="details"] h3').first().textContent()).toBe('GPU work it launched (CUDA graph 2: 40 kernels)');
    await expect(page.locator('[data-testid="related"]').count()).resolves.toBe(40);
    // Back to the kernel, through the call's list: the fifth in start order.
    await page.locator('[data-testid="related"]').nth(4).click();
    await page.waitForFunction((i) => document.querySelector('[data-testid="details"] [data-field="id"]')?.textContent === String(i), k.id);
    await settled(page);
    await page.close();
  });
});
