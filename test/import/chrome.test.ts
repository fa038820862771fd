/// <reference lib="dom" />
// Generic Chrome trace events on a real trace: Debian's Chromium traces
// itself (the Trace Event Format as Chromium writes it: X events, B/E pairs,
// metadata at the end) while it runs a page, and StreamScope imports it.
// What the file holds is counted here independently, from the parsed JSON.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportChromeTrace } from '../../profiler/export/chrome-trace.ts';
import { detectFormat, importTrace } from '../../profiler/import/index.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { launch } from '../e2e/browser.ts';
import { tempDir } from '../helpers/native.ts';

const dir = tempDir('chrome-import');
const trace = path.join(dir, 'chromium-trace.json');
let browser: Browser;
beforeAll(async () => {
  browser = await launch();
  const page = await browser.newPage();
  await browser.startTracing(page, { path: trace, categories: ['devtools.timeline', 'blink', 'v8', 'toplevel'] });
  await page.setContent(
    '<canvas id=c width=400 height=300></canvas><script>let x=0;for(let i=0;i<200000;i++)x+=Math.sqrt(i);document.title=String(x)</script>',
  );
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await browser.stopTracing();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Ev {
  ph: string;
  pid: number;
  tid: number;
  ts?: number;
  name?: string;
  args?: { name?: string };
}

/** Ranges the file holds: X events, and B/E pairs matched per thread (unmatched Bs count too: the importer keeps them). */
function expectedRanges(events: Ev[]): number {
  let n = 0;
  const open = new Map<string, number>();
  for (const e of events) {
    if (typeof e.ts !== 'number') continue;
    if (e.ph === 'X') n++;
    else if (e.ph === 'B') open.set(`${e.pid}:${e.tid}`, (open.get(`${e.pid}:${e.tid}`) ?? 0) + 1);
    else if (e.ph === 'E') {
      const k = `${e.pid}:${e.tid}`;
      if ((open.get(k) ?? 0) > 0) {
        open.set(k, open.get(k)! - 1);
        n++;
      }
    }
  }
  for (const v of open.values()) n += v;
  return n;
}

describe('generic Chrome trace events (a trace Chromium wrote)', () => {
  it('is told apart from Kineto by content, and every duration event becomes a range on its named thread', async () => {
    const events = (JSON.parse(fs.readFileSync(trace, 'utf8')) as { traceEvents: Ev[] }).traceEvents;
    const want = expectedRanges(events);
    expect(want).toBeGreaterThan(100);
    expect(detectFormat(trace)).toBe('chrome');

    const out = path.join(dir, 'chromium.sqlite');
    const r = await importTrace(trace, out);
    expect(r.format).toBe('chrome');
    expect(r.counts.ranges).toBe(want);
    expect(r.counts.kernels + r.counts.memcpys + r.counts.memsets).toBe(0); // no process of Chromium is named as a GPU with streams

    const db = new Database(out, { readonly: true });
    try {
      // Thread names come from the trace's thread_name metadata, which Chromium writes after the events.
      const names = new Set((db.prepare('SELECT name FROM threads WHERE name IS NOT NULL').all() as { name: string }[]).map((t) => t.name));
      const named = events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args!.name!);
      expect(named.some((n) => names.has(n))).toBe(true);
      expect([...names].some((n) => /CrRendererMain|CrBrowserMain/.test(n))).toBe(true);
      // Nesting survives: some range lies inside another on the same thread.
      const nested = db
        .prepare(
          `SELECT count(*) AS n FROM nvtx_ranges a JOIN nvtx_ranges b ON a.pid = b.pid AND a.tid = b.tid AND a.id <> b.id
          AND b.start_ns >= a.start_ns AND b.end_ns <= a.end_ns LIMIT 1`,
        )
        .get() as { n: number };
      expect(nested.n).toBeGreaterThan(0);
    } finally {
      db.close();
    }

    // Round trip: StreamScope's export of the import reads back with the same ranges.
    const json = path.join(dir, 'again.json');
    const rec = openRecording(out, { readonly: true });
    await exportChromeTrace(rec, json);
    rec.close();
    const again = await importTrace(json, path.join(dir, 'again.sqlite'));
    expect(again.counts.ranges).toBe(want);
  });

  it('GPU lanes by name: a "/device:GPU:0" process with "Stream #N" threads holds kernels and copies on those streams', async () => {
    // The naming TensorFlow/XLA's trace viewer uses; metadata last, as Chromium writes it.
    const f = path.join(dir, 'xla-style.json');
    fs.writeFileSync(
      f,
      JSON.stringify({
        displayTimeUnit: 'ns',
        traceEvents: [
          { ph: 'X', pid: 7, tid: 14, ts: 10, dur: 5, name: 'fusion_3' },
          { ph: 'X', pid: 7, tid: 15, ts: 11, dur: 2, name: 'MemcpyH2D' },
          { ph: 'B', pid: 7, tid: 14, ts: 20, name: 'gemm_kernel' },
          { ph: 'E', pid: 7, tid: 14, ts: 30 },
          { ph: 'X', pid: 1, tid: 1, ts: 9, dur: 30, name: 'train_step' },
          { ph: 'i', pid: 1, tid: 1, ts: 12, name: 'marker' },
          { ph: 'M', pid: 7, name: 'process_name', args: { name: '/device:GPU:0' } },
          { ph: 'M', pid: 7, tid: 14, name: 'thread_name', args: { name: 'Stream #14(Compute)' } },
          { ph: 'M', pid: 7, tid: 15, name: 'thread_name', args: { name: 'Stream #15(MemcpyH2D)' } },
          { ph: 'M', pid: 1, tid: 1, name: 'thread_name', args: { name: 'python' } },
        ],
      }),
    );
    const out = path.join(dir, 'xla.sqlite');
    const r = await importTrace(f, out);
    expect(r).toMatchObject({ format: 'chrome', counts: { kernels: 2, memcpys: 1, ranges: 1 }, skipped: 1 });
    const db = new Database(out, { readonly: true });
    try {
      const ops = db
        .prepare(`SELECT s.cupti_stream_id AS stream, k.end_ns - k.start_ns AS dur FROM kernels k JOIN streams s ON s.id = k.stream_id ORDER BY k.start_ns`)
        .all();
      expect(ops).toEqual([
        { stream: 14, dur: 5000 },
        { stream: 14, dur: 10000 },
      ]);
      expect(db.prepare('SELECT copy_kind AS k FROM memcpys').get()).toEqual({ k: 1 });
    } finally {
      db.close();
    }
  });

  it('a malformed trace names the file and the byte where it breaks; nothing is written', async () => {
    const f = path.join(dir, 'cut.json');
    fs.writeFileSync(f, '{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "name": "a"}, {"ph": "X", "pid": 1, "ti');
    const out = path.join(dir, 'cut.sqlite');
    await expect(importTrace(f, out, { format: 'chrome' })).rejects.toThrow(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    expect(fs.existsSync(out)).toBe(false);
  });
});
