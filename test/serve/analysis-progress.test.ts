// A long analysis says how far it has got (analysisProgress,
// contract/progress.ts) while the timeline's windows keep being answered:
// browser mode on a generated recording of a million operations (64
// streams, each with its launch call), whose diagnosis takes a few seconds.
// Two analyses asked at once — the steady state's findings, the whole
// recording's stats — run one after the other on the analysis thread: the
// findings' scope loaded (a scopeInfo call of their own, made as the server
// opened the recording), the stats, then the findings' diagnosis
// (analysis-channel.ts PANEL_ORDER); the progress
// polled meanwhile names each in turn, moves forward, and counts those
// waiting.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import type { AnalysisPhase, AnalysisProgress } from '../../profiler/contract/progress.ts';
import { progressLabel } from '../../profiler/contract/progress.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { callApi } from '../helpers/api-call.ts';

let dir: string;
let file: string;
let server: RunningServer;
let id: string;
let rows: string[];
let span: { startNs: number; endNs: number };

beforeAll(async () => {
  dir = tempDir('analysis-progress');
  file = path.join(dir, 'gen.sqlite');
  generate(file, 1_000_000, 64);
  server = await startServer({ files: [file], port: 0, staticDir: dir });
  id = ((await call('listRecordings', [])) as { recordingId: string }[])[0]!.recordingId;
  const summary = (await call('summary', [id])) as { startNs: number; endNs: number; streams: { rowId: string }[] };
  rows = summary.streams.map((s) => s.rowId);
  span = summary;
}, 180_000);
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, args: unknown[]): Promise<unknown> => callApi(server, method, ...args);

const PHASES: AnalysisPhase[] = ['starting', 'loading', 'selecting', 'diagnosing', 'modelling', 'what-if'];

