/// <reference lib="dom" />
// The first view in Debian's Chromium: a recording opens on its GPU work —
// the steady state's GPU span, once start-up is known — with its GPU rows
// first, not on the whole recording with the API rows on top. Checked on the
// runner's H100 recording (GPU work 1.8 ms of 425 ms) and a real PyTorch
// program from the corpus (start-up 4.5 s of 4.9 s), against the spans
// computed here from the same files.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordingSummary, Startup } from '../../profiler/contract/api.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const runner = path.join(fixtures, 'recordings/normalise-concurrent.sqlite');
const torch = path.join(fixtures, 'corpus/torch-pageable-batches/bug.sqlite');
const ddp = [0, 1].map((r) => path.join(fixtures, `ddp/ddp-rank${r}.sqlite`));

function facts(file: string): { summary: RecordingSummary; startup: Startup | null } {
  const q = new RecordingQuery('x', file);
  try {
    return { summary: q.summary(), startup: q.scopeInfo().startup };
  } finally {
    q.close();
  }
}

let browser: Browser;
const servers: RunningServer[] = [];
beforeAll(async () => {
  browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
});

async function open(...files: string[]): Promise<Page> {
  const server = await serve(files);
  servers.push(server);
  const page = await openApp(browser, server.url);
  await settled(page);
  return page;
}

/** The rows' and group headers' test ids, top to bottom. */
const labels = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('.tl-labels > [data-testid]'))
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((e) => e.dataset.testid!),
  );

describe('the first view', () => {
  it('the runner: the GPU span with a small margin, not the 425 ms recording; GPU rows first', async () => {
    const { summary } = facts(runner);
    const gpu = summary.gpuSpan!;
    expect((gpu.endNs - gpu.startNs) / (summary.endNs - summary.startNs)).toBeLessThan(0.01);
    const page = await open(runner);
    const v = await page.evaluate(() => window.__streamscope!.view());
    expect(v.start).toBeLessThanOrEqual(gpu.startNs);
    expect(v.end).toBeGreaterThanOrEqual(gpu.endNs);
    // The GPU work fills most of the view.
    expect((gpu.endNs - gpu.startNs) / (v.end - v.start)).toBeGreaterThan(0.85);
    const rows = await labels(page);
    expect(rows[0]).toMatch(/^group-gpu:\d+$/);
    expect(rows[1]).toBe(`row-conc:${rows[0]!.split(':')[1]}`);
    const firstApi = rows.findIndex((r) => r.startsWith('row-api:'));
    const lastStream = rows.findLastIndex((r) => r.startsWith('row-stream:'));
    expect(firstApi).toBeGreaterThan(lastStream);
    await page.close();
  });

  it('a PyTorch program: narrows to the steady state once start-up is known (start-up is 94% of the recording)', async () => {
    const { summary, startup } = facts(torch);
    const gpu = summary.gpuSpan!;
    expect(startup).not.toBeNull();
    expect(startup!.endNs).toBeGreaterThan(gpu.startNs);
    expect((startup!.endNs - summary.startNs) / (summary.endNs - summary.startNs)).toBeGreaterThan(0.9);
    const page = await open(torch);
    // Start-up arrives after the first frame; the view then narrows to [start-up's end, the last GPU operation].
    await page.waitForFunction((end) => window.__streamscope!.view().start > end, startup!.endNs - 0.1 * (gpu.endNs - startup!.endNs));
    await settled(page);
    const v = await page.evaluate(() => window.__streamscope!.view());
    expect(v.start).toBeLessThanOrEqual(startup!.endNs);
    expect(v.end).toBeGreaterThanOrEqual(Math.min(gpu.endNs, summary.endNs));
    expect(v.start).toBeGreaterThanOrEqual(summary.startNs);
    expect(v.end).toBeLessThanOrEqual(summary.endNs);
    expect((v.end - v.start) / (summary.endNs - summary.startNs)).toBeLessThan(0.1);
    await page.close();
  });

  it('a two-rank DDP job (opened as one): both ranks’ GPU streams before any CPU thread row, the threads folded one click away', async () => {
    const page = await open(...ddp);
    const rows = await labels(page);
    const streams = rows.filter((r) => r.startsWith('row-stream:'));
    expect(new Set(streams).size).toBeGreaterThanOrEqual(2 * 3);
    expect(rows.some((r) => r.startsWith('row-api:'))).toBe(false);
    const threads = rows.filter((r) => r.startsWith('group-threads:'));
    expect(threads).toHaveLength(2);
    // Each rank: its header, its GPU and streams, then its folded threads.
    expect(rows.indexOf(threads[0]!)).toBeGreaterThan(rows.indexOf(streams[0]!));
    await page.click(`[data-testid="fold-${threads[0]!.slice('group-'.length)}"]`);
    await page.waitForFunction(() => document.querySelector('[data-testid^="row-api:"]') !== null);
    await page.close();
  });

  it('a view the URL names is kept: start-up does not move it', async () => {
    const { summary, startup } = facts(torch);
    const server = await serve([torch]);
    servers.push(server);
    const [h] = await callApi<{ recordingId: string }[]>(server, 'listRecordings');
    const [start, end] = [summary.startNs + 1_000_000, summary.startNs + 200_000_000];
    const page = await openApp(browser, `${server.url}#rec=${h!.recordingId}&start=${start}&end=${end}`);
    await settled(page);
    // Wait for start-up's answer to have landed (its band is drawn on the ruler), then look again.
    await page.waitForFunction(() => window.__streamscope!.rulers().some((r) => r?.startup));
    const v = await page.evaluate(() => window.__streamscope!.view());
    expect(v.start).toBeCloseTo(start, -3);
    expect(v.end).toBeCloseTo(end, -3);
    expect(startup!.endNs).toBeGreaterThan(end);
    await page.close();
  });
});
