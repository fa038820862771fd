// `streamscope record --progress json` on a real GPU (part of `npm run
// test:gpu`; every test skips without one): the CLI's lines through a whole
// recording, and the desktop app's record jobs reading them from the real
// CLI. Without a GPU, test/cli/record-progress.test.ts covers the preflight
// and the failures; test/app/record-jobs.test.ts replays lines captured here.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { RecordJobs } from '../../app/record-jobs.ts';
import { devices } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { parseProgressEvent, type ProgressEvent } from '../../profiler/record/progress.ts';
import { openRecording } from '../../profiler/store/database.ts';

const inventory = devices();
const skip = inventory.devices.length === 0 ? `no GPU here: ${inventory.error ?? 'no CUDA devices'}` : false;
const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-progress-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI; the events on its stderr, the other stderr lines (the target's) apart. */
function recordJson(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; events: ProgressEvent[]; other: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'record', '--progress', 'json', '-f', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const events: ProgressEvent[] = [];
      const other: string[] = [];
      for (const l of err.split('\n').filter(Boolean)) {
        const e = parseProgressEvent(l);
        if (e) events.push(e);
        else other.push(l);
      }
      resolve({ code, events, other });
    });
  });
}

describe('record --progress json on a GPU', { skip }, () => {
  it('a launch loop: preflight, running with growing counts, finishing, done with the recording', async () => {
    const out = path.join(dir, 'loop.sqlite');
    // Half a million launches, flushed every 100 ms: ingest progress arrives while the target runs.
    const r = await recordJson(['-o', out, '--workload', 'launch-loop', '--scenario', 'concurrent', '--streams', '4', '--iterations', '500000'], {
      STREAMSCOPE_FLUSH_MS: '100',
    });
    assert.equal(r.code, 0, JSON.stringify(r.events.at(-1)));
    const phases = r.events.map((e) => e.phase);
    assert.equal(phases[0], 'preflight');
    assert.equal(phases.at(-1), 'done');
    assert.deepEqual([...new Set(phases)], ['preflight', 'running', 'finishing', 'done'], 'phases in order');
    const running = r.events.filter((e) => e.phase === 'running');
    assert.ok(
      running.some((e) => e.records > 0 && e.bytes > 0 && e.processes === 1),
      'records ingested while the target runs',
    );
    assert.ok(
      running.every((e) => e.phase === 'running' && e.pid !== null && e.pid > 0),
      'the target pid',
    );
    for (let i = 1; i < r.events.length; i++) {
      assert.ok(r.events[i]!.records >= r.events[i - 1]!.records, 'records never go back');
      assert.ok(r.events[i]!.elapsedMs >= r.events[i - 1]!.elapsedMs, 'elapsed never goes back');
    }
    const done = r.events.at(-1)!;
    assert.ok(done.phase === 'done');
    assert.equal(done.output, out);
    assert.equal(done.complete, true, done.incompleteReason ?? '');
    assert.equal(done.exitCode, 0);
    assert.equal(done.targetExitCode, 0);
    assert.equal(done.processes, 1);
    assert.ok(done.records > 1_000_000, `${done.records} records (a kernel and a launch call per launch)`);
    assert.ok(done.bytes >= running.at(-1)!.bytes && done.bytes > done.records, 'bytes of record streams');
    assert.deepEqual(done.collectorErrors, []);
    assert.equal(done.capture, null);
    const db = openRecording(out, { readonly: true });
    try {
      // The loop's launches and its warm-up.
      assert.ok((db.prepare('SELECT count(*) AS n FROM kernels').get() as { n: number }).n >= 500_000);
    } finally {
      db.close();
    }
  });

  it('a capture range that never occurs: done, saying so in capture', async () => {
    const out = path.join(dir, 'absent.sqlite');
    const r = await recordJson(['-o', out, '--capture-range', 'nvtx:absent', '--workload', 'normalise', '--scenario', 'concurrent', '--size', '20000']);
    const done = r.events.at(-1)!;
    assert.ok(done.phase === 'done', JSON.stringify(done));
    assert.ok(done.capture);
    assert.equal(done.capture.spec, 'nvtx:absent');
    assert.match(done.capture.neverOccurred ?? '', /no closed NVTX range named 'absent' was recorded/);
    assert.match(done.capture.message, /^warning: capture range nvtx:absent never occurred/);
  });

  it("the app's record jobs follow the real CLI to a done job", async () => {
    const jobs = new RecordJobs({
      outputDir: dir,
      cli: { command: process.execPath, args: [cli] },
      open: async (file) => ({ recordingId: 'r1', name: path.basename(file), path: file }),
    });
    const first = jobs.start({ workload: { name: 'launch-loop', scenario: 'concurrent', args: ['--iterations', '300000'] } });
    const seen = new Set<string>([first.state]);
    const messages: string[] = [];
    for (;;) {
      const p = jobs.status(first.jobId);
      seen.add(p.state);
      if (p.state === 'running') messages.push(p.message);
      if (p.state === 'done' || p.state === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const end = await jobs.settled(first.jobId);
    assert.equal(end.state, 'done', end.message);
    assert.ok(seen.has('running'), `states seen: ${[...seen]}`);
    assert.match(end.message, /^[\d,]+ records from 1 process\(es\)$/);
    assert.ok(end.records > 600_000);
    assert.ok(
      messages.some((m) => /^recording… [\d,]+ records/.test(m)),
      messages.join('\n'),
    );
  });
});
