/// <reference lib="dom" />
// Shared by the end-to-end tests and the screenshot script: the renderer
// built once, the real server on a free port, Debian's Chromium.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from '../../profiler/native/paths.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';

// The renderer's test hooks (renderer/src/timeline.tsx), as the page sees them.
declare global {
  interface Window {
    __streamscope?: {
      view(): { start: number; end: number };
      itemRect(table: string, id: number): { x: number; y: number; w: number; h: number } | null;
      frames: number[];
      dataFrames: number;
    };
  }
}

export const rendererDist = path.join(repoRoot, 'renderer/dist');
export const CHROMIUM = process.env.STREAMSCOPE_CHROMIUM ?? '/usr/bin/chromium';

export function buildRenderer(): void {
  const stamp = path.join(rendererDist, 'index.html');
  const sources = fs.readdirSync(path.join(repoRoot, 'renderer/src')).map((f) => fs.statSync(path.join(repoRoot, 'renderer/src', f)).mtimeMs);
  if (fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs > Math.max(...sources)) return;
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(repoRoot, 'renderer/vite.config.ts')],
    { stdio: 'ignore', cwd: repoRoot });
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
  await page.waitForFunction(() => (window.__streamscope?.frames.length ?? 0) > 1);
  return page;
}
