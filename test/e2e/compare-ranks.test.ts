/// <reference lib="dom" />
// The compare view on two multi-rank jobs in Debian's Chromium, against
// the real server: the per-rank table (each rank against the same rank,
// not the same pid) and the collectives, checked against the diff computed
// here from the files. The jobs are CONSTRUCTED per rank
// (test/helpers/rank-jobs.ts, through RecordingWriter; not recorded on
// GPUs) and merged by the real profiler/merge: A runs each all-reduce after
// the step's compute, B starts it behind the compute, with its pids in the
// reverse order of its ranks and its files merged out of order.
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import type { DiffSummary } from '../../profiler/contract/diff.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { mergedJob } from '../helpers/rank-jobs.ts';
import { callApi, launch, serve } from './browser.ts';

let dir: string;
let browser: Browser;
let server: RunningServer;
let ids: string[];
let expected: DiffSummary;
beforeAll(async () => {
  dir = tempDir('e2e-compare-ranks');
  const serial = mergedJob(dir, 'serial', { ranks: 4, ranked: true, pid: (r) => 1000 + r });
  const overlapped = mergedJob(dir, 'overlapped', { ranks: 4, ranked: true, pid: (r) => 2003 - r, mergeOrder: [3, 1, 0, 2], overlapNs: 200_000 });
  [browser, server] = await Promise.all([launch(), serve([serial, overlapped])]);
  const list = await callApi<{ recordingId: string; path: string }[]>(server, 'listRecordings');
  ids = [serial, overlapped].map((f) => list.find((h) => h.path === f)!.recordingId);
  const load = (f: string) => {
    const db = openRecording(f, { readonly: true });
    try {
      return analyze(db);
    } finally {
      db.close();
    }
  };
  expected = diffRecordings(serial, load(serial), overlapped, load(overlapped));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function openCompare(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`${server.url}#tab=compare&cmp=${ids.join(',')}`);
  await page.waitForSelector('[data-testid="diff-ranks"]');
  return page;
}

describe('compare view on multi-rank jobs in Chromium', () => {
  it('shows a row per rank, each paired with the same rank of the other job, with its overlap change', async () => {
    const page = await openCompare();
    const rows = page.locator('[data-testid="diff-ranks"] tbody tr');
    expect(await rows.count()).toBe(4);
    const shown = await page
      .locator('[data-testid="diff-rank"]')
      .evaluateAll((els) => els.map((e) => [e.textContent, Number(e.getAttribute('data-pid-a')), Number(e.getAttribute('data-pid-b'))]));
    // Rank order, and rank r is pid 1000 + r in A but 2003 − r in B.
    expect(shown).toEqual([
      ['rank 0', 1000, 2003],
      ['rank 1', 1001, 2002],
      ['rank 2', 1002, 2001],
      ['rank 3', 1003, 2000],
    ]);
    expect(await page.getByRole('heading', { name: /^Per rank/ }).textContent()).toBe('Per rank paired by rank');
    for (const r of expected.ranks!) {
      const cell = page.locator(`[data-testid="diff-rank-overlap-${r.label}"]`);
      expect(r.overlap.a).toBe(0);
      // "0% → 48%", the change in points, coloured as an improvement.
      expect(await cell.textContent()).toBe(`0% → ${(r.overlap.b! * 100).toFixed(0)}% +${(r.overlap.delta! * 100).toFixed(0)} pt`);
      expect(await cell.getAttribute('class')).toContain('good');
    }
    // The rank's processes and its streams as paired, in the rank cell's tooltip.
    const title = await rows.first().locator('td').first().getAttribute('title');
    // (The constructed processes have no host of their own: processes.host is empty.)
    expect(title).toContain('A: pid 1000, GPU 0');
    expect(title).toContain('B: pid 2003, GPU 0');
    expect(title).toContain('7 → 7 (compute), 13 → 13 (communication)');
    // GPUs named through their ranks.
    expect(await page.locator('[data-testid="diff-devices"] thead th').allTextContents()).toEqual([
      '',
      'rank 0 · GPU 0',
      'rank 1 · GPU 0',
      'rank 2 · GPU 0',
      'rank 3 · GPU 0',
    ]);
    await page.close();
  });

  it('shows the collectives before → after', async () => {
    const page = await openCompare();
    const rows = page.locator('[data-testid="diff-collectives"] tbody tr');
    expect(await rows.count()).toBe(expected.collectives.length);
    const first = expected.collectives[0]!;
    expect(await rows.first().locator('td').first().textContent()).toBe(first.collective);
    expect(await rows.first().locator('td').nth(1).textContent()).toBe(`${first.count.a} → ${first.count.b} 0.0%`);
    // More time in NCCL kernels (each all-reduce starts earlier in B): shown as worse.
    expect(first.totalNs.delta!).toBeGreaterThan(0);
    expect(await rows.first().locator('td').nth(2).locator('.chg').getAttribute('class')).toContain('bad');
    await page.close();
  });
});
