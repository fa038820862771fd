// `streamscope record --progress json`, run as the app runs it (a child
// process): every line the recorder writes on stderr is one JSON object that
// parseProgressEvent reads, with the fields profiler/record/progress.ts
// promises, and the last one says how it ended with the exit code the
// process ends with. Without a GPU the recorder gets as far as its
// preflight (the real one: driver, collector, output); on a GPU machine a
// target that never initialises CUDA is recorded as nothing. The full run on
// a GPU is test/gpu/record-progress.test.ts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devices } from '../../profiler/native/addon.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { parseProgressEvent, type ProgressEvent } from '../../profiler/record/progress.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const hasGpu = devices().devices.length > 0;

let dir: string;
beforeAll(() => {
  dir = tempDir('progress');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `record --progress json ARGS`; every stderr line must be an event. */
function recordJson(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [cli, 'record', '--progress', 'json', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  const lines = r.stderr.split('\n').filter(Boolean);
  const events = lines.map((l) => parseProgressEvent(l));
  for (const [i, e] of events.entries()) expect(e, `not an event: ${lines[i]}`).not.toBeNull();
  for (const l of lines) expect(JSON.parse(l)).toMatchObject({ streamscope: 'record-progress', version: 1 });
  return { code: r.status, stdout: r.stdout, events: events as ProgressEvent[] };
}

function expectCommonFields(events: ProgressEvent[], output: string) {
  let elapsed = 0;
  for (const e of events) {
    expect(e.output).toBe(output);
    expect(Number.isInteger(e.elapsedMs) && e.elapsedMs >= elapsed).toBe(true);
    elapsed = e.elapsedMs;
    for (const n of [e.records, e.bytes, e.processes]) expect(Number.isInteger(n) && n >= 0).toBe(true);
  }
}

describe('record --progress json', () => {
  it('a recording that cannot happen here: preflight, then the one line that says why, with the exit code', () => {
    const out = path.join(dir, 'true.sqlite');
    const r = recordJson(['-o', out, '--', 'true']);
    expect(r.code).toBe(1);
    expectCommonFields(r.events, out);
    expect(r.events[0]!.phase).toBe('preflight');
    const last = r.events.at(-1)!;
    if (!hasGpu) {
      expect(r.events.map((e) => e.phase)).toEqual(['preflight', 'failed']);
      expect(last).toMatchObject({ phase: 'failed', exitCode: 1, records: 0, error: expect.stringMatching(/^no GPU to record on: .+/) });
      expect(fs.existsSync(out)).toBe(false);
    } else {
      // `true` never initialises CUDA: recorded, as nothing, and said so.
      expect(r.events.map((e) => e.phase)).toContain('finishing');
      expect(last).toMatchObject({ phase: 'done', exitCode: 1, processes: 0, complete: false, targetExitCode: 0, targetSignal: null });
      expect(last.phase === 'done' && last.incompleteReason).toMatch(/no CUDA activity was recorded/);
    }
  });

  it('a target that does not exist: failed with exit code 127, nothing written', () => {
    const out = path.join(dir, 'none.sqlite');
    const r = recordJson(['-o', out, '--', 'no-such-program-xyz']);
    expect(r.code).toBe(127);
    expectCommonFields(r.events, out);
    expect(r.events.at(-1)).toMatchObject({ phase: 'failed', exitCode: 127, error: 'target not found: no-such-program-xyz (not a file, and not on PATH)' });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('another profiler injected: failed, naming it', () => {
    const out = path.join(dir, 'nsys.sqlite');
    const r = recordJson(['-o', out, '--', 'true'], { CUDA_INJECTION64_PATH: '/opt/nvidia/nsys/libToolsInjection64.so' });
    expect(r.code).toBe(1);
    expect(r.events.at(-1)).toMatchObject({ phase: 'failed', exitCode: 1, error: expect.stringContaining('libToolsInjection64.so') });
  });

  it('bad usage after --progress is a failed line too (exit 2), before any preflight', () => {
    const out = path.join(dir, 'usage.sqlite');
    const scenario = recordJson(['-o', out, '--workload', 'normalise']);
    expect(scenario.code).toBe(2);
    expect(scenario.events).toEqual([expect.objectContaining({ phase: 'failed', exitCode: 2, error: '--workload needs --scenario' })]);
    const range = recordJson(['-o', out, '--capture-range', 'step', '--', 'true']);
    expect(range.code).toBe(2);
    expect(range.events).toEqual([
      expect.objectContaining({ phase: 'failed', exitCode: 2, error: expect.stringMatching(/^--capture-range 'step': expected nvtx:NAME/) }),
    ]);
    // A command line refused before it is read, too: the line says what the text would (the app shows it).
    const option = recordJson(['-o', out, '--captur-range', 'nvtx:step', '--', 'true']);
    expect(option.code).toBe(2);
    expect(option.events).toEqual([
      expect.objectContaining({ phase: 'failed', exitCode: 2, error: 'unknown option --captur-range (did you mean --capture-range?)' }),
    ]);
  });

  it('the text mode stays as it was: no JSON; an unknown --progress is refused', () => {
    const t = spawnSync(process.execPath, [cli, 'record', '-o', path.join(dir, 't.sqlite'), '--', 'no-such-program-xyz'], { encoding: 'utf8' });
    expect(t.status).toBe(127);
    expect(t.stderr).toBe('streamscope: target not found: no-such-program-xyz (not a file, and not on PATH)\n');
    const bad = spawnSync(process.execPath, [cli, 'record', '--progress', 'yaml', '--', 'true'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe("streamscope record: --progress: expected text or json, got 'yaml'\nsee streamscope record --help\n");
  });

  it('the help names the option', () => {
    const h = spawnSync(process.execPath, [cli, 'record', '--help'], { encoding: 'utf8' });
    expect(h.stdout).toContain('--progress text|json');
  });
});

describe('the lines of real recordings (H100, test/fixtures/record-progress)', () => {
  const fixtures = path.join(repoRoot, 'test/fixtures/record-progress');
  const read = (name: string) => fs.readFileSync(path.join(fixtures, name), 'utf8').split('\n').filter(Boolean);

  it('every line parses, with the fields of its phase; counts and time never go back', () => {
    for (const name of ['launch-loop.stderr', 'normalise-capture-absent.stderr']) {
      const events = read(name).map((l) => parseProgressEvent(l));
      expect(
        events.every((e) => e !== null),
        name,
      ).toBe(true);
      const ev = events as ProgressEvent[];
      expectCommonFields(ev, ev[0]!.output);
      expect([...new Set(ev.map((e) => e.phase))]).toEqual(['preflight', 'running', 'finishing', 'done']);
      for (let i = 1; i < ev.length; i++) expect(ev[i]!.records).toBeGreaterThanOrEqual(ev[i - 1]!.records);
      for (const e of ev) {
        if (e.phase === 'running') expect(e.pid).toBeGreaterThan(0);
        if (e.phase === 'finishing') expect(e).toMatchObject({ targetExitCode: 0, targetSignal: null });
      }
      expect(ev.at(-1)).toMatchObject({
        phase: 'done',
        complete: true,
        incompleteReason: null,
        exitCode: 0,
        targetExitCode: 0,
        processes: 1,
        collectorErrors: [],
        notes: [],
      });
    }
    const nothing = read('nothing-recorded.stderr').map((l) => parseProgressEvent(l)!);
    expect(nothing.map((e) => e.phase)).toEqual(['preflight', 'running', 'finishing', 'done']);
    expect(nothing.at(-1)).toMatchObject({
      records: 0,
      processes: 0,
      complete: false,
      exitCode: 1,
      targetExitCode: 0,
      incompleteReason: expect.stringMatching(/^no CUDA activity was recorded/),
    });
    const loop = read('launch-loop.stderr').map((l) => parseProgressEvent(l)!);
    expect(loop.at(-1)).toMatchObject({ records: 603241, bytes: 41818856, capture: null });
    const absent = read('normalise-capture-absent.stderr')
      .map((l) => parseProgressEvent(l)!)
      .at(-1)!;
    expect(absent.phase === 'done' && absent.capture).toMatchObject({
      spec: 'nvtx:absent',
      windows: 0,
      error: null,
      neverOccurred: expect.stringContaining("no closed NVTX range named 'absent'"),
    });
  });

  it('an event is read after text a target left unfinished on the same line', () => {
    const line = read('launch-loop.stderr')[3]!;
    expect(parseProgressEvent(`epoch 1/3 ...${line}`)).toEqual(JSON.parse(line));
  });

  it('other lines, other versions and broken JSON are not events', () => {
    const line = read('launch-loop.stderr')[3]!;
    expect(parseProgressEvent('streamscope: no GPU to record on: x')).toBeNull();
    expect(parseProgressEvent('{"loss": 0.5}')).toBeNull();
    expect(parseProgressEvent(line.replace('"version":1', '"version":2'))).toBeNull();
    expect(parseProgressEvent(line.slice(0, -5))).toBeNull();
  });
});