describe('analysis progress (browser mode, 1 M generated operations)', () => {
  it('is reported while the analyses run, moves forward, names the one waiting; windows are answered meanwhile', async () => {
    // The steady state's load the server began as it opened the recording (the test below) is over by now.
    expect(await call('analysisProgress', [id])).toBeNull();
    let done = 0;
    const findings = call('findings', [id, { kind: 'steady-state' }]).finally(() => done++);
    const stats = call('stats', [id, { kind: 'whole' }]).finally(() => done++);
    const seen: AnalysisProgress[] = [];
    const windowsDuring: number[] = [];
    // Wheel zooms' windows, a tenth of a second apart, while the analyses run.
    const zooms = (async () => {
      for (let k = 0; done < 2; k++) {
        const w = (span.endNs - span.startNs) / 40;
        const startNs = span.startNs + ((k * 0.137) % 0.95) * (span.endNs - span.startNs);
        const t0 = performance.now();
        const answer = (await call('window', [id, { rows, startNs, endNs: startNs + w, resolutionNs: w / 1600 }])) as { rows: unknown[] };
        expect(answer.rows).toHaveLength(rows.length);
        if (done < 2) windowsDuring.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    while (done < 2) {
      const p = (await call('analysisProgress', [id])) as AnalysisProgress | null;
      if (p) seen.push(p);
      // Asked every ~10 ms: the 1 M diagnosis now runs ~0.1 – 0.2 s, which polls 50 ms apart saw only once in 2 runs of 18.
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all([findings, stats, zooms]);

    // The findings' load, the stats (their scope loaded, not diagnosed: quick), then the findings' diagnosis, each
    // running alone with the others counted as waiting.
    const loadSeen = seen.filter((p) => p.method === 'scopeInfo');
    const statsSeen = seen.filter((p) => p.method === 'stats');
    const findingsSeen = seen.filter((p) => p.method === 'findings');
    expect(loadSeen.length + statsSeen.length + findingsSeen.length).toBe(seen.length);
    expect([...loadSeen, ...findingsSeen].every((p) => p.scope?.kind === 'steady-state')).toBe(true);
    expect(statsSeen.every((p) => p.scope?.kind === 'whole')).toBe(true);
    const last = (run: AnalysisProgress[]) => (run.length ? seen.indexOf(run[run.length - 1]!) : -1);
    const firstOf = (run: AnalysisProgress[]) => (run.length ? seen.indexOf(run[0]!) : Infinity);
    expect(last(loadSeen)).toBeLessThan(firstOf(statsSeen));
    expect(Math.max(last(loadSeen), last(statsSeen))).toBeLessThan(firstOf(findingsSeen));
    expect(loadSeen.every((p) => p.queued <= 2) && statsSeen.every((p) => p.queued === 1)).toBe(true);
    expect(findingsSeen.every((p) => p.queued === 0)).toBe(true);
    // The diagnosis is the long one: seen more than once.
    const first = findingsSeen;
    expect(first.length).toBeGreaterThan(1);
    for (const run of [loadSeen, statsSeen, findingsSeen]) {
      // Forward only: phase by phase, and within one what is done; the time since it began grows.
      for (let i = 1; i < run.length; i++) {
        const [a, b] = [run[i - 1]!, run[i]!];
        const order = PHASES.indexOf(b.phase) - PHASES.indexOf(a.phase);
        expect(order > 0 || (order === 0 && b.done >= a.done), `${progressLabel(a)} → ${progressLabel(b)}`).toBe(true);
        expect(b.elapsedMs).toBeGreaterThanOrEqual(a.elapsedMs);
      }
    }
    // More than one step of the first reported, and what each says is what it counts.
    const steps = new Set(first.map((p) => `${p.phase}:${p.done}`));
    expect(steps.size).toBeGreaterThan(1);
    const loading = seen.find((p) => p.phase === 'loading');
    if (loading) expect(loading.total).toBe(2_000_000); // a million operations and their launch calls
    const diagnosing = seen.find((p) => p.phase === 'diagnosing');
    if (diagnosing) expect(progressLabel(diagnosing)).toMatch(/^rule \d+ of \d+ \(\d+%\): [a-z ]+$/);
    // The windows went on: at least one answered while the analyses ran.
    expect(windowsDuring.length).toBeGreaterThan(0);
    // Done: nothing runs.
    expect(await call('analysisProgress', [id])).toBeNull();
  });

  it('a server loads the steady state of the recording it opens on its analysis thread at once, before any page asks', async () => {
    // session.ts #loadAhead: at 10 M operations the load is ~2 s of what the page's findings and Stats tab wait for.
    const again = await startServer({ files: [file], port: 0, staticDir: dir });
    try {
      const againId = (await callApi<{ recordingId: string }[]>(again, 'listRecordings'))[0]!.recordingId;
      const seen: AnalysisProgress[] = [];
      // Polled from the start (its worker takes a moment to start) until it is over.
      for (const t0 = performance.now(); ; await new Promise((r) => setTimeout(r, 20))) {
        const p = await callApi<AnalysisProgress | null>(again, 'analysisProgress', againId);
        if (p) seen.push(p);
        else if (seen.length > 0 || performance.now() - t0 > 20_000) break;
      }
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((p) => p.method === 'scopeInfo' && p.scope?.kind === 'steady-state' && p.queued === 0)).toBe(true);
      // The page's own call is that one's answer, kept: nothing more runs for it.
      expect((await callApi<{ kind: string }>(again, 'scopeInfo', againId, { kind: 'steady-state' })).kind).toBe('steady-state');
      expect(await callApi(again, 'analysisProgress', againId)).toBeNull();
    } finally {
      await again.close();
    }
  });

  it("a Stats tab asked while a page's findings and their label are on their way is answered before the findings' diagnosis", async () => {
    // A scope not analysed yet: a window over most of the recording.
    const scope = { kind: 'window', startNs: span.startNs + (span.endNs - span.startNs) * 0.05, endNs: span.endNs };
    const order: string[] = [];
    const asked = [call('findings', [id, scope]).then(() => order.push('findings')), call('scopeInfo', [id, scope]).then(() => order.push('scopeInfo'))];
    await new Promise((r) => setTimeout(r, 100));
    asked.push(call('stats', [id, scope]).then(() => order.push('stats')));
    await Promise.all(asked);
    // The server hands the analysis thread all three (it orders them): the label once loaded, the stats, the findings.
    expect(order).toEqual(['scopeInfo', 'stats', 'findings']);
  });

  it('refuses a recording it does not have, as every method does', async () => {
    await expect(call('analysisProgress', ['0123456789abcdef'])).rejects.toThrow(/HTTP 404/);
    await expect(call('analysisProgress', [42])).rejects.toThrow(/HTTP 400/);
  });
});
