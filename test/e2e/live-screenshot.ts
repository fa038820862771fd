// A screenshot of the live timeline (docs/live.png): a run of 1 M kernel
// launches a minute (the synthetic stream of the live benchmark) replayed
// `--speed` times faster into a recording that the recorder's own ingest
// writes (helpers/live-feed.ts), the page following it; the shot is taken
// once `--at` of the run has arrived, zoomed to the last `--span-ms` of it.
//   node test/e2e/live-screenshot.ts OUT.png [--launches 10000000] [--speed 10] [--at 0.5] [--span-ms 40] [--size 1600x700]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { syntheticStreamToolPath } from '../../profiler/native/paths.ts';
import { startLiveFeed } from '../helpers/live-feed.ts';
import { launch, serve, settled } from './browser.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    launches: { type: 'string', default: '10000000' },
    speed: { type: 'string', default: '10' },
    at: { type: 'string', default: '0.5' },
    'span-ms': { type: 'string', default: '40' },
    size: { type: 'string', default: '1600x700' },
  },
});
const out = positionals[0];
if (!out) {
  process.stderr.write('usage: node test/e2e/live-screenshot.ts OUT.png [--launches N] [--speed X] [--at FRACTION] [--span-ms MS] [--size WxH]\n');
  process.exit(2);
}
const launches = Number(values.launches);
const runNs = launches * 60_000;
const stream = path.join(os.tmpdir(), `streamscope-bench-live-${launches}.ssr`);
if (!fs.existsSync(stream)) execFileSync(syntheticStreamToolPath(), ['--out', stream, '--bench-launches', String(launches), '--bench-period-ns', '60000']);
const chunks = Math.max(2, Math.round(runNs / 1e6 / Number(values.speed) / 500));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-live-shot-'));
const feed = await startLiveFeed({ stream, out: path.join(dir, 'train.sqlite'), chunks, intervalMs: 500, startDelayMs: 3000 });
const server = await serve([path.join(dir, 'train.sqlite')]);
const browser = await launch();
try {
  const [width, height] = values.size!.split('x').map(Number) as [number, number];
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(server.url);
  await page.waitForSelector('[data-testid="live-badge"]');
  while (feed.chunks() < Number(values.at) * chunks) await new Promise((r) => setTimeout(r, 200));
  // Zoomed in at the end (following: a zoom keeps the end), until the view spans about --span-ms.
  await page.locator('[data-testid="timeline-canvas"]').hover();
  while ((await page.evaluate(() => window.__streamscope!.view().end - window.__streamscope!.view().start)) > Number(values['span-ms']) * 1e6) {
    await page.keyboard.press('w');
    await new Promise((r) => setTimeout(r, 20));
  }
  await page.mouse.move(0, 0);
  await page.waitForSelector('[data-testid="findings"] [data-kind]', { timeout: 120_000 });
  await settled(page);
  await page.screenshot({ path: out });
  process.stderr.write(`${out}: ${feed.chunks()} of ${chunks} pieces in\n`);
} finally {
  feed.stop();
  await browser.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
