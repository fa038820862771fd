/// <reference lib="dom" />
// The Stats tab in Debian's Chromium against the real server and a real
// PyTorch recording: its kernel table names kernels as `streamscope report`
// does (profiler/contract/names.ts, readableNames over the scope's
// kernels), so the eight instances of vectorized_elementwise_kernel in
// torch_train_loop read apart, and cuBLAS's cutlass::Kernel2 keeps the
// template argument that says which GEMM it is.
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readableNames, type StoredName } from '../../profiler/contract/names.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { callApi, launch, serve } from './browser.ts';

const torch = path.resolve(import.meta.dirname, '../fixtures/recordings/torch_train_loop.sqlite');

let browser: Browser;
let server: RunningServer;
let id: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serve([torch])]);
  id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
});

describe('stats in Chromium: kernel names', () => {
  it('torch_train_loop, whole recording: one distinct name per kernel, the full declaration on hover', async () => {
    const db = new Database(torch, { readonly: true });
    const kernels = db
      .prepare('SELECT DISTINCT s.value AS name, s.demangled AS demangledName FROM kernels k JOIN strings s ON s.id = k.name_id')
      .all() as StoredName[];
    db.close();
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(`${server.url}#${new URLSearchParams({ rec: id, tab: 'stats', scope: 'whole' })}`);
    await page.waitForSelector('[data-testid="stats-scope"][data-scope="whole"][data-pending="false"]');
    const cells = page.locator('[data-testid="stats-kernels"] tbody tr td:first-child');
    expect(await cells.count()).toBe(kernels.length);
    const shown = await page.locator('[data-testid="stats-kernel-name"]').allTextContents();
    expect(new Set(shown).size).toBe(kernels.length);
    expect(shown.filter((n) => n === 'vectorized_elementwise_kernel')).toEqual([]);
    expect(shown.filter((n) => n.startsWith('vectorized_elementwise_kernel<'))).toHaveLength(8);
    expect(shown).toContain('cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>');
    // The report's names, and on hover each row's full declaration.
    const labels = readableNames(kernels);
    const titles = await cells.evaluateAll((tds) => tds.map((td) => td.getAttribute('title')));
    const byFull = new Map(kernels.map((k) => [k.demangledName ?? k.name, labels.get(k.name)]));
    expect(titles.map((t) => byFull.get(t!))).toEqual(shown);
    await page.close();
  });
});
