/// <reference lib="dom" />
// The live timeline on a real record stream (issue 14): the stream the
// collector wrote on an H100 for test/gpu/scripts/torch_streams.py (PyTorch
// 2.11, four side streams; test/fixtures/streams/README.md), appended in
// pieces to a stream directory that the recorder's own ingest follows, as it
// does for a target (helpers/live-feed.ts), while the page watches the
// recording grow. Its kernels appear piece by piece; at the end the file is
// a normal finished recording holding every kernel the stream holds.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStream } from '../../profiler/record/decoder.ts';
import type { LiveFeed } from '../helpers/live-feed.ts';
import { tempDir } from '../helpers/native.ts';
import { watchLiveFeed, type WatchedFeed } from './browser.ts';

const STREAM = path.resolve(import.meta.dirname, '../fixtures/streams/torch_streams-h100.ssr');
const CHUNKS = 12;

let dir: string;
let file: string;
let browser: Browser;
let feed: LiveFeed;
let page: Page;
let watched: WatchedFeed;

/** What the stream holds, by record kind (the decoder reads it as the ingest does). */
function recordsOf(kind: string): number {
  return decodeStream(new Uint8Array(fs.readFileSync(STREAM)), STREAM).records.filter((r) => r.kind === kind).length;
}

beforeAll(async () => {
  dir = tempDir('live-real');
  file = path.join(dir, 'live.sqlite');
  watched = await watchLiveFeed({ stream: STREAM, out: file, chunks: CHUNKS, intervalMs: 1000, startDelayMs: 3000 });
  ({ feed, browser } = watched);
}, 120_000);
afterAll(async () => {
  await watched?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const state = () => watched.state();

describe('a real PyTorch stream from an H100, watched while it grows', () => {
  it('opens live, and its kernels arrive in pieces while the page shows them', async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    await page.goto(watched.server.url);
    await page.waitForSelector('[data-testid="live-badge"]');
    // Kernel counts as the pieces come: seen growing at least twice before the end.
    const seen = new Set<number>();
    while (feed.chunks() < CHUNKS) {
      seen.add((await state()).counts.kernels);
      await new Promise((r) => setTimeout(r, 300));
    }
    const growing = [...seen].filter((k) => k > 0 && k < recordsOf('Kernel'));
    expect(growing.length).toBeGreaterThanOrEqual(2);
    await page.waitForSelector('[data-testid^="row-stream:"]', { timeout: 20_000 });
  });

  it('ends as a finished recording with every kernel and copy of the stream', async () => {
    const done = await feed.done;
    expect(done.complete).toBe(true);
    await page.waitForSelector('[data-testid="live-badge"]', { state: 'detached', timeout: 15_000 });
    const s = await state();
    expect(s).toMatchObject({ live: false, complete: true, counts: { kernels: recordsOf('Kernel'), memcpys: recordsOf('Memcpy') } });
  });
});
