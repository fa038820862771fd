// The analysis thread: findings, stats, concurrency and compare answered on
// a thread of their own (what the server and the app's query worker use),
// equal to the same methods run in place, on real H100 recordings; errors
// come back as the API's errors, naming the file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalysisThread } from '../../profiler/query/analysis-thread.ts';
import { STEADY_STATE } from '../../profiler/contract/scope.ts';
import { ApiError } from '../../profiler/query/api-error.ts';
import { compareRecordings } from '../../profiler/query/compare.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { SessionRegistry } from '../../profiler/query/session.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const dir = tempDir('analysis-thread');
const threads: AnalysisThread[] = [];
function thread(): AnalysisThread {
  const t = new AnalysisThread();
  threads.push(t);
  return t;
}
afterAll(async () => {
  for (const t of threads) await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('analysis thread', () => {
  it('answers exactly what the recording answers in place', async () => {
    const base = new RecordingQuery('a', fixture('normalise-default-stream'));
    const other = new RecordingQuery('b', fixture('normalise-concurrent'));
    try {
      const t = thread();
      const a = { id: 'a', file: base.path };
      const b = { id: 'b', file: other.path };
      const s = base.summary();
      const req = { deviceId: s.devices[0]!.id, startNs: s.startNs, endNs: s.endNs, buckets: 200 };
      const [findings, stats, conc, diff] = await Promise.all([
        t.findings(a, STEADY_STATE),
        t.stats(a, STEADY_STATE),
        t.concurrency(a, req),
        t.compare(a, b, STEADY_STATE),
      ]);
      expect(findings.map((f) => f.kind)).toContain('legacy-default-stream');
      expect(findings).toEqual(base.findings());
      expect(stats).toEqual(base.stats());
      expect(conc).toEqual(base.concurrency(req));
      expect(diff).toEqual(compareRecordings(base, other));
    } finally {
      base.close();
      other.close();
    }
  });

  it('returns at once and answers later: the calling thread is free meanwhile', async () => {
    const t = thread();
    let answered = false;
    const p = t.findings({ id: 'x', file: fixture('transpose-pageable') }, STEADY_STATE).then((f) => {
      answered = true;
      return f;
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(answered).toBe(false);
    expect((await p).map((f) => f.kind)).toContain('pageable-async-copy');
  });

  it("tells the rules' findings while the what-ifs replay, through every step of them, never for a comparison", async () => {
    // A real H200 recording whose launch-bound finding's what-if replays its 300 steps (test/fixtures/corpus).
    const file = path.join(dir, 'launch-bound.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/bug.sqlite'), file);
    const t = thread();
    let done = false;
    const answer = t.findings({ id: 'g', file }, STEADY_STATE).finally(() => (done = true));
    const seen: NonNullable<ReturnType<AnalysisThread['progress']>>[] = [];
    // Every turn of the event loop: the worker's messages land between turns.
    while (!done) {
      const p = t.progress(file);
      if (p && p.phase === 'what-if') seen.push(p);
      await new Promise((r) => setImmediate(r));
    }
    const findings = await answer;
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) {
      expect(p.findings?.map((f) => f.kind).sort()).toEqual(findings.map((f) => f.kind).sort());
      expect(p.findings!.every((f) => !f.whatIf)).toBe(true);
    }
    expect(findings.some((f) => f.whatIf)).toBe(true);
    // A comparison analyses two recordings: what either's rules found is not the comparison's.
    const [a, b] = ['launch-bound-again', 'launch-bound-fix'].map((n) => path.join(dir, `${n}.sqlite`));
    fs.copyFileSync(file, a!);
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/fix.sqlite'), b!);
    let compared = false;
    const diff = t.compare({ id: 'a', file: a! }, { id: 'b', file: b! }, STEADY_STATE).finally(() => (compared = true));
    let polled = 0;
    while (!compared) {
      for (const f of [a!, b!]) expect(t.progress(f)?.findings).toBeUndefined();
      polled++;
      await new Promise((r) => setImmediate(r));
    }
    expect(polled).toBeGreaterThan(0);
    expect((await diff).findings).toBeDefined();
  });

  it("a panel's call (findings, stats) asked after other calls goes before those still waiting", async () => {
    const t = thread();
    const file = fixture('normalise-default-stream');
    const a = { id: 'o', file };
    const s = new RecordingQuery('s', file);
    const { startNs, endNs, streams } = s.summary();
    s.close();
    const order: string[] = [];
    const done = (what: string) => (v: unknown) => (order.push(what), v);
    // Calls made together to an idle worker: the findings first, then the others in the order made.
    const together = [
      t.waitSpans(a, { rows: streams.map((x) => x.rowId), startNs, endNs, resolutionNs: 1 }).then(done('waitSpans')),
      t.findings(a, STEADY_STATE).then(done('findings')),
    ];
    await Promise.all(together);
    expect(order).toEqual(['findings', 'waitSpans']);
    // Calls made while it works: the stats and the findings overtake those waiting, not the one it has; the stats,
    // which need the scope loaded but not diagnosed, go before the findings' diagnosis.
    order.length = 0;
    const ranges = t.ranges(a).then(done('ranges'));
    await new Promise((r) => setTimeout(r, 100));
    const calls = [
      ranges,
      t.waitSpans(a, { rows: streams.map((x) => x.rowId), startNs, endNs, resolutionNs: 2 }).then(done('waitSpans')),
      t.iterations(a, null).then(done('iterations')),
      t.findings(a, { kind: 'whole' }).then(done('findings')),
      t.stats(a, { kind: 'whole' }).then(done('stats')),
    ];
    await Promise.all(calls);
    expect(order).toEqual(['ranges', 'stats', 'findings', 'waitSpans', 'iterations']);
  });

  it("the Stats tab asked with the findings is answered between the scope's load and its diagnosis", async () => {
    // A real program whose diagnosis replays every launch (the corpus's launch-bound loop): its what-ifs are most of it.
    const file = path.join(dir, 'launch-bound-stats.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/bug.sqlite'), file);
    const t = thread();
    const a = { id: 'sf', file };
    const order: string[] = [];
    const findings = t.findings(a, STEADY_STATE).then(() => order.push('findings'));
    const stats = t.stats(a, STEADY_STATE).then(() => order.push('stats'));
    await Promise.all([findings, stats]);
    expect(order).toEqual(['stats', 'findings']);
  });

  it("the Stats tab's tables are computed after the findings, ahead of the overlays: asked then, they wait for none", async () => {
    const file = path.join(dir, 'launch-bound-ahead.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/bug.sqlite'), file);
    const t = thread();
    const a = { id: 'ah', file };
    const s = new RecordingQuery('s', file);
    const { startNs, endNs, streams } = s.summary();
    const inPlace = s.stats();
    s.close();
    const order: string[] = [];
    // As a page opens: its overlay and its findings; the tab clicked once the findings are listed.
    const overlay = t.waitSpans(a, { rows: streams.map((x) => x.rowId), startNs, endNs, resolutionNs: 1 }).then(() => order.push('waitSpans'));
    await t.findings(a, STEADY_STATE).then(() => order.push('findings'));
    const stats = await t.stats(a, STEADY_STATE).then((v) => (order.push('stats'), v));
    await overlay;
    expect(order).toEqual(['findings', 'stats', 'waitSpans']);
    expect(stats).toEqual(inPlace);
  });

  it("a panel's answer for a finished recording, asked again, comes without waiting for the worker", async () => {
    const t = thread();
    const a = { id: 'k', file: fixture('normalise-default-stream') };
    const first = await t.findings(a, STEADY_STATE);
    const file = path.join(dir, 'launch-bound-iterations.sqlite');
    fs.copyFileSync(path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs/bug.sqlite'), file);
    let slowDone = false;
    const slow = t.iterations({ id: 'i', file }, null).then(() => (slowDone = true));
    await new Promise((r) => setTimeout(r, 100));
    // The worker is busy with the iterations (the range's whole diagnosis): the findings come from what it answered.
    expect(await t.findings({ ...a, id: 'k2' }, STEADY_STATE)).toEqual(first);
    expect(slowDone).toBe(false);
    await slow;
  });

  it('a file it cannot read fails with the API error naming it; the thread goes on', async () => {
    const t = thread();
    const bad = path.join(dir, 'not-a-recording.sqlite');
    fs.writeFileSync(bad, 'hello, not SQLite');
    const err = await t.findings({ id: 'x', file: bad }, STEADY_STATE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'not-a-recording', file: bad });
    expect((err as Error).message).toContain(bad);
    expect(await t.stats({ id: 'y', file: fixture('matmul-serial') }, STEADY_STATE)).toHaveProperty('kernels');
  });

  it('closing it fails what is in flight with internal', async () => {
    const t = new AnalysisThread();
    const p = t.findings({ id: 'x', file: fixture('matmul-pageable') }, STEADY_STATE).catch((e: unknown) => e);
    await t.close();
    expect(await p).toMatchObject({ code: 'internal' });
  });

  it('a recording that finishes while the process analyses it: what the process was asked is answered, then it stops', async () => {
    const t = thread();
    const file = fixture('matmul-pageable');
    const inPlace = new RecordingQuery('x', file);
    try {
      // Asked while it was being written: the process (forked now, so surely still at work below)...
      const live = t.stats({ id: 'x', file, live: true }, STEADY_STATE);
      const liveFindings = t.findings({ id: 'x', file, live: true }, STEADY_STATE);
      expect(t.processRunning).toBe(true);
      // ... then finished: the next call goes to the thread, and the process is told to stop once idle.
      const after = t.findings({ id: 'x', file }, STEADY_STATE);
      expect(t.processRunning).toBe(true);
      // Answers, not 'the analysis process was closed'.
      expect(await live).toEqual(inPlace.stats());
      expect(await liveFindings).toEqual(inPlace.findings());
      expect(await after).toEqual(inPlace.findings());
      await expect.poll(() => t.processRunning).toBe(false);
      // A recording being written later starts it again.
      expect(await t.findings({ id: 'x', file, live: true }, STEADY_STATE)).toEqual(inPlace.findings());
    } finally {
      inPlace.close();
    }
  });

  it('the session registry sends analysis there when asked, and answers in place otherwise', async () => {
    const threaded = new SessionRegistry({ analysisThread: true });
    const inPlace = new SessionRegistry();
    try {
      const a = threaded.open(fixture('matmul-sync-each'));
      const b = inPlace.open(fixture('matmul-sync-each'));
      expect(await threaded.findings(a.recordingId, STEADY_STATE)).toEqual(await inPlace.findings(b.recordingId, STEADY_STATE));
      await expect(threaded.findings('nope', STEADY_STATE)).rejects.toMatchObject({ code: 'not-found' });
    } finally {
      threaded.closeAll();
      inPlace.closeAll();
    }
  });
});
