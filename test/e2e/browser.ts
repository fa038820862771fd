/// <reference lib="dom" />
// Shared by the end-to-end tests and the screenshot script: the renderer
// built once, the real server on a free port, Debian's Chromium.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from '../../profiler/native/paths.ts';
import type { RecordingState } from '../../profiler/contract/api.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { startLiveFeed, type LiveFeed, type LiveFeedOptions } from '../helpers/live-feed.ts';
import { callApi } from '../helpers/api-call.ts';

export { callApi };

// The renderer's test hooks (renderer/src/timeline/test-hooks.ts, TestHooks), as the page sees them.
declare global {
  interface Window {
    __streamscope?: {
      view(): { start: number; end: number };
      views(): { start: number; end: number }[];
      itemRect(table: string, id: number): { x: number; y: number; w: number; h: number } | null;
      frames: number[];
      dataFrames: number;
      idle(): boolean;
      windowsIdle(): boolean;
      iterationBoxes(): { instance: number; warmUp: boolean; outlier: boolean; rect: { x: number; y: number; w: number; h: number } | null }[] | null;
      rulers(): ({
        ticks: { x: number; label: string; shown: boolean }[];
        base: string | null;
        startup: { startNs: number; endNs: number; x0: number; x1: number; label: string | null } | null;
      } | null)[];
      dependencies(): {
        arrows: {
          kind: string;
          from: { table: string; id: number };
          to: { table: string; id: number };
          label: string | null;
          critical: boolean;
          fromRect: { x: number; y: number; w: number; h: number };
          toRect: { x: number; y: number; w: number; h: number };
          start: { x: number; y: number };
          end: { x: number; y: number };
        }[];
        chain: { ref: { table: string; id: number }; rect: { x: number; y: number; w: number; h: number } | null }[];
        waitSpans: {
          rowId: string;
          startNs: number;
          endNs: number;
          waiting: { table: string; id: number };
          awaited: { table: string; id: number };
          rect: { x: number; y: number; w: number; h: number };
        }[];
      } | null;
    };
  }
}

// The tests' own build of the page, outside the source tree (renderer/dist
// is the user's `npm start` build; a test must not overwrite it).
const testBuilds = path.join(repoRoot, 'node_modules/.cache/streamscope-test');
export const rendererDist = path.join(testBuilds, 'renderer-dist');
export const CHROMIUM = process.env.STREAMSCOPE_CHROMIUM ?? '/usr/bin/chromium';

/** Newest modification time of the renderer's sources (src/, index.html, configs). */
function newestSource(): number {
  const dir = path.join(repoRoot, 'renderer');
  let newest = 0;
  for (const f of ['index.html', 'vite.config.ts', 'tsconfig.json'])
    if (fs.existsSync(path.join(dir, f))) newest = Math.max(newest, fs.statSync(path.join(dir, f)).mtimeMs);
  // The page bundles the contract too (the only part of profiler/ it may import): a change there is a change of the page.
  for (const src of [path.join(dir, 'src'), path.join(repoRoot, 'profiler/contract')]) {
    for (const e of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) newest = Math.max(newest, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs);
    }
  }
  return newest;
}

/**
 * Builds the page into rendererDist when it is missing or older than its sources. Test
 * files run in parallel workers: one builds (holding a lock directory), the
 * others wait for it.
 */
export function buildRenderer(): void {
  const stamp = path.join(rendererDist, 'index.html');
  const fresh = () => fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs > newestSource();
  if (fresh()) return;
  fs.mkdirSync(testBuilds, { recursive: true });
  const lock = path.join(testBuilds, 'renderer-build-lock');
  const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  for (let waited = 0; ; waited += 100) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // Another worker builds; a lock older than a minute was left by a killed run.
      if (waited > 60_000 || Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 60_000)
        fs.rmSync(lock, { recursive: true, force: true });
      sleep(100);
      if (fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    execFileSync(
      process.execPath,
      [
        path.join(repoRoot, 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        path.join(repoRoot, 'renderer/vite.config.ts'),
        '--outDir',
        rendererDist,
        '--emptyOutDir',
      ],
      // NODE_ENV as the test runner set it ('test') would give React's development build.
      { stdio: 'ignore', cwd: repoRoot, env: { ...process.env, NODE_ENV: 'production' } },
    );
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

export async function serve(files: string[]): Promise<RunningServer> {
  buildRenderer();
  return startServer({ files, port: 0, staticDir: rendererDist });
}

/** Opens the app and waits until the timeline has drawn a frame with data. */
export async function openApp(browser: Browser, url: string, viewport = { width: 1600, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(url);
  await page.waitForSelector('[data-testid="timeline-canvas"]');
  await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
  return page;
}

/** Waits until the timeline has fetched what the view needs and drawn it. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => window.__streamscope?.idle() === true);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => window.__streamscope?.idle() === true);
}

/**
 * Waits until the URL hash matches; on a timeout the error says what the
 * hash was instead (the URL is written 120 ms after the state last changed,
 * so a wrong value and a write that never came read differently).
 */
export async function waitForHash(page: Page, pattern: RegExp): Promise<void> {
  try {
    await page.waitForFunction(([source, flags]) => new RegExp(source!, flags).test(location.hash), [pattern.source, pattern.flags]);
  } catch (err) {
    const hash = await page.evaluate(() => location.hash).catch(() => '(page gone)');
    throw new Error(`the URL hash never matched ${pattern}; it was ${JSON.stringify(hash)}`, { cause: err });
  }
}

/**
 * A recording growing from a record stream (helpers/live-feed.ts) while
 * browser mode serves it from the moment it exists, with a browser to watch
 * it: the live view's end-to-end tests share this.
 */
export interface WatchedFeed {
  feed: LiveFeed;
  browser: Browser;
  server: RunningServer;
  /** The recording's id in the server. */
  id: string;
  state(): Promise<RecordingState>;
  close(): Promise<void>;
}

export async function watchLiveFeed(opts: LiveFeedOptions): Promise<WatchedFeed> {
  const feed = await startLiveFeed(opts);
  const [browser, server] = await Promise.all([launch(), serve([opts.out])]);
  const id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
  return {
    feed,
    browser,
    server,
    id,
    state: () => callApi<RecordingState>(server, 'recordingState', id),
    close: async () => {
      feed.stop();
      await server.close();
      await browser.close();
    },
  };
}

/** Top and bottom (page y) of a label-column entry. */
export async function box(page: Page, testId: string): Promise<{ top: number; bottom: number }> {
  const b = (await page.locator(`[data-testid="${testId}"]`).boundingBox())!;
  return { top: b.y, bottom: b.y + b.height };
}

/** Pixels of the canvas band at a label row's height that are not the row's white background. */
export async function inkInRow(page: Page, rowTestId: string): Promise<number> {
  const row = await box(page, rowTestId);
  return page.evaluate(
    ([top, bottom]) => {
      const c = document.querySelector<HTMLCanvasElement>('[data-testid="timeline-canvas"]')!;
      const r = c.getBoundingClientRect();
      const k = c.height / r.height;
      const y0 = Math.round((top! - r.top + 4) * k);
      const y1 = Math.round((bottom! - r.top - 4) * k);
      const data = c.getContext('2d')!.getImageData(0, y0, c.width, Math.max(1, y1 - y0)).data;
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i]! < 200 || data[i + 1]! < 200 || data[i + 2]! < 200) ink++;
      return ink;
    },
    [row.top, row.bottom],
  );
}
