/// <reference lib="dom" />
// What only the desktop app offers (open dialog, recent files, drag and
// drop, the record dialog), in Chromium: Electron cannot start here, so the
// page gets a stand-in for the preload's `window.streamscope` that answers
// data calls through the real server and plays the desktop-only ones.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiMethods } from '../../profiler/contract/api.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { launch, serve } from './browser.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
let browser: Browser;
let server: RunningServer;
beforeAll(async () => {
  [browser, server] = await Promise.all([
    launch(),
    serve([path.join(fixtures, 'normalise-concurrent.sqlite'), path.join(fixtures, 'normalise-default-stream.sqlite')]),
  ]);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

/** The preload stand-in: runs in the page before the app. */
function desktopStandIn(methods: readonly string[]): void {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const http = async (method: string, args: unknown[]) => {
    const r = await fetch(`api/${method}`, { method: 'POST', headers: { 'x-streamscope-token': token }, body: JSON.stringify({ args }) });
    const body = await r.json();
    if (!r.ok) throw body;
    return body;
  };
  const calls: string[] = [];
  let polls = 0;
  let all: { recordingId: string; name: string; path: string }[] = [];
  // Every API method the stand-in does not play goes to the real server, so a
  // method added to the API later needs no change here; like the real
  // preload, it has nothing else (browser mode's windowColumns, say).
  const api: Record<string, unknown> = new Proxy({} as Record<string, unknown>, {
    get: (target, m: string) => (m in target ? target[m] : methods.includes(m) ? (...a: unknown[]) => http(m, a) : undefined),
  });
  api.listRecordings = async () => {
    all = await http('listRecordings', []);
    return all.slice(0, 1);
  };
  api.capabilities = async () => ({ mode: 'electron', version: '0.2.0', canOpenFiles: true, canRecord: true });
  api.recentFiles = async () => ['/home/me/old-run.sqlite'];
  api.showOpenDialog = async () => {
    calls.push('showOpenDialog');
    return null;
  };
  api.openRecording = async (p: string) => {
    calls.push(`open ${p}`);
    throw { code: 'not-a-recording', message: `${p}: file is not a SQLite database`, file: p };
  };
  api.record = async (req: { workload?: { scenario: string } }) => {
    calls.push(`record ${JSON.stringify(req)}`);
    if (req.workload?.scenario === 'multi-gpu')
      return { jobId: 'j0', state: 'failed', records: 0, message: 'no CUDA device: cuInit failed (CUDA_ERROR_NO_DEVICE)' };
    polls = 0;
    return { jobId: 'j1', state: 'starting', records: 0, message: 'starting the runner' };
  };
  api.recordStatus = async (jobId: string) => {
    polls++;
    return polls < 2
      ? { jobId, state: 'running', records: 1234, message: 'recording' }
      : { jobId, state: 'done', records: 5678, message: 'done', recording: all[1] };
  };
  api.exportTrace = async (id: string) => {
    calls.push(`export ${id === all[0]?.recordingId ? 'shown' : id}`);
    return { path: '/home/me/run.json', events: 1234, flows: 56 };
  };
  // Several files at once: the main process's answer, played (test/app/open-job.test.ts runs the real one).
  api.openRecordings = async (paths: string[]) => {
    calls.push(`openRecordings ${paths.join(' ')}`);
    return {
      opened: [all[1]],
      failed: [{ file: paths[2], code: 'not-mergeable', message: `cannot open 2 recordings as one job: ${paths[2]}: holds the same recording as ${paths[0]}` }],
    };
  };
  api.pathForFile = (f: File) => `/dropped/${f.name}`;
  // The main process's menu events (File ▸ Export… and others), played by the test.
  api.onEvent = (listener: (e: unknown) => void) => {
    (window as unknown as { __emit: (e: unknown) => void }).__emit = listener;
    return () => {};
  };
  (window as unknown as { streamscope: unknown; __calls: string[] }).streamscope = api;
  (window as unknown as { __calls: string[] }).__calls = calls;
}

async function openDesktop(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.addInitScript(desktopStandIn, apiMethods);
  await page.goto(server.url);
  await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
  return page;
}

describe('desktop-only features (preload stand-in)', () => {
  it('browser mode hides them', async () => {
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="recording-tab"]');
    expect(await page.locator('[data-testid="open-file"]').count()).toBe(0);
    expect(await page.locator('[data-testid="record-open"]').count()).toBe(0);
    expect(await page.locator('[data-testid="export-trace"]').count()).toBe(0);
    await page.close();
  });

  it('open dialog, recent files and a dropped file that is not a recording: a banner names it, the app stays usable', async () => {
    const page = await openDesktop();
    await page.click('[data-testid="open-file"]');
    await page.selectOption('[data-testid="recent-files"]', '/home/me/old-run.sqlite');
    await page.waitForSelector('[data-testid="error-banner"]:has-text("/home/me/old-run.sqlite")');
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['not a database'], 'notes.sqlite'));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    const banner = page.locator('[data-testid="error-banner"]:has-text("/dropped/notes.sqlite")');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('Not a StreamScope recording');
    expect(await page.evaluate(() => (window as unknown as { __calls: string[] }).__calls)).toEqual([
      'showOpenDialog',
      'open /home/me/old-run.sqlite',
      'open /dropped/notes.sqlite',
    ]);
    expect(await page.locator('[data-testid^="row-stream:"]').count()).toBeGreaterThan(0);
    await page.close();
  });

  it('files dropped together are opened together: what opened is a new tab, what failed a banner naming the file', async () => {
    const page = await openDesktop();
    expect(await page.locator('[data-testid="recording-tab"]').count()).toBe(1);
    await page.evaluate(() => {
      const dt = new DataTransfer();
      for (const name of ['run-rank0.sqlite', 'run-rank1.sqlite', 'run-rank1-copy.sqlite']) dt.items.add(new File(['x'], name));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    const banner = page.locator('[data-testid="error-banner"]:has-text("/dropped/run-rank1-copy.sqlite")');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('Recordings cannot be opened as one job');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="recording-tab"]').length === 2);
    expect(await page.evaluate(() => (window as unknown as { __calls: string[] }).__calls)).toEqual([
      'openRecordings /dropped/run-rank0.sqlite /dropped/run-rank1.sqlite /dropped/run-rank1-copy.sqlite',
    ]);
    await page.close();
  });

  it('File ▸ Export… and the Export button export the shown recording and say where it went', async () => {
    const page = await openDesktop();
    await page.evaluate(() => (window as unknown as { __emit: (e: unknown) => void }).__emit({ type: 'menu', action: 'export' }));
    const banner = page.locator('[data-testid="info-banner"]');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('/home/me/run.json');
    expect(await banner.textContent()).toContain('1,234 trace events');
    await page.click('[data-testid="export-trace"]');
    await page.waitForFunction(() => (window as unknown as { __calls: string[] }).__calls.length === 2);
    expect(await page.evaluate(() => (window as unknown as { __calls: string[] }).__calls)).toEqual(['export shown', 'export shown']);
    await page.close();
  });

  it('the record dialog shows a failure (no GPU), then records a run and opens it in a new tab', async () => {
    const page = await openDesktop();
    expect(await page.locator('[data-testid="recording-tab"]').count()).toBe(1);
    await page.click('[data-testid="record-open"]');
    await page.selectOption('[data-testid="record-workload"]', 'matmul');
    await page.selectOption('[data-testid="record-scenario"]', 'multi-gpu');
    await page.click('[data-testid="record-start"]');
    await page.waitForSelector('[data-testid="record-error"]:has-text("CUDA_ERROR_NO_DEVICE")');
    await page.selectOption('[data-testid="record-scenario"]', 'default-stream');
    await page.click('[data-testid="record-start"]');
    await page.waitForSelector('[data-testid="record-dialog"]', { state: 'detached' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="recording-tab"]').length === 2);
    await page.waitForFunction(() => document.querySelector('.rec-tab.on')?.textContent?.includes('default-stream'));
    const calls = await page.evaluate(() => (window as unknown as { __calls: string[] }).__calls);
    // "Watch it live" is on by default (issue 14): the job opens the recording while it runs.
    expect(calls).toEqual([
      'record {"workload":{"name":"matmul","scenario":"multi-gpu"},"live":true}',
      'record {"workload":{"name":"matmul","scenario":"default-stream"},"live":true}',
    ]);
    await page.close();
  });
});
