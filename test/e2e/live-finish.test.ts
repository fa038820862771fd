/// <reference lib="dom" />
// A live recording that finishes while its Stats tab is shown (issue 26), in
// Debian's Chromium against the real server: the recorder's own ingest
// follows a stream appended chunk by chunk (helpers/live-feed.ts; the
// synthetic stream's launches come with an NVTX range 'launch batch' every
// 1000, so there are iterations), the page shows the stats of the whole
// recording and the iterations table, and the recording ends. While it was
// written its analyses ran in a process of their own (query/analysis-
// channel.ts); once finished they move to the analysis thread. No request
// may fail for that move (it answered HTTP 500 "the analysis process was
// closed"), and the tables must end on the finished file's numbers without
// a reload.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticStreamToolPath } from '../../profiler/native/paths.ts';
import { requireFile, tempDir } from '../helpers/native.ts';
import { callApi, watchLiveFeed, type WatchedFeed } from './browser.ts';

// 12 s of launches 60 µs apart, appended in 40 pieces 300 ms apart: the page's analyses (every 5 s while
// it grows) run in the analysis process all along, one of them about when the recording ends.
const LAUNCHES = 400_000;
const CHUNKS = 40;

let dir: string;
let file: string;
let watched: WatchedFeed;
let page: Page;
/** Every API answer of 500 or more the page got, and every request that failed on the wire. */
const failures: string[] = [];

beforeAll(async () => {
  dir = tempDir('live-finish');
  const stream = path.join(dir, 'run.ssr');
  execFileSync(requireFile(syntheticStreamToolPath()), ['--out', stream, '--bench-launches', String(LAUNCHES), '--bench-period-ns', '60000']);
  file = path.join(dir, 'live.sqlite');
  watched = await watchLiveFeed({ stream, out: file, chunks: CHUNKS, intervalMs: 300, startDelayMs: 3000 });
}, 120_000);
afterAll(async () => {
  await watched?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The finished file's own numbers: its kernels, and the closed instances of its NVTX range. */
function fileCounts(): { kernels: number; batches: number } {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT (SELECT count(*) FROM kernels) AS kernels, (SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
        WHERE s.value = 'launch batch' AND r.end_ns IS NOT NULL) AS batches`,
      )
      .get() as { kernels: number; batches: number };
  } finally {
    db.close();
  }
}

/** What the Stats tab shows: the launches its Kernels heading counts, and the rows of its iterations table. */
async function shown(): Promise<{ launches: number | null; iterations: number }> {
  return page.evaluate(() => {
    const heading = Array.from(document.querySelectorAll('[data-testid="stats-view"] h2')).find((h) => h.textContent?.startsWith('Kernels'));
    const m = /([\d,]+) launches/.exec(heading?.textContent ?? '');
    return {
      launches: m ? Number(m[1]!.replace(/,/g, '')) : null,
      iterations: document.querySelectorAll('[data-testid="stats-iterations"] tbody tr').length,
    };
  });
}

describe('a live recording finishing while its stats are shown', () => {
  it('moves its analyses from the process to the thread without a failed request, and ends on the final numbers', async () => {
    expect((await watched.state()).live).toBe(true);
    page = await watched.browser.newPage({ viewport: { width: 1400, height: 800 } });
    page.on('response', (r) => {
      if (r.url().includes('/api/') && r.status() >= 500) failures.push(`${r.status()} ${r.url()}`);
    });
    page.on('requestfailed', (r) => {
      if (r.url().includes('/api/')) failures.push(`failed ${r.url()}: ${r.failure()?.errorText}`);
    });
    await page.goto(`${watched.server.url}#rec=${watched.id}&tab=stats&scope=whole`);
    await page.waitForSelector('[data-testid="live-badge"]');
    // Stats of the recording as it grows: launches counted before it ends.
    await page.waitForFunction(() => /[1-9][\d,]* launches/.test(document.querySelector('[data-testid="stats-view"]')?.textContent ?? ''), null, {
      timeout: 30_000,
    });
    const whileLive = await shown();
    // Another page on the same recording asks for the analyses that take longest (each instance of the range,
    // the range's findings) as the last pieces are written: they are being computed when the recording ends.
    while (watched.feed.chunks() < CHUNKS - 2) await new Promise((r) => setTimeout(r, 50));
    const other = Promise.allSettled([
      callApi(watched.server, 'iterations', watched.id, null, true),
      callApi(watched.server, 'findings', watched.id, { kind: 'range', name: 'launch batch' }),
    ]);
    const done = await watched.feed.done;
    expect(done.complete).toBe(true);
    await page.waitForSelector('[data-testid="live-badge"]', { state: 'detached', timeout: 15_000 });
    // The tables come to the finished file's numbers (asked again once it ended: within LIVE_ANALYSIS_MS, then an analysis).
    const want = fileCounts();
    expect(want.kernels).toBe(LAUNCHES);
    expect(want.batches).toBeGreaterThan(100);
    expect(whileLive.launches).toBeLessThan(want.kernels);
    await page
      .waitForFunction(
        (w) => {
          const heading = Array.from(document.querySelectorAll('[data-testid="stats-view"] h2')).find((h) => h.textContent?.startsWith('Kernels'));
          const launches = Number((/([\d,]+) launches/.exec(heading?.textContent ?? '')?.[1] ?? '0').replace(/,/g, ''));
          return launches === w.kernels && document.querySelectorAll('[data-testid="stats-iterations"] tbody tr').length === w.batches;
        },
        want,
        { timeout: 30_000 },
      )
      .catch(async (err: unknown) => {
        throw new Error(`the Stats tab shows ${JSON.stringify(await shown())}, the file has ${JSON.stringify(want)}`, { cause: err });
      });
    // Still so a little later: no stale answer lands over them.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await shown()).toEqual({ launches: want.kernels, iterations: want.batches });
    expect(await page.locator('.scope-error').count()).toBe(0);
    expect(failures).toEqual([]);
    // The other page's answers too: computed on the data written so far, not failed.
    expect((await other).map((r) => (r.status === 'rejected' ? String(r.reason) : 'answered'))).toEqual(['answered', 'answered']);
    await page.close();
  });
});
