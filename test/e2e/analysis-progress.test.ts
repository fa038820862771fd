/// <reference lib="dom" />
// The findings panel says how far a long diagnosis has got, in Debian's
// Chromium against the real server: a generated recording of 3 million
// operations (64 streams, each with its launch call), whose diagnosis takes
// a few seconds, shows "Diagnosing…" followed by the phase the analysis
// thread reports (contract/progress.ts) until the findings land. Three
// million, not one: on a faster machine a million were diagnosed within
// the page's first poll interval (500 ms), and the panel said "Diagnosing…"
// alone in 2 of 3 runs.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import type { RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { callApi, launch, openApp, serve } from './browser.ts';

let dir: string;
let browser: Browser;
let server: RunningServer;
let id: string;
beforeAll(async () => {
  dir = tempDir('e2e-progress');
  const file = path.join(dir, 'gen.sqlite');
  generate(file, 3_000_000, 64);
  [browser, server] = await Promise.all([launch(), serve([file])]);
  id = (await callApi<{ recordingId: string }[]>(server, 'listRecordings'))[0]!.recordingId;
}, 180_000);
afterAll(async () => {
  await server?.close();
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('findings panel progress (3 M generated operations)', () => {
  it('says the phase of the diagnosis while it waits, then shows the findings', async () => {
    const page = await openApp(browser, `${server.url}#rec=${id}`);
    // What the panel says, every 50 ms, until the steady state's answer is shown.
    const said = new Set<string>();
    for (;;) {
      const state = await page.evaluate(() => ({
        pending: document.querySelector('[data-testid="findings"]')?.getAttribute('data-pending'),
        text: document.querySelector('[data-testid="findings-progress"]')?.textContent ?? null,
      }));
      if (state.text) said.add(state.text);
      if (state.pending === 'false') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Its own analysis's phases (other analyses of the page may run ahead of it: "waiting for the timeline's event waits (…)").
    const own = [...said].filter((t) => /^Diagnosing… (loading|selecting|modelling|rule|replaying what-if) /.test(t));
    expect(own.length, [...said].join(' | ')).toBeGreaterThan(0);
    for (const t of said)
      expect(t).toMatch(/^Diagnosing…( (waiting for .+ \()?(starting|loading|selecting|modelling|rule|replaying what-if)\b.*)?( · \d+ s)?$/);
    // Gone once the findings are shown.
    expect(await page.locator('[data-testid="findings-progress"]').count()).toBe(0);
    expect(await page.locator('[data-testid="findings"]').getAttribute('data-scope')).toBe('steady');
    await page.close();
  });
});
