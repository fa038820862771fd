/// <reference lib="dom" />
// An imported PyTorch profiler trace on the timeline, in Debian's Chromium
// against the real server: a trace taken without cuda_sync events
// (torch_add_loop_h100.json, as torch.profiler wrote it) says above the
// timeline that it has no dependency data and how to take one that has; a
// trace with them (the fixed training loop) says nothing of the kind.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_SYNC_EVENTS_NOTE } from '../../profiler/contract/dependencies.ts';
import { importTrace } from '../../profiler/import/index.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { callApi, launch, openApp, serve, settled } from './browser.ts';

const kineto = path.resolve(import.meta.dirname, '../fixtures/kineto');
const dir = tempDir('e2e-kineto');
const addLoop = path.join(dir, 'add-loop.sqlite');
const trainLoop = path.join(dir, 'train-loop.sqlite');

let browser: Browser;
let server: RunningServer;
let ids: Record<string, string>;
beforeAll(async () => {
  await importTrace(path.join(kineto, 'torch_add_loop_h100.json'), addLoop);
  await importTrace(path.join(kineto, 'torch_train_loop_fixed_h200.json'), trainLoop);
  [browser, server] = await Promise.all([launch(), serve([addLoop, trainLoop])]);
  const list = await callApi<{ recordingId: string; name: string }[]>(server, 'listRecordings');
  ids = Object.fromEntries(list.map((r) => [r.name, r.recordingId]));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('an imported PyTorch trace on the timeline', () => {
  it('without cuda_sync events: a warning above the timeline says there is no dependency data and how to get it', async () => {
    const page = await openApp(browser, `${server.url}#rec=${ids['add-loop.sqlite']}`);
    try {
      await settled(page);
      const banner = page.locator('[data-testid="warning-banner"]', { hasText: 'no synchronization or dependency data' });
      await banner.waitFor();
      const text = (await banner.textContent())!;
      expect(text).toContain(NO_SYNC_EVENTS_NOTE);
      expect(text).toContain('enable_cuda_sync_events=True');
    } finally {
      await page.close();
    }
  });

  it('with them: no such warning', async () => {
    const page = await openApp(browser, `${server.url}#rec=${ids['train-loop.sqlite']}`);
    try {
      await settled(page);
      expect(await page.locator('[data-testid="warning-banner"]', { hasText: 'dependency data' }).count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
