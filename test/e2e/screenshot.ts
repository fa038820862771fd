// Screenshot of a recording in the renderer (for docs/ and for looking at
// a timeline without a display):
//   node test/e2e/screenshot.ts RECORDING.sqlite OUT.png [--gpu]
// --gpu zooms to the GPU work (first operation to last, 5% margin).
import path from 'node:path';
import Database from 'better-sqlite3';
import { launch, openApp, serve } from './browser.ts';

const [file, out] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!file || !out) {
  process.stderr.write('usage: node test/e2e/screenshot.ts RECORDING.sqlite OUT.png [--gpu]\n');
  process.exit(2);
}
const server = await serve([path.resolve(file)]);
const browser = await launch();
try {
  let url = server.url;
  if (process.argv.includes('--gpu')) {
    const db = new Database(file, { readonly: true });
    const s = db.prepare('SELECT min(s) AS s, max(e) AS e FROM (SELECT min(start_ns) s, max(end_ns) e FROM kernels UNION ALL SELECT min(start_ns), max(end_ns) FROM memcpys)').get() as { s: number; e: number };
    db.close();
    const pad = (s.e - s.s) * 0.05;
    const base = server.url.split('?')[0]!;
    const list = await (await fetch(`${base}api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' })).json() as { recordingId: string }[];
    url = `${server.url}#rec=${list[0]!.recordingId}&start=${Math.round(s.s - pad)}&end=${Math.round(s.e + pad)}`;
  }
  const page = await openApp(browser, url, { width: 1600, height: 560 });
  await page.waitForTimeout(800);
  await page.screenshot({ path: out });
  process.stdout.write(`${out}\n`);
} finally {
  await browser.close();
  await server.close();
}
